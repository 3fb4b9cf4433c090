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
    conformance(&[]);
}

/// The same scenarios against the endpoint merged into an axum app that
/// serves a route of its own (`serve --app`, `capspec::mcp::router`).
#[test]
fn the_official_conformance_suite_passes_against_the_endpoint_inside_an_app() {
    conformance(&["--app"]);
}

fn conformance(extra: &[&str]) {
    let scratch = TempDir::new("mcp-conformance");
    let binary = env!("CARGO_BIN_EXE_agent-host");
    let mut args: Vec<&std::ffi::OsStr> = vec![binary.as_ref(), scratch.path().as_os_str()];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    let Some(last) = node_script("conformance.mjs", "@modelcontextprotocol/conformance", &args) else { return };
    let summary: serde_json::Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("no JSON summary ({e}): {last}"));
    for scenario in ["server-initialize", "ping", "tools-list", "resources-list", "server-sse-multiple-streams", "dns-rebinding-protection"] {
        let passed = summary["scenarios"][scenario].as_str().unwrap_or_else(|| panic!("{scenario} did not run: {summary}"));
        let (ok, all) = passed.split_once('/').expect("passed/total");
        assert!(ok == all && ok != "0", "{scenario}: {passed}");
    }
}
