//! Upstream MCP servers mounted (DESIGN §12), against rmcp's client calling
//! the same stdio servers directly. Needs node and `npm ci --prefix tests/ts`.
//!
//! - Forwarding cost: `invoke` of `faulty.echo` (a stdio server written
//!   with the official TypeScript SDK, `tests/ts/faulty-server.mjs`) through
//!   the ladder — lookup, validation, gate, forward, receipt — against
//!   rmcp's client calling `echo` on a second instance of the same server.
//!   Interleaved: blocks of calls alternate, in rotating order, each block's
//!   first calls untimed.
//! - Per-user credentials (DESIGN §12): `invoke` of `remote.shout` on an
//!   OAuth upstream (`tests/ts/oauth-upstream.mjs`: oidc-provider and an
//!   SDK server that verifies every token) as the principal `alice`, once
//!   through a `credentials = "per-user"` mount calling with her own
//!   credential from the serve store's vault (SQLite), once through an
//!   operator mount calling with the operator's log-in. Both credentials
//!   are real log-ins at the fixture's authorization server, living an
//!   hour, so no refresh falls inside the timing. Interleaved as above.
//! - Gateway start: `Upstreams::start` of the reference servers memory,
//!   filesystem and everything, eager (all three started and listed) and
//!   lazy (nothing started), and the lazy mount's first call.
//!
//! `cargo bench --manifest-path benches/rmcp/Cargo.toml --bench upstream [-- ROUNDS]`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use std::io::{BufRead, Read, Write};
use std::sync::Arc;

use capspec::upstream::{Endpoint, PinnedTool, Server, UpstreamModule, Upstreams, oauth};
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
    rt.block_on(per_user(&repo, rounds));
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
    let micros = interleaved(rounds, 2, async |which| {
        if which == 0 {
            let params = CallToolRequestParams::new("echo").with_arguments(args.as_object().cloned().expect("object"));
            let result = direct.call_tool(params).await.expect("a result");
            assert_ne!(result.is_error, Some(true));
        } else {
            mounted.invoke(&run, "faulty.echo", args.clone()).await.expect("forwarded");
        }
    })
    .await;
    report(&format!("forwarding, {rounds} interleaved rounds of {} timed calls each (µs)", BLOCK - SETTLE), &["rmcp client → node echo server", "capspec invoke → forward → same server"], &micros);
    upstreams.shutdown().await;
}

/// Timed blocks of `BLOCK` calls, alternating between `paths` in rotating
/// order, each block's first `SETTLE` calls untimed: each path's times (µs), sorted.
async fn interleaved<F: AsyncFn(usize)>(rounds: usize, paths: usize, call: F) -> Vec<Vec<f64>> {
    let mut micros = vec![Vec::new(); paths];
    for round in 0..WARM_UP + rounds {
        for k in 0..paths {
            let which = (round + k) % paths;
            for n in 0..BLOCK {
                let start = Instant::now();
                call(which).await;
                if round >= WARM_UP && n >= SETTLE {
                    micros[which].push(start.elapsed().as_secs_f64() * 1e6);
                }
            }
        }
    }
    for times in &mut micros {
        times.sort_by(f64::total_cmp);
    }
    micros
}

fn report(title: &str, labels: &[&str], micros: &[Vec<f64>]) {
    let at = |t: &[f64], q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
    println!("{title}");
    println!("{:<44} {:>8} {:>8} {:>8} {:>8} {:>7}", "path", "fastest", "p25", "median", "p75", "ratio");
    let base = at(&micros[0], 0.5);
    for (label, times) in labels.iter().zip(micros) {
        println!("{label:<44} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>6.3}×", times[0], at(times, 0.25), at(times, 0.5), at(times, 0.75), at(times, 0.5) / base);
    }
}

/// The fixture's browser, logging in at the URL `auth login` would print.
fn browse(control: &str, url: &str) {
    let rest = control.strip_prefix("http://").expect("loopback");
    let (host, path) = rest.split_at(rest.find('/').expect("a path"));
    let body = json!({ "url": url }).to_string();
    let mut stream = std::net::TcpStream::connect(host).expect("the fixture listens");
    write!(stream, "POST {path}/browse HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).expect("sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("answered");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

/// A log-in to the fixture's server, stored in `oauth.store`.
async fn log_in(mcp: &str, client: &oauth::OAuth, control: &str) {
    let control = control.to_string();
    oauth::login(mcp, client, Duration::from_secs(60), move |url| {
        let (control, url) = (control.clone(), url.to_string());
        std::thread::spawn(move || browse(&control, &url));
    })
    .await
    .expect("logged in");
}

async fn per_user(repo: &Path, rounds: usize) {
    let ts = repo.join("tests/ts");
    let mut fixture = std::process::Command::new("node")
        .arg(ts.join("oauth-upstream.mjs"))
        .current_dir(&ts)
        .env("CAPSPEC_FIXTURE_TTL", "3600")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node starts");
    let mut stdout = std::io::BufReader::new(fixture.stdout.take().expect("piped"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the fixture's addresses");
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let addresses: serde_json::Value = serde_json::from_str(&line).expect("JSON");
    let (mcp, control) = (addresses["mcp"].as_str().expect("mcp").to_string(), addresses["control"].as_str().expect("control").to_string());

    let scratch = std::env::temp_dir().join(format!("capspec-bench-per-user-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let client = |per_user| oauth::OAuth { client_id: None, client_metadata_url: None, scopes: Vec::new(), store: scratch.join("credentials"), per_user };
    // Alice's own log-in, moved into the vault; then the operator's.
    log_in(&mcp, &client(false), &control).await;
    let file = std::fs::read_dir(scratch.join("credentials")).expect("stored").next().expect("one log-in").expect("entry").path();
    let alices: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).expect("readable")).expect("JSON");
    std::fs::remove_file(&file).expect("removed");
    let store = capspec_store::Store::open(&format!("sqlite:{}", scratch.join("store.db").display())).await.expect("store");
    let vault = capspec_store::Vault::new(store, [9u8; 32]);
    vault.save("remote", "alice", alices["credentials"].clone()).await.expect("saved");
    log_in(&mcp, &client(false), &control).await;

    let shout = spec("remote", "shout", r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#);
    let server = |per_user| Server { name: "remote".into(), endpoint: Endpoint::Http { url: mcp.clone(), token: None, oauth: Some(client(per_user)) }, timeout: Duration::from_secs(30) };
    let operator = Upstreams::start(vec![module(server(false), false, shout, "shout")]).await;
    let vault: Arc<dyn capspec::upstream::CredentialVault> = Arc::new(vault);
    let own = Upstreams::start_with_vault(vec![module(server(true), false, shout, "shout")], Some(vault)).await;
    assert!(operator.unmounted().is_empty() && own.unmounted().is_empty(), "{:?} {:?}", operator.unmounted(), own.unmounted());
    let mount = |u: &Upstreams| Registry::with_forwards(&u.modules(), [], [], u.forwards()).expect("registry").mount_all();
    let (operator_mount, own_mount) = (mount(&operator), mount(&own));
    let run = Run::new(Gate::headless(Mode::Auto, "bench")).with_limits(capspec::Limits { max_calls: u32::MAX }).with_principal(capspec::Principal::new("alice"));
    let args = json!({"text": "hello"});
    let micros = interleaved(rounds, 2, async |which| {
        let mounted = if which == 0 { &operator_mount } else { &own_mount };
        let result = mounted.invoke(&run, "remote.shout", args.clone()).await.expect("forwarded");
        assert!(result.to_string().contains("HELLO"), "{result}");
    })
    .await;
    report(
        &format!("\nper-user credentials, alice calling, {rounds} interleaved rounds of {} timed calls each (µs)", BLOCK - SETTLE),
        &["operator's log-in (credentials = \"operator\")", "her own, from the vault (\"per-user\")"],
        &micros,
    );
    operator.shutdown().await;
    own.shutdown().await;
    let _ = fixture.kill();
    let _ = fixture.wait();
    let _ = std::fs::remove_dir_all(&scratch);
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
