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

use super::server::McpHost;

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
/// [`McpSession`](super::server::McpSession) and so its own approvals.
pub async fn serve_http(host: McpHost, listener: TcpListener, options: HttpOptions) -> std::io::Result<()> {
    // The body limit is enforced (413) before rmcp sees the request.
    let config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(options.max_body_bytes.saturating_add(1))
        .with_sse_keep_alive(None)
        .disable_allowed_hosts();
    let sessions = host.clone();
    let mcp = StreamableHttpService::new(move || Ok(sessions.session()), Arc::new(LocalSessionManager::default()), config);
    let token: Arc<str> = Arc::from(format!("Bearer {}", options.token));
    let max_body = options.max_body_bytes;
    loop {
        let (stream, _) = listener.accept().await?;
        let mcp = mcp.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let mut mcp = mcp.clone();
                let token = token.clone();
                async move { Ok::<_, Infallible>(admit(&mut mcp, &token, max_body, request).await) }
            });
            // A connection that fails (the client went away) ends only itself.
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// Check the path, the token, the body's size and that it is JSON-RPC,
/// then hand the request to rmcp.
async fn admit<S>(mcp: &mut S, token: &str, max_body: usize, request: Request<Incoming>) -> Response<Body>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Body>, Error = Infallible>,
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
    let (parts, body) = request.into_parts();
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
        if let Err((code, message)) = json_rpc_problem(&bytes) {
            let error = serde_json::json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
            let mut response = Response::new(Full::new(Bytes::from(error.to_string())).boxed());
            *response.status_mut() = StatusCode::BAD_REQUEST;
            response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
            return response;
        }
    }
    match mcp.call(Request::from_parts(parts, Full::new(bytes))).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

enum BodyProblem {
    TooLarge,
    Unreadable(hyper::Error),
}

/// How much of an oversized body is read and dropped before answering 413,
/// so a client still sending gets the answer instead of a broken pipe.
const DRAIN_LIMIT: usize = 16 * 1024 * 1024;

/// The whole body when it has at most `max` bytes. An oversized body is
/// read on (and dropped) up to [`DRAIN_LIMIT`] more bytes, then refused.
async fn read_body(mut body: Incoming, max: usize) -> Result<Bytes, BodyProblem> {
    let mut kept = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(BodyProblem::Unreadable)?;
        let Ok(data) = frame.into_data() else { continue };
        seen = seen.saturating_add(data.len());
        if seen > max.saturating_add(DRAIN_LIMIT) {
            break;
        }
        if seen <= max {
            kept.extend_from_slice(&data);
        }
    }
    if seen > max { Err(BodyProblem::TooLarge) } else { Ok(Bytes::from(kept)) }
}

/// Why a POST body is not a JSON-RPC message: a parse error (-32700) or an
/// invalid request (-32600), with a message saying what was wrong.
fn json_rpc_problem(body: &[u8]) -> Result<(), (i64, String)> {
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| (-32700, format!("Parse error: the body is not JSON ({e})")))?;
    let is_message = |v: &serde_json::Value| v.get("jsonrpc").and_then(|j| j.as_str()) == Some("2.0");
    let valid = match &value {
        serde_json::Value::Object(_) => is_message(&value),
        serde_json::Value::Array(batch) => !batch.is_empty() && batch.iter().all(is_message),
        _ => false,
    };
    if valid { Ok(()) } else { Err((-32600, "Invalid Request: a JSON-RPC 2.0 message is an object with \"jsonrpc\": \"2.0\"".to_string())) }
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

    #[test]
    fn only_json_rpc_messages_pass() {
        assert_eq!(super::json_rpc_problem(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Ok(()));
        assert_eq!(super::json_rpc_problem(b"{ nope").unwrap_err().0, -32700);
        assert_eq!(super::json_rpc_problem(br#"{"id":1}"#).unwrap_err().0, -32600);
        assert_eq!(super::json_rpc_problem(b"[]").unwrap_err().0, -32600);
        assert_eq!(super::json_rpc_problem(b"42").unwrap_err().0, -32600);
    }
}
