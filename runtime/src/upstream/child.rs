//! Upstream servers as child processes: how to reach one, starting it
//! (bounded stderr, killed with the host), and listing its tools.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::RoleClient;
use serde_json::Value;
use tokio::io::AsyncReadExt;


/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        /// The program, then its arguments.
        command: Vec<String>,
        /// Added to the child's environment.
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP at this URL.
    Http {
        /// The endpoint.
        url: String,
        /// The bearer token, when the server wants one.
        token: Option<String>,
        /// OAuth 2.1 instead (`auth = "oauth"`): the token is the stored
        /// log-in's, refreshed as it expires.
        oauth: Option<super::oauth::OAuth>,
    },
}

/// One upstream server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// Its name (`[upstream.NAME]`), for messages.
    pub name: String,
    /// How to reach it.
    pub endpoint: Endpoint,
    /// How long starting, connecting and listing may take together.
    pub timeout: Duration,
}

impl Server {
    /// The URL and OAuth client of a server behind OAuth (`auth = "oauth"`).
    pub fn oauth(&self) -> Option<(&str, &super::oauth::OAuth)> {
        match &self.endpoint {
            Endpoint::Http { url, oauth: Some(oauth), .. } => Some((url, oauth)),
            _ => None,
        }
    }
}

/// Why a server could not be listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    /// The child process could not be started.
    #[error("`{program}` could not be started: {message}")]
    Spawn {
        /// The program.
        program: String,
        /// What the system said.
        message: String,
    },
    /// It started but did not complete the MCP handshake or the listing.
    #[error("{message}{}", stderr_tail(.stderr))]
    Protocol {
        /// What went wrong.
        message: String,
        /// The end of what it wrote to stderr.
        stderr: String,
    },
    /// Nothing within the timeout.
    #[error("no tool list within {} ms{}", .timeout.as_millis(), stderr_tail(.stderr))]
    Timeout {
        /// The timeout.
        timeout: Duration,
        /// The end of what it wrote to stderr.
        stderr: String,
    },
    /// This build cannot reach the endpoint.
    #[error("{0}")]
    Unsupported(String),
    /// An OAuth server with no usable log-in: none stored, or its token
    /// refused after one refresh.
    #[error("{}", unauthorized_text(.message, .login))]
    Unauthorized {
        /// What happened: capspec's words (`not logged in`), or, after
        /// `SERVER_SAID`, the server's own.
        message: String,
        /// The command that logs in.
        login: String,
    },
}

/// Where a message's stderr tail starts ([`stderr_tail`]).
const STDERR_MARK: &str = "; its stderr ends: ";

/// `; its stderr ends: …`, for a message an operator reads (`check
/// --upstream`, the host's log); never for a caller ([`without_stderr`]).
pub(crate) fn stderr_tail(stderr: &str) -> String {
    let text = stderr.trim();
    if text.is_empty() { String::new() } else { format!("{STDERR_MARK}{text}") }
}

/// `message` without its stderr tail: what an upstream wrote to its stderr
/// (colours, paths, peer details) goes to capspec's log, never into an
/// answer (DESIGN §12).
pub(crate) fn without_stderr(message: &str) -> &str {
    message.split_once(STDERR_MARK).map_or(message, |(before, _)| before)
}

/// At most this much of a child's stderr is kept for a message.
const STDERR_TAIL: usize = 2048;

/// A started child: its MCP transport and the tail of its stderr, read as
/// it comes (a full pipe would stall the child) and kept bounded.
pub(crate) struct Child {
    pub(crate) transport: TokioChildProcess,
    pub(crate) stderr: StderrTail,
}

/// The last [`STDERR_TAIL`] bytes a child wrote to stderr.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl StderrTail {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

/// Start `server`'s process (stdio only). It is killed when its transport
/// (or the service over it) is dropped.
pub(crate) fn spawn(server: &Server) -> Result<Child, UpstreamError> {
    let (command, env, cwd) = match &server.endpoint {
        Endpoint::Stdio { command, env, cwd } => (command, env, cwd),
        Endpoint::Http { url, .. } => return Err(UpstreamError::Unsupported(format!("`{url}` is reached over HTTP, not started"))),
    };
    let program = command.first().cloned().unwrap_or_default();
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(&command[1..]).envs(env).kill_on_drop(true);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    die_with_parent(&mut cmd);
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| UpstreamError::Spawn { program: program.clone(), message: e.to_string() })?;
    let tail = StderrTail::default();
    let kept = tail.clone();
    tokio::spawn(async move {
        if let Some(mut stderr) = stderr {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut kept = kept.0.lock().unwrap_or_else(|e| e.into_inner());
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > STDERR_TAIL {
                    let excess = kept.len() - STDERR_TAIL;
                    kept.drain(..excess);
                }
            }
        }
    });
    Ok(Child { transport, stderr: tail })
}

/// No child outlives the host: `kill_on_drop` covers every orderly end;
/// on Linux the kernel also kills the child when the thread that started
/// it ends — the host killed outright included (`PR_SET_PDEATHSIG`). The
/// servers are started from the async runtime's worker threads, which live
/// as long as the runtime.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut tokio::process::Command) {
    // SAFETY: between fork and exec only async-signal-safe calls may run;
    // `prctl` is one, and nothing here allocates or takes a lock.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut tokio::process::Command) {}

/// A server reached and listed.
pub(crate) struct Connected {
    /// The MCP client session with it.
    pub(crate) service: RunningService<RoleClient, ()>,
    /// Every tool it listed (all pages).
    pub(crate) tools: Vec<rmcp::model::Tool>,
    /// The end of its stderr (a child process; empty over HTTP).
    pub(crate) stderr: StderrTail,
}

/// Start `server` (stdio) or reach it (Streamable HTTP, with its bearer
/// token), complete the MCP handshake and list every tool — all within its
/// timeout.
pub(crate) async fn connect(server: &Server) -> Result<Connected, UpstreamError> {
    connect_as(server, None).await
}

/// [`connect`], with `as_principal`'s credential from the vault instead of
/// the operator's log-in (a `per-user` server, DESIGN §12).
pub(crate) async fn connect_as(server: &Server, as_principal: Option<(&str, &Arc<dyn super::oauth::CredentialVault>)>) -> Result<Connected, UpstreamError> {
    type Handshake = std::pin::Pin<Box<dyn std::future::Future<Output = Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError>> + Send>>;
    let (handshake, stderr): (Handshake, StderrTail) = match &server.endpoint {
        Endpoint::Stdio { .. } => {
            let Child { transport, stderr } = spawn(server)?;
            (Box::pin(().serve(transport)), stderr)
        }
        Endpoint::Http { url, token, oauth } => {
            crate::tls::ensure_provider();
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            if let Some(oauth) = oauth {
                // rmcp's AuthClient sends the stored token, refreshes it
                // before it expires, and once more when the server refuses it.
                let stored = match as_principal {
                    None => tokio::time::timeout(server.timeout, super::oauth::stored_manager(url, oauth)).await,
                    Some((principal, vault)) => tokio::time::timeout(server.timeout, super::oauth::principal_manager(url, &server.name, principal, vault.clone())).await,
                };
                let manager = stored
                    .map_err(|_| UpstreamError::Timeout { timeout: server.timeout, stderr: String::new() })?
                    .map_err(|unusable| match (unusable, as_principal) {
                        (super::oauth::Unusable::NotLoggedIn, None) => UpstreamError::Unauthorized { message: "not logged in".into(), login: super::oauth::login_command(&server.name) },
                        (super::oauth::Unusable::NotLoggedIn, Some((principal, _))) => UpstreamError::Unauthorized {
                            message: format!("`{principal}` has not authorized capspec to call it as them"),
                            login: String::new(),
                        },
                        (super::oauth::Unusable::Failed(message), _) => UpstreamError::Protocol { message, stderr: String::new() },
                    })?;
                let client = AuthClient::new(reqwest::Client::new(), manager);
                (Box::pin(().serve(StreamableHttpClientTransport::with_client(client, config))), StderrTail::default())
            } else {
                if let Some(token) = token {
                    config = config.auth_header(token.as_str());
                }
                (Box::pin(().serve(StreamableHttpClientTransport::from_config(config))), StderrTail::default())
            }
        }
    };
    let listed = tokio::time::timeout(server.timeout, async {
        let service = handshake.await.map_err(|e| (format!("the MCP handshake failed: {}", causes(&e)), refused(&e)))?;
        let tools = service.list_all_tools().await.map_err(|e| (format!("tools/list failed: {}", causes(&e)), refused(&e)))?;
        Ok::<_, (String, bool)>((service, tools))
    })
    .await;
    match listed {
        Ok(Ok((service, tools))) => Ok(Connected { service, tools, stderr }),
        // Only a log-in can be renewed: a static token's 401 stays a protocol error.
        Ok(Err((message, true))) if server.oauth().is_some() => {
            let login = if as_principal.is_some() { String::new() } else { super::oauth::login_command(&server.name) };
            Err(UpstreamError::Unauthorized { message: format!("{SERVER_SAID}{message}"), login })
        }
        failed => {
            // What the child wrote last may still be in the pipe.
            tokio::time::sleep(Duration::from_millis(50)).await;
            match failed {
                Ok(Err((message, _))) => Err(UpstreamError::Protocol { message, stderr: stderr.text() }),
                _ => Err(UpstreamError::Timeout { timeout: server.timeout, stderr: stderr.text() }),
            }
        }
    }
}

/// Whether `error` (or what caused it) is the server refusing the token:
/// its 401 (after one refresh, for an OAuth log-in) or 403.
pub(crate) fn refused(error: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::service::{ClientInitializeError, ServiceError};
    use rmcp::transport::auth::AuthError;
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    let mut next = Some(error);
    while let Some(error) = next {
        if error.is::<AuthRequiredError>() || error.is::<InsufficientScopeError>() || matches!(error.downcast_ref::<AuthError>(), Some(AuthError::AuthorizationRequired)) {
            return true;
        }
        if error.downcast_ref::<ServiceError>().is_some_and(ServiceError::is_authorization_required) {
            return true;
        }
        next = match error.downcast_ref::<ClientInitializeError>() {
            Some(ClientInitializeError::TransportError { error, .. }) => Some(&*error.error),
            _ => error.source(),
        };
    }
    false
}

/// How an [`UpstreamError::Unauthorized`] message that quotes the server begins.
pub(crate) const SERVER_SAID: &str = "the server said: ";

/// capspec's advice first; the server's own words (a `WWW-Authenticate`
/// description may tell "your client" to do what capspec does not) after
/// it, marked as the server's.
fn unauthorized_text(message: &str, login: &str) -> String {
    if login.is_empty() {
        // A person's own credential (`per-user`): no log-in of the operator's helps.
        return match message.strip_prefix(SERVER_SAID) {
            Some(said) => format!("the server refused the caller's own token (the server's own words: \"{said}\")"),
            None => message.to_string(),
        };
    }
    match message.strip_prefix(SERVER_SAID) {
        Some(said) => format!("the server refused the log-in's token; log in again with `{login}` (the server's own words, written for any client: \"{said}\")"),
        None => format!("{message}; log in with `{login}`"),
    }
}

/// Whether `error` (or what caused it) is an OAuth log-in's token refresh
/// that failed for want of an answer (the authorization server down), as
/// opposed to one it refused.
pub(crate) fn refresh_failed(error: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::service::ServiceError;
    use rmcp::transport::auth::AuthError;
    let mut next = Some(error);
    while let Some(error) = next {
        if matches!(error.downcast_ref::<AuthError>(), Some(AuthError::TokenRefreshFailed(_))) {
            return true;
        }
        next = match error.downcast_ref::<ServiceError>() {
            Some(ServiceError::TransportSend(dynamic)) => Some(&*dynamic.error),
            _ => error.source(),
        };
    }
    false
}

/// An error and what caused it, down to the cause a user can act on (a
/// refused certificate, a refused connection): HTTP clients' errors say
/// only what failed at their level.
pub(crate) fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut next = Some(error);
    while let Some(error) = next {
        let (own, cause) = words_and_cause(error);
        if let Some(own) = own.filter(|own| !text.contains(own.as_str())) {
            text = if text.is_empty() { own } else { format!("{text}: {own}") };
        }
        next = cause;
    }
    text
}

/// An error's own words and its cause. rmcp's transport errors hold their
/// cause without naming it their source, and word themselves by Rust type
/// names: those layers give only their cause (and what was being sent).
fn words_and_cause<'a>(error: &'a (dyn std::error::Error + 'static)) -> (Option<String>, Option<&'a (dyn std::error::Error + 'static)>) {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    if let Some(ClientInitializeError::TransportError { error, context }) = error.downcast_ref::<ClientInitializeError>() {
        return (Some(format!("{context} failed")), Some(&*error.error));
    }
    if let Some(StreamableHttpError::Client(client)) = error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        return (None, Some(client));
    }
    // "Transport send error: Transport [<the transport's Rust type>] error: …": only its cause.
    if let Some(rmcp::service::ServiceError::TransportSend(dynamic)) = error.downcast_ref::<rmcp::service::ServiceError>() {
        return (None, Some(&*dynamic.error));
    }
    if let Some(dynamic) = error.downcast_ref::<rmcp::transport::DynamicTransportError>() {
        return (None, Some(&*dynamic.error));
    }
    (Some(without_type_paths(&error.to_string())), error.source())
}

/// `text` without the bracketed Rust type paths some errors word
/// themselves with (`Transport [a::b::C<d::E>] error` → `Transport error`):
/// no message a person or model reads carries one.
pub(crate) fn without_type_paths(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let close = rest[open..].find(']').map(|c| open + c);
        match close {
            Some(close) if rest[open..close].contains("::") => {
                out.push_str(rest[..open].trim_end());
                rest = &rest[close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Start `server`, list every tool (all pages) as the JSON objects it sent,
/// and stop it. A child is killed when this returns, whatever happened.
pub async fn list_tools(server: &Server) -> Result<Vec<Value>, UpstreamError> {
    let Connected { service, tools, .. } = connect(server).await?;
    let _ = service.cancel().await;
    Ok(tools.into_iter().map(|t| serde_json::to_value(t).expect("tools serialize")).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn messages_carry_no_rust_type_paths() {
        let rmcp = "Transport send error: Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<rmcp::transport::auth::AuthClient<reqwest::async_impl::client::Client>>>] error: Auth error: OAuth token refresh failed: Request failed";
        let cleaned = super::without_type_paths(rmcp);
        assert_eq!(cleaned, "Transport send error: Transport error: Auth error: OAuth token refresh failed: Request failed");
        assert!(!cleaned.contains("::"));
        // Brackets that hold no path stay.
        assert_eq!(super::without_type_paths("list [1, 2] of [upstream.notes]"), "list [1, 2] of [upstream.notes]");
    }
}
