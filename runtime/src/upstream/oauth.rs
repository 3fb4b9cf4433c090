//! OAuth upstreams (DESIGN §12): the log-in to a server that accepts only
//! OAuth 2.1, the credentials it leaves in the user's config directory, and
//! the store the client reads (and refreshes) them from. The protocol is
//! rmcp's (`auth` feature): discovery from the server's 401 (RFC 9728, then
//! RFC 8414 or OpenID), the client (pre-registered, a Client ID Metadata
//! Document, else dynamic registration), PKCE S256 with the `resource`, the
//! response's `iss` (RFC 9207), refresh. What is here is where credentials
//! live and how a person gets through the browser step.
//!
//! Credentials are kept per (authorization server, resource, client), one
//! file each under `<config>/capspec/oauth/` (the directory `0700`, the files
//! `0600`, written whole and renamed into place), never in a project.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use tokio::io::AsyncWriteExt;


/// How an `auth = "oauth"` server's client is identified, and where its
/// credentials are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuth {
    /// A client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// The URL of a Client ID Metadata Document the project publishes, used
    /// where the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for; empty: what the server's metadata names.
    pub scopes: Vec<String>,
    /// The directory holding the credentials ([`credentials_dir`]); empty
    /// when the user has none (then nothing can be stored).
    pub store: PathBuf,
    /// `credentials = "per-user"`: a principal other than `local` calls with
    /// their own credential from the [`CredentialVault`], never with the
    /// operator's log-in in [`OAuth::store`] (which pins, and serves `local`).
    pub per_user: bool,
}

/// Where per-user credentials are kept (DESIGN §12, §15): the serve store
/// seals them; the runtime only loads and saves them, per (upstream,
/// principal). A credential is rmcp's stored credentials as JSON.
pub trait CredentialVault: Send + Sync {
    /// `principal`'s credential for `upstream`, if one is kept.
    fn load<'a>(&'a self, upstream: &'a str, principal: &'a str) -> crate::gate::BoxFuture<'a, Result<Option<serde_json::Value>, String>>;
    /// Keep (or replace) `principal`'s credential for `upstream`.
    fn save<'a>(&'a self, upstream: &'a str, principal: &'a str, credential: serde_json::Value) -> crate::gate::BoxFuture<'a, Result<(), String>>;
    /// Mark the browser step's ticket `id` (valid until `expires_ms`) used:
    /// `true` the first time, `false` once any instance sharing the vault
    /// has used it. A vault that cannot remember tickets refuses.
    fn spend_ticket<'a>(&'a self, id: &'a str, expires_ms: i64) -> crate::gate::BoxFuture<'a, Result<bool, String>> {
        let _ = (id, expires_ms);
        Box::pin(async { Err("this host keeps no record of used links".to_string()) })
    }
    /// Keep `value` sealed as `kind`/`id` (a client registered at an
    /// upstream's authorization server; an authorization under way), until
    /// `expires_ms` if given, where every instance sharing the vault finds
    /// it; with `only_new`, `Ok(false)` when one is kept already (it stays).
    fn keep<'a>(&'a self, kind: &'a str, id: &'a str, value: serde_json::Value, expires_ms: Option<i64>, only_new: bool) -> crate::gate::BoxFuture<'a, Result<bool, String>> {
        let _ = (kind, id, value, expires_ms, only_new);
        Box::pin(async { Err("this host's vault keeps nothing but credentials".to_string()) })
    }
    /// What [`keep`](CredentialVault::keep) kept as `kind`/`id`, if
    /// unexpired; with `take`, removed as it is read.
    fn kept<'a>(&'a self, kind: &'a str, id: &'a str, take: bool) -> crate::gate::BoxFuture<'a, Result<Option<serde_json::Value>, String>> {
        let _ = (kind, id, take);
        Box::pin(async { Ok(None) })
    }
    /// Where `principal` authorizes capspec to call `upstream` as them (a
    /// call refused for want of their credential gives it, or asks them to
    /// open it): a new elicitation id, and the URL; `None` when this host
    /// serves no such page.
    fn authorize_url(&self, upstream: &str, principal: &str) -> Option<(String, String)> {
        let _ = (upstream, principal);
        None
    }
    /// How long a link [`authorize_url`](CredentialVault::authorize_url)
    /// gives stays usable (the ticket's lifetime): what its wording says.
    fn link_lifetime(&self) -> Duration {
        Duration::from_secs(600)
    }

    /// Wait, at most `wait`, until `principal` authorized `upstream` through
    /// the link of the elicitation `id`: whether they did.
    fn authorized<'a>(&'a self, upstream: &'a str, principal: &'a str, id: &'a str, wait: Duration) -> crate::gate::BoxFuture<'a, bool> {
        let _ = (upstream, principal, id, wait);
        Box::pin(async { false })
    }
}

/// One principal's credential for one upstream, as rmcp's client loads and
/// saves it (a refresh saves the new tokens back).
pub(super) struct VaultStore {
    pub(super) vault: Arc<dyn CredentialVault>,
    pub(super) upstream: String,
    pub(super) principal: String,
}

#[async_trait::async_trait]
impl CredentialStore for VaultStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let kept = self.vault.load(&self.upstream, &self.principal).await.map_err(AuthError::CredentialStoreError)?;
        Ok(kept.and_then(|v| serde_json::from_value(v).ok()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let value = serde_json::to_value(&credentials).map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        self.vault.save(&self.upstream, &self.principal, value).await.map_err(AuthError::CredentialStoreError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        Ok(())
    }
}

/// The authorization manager for the server at `url` with `principal`'s
/// credential from `vault`.
pub(crate) async fn principal_manager(url: &str, upstream: &str, principal: &str, vault: Arc<dyn CredentialVault>) -> Result<AuthorizationManager, Unusable> {
    manager_with(url, VaultStore { vault, upstream: upstream.to_string(), principal: principal.to_string() }).await
}

/// The command that logs in to `server`, for messages.
pub fn login_command(server: &str) -> String {
    format!("cargo capspec auth login {server}")
}

/// Where the user's OAuth credentials are kept: `capspec/oauth` in the
/// user's config directory (`$XDG_CONFIG_HOME`, else `~/.config`; on macOS
/// `~/Library/Application Support`; on Windows `%APPDATA%`).
pub fn credentials_dir() -> Option<PathBuf> {
    let env = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = if cfg!(windows) {
        env("APPDATA")
    } else if cfg!(target_os = "macos") {
        env("XDG_CONFIG_HOME").or_else(|| env("HOME").map(|h| h.join("Library/Application Support")))
    } else {
        env("XDG_CONFIG_HOME").or_else(|| env("HOME").map(|h| h.join(".config")))
    };
    base.map(|b| b.join("capspec").join("oauth"))
}

/// One stored log-in, as its file holds it.
#[derive(Clone, Serialize, Deserialize)]
struct Entry {
    resource: String,
    issuer: String,
    client_id: String,
    credentials: StoredCredentials,
}

/// A stored log-in, as `auth status` shows it: never the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Login {
    /// The server's URL (the resource).
    pub resource: String,
    /// The authorization server.
    pub issuer: String,
    /// The client it logged in as.
    pub client_id: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the access token expires (seconds since the epoch), if it said.
    pub expires_at: Option<u64>,
    /// Whether a refresh token is kept (the log-in outlives the access token).
    pub refreshable: bool,
}

impl Entry {
    /// The token response as RFC 6749 §5.1 words it (`expires_in`, `refresh_token`).
    fn token(&self) -> serde_json::Value {
        self.credentials.token_response.as_ref().and_then(|t| serde_json::to_value(t).ok()).unwrap_or_default()
    }

    fn login(&self) -> Login {
        let token = self.token();
        let expires_at = token.get("expires_in").and_then(serde_json::Value::as_u64).zip(self.credentials.token_received_at).map(|(ttl, at)| at + ttl);
        Login {
            resource: self.resource.clone(),
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            scopes: self.credentials.granted_scopes.clone(),
            expires_at,
            refreshable: token.get("refresh_token").is_some_and(|t| !t.is_null()),
        }
    }

    /// Whether this log-in is one `oauth` would use for `resource`.
    fn serves(&self, resource: &str, oauth: &OAuth) -> bool {
        self.resource == resource && oauth.client_id.as_ref().or(oauth.client_metadata_url.as_ref()).is_none_or(|c| *c == self.client_id)
    }
}

/// The credentials of one server's log-in: rmcp's [`CredentialStore`] over
/// the files in [`OAuth::store`]. It loads the newest log-in for the
/// server's URL (and configured client) and saves under (issuer, resource,
/// client).
struct FileStore {
    dir: PathBuf,
    resource: String,
    oauth: OAuth,
    /// The file the last load or save used (shared with [`login`], which
    /// keeps that one and removes the server's others).
    current: Arc<Mutex<Option<PathBuf>>>,
}

fn store_error(what: &str, path: &Path, e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("cannot {what} `{}`: {e}", path.display()))
}

impl FileStore {
    fn dir(&self) -> Result<&Path, AuthError> {
        if self.dir.as_os_str().is_empty() {
            return Err(AuthError::CredentialStoreError("there is no user config directory to keep credentials in: set XDG_CONFIG_HOME or HOME".into()));
        }
        Ok(&self.dir)
    }

    fn new(resource: &str, oauth: &OAuth) -> FileStore {
        FileStore { dir: oauth.store.clone(), resource: resource.to_string(), oauth: oauth.clone(), current: Arc::new(Mutex::new(None)) }
    }

    /// Every log-in for this server, newest first.
    fn entries(&self) -> Result<Vec<(PathBuf, Entry)>, AuthError> {
        self.dir()?;
        let mut found: Vec<(PathBuf, Entry)> = read_all(&self.dir)?.into_iter().filter(|(_, e)| e.serves(&self.resource, &self.oauth)).collect();
        found.sort_by_key(|(path, e)| (std::cmp::Reverse(e.credentials.token_received_at), path.clone()));
        Ok(found)
    }
}

/// Every readable log-in file in `dir`, in file-name order; a file that is
/// not one is skipped.
fn read_all(dir: &Path) -> Result<Vec<(PathBuf, Entry)>, AuthError> {
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(store_error("read", dir, e)),
    };
    let mut paths: Vec<PathBuf> = listing.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    Ok(paths.into_iter().filter_map(|p| std::fs::read(&p).ok().and_then(|b| serde_json::from_slice(&b).ok()).map(|e| (p, e))).collect())
}

/// The file of (issuer, resource, client): a digest, so no name is unsafe
/// as a file name.
fn file_name(issuer: &str, resource: &str, client_id: &str) -> String {
    let digest = sha2::Sha256::digest(format!("{issuer}\n{resource}\n{client_id}").as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("{hex}.json")
}

/// Write `bytes` to `path` readable by its owner only: a temporary file in
/// the same directory, then a rename, so a reader sees the old or the new
/// file, never a part.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().expect("a credentials file has a directory");
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    // A directory made earlier, by hand, may be wider.
    #[cfg(unix)]
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&tmp).and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let kept = current.and_then(|path| std::fs::read(&path).ok()).and_then(|b| serde_json::from_slice::<Entry>(&b).ok());
        // A new log-in replaced the one this store read (`auth login` while
        // a gateway runs): the server's log-in now, read anew.
        let entry = match kept {
            Some(entry) => Some(entry),
            None => self.entries()?.into_iter().next().map(|(path, entry)| {
                *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(path);
                entry
            }),
        };
        Ok(entry.map(|e| e.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let issuer = credentials.issuer.clone().unwrap_or_default();
        let path = self.dir()?.join(file_name(&issuer, &self.resource, &credentials.client_id));
        let entry = Entry { resource: self.resource.clone(), issuer, client_id: credentials.client_id.clone(), credentials };
        let bytes = serde_json::to_vec_pretty(&entry).expect("credentials serialize");
        write_private(&path, &bytes).map_err(|e| store_error("write", &path, e))?;
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(path);
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(path) = current {
            std::fs::remove_file(&path).or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) }).map_err(|e| store_error("remove", &path, e))?;
        }
        Ok(())
    }
}

/// Why a server's stored log-in cannot be used.
pub(crate) enum Unusable {
    /// None is stored (or the authorization server changed since): log in.
    NotLoggedIn,
    /// The store, the server's metadata or its authorization server failed.
    Failed(String),
}

/// The authorization manager for the server at `url` with its stored
/// log-in, ready for an [`rmcp::transport::auth::AuthClient`].
pub(crate) async fn stored_manager(url: &str, oauth: &OAuth) -> Result<AuthorizationManager, Unusable> {
    manager_with(url, FileStore::new(url, oauth)).await
}

/// The authorization manager for the server at `url`, its credential in `store`.
async fn manager_with(url: &str, store: impl CredentialStore + 'static) -> Result<AuthorizationManager, Unusable> {
    let mut manager = AuthorizationManager::new(url).await.map_err(|e| Unusable::Failed(e.to_string()))?;
    manager.set_credential_store(store);
    match manager.initialize_from_store().await {
        Ok(true) => Ok(manager),
        Ok(false) | Err(AuthError::AuthorizationRequired) => Err(Unusable::NotLoggedIn),
        Err(e) => Err(Unusable::Failed(format!("its authorization could not be prepared: {e}"))),
    }
}

/// Log in to the server at `url` (`cargo capspec auth login`): its 401 names its
/// metadata, the client is registered or named, and the person follows
/// the URL `visit` is given (to print, or open in a browser); the authorization server redirects to a
/// loopback port here, whose code is exchanged (with the PKCE verifier,
/// the `resource`, and the `iss` checked) and the credentials stored.
/// Waits at most `wait` for the browser.
pub async fn login(url: &str, oauth: &OAuth, wait: Duration, mut visit: impl FnMut(&str)) -> Result<LoggedIn, String> {
    let fail = |e: AuthError| e.to_string();
    let store = FileStore::new(url, oauth);
    let saved = store.current.clone();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| format!("no loopback port for the redirect: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let (session, revocation) = authorization_session(url, oauth, store, &redirect).await?;
    visit(session.get_authorization_url());
    let exchanged = tokio::time::timeout(wait, async {
        loop {
            let Some((mut socket, query)) = super::loopback::callback(&listener).await else { continue };
            let result = match super::loopback::refusal(&query) {
                // The authorization server's own refusal (RFC 6749 §4.1.2.1), in its words.
                Some(why) => Err(AuthError::AuthorizationFailed(why)),
                None => session.handle_callback_url(&format!("{redirect}?{query}")).await,
            };
            let page = match &result {
                Ok(_) => "Logged in; you can close this tab.".to_string(),
                Err(e) => format!("The log-in failed: {e}"),
            };
            let reply = format!("HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}", page.len());
            let _ = socket.write_all(reply.as_bytes()).await;
            let _ = socket.shutdown().await;
            return result;
        }
    })
    .await
    .map_err(|_| format!("no answer from the browser within {} s", wait.as_secs()))?;
    exchanged.map_err(fail)?;
    let saved = saved.lock().unwrap_or_else(|e| e.into_inner()).clone().ok_or_else(|| "the token was received but not stored".to_string())?;
    // This log-in replaces the server's earlier ones: one log-in per
    // upstream, whose refresh tokens go back to the authorization server
    // where it takes them (RFC 7009).
    let mut replaced = Vec::new();
    for (path, earlier) in FileStore::new(url, oauth).entries().map_err(fail)?.into_iter().filter(|(path, _)| *path != saved) {
        let revoked = match &revocation {
            Some(endpoint) => revoke(endpoint, &earlier).await,
            None => Revoked::NotOffered,
        };
        std::fs::remove_file(&path).map_err(|e| format!("cannot remove the earlier log-in `{}`: {e}", path.display()))?;
        replaced.push((earlier.client_id, revoked));
    }
    let entry: Entry = std::fs::read(&saved).ok().and_then(|b| serde_json::from_slice(&b).ok()).ok_or_else(|| "the token was received but not stored".to_string())?;
    Ok(LoggedIn { login: entry.login(), replaced })
}

/// The server at `url`, discovered as MCP's authorization says (its 401
/// names its Protected Resource Metadata, which names its authorization
/// server): a manager with that server's metadata, the 401's challenge,
/// the revocation endpoint (RFC 7009) if named, the authorization
/// server's issuer, and whether it takes Client ID Metadata Documents.
pub(super) struct Discovered {
    pub(super) manager: AuthorizationManager,
    challenge: Option<String>,
    revocation: Option<String>,
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(super) issuer: String,
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(super) cimd: bool,
}

pub(super) async fn discover(url: &str) -> Result<Discovered, String> {
    crate::tls::ensure_provider();
    let fail = |e: AuthError| e.to_string();
    let challenge = challenge(url).await?;
    let mut manager = AuthorizationManager::new(url).await.map_err(fail)?;
    let resolution = manager.resolve_metadata_from_challenge(challenge.as_deref()).await.map_err(fail)?;
    let fields = &resolution.metadata.additional_fields;
    let revocation = fields.get("revocation_endpoint").and_then(|v| v.as_str()).map(str::to_string);
    let cimd = fields.get("client_id_metadata_document_supported").and_then(|v| v.as_bool()).unwrap_or(false);
    let issuer = resolution.metadata.issuer.clone().unwrap_or_else(|| resolution.metadata.authorization_endpoint.clone());
    manager.set_metadata(resolution.metadata);
    Ok(Discovered { manager, challenge, revocation, issuer, cimd })
}

/// The scopes capspec asks `found`'s authorization server for, and
/// registers its client with (DESIGN §12): what the upstream's 401
/// challenge names in `scope`, else its Protected Resource Metadata's
/// `scopes_supported`, plus the configured `scopes`; with none of those,
/// the authorization server's `scopes_supported` (rmcp's selection, which
/// adds `offline_access` where the server offers it, for a refresh token).
pub(super) async fn requested_scopes(found: &Discovered, oauth: &OAuth) -> Vec<String> {
    let configured: Vec<&str> = oauth.scopes.iter().map(String::as_str).collect();
    let mut scopes = found.manager.select_initial_scopes(&configured).await;
    for scope in &oauth.scopes {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    if scopes.is_empty() {
        scopes = found.manager.select_scopes(None, &[]);
    }
    scopes
}

/// The session of a browser step: the client is `client` (id, secret), else
/// the configured `client_id`, else the Client ID Metadata Document, else
/// one registered now (RFC 7591); PKCE S256 with the `resource`.
pub(super) async fn session_of(found: Discovered, oauth: &OAuth, client: Option<(String, Option<String>)>, redirect: &str) -> Result<AuthorizationSession, String> {
    let mut request = AuthorizationRequest::new(redirect).with_client_name("capspec");
    if let Some((id, secret)) = client {
        request = request.with_preregistered_client(id);
        if let Some(secret) = secret {
            request = request.with_client_secret(secret);
        }
    } else if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id.as_str());
    } else if let Some(doc) = &oauth.client_metadata_url {
        request = request.with_client_metadata_url(doc.as_str());
    }
    let scopes = requested_scopes(&found, oauth).await;
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    if let Some(header) = &found.challenge {
        request = request.with_challenge(header.as_str());
    }
    AuthorizationSession::new(found.manager, request).await.map_err(|(_, e)| e.to_string())
}

/// The browser step of an authorization at the server at `url`, its
/// credential to be saved in `store`, the authorization server to redirect
/// to `redirect`: its 401 names its metadata, the client is registered or
/// named, PKCE S256 with the `resource`. The session, and the
/// authorization server's revocation endpoint (RFC 7009) if it names one.
pub(crate) async fn authorization_session(url: &str, oauth: &OAuth, store: impl CredentialStore + 'static, redirect: &str) -> Result<(AuthorizationSession, Option<String>), String> {
    let mut found = discover(url).await?;
    found.manager.set_credential_store(store);
    let revocation = found.revocation.clone();
    Ok((session_of(found, oauth, None, redirect).await?, revocation))
}

/// What became of an earlier log-in's refresh token when a new log-in replaced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revoked {
    /// The authorization server took it back (RFC 7009).
    Yes,
    /// It kept none, so there was nothing to revoke.
    NoToken,
    /// The authorization server names no revocation endpoint: the token
    /// lives until it expires there.
    NotOffered,
    /// The revocation endpoint refused or failed: why.
    Failed(String),
}

/// A finished log-in: the log-in, and the earlier ones it replaced (their
/// clients, and whether their refresh tokens were revoked).
#[derive(Debug, Clone)]
pub struct LoggedIn {
    /// The new log-in.
    pub login: Login,
    /// The earlier log-ins removed: (client, what became of its refresh token).
    pub replaced: Vec<(String, Revoked)>,
}

/// Revoke an earlier log-in's refresh token at `endpoint` (RFC 7009, as
/// the public client it was).
async fn revoke(endpoint: &str, earlier: &Entry) -> Revoked {
    let token = earlier.token();
    let Some(token) = token.get("refresh_token").and_then(|r| r.as_str()) else { return Revoked::NoToken };
    let form = [("token", token), ("token_type_hint", "refresh_token"), ("client_id", earlier.client_id.as_str())];
    let body: String = form.iter().map(|(k, v)| format!("{k}={}", form_encode(v))).collect::<Vec<_>>().join("&");
    let sent = reqwest::Client::new().post(endpoint).header("content-type", "application/x-www-form-urlencoded").body(body).send().await;
    match sent {
        Ok(response) if response.status().is_success() => Revoked::Yes,
        Ok(response) => Revoked::Failed(format!("the revocation endpoint answered {}", response.status())),
        Err(e) => Revoked::Failed(format!("the revocation endpoint could not be reached ({e})")),
    }
}

/// `application/x-www-form-urlencoded` for one value.
pub(crate) fn form_encode(value: &str) -> String {
    value.bytes().map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

/// The `WWW-Authenticate` of the server's answer to a request without a
/// token; `None` when it answers without one.
async fn challenge(url: &str) -> Result<Option<String>, String> {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"capspec","version":"0"}}}"#;
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("`{url}` could not be reached: {e}"))?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Err(format!("`{url}` answered {} to a request without a token, not 401: it does not ask for OAuth", response.status()));
    }
    Ok(response.headers().get(reqwest::header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_string))
}

/// Every stored log-in (`auth status`), in file order.
pub fn logins(dir: &Path) -> Result<Vec<Login>, String> {
    read_all(dir).map(|all| all.into_iter().map(|(_, e)| e.login()).collect()).map_err(|e| e.to_string())
}

/// The stored log-ins the server at `url` would use.
pub fn logins_for(url: &str, oauth: &OAuth) -> Result<Vec<Login>, String> {
    FileStore::new(url, oauth).entries().map(|all| all.into_iter().map(|(_, e)| e.login()).collect()).map_err(|e| e.to_string())
}

/// Forget the log-ins of the server at `url` (`auth logout`): every
/// stored one it would use. How many were removed.
pub fn logout(url: &str, oauth: &OAuth) -> Result<usize, String> {
    let entries = FileStore::new(url, oauth).entries().map_err(|e| e.to_string())?;
    for (path, _) in &entries {
        std::fs::remove_file(path).map_err(|e| format!("cannot remove `{}`: {e}", path.display()))?;
    }
    Ok(entries.len())
}

/// Seconds since the epoch, for expiry.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}
