//! The same read tool called through rmcp's tool router and through
//! capspec's `invoke`, side by side, with the same arguments. Both include
//! argument decoding; `invoke` also coerces, validates against the schema,
//! consults the gate and records a receipt. Then `tools/call` round trips
//! through a real rmcp client (the servers are in `lib.rs`).

use capspec::{Gate, Mode, Run};
use capspec_benches::registry;
use capspec_rmcp_compare::{NotesServer, PeekMetaServer, PeekServer, StoredRouterServer, capspec_session, connect, receipt_meta};
use rmcp::model::{CallToolRequestParams, NumberOrString};
use rmcp::service::RequestContext;
use rmcp::{ServerHandler, ServiceExt};
use serde_json::json;

fn main() {
    divan::main();
}

#[divan::bench]
fn rmcp_tool_router(bencher: divan::Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let server = NotesServer::default();
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
/// same `peek` tool behind plain rmcp servers (answering with the same
/// result shape, one tool each) and behind capspec's MCP server (tools
/// surface), which also validates, gates, records a receipt and returns it
/// in the result's `_meta`.
///
/// Two runtimes: `current_thread` runs client and server on one thread, so
/// the figure is the work both sides do; `multi_thread` (two workers, as a
/// server runs) adds cross-thread wake-ups, which on a small shared machine
/// dominate and make the distribution bimodal.
///
/// `CAPSPEC_BENCH_RUNTIME=current_thread` keeps one of them (divan filters
/// benchmarks, not their arguments): what a callgrind count of the round
/// trip runs under.
fn runtimes() -> Vec<&'static str> {
    let only = std::env::var("CAPSPEC_BENCH_RUNTIME").ok();
    ["current_thread", "multi_thread"].into_iter().filter(|r| only.as_deref().is_none_or(|only| only == *r)).collect()
}

fn round_trip<S: ServerHandler>(bencher: divan::Bencher, runtime: &str, server: S) {
    let rt = match runtime {
        "current_thread" => tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap(),
        _ => tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap(),
    };
    let client = rt.block_on(connect(server));
    let args = json!({"note_id": "n1"}).as_object().cloned().unwrap();
    bencher.bench_local(|| {
        rt.block_on(async {
            let result = client.call_tool(CallToolRequestParams::new("peek").with_arguments(args.clone())).await.expect("a result");
            assert_ne!(result.is_error, Some(true));
            result
        })
    });
}

/// rmcp as its documentation writes a server (the router built per call).
#[divan::bench(args = runtimes())]
fn round_trip_rmcp_tool_router(bencher: divan::Bencher, runtime: &str) {
    round_trip(bencher, runtime, PeekServer);
}

/// The same, plus capspec's receipt in `_meta`.
#[divan::bench(args = runtimes())]
fn round_trip_rmcp_tool_router_with_meta(bencher: divan::Bencher, runtime: &str) {
    round_trip(bencher, runtime, PeekMetaServer);
}

/// rmcp keeping its router.
#[divan::bench(args = runtimes())]
fn round_trip_rmcp_stored_router(bencher: divan::Bencher, runtime: &str) {
    round_trip(bencher, runtime, StoredRouterServer::default());
}

#[divan::bench(args = runtimes())]
fn round_trip_capspec_mcp(bencher: divan::Bencher, runtime: &str) {
    round_trip(bencher, runtime, capspec_session());
}

/// What rmcp's client spends decoding one `tools/call` response (the
/// JSON-RPC message as it arrives) without `_meta`, with an empty `_meta`,
/// and with capspec's receipt. rmcp's `ServerResult` is an untagged enum:
/// the client tries its variants in order, and each one before
/// `CallToolResult` that has a `_meta` field decodes the object again.
const RESPONSE_META: [&str; 3] = ["none", "empty", "capspec receipt"];

#[divan::bench(args = RESPONSE_META)]
fn client_decode(bencher: divan::Bencher, meta: &str) {
    let meta = match meta {
        "none" => String::new(),
        "empty" => r#","_meta":{}"#.to_string(),
        _ => format!(r#","_meta":{}"#, serde_json::to_string(&receipt_meta()).expect("JSON")),
    };
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{{\"result\":\"n1\"}}"}}],"structuredContent":{{"result":"n1"}},"isError":false{meta}}}}}"#
    );
    bencher.bench_local(|| serde_json::from_str::<rmcp::model::ServerJsonRpcMessage>(divan::black_box(&text)).expect("a response"));
}
