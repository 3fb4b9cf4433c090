//! Guest actions through the real host, the way `agent-host run` runs them:
//! every mode, overlapping calls, refusals, and the shipped example actions.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent_host::capabilities::memory::SessionMemory;
use agent_host::workspace::Workspace;
use capspec::guest::Guest;
use capspec::{Gate, Mode, Run};
use capspec_testkit::TempDir;
use serde_json::{Value, json};

/// An empty workspace, removed when the test ends (also when it fails).
fn workspace(name: &str) -> TempDir {
    TempDir::new(&format!("agent-host-actions-{name}"))
}

fn run_action(dir: &std::path::Path, mode: Mode, source: &str) -> (Option<Value>, Vec<(String, String, String)>) {
    let mounted = agent_host::registry().unwrap().mount_all();
    let run = Run::new(Gate::headless(mode, "actions test")).with(Workspace::new(dir).unwrap()).with(SessionMemory::default()).with(mounted.clone());
    let outcome = Guest::new(mounted).run(&run, source);
    let receipts = run
        .receipts()
        .iter()
        .map(|r| {
            let v = serde_json::to_value(r).unwrap();
            (r.capability.clone(), v["decision"].as_str().unwrap_or("-").to_string(), v["status"].as_str().unwrap().to_string())
        })
        .collect();
    (outcome.result, receipts)
}

const WRITE_THEN_RUN: &str = r#"import workspace from "@capspec/host/workspace";
import shell from "@capspec/host/shell";
export default async () => {
  const out = {};
  for (const [key, call] of [["list", () => workspace.list_files({})], ["write", () => workspace.write_file({ path: "a.txt", content: "x" })], ["exec", () => shell.run_command({ program: "true" })]]) {
    try { await call(); out[key] = "ok"; } catch (e) { out[key] = e.code; }
  }
  return out;
};"#;

#[test]
fn every_mode_through_the_sandbox() {
    for (mode, expected, decisions) in [
        (Mode::Plan, json!({"list": "ok", "write": "blocked_in_plan_mode", "exec": "blocked_in_plan_mode"}), ["auto", "blocked", "blocked"]),
        (Mode::Default, json!({"list": "ok", "write": "permission_denied", "exec": "permission_denied"}), ["auto", "denied", "denied"]),
        (Mode::AcceptEdits, json!({"list": "ok", "write": "ok", "exec": "permission_denied"}), ["auto", "auto", "denied"]),
        (Mode::Auto, json!({"list": "ok", "write": "ok", "exec": "ok"}), ["auto", "auto", "auto"]),
    ] {
        let dir = workspace(&format!("{mode:?}"));
        let (result, receipts) = run_action(dir.path(), mode, WRITE_THEN_RUN);
        assert_eq!(result, Some(expected), "{mode:?}");
        let got: Vec<&str> = receipts.iter().map(|r| r.1.as_str()).collect();
        assert_eq!(got, decisions, "{mode:?}");
        assert_eq!(dir.path().join("a.txt").exists(), matches!(mode, Mode::AcceptEdits | Mode::Auto), "{mode:?}: the impl ran only when allowed");
    }
}

#[test]
fn calls_started_together_run_together() {
    let dir = workspace("overlap");
    let started = Instant::now();
    let (result, receipts) = run_action(
        dir.path(),
        Mode::Auto,
        r#"import shell from "@capspec/host/shell";
export default async () => (await Promise.all([1, 2, 3].map(() => shell.run_command({ program: "sleep", args: ["0.4"] })))).map((r) => r.exit_code);"#,
    );
    assert_eq!(result, Some(json!([0, 0, 0])));
    assert_eq!(receipts.len(), 3);
    // Three 400 ms processes: overlapped, well under the 1.2 s they take in a row.
    assert!(started.elapsed() < Duration::from_millis(1100), "took {:?}", started.elapsed());
}

#[test]
fn path_escapes_and_exec_timeouts_are_refused_in_actions() {
    let dir = workspace("escape");
    let (result, _) = run_action(
        dir.path(),
        Mode::Auto,
        r#"import workspace from "@capspec/host/workspace";
import shell from "@capspec/host/shell";
export default async () => {
  let escape;
  try { await workspace.read_file({ path: "../../etc/passwd" }); } catch (e) { escape = [e.code, e.message]; }
  const slow = await shell.run_command({ program: "sleep", args: ["5"], timeout_ms: 100 });
  return { escape, timed_out: slow.timed_out };
};"#,
    );
    assert_eq!(result, Some(json!({"escape": ["failed", "`../../etc/passwd` leaves the workspace"], "timed_out": true})));
}

fn agent_host(args: &[&str], dir: &std::path::Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .args(args)
        .arg("--workspace")
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn action(name: &str) -> String {
    format!("{}/actions/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_shipped_tour_touches_every_module() {
    let dir = workspace("tour");
    let (code, stdout) = agent_host(&["run", &action("tour.js"), "--mode", "auto", "--json"], dir.path());
    assert_eq!(code, 0, "{stdout}");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["result"]["shell"], "shell works");
    assert_eq!(value["result"]["plan"], json!({"plan_id": "plan-1"}));
    assert_eq!(value["result"]["web"], json!({"refused": "failed"}));
    assert_eq!(value["result"]["files"], json!(["hello.txt"]));
    assert_eq!(value["result"]["tagged"], json!({"tags": ["guest", "tour"]}), "the code-first tag_note runs from a guest");
    let modules: std::collections::BTreeSet<&str> =
        value["receipts"].as_array().unwrap().iter().map(|r| r["capability"].as_str().unwrap().split('.').next().unwrap()).collect();
    assert_eq!(modules.into_iter().collect::<Vec<_>>(), ["memory", "notes", "plan", "shell", "web", "workspace"]);
    for r in value["receipts"].as_array().unwrap() {
        assert!(r["ms"].is_number() && r["decision"].is_string() && r["status"].is_string(), "{r}");
    }
    assert_eq!(value["logs"], json!(["mounted: 28 capabilities", "web.fetch_url: failed"]));
    // In default mode without a terminal, every ask is denied — and shown, not fatal.
    let (code, stdout) = agent_host(&["run", &action("tour.js"), "--json"], dir.path());
    assert_eq!(code, 0, "{stdout}");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["result"]["wrote"], json!({"refused": "permission_denied"}));
    assert_eq!(value["result"]["matches"], json!(1), "reads still run");
}

#[test]
fn the_shipped_denial_is_caught_and_the_run_completes() {
    let dir = workspace("denied");
    let (code, stdout) = agent_host(&["run", &action("denied.js")], dir.path());
    assert_eq!(code, 0, "a caught denial is a completed action: {stdout}");
    assert!(stdout.contains("caught: permission_denied"), "{stdout}");
    assert!(stdout.contains("workspace.write_file         denied    refused"), "{stdout}");
    assert!(!dir.path().join("blocked.txt").exists());
    // An action that throws exits 1; a usage error exits 2.
    dir.write("throws.js", "export default () => { throw new Error('no'); };");
    let (code, stdout) = agent_host(&["run", &dir.path().join("throws.js").to_string_lossy(), "--json"], dir.path());
    assert_eq!(code, 1);
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap()["error"], json!({"kind": "threw", "message": "no", "code": null}));
    let (code, _) = agent_host(&["run", "/no/such/action.js"], dir.path());
    assert_eq!(code, 2);
}
