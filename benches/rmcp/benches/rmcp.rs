//! The same read tool called through rmcp's tool router and through
//! capspec's `invoke`, side by side, with the same arguments. Both include
//! argument decoding; `invoke` also coerces, validates against the schema,
//! consults the gate and records a receipt.

use capspec::{Gate, Mode, Run};
use capspec_benches::registry;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, NumberOrString};
use rmcp::service::RequestContext;
use rmcp::{ServiceExt, schemars, tool, tool_router};
use serde_json::json;

fn main() {
    divan::main();
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PeekArgs {
    note_id: String,
    max_lines: Option<i64>,
}

#[derive(Clone)]
struct NotesServer {
    tool_router: rmcp::handler::server::tool::ToolRouter<NotesServer>,
}

#[tool_router(server_handler)]
impl NotesServer {
    #[tool(name = "peek", description = "Read a note by id.")]
    async fn peek(&self, Parameters(args): Parameters<PeekArgs>) -> String {
        let _ = args.max_lines;
        args.note_id
    }

    /// `peek` answering the way capspec's MCP server does: the value as
    /// structured content (wrapped, as it is not an object), repeated as text.
    #[tool(name = "peek_structured", description = "Read a note by id.")]
    async fn peek_structured(&self, Parameters(args): Parameters<PeekArgs>) -> rmcp::model::CallToolResult {
        let _ = args.max_lines;
        rmcp::model::CallToolResult::structured(json!({ "result": args.note_id }))
    }

    /// `peek_structured` plus a receipt in `_meta`, as capspec returns it:
    /// what the receipt costs rmcp's client to decode, without capspec.
    #[tool(name = "peek_meta", description = "Read a note by id.")]
    async fn peek_meta(&self, Parameters(args): Parameters<PeekArgs>) -> rmcp::model::CallToolResult {
        let receipt = json!([{ "capability": "notes.peek", "decision": "auto", "status": "ok", "ms": 0.012 }]);
        let meta = rmcp::model::MetaObject(serde_json::Map::from_iter([("io.capspec/receipts".to_string(), receipt)]));
        rmcp::model::CallToolResult::structured(json!({ "result": args.note_id })).with_meta(Some(meta))
    }
}

#[divan::bench]
fn rmcp_tool_router(bencher: divan::Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let server = NotesServer { tool_router: NotesServer::tool_router() };
    // A real server peer, over an in-memory pipe with a real client.
    let peer = rt.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        let serving = tokio::spawn(server.clone().serve(server_io));
        let client = ().serve(client_io).await.expect("client connects");
        let running = serving.await.expect("task").expect("server starts");
        let peer = running.peer().clone();
        std::mem::forget(client);
        std::mem::forget(running);
        peer
    });
    let args = json!({"note_id": "n1"}).as_object().cloned();
    bencher.bench_local(|| {
        rt.block_on(async {
            let params = CallToolRequestParams::new("peek").with_arguments(args.clone().unwrap());
            let context = RequestContext::new(NumberOrString::Number(1), peer.clone());
            let call = rmcp::handler::server::tool::ToolCallContext::new(&server, params, context);
            server.tool_router.call(call).await.expect("tool runs")
        })
    });
}

#[divan::bench]
fn capspec_invoke(bencher: divan::Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mounted = registry().mount_all();
    let run = Run::new(Gate::headless(Mode::Default, "bench")).with_limits(capspec::Limits { max_calls: u32::MAX });
    bencher.bench_local(|| rt.block_on(mounted.invoke(&run, "peek", json!({"note_id": "n1"}))));
}

/// `tools/call` round trips over an in-memory pipe with rmcp's client: the
/// same `peek` tool behind a plain `#[tool_router]` server (answering with
/// the same result shape, `peek_structured`) and behind capspec's MCP server
/// (tools surface), which also validates, gates, records a receipt and
/// returns it in the result's `_meta`.
///
/// Two runtimes: `current_thread` runs client and server on one thread, so
/// the figure is the work both sides do; `multi_thread` (two workers, as a
/// server runs) adds cross-thread wake-ups, which on a small shared machine
/// dominate and make the distribution bimodal.
const RUNTIMES: [&str; 2] = ["current_thread", "multi_thread"];

fn round_trip<S: rmcp::ServerHandler>(bencher: divan::Bencher, runtime: &str, server: S, tool: &'static str) {
    let rt = match runtime {
        "current_thread" => tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap(),
        _ => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap(),
    };
    let client = rt.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            let running = server.serve(server_io).await.expect("server starts");
            let _ = running.waiting().await;
        });
        ().serve(client_io).await.expect("client connects")
    });
    let args = json!({"note_id": "n1"}).as_object().cloned().unwrap();
    bencher.bench_local(|| {
        rt.block_on(async {
            let result = client.call_tool(CallToolRequestParams::new(tool).with_arguments(args.clone())).await.expect("a result");
            assert_ne!(result.is_error, Some(true));
            result
        })
    });
}

#[divan::bench(args = RUNTIMES)]
fn round_trip_rmcp_tool_router(bencher: divan::Bencher, runtime: &str) {
    round_trip(bencher, runtime, NotesServer { tool_router: NotesServer::tool_router() }, "peek_structured");
}

#[divan::bench(args = RUNTIMES)]
fn round_trip_rmcp_tool_router_with_meta(bencher: divan::Bencher, runtime: &str) {
    round_trip(bencher, runtime, NotesServer { tool_router: NotesServer::tool_router() }, "peek_meta");
}

#[divan::bench(args = RUNTIMES)]
fn round_trip_capspec_mcp(bencher: divan::Bencher, runtime: &str) {
    let host = capspec::mcp::McpHost::new(capspec::guest::Guest::new(registry().mount_all()), capspec::mcp::Surface::Tools, Mode::Default)
        .prepare_run(|gate| Run::new(gate).with_limits(capspec::Limits { max_calls: u32::MAX }));
    round_trip(bencher, runtime, host.session(), "peek");
}
