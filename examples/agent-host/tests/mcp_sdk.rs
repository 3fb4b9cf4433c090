//! `agent-host serve` with the official MCP TypeScript SDK as its client:
//! v1 (tests/ts/mcp-e2e.mjs, protocol 2025-11-25) over stdio and Streamable
//! HTTP — both surfaces, the resources, elicitation accepted and declined,
//! plan mode, missing and wrong tokens, malformed input, an oversized body,
//! and 32 concurrent sessions × 50 calls with every receipt accounted for
//! and no approval shared; and the v2 client pinned to 2026-07-28
//! (tests/ts/mcp-v2.mjs); and the v1 client's own OAuth flow against a real
//! authorization server, oidc-provider (tests/ts/oauth-e2e.mjs). Skip with a notice where node or the pinned SDK is
//! absent; CI (which installs them) sets CAPSPEC_REQUIRE_NODE_TOOLS so they
//! may not.

use capspec_testkit::{TempDir, node_script};

fn summary(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("no JSON summary ({e}): {line}"))
}

#[test]
fn the_typescript_sdk_drives_every_surface_and_transport() {
    let scratch = TempDir::new("mcp-sdk-e2e");
    let binary = env!("CARGO_BIN_EXE_agent-host");
    let Some(last) = node_script("mcp-e2e.mjs", "@modelcontextprotocol/sdk", &[binary.as_ref(), scratch.path().as_os_str()]) else { return };
    let summary = summary(&last);
    for part in ["stdio_code", "stdio_tools", "http_plan"] {
        assert_eq!(summary[part], "ok", "{part}: {summary}");
    }
    assert_eq!(summary["load"]["calls"], 1600, "{summary}");
    eprintln!("MCP load (32 sessions x 50 calls, debug build): {}", summary["load"]);
}

/// The TypeScript SDK v2 client (`@modelcontextprotocol/client`, pinned)
/// on protocol revision 2026-07-28: tools, a read call, an ask accepted and
/// one declined through `input_required`, both resources, `execute_code`,
/// `view_image`'s image block, and actions that ask resumed by replay (two
/// approvals with each write once, an approval then a decline, a file
/// changed between rounds).
#[test]
fn the_typescript_sdk_v2_client_works_on_2026_07_28() {
    let scratch = TempDir::new("mcp-sdk-v2");
    let binary = env!("CARGO_BIN_EXE_agent-host");
    let Some(last) = node_script("mcp-v2.mjs", "@modelcontextprotocol/client", &[binary.as_ref(), scratch.path().as_os_str()]) else { return };
    assert_eq!(summary(&last), serde_json::json!({"tools": "ok", "image": "ok", "code": "ok", "replay": "ok"}));
}

/// `agent-host serve --oauth-issuer` with oidc-provider (pinned) as the
/// authorization server and the TypeScript SDK's OAuth client: the 401,
/// discovery of both metadata documents, dynamic registration, PKCE with the
/// `resource`, the browser's log-in and consent (driven over HTTP), a read
/// as `alice`, then a write that is a 403 `insufficient_scope`, the SDK's
/// step-up to `capspec:write`, and the same write run.
#[test]
fn the_typescript_sdk_logs_in_through_a_real_authorization_server_and_steps_up() {
    let scratch = TempDir::new("mcp-sdk-oauth");
    let binary = env!("CARGO_BIN_EXE_agent-host");
    let Some(last) = node_script("oauth-e2e.mjs", "oidc-provider", &[binary.as_ref(), scratch.path().as_os_str()]) else { return };
    let summary = summary(&last);
    assert_eq!(summary["flow"], "ok", "{summary}");
    assert_eq!(summary["scopes"], serde_json::json!(["capspec:read", "capspec:write"]), "{summary}");
}
