//! Serving sessions: stdio (one session, the process's) and Streamable HTTP
//! at `/mcp` (a session per client, each behind the bearer token).

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

use super::McpHost;

/// Serve one session over stdin/stdout until the client closes it.
pub async fn serve_stdio(host: McpHost) -> std::io::Result<()> {
    let running = host.session().serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// How the HTTP transport admits requests.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Every request must carry `Authorization: Bearer <token>`; any other
    /// request is refused with 401 and gets no session.
    pub token: String,
    /// A request body over this many bytes is refused with 413.
    pub max_body_bytes: usize,
}

impl HttpOptions {
    /// The body limit unless set otherwise: 4 MiB.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

    /// Options admitting requests that carry `token`, with the default body limit.
    pub fn new(token: impl Into<String>) -> HttpOptions {
        HttpOptions { token: token.into(), max_body_bytes: HttpOptions::DEFAULT_MAX_BODY_BYTES }
    }
}

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// Serve Streamable HTTP on `listener` until the task is dropped: each
/// connection is served on its own task; each MCP session gets a fresh
/// [`McpSession`](super::McpSession) and so its own approvals.
pub async fn serve_http(host: McpHost, listener: TcpListener, options: HttpOptions) -> std::io::Result<()> {
    let config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_sse_keep_alive(None)
        .disable_allowed_hosts();
    let sessions = host.clone();
    let mcp = StreamableHttpService::new(move || Ok(sessions.session()), Arc::new(LocalSessionManager::default()), config);
    let token: Arc<str> = Arc::from(format!("Bearer {}", options.token));
    loop {
        let (stream, _) = listener.accept().await?;
        let mcp = mcp.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let mut mcp = mcp.clone();
                let token = token.clone();
                async move { Ok::<_, Infallible>(admit(&mut mcp, &token, request).await) }
            });
            // A connection that fails (the client went away) ends only itself.
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// Check the path and the token, then hand the request to rmcp.
async fn admit<S>(mcp: &mut S, token: &str, request: Request<Incoming>) -> Response<Body>
where
    S: tower_service::Service<Request<Incoming>, Response = Response<Body>, Error = Infallible>,
{
    if request.uri().path() != MCP_PATH {
        return plain(StatusCode::NOT_FOUND, &format!("not found: the MCP endpoint is {MCP_PATH}"));
    }
    let authorized = request.headers().get(http::header::AUTHORIZATION).is_some_and(|v| constant_time_eq(v.as_bytes(), token.as_bytes()));
    if !authorized {
        let mut response = plain(StatusCode::UNAUTHORIZED, "unauthorized: send `Authorization: Bearer <token>` with the server's token");
        response.headers_mut().insert(http::header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Bearer"));
        return response;
    }
    match mcp.call(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
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
