//! What one plain `tools/call` costs the server, counted in allocations:
//! a guard that fails at the commit that makes a call dearer, not a
//! benchmark run later (BENCHMARKS.md, "Serving as fast as rmcp").
//!
//! The server runs on a thread of its own (a current-thread runtime) and
//! only that thread's allocations are counted; the client, a keep-alive
//! HTTP/1.1 connection written by hand, runs on the test's thread. Every
//! feature agent-host compiles in is there (OAuth, per-user upstreams,
//! the audit sink, OTLP, policies) and none is configured: what a call
//! pays for them is what this counts. Allocation counts, unlike times, do
//! not move with the machine's load.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_host::workspace::Workspace;
use capspec::Mode;
use capspec::mcp::{HttpOptions, McpHost};
use capspec_testkit::TempDir;
use serde_json::{Value, json};

/// Allocations per plain `tools/call` when this was last set, per revision.
/// A change that adds more than 5 % fails here; one that saves more than
/// 5 % fails too, so that the figure is lowered and stays a tight guard.
/// Change a figure only with the reason, measured, in BENCHMARKS.md.
const BASELINE: [(&str, f64); 2] = [("2025-11-25", 192.0), ("2026-07-28", 300.0)];

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTED.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One keep-alive connection to `/mcp`.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
}

impl Connection {
    fn open(addr: &str) -> Connection {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        Connection { reader: BufReader::new(stream.try_clone().expect("clone")), writer: stream, host: addr.to_string() }
    }

    /// POST `message` with `headers`: the status, the lower-cased head, and
    /// the JSON-RPC message of the body (JSON, or the SSE event carrying it).
    fn post(&mut self, headers: &[String], message: &Value) -> (u16, String, Value) {
        let body = message.to_string();
        let mut request = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer t0ken\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", self.host);
        for header in headers {
            request.push_str(header);
            request.push_str("\r\n");
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        self.writer.write_all(request.as_bytes()).expect("send");
        let mut head = String::new();
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("a response head");
            if line == "\r\n" || line.is_empty() {
                break;
            }
            head.push_str(&line.to_ascii_lowercase());
        }
        let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status in {head}"));
        let mut body = Vec::new();
        if head.contains("transfer-encoding: chunked") {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).expect("a chunk size");
                let size = usize::from_str_radix(size.trim(), 16).unwrap_or_else(|_| panic!("chunk size {size:?}"));
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).expect("a chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            let length = head.lines().find_map(|l| l.strip_prefix("content-length:")).map_or(0, |n| n.trim().parse().expect("a length"));
            body.resize(length, 0);
            self.reader.read_exact(&mut body).expect("a body");
        }
        let text = String::from_utf8(body).expect("UTF-8");
        let json = text.lines().map(|l| l.strip_prefix("data:").unwrap_or(l).trim()).find_map(|l| serde_json::from_str::<Value>(l).ok().filter(|v| v.get("id").is_some()));
        (status, head, json.unwrap_or(Value::Null))
    }
}

/// Serve agent-host's tools surface on a thread whose allocations count.
fn serve(dir: &TempDir) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    let root = dir.path().to_path_buf();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(async move {
            let workspace = Workspace::new(&root).expect("workspace");
            let mounted = agent_host::registry().expect("registry").mount_all();
            let host = McpHost::tools_surface(mounted, Mode::Default).prepare_run(move |gate| capspec::Run::new(gate).with(workspace.clone()));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listen on loopback");
            tx.send(listener.local_addr().expect("address").to_string()).expect("the test waits");
            COUNTED.with(|c| c.set(true));
            // Ends with the test's process.
            let _ = capspec::mcp::serve_http(host, listener, HttpOptions::new("t0ken")).await;
        });
    });
    rx.recv().expect("the server starts")
}

const WARM_UP: u64 = 50;
const CALLS: u64 = 400;

/// Allocations per `tools/call` of `workspace.read_file` on `revision`.
fn per_call(addr: &str, revision: &str) -> f64 {
    let mut connection = Connection::open(addr);
    let mut headers = vec![format!("MCP-Protocol-Version: {revision}")];
    let stateless = revision == "2026-07-28";
    if !stateless {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "per-call", "version": "1"}}});
        let (status, head, _) = connection.post(&headers, &init);
        assert_eq!(status, 200, "{head}");
        let session = head.lines().find_map(|l| l.strip_prefix("mcp-session-id:")).expect("a session id").trim().to_string();
        headers.push(format!("Mcp-Session-Id: {session}"));
        let (status, ..) = connection.post(&headers, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(status, 202);
    } else {
        headers.extend(["Mcp-Method: tools/call".to_string(), "Mcp-Name: read_file".to_string()]);
    }
    let settled = || {
        std::thread::sleep(Duration::from_millis(100));
        ALLOCATIONS.load(Ordering::Relaxed)
    };
    let mut before = 0;
    for i in 1..=WARM_UP + CALLS {
        if i == WARM_UP + 1 {
            before = settled();
        }
        let mut params = json!({"name": "read_file", "arguments": {"path": "hello.txt"}});
        if stateless {
            params["_meta"] = capspec_testkit::http::stateless_meta("per-call");
        }
        let (status, head, reply) = connection.post(&headers, &json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}));
        assert_eq!(status, 200, "{head}");
        assert_eq!(reply["result"]["structuredContent"]["content"], "hello, per call\n", "{reply}");
    }
    (settled() - before) as f64 / CALLS as f64
}

#[test]
fn a_plain_tools_call_allocates_no_more_than_its_baseline() {
    let dir = TempDir::new("per-call");
    std::fs::write(dir.path().join("hello.txt"), "hello, per call\n").expect("a file");
    let addr = serve(&dir);
    let mut report = Vec::new();
    let mut off = Vec::new();
    for (revision, baseline) in BASELINE {
        let measured = per_call(&addr, revision);
        report.push(format!("{revision}: {measured:.1} allocations per call (baseline {baseline:.1})"));
        if !(baseline * 0.95..=baseline * 1.05).contains(&measured) {
            off.push(revision);
        }
    }
    let report = report.join("\n");
    println!("{report}");
    assert!(
        off.is_empty(),
        "a plain tools/call moved more than 5 % from its baseline on {off:?}:\n{report}\nA rise is a cost every call pays: find it (a feature the call does not use?). A fall is good news: set BASELINE to the new figure, with the reason in BENCHMARKS.md."
    );
}

/// Bytes of the future of one `tools/call` (`McpSession::call_tool`) when
/// this was last set, in the build `cargo test` makes. rmcp moves the
/// future of every request's handler into a task of its own, by copy; on
/// 2026-07-28, whose every request is served by a new service, the copies
/// of a future that held a call's whole state inline (3,648 bytes) were 18 %
/// of a call's instructions under callgrind (BENCHMARKS.md, "Serving as
/// fast as rmcp").
const CALL_FUTURE_BYTES: usize = 1_632;

/// The size of the future `f` returns: its type, not a value, is all
/// this needs.
fn future_size<F, Fut>(_: F) -> usize
where
    F: FnOnce(capspec::mcp::McpSession, rmcp::model::CallToolRequestParams, rmcp::service::RequestContext<rmcp::RoleServer>) -> Fut,
{
    std::mem::size_of::<Fut>()
}

#[test]
fn a_tools_call_s_future_stays_as_small_as_its_baseline() {
    use rmcp::ServerHandler;
    let bytes = future_size(|session, request, context| async move { session.call_tool(request, context).await });
    println!("a tools/call's future: {bytes} bytes (baseline {CALL_FUTURE_BYTES})");
    assert!(
        bytes <= CALL_FUTURE_BYTES + CALL_FUTURE_BYTES / 20,
        "a tools/call's future grew from {CALL_FUTURE_BYTES} to {bytes} bytes: rmcp copies it for every request. Box what it awaits that is big and seldom (see McpSession::call), or set the baseline with the reason in BENCHMARKS.md."
    );
}
