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
