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
