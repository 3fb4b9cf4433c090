//! The reference host end to end: every capability of `specs/` runs for real
//! through the registry and the gate, in a temporary workspace.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use agent_host::capabilities::memory::SessionMemory;
use agent_host::workspace::Workspace;
use capspec::testing::{ScriptedApprover, block_on};
use capspec_testkit::TempDir;
use capspec::{Approval, CallError, ErrorCode, Gate, GateDecision, Mode, Mounted, Run, SessionAllow, Status};
use serde_json::{Value, json};

struct Host {
    dir: TempDir,
    mounted: Mounted,
}

impl Host {
    fn new(name: &str) -> Host {
        Host { dir: TempDir::new(&format!("agent-host-{name}")), mounted: agent_host::registry().expect("every spec has an impl").mount_all() }
    }

    fn run(&self, mode: Mode, approver: Arc<ScriptedApprover>) -> Run {
        Run::new(Gate::new(mode, approver, SessionAllow::new()))
            .with(Workspace::new(self.dir.path()).unwrap())
            .with(SessionMemory::default())
            .with(self.mounted.clone())
    }

    fn auto(&self) -> Run {
        self.run(Mode::Auto, ScriptedApprover::new([]))
    }

    fn call(&self, run: &Run, name: &str, args: Value) -> Result<Value, CallError> {
        block_on(self.mounted.invoke(run, name, args))
    }
}

#[test]
fn every_spec_has_an_impl() {
    let registry = agent_host::registry().unwrap();
    let mounted = registry.mount_all();
    assert_eq!(mounted.capabilities().len(), 28);
    assert_eq!(mounted.module_names(), ["memory", "notes", "plan", "shell", "web", "workspace"]);
}

/// `notes.tag_note` is declared in Rust with #[derive(Capability)]; after
/// `cargo xtask sync` it is served like the YAML specs: in the catalog,
/// validated against its schemars schema, gated as `write`.
#[test]
fn code_first_tag_note_is_catalogued_validated_and_gated() {
    let host = Host::new("tag-note");
    let catalog = host.mounted.catalog();
    assert!(catalog.contains("- write `tag_note({note_id /* The note to tag. */, tags: string[](1..20 items) /* Tags to add. */}) → {tags: string[] /* Every tag the note has now. */}`:"), "{catalog}");
    let run = host.auto();
    let id = host.call(&run, "create_note", json!({"title": "T", "body": "b", "tags": ["x"]})).unwrap()["id"].as_str().unwrap().to_string();

    // `write` asks in default mode; a denial never reaches the impl.
    let approver = ScriptedApprover::new([Approval::Deny("not now".into())]);
    let asking = host.run(Mode::Default, approver.clone());
    let denied = host.call(&asking, "tag_note", json!({"note_id": id, "tags": ["y"]})).unwrap_err();
    assert_eq!(denied.code, ErrorCode::PermissionDenied);
    assert_eq!(approver.asked()[0].capability, "notes.tag_note");
    assert_eq!(host.call(&run, "read_note", json!(id.clone())).unwrap()["tags"], json!(["x"]));

    // The schema from schemars is enforced before the impl (minItems: 1).
    let refused = host.call(&run, "tag_note", json!({"note_id": id, "tags": []})).unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidArguments);
    assert!(refused.message.contains("/tags"), "{}", refused.message);

    // camelCase folds onto the Rust field names like any capability's.
    assert_eq!(host.call(&run, "tag_note", json!({"noteId": id, "tags": ["y", "x"]})).unwrap(), json!({"tags": ["x", "y"]}));
    assert_eq!(host.call(&run, "read_note", json!(id)).unwrap()["tags"], json!(["x", "y"]));
}

#[test]
fn workspace_files_round_trip_and_stay_confined() {
    let host = Host::new("files");
    let run = host.auto();
    assert_eq!(host.call(&run, "write_file", json!({"path": "docs/a.txt", "content": "one\ntwo\nthree\n"})).unwrap(), json!({"bytes_written": 14}));
    assert_eq!(
        host.call(&run, "read_file", json!({"path": "docs/a.txt", "offset": 1, "limit": 1})).unwrap(),
        json!({"content": "two\n", "total_lines": 3, "truncated": true})
    );
    assert_eq!(
        host.call(&run, "list_files", json!({"recursive": true})).unwrap(),
        json!({"entries": [{"path": "docs", "kind": "directory", "size": null}, {"path": "docs/a.txt", "kind": "file", "size": 14}]})
    );
    assert_eq!(
        host.call(&run, "search_files", json!({"query": "TWO"})).unwrap(),
        json!({"matches": [{"path": "docs/a.txt", "line": 2, "text": "two"}]})
    );
    host.call(&run, "move_file", json!({"from": "docs/a.txt", "to": "b.txt"})).unwrap();
    let err = host.call(&run, "write_file", json!({"path": "b.txt", "content": "x", "mode": "create_new"})).unwrap_err();
    assert_eq!(err.code, ErrorCode::Failed);
    host.call(&run, "delete_file", json!({"path": "b.txt"})).unwrap();
    host.call(&run, "delete_file", json!({"path": "docs"})).unwrap();
    assert!(!host.dir.path().join("docs").exists());

    // Path escapes are refused: `..`, absolute paths, symlinks out.
    for path in ["../outside.txt", "/etc/passwd", "a/../../x"] {
        let err = host.call(&run, "read_file", json!({ "path": path })).unwrap_err();
        assert!(err.message.contains("leaves the workspace") || err.message.contains("absolute"), "{path}: {}", err.message);
    }
    let outside = TempDir::new("agent-host-outside");
    outside.write("secret.txt", "secret");
    std::os::unix::fs::symlink(outside.path(), host.dir.path().join("link")).unwrap();
    let err = host.call(&run, "read_file", json!({"path": "link/secret.txt"})).unwrap_err();
    assert!(err.message.contains("symlink"), "{}", err.message);
    let err = host.call(&run, "write_file", json!({"path": "link/new.txt", "content": "x"})).unwrap_err();
    assert!(err.message.contains("symlink"), "{}", err.message);
    assert!(!outside.path().join("new.txt").exists());
}

#[test]
fn notes_and_memory_persist_in_the_workspace() {
    let host = Host::new("notes");
    let run = host.auto();
    let id = host.call(&run, "create_note", json!({"title": "Plan", "body": "b", "tags": ["x"]})).unwrap()["id"].as_str().unwrap().to_string();
    host.call(&run, "update_note", json!({"note_id": id, "body": "new body"})).unwrap();
    // A second run (a later session) sees what the first stored.
    let later = host.auto();
    assert_eq!(host.call(&later, "read_note", json!(id.clone())).unwrap(), json!({"id": id, "title": "Plan", "body": "new body", "tags": ["x"]}));
    let listed = host.call(&later, "list_notes", json!({"tag": "x"})).unwrap();
    assert_eq!(listed["notes"][0]["id"], json!(id));
    host.call(&later, "delete_note", json!({ "note_id": id })).unwrap();
    assert_eq!(host.call(&later, "list_notes", json!({})).unwrap(), json!({"notes": []}));

    host.call(&run, "remember", json!({"key": "user.name", "value": "Ada"})).unwrap();
    host.call(&run, "remember", json!({"key": "user.mood", "value": "busy", "scope": "session"})).unwrap();
    assert_eq!(host.call(&run, "recall", json!({"key": "user.", "prefix": true})).unwrap(), json!({"facts": {"user.mood": "busy", "user.name": "Ada"}}));
    assert_eq!(host.call(&later, "recall", json!({"key": "user.", "prefix": true})).unwrap(), json!({"facts": {"user.name": "Ada"}}), "session facts do not outlive the session");
    host.call(&later, "forget", json!({"key": "user.name"})).unwrap();
    assert_eq!(host.call(&later, "forget", json!({"key": "user.name"})).unwrap_err().code, ErrorCode::Failed);
}

#[test]
fn commands_run_for_real_and_time_out() {
    let host = Host::new("shell");
    let run = host.auto();
    let out = host.call(&run, "run_command", json!({"program": "sh", "args": ["-c", "cat; echo err >&2; exit 3"], "stdin": "in"})).unwrap();
    assert_eq!(out, json!({"exit_code": 3, "stdout": "in", "stderr": "err\n", "timed_out": false}));
    let started = std::time::Instant::now();
    let out = host.call(&run, "run_command", json!({"program": "sleep", "args": ["5"], "timeout_ms": 200})).unwrap();
    assert_eq!(out["timed_out"], json!(true));
    assert_eq!(out["exit_code"], Value::Null);
    assert!(started.elapsed() < std::time::Duration::from_secs(4), "the timeout killed the process");
    assert!(host.call(&run, "which_program", json!({"program": "sh"})).unwrap()["path"].as_str().unwrap().ends_with("/sh"));
    let names = host.call(&run, "get_environment", json!({})).unwrap();
    assert!(names["names"].as_array().unwrap().iter().any(|n| n == "PATH"));
    let err = host.call(&run, "run_command", json!({"program": "no-such-program-xyz"})).unwrap_err();
    assert!(err.message.contains("cannot start"), "{}", err.message);
}

/// Each request a test server saw: its request line and body.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// A tiny HTTP server on 127.0.0.1 that answers `count` requests and
/// records each request line and body.
fn serve(count: usize) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(count) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            record.lock().unwrap().push((request_line.trim().to_string(), String::from_utf8(body).unwrap()));
            let page = "<html><a href=\"/next\">Next <b>page</b></a> <a href='http://other.example/x'>Other</a></html>";
            let reply = format!("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nx-test: yes\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}", page.len());
            stream.write_all(reply.as_bytes()).unwrap();
        }
    });
    (url, seen)
}

#[test]
fn web_capabilities_talk_http() {
    let host = Host::new("web");
    let run = host.auto();
    let (url, seen) = serve(5);
    let page = host.call(&run, "fetch_url", json!({"url": format!("{url}/page"), "max_bytes": 10})).unwrap();
    assert_eq!((page["status"].clone(), page["body"].clone(), page["truncated"].clone()), (json!(200), json!("<html><a h"), json!(true)));
    assert_eq!(page["headers"]["x-test"], json!("yes"));
    let links = host.call(&run, "extract_links", json!({"url": format!("{url}/"), "same_host_only": true})).unwrap();
    assert_eq!(links, json!({"links": [{"href": "/next", "text": "Next page"}]}));
    assert_eq!(host.call(&run, "download_file", json!({"url": format!("{url}/file"), "path": "dl/page.html"})).unwrap()["bytes"], json!(92));
    assert!(host.dir.path().join("dl/page.html").is_file());
    let posted = host.call(&run, "post_webhook", json!({"url": format!("{url}/hook"), "payload": {"event": "done", "n": 1}})).unwrap();
    assert_eq!(posted, json!({"status": 200}));
    let form = host.call(&run, "post_webhook", json!({"url": format!("{url}/form"), "payload": {"a b": "c&d"}, "content_type": "application/x-www-form-urlencoded"})).unwrap();
    assert_eq!(form, json!({"status": 200}));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[3], ("POST /hook HTTP/1.1".to_string(), r#"{"event":"done","n":1}"#.to_string()));
    assert_eq!(seen[4].1, "a+b=c%26d");
}

#[test]
fn plan_steps_meet_the_gate() {
    let host = Host::new("plan");
    let approver = ScriptedApprover::new([Approval::AllowOnce]);
    let run = host.run(Mode::Default, approver.clone());
    let plan = host
        .call(
            &run,
            "create_plan",
            json!({"goal": "two files", "steps": [
                {"title": "first", "action": {"capability": "write_file", "args": {"path": "one.txt", "content": "1"}}},
                {"title": "second", "depends_on": [0], "action": {"capability": "write_file", "args": {"path": "two.txt", "content": "2"}}},
                {"title": "think", "action": "decide what comes next"}
            ]}),
        )
        .unwrap();
    let id = plan["plan_id"].as_str().unwrap().to_string();
    // create_plan (write) took the one scripted answer; run_plan (external)
    // asks too, and with the script empty it is denied.
    let outcome = host.call(&run, "run_plan", json!({ "plan_id": id })).unwrap_err();
    assert_eq!(outcome.code, ErrorCode::PermissionDenied);
    approver.push(Approval::AllowOnce); // run_plan
    approver.push(Approval::AllowOnce); // step 1
    approver.push(Approval::Deny("no second file".into())); // step 2
    let outcome = host.call(&run, "run_plan", json!({ "plan_id": id })).unwrap();
    assert_eq!(outcome, json!({"completed": 1, "failed": 1}));
    assert!(host.dir.path().join("one.txt").is_file() && !host.dir.path().join("two.txt").exists());
    let shown = host.call(&run, "get_plan", json!({ "plan_id": id })).unwrap();
    assert_eq!(shown["steps"], json!([{"title": "first", "status": "done"}, {"title": "second", "status": "failed"}, {"title": "think", "status": "pending"}]));
    // update_step (write) asks; allowed, the step's status changes.
    approver.push(Approval::AllowOnce);
    host.call(&run, "update_step", json!({"plan_id": id, "step": 2, "status": "skipped", "note": "manual"})).unwrap();
    let shown = host.call(&run, "get_plan", json!({ "plan_id": id })).unwrap();
    assert_eq!(shown["steps"][2], json!({"title": "think", "status": "skipped"}));
    let err = host.call(&host.auto(), "update_step", json!({"plan_id": id, "step": 3, "status": "done"})).unwrap_err();
    assert!(err.message.contains("has 3 steps; there is no step 3"), "{}", err.message);
    let receipts: Vec<(String, Option<GateDecision>, Status)> = run.receipts().iter().map(|r| (r.capability.clone(), r.decision, r.status)).collect();
    assert_eq!(receipts[2], ("workspace.write_file".to_string(), Some(GateDecision::Approved), Status::Ok), "a step is its own gated call");
    let err = host.call(&run, "delegate_task", json!({"agent": "coder", "task": "x"})).unwrap_err();
    assert_eq!(err.code, ErrorCode::PermissionDenied);
    let err = host.call(&host.auto(), "delegate_task", json!({"agent": "coder", "task": "x"})).unwrap_err();
    assert!(err.message.contains("no other agent is connected"), "{}", err.message);
}

#[test]
fn cli_call_prints_the_result_and_the_receipt() {
    let dir = TempDir::new("agent-host-cli");
    dir.write("a.txt", "hi\n");
    let bin = env!("CARGO_BIN_EXE_agent-host");
    let ok = std::process::Command::new(bin).args(["call", "read_file", r#"{"path": "a.txt"}"#, "--workspace"]).arg(dir.path()).output().unwrap();
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "{\"result\":{\"content\":\"hi\\n\",\"total_lines\":1,\"truncated\":false}}\n");
    assert!(String::from_utf8_lossy(&ok.stderr).contains(r#"receipt: {"principal":"local","capability":"workspace.read_file","decision":"auto","status":"ok""#));
    // Not a terminal: an `ask` is denied with a named reason.
    let denied = std::process::Command::new(bin)
        .args(["call", "write_file", r#"{"path": "b.txt", "content": "x"}"#, "--workspace"])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(denied.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&denied.stdout).contains("stdin is not a terminal"));
    let usage = std::process::Command::new(bin).args(["call"]).output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
    let catalog = std::process::Command::new(bin).args(["catalog", "--modules", "notes"]).output().unwrap();
    assert!(String::from_utf8_lossy(&catalog.stdout).starts_with("## notes\n"));
}

#[test]
fn every_subcommand_explains_itself() {
    let bin = env!("CARGO_BIN_EXE_agent-host");
    for (command, flag) in [("run", "--json"), ("catalog", "--modules"), ("call", "--mode")] {
        let help = std::process::Command::new(bin).args([command, "--help"]).output().unwrap();
        assert_eq!(help.status.code(), Some(0), "{command}");
        assert!(String::from_utf8_lossy(&help.stdout).contains(flag), "{command} --help names {flag}");
    }
    let bad = std::process::Command::new(bin).args(["call", "read_file", "--mode", "yolo"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown mode `yolo`; use plan, default, accept-edits or auto"));
}

#[test]
fn search_finds_mounted_capabilities_by_what_they_do() {
    let registry = agent_host::registry().unwrap();
    let all = registry.mount_all();
    let hits = all.search("delete a file from the workspace", 3);
    assert_eq!((hits[0].module, hits[0].name), ("workspace", "delete_file"), "{hits:?}");
    let notes_only = registry.mount(&["notes"]).unwrap();
    let hits = notes_only.search("delete a file from the workspace", 5);
    assert!(hits.iter().all(|h| h.module == "notes"), "only mounted modules are searched: {hits:?}");
    assert_eq!(all.search("remember a fact for later", 1)[0].name, "remember");
}
