//! The loopback redirect of `auth login` (DESIGN §12, RFC 8252): the
//! listener's next `GET /callback?…`, and what a redirect without a code
//! says the authorization server refused.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The next request on the loopback listener: `GET /callback?QUERY` gives
/// the socket (to answer) and the query; anything else is answered 404.
pub(super) async fn callback(listener: &tokio::net::TcpListener) -> Option<(tokio::net::TcpStream, String)> {
    let (mut socket, _) = listener.accept().await.ok()?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_string();
    let target = line.strip_prefix("GET ").and_then(|rest| rest.split(' ').next()).unwrap_or_default();
    match target.strip_prefix("/callback?") {
        Some(query) => Some((socket, query.to_string())),
        None => {
            let _ = socket.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
            None
        }
    }
}

/// `error` and `error_description` of a redirect that carries no code.
pub(super) fn refusal(query: &str) -> Option<String> {
    let url = reqwest::Url::parse(&format!("http://127.0.0.1/callback?{query}")).ok()?;
    let field = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    let error = field("error")?;
    Some(match field("error_description") {
        Some(description) => format!("the authorization server refused: {error} ({description})"),
        None => format!("the authorization server refused: {error}"),
    })
}
