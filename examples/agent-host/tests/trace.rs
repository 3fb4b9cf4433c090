//! Tracing as a user turns it on: `agent-host run ACTION --trace-file FILE`
//! writes one JSON span per line; each capability call is an
//! `execute_tool <wire name>` span with OpenTelemetry's GenAI attributes
//! and capspec's, under the span of the guest action that made it — also
//! for calls the action starts together (they run on other threads).

use std::process::Command;

use capspec_testkit::{TempDir, text};
use serde_json::Value;

const ACTION: &str = r#"import workspace from "@capspec/host/workspace";
export default async () => {
  await workspace.write_file({ path: "a.txt", content: "hi" });
  const [read] = await Promise.all([workspace.read_file({ path: "a.txt" }), workspace.list_files({})]);
  try { await workspace.read_file({ path: "" }); } catch (e) { return [read.content, e.code]; }
};
"#;

#[test]
fn every_call_is_an_execute_tool_span_under_its_action() {
    let dir = TempDir::new("agent-host-trace");
    dir.write("action.js", ACTION);
    let trace = dir.path().join("trace.jsonl");
    let ws = dir.path().join("ws");
    let out = Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .args(["run", "action.js", "--json", "--mode", "accept-edits", "--workspace"])
        .arg(&ws)
        .arg("--trace-file")
        .arg(&trace)
        .current_dir(dir.path())
        .output()
        .expect("agent-host runs");
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["result"], serde_json::json!(["hi", "invalid_arguments"]));

    let spans: Vec<Value> = std::fs::read_to_string(&trace).unwrap().lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    let action: Vec<&Value> = spans.iter().filter(|s| s["name"] == "run_action").collect();
    assert_eq!(action.len(), 1, "{spans:#?}");
    assert_eq!(action[0]["parent_id"], Value::Null);
    let mut tools: Vec<&Value> = spans.iter().filter(|s| s["attributes"]["gen_ai.operation.name"] == "execute_tool").collect();
    tools.sort_by_key(|s| s["span_id"].as_u64());
    assert_eq!(tools.len(), 4, "{spans:#?}");
    for span in &tools {
        assert_eq!(span["parent_id"], action[0]["span_id"], "every call's parent is the action: {span}");
        let attributes = &span["attributes"];
        assert_eq!(span["name"], format!("execute_tool {}", attributes["gen_ai.tool.name"].as_str().unwrap()));
        assert_eq!(attributes["capspec.module"], "workspace");
        assert_eq!(attributes["capspec.mode"], "accept_edits");
        assert_eq!(attributes["enduser.id"], "local", "who called: the principal of an in-process run");
    }
    let summary: Vec<(&str, &str, &str, &str, &str)> = tools
        .iter()
        .map(|s| {
            let a = &s["attributes"];
            let get = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("-");
            (get("gen_ai.tool.name"), get("capspec.category"), get("capspec.decision"), get("capspec.status"), get("error.type"))
        })
        .collect();
    // The two calls started together may be opened in either order.
    let mut middle = summary[1..3].to_vec();
    middle.sort();
    assert_eq!(summary[0], ("write_file", "write", "auto", "ok", "-"));
    assert_eq!(middle, [("list_files", "read", "auto", "ok", "-"), ("read_file", "read", "auto", "ok", "-")]);
    assert_eq!(summary[3], ("read_file", "read", "-", "refused", "invalid_arguments"), "refused before the gate: no decision");
}

/// Over MCP, the request is the parent: `tools/call execute_code` →
/// `run_action` → `execute_tool …`, from a raw stdio session.
#[test]
fn an_mcp_request_is_the_parent_of_its_action_and_calls() {
    use std::io::{BufRead, BufReader, Write};
    let dir = TempDir::new("agent-host-trace-mcp");
    let trace = dir.path().join("trace.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .args(["serve", "--mode", "auto", "--workspace"])
        .arg(dir.path().join("ws"))
        .arg("--trace-file")
        .arg(&trace)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("agent-host serve starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut reply = |stdin: &mut std::process::ChildStdin, message: Value| {
        writeln!(stdin, "{message}").unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    let init = reply(&mut stdin, serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "trace-test", "version": "1"}}}));
    // The reference host says what it is: its own package, not capspec.
    assert_eq!((init["result"]["serverInfo"]["name"].as_str(), init["result"]["serverInfo"]["version"].as_str()), (Some("agent-host"), Some(env!("CARGO_PKG_VERSION"))), "{init}");
    writeln!(stdin, "{}", serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    let code = "import workspace from \"@capspec/host/workspace\";\nexport default async () => (await workspace.list_files({})).entries.length;";
    let called = reply(&mut stdin, serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "execute_code", "arguments": {"code": code}}}));
    assert_eq!(called["result"]["isError"], false, "{called}");
    drop(stdin);
    assert!(child.wait().unwrap().success());

    let spans: Vec<Value> = std::fs::read_to_string(&trace).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let find = |name: &str| spans.iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("no span {name}: {spans:#?}"));
    let request = find("tools/call execute_code");
    assert_eq!(request["attributes"]["mcp.method.name"], "tools/call");
    // (rmcp's own service span, if any, may be the request's parent.)
    let action = find("run_action");
    assert_eq!(action["parent_id"], request["span_id"]);
    let call = find("execute_tool list_files");
    assert_eq!(call["parent_id"], action["span_id"]);
    assert_eq!(call["attributes"]["capspec.status"], "ok");
}
