//! Upstream MCP servers mounted (DESIGN §12), against rmcp's client calling
//! the same stdio servers directly. Needs node and `npm ci --prefix tests/ts`.
//!
//! - Forwarding cost: `invoke` of `faulty.echo` (a stdio server written
//!   with the official TypeScript SDK, `tests/ts/faulty-server.mjs`) through
//!   the ladder — lookup, validation, gate, forward, receipt — against
//!   rmcp's client calling `echo` on a second instance of the same server.
//!   Interleaved: blocks of calls alternate, in rotating order, each block's
//!   first calls untimed.
//! - Gateway start: `Upstreams::start` of the reference servers memory,
//!   filesystem and everything, eager (all three started and listed) and
//!   lazy (nothing started), and the lazy mount's first call.
//!
//! `cargo bench --manifest-path benches/rmcp/Cargo.toml --bench upstream [-- ROUNDS]`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use capspec::upstream::{Endpoint, PinnedTool, Server, UpstreamModule, Upstreams};
use capspec::{Annotations, Category, Gate, Mode, Module, Registry, Run, Spec};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

const BLOCK: usize = 25;
const SETTLE: usize = 5;
const WARM_UP: usize = 5;

fn main() {
    let rounds = std::env::args().skip(1).find_map(|a| a.parse::<usize>().ok()).unwrap_or(100);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let modules = repo.join("tests/ts/node_modules/@modelcontextprotocol");
    assert!(modules.is_dir(), "run `npm ci --prefix tests/ts` first");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(forwarding(&repo, rounds));
    rt.block_on(start_times(&modules, &repo));
}

/// A read capability `module.name` taking `input`.
fn spec(module: &'static str, name: &'static str, input: &'static str) -> &'static Spec {
    Box::leak(Box::new(Spec {
        module,
        name,
        wire_name: name,
        title: None,
        annotations: Annotations { read_only: true, destructive: false, idempotent: true, open_world: false },
        category: Category::Read,
        description: "bench",
        summary: "bench",
        signature: "bench",
        input_schema: input,
        output_schema: None,
        user_message: None,
        deferred: false,
        direct: false,
        aliases: &[],
        deprecated: None,
        fingerprint: "bench",
    }))
}

fn node(name: &str, args: Vec<String>) -> Server {
    let mut command = vec!["node".to_string()];
    command.extend(args);
    Server { name: name.into(), endpoint: Endpoint::Stdio { command, env: Default::default(), cwd: None }, timeout: Duration::from_secs(30) }
}

fn module(server: Server, lazy: bool, spec: &'static Spec, tool: &str) -> UpstreamModule {
    let specs: &'static [Spec] = Box::leak(Box::new([*spec]));
    UpstreamModule {
        server,
        lazy,
        module: Module { name: spec.module, description: "bench", specs, facade: "", catalog: "" },
        tools: vec![PinnedTool { spec: &specs[0], tool: tool.into(), pin: None }],
    }
}

async fn forwarding(repo: &Path, rounds: usize) {
    let script = repo.join("tests/ts/faulty-server.mjs").to_string_lossy().into_owned();
    let echo = spec("faulty", "echo", r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#);
    let upstreams = Upstreams::start(vec![module(node("faulty", vec![script.clone()]), false, echo, "echo")]).await;
    assert!(upstreams.unmounted().is_empty(), "{:?}", upstreams.unmounted());
    let registry = Registry::with_forwards(&upstreams.modules(), [], [], upstreams.forwards()).expect("registry");
    let mounted = registry.mount_all();
    let run = Run::new(Gate::headless(Mode::Auto, "bench")).with_limits(capspec::Limits { max_calls: u32::MAX });
    let mut command = tokio::process::Command::new("node");
    command.arg(&script);
    let direct = ().serve(TokioChildProcess::new(command).expect("node starts")).await.expect("handshake");
    let args = json!({"text": "hello"});
    let mut micros: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for round in 0..WARM_UP + rounds {
        for k in 0..2 {
            let which = (round + k) % 2;
            for call in 0..BLOCK {
                let start = Instant::now();
                if which == 0 {
                    let params = CallToolRequestParams::new("echo").with_arguments(args.as_object().cloned().expect("object"));
                    let result = direct.call_tool(params).await.expect("a result");
                    assert_ne!(result.is_error, Some(true));
                } else {
                    mounted.invoke(&run, "faulty.echo", args.clone()).await.expect("forwarded");
                }
                if round >= WARM_UP && call >= SETTLE {
                    micros[which].push(start.elapsed().as_secs_f64() * 1e6);
                }
            }
        }
    }
    for times in &mut micros {
        times.sort_by(f64::total_cmp);
    }
    let at = |t: &[f64], q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
    println!("forwarding, {rounds} interleaved rounds of {} timed calls each (µs)", BLOCK - SETTLE);
    println!("{:<44} {:>8} {:>8} {:>8} {:>8} {:>7}", "path", "fastest", "p25", "median", "p75", "ratio");
    let base = at(&micros[0], 0.5);
    for (label, times) in ["rmcp client → node echo server", "capspec invoke → forward → same server"].iter().zip(&micros) {
        println!("{label:<44} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>6.3}×", times[0], at(times, 0.25), at(times, 0.5), at(times, 0.75), at(times, 0.5) / base);
    }
    upstreams.shutdown().await;
}

async fn start_times(modules: &Path, repo: &Path) {
    let data: PathBuf = std::env::temp_dir().join(format!("capspec-bench-upstream-{}", std::process::id()));
    std::fs::create_dir_all(&data).expect("scratch dir");
    let entry = |name: &str| modules.join(name).join("dist/index.js").to_string_lossy().into_owned();
    let servers = || {
        vec![
            (node("memory", vec![entry("server-memory")]), spec("memory", "read_graph", r#"{"type":"object"}"#), "read_graph"),
            (node("fs", vec![entry("server-filesystem"), data.to_string_lossy().into_owned()]), spec("fs", "list_allowed_directories", r#"{"type":"object"}"#), "list_allowed_directories"),
            (node("everything", vec![entry("server-everything"), "stdio".into()]), spec("everything", "echo", r#"{"type":"object","properties":{"message":{"type":"string"}}}"#), "echo"),
        ]
    };
    let _ = repo;
    println!("\ngateway start with memory, filesystem and everything (ms), 5 runs each");
    for lazy in [false, true] {
        let mut starts = Vec::new();
        let mut first_calls = Vec::new();
        for _ in 0..5 {
            let mods = servers().into_iter().map(|(s, spec, tool)| module(s, lazy, spec, tool)).collect();
            let began = Instant::now();
            let upstreams = Upstreams::start(mods).await;
            starts.push(began.elapsed().as_secs_f64() * 1e3);
            assert!(upstreams.unmounted().is_empty(), "{:?}", upstreams.unmounted());
            let registry = Registry::with_forwards(&upstreams.modules(), [], [], upstreams.forwards()).expect("registry");
            let mounted = registry.mount_all();
            let run = Run::new(Gate::headless(Mode::Auto, "bench"));
            let began = Instant::now();
            mounted.invoke(&run, "memory.read_graph", json!({})).await.expect("first call");
            first_calls.push(began.elapsed().as_secs_f64() * 1e3);
            upstreams.shutdown().await;
        }
        starts.sort_by(f64::total_cmp);
        first_calls.sort_by(f64::total_cmp);
        println!(
            "{:<6} start: median {:>7.1}  (min {:.1}, max {:.1});  first call to memory: median {:>7.1}",
            if lazy { "lazy" } else { "eager" },
            starts[2],
            starts[0],
            starts[4],
            first_calls[2]
        );
    }
    let _ = std::fs::remove_dir_all(&data);
}
