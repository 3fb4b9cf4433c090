//! The servers the comparison runs (`benches/rmcp.rs`, `benches/interleaved.rs`):
//! the same read tool, `peek`, behind plain rmcp servers and behind
//! capspec's MCP server, each reached by a real rmcp client over an
//! in-memory pipe.

use capspec::{Mode, Run};
use capspec_benches::registry;
use rmcp::handler::server::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, MetaObject};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct PeekArgs {
    pub note_id: String,
    pub max_lines: Option<i64>,
}

/// `peek`'s value the way capspec's MCP server answers: structured content
/// (wrapped, as the value is not an object), repeated as text.
fn peek_result(args: PeekArgs) -> CallToolResult {
    let _ = args.max_lines;
    CallToolResult::structured(json!({ "result": args.note_id }))
}

/// The router the invoke-level comparison calls directly: `peek` answering
/// the bare string.
#[derive(Clone)]
pub struct NotesServer {
    pub tool_router: ToolRouter<NotesServer>,
}

#[tool_router(server_handler)]
impl NotesServer {
    #[tool(name = "peek", description = "Read a note by id.")]
    async fn peek(&self, Parameters(args): Parameters<PeekArgs>) -> String {
        let _ = args.max_lines;
        args.note_id
    }
}

/// With its router built.
impl Default for NotesServer {
    fn default() -> NotesServer {
        NotesServer { tool_router: NotesServer::tool_router() }
    }
}

/// The round trips' baseline: a plain rmcp server with the one tool, as
/// rmcp's documentation writes it. `#[tool_router(server_handler)]`
/// generates a handler that builds the router (`Self::tool_router()`) on
/// every call, so a server's per-call cost grows with its tool count; each
/// server here has exactly one tool.
#[derive(Clone, Default)]
pub struct PeekServer;

#[tool_router(server_handler)]
impl PeekServer {
    #[tool(name = "peek", description = "Read a note by id.")]
    async fn peek(&self, Parameters(args): Parameters<PeekArgs>) -> CallToolResult {
        peek_result(args)
    }
}

/// [`PeekServer`] plus a receipt in `_meta`, as capspec returns it: what the
/// receipt costs rmcp's client, without capspec.
#[derive(Clone, Default)]
pub struct PeekMetaServer;

#[tool_router(server_handler)]
impl PeekMetaServer {
    #[tool(name = "peek", description = "Read a note by id.")]
    async fn peek(&self, Parameters(args): Parameters<PeekArgs>) -> CallToolResult {
        peek_result(args).with_meta(Some(receipt_meta()))
    }
}

/// A `_meta` as capspec returns it for one read call.
pub fn receipt_meta() -> MetaObject {
    let receipt = json!([{ "principal": "local", "capability": "canary.peek", "decision": "auto", "status": "ok", "ms": 0.013 }]);
    MetaObject(serde_json::Map::from_iter([("io.capspec/receipts".to_string(), receipt)]))
}

/// [`PeekServer`] building its router once and keeping it
/// (`#[tool_handler(router = self.tool_router)]`): rmcp at its fastest.
#[derive(Clone)]
pub struct StoredRouterServer {
    tool_router: ToolRouter<StoredRouterServer>,
}

#[tool_router]
impl StoredRouterServer {
    #[tool(name = "peek", description = "Read a note by id.")]
    async fn peek(&self, Parameters(args): Parameters<PeekArgs>) -> CallToolResult {
        peek_result(args)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for StoredRouterServer {}

/// With its router built.
impl Default for StoredRouterServer {
    fn default() -> StoredRouterServer {
        StoredRouterServer { tool_router: StoredRouterServer::tool_router() }
    }
}

/// capspec's MCP server on the tools surface, over the bench registry
/// (where `peek` is a read capability), gating in default mode.
pub fn capspec_host() -> capspec::mcp::McpHost {
    capspec::mcp::McpHost::tools_surface(registry().mount_all(), Mode::Default)
        .prepare_run(|gate| Run::new(gate).with_limits(capspec::Limits { max_calls: u32::MAX }))
}

/// One session of [`capspec_host`].
pub fn capspec_session() -> capspec::mcp::McpSession {
    capspec_host().session()
}

/// Serve `server` on one end of an in-memory pipe (a task on the current
/// runtime) and connect rmcp's client to the other.
pub async fn connect<S: ServerHandler>(server: S) -> RunningService<RoleClient, ()> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_io).await.expect("server starts");
        let _ = running.waiting().await;
    });
    ().serve(client_io).await.expect("client connects")
}
