//! The bytes of each server's request-handler future, which rmcp moves
//! into a task of its own for every request (BENCHMARKS.md, "Instructions
//! per call, and the handler's future"):
//! `cargo run --release --manifest-path benches/rmcp/Cargo.toml --example future_sizes`.

use capspec::mcp::McpSession;
use capspec_rmcp_compare::PeekMetaServer;
use rmcp::model::{CallToolRequestParams, ClientRequest};
use rmcp::service::{RequestContext, Service};
use rmcp::{RoleServer, ServerHandler};

/// The size of the future `f` returns, from its type alone.
fn request<S, F: FnOnce(S, ClientRequest, RequestContext<RoleServer>) -> Fut, Fut>(_: F) -> usize {
    std::mem::size_of::<Fut>()
}

/// The same, for a `tools/call` handler.
fn call<S, F: FnOnce(S, CallToolRequestParams, RequestContext<RoleServer>) -> Fut, Fut>(_: F) -> usize {
    std::mem::size_of::<Fut>()
}

fn main() {
    println!("{:<34} {:>16} {:>12}", "server", "handle_request", "call_tool");
    println!(
        "{:<34} {:>14} B {:>10} B",
        "capspec (McpSession)",
        request(|s: McpSession, r, c| async move { s.handle_request(r, c).await }),
        call(|s: McpSession, r, c| async move { s.call_tool(r, c).await })
    );
    println!(
        "{:<34} {:>14} B {:>10} B",
        "rmcp #[tool_router] + receipt",
        request(|s: PeekMetaServer, r, c| async move { s.handle_request(r, c).await }),
        call(|s: PeekMetaServer, r, c| async move { s.call_tool(r, c).await })
    );
}
