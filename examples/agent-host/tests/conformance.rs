//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in tests/ts) against `agent-host serve --http`: every server
//! scenario whose feature capspec offers — initialize, ping, tools/list,
//! resources/list, concurrent POST streams and DNS-rebinding protection.
//! The suite needs `fs.globSync` (Node 22+); `tests/ts/node20` supplies it on
//! Node 20. Skips with a notice where node or the suite is absent; CI (which
//! installs them) sets CAPSPEC_REQUIRE_NODE_TOOLS so it may not.

use std::process::Command;

use capspec_testkit::{TempDir, repo_root, skip};

#[test]
fn the_official_conformance_suite_passes_every_applicable_server_scenario() {
    let ts = repo_root().join("tests/ts");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !ts.join("node_modules/@modelcontextprotocol/conformance").is_dir() {
        skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), "node or @modelcontextprotocol/conformance is not installed (run `npm ci --prefix tests/ts`); skipping the MCP conformance suite");
        return;
    }
    let scratch = TempDir::new("mcp-conformance");
    let out = Command::new("node").arg(ts.join("conformance.mjs")).arg(env!("CARGO_BIN_EXE_agent-host")).arg(scratch.path()).current_dir(&ts).output().expect("node runs");
    let text = capspec_testkit::text(&out);
    assert!(out.status.success(), "the conformance suite failed:\n{text}");
    let last = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_string();
    let summary: serde_json::Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("no JSON summary ({e}):\n{text}"));
    for scenario in ["server-initialize", "ping", "tools-list", "resources-list", "server-sse-multiple-streams", "dns-rebinding-protection"] {
        let passed = summary["scenarios"][scenario].as_str().unwrap_or_else(|| panic!("{scenario} did not run: {text}"));
        let (ok, all) = passed.split_once('/').expect("passed/total");
        assert!(ok == all && ok != "0", "{scenario}: {passed}\n{text}");
    }
}
