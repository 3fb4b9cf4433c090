//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in tests/ts) against `agent-host serve --http`: every server
//! scenario whose feature capspec offers — initialize, ping, tools/list,
//! resources/list, concurrent POST streams and DNS-rebinding protection.
//! The suite needs `fs.globSync` (Node 22+); `tests/ts/node20` supplies it on
//! Node 20. Skips with a notice where node or the suite is absent; CI (which
//! installs them) sets CAPSPEC_REQUIRE_NODE_TOOLS so it may not.

use capspec_testkit::{TempDir, node_script};

#[test]
fn the_official_conformance_suite_passes_every_applicable_server_scenario() {
    let scratch = TempDir::new("mcp-conformance");
    let binary = env!("CARGO_BIN_EXE_agent-host");
    let Some(last) = node_script("conformance.mjs", "@modelcontextprotocol/conformance", &[binary.as_ref(), scratch.path().as_os_str()]) else { return };
    let summary: serde_json::Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("no JSON summary ({e}): {last}"));
    for scenario in ["server-initialize", "ping", "tools-list", "resources-list", "server-sse-multiple-streams", "dns-rebinding-protection"] {
        let passed = summary["scenarios"][scenario].as_str().unwrap_or_else(|| panic!("{scenario} did not run: {summary}"));
        let (ok, all) = passed.split_once('/').expect("passed/total");
        assert!(ok == all && ok != "0", "{scenario}: {passed}");
    }
}
