//! The audit log of `cargo capspec serve`, as a team relies on it: a server
//! killed with SIGKILL under load has recorded every call whose result a
//! client received (its decision and its outcome), and a restart under the
//! same instance name continues the chain; two instances sharing a real
//! Postgres store, behind a round robin over HTTP, answer one `audit query`; the calls' spans reach a real
//! OTLP backend (Arize Phoenix) over both protocols, under the trace the
//! caller sent. The upstream is a server written with the official
//! TypeScript SDK, run from `tests/ts`.

use std::io::{BufRead, BufReader};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use capspec_store::{Query, Store, keyed_hash};
use capspec_testkit::http::{call_stateless, post_mcp};
use capspec_testkit::phoenix::Phoenix;
use capspec_testkit::postgres::Postgres;
use capspec_testkit::{KillOnDrop, TempDir, repo_root, skip, text};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

fn capspec(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-capspec")).arg("capspec").args(args).current_dir(dir).env_remove("CARGO_MANIFEST_DIR").output().expect("cargo-capspec runs")
}

/// A project serving the SDK server `changing` (tools `greet` and `lookup`,
/// both read), pinned and synced, with a state key file; `None` without node.
fn project() -> Option<TempDir> {
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !repo_root().join("tests/ts/node_modules/@modelcontextprotocol/sdk").is_dir() {
        skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), "node or tests/ts/node_modules is absent (npm ci --prefix tests/ts): the audit log of serve is not tested end to end");
        return None;
    }
    let dir = TempDir::new("audit-serve");
    let server = serde_json::to_string(&repo_root().join("tests/ts/changing-server.mjs").to_string_lossy()).unwrap();
    dir.write("capspec.toml", format!("specs = \"specs\"\n\n[upstream.changing]\ncommand = [\"node\", {server}]\ntimeout_ms = 20000\n"));
    dir.write("state.key", [42u8; 32]);
    let import = capspec(dir.path(), &["import", "mcp", "--upstream", "changing"]);
    assert!(import.status.success(), "{}", text(&import));
    let sync = capspec(dir.path(), &["sync"]);
    assert!(sync.status.success(), "{}", text(&sync));
    Some(dir)
}

async fn serve(dir: &Path, args: &[&str]) -> (RunningService<RoleClient, ()>, u32) {
    serve_with(dir, args, &[]).await
}

/// `serve` with these environment variables too.
async fn serve_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (RunningService<RoleClient, ()>, u32) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cargo-capspec"));
    command.args(["capspec", "serve", "--surface", "tools", "--state-key-file", "state.key"]).args(args).current_dir(dir).env_remove("CARGO_MANIFEST_DIR");
    command.envs(env.iter().copied());
    let transport = TokioChildProcess::new(command).expect("cargo-capspec starts");
    let pid = transport.id().expect("the server runs");
    (().serve(transport).await.expect("the gateway answers initialize"), pid)
}

async fn greet(client: &RunningService<RoleClient, ()>, name: &str) -> Option<Value> {
    let Value::Object(args) = json!({"name": name}) else { unreachable!() };
    let result = client.call_tool(CallToolRequestParams::new("greet").with_arguments(args)).await.ok()?;
    let value = serde_json::to_value(result).unwrap();
    (value["isError"] != true).then_some(value)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn key() -> [u8; 32] {
    capspec::mcp::StateKey::new([42u8; 32]).unwrap().audit_key()
}

#[test]
fn a_server_killed_under_load_loses_no_record_of_a_call_a_client_received() {
    let Some(project) = project() else { return };
    let dir = project.path();
    let url = format!("sqlite:{}/.capspec/store.db", dir.display());
    runtime().block_on(async {
        let (client, pid) = serve(dir, &["--instance", "gw"]).await;
        let client = std::sync::Arc::new(client);
        // Load that keeps coming until the kill has landed: 64 calls in flight,
        // each answer making room for the next, so the server dies with calls
        // on their way in and out (a fixed batch can be answered in full
        // before the kill's signal arrives).
        let killed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (answers, mut answered) = tokio::sync::mpsc::unbounded_channel();
        let producer = {
            let (client, killed) = (client.clone(), killed.clone());
            tokio::spawn(async move {
                let room = std::sync::Arc::new(tokio::sync::Semaphore::new(64));
                let mut issued = 0usize;
                // Bounded: a server that never dies under this test stops it at 5000.
                while !killed.load(std::sync::atomic::Ordering::SeqCst) && issued < 5000 {
                    let permit = room.clone().acquire_owned().await.unwrap();
                    let (client, answers, i) = (client.clone(), answers.clone(), issued);
                    tokio::spawn(async move {
                        let _ = answers.send((i, greet(&client, &format!("n{i}")).await));
                        drop(permit);
                    });
                    issued += 1;
                }
                issued
            })
        };
        let mut received = Vec::new();
        let mut failed = 0usize;
        while let Some((i, result)) = answered.recv().await {
            match result {
                Some(_) => received.push(i),
                None => failed += 1,
            }
            if received.len() >= 60 && !killed.load(std::sync::atomic::Ordering::SeqCst) {
                // Mid-load: the server dies at once, nothing flushed on the way out.
                // Once: the calls still in flight end in errors, not in a second kill.
                let kill = Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
                assert!(kill.success(), "the server was still running when 60 calls had answered");
                killed.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let issued = producer.await.unwrap();
        assert!(issued < 5000, "the server was killed before 5000 calls were issued");
        assert!(received.len() >= 60 && failed > 0, "the kill came mid-load: {} answered, {failed} refused of {issued}", received.len());

        let store = Store::open(&url).await.unwrap();
        for i in &received {
            let found = store.query(&Query { args_hmac: vec![keyed_hash(&key(), &json!({"name": format!("n{i}")}))], ..Query::default() }).await.unwrap();
            let kinds: Vec<&str> = found.iter().map(|r| r["kind"].as_str().unwrap()).collect();
            assert!(kinds.contains(&"decision"), "call n{i} answered with no decision record: {found:?}");
        }
        // Every outcome a client could have seen is there too: as many outcomes as received results, at least.
        let outcomes = store.query(&Query { capability: Some("changing.greet".into()), ..Query::default() }).await.unwrap().into_iter().filter(|r| r["kind"] == "outcome").count();
        assert!(outcomes >= received.len(), "{outcomes} outcome records for {} results received", received.len());
        assert!(store.verify().await.unwrap().is_none(), "the chain holds after the kill");

        // A restart under the same name continues the chain.
        let before = store.query(&Query::default()).await.unwrap().len() as i64;
        let (client, _) = serve(dir, &["--instance", "gw"]).await;
        assert!(greet(&client, "after").await.is_some());
        client.cancel().await.unwrap();
        let all = store.query(&Query::default()).await.unwrap();
        let last = all.last().unwrap();
        assert_eq!((last["instance"].as_str(), last["seq"].as_i64()), (Some("gw"), Some(before + 2)), "{last}");
        let verify = capspec(dir, &["audit", "verify"]);
        assert_eq!(verify.status.code(), Some(0), "{}", text(&verify));
        // `--arguments`: the call made with exactly these arguments, by the keyed hash the
        // server made with its state key file; without the file the command says why.
        let found = capspec(dir, &["audit", "query", "--arguments", r#"{"name": "after"}"#, "--state-key-file", "state.key", "--format", "jsonl"]);
        let lines: Vec<Value> = String::from_utf8_lossy(&found.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.iter().map(|r| r["kind"].as_str().unwrap()).collect::<Vec<_>>(), ["decision"], "{}", text(&found));
        let keyless = capspec(dir, &["audit", "query", "--arguments", r#"{"name": "after"}"#]);
        assert_eq!(keyless.status.code(), Some(1), "{}", text(&keyless));
        assert!(text(&keyless).contains("--state-key-file"), "{}", text(&keyless));
    });
}

/// `serve --http` on a free port of 127.0.0.1 (tools surface, bearer token
/// `token`), recording into `store` as `instance`; and its address.
fn serve_http(dir: &Path, store: &str, instance: &str) -> (KillOnDrop, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cargo-capspec"))
        .args(["capspec", "serve", "--surface", "tools", "--state-key-file", "state.key", "--http", "127.0.0.1:0", "--token-file", "token"])
        .args(["--store", store, "--instance", instance])
        .current_dir(dir)
        .env_remove("CARGO_MANIFEST_DIR")
        .stderr(Stdio::piped())
        .spawn()
        .expect("cargo-capspec starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("serving MCP at") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{instance} ended before listening");
    }
    let addr = line.trim().rsplit_once("http://").unwrap().1.trim_end_matches("/mcp").to_string();
    (KillOnDrop(child), addr)
}

/// A TCP round robin in front of `backends`: each new connection goes to
/// the next one, as a load balancer without session affinity sends them.
fn round_robin(backends: Vec<String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for (i, inbound) in listener.incoming().enumerate() {
            let (Ok(inbound), Ok(outbound)) = (inbound, TcpStream::connect(&backends[i % backends.len()])) else { continue };
            for (mut from, mut to) in [(inbound.try_clone().unwrap(), outbound.try_clone().unwrap()), (outbound, inbound)] {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(Shutdown::Write);
                });
            }
        }
    });
    addr
}

#[test]
fn two_instances_sharing_postgres_answer_one_query() {
    let Some(project) = project() else { return };
    let Some(pg) = Postgres::start() else { return };
    let dir = project.path();
    project.write("token", "t0ken");
    let url = pg.url("shared");
    let (_east, east) = serve_http(dir, &url, "east");
    let (_west, west) = serve_http(dir, &url, "west");
    // A third instance given east's name while east runs: refused at start,
    // naming the chain and its holder (a chain has one live writer).
    let second = Command::new(env!("CARGO_BIN_EXE_cargo-capspec"))
        .args(["capspec", "serve", "--surface", "tools", "--state-key-file", "state.key", "--http", "127.0.0.1:0", "--token-file", "token", "--store", &url, "--instance", "east"])
        .current_dir(dir)
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .unwrap();
    assert_ne!(second.status.code(), Some(0), "{}", text(&second));
    let said = text(&second);
    assert!(said.contains("the audit chain `east`") && said.contains("another live process (process ") && said.contains("--instance"), "{said}");
    assert!(!said.contains("UNIQUE") && !said.contains("duplicate key"), "no database text: {said}");
    // Behind a round robin, on the revision that keeps no session: each call lands on the next instance.
    let balancer = round_robin(vec![east.clone(), west]);
    for i in 0..6 {
        let (_, reply) = call_stateless(&balancer, "t0ken", "greet", json!({"name": format!("r{i}")}));
        assert!(reply["result"]["isError"] != json!(true) && reply.get("error").is_none(), "call {i}: {reply}");
    }
    // A 2025-11-25 session (on one instance, as that revision needs): its records name the session.
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "audit-test", "version": "1"}});
    let bearer = "Authorization: Bearer t0ken".to_string();
    let (_, head, _) = post_mcp(&east, std::slice::from_ref(&bearer), &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}));
    let session = head.lines().find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case("mcp-session-id")).map(|(_, v)| v.trim().to_string()));
    let session = session.unwrap_or_else(|| panic!("no session id: {head}"));
    let in_session = [bearer, format!("Mcp-Session-Id: {session}"), "MCP-Protocol-Version: 2025-11-25".into()];
    post_mcp(&east, &in_session, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let (_, _, reply) = post_mcp(&east, &in_session, &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "greet", "arguments": {"name": "s"}}}));
    assert!(reply["result"]["isError"] != json!(true), "{reply}");
    let named = capspec(dir, &["audit", "query", "--store", &url, "--format", "jsonl"]);
    let requests: Vec<Value> = String::from_utf8_lossy(&named.stdout).lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["request"].clone()).collect();
    let labelled = json!(format!("{session}/7"));
    assert_eq!(requests.iter().filter(|r| **r == labelled).count(), 2, "the session's call is `SESSION/ID` in both its records: {requests:?}");
    let query = capspec(dir, &["audit", "query", "--store", &url, "--capability", "changing.greet", "--format", "json"]);
    let records: Value = serde_json::from_slice(&query.stdout).unwrap_or_else(|_| panic!("{}", text(&query)));
    let instances: Vec<&str> = records.as_array().unwrap().iter().map(|r| r["instance"].as_str().unwrap()).collect();
    assert_eq!(instances.len(), 14, "a decision and an outcome per call: {records:#}");
    let served = |name: &str| instances.iter().filter(|i| **i == name).count();
    assert_eq!((served("east"), served("west")), (8, 6), "three calls each behind the balancer, and the session's on east, in one answer: {records:#}");
    let verify = capspec(dir, &["audit", "verify", "--store", &url]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify));
    // A record edited in the shared database: verify names its instance and sequence number.
    let edit = Command::new("psql").args(["-d", &url, "-c", "UPDATE audit_records SET principal = 'mallory' WHERE instance = 'west' AND seq = 3"]).output().unwrap();
    assert!(edit.status.success(), "{}", text(&edit));
    let verify = capspec(dir, &["audit", "verify", "--store", &url]);
    assert_eq!(verify.status.code(), Some(1), "{}", text(&verify));
    assert!(text(&verify).contains("instance `west` breaks at record 3"), "{}", text(&verify));
}

/// A span as Phoenix answers it, with its attributes as one JSON object.
fn attributes(span: &Value) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for kv in span["attributes"].as_array().into_iter().flatten() {
        let value = kv["value"].as_object().and_then(|v| v.values().find(|v| !v.is_null()).cloned()).unwrap_or(Value::Null);
        out.insert(kv["key"].as_str().unwrap_or_default().to_string(), value);
    }
    out
}

#[test]
fn the_calls_spans_reach_a_real_otlp_backend_under_the_callers_trace() {
    let Some(project) = project() else { return };
    let Some(phoenix) = Phoenix::start() else { return };
    let dir = project.path();
    let url = format!("sqlite:{}/.capspec/store.db", dir.display());
    for (n, (protocol, endpoint)) in [("http/protobuf", phoenix.http_endpoint()), ("grpc", phoenix.grpc_endpoint())].into_iter().enumerate() {
        // The caller's own trace: its span is the parent of the request's.
        let (trace, parent) = (format!("4bf92f3577b34da6a3ce929d0e0e47{n:02}"), format!("00f067aa0ba902b{n}"));
        let secret = format!("s3cret-argument-{n}");
        let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol), ("OTEL_EXPORTER_OTLP_HEADERS", "x-capspec-test=1")];
        runtime().block_on(async {
            let (client, _) = serve_with(dir, &["--instance", "traced"], &env).await;
            let Value::Object(args) = json!({"name": secret}) else { unreachable!() };
            let mut meta = rmcp::model::RequestMetaObject::new();
            meta.set_traceparent(format!("00-{trace}-{parent}-01"));
            let mut call = CallToolRequestParams::new("greet").with_arguments(args);
            call.meta = Some(meta);
            let result = client.call_tool(call).await.expect("the call answers");
            assert_ne!(result.is_error, Some(true), "{result:?}");
            // Closing the session ends `serve`, which exports its last batch on the way out.
            client.cancel().await.unwrap();
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let spans = loop {
            let spans: Vec<Value> = phoenix.spans("default").into_iter().filter(|s| s["trace_id"] == trace.as_str()).collect();
            if spans.len() >= 2 || std::time::Instant::now() > deadline {
                break spans;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        };
        let named = |name: &str| spans.iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("{protocol}: no `{name}` span in trace {trace}: {spans:#?}"));
        let request = named("tools/call greet");
        let call = named("execute_tool greet");
        assert_eq!(request["parent_span_id"], parent.as_str(), "{protocol}: the caller's span parents the request's");
        assert_eq!(call["parent_span_id"], request["span_id"], "{protocol}: the request's span parents the call's");
        let a = attributes(call);
        assert_eq!((a["gen_ai.operation.name"].as_str(), a["gen_ai.tool.name"].as_str()), (Some("execute_tool"), Some("greet")), "{protocol}: {a:?}");
        assert_eq!((a["capspec.decision"].as_str(), a["capspec.status"].as_str(), a["capspec.category"].as_str()), (Some("auto"), Some("ok"), Some("read")), "{protocol}: the gate's decision (a read runs without asking): {a:?}");
        let exported = serde_json::to_string(&spans).unwrap();
        assert!(!exported.contains(&secret), "{protocol}: an argument value was exported: {exported}");
        // The audit record names the same trace.
        let found = runtime().block_on(async {
            let store = Store::open(&url).await.unwrap();
            store.query(&Query { args_hmac: vec![keyed_hash(&key(), &json!({"name": secret}))], ..Query::default() }).await.unwrap()
        });
        assert_eq!(found.first().map(|r| r["trace_id"].clone()), Some(json!(trace)), "{protocol}: {found:?}");
    }
}

/// The book's `audit` examples (docs/src/operating.md), each line run as
/// written in a project whose store holds a real log: the reads of
/// `deploy/.env` are found by the arguments as typed, whether the record
/// holds them as sent (alice's client left `offset` out) or only as they
/// ran (bob's record, found through the spec's default). A query that
/// cannot be answered as asked exits 1 saying why; `audit` never creates a
/// store.
#[test]
fn the_books_audit_examples_answer_from_a_real_log() {
    use capspec::audit::{AuditRecord, AuditSink, Decided, RecordKind};
    let project = TempDir::new("audit-book");
    let dir = project.path();
    project.write("capspec.toml", "specs = \"specs\"\n");
    std::fs::create_dir_all(dir.join("specs")).unwrap();
    std::fs::copy(repo_root().join("specs/workspace.yaml"), dir.join("specs/workspace.yaml")).unwrap();
    project.write("state.key", [42u8; 32]);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let read = |principal: &str, call: u64, args: Value, sent: Option<Value>| AuditRecord {
        kind: RecordKind::Decision,
        time_ms: now,
        call,
        principal: principal.into(),
        groups: Vec::new(),
        surface: "tools".into(),
        request: None,
        trace_id: None,
        capability: "workspace.read_file".into(),
        category: Some("read".into()),
        mode: "default".into(),
        decision: Some(Decided::Allowed),
        reason: None,
        policies: Vec::new(),
        answered_by: None,
        upstream: None,
        args: Some(args),
        sent_args: sent,
        status: None,
        duration_ms: None,
        result: None,
    };
    let url = format!("sqlite:{}/.capspec/store.db", dir.display());
    runtime().block_on(async {
        let store = Store::open(&url).await.unwrap();
        let log = capspec_store::AuditLog::start(store, capspec_store::AuditOptions { instance: "book".into(), named: true, key: key(), keep_arguments: false }).await.unwrap();
        log.decision(read("alice", 1, json!({"path": "deploy/.env", "offset": 0}), Some(json!({"path": "deploy/.env"})))).await.unwrap();
        log.decision(read("bob", 2, json!({"path": "deploy/.env", "offset": 0}), None)).await.unwrap();
        log.decision(read("bob", 3, json!({"path": "README.md", "offset": 0}), None)).await.unwrap();
        log.close().await;
    });
    // `cargo` on PATH is this capspec, as `cargo install` makes it.
    let bin = TempDir::new("audit-book-bin");
    let shim = bin.path().join("cargo");
    std::fs::write(&shim, format!("#!/bin/sh\nexec '{}' \"$@\"\n", env!("CARGO_BIN_EXE_cargo-capspec"))).unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let sh = |line: &str| Command::new("sh").args(["-c", line]).current_dir(dir).env("PATH", &path).env_remove("CARGO_MANIFEST_DIR").output().unwrap();
    let book = std::fs::read_to_string(repo_root().join("docs/src/operating.md")).unwrap();
    let lines: Vec<&str> = book.lines().filter(|l| l.starts_with("cargo capspec audit ")).collect();
    assert!(lines.len() >= 4, "the book's audit examples: {lines:?}");
    for line in lines {
        let out = sh(line);
        assert_eq!(out.status.code(), Some(0), "`{line}`: {}", text(&out));
        let printed = String::from_utf8_lossy(&out.stdout).to_string();
        if line.contains("--principal alice") {
            assert!(printed.contains("alice") && !printed.contains("bob"), "`{line}`: {printed}");
        }
        if line.contains("--arguments") {
            assert!(printed.contains("alice") && printed.contains("bob"), "`{line}`: as typed, and through the spec's default: {printed}");
            assert_eq!(printed.lines().count(), 3, "`{line}`: a header and two records: {printed}");
        }
    }
    // Through the named capability's spec: a lone string is its one
    // required string property (`path`), then `offset`'s default: bob's read.
    let coerced = capspec(dir, &["audit", "query", "--arguments", r#""README.md""#, "--capability", "workspace.read_file", "--state-key-file", "state.key", "--format", "jsonl"]);
    assert_eq!(String::from_utf8_lossy(&coerced.stdout).lines().count(), 1, "{}", text(&coerced));
    for (args, why) in [
        (vec!["--arguments", r#"{"path": "deploy/.env"}"#], "--state-key-file"),
        (vec!["--capability", "workspace.no_such"], "no capability `workspace.no_such`"),
        (vec!["--decision", "refused"], "no record has the decision `refused`"),
    ] {
        let out = capspec(dir, &[&["audit", "query"][..], &args].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(why) && out.stdout.is_empty(), "{args:?}: {}", text(&out));
    }
    let missing = dir.join("mistyped/x.db");
    let out = capspec(dir, &["audit", "verify", "--store", &format!("sqlite:{}", missing.display())]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("there is no store at"), "{}", text(&out));
    assert!(!missing.exists() && !missing.parent().unwrap().exists(), "audit created a store");
}
