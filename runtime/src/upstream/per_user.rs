//! A `per-user` upstream's browser step, on the upstream's side (DESIGN
//! §12, feature `oauth`): the session that sends a person to the upstream's
//! authorization server, and its completion on whichever instance the
//! browser comes back to. rmcp's PKCE state and the client capspec
//! registered there are kept in the vault, sealed, so every instance
//! sharing the store finds them.
//!
//! # The call
//!
//! A principal's call to a per-user upstream without a usable credential
//! ends `upstream_unauthorized` in the mount (`mount.rs`). The forward then
//! asks the vault for a link (a new elicitation id and
//! `/oauth/upstream/start?ticket=…`, the ticket sealed by
//! `StateKey::issue_ticket`), and the run for an `AskUrl` (`gate.rs`),
//! which the MCP server puts there:
//!
//! - a 2025-11-25 session that declared URL elicitation gets
//!   `elicitation/create` in `url` mode; once accepted, the call waits (at
//!   most ten minutes) until the vault says the person authorized, sends
//!   `notifications/elicitation/complete`, and forwards again;
//! - a request that cannot be asked mid-call keeps the link
//!   (`gate::Links`) and its reply carries it: −32042
//!   `URLElicitationRequiredError` on 2025-11-25, an `input_required` URL
//!   elicitation on 2026-07-28 (an action suspends on that call and replays
//!   up to it on the retry);
//! - anywhere else, the refusal's message carries the link.
//!
//! The client at the upstream's authorization server is `client_id` when
//! configured, else a Client ID Metadata Document the server takes, else
//! one registered (RFC 7591, with the scopes capspec will ask for) the first
//! time anyone authorizes, kept by (upstream, issuer, redirect) and shared
//! by every instance.

use std::sync::Arc;

use rmcp::transport::auth::{AuthError, AuthorizationSession};
use serde::{Deserialize, Serialize};

use super::oauth::{CredentialVault, Discovered, OAuth, VaultStore, discover, now, requested_scopes, session_of};

/// Who a `per-user` authorization under way is for, kept with rmcp's PKCE
/// state in the vault (kind `pending`, by the `state` the authorization
/// server sends back), so whichever instance the browser returns to
/// completes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Pending {
    pub(crate) principal: String,
    pub(crate) upstream: String,
    pub(crate) elicitation: String,
    /// The redirect the authorization was asked with, which the code's
    /// exchange must name again (the instance finishing it may be reached
    /// at another address).
    redirect: String,
    /// The client the authorization began with (id, secret): the code's
    /// exchange names it again, even if another instance has registered a
    /// new one since.
    #[serde(default)]
    client: Option<(String, Option<String>)>,
    state: Option<rmcp::transport::auth::StoredAuthorizationState>,
}

/// Kind of the vault's entries of authorizations under way.
pub(crate) const PENDING: &str = "pending";

/// rmcp's PKCE state, kept in the vault (sealed) rather than in this
/// process.
struct KeptStates {
    vault: Arc<dyn CredentialVault>,
    /// Whom a saved state is for (a session beginning); `None` where one
    /// only completes.
    for_whom: Option<Pending>,
}

#[async_trait::async_trait]
impl rmcp::transport::auth::StateStore for KeptStates {
    async fn save(&self, csrf_token: &str, state: rmcp::transport::auth::StoredAuthorizationState) -> Result<(), AuthError> {
        let who = self.for_whom.clone().ok_or_else(|| AuthError::InternalError("no authorization begins here".into()))?;
        let value = serde_json::to_value(Pending { state: Some(state), ..who }).map_err(|e| AuthError::InternalError(e.to_string()))?;
        let expires = now() as i64 * 1000 + crate::mcp::TICKET_TTL.as_millis() as i64;
        self.vault.keep(PENDING, csrf_token, value, Some(expires), false).await.map_err(AuthError::InternalError).map(|_| ())
    }

    async fn load(&self, csrf_token: &str) -> Result<Option<rmcp::transport::auth::StoredAuthorizationState>, AuthError> {
        let kept = self.vault.kept(PENDING, csrf_token, false).await.map_err(AuthError::InternalError)?;
        Ok(kept.and_then(|v| serde_json::from_value::<Pending>(v).ok()).and_then(|p| p.state))
    }

    async fn delete(&self, csrf_token: &str) -> Result<(), AuthError> {
        self.vault.kept(PENDING, csrf_token, true).await.map(|_| ()).map_err(AuthError::InternalError)
    }
}

/// The client capspec uses at `found`'s authorization server for
/// `upstream`: `None` where the configuration names one (`client_id`, or a
/// Client ID Metadata Document the server takes); else the one registered
/// there before and kept in the vault, shared by every instance, when it
/// was registered with every scope capspec now asks for; else (with
/// `register`) one registered now with those scopes, replacing it. Two
/// instances registering at once keep the first; the second uses it.
async fn kept_client(found: &mut Discovered, oauth: &OAuth, upstream: &str, vault: &Arc<dyn CredentialVault>, redirect: &str, register: bool) -> Result<Option<(String, Option<String>)>, String> {
    if oauth.client_id.is_some() || (found.cimd && oauth.client_metadata_url.is_some()) {
        return Ok(None);
    }
    // Postgres text holds no NUL: spaces part the three (none holds one).
    let id = format!("{upstream} {} {redirect}", found.issuer);
    let read = |v: &serde_json::Value| v["id"].as_str().map(|id| (id.to_string(), v["secret"].as_str().map(str::to_string)));
    let kept = vault.kept("client", &id, false).await?;
    if !register {
        // Completing an authorization: the client it began with.
        return kept.as_ref().and_then(read).map(Some).ok_or_else(|| format!("no client of capspec's is registered at `{}` for `{upstream}`", found.issuer));
    }
    let scopes = requested_scopes(found, oauth).await;
    let registered_with = |v: &serde_json::Value| -> Vec<String> { v["scopes"].as_array().into_iter().flatten().filter_map(|s| s.as_str().map(str::to_string)).collect() };
    if let Some(kept) = &kept {
        let has = registered_with(kept);
        if scopes.iter().all(|s| has.contains(s)) {
            return Ok(read(kept));
        }
    }
    // The registration names every scope the authorization will ask for:
    // a server that checks them (the MCP SDK's `validate_scope`) refuses
    // an authorization asking for a scope its client was not registered with.
    let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let config = found.manager.register_client("capspec", redirect, &refs).await.map_err(|e| {
        format!("cannot register a client of capspec's at `{}` ({e}); if it offers no registration, set `client_id` (or `client_metadata_url`) in [upstream.{upstream}]", found.issuer)
    })?;
    let value = serde_json::json!({ "id": config.client_id, "secret": config.client_secret, "scopes": scopes });
    // A client lacking a scope is replaced; a new entry goes in only once.
    match vault.keep("client", &id, value, None, kept.is_none()).await {
        Ok(true) | Err(_) => Ok(Some((config.client_id, config.client_secret))),
        Ok(false) => Ok(vault.kept("client", &id, false).await?.as_ref().and_then(read).or(Some((config.client_id, config.client_secret)))),
    }
}

/// A `per-user` server's browser step for `principal` (DESIGN §12): the
/// credential goes to their entry in `vault`; the client is the one kept
/// for the upstream's authorization server; the PKCE state is kept in the
/// vault, so any instance completes it ([`finish_principal_session`]).
pub(crate) async fn principal_session(url: &str, oauth: &OAuth, who: (&str, &str, &str), vault: Arc<dyn CredentialVault>, redirect: &str) -> Result<AuthorizationSession, String> {
    let (upstream, principal, elicitation) = who;
    let mut found = discover(url).await?;
    found.manager.set_credential_store(VaultStore { vault: vault.clone(), upstream: upstream.to_string(), principal: principal.to_string() });
    let client = kept_client(&mut found, oauth, upstream, &vault, redirect, true).await?;
    let pending = Pending { principal: principal.to_string(), upstream: upstream.to_string(), elicitation: elicitation.to_string(), redirect: redirect.to_string(), client: client.clone(), state: None };
    found.manager.set_state_store(KeptStates { vault: vault.clone(), for_whom: Some(pending) });
    session_of(found, oauth, client, redirect).await
}

/// The authorization under way for `csrf` (the `state` the upstream's
/// authorization server sent back), if the vault keeps one.
pub(crate) async fn pending_session(vault: &Arc<dyn CredentialVault>, csrf: &str) -> Result<Option<Pending>, String> {
    Ok(vault.kept(PENDING, csrf, false).await?.and_then(|v| serde_json::from_value(v).ok()))
}

/// Complete `pending`'s authorization on this instance, whichever began
/// it: the code is exchanged with the kept PKCE verifier (used once), the
/// response's `iss` checked, and the credential saved in the vault.
pub(crate) async fn finish_principal_session(url: &str, oauth: &OAuth, pending: &Pending, vault: Arc<dyn CredentialVault>, callback: (&str, &str, Option<&str>)) -> Result<(), String> {
    let (code, csrf, iss) = callback;
    let redirect = pending.redirect.as_str();
    let mut found = discover(url).await?;
    found.manager.set_credential_store(VaultStore { vault: vault.clone(), upstream: pending.upstream.clone(), principal: pending.principal.clone() });
    found.manager.set_state_store(KeptStates { vault: vault.clone(), for_whom: None });
    let began_with = match &pending.client {
        Some(client) => Some(client.clone()),
        None => kept_client(&mut found, oauth, &pending.upstream, &vault, redirect, false).await?,
    };
    let (id, secret) = match began_with {
        Some(client) => client,
        None => (oauth.client_id.clone().or_else(|| oauth.client_metadata_url.clone()).ok_or("no client is configured")?, None),
    };
    let mut config = rmcp::transport::auth::OAuthClientConfig::new(id, redirect);
    config.client_secret = secret;
    found.manager.configure_client(config).map_err(|e| e.to_string())?;
    found.manager.exchange_code_for_token_with_issuer(code, csrf, iss).await.map(|_| ()).map_err(|e| e.to_string())
}
