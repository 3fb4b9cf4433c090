//! Serving sessions: stdio (one session, the process's) and Streamable HTTP
//! at `/mcp` (a session per client, each behind the shared bearer token or,
//! as an OAuth 2.1 resource server, each caller's own token).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::origin::{normalize_origin, origin_admitted};
use super::server::{McpHost, McpSession};

/// Serve one session over stdin/stdout until the client closes it.
pub async fn serve_stdio(host: McpHost) -> std::io::Result<()> {
    let running = host.session().serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// Who may call over HTTP (DESIGN §13). A request without what it asks is
/// refused with 401 and gets no session.
#[derive(Clone)]
pub enum Auth {
    /// Every request carries `Authorization: Bearer <token>`: principal `token`.
    Token(String),
    /// Every request carries an access token the resource server accepts:
    /// the principal is its `sub`, limited to its scopes' categories.
    #[cfg(feature = "oauth")]
    OAuth(Arc<super::oauth::ResourceServer>),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The token is a secret: never in a debug print.
            Auth::Token(_) => f.write_str("Token(..)"),
            #[cfg(feature = "oauth")]
            Auth::OAuth(server) => write!(f, "OAuth({})", server.metadata_url()),
        }
    }
}

/// How the HTTP transport admits requests.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Who may call.
    pub auth: Auth,
    /// A request body over this many bytes is refused with 413.
    pub max_body_bytes: usize,
    /// Origins (`https://app.example.com`, scheme and host and any port)
    /// admitted besides loopback ones. A request whose `Origin` — or,
    /// without one, `Host` — is neither loopback nor listed is refused with
    /// 403 before its token is looked at (DNS rebinding).
    pub allowed_origins: Vec<String>,
}

impl HttpOptions {
    /// The body limit unless set otherwise: 4 MiB.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

    /// Options admitting requests that carry `token`, with the default body limit.
    pub fn new(token: impl Into<String>) -> HttpOptions {
        HttpOptions::with_auth(Auth::Token(token.into()))
    }

    /// Options admitting requests as `auth` says, with the default body limit.
    pub fn with_auth(auth: Auth) -> HttpOptions {
        HttpOptions { auth, max_body_bytes: HttpOptions::DEFAULT_MAX_BODY_BYTES, allowed_origins: Vec::new() }
    }

    /// These options admitting requests from `origins` too (besides loopback).
    pub fn with_allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> HttpOptions {
        self.allowed_origins = origins.into_iter().map(|o| normalize_origin(&o.into())).collect();
        self
    }
}

/// Where [`serve`] serves.
#[derive(Debug, Clone)]
pub enum Listen {
    /// MCP over stdin/stdout.
    Stdio,
    /// Streamable HTTP at `addr`, every request admitted as `auth` says.
    Http {
        /// The address to bind (`127.0.0.1:0` picks a port).
        addr: std::net::SocketAddr,
        /// Who may call.
        auth: HttpAuth,
        /// Origins admitted besides loopback ones.
        allowed_origins: Vec<String>,
    },
}

/// Who may call an HTTP server, as its flags say (DESIGN §13).
#[derive(Debug, Clone)]
pub enum HttpAuth {
    /// `--token-file`: a file holding the one shared bearer token;
    /// surrounding whitespace is ignored.
    TokenFile(std::path::PathBuf),
    /// `--oauth-issuer`, `--resource`, `--groups-claim`, `--jwks-file`.
    #[cfg(feature = "oauth")]
    OAuth(super::oauth::OAuthOptions),
}

impl HttpAuth {
    /// Read the token file, or find the issuer's keys: what an
    /// [`McpEndpoint`]'s [`HttpOptions`] take.
    pub async fn load(self) -> std::io::Result<Auth> {
        match self {
            HttpAuth::TokenFile(token_file) => {
                let token = std::fs::read_to_string(&token_file)
                    .map_err(|e| std::io::Error::other(format!("cannot read the token file `{}`: {e}", token_file.display())))?;
                let token = token.trim();
                if token.is_empty() {
                    return Err(std::io::Error::other(format!("the token file `{}` is empty", token_file.display())));
                }
                Ok(Auth::Token(token.to_string()))
            }
            #[cfg(feature = "oauth")]
            HttpAuth::OAuth(options) => Ok(Auth::OAuth(Arc::new(super::oauth::ResourceServer::discover(options).await.map_err(std::io::Error::other)?))),
        }
    }
}

/// Serve `host` as `listen` says until the client (stdio) or the process
/// ends. Over HTTP it prints `<who>: serving MCP at http://ADDR/mcp` on
/// stderr once it listens (tests and scripts read the port from it).
pub async fn serve(host: McpHost, listen: Listen, who: &str) -> std::io::Result<()> {
    serve_with(host, Vec::new(), listen, who).await
}

/// A named surface (DESIGN §10): its own host (its modules, capabilities
/// and mode), served beside [`MCP_PATH`] at `path` to the members of
/// `groups` (empty: everyone); anyone else gets 403.
#[derive(Clone)]
pub struct Named {
    /// Its name (`[surface.NAME]`).
    pub name: String,
    /// Where it is served (`/mcp/NAME` by default).
    pub path: String,
    /// What it serves.
    pub host: McpHost,
    /// Who may connect; empty: everyone.
    pub groups: Vec<String>,
}

/// [`serve`] with `named` surfaces beside `host` on the same HTTP server,
/// each admitting requests as `host`'s endpoint does and then only its
/// groups; it prints `<who>: serving surface NAME at URL` for each. On
/// stdio only `host` is served (a caller picks a surface by serving it).
pub async fn serve_with(host: McpHost, named: Vec<Named>, listen: Listen, who: &str) -> std::io::Result<()> {
    match listen {
        Listen::Stdio => serve_stdio(host).await,
        Listen::Http { addr, auth, allowed_origins } => {
            let auth = auth.load().await?;
            let listener = TcpListener::bind(addr).await.map_err(|e| std::io::Error::other(format!("cannot listen on {addr}: {e}")))?;
            let at = listener.local_addr()?;
            let options = HttpOptions::with_auth(auth).with_allowed_origins(allowed_origins);
            let mut endpoints = vec![McpEndpoint::new(host, options.clone())];
            for surface in named {
                eprintln!("{who}: serving surface {} at http://{at}{}", surface.name, surface.path);
                endpoints.push(McpEndpoint::new(surface.host, options.clone()).at(&surface.path).for_groups(surface.groups));
            }
            eprintln!("{who}: serving MCP at http://{at}{MCP_PATH}");
            serve_endpoints(endpoints, listener).await
        }
    }
}

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// Serve Streamable HTTP on `listener` until the task is dropped: each
/// connection is served on its own task; each MCP session gets a fresh
/// [`McpSession`](super::server::McpSession) and so its own approvals.
pub async fn serve_http(host: McpHost, listener: TcpListener, options: HttpOptions) -> std::io::Result<()> {
    serve_endpoints(vec![McpEndpoint::new(host, options)], listener).await
}

/// Serve `endpoints` on `listener`: a request goes to the endpoint at its
/// path (or whose protected resource metadata it asks for), else to the
/// first, which answers whatever is not another's.
pub async fn serve_endpoints(endpoints: Vec<McpEndpoint>, listener: TcpListener) -> std::io::Result<()> {
    let endpoints: Arc<[McpEndpoint]> = endpoints.into();
    loop {
        let (stream, _) = listener.accept().await?;
        // Small JSON-RPC replies go out at once, not after the peer's ACK.
        let _ = stream.set_nodelay(true);
        let endpoints = endpoints.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let path = request.uri().path();
                let chosen = endpoints.iter().skip(1).find(|e| path == e.path() || (path.starts_with("/.well-known/") && path.ends_with(e.path())));
                chosen.unwrap_or(&endpoints[0]).clone().respond(request)
            });
            // A connection that fails (the client went away) ends only itself.
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// The Streamable HTTP endpoint as a [`tower_service::Service`], for a host
/// that serves MCP inside its own HTTP app, beside its own routes: every
/// request is admitted as [`serve_http`] admits it (the Origin check, the
/// shared token or OAuth 2.1 with its metadata, the body limit, both
/// protocol revisions), then served by a session of `host`.
///
/// The endpoint answers at one path ([`MCP_PATH`] unless
/// [`McpEndpoint::at`] says otherwise) and, with OAuth, at the protected
/// resource metadata's well-known paths; the host routes those paths to it
/// without stripping them (with axum, `route_service`, or [`router`] behind
/// the feature `axum`). Any other path is a 404.
#[derive(Clone)]
pub struct McpEndpoint {
    mcp: StreamableHttpService<McpSession, LocalSessionManager>,
    admission: Arc<Admission>,
}

impl McpEndpoint {
    /// The endpoint of `host` at [`MCP_PATH`], admitting requests as `options` say.
    pub fn new(host: McpHost, options: HttpOptions) -> McpEndpoint {
        // The body limit is enforced (413) before rmcp sees the request.
        let config = StreamableHttpServerConfig::default()
            .with_max_request_body_bytes(options.max_body_bytes.saturating_add(1))
            .with_sse_keep_alive(None)
            .disable_allowed_hosts();
        let sessions = host.clone();
        let mcp = StreamableHttpService::new(move || Ok(sessions.session()), Arc::new(LocalSessionManager::default()), config);
        let admission = Arc::new(Admission {
            auth: options.auth,
            host,
            max_body: options.max_body_bytes,
            allowed_origins: options.allowed_origins.iter().map(|o| normalize_origin(o)).collect(),
            path: MCP_PATH.to_string(),
            groups: Vec::new(),
        });
        McpEndpoint { mcp, admission }
    }

    /// This endpoint open only to members of `groups` (a named surface's);
    /// anyone else, admitted or not, gets 403. Empty: everyone.
    pub fn for_groups(mut self, groups: Vec<String>) -> McpEndpoint {
        let mut admission = Admission::clone(&self.admission);
        admission.groups = groups;
        self.admission = Arc::new(admission);
        self
    }

    /// This endpoint answering at `path` (`/api/mcp`, say) instead of [`MCP_PATH`].
    pub fn at(mut self, path: &str) -> McpEndpoint {
        let mut admission = Admission::clone(&self.admission);
        admission.path = path.to_string();
        self.admission = Arc::new(admission);
        self
    }

    /// The path it answers at.
    pub fn path(&self) -> &str {
        &self.admission.path
    }

    /// Answer one request.
    async fn respond<B>(self, request: Request<B>) -> Result<Response<Body>, Infallible>
    where
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: std::fmt::Display,
    {
        let mut mcp = self.mcp;
        Ok(admit(&mut mcp, &self.admission, request).await)
    }
}

impl<B> tower_service::Service<Request<B>> for McpEndpoint
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        Box::pin(self.clone().respond(request))
    }
}

/// An `axum::Router` serving `endpoint` at its path and, with OAuth, the
/// protected resource metadata at its well-known paths: merge it into the
/// host's app (`Router::new().route("/health", …).merge(router(endpoint))`).
#[cfg(feature = "axum")]
pub fn router<S: Clone + Send + Sync + 'static>(endpoint: McpEndpoint) -> axum::Router<S> {
    let path = endpoint.path().to_string();
    let router = axum::Router::new().route_service(&path, endpoint.clone());
    #[cfg(feature = "oauth")]
    let router = if matches!(endpoint.admission.auth, Auth::OAuth(_)) {
        router
            .route_service(super::oauth::METADATA_PATH, endpoint.clone())
            .route_service(&format!("{}{path}", super::oauth::METADATA_PATH), endpoint.clone())
    } else {
        router
    };
    #[cfg(feature = "oauth")]
    let router = match endpoint.admission.host.pages.as_ref().map(|p| p.paths()) {
        Some(paths) => paths.iter().fold(router, |router, path| router.route_service(path, endpoint.clone())),
        None => router,
    };
    router
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// What every request is checked against before rmcp sees it.
#[derive(Clone)]
struct Admission {
    auth: Auth,
    /// The tools' categories, for a token's scopes.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    host: McpHost,
    max_body: usize,
    /// Normalized (see [`normalize_origin`]).
    allowed_origins: Vec<String>,
    /// The MCP endpoint's path.
    path: String,
    /// Who may connect (a named surface's groups); empty: everyone.
    groups: Vec<String>,
}

/// Check the origin, the path, the token, the body's size and that it is
/// JSON-RPC, then hand the request to rmcp.
async fn admit<S, B>(mcp: &mut S, admission: &Admission, request: Request<B>) -> Response<Body>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Body>, Error = Infallible>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    let max_body = admission.max_body;
    #[cfg(feature = "oauth")]
    if let Auth::OAuth(server) = &admission.auth {
        let path = request.uri().path();
        if request.method() == http::Method::GET && (path == super::oauth::METADATA_PATH || path.strip_prefix(super::oauth::METADATA_PATH) == Some(admission.path.as_str())) {
            // Public, and read by browser-based clients: any origin.
            let mut response = Response::new(Full::new(Bytes::from(server.metadata().to_string())).boxed());
            response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
            response.headers_mut().insert(http::header::ACCESS_CONTROL_ALLOW_ORIGIN, http::HeaderValue::from_static("*"));
            return response;
        }
        // A `per-user` upstream's browser step (DESIGN §12): a person's
        // browser, sent here from another site; the ticket and the sealed
        // states are what admit it, not the Origin.
        if let Some(pages) = admission.host.pages.as_ref().filter(|p| p.paths().contains(&path)) {
            if request.method() != http::Method::GET {
                return plain(StatusCode::METHOD_NOT_ALLOWED, "the browser step takes GET");
            }
            let target = request.uri().path_and_query().map_or(path, |p| p.as_str()).to_string();
            let page = pages.page(&target, server).await;
            let mut response = plain(StatusCode::from_u16(page.status).unwrap_or(StatusCode::BAD_GATEWAY), &page.text);
            if let Some(location) = page.location.and_then(|l| http::HeaderValue::from_str(&l).ok()) {
                response.headers_mut().insert(http::header::LOCATION, location);
            }
            // Pages with tickets and codes in their address are not kept.
            response.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
            response.headers_mut().insert(http::header::REFERRER_POLICY, http::HeaderValue::from_static("no-referrer"));
            return response;
        }
    }
    if !origin_admitted(request.headers(), &admission.allowed_origins) {
        return plain(
            StatusCode::FORBIDDEN,
            "forbidden: the request's Origin (or Host) is neither loopback nor an origin the server allows (--allowed-origin)",
        );
    }
    if request.uri().path() != admission.path {
        return plain(StatusCode::NOT_FOUND, &format!("not found: the MCP endpoint is {}", admission.path));
    }
    let authorization = request.headers().get(http::header::AUTHORIZATION).map(|v| v.as_bytes());
    // Who calls (DESIGN §13): the holder of the shared token, or the
    // subject of an access token.
    let principal = match &admission.auth {
        Auth::Token(token) => {
            if !authorization.and_then(|v| v.strip_prefix(b"Bearer ")).is_some_and(|v| constant_time_eq(v, token.as_bytes())) {
                let mut response = plain(StatusCode::UNAUTHORIZED, "unauthorized: send `Authorization: Bearer <token>` with the server's token");
                response.headers_mut().insert(http::header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Bearer"));
                return response;
            }
            crate::principal::Principal::token()
        }
        #[cfg(feature = "oauth")]
        Auth::OAuth(server) => match server.admit(authorization).await {
            Ok(principal) => principal,
            Err(refusal) => return oauth_refusal(server, &refusal),
        },
    };
    // A named surface is open only to its groups (DESIGN §10).
    if !admission.groups.is_empty() && !principal.groups().iter().any(|g| admission.groups.contains(g)) {
        return plain(StatusCode::FORBIDDEN, &format!("forbidden: the surface at {} is not open to the caller's groups", admission.path));
    }
    let (mut parts, body) = request.into_parts();
    let bytes = match read_body(body, max_body).await {
        Ok(bytes) => bytes,
        Err(BodyProblem::TooLarge) => {
            let mut response = plain(StatusCode::PAYLOAD_TOO_LARGE, &format!("payload too large: a request body may have at most {max_body} bytes"));
            response.headers_mut().insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
            return response;
        }
        Err(BodyProblem::Unreadable(e)) => return plain(StatusCode::BAD_REQUEST, &format!("the request body could not be read: {e}")),
    };
    if parts.method == http::Method::POST {
        #[cfg(feature = "oauth")]
        let step_up = matches!(admission.auth, Auth::OAuth(_));
        #[cfg(not(feature = "oauth"))]
        let step_up = false;
        let message = match super::envelope::json_rpc(&bytes, step_up) {
            Ok(message) => message,
            Err((code, message)) => {
                let error = serde_json::json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
                let mut response = Response::new(Full::new(Bytes::from(error.to_string())).boxed());
                *response.status_mut() = StatusCode::BAD_REQUEST;
                response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
                return response;
            }
        };
        // MCP's step-up: a tool whose category the token's scopes lack is a
        // 403 naming the scope, before anything runs.
        #[cfg(feature = "oauth")]
        if let Auth::OAuth(server) = &admission.auth {
            if let Some(category) = lacking_scope(&admission.host, &principal, &message) {
                return insufficient_scope(server, category);
            }
        }
        #[cfg(not(feature = "oauth"))]
        let _ = message;
    }
    parts.extensions.insert(principal);
    let ends_session = parts.method == http::Method::DELETE;
    match mcp.call(Request::from_parts(parts, Full::new(bytes))).await {
        // A session's end (DESIGN §10) answers 200: rmcp's service says 202,
        // which the official Python client takes for a failed termination.
        Ok(mut response) if ends_session && response.status() == StatusCode::ACCEPTED => {
            *response.status_mut() = StatusCode::OK;
            response
        }
        Ok(response) => response,
        Err(never) => match never {},
    }
}

enum BodyProblem {
    TooLarge,
    Unreadable(String),
}

/// How much of an oversized body is read and dropped before answering 413,
/// so a client still sending gets the answer instead of a broken pipe.
const DRAIN_LIMIT: usize = 16 * 1024 * 1024;

/// The whole body when it has at most `max` bytes. An oversized body is
/// read on (and dropped) up to [`DRAIN_LIMIT`] more bytes, then refused.
async fn read_body<B>(body: B, max: usize) -> Result<Bytes, BodyProblem>
where
    B: http_body::Body,
    B::Error: std::fmt::Display,
{
    let mut body = std::pin::pin!(body);
    // A body that comes in one frame (most) is kept as it came, uncopied.
    let mut first: Option<Bytes> = None;
    let mut kept = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyProblem::Unreadable(e.to_string()))?;
        let Ok(mut data) = frame.into_data() else { continue };
        let len = bytes::Buf::remaining(&data);
        seen = seen.saturating_add(len);
        if seen > max.saturating_add(DRAIN_LIMIT) {
            break;
        }
        if seen <= max {
            let data = bytes::Buf::copy_to_bytes(&mut data, len);
            if first.is_none() && kept.is_empty() {
                first = Some(data);
            } else {
                kept.extend_from_slice(&first.take().unwrap_or_default());
                kept.extend_from_slice(&data);
            }
        }
    }
    match first {
        _ if seen > max => Err(BodyProblem::TooLarge),
        Some(whole) => Ok(whole),
        None => Ok(Bytes::from(kept)),
    }
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// The first category a message (or batch) calls a tool of that the
/// principal's scopes lack.
#[cfg(feature = "oauth")]
fn lacking_scope(host: &McpHost, principal: &crate::principal::Principal, messages: &super::envelope::Messages<'_>) -> Option<crate::spec::Category> {
    messages.iter().filter_map(|m| m.tool_called()).find_map(|name| host.tool_category(name).filter(|c| !principal.scopes().allows(*c)))
}

/// 401: no token, or one this server does not accept.
#[cfg(feature = "oauth")]
fn oauth_refusal(server: &super::oauth::ResourceServer, refusal: &super::oauth::Refusal) -> Response<Body> {
    use super::oauth::Refusal;
    let read = crate::spec::Category::Read.scope();
    let (text, challenge) = match refusal {
        Refusal::Missing => (
            "unauthorized: send `Authorization: Bearer <access token>` from the issuer this server's metadata names".to_string(),
            format!("Bearer resource_metadata=\"{}\", scope=\"{read}\"", server.metadata_url()),
        ),
        Refusal::Invalid(why) => (
            format!("unauthorized: {why}"),
            format!("Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{}\", scope=\"{read}\"", quoted(why), server.metadata_url()),
        ),
    };
    challenged(plain(StatusCode::UNAUTHORIZED, &text), &challenge)
}

/// 403: the token's scopes lack `category`'s.
#[cfg(feature = "oauth")]
fn insufficient_scope(server: &super::oauth::ResourceServer, category: crate::spec::Category) -> Response<Body> {
    let scope = category.scope();
    let response = plain(StatusCode::FORBIDDEN, &format!("forbidden: calling a {category} capability takes the scope `{scope}`; authorize again with it"));
    challenged(response, &format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{}\"", server.metadata_url()))
}

/// `response` with `challenge` as its `WWW-Authenticate`.
#[cfg(feature = "oauth")]
fn challenged(mut response: Response<Body>, challenge: &str) -> Response<Body> {
    if let Ok(value) = http::HeaderValue::from_str(challenge) {
        response.headers_mut().insert(http::header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Text fit for a quoted header parameter: printable ASCII without `"` or `\`.
#[cfg(feature = "oauth")]
fn quoted(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '\'' }).collect()
}

/// Equal bytes, compared without an early exit (the token is a secret).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_compare_whole() {
        assert!(super::constant_time_eq(b"Bearer abc", b"Bearer abc"));
        assert!(!super::constant_time_eq(b"Bearer abd", b"Bearer abc"));
        assert!(!super::constant_time_eq(b"Bearer ab", b"Bearer abc"));
    }
}
