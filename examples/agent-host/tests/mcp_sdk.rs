//! `agent-host serve` with the official MCP TypeScript SDK as its client
//! (tests/ts/mcp-e2e.mjs): stdio and Streamable HTTP, both surfaces, the
//! resources, elicitation accepted and declined, plan mode, missing and
//! wrong tokens, malformed input, an oversized body, and 32 concurrent
//! sessions × 50 calls with every receipt accounted for and no approval
//! shared. Skips with a notice where node or the pinned SDK is absent;
//! CI (which installs them) sets CAPSPEC_REQUIRE_NODE_TOOLS so it may not.

use std::process::Command;

use capspec_testkit::{TempDir, repo_root, skip};

#[test]
fn the_typescript_sdk_drives_every_surface_and_transport() {
    let ts = repo_root().join("tests/ts");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !ts.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), "node or @modelcontextprotocol/sdk is not installed (run `npm ci --prefix tests/ts`); skipping the MCP SDK end-to-end test");
        return;
    }
    let scratch = TempDir::new("mcp-sdk-e2e");
    let out = Command::new("node")
        .arg(ts.join("mcp-e2e.mjs"))
        .arg(env!("CARGO_BIN_EXE_agent-host"))
        .arg(scratch.path())
        .current_dir(&ts)
        .output()
        .expect("node runs");
    let text = capspec_testkit::text(&out);
    assert!(out.status.success(), "the SDK client failed:\n{text}");
    let summary = String::from_utf8_lossy(&out.stdout);
    let last = summary.lines().last().unwrap_or_default();
    let summary: serde_json::Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("no JSON summary ({e}):\n{text}"));
    for part in ["stdio_code", "stdio_tools", "http_plan"] {
        assert_eq!(summary[part], "ok", "{part}: {text}");
    }
    assert_eq!(summary["load"]["calls"], 1600, "{text}");
    eprintln!("MCP load (32 sessions x 50 calls, debug build): {}", summary["load"]);
}

/// The TypeScript SDK v2 client (`@modelcontextprotocol/client`, pinned)
/// on protocol revision 2026-07-28 (tests/ts/mcp-v2.mjs): tools, a read
/// call, an ask accepted and one declined through `input_required`, both
/// resources, and `execute_code`.
#[test]
fn the_typescript_sdk_v2_client_works_on_2026_07_28() {
    let ts = repo_root().join("tests/ts");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !ts.join("node_modules/@modelcontextprotocol/client").is_dir() {
        skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), "node or @modelcontextprotocol/client is not installed (run `npm ci --prefix tests/ts`); skipping the SDK v2 test");
        return;
    }
    let scratch = TempDir::new("mcp-sdk-v2");
    let out = Command::new("node").arg(ts.join("mcp-v2.mjs")).arg(env!("CARGO_BIN_EXE_agent-host")).arg(scratch.path()).current_dir(&ts).output().expect("node runs");
    let text = capspec_testkit::text(&out);
    assert!(out.status.success(), "the SDK v2 client failed:\n{text}");
    let last = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_string();
    let summary: serde_json::Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("no JSON summary ({e}):\n{text}"));
    assert_eq!(summary, serde_json::json!({"tools": "ok", "code": "ok"}), "{text}");
}
