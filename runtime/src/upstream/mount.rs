//! Upstream modules mounted (DESIGN §12): every capability of an upstream
//! module is implemented by forwarding — after `invoke`'s ladder (coercion,
//! validation with defaults, the gate with the *pinned* category) — to
//! `tools/call` of its tool on its server.
//!
//! - A server is started when the mount starts (eager, all concurrently,
//!   each within its timeout) or on its first call (lazy; catalogued from
//!   its pins until then). An eager server that does not start, or does not
//!   list its tools, leaves its module unmounted, with the reason.
//! - When a server (re)starts, its tools are listed and fingerprinted: a
//!   tool whose live definition does not match its pin is refused with
//!   `upstream_changed`, naming what moved; the others work.
//! - A call past the server's timeout is cancelled upstream
//!   (`notifications/cancelled`) and refused with `upstream_timeout`. A
//!   server that exits ends its in-flight calls with `upstream_unavailable`
//!   and is started again on a later call, no sooner than a backoff that
//!   doubles per failure (to [`MAX_BACKOFF`]). A failure is a start that
//!   fails or an exit within [`MAX_BACKOFF`] of the start: a server that
//!   crashes on every call backs off as one that never starts does.
//! - A server behind OAuth sends its stored log-in's token, refreshed
//!   before it expires and once more when the server refuses it; a server
//!   with no log-in, or that refuses the refreshed token, ends the call
//!   with `upstream_unauthorized`, naming the log-in command.
//! - Children are killed when the mount is dropped.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ServerResult};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError};
use rmcp::{Peer, RoleClient};
use serde_json::Value;

use super::child::{Connected, Server, StderrTail, UpstreamError, connect_as, stderr_tail};
use super::oauth::CredentialVault;
use crate::error::{CallError, ErrorCode};
use crate::gate::BoxFuture;
use crate::registry::{Forward, Forwarded};
use crate::run::Run;
use crate::spec::{Module, Spec};
use crate::validate::{Objects, Validator};

/// The longest wait before a failed server is started again.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The first wait after a failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// The wait after `failures` consecutive failures before this one.
fn backoff(failures: u32) -> Duration {
    FIRST_BACKOFF.saturating_mul(1 << failures.min(7)).min(MAX_BACKOFF)
}

/// One upstream module, as the host loaded it from its pinned spec.
#[derive(Debug, Clone)]
pub struct UpstreamModule {
    /// The server that implements it.
    pub server: Server,
    /// Started on its first call rather than when the mount starts.
    pub lazy: bool,
    /// The module's specs, as for any module.
    pub module: Module,
    /// Per capability: its tool and pin.
    pub tools: Vec<PinnedTool>,
}

/// A capability's tool on its server, and the pin it was reviewed at.
#[derive(Debug, Clone)]
pub struct PinnedTool {
    /// The capability's spec.
    pub spec: &'static Spec,
    /// The tool's name on the server.
    pub tool: String,
    /// `sha256:…` of the tool as it was listed when pinned; `None` when the
    /// spec carries no pin (nothing to compare).
    pub pin: Option<String>,
}

/// A module left out of the mount, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unmounted {
    /// The module.
    pub module: String,
    /// Its server.
    pub server: String,
    /// What happened.
    pub reason: String,
}

/// The mounted upstream modules.
pub struct Upstreams {
    mounted: Vec<(Module, Arc<Connection>)>,
    unmounted: Vec<Unmounted>,
}

impl std::fmt::Debug for Upstreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstreams").field("mounted", &self.mounted.iter().map(|(m, _)| m.name).collect::<Vec<_>>()).field("unmounted", &self.unmounted).finish()
    }
}

impl Upstreams {
    /// Start every eager server (concurrently, each within its timeout);
    /// lazy ones start on their first call.
    pub async fn start(modules: Vec<UpstreamModule>) -> Upstreams {
        Upstreams::start_with_vault(modules, None).await
    }

    /// [`Upstreams::start`], with the vault a `per-user` server's callers'
    /// own credentials are kept in (DESIGN §12). Without one, such a server
    /// serves `local` alone (with the operator's log-in) and refuses anyone
    /// else with `upstream_unauthorized`.
    pub async fn start_with_vault(modules: Vec<UpstreamModule>, vault: Option<Arc<dyn CredentialVault>>) -> Upstreams {
        let mut starting = tokio::task::JoinSet::new();
        for (i, m) in modules.into_iter().enumerate() {
            let vault = vault.clone();
            starting.spawn(async move {
                let connection = Arc::new(Connection::new(m.server.clone(), m.tools, vault));
                let started = if m.lazy { Ok(()) } else { connection.ready().await.map(|_| ()).map_err(|(_, reason)| reason) };
                (i, m.module, connection, started)
            });
        }
        let mut done = Vec::new();
        while let Some(joined) = starting.join_next().await {
            done.push(joined.expect("starting a server does not panic"));
        }
        done.sort_by_key(|(i, ..)| *i);
        let mut mounted = Vec::new();
        let mut unmounted = Vec::new();
        for (_, module, connection, started) in done {
            match started {
                Ok(()) => mounted.push((module, connection)),
                Err(reason) => unmounted.push(Unmounted { module: module.name.to_string(), server: connection.server.name.clone(), reason }),
            }
        }
        Upstreams { mounted, unmounted }
    }

    /// The mounted modules, for the registry and the catalog.
    pub fn modules(&self) -> Vec<Module> {
        self.mounted.iter().map(|(m, _)| *m).collect()
    }

    /// The modules left out, and why (the capabilities resource says it).
    pub fn unmounted(&self) -> &[Unmounted] {
        &self.unmounted
    }

    /// The implementation of every mounted capability, for
    /// [`Registry::with_forwards`](crate::Registry::with_forwards).
    pub fn forwards(&self) -> Vec<Forwarded> {
        self.mounted
            .iter()
            .flat_map(|(module, connection)| {
                module.specs.iter().map(move |spec| {
                    let schema = spec.output_schema.and_then(|s| serde_json::from_str::<Value>(s).ok());
                    let output = schema.and_then(|s| Validator::compile_with(&s, Objects::Open).ok()).map(Arc::new);
                    Forwarded { module: spec.module, name: spec.name, forward: Arc::new(Tool { connection: connection.clone(), capability: spec.name, output }) }
                })
            })
            .collect()
    }

    /// Stop every server (also done when the mount is dropped).
    pub async fn shutdown(&self) {
        let callers = self.mounted.iter().flat_map(|(_, c)| c.callers.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect::<Vec<_>>());
        let every: Vec<Arc<Connection>> = self.mounted.iter().map(|(_, c)| c.clone()).chain(callers).collect();
        for connection in &every {
            let taken = std::mem::replace(&mut *connection.state.lock().await, State::Stopped);
            if let State::Up { service, .. } = taken {
                let _ = service.cancel().await;
            }
        }
    }
}

/// One server: started on demand, its pins checked on every start.
struct Connection {
    server: Server,
    /// Capability name → its tool and pin.
    tools: BTreeMap<&'static str, PinnedTool>,
    state: tokio::sync::Mutex<State>,
    /// Where a `per-user` server's callers' credentials are kept.
    vault: Option<Arc<dyn CredentialVault>>,
    /// `Some(principal)`: this connection calls as that principal, with
    /// their credential from the vault (never the operator's log-in).
    principal: Option<String>,
    /// A `per-user` server's connections, one per principal who called.
    callers: std::sync::Mutex<BTreeMap<String, Arc<Connection>>>,
}

enum State {
    /// Not started yet (lazy), or after a failure: when it may start again,
    /// and what a call meanwhile is refused with.
    Down { failures: u32, retry_at: Option<Instant>, code: ErrorCode, reason: String },
    Up {
        service: RunningService<RoleClient, ()>,
        /// Capability name → what no longer matches its pin.
        changed: Arc<BTreeMap<&'static str, String>>,
        stderr: StderrTail,
        /// Consecutive failures before this start, and when it started: an
        /// exit soon after the start is one more.
        failures: u32,
        since: Instant,
        /// The OAuth client whose log-in it started with.
        client: Option<String>,
    },
    Stopped,
}

impl Connection {
    fn new(server: Server, tools: Vec<PinnedTool>, vault: Option<Arc<dyn CredentialVault>>) -> Connection {
        let tools = tools.into_iter().map(|t| (t.spec.name, t)).collect();
        Connection::with(server, tools, vault, None)
    }

    fn with(server: Server, tools: BTreeMap<&'static str, PinnedTool>, vault: Option<Arc<dyn CredentialVault>>, principal: Option<String>) -> Connection {
        let state = tokio::sync::Mutex::new(State::Down { failures: 0, retry_at: None, code: ErrorCode::UpstreamUnavailable, reason: String::new() });
        Connection { server, tools, state, vault, principal, callers: std::sync::Mutex::new(BTreeMap::new()) }
    }

    /// The connection a call by `principal` goes through: this one, unless
    /// the server is `per-user` and the caller is not `local`; then the
    /// caller's own, which sends their credential and nobody else's.
    fn for_principal(self: &Arc<Connection>, principal: &str) -> Result<Arc<Connection>, String> {
        let per_user = self.server.oauth().is_some_and(|(_, oauth)| oauth.per_user);
        if !per_user || principal == crate::principal::Principal::LOCAL {
            return Ok(self.clone());
        }
        let Some(vault) = &self.vault else {
            return Err(format!(
                "`{}` is called with each caller's own credential (`credentials = \"per-user\"`), and this host keeps none (it has no serve store); `{principal}` cannot call it",
                self.server.name
            ));
        };
        let mut callers = self.callers.lock().unwrap_or_else(|e| e.into_inner());
        let connection = callers
            .entry(principal.to_string())
            .or_insert_with(|| Arc::new(Connection::with(self.server.clone(), self.tools.clone(), Some(vault.clone()), Some(principal.to_string()))));
        Ok(connection.clone())
    }

    /// The running server's peer and what changed, starting it if needed.
    async fn ready(&self) -> Result<(Peer<RoleClient>, Arc<BTreeMap<&'static str, String>>, StderrTail), (ErrorCode, String)> {
        let mut state = self.state.lock().await;
        if let State::Up { service, changed, stderr, failures, since, .. } = &*state {
            if !service.is_closed() && !service.peer().is_transport_closed() {
                return Ok((service.peer().clone(), changed.clone(), stderr.clone()));
            }
            let failures = if since.elapsed() < MAX_BACKOFF { *failures } else { 0 };
            let reason = format!("the server exited{}", stderr_tail(&stderr.text()));
            tracing::warn!("upstream `{}`: {reason}", self.server.name);
            let reason = super::child::without_stderr(&reason).to_string();
            *state = State::Down { failures: failures + 1, retry_at: Some(Instant::now() + backoff(failures)), code: ErrorCode::UpstreamUnavailable, reason };
        }
        let failures = match &*state {
            State::Down { failures, retry_at: Some(at), code, reason } if Instant::now() < *at => {
                let wait = at.saturating_duration_since(Instant::now());
                return Err((*code, format!("{reason}; it is started again in {} ms", wait.as_millis())));
            }
            State::Down { failures, .. } => *failures,
            State::Stopped => return Err((ErrorCode::UpstreamUnavailable, "the host is shutting down".into())),
            State::Up { .. } => unreachable!("handled above"),
        };
        match self.start().await {
            Ok((service, changed, stderr)) => {
                let peer = service.peer().clone();
                let changed = Arc::new(changed);
                let client = self.stored_client();
                *state = State::Up { service, changed: changed.clone(), stderr: stderr.clone(), failures, since: Instant::now(), client };
                Ok((peer, changed, stderr))
            }
            Err(e) => {
                let code = if matches!(e, UpstreamError::Unauthorized { .. }) { ErrorCode::UpstreamUnauthorized } else { ErrorCode::UpstreamUnavailable };
                let reason = format!("`{}` did not start: {e}", self.server.name);
                tracing::warn!("{reason}");
                let reason = super::child::without_stderr(&reason).to_string();
                // A caller without a credential yet may have one a moment later: no wait.
                let retry_at = if code == ErrorCode::UpstreamUnauthorized && self.principal.is_some() { None } else { Some(Instant::now() + backoff(failures)) };
                *state = State::Down { failures: failures + 1, retry_at, code, reason: reason.clone() };
                Err((code, reason))
            }
        }
    }

    /// After a refused call: when the stored log-in is now another client's
    /// than the one this connection started with (`auth login` ran since),
    /// drop the connection so that a call starts it with the new log-in;
    /// whether it did.
    async fn restart_if_logged_in_anew(&self) -> bool {
        let now = self.stored_client();
        let mut state = self.state.lock().await;
        if let State::Up { client, .. } = &*state {
            if now.is_some() && *client != now {
                *state = State::Down { failures: 0, retry_at: None, code: ErrorCode::UpstreamUnauthorized, reason: String::new() };
                return true;
            }
        }
        false
    }

    /// Drop the running connection: the next call starts it anew (a
    /// caller's refused credential, replaced in the vault since).
    async fn forget(&self) {
        let mut state = self.state.lock().await;
        if let State::Up { .. } = &*state {
            *state = State::Down { failures: 0, retry_at: None, code: ErrorCode::UpstreamUnauthorized, reason: String::new() };
        }
    }

    /// The OAuth client of the server's stored log-in, if it has one.
    fn stored_client(&self) -> Option<String> {
        if self.principal.is_some() {
            // The caller's own credential, not a log-in on this machine.
            return None;
        }
        let (url, oauth) = self.server.oauth()?;
        super::oauth::logins_for(url, oauth).ok()?.into_iter().next().map(|l| l.client_id)
    }

    /// Start the process, complete the handshake and list the tools within
    /// the timeout; compare each pinned tool with what is listed.
    async fn start(&self) -> Result<(RunningService<RoleClient, ()>, BTreeMap<&'static str, String>, StderrTail), UpstreamError> {
        let as_principal = self.principal.as_deref().zip(self.vault.as_ref());
        let Connected { service, tools: listed, stderr } = connect_as(&self.server, as_principal).await?;
        let live: BTreeMap<String, Value> =
            listed.into_iter().map(|t| (t.name.to_string(), serde_json::to_value(&t).expect("tools serialize"))).collect();
        let changed = self.tools.values().filter_map(|pinned| drift(pinned, live.get(&pinned.tool)).map(|why| (pinned.spec.name, why))).collect();
        Ok((service, changed, stderr))
    }
}

/// What keeps a pinned tool from being called, if anything.
fn drift(pinned: &PinnedTool, live: Option<&Value>) -> Option<String> {
    let Some(live) = live else {
        return Some(format!("the server no longer lists the tool `{}`", pinned.tool));
    };
    let pin = pinned.pin.as_deref()?;
    let now = capspec_dialects::pin::pin(live);
    if now == pin {
        return None;
    }
    let spec = pinned.spec;
    let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    let mut moved = Vec::new();
    if live.get("description").and_then(Value::as_str).unwrap_or_default().trim() != spec.description.trim() {
        moved.push("description");
    }
    if live.get("inputSchema").cloned().unwrap_or(Value::Null) != parse(spec.input_schema) {
        moved.push("input schema");
    }
    if live.get("outputSchema").cloned().unwrap_or(Value::Null) != spec.output_schema.map(parse).unwrap_or(Value::Null) {
        moved.push("output schema");
    }
    let what = if moved.is_empty() { "title or annotations".to_string() } else { moved.join(", ") };
    Some(format!("the tool `{}` changed since it was pinned ({what}; pinned {pin}, now {now}); review it with `cargo xtask check --upstream`", pinned.tool))
}

/// How long a call waits for its caller to authorize a `per-user` server
/// through the link it gave them (the link's own limit).
const AUTHORIZE_WAIT: Duration = Duration::from_secs(600);

/// A link's lifetime in words: "ten minutes", "8 seconds", "2 minutes".
fn within(lifetime: Duration) -> String {
    match lifetime.as_secs() {
        600 => "ten minutes".to_string(),
        1 => "1 second".to_string(),
        s if s < 120 || s % 60 != 0 => format!("{s} seconds"),
        s => format!("{} minutes", s / 60),
    }
}

/// One capability, forwarded to its tool.
struct Tool {
    connection: Arc<Connection>,
    capability: &'static str,
    /// The pinned output schema, which a structured result must satisfy.
    output: Option<Arc<Validator>>,
}

impl Forward for Tool {
    fn server(&self) -> &str {
        &self.connection.server.name
    }

    fn may_ask_link(&self) -> bool {
        self.connection.vault.is_some() && self.connection.server.oauth().is_some_and(|(_, o)| o.per_user)
    }

    fn call<'a>(&'a self, run: &'a Run, args: Value) -> BoxFuture<'a, Result<Value, CallError>> {
        Box::pin(async move {
            let server = &self.connection.server;
            let principal = run.principal().id();
            let per_user = server.oauth().is_some_and(|(_, o)| o.per_user) && principal != crate::principal::Principal::LOCAL;
            let again = per_user.then(|| args.clone());
            let mut e = match self.forward(run, args).await {
                Err(e) if e.code == ErrorCode::UpstreamUnauthorized => e,
                done => return done,
            };
            // A caller without a usable credential of their own is sent where they give one.
            let (Some(vault), Some(args)) = (&self.connection.vault, again) else { return Err(e) };
            let Some((id, url)) = vault.authorize_url(&server.name, principal) else { return Err(e) };
            let lifetime = vault.link_lifetime();
            let within = within(lifetime);
            let Some(asker) = run.get::<Arc<dyn crate::gate::AskUrl>>() else {
                e.message = format!("{}; `{principal}` authorizes capspec to call it as them at {url} (the link works once, within {within})", e.message);
                return Err(e);
            };
            let message = format!("`{}` is called as each person. Sign in and authorize capspec to call it as you (`{principal}`); the link works once, within {within}.", server.name);
            if let Err(why) = asker.ask(&id, &message, &url).await {
                e.message = format!("{}; {why} where `{principal}` authorizes capspec to call it as them ({url})", e.message);
                return Err(e);
            }
            if !vault.authorized(&server.name, principal, &id, lifetime.min(AUTHORIZE_WAIT)).await {
                e.message = format!("{}; `{principal}` did not authorize it at {url} within {within}", e.message);
                return Err(e);
            }
            asker.complete(&id).await;
            self.forward(run, args).await
        })
    }
}
impl Tool {
    /// The call, on the caller's connection.
    async fn forward(&self, run: &Run, args: Value) -> Result<Value, CallError> {
        {
            // No message a model reads carries a Rust type name, whatever a layer below words.
            let fail = |code: ErrorCode, message: String| CallError::new(code, super::child::without_type_paths(&message), String::new());
            let connection = &self.connection.for_principal(run.principal().id()).map_err(|e| fail(ErrorCode::UpstreamUnauthorized, e))?;
            // A credential revoked since this caller's connection started
            // (the vault reads the store again every few seconds) ends it.
            if let (Some(principal), Some(vault)) = (&connection.principal, &connection.vault) {
                if matches!(vault.load(&connection.server.name, principal).await, Ok(None)) {
                    connection.forget().await;
                }
            }
            let pinned = &connection.tools[self.capability];
            let arguments = match args {
                Value::Object(map) => Some(map),
                _ => None,
            };
            // At most twice: once more when a new log-in replaced the one
            // this connection started with.
            for attempt in 0..2 {
                let (peer, changed, stderr) = connection.ready().await.map_err(|(code, e)| fail(code, e))?;
                if let Some(why) = changed.get(self.capability) {
                    return Err(fail(ErrorCode::UpstreamChanged, why.clone()));
                }
                let mut params = CallToolRequestParams::new(pinned.tool.clone());
                params.arguments = arguments.clone();
                let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
                let timeout = connection.server.timeout;
                let options = PeerRequestOptions::with_timeout(timeout);
                let sent = peer.send_cancellable_request(request, options).await;
                let answer = match sent {
                    Ok(handle) => handle.await_response().await,
                    Err(e) => Err(e),
                };
                return match answer {
                    Ok(ServerResult::CallToolResult(result)) => {
                        if let Some(blocks) = run.get::<crate::content::Blocks>() {
                            for block in result.content.iter().filter(|b| b.as_text().is_none()) {
                                blocks.push(serde_json::to_value(block).expect("content blocks serialize"));
                            }
                        }
                        let value = result_value(result).map_err(|m| fail(ErrorCode::UpstreamError, m))?;
                        match self.output.as_ref().map(|v| v.validate(&value)).filter(|violations| !violations.is_empty()) {
                            None => Ok(value),
                            Some(violations) => {
                                let list = violations.iter().map(|v| format!("{}: {}", v.pointer, v.message)).collect::<Vec<_>>().join("; ");
                                Err(fail(ErrorCode::UpstreamError, format!("`{}` returned a value its pinned output schema refuses: {list}", connection.server.name)))
                            }
                        }
                    }
                    Ok(_) => Err(fail(ErrorCode::UpstreamError, format!("`{}` answered tools/call with something other than a tool result", connection.server.name))),
                    Err(ServiceError::Timeout { timeout }) => Err(fail(
                        ErrorCode::UpstreamTimeout,
                        format!("`{}` did not answer within {} ms; the call was cancelled", connection.server.name, timeout.as_millis()),
                    )),
                    // The server answered the call with a JSON-RPC error (DESIGN
                    // §12): `upstream_error`, its message, code and data kept.
                    Err(ServiceError::McpError(error)) => {
                        let message = format!("`{}` answered the call with an error: {}", connection.server.name, error.message);
                        Err(CallError { data: error.data.map(Box::new), jsonrpc_code: Some(error.code.0), ..fail(ErrorCode::UpstreamError, message) })
                    }
                    Err(e) if connection.server.oauth().is_some() && super::child::refused(&e) => {
                        // A log-in made since this connection started (another
                        // client): start again with it, and call once more.
                        if connection.restart_if_logged_in_anew().await && attempt == 0 {
                            continue;
                        }
                        if let Some(principal) = &connection.principal {
                            // Their next call starts anew, with what the vault holds then.
                            connection.forget().await;
                            return Err(fail(ErrorCode::UpstreamUnauthorized, format!("`{}` refused `{principal}`'s own token, also after a refresh", connection.server.name)));
                        }
                        Err(fail(
                            ErrorCode::UpstreamUnauthorized,
                            format!("`{}` refused the log-in's token, also after a refresh; log in again with `{}`", connection.server.name, super::oauth::login_command(&connection.server.name)),
                        ))
                    }
                    Err(e) => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        Err(fail(ErrorCode::UpstreamUnavailable, unavailable(&connection.server, &e, &stderr)))
                    }
                };
            }
            unreachable!("the second attempt returns whatever it meets")
        }
    }
}

/// Why a call got no answer, in words a person (or model) can act on: the
/// causes without the transport's Rust type names, and, when it was the
/// OAuth log-in's refresh that failed, the authorization server named as
/// what is down, not the MCP server.
fn unavailable(server: &Server, error: &(dyn std::error::Error + 'static), stderr: &StderrTail) -> String {
    let causes = super::child::causes(error);
    if let Some((url, oauth)) = server.oauth() {
        if super::child::refresh_failed(error) {
            let issuer = super::oauth::logins_for(url, oauth).ok().and_then(|l| l.into_iter().next()).map(|l| l.issuer);
            let who = issuer.map_or_else(|| "its authorization server".to_string(), |i| format!("its authorization server ({i})"));
            return format!(
                "`{}` could not be called: {who} did not answer when the log-in's access token had to be refreshed ({causes}); the log-in is kept, so the call works again once the authorization server is back",
                server.name
            );
        }
    }
    let tail = stderr_tail(&stderr.text());
    if !tail.is_empty() {
        tracing::warn!("upstream `{}` did not answer: {causes}{tail}", server.name);
    }
    format!("`{}` did not answer: {causes}", server.name)
}

/// A tool result as the capability's value (§12): `structuredContent` when
/// there is one, else the text of its text blocks as one string; an error
/// result is its text.
fn result_value(result: CallToolResult) -> Result<Value, String> {
    let text = |result: &CallToolResult| result.content.iter().filter_map(|block| block.as_text().map(|t| t.text.as_str())).collect::<Vec<_>>().join("\n");
    if result.is_error == Some(true) {
        return Err(text(&result));
    }
    match result.structured_content {
        Some(structured) if !structured.is_null() => Ok(structured),
        _ => Ok(Value::String(text(&result))),
    }
}
