//! The browser step of a `per-user` upstream (DESIGN §12, feature `oauth`):
//! how a person authorizes capspec to call an upstream as them.
//!
//! A call refused for want of the caller's credential carries capspec's own
//! URL, `/oauth/upstream/start?ticket=…`. The ticket is sealed under the
//! state key ([`StateKey::issue_ticket`]): it names the principal, the
//! upstream and the elicitation, lasts at most ten minutes, and the serve
//! store remembers it used ([`CredentialVault::spend_ticket`]), so it opens
//! once on any instance.
//!
//! 1. `start`: the ticket is opened and spent, and the browser is sent to
//!    the team's issuer (`--oauth-issuer`) to sign in: OpenID Connect's
//!    authorization code with PKCE S256 and a nonce, the client named by
//!    `--oauth-client-id` or registered at the issuer (RFC 7591). What the
//!    redirect must remember travels in its `state`, sealed.
//! 2. `callback`, the sign-in's leg: the code is exchanged, the ID token
//!    checked against the issuer's keys (`iss`, `aud` = the client,
//!    `nonce`, expiry). Its `sub` must be the ticket's principal: else 403
//!    naming both, and nothing is stored. Then the browser goes to the
//!    upstream's authorization server, discovered and asked as `auth login`
//!    asks it (PKCE S256, `resource`, `iss` checked), to come back to the
//!    same callback.
//! 3. `callback`, the upstream's leg (told apart by its `state`, rmcp's):
//!    the code is exchanged and the credential saved, sealed, in the vault
//!    for (principal, upstream).
//!
//! The upstream's leg completes on any instance sharing the vault: rmcp's
//! PKCE state is kept there, sealed, with whom it is for (ten minutes, used
//! once), and the client capspec registered at the upstream's
//! authorization server is kept there too, registered once and shared.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;
use sha2::Digest;

use super::oauth::{CredentialVault, OAuth};
use crate::gate::BoxFuture;
use crate::mcp::StateKey;
use crate::mcp::oauth::{BrowserPages, Page, ResourceServer};

/// Where the browser step begins.
pub const START_PATH: &str = "/oauth/upstream/start";
/// Where both authorization servers send the browser back.
pub const CALLBACK_PATH: &str = "/oauth/upstream/callback";
/// How long an upstream's leg may take once begun.
const PENDING_TTL: Duration = crate::mcp::TICKET_TTL;

/// What the browser step needs besides the vault.
#[derive(Debug, Clone)]
pub struct AuthorizeOptions {
    /// The gateway's public origin (`https://gateway.example.com`), as
    /// browsers reach it: the start URL and the redirects are made on it.
    pub base: String,
    /// The sign-in client registered at the team's issuer
    /// (`--oauth-client-id`); `None`: register one (RFC 7591) at first use.
    pub client_id: Option<String>,
    /// Seals the tickets and the sign-in's `state`.
    pub key: StateKey,
}

/// The browser step of every `per-user` upstream a host serves, and the
/// vault it keeps their credentials in. It is the [`CredentialVault`] the
/// upstreams are started with (the vault's, and the start URL of a call
/// refused for want of a credential), and the pages
/// [`crate::mcp::McpHost::with_browser_pages`] serves.
pub struct Authorizer {
    options: AuthorizeOptions,
    vault: Arc<dyn CredentialVault>,
    /// Each `per-user` upstream: its URL and OAuth configuration.
    upstreams: BTreeMap<String, (String, OAuth)>,
    /// The sign-in client, once known.
    client: tokio::sync::OnceCell<SignInClient>,
    /// The elicitations completed here in the last ten minutes, and when.
    done: tokio::sync::watch::Sender<HashMap<String, Instant>>,
    /// Where each finished authorization is recorded (the audit log).
    audit: std::sync::OnceLock<Arc<dyn crate::audit::AuditSink>>,
    http: reqwest::Client,
}

struct SignInClient {
    id: String,
    authorization_endpoint: String,
    token_endpoint: String,
}

/// What the sign-in's redirect carries, sealed, in its `state`.
#[derive(serde::Serialize, serde::Deserialize)]
struct SignIn {
    ticket: crate::mcp::Ticket,
    verifier: String,
    nonce: String,
}

/// A redirect to `to`.
fn redirect(to: String) -> Page {
    Page { status: 302, location: Some(to), text: String::new() }
}

/// A page that says `text`, with `status`.
fn says(status: u16, text: impl Into<String>) -> Page {
    Page { status, location: None, text: text.into() }
}

impl Authorizer {
    /// The browser step for `upstreams` (name → URL and OAuth configuration;
    /// those not `per-user` are ignored), their credentials kept in `vault`.
    pub fn new(options: AuthorizeOptions, vault: Arc<dyn CredentialVault>, upstreams: impl IntoIterator<Item = (String, String, OAuth)>) -> Result<Authorizer, String> {
        let base = reqwest::Url::parse(&options.base).map_err(|e| format!("`{}` is not a URL: {e}", options.base))?;
        let options = AuthorizeOptions { base: base.origin().ascii_serialization(), ..options };
        let upstreams = upstreams.into_iter().filter(|(_, _, o)| o.per_user).map(|(name, url, oauth)| (name, (url, oauth))).collect();
        crate::tls::ensure_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        Ok(Authorizer { options, vault, upstreams, client: tokio::sync::OnceCell::new(), done: tokio::sync::watch::Sender::new(HashMap::new()), audit: std::sync::OnceLock::new(), http })
    }

    /// Record each authorization that finishes here in `sink` (the serve
    /// store's audit log), as an `authorization` record naming the person
    /// and the upstream. Set once.
    pub fn record_to(&self, sink: Arc<dyn crate::audit::AuditSink>) {
        let _ = self.audit.set(sink);
    }

    /// The URL where `principal` authorizes `upstream`, for the
    /// elicitation `elicitation`: a new ticket each time.
    pub fn start_url(&self, principal: &str, upstream: &str, elicitation: &str) -> String {
        let (_, sealed) = self.options.key.issue_ticket(principal, upstream, elicitation, now());
        let mut url = reqwest::Url::parse(&format!("{}{START_PATH}", self.options.base)).expect("the base is a URL");
        url.query_pairs_mut().append_pair("ticket", &sealed);
        url.into()
    }

    fn redirect_uri(&self) -> String {
        format!("{}{CALLBACK_PATH}", self.options.base)
    }

    /// Answer a browser's GET of `path_and_query`; `team` checks the
    /// sign-in's ID token (the team's issuer, as the HTTP surface trusts it).
    async fn answer(&self, path_and_query: &str, team: &ResourceServer) -> Page {
        let Ok(url) = reqwest::Url::parse(&format!("{}{path_and_query}", self.options.base)) else {
            return says(400, "this address is not one capspec can read");
        };
        let query: BTreeMap<String, String> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        match url.path() {
            START_PATH => self.start(query.get("ticket").map(String::as_str).unwrap_or_default(), team).await,
            CALLBACK_PATH => self.callback(&query, team).await,
            _ => says(404, "not found"),
        }
    }

    /// Open and spend the ticket, then send the browser to sign in.
    async fn start(&self, sealed: &str, team: &ResourceServer) -> Page {
        let ticket = match self.options.key.open_ticket(sealed, now()) {
            Ok(ticket) => ticket,
            Err(refused) => return says(400, format!("capspec cannot use this link: {refused}.")),
        };
        if !self.upstreams.contains_key(&ticket.upstream) {
            return says(400, format!("capspec cannot use this link: this gateway calls no upstream `{}` with each person's own credential.", ticket.upstream));
        }
        match self.vault.spend_ticket(&ticket.id, i64::try_from(ticket.expires.saturating_mul(1000)).unwrap_or(i64::MAX)).await {
            Ok(true) => {}
            Ok(false) => return says(400, "capspec cannot use this link: it was used already. Call the tool again for a new one."),
            Err(e) => return says(503, format!("capspec cannot check this link now: {e}")),
        }
        let client = match self.client.get_or_try_init(|| self.sign_in_client(team)).await {
            Ok(client) => client,
            Err(e) => return says(502, format!("capspec cannot send you to sign in at `{}`: {e}", team.issuer())),
        };
        let verifier = random();
        let nonce = random();
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
        let principal = ticket.principal.clone();
        let state = self.options.key.seal_sign_in(&serde_json::to_vec(&SignIn { ticket, verifier, nonce: nonce.clone() }).expect("JSON serializes"));
        let Ok(mut to) = reqwest::Url::parse(&client.authorization_endpoint) else {
            return says(502, format!("the issuer's authorization endpoint `{}` is not a URL", client.authorization_endpoint));
        };
        to.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &client.id)
            .append_pair("redirect_uri", &self.redirect_uri())
            .append_pair("scope", "openid")
            .append_pair("state", &state)
            .append_pair("nonce", &nonce)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("login_hint", &principal);
        redirect(to.into())
    }

    /// The sign-in client: `--oauth-client-id`, else one registered at the
    /// issuer; and the issuer's endpoints.
    async fn sign_in_client(&self, team: &ResourceServer) -> Result<SignInClient, String> {
        let metadata = team.issuer_metadata().await?;
        let endpoint = |name: &str| metadata.get(name).and_then(Value::as_str).map(str::to_string);
        let authorization_endpoint = endpoint("authorization_endpoint").ok_or("its metadata names no `authorization_endpoint`")?;
        let token_endpoint = endpoint("token_endpoint").ok_or("its metadata names no `token_endpoint`")?;
        let id = match &self.options.client_id {
            Some(id) => id.clone(),
            None => {
                let registration = endpoint("registration_endpoint").ok_or("it offers no dynamic client registration; register a client there and name it with `--oauth-client-id`")?;
                let body = serde_json::json!({
                    "client_name": "capspec",
                    "redirect_uris": [self.redirect_uri()],
                    "grant_types": ["authorization_code"],
                    "response_types": ["code"],
                    "token_endpoint_auth_method": "none",
                    "scope": "openid",
                });
                let response = self.http.post(&registration).json(&body).send().await.map_err(|e| format!("its registration endpoint could not be reached: {e}"))?;
                let status = response.status();
                let answer: Value = response.json().await.unwrap_or_default();
                if !status.is_success() {
                    return Err(format!("its registration endpoint refused a client ({status}): {}", describe(&answer)));
                }
                answer.get("client_id").and_then(Value::as_str).ok_or("its registration endpoint answered no `client_id`")?.to_string()
            }
        };
        Ok(SignInClient { id, authorization_endpoint, token_endpoint })
    }

    async fn callback(&self, query: &BTreeMap<String, String>, team: &ResourceServer) -> Page {
        let state = query.get("state").map(String::as_str).unwrap_or_default();
        if let Some(plaintext) = self.options.key.open_sign_in(state) {
            let Ok(sign_in) = serde_json::from_slice::<SignIn>(&plaintext) else { return says(400, "capspec cannot read this sign-in's state") };
            return self.signed_in(sign_in, query, team).await;
        }
        let pending = match super::per_user::pending_session(&self.vault, state).await {
            Ok(Some(pending)) => pending,
            Ok(None) => return says(400, "capspec knows no authorization under way for this answer: it took longer than ten minutes, or was finished already. Call the tool again for a new link."),
            Err(e) => return says(503, format!("capspec cannot read the authorization under way now: {e}")),
        };
        if let Some(error) = query.get("error") {
            return says(400, format!("`{}`'s authorization server refused: {}", pending.upstream, refusal(error, query.get("error_description"))));
        }
        let Some((upstream_url, oauth)) = self.upstreams.get(&pending.upstream) else { return says(400, format!("this gateway calls no upstream `{}` as each person", pending.upstream)) };
        let Some(code) = query.get("code") else { return says(400, format!("`{}`'s authorization server answered without a code", pending.upstream)) };
        let callback = (code.as_str(), state, query.get("iss").map(String::as_str));
        match super::per_user::finish_principal_session(upstream_url, oauth, &pending, self.vault.clone(), callback).await {
            Ok(_) => {
                if let Some(sink) = self.audit.get() {
                    let record = crate::audit::event(crate::audit::RecordKind::Authorization, &pending.principal, &pending.upstream, "browser");
                    if let Err(why) = sink.decision(record).await {
                        tracing::warn!("the audit log did not take `{}`'s authorization of `{}`: {why}", pending.principal, pending.upstream);
                    }
                }
                // The call that gave the link goes on.
                self.done.send_modify(|done| {
                    done.retain(|_, at| at.elapsed() < PENDING_TTL);
                    done.insert(pending.elicitation.clone(), Instant::now());
                });
                says(
                200,
                    format!("capspec now calls `{}` as `{}`: you can close this tab.", pending.upstream, pending.principal),
                )
            }
            Err(e) => says(502, format!("`{}`'s authorization did not complete: {}", pending.upstream, super::child::without_type_paths(&e.to_string()))),
        }
    }

    /// The sign-in's leg: who signed in must be whom the ticket names; then on to the upstream.
    async fn signed_in(&self, sign_in: SignIn, query: &BTreeMap<String, String>, team: &ResourceServer) -> Page {
        let SignIn { ticket, verifier, nonce } = sign_in;
        if now() > ticket.expires {
            return says(400, format!("capspec cannot use this link: {}.", crate::mcp::TicketRefused::Expired));
        }
        if let Some(error) = query.get("error") {
            return says(400, format!("the sign-in at `{}` was refused: {}", team.issuer(), refusal(error, query.get("error_description"))));
        }
        let client = match self.client.get_or_try_init(|| self.sign_in_client(team)).await {
            Ok(client) => client,
            Err(e) => return says(502, format!("capspec cannot finish the sign-in at `{}`: {e}", team.issuer())),
        };
        let Some(code) = query.get("code") else { return says(400, "the sign-in's answer carries no code") };
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", &self.redirect_uri()),
            ("client_id", client.id.as_str()),
            ("code_verifier", verifier.as_str()),
        ];
        let body: String = form.iter().map(|(k, v)| format!("{k}={}", super::oauth::form_encode(v))).collect::<Vec<_>>().join("&");
        let sent = self.http.post(&client.token_endpoint).header("content-type", "application/x-www-form-urlencoded").body(body).send().await;
        let answer = match sent {
            Ok(response) => {
                let status = response.status();
                let answer: Value = response.json().await.unwrap_or_default();
                if !status.is_success() {
                    return says(502, format!("`{}` refused to finish the sign-in ({status}): {}", team.issuer(), describe(&answer)));
                }
                answer
            }
            Err(e) => return says(502, format!("`{}` could not be reached to finish the sign-in: {e}", team.issuer())),
        };
        let Some(id_token) = answer.get("id_token").and_then(Value::as_str) else {
            return says(502, format!("`{}` answered the sign-in without an ID token", team.issuer()));
        };
        let sub = match team.verify_id_token(id_token, &client.id, &nonce).await {
            Ok(sub) => sub,
            Err(e) => return says(502, format!("the ID token from `{}` is not valid here: {e}", team.issuer())),
        };
        if sub != ticket.principal {
            return says(
                403,
                format!(
                    "this link was made for `{}`, and you signed in as `{sub}`: nothing was stored. Each person authorizes `{}` through the link their own call gave them.",
                    ticket.principal, ticket.upstream
                ),
            );
        }
        let Some((url, oauth)) = self.upstreams.get(&ticket.upstream) else { return says(400, format!("this gateway calls no upstream `{}` as each person", ticket.upstream)) };
        let who = (ticket.upstream.as_str(), ticket.principal.as_str(), ticket.elicitation.as_str());
        let session = match super::per_user::principal_session(url, oauth, who, self.vault.clone(), &self.redirect_uri()).await {
            Ok(session) => session,
            Err(e) => return says(502, format!("capspec cannot begin `{}`'s authorization: {}", ticket.upstream, super::child::without_type_paths(&e))),
        };
        redirect(session.get_authorization_url().to_string())
    }
}

impl BrowserPages for Authorizer {
    fn paths(&self) -> &'static [&'static str] {
        &[START_PATH, CALLBACK_PATH]
    }

    fn page<'a>(&'a self, path_and_query: &'a str, issuer: &'a ResourceServer) -> BoxFuture<'a, Page> {
        Box::pin(self.answer(path_and_query, issuer))
    }
}

impl CredentialVault for Authorizer {
    fn load<'a>(&'a self, upstream: &'a str, principal: &'a str) -> BoxFuture<'a, Result<Option<Value>, String>> {
        self.vault.load(upstream, principal)
    }

    fn save<'a>(&'a self, upstream: &'a str, principal: &'a str, credential: Value) -> BoxFuture<'a, Result<(), String>> {
        self.vault.save(upstream, principal, credential)
    }

    fn spend_ticket<'a>(&'a self, id: &'a str, expires_ms: i64) -> BoxFuture<'a, Result<bool, String>> {
        self.vault.spend_ticket(id, expires_ms)
    }

    fn link_lifetime(&self) -> Duration {
        self.options.key.ticket_ttl()
    }

    fn keep<'a>(&'a self, kind: &'a str, id: &'a str, value: Value, expires_ms: Option<i64>, only_new: bool) -> BoxFuture<'a, Result<bool, String>> {
        self.vault.keep(kind, id, value, expires_ms, only_new)
    }

    fn kept<'a>(&'a self, kind: &'a str, id: &'a str, take: bool) -> BoxFuture<'a, Result<Option<Value>, String>> {
        self.vault.kept(kind, id, take)
    }

    fn authorize_url(&self, upstream: &str, principal: &str) -> Option<(String, String)> {
        let id = random();
        self.upstreams.contains_key(upstream).then(|| (id.clone(), self.start_url(principal, upstream, &id)))
    }

    fn authorized<'a>(&'a self, upstream: &'a str, principal: &'a str, id: &'a str, wait: Duration) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + wait;
            let mut done = self.done.subscribe();
            let before = self.vault.load(upstream, principal).await.ok().flatten();
            loop {
                if done.borrow_and_update().contains_key(id) {
                    return true;
                }
                // Finished at another instance sharing the store: a new
                // credential appears there (read every second).
                if self.vault.load(upstream, principal).await.ok().flatten() != before {
                    return true;
                }
                if tokio::time::timeout_at(deadline, tokio::time::timeout(Duration::from_secs(1), done.changed())).await.is_err() {
                    return false;
                }
            }
        })
    }
}

/// An OAuth error answer (`error`, `error_description`) in words.
fn refusal(error: &str, description: Option<&String>) -> String {
    match description {
        Some(description) => format!("{error} ({description})"),
        None => error.to_string(),
    }
}

/// An error answer's `error` and `error_description`, or the answer itself.
fn describe(answer: &Value) -> String {
    match answer.get("error").and_then(Value::as_str) {
        Some(error) => refusal(error, answer.get("error_description").and_then(Value::as_str).map(str::to_string).as_ref()),
        None => answer.to_string(),
    }
}

/// 32 random bytes, URL-safe base64.
fn random() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the system has a random source");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn now() -> u64 {
    super::oauth::now()
}
