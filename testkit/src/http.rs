//! A raw HTTP/1.1 exchange with a served `/mcp` endpoint, for tests that
//! need what an SDK client hides: the status, the headers, a bearer of
//! their choosing, a connection per request.

use std::io::{Read, Write};
use std::net::TcpStream;

use serde_json::Value;

/// One POST of `message` to `/mcp` at `addr` on a connection of its own,
/// with `headers` (`Name: value`) besides the content types: the response's
/// status, its head (lower-cased), and its JSON-RPC message, from the body
/// or the SSE event carrying it (`Null` when it has none).
pub fn post_mcp(addr: &str, headers: &[String], message: &Value) -> (u16, String, Value) {
    let body = message.to_string();
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n");
    for header in headers {
        head.push_str(&format!("{header}\r\n"));
    }
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
    stream.write_all(format!("{head}Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    // Chunk sizes are lines of their own; the message is the line that parses.
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no HTTP response: {raw}"));
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status in {head}"));
    let json = body.lines().map(|l| l.strip_prefix("data:").unwrap_or(l).trim()).find_map(|l| serde_json::from_str::<Value>(l).ok().filter(|v| v.get("id").is_some()));
    (status, head.to_ascii_lowercase(), json.unwrap_or(Value::Null))
}

/// The `params` `_meta` of a stateless (2026-07-28) request.
pub fn stateless_meta(client: &str) -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
    })
}

/// One stateless (2026-07-28) `tools/call` of `tool` with `arguments`, as
/// `bearer`, on a connection of its own: the status and the JSON-RPC response.
pub fn call_stateless(addr: &str, bearer: &str, tool: &str, arguments: Value) -> (u16, Value) {
    let message = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments, "_meta": stateless_meta("capspec-tests")}});
    let headers = [format!("Authorization: Bearer {bearer}"), "MCP-Protocol-Version: 2026-07-28".into(), "Mcp-Method: tools/call".into(), format!("Mcp-Name: {tool}")];
    let (status, _, response) = post_mcp(addr, &headers, &message);
    (status, response)
}
