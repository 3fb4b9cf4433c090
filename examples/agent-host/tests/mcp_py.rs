//! `agent-host serve` with Python's official MCP client (`mcp`, pinned in
//! tests/py/requirements.txt), over stdio and over Streamable HTTP
//! (tests/py/mcp_e2e.py): tools, a read call, a refusal as text and
//! `_meta`, both resources. The client negotiates the protocol itself and
//! speaks 2026-07-28, where an `ask` is an `input_required` round: accepted,
//! declined, and forged, altered, expired and replayed states refused; then two
//! instances sharing only the token and the state key behind a round-robin
//! proxy serve 50 approved writes. Skips with a notice where the venv is
//! absent; CI (which builds it) sets CAPSPEC_REQUIRE_PYTHON_TOOLS so it may
//! not. With an OAuth access token (tests/py/oauth_e2e.py): the 401, a
//! read as the token's subject, a write refused with 403 for want of
//! `capspec:write`, and run with it.

use std::process::Command;

use capspec_testkit::{TempDir, repo_root, skip};

/// Run `tests/py/<script>` against agent-host with the venv's Python: its
/// JSON summary (the last line) and everything it printed; `None` (with a
/// notice, or a failure where CI requires Python) when the venv is absent.
fn python_script(script: &str) -> Option<(serde_json::Value, String)> {
    python_script_in(script, &TempDir::new("mcp-python"))
}

/// [`python_script`] with `scratch` as its scratch directory (prepared by the caller).
fn python_script_in(script: &str, scratch: &TempDir) -> Option<(serde_json::Value, String)> {
    let python = repo_root().join("tests/py/.venv/bin/python");
    let installed = Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    if !installed {
        skip(Some("CAPSPEC_REQUIRE_PYTHON_TOOLS"), &format!("Python's mcp client is not installed (python3 -m venv tests/py/.venv && tests/py/.venv/bin/pip install -r tests/py/requirements.txt); skipping {script}"));
        return None;
    }
    let out = Command::new(&python).arg(repo_root().join("tests/py").join(script)).arg(env!("CARGO_BIN_EXE_agent-host")).arg(scratch.path()).output().expect("python runs");
    let text = capspec_testkit::text(&out);
    assert!(out.status.success(), "the Python client failed:\n{text}");
    let last = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_string();
    let summary = serde_json::from_str(&last).unwrap_or_else(|e| panic!("no JSON summary ({e}):\n{text}"));
    Some((summary, text))
}

#[test]
fn the_python_sdk_client_works_over_stdio_and_http_and_approves_through_input_required() {
    let Some((summary, text)) = python_script("mcp_e2e.py") else { return };
    assert_eq!(summary["stdio"], "2026-07-28", "{text}");
    assert_eq!(summary["http"], "2026-07-28", "{text}");
    // A 2025-11-25 session ends without the client warning: its DELETE is
    // answered 200 (rmcp's service says 202, which the client calls a failure).
    assert_eq!(summary["legacy_http"], "2025-11-25", "{text}");
    assert_eq!(summary["session_end_warnings"], serde_json::json!([]), "{text}");
    let refused = serde_json::json!(["altered", "expired", "forged", "replayed"]);
    assert_eq!(summary["gate_refused"], refused, "{text}");
    assert_eq!(summary["scale_out"]["writes"], 50, "{text}");
    assert_eq!(summary["scale_out"]["refused"], refused, "{text}");
    eprintln!("scale-out: {}", summary["scale_out"]);
}

/// The endpoint inside a host's own HTTP app (`serve --app`: an axum app
/// with its own `/health`, capspec's `capspec::mcp::router` merged in), with
/// Python's client (tests/py/app_e2e.py): the app's route answers, the
/// endpoint still refuses a request without the token, and the client lists,
/// reads and is refused a write in plan mode, on 2026-07-28.
#[test]
fn the_python_sdk_client_works_against_the_endpoint_inside_an_app() {
    let Some((summary, text)) = python_script("app_e2e.py") else { return };
    assert_eq!(summary["health"], "ok", "{text}");
    assert_eq!(summary["without_token"], 401, "{text}");
    assert_eq!(summary["read"], "hi from the app\n", "{text}");
    assert_eq!(summary["write"], "blocked_in_plan_mode", "{text}");
    assert_eq!(summary["protocol"], "2026-07-28", "{text}");
}

/// Code mode on 2026-07-28 (tests/py/code_mode_e2e.py): an action that asks
/// is resumed by replay, with the client's default settings, over stdio,
/// over HTTP and across two instances behind a round robin; every write
/// happens once, and tampered states are refused by name.
#[test]
fn the_python_sdk_client_approves_an_actions_asks_and_each_write_happens_once() {
    let Some((summary, text)) = python_script("code_mode_e2e.py") else { return };
    for transport in ["stdio", "http"] {
        assert_eq!(summary[transport]["read_write_write_read"], 2, "two approvals: {text}");
        assert_eq!(summary[transport]["approve_then_decline"], "permission_denied", "{text}");
        assert_eq!(summary[transport]["changed_between_rounds"], serde_json::json!({"first": "original", "again": "changed"}), "{text}");
        assert_eq!(summary[transport]["two_at_once"], 2, "two asks pending at once, asked one after the other: {text}");
    }
    assert_eq!(summary["refused"], serde_json::json!(["altered", "expired", "forged", "other_code", "other_principal"]), "{text}");
    assert!(summary["bounds"]["rounds"].as_str().is_some_and(|m| m.contains("--max-rounds 1")), "{text}");
    assert!(summary["bounds"]["state_bytes"].as_str().is_some_and(|m| m.contains("--max-state-bytes 4096")), "{text}");
    assert_eq!(summary["scale_out"]["writes"], 60, "{text}");
    eprintln!("scale-out: {}", summary["scale_out"]);
}

/// Python's client holding access tokens signed with the fixture issuer
/// key (tests/fixtures/oauth), against `serve --oauth-issuer --jwks-file`.
#[test]
fn the_python_sdk_client_calls_with_an_access_token_and_its_scopes_hold() {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let scratch = TempDir::new("mcp-python-oauth");
    let fixtures = repo_root().join("tests/fixtures/oauth");
    let (issuer, resource) = ("http://127.0.0.1:1/issuer", "http://127.0.0.1:8931/mcp");
    let key = EncodingKey::from_rsa_pem(&std::fs::read(fixtures.join("rsa.pem")).unwrap()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let token = |scope: &str| {
        let claims = serde_json::json!({ "iss": issuer, "sub": "py-user", "aud": resource, "exp": now + 600, "scope": scope });
        jsonwebtoken::encode(&Header { kid: Some("rsa-1".into()), ..Header::new(Algorithm::RS256) }, &claims, &key).unwrap()
    };
    let oauth = serde_json::json!({
        "issuer": issuer, "resource": resource, "jwks": fixtures.join("jwks.json"),
        "read": token("capspec:read"), "write": token("capspec:read capspec:write"),
    });
    scratch.write("oauth.json", oauth.to_string());
    let Some((summary, text)) = python_script_in("oauth_e2e.py", &scratch) else { return };
    assert_eq!(summary["without_token"], 401, "{text}");
    assert_eq!(summary["principal"], "py-user", "{text}");
    assert_eq!(summary["write_with_read_token"], "refused", "{text}");
    assert_eq!(summary["write_with_write_token"], "ok", "{text}");
}

/// Three stdio servers on one serve store at once, each under Python's
/// client (tests/py/audit_e2e.py): two tools surfaces and a code surface,
/// all with the default instance name. Each process writes a chain of its
/// own, every call of each is served and recorded, and every chain
/// verifies. Then the decisions as a person made them: an approved write
/// has one record, `approved`; a declined one, `declined`; a client that
/// could not be asked, `denied_gate` with reason `cannot_ask` and nobody
/// answering. `--arguments` as typed (`{"path": "hello.txt"}`) finds every
/// read, though each ran with its default `offset` applied.
#[test]
fn processes_sharing_a_store_each_write_a_chain_and_record_what_happened() {
    let scratch = TempDir::new("mcp-python-audit");
    scratch.write("ws/hello.txt", "hello\n");
    scratch.write("state.key", [9u8; 32]);
    let store_url = format!("sqlite:{}", scratch.path().join("store.db").display());
    let Some((summary, text)) = python_script_in("audit_e2e.py", &scratch) else { return };
    assert_eq!(summary["served"], serde_json::json!({"tools_a": 20, "tools_b": 20, "code": 20}), "{text}");
    assert_eq!(summary["decisions"], serde_json::json!({"approved": "approved", "declined": "denied", "cannot_ask": ["denied", "cannot_ask"]}), "{text}");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        use capspec_store::{Query, Store, keyed_hash};
        let store = Store::open_existing(&store_url).await.unwrap();
        assert!(store.verify().await.unwrap().is_none(), "every chain verifies");
        let key = capspec::mcp::StateKey::new([9u8; 32]).unwrap().audit_key();
        let typed = Query { args_hmac: vec![keyed_hash(&key, &serde_json::json!({"path": "hello.txt"}))], ..Query::default() };
        let reads = store.query(&typed).await.unwrap();
        let mut instances: Vec<&str> = reads.iter().map(|r| r["instance"].as_str().unwrap()).collect();
        assert_eq!(reads.len(), 60, "every read, found by the arguments as typed: {reads:#?}");
        instances.sort();
        instances.dedup();
        assert_eq!(instances.len(), 3, "one chain per process: {instances:?}");
        let base = instances[0];
        assert!(base.ends_with(":stdio") && instances[1] == format!("{base}#2") && instances[2] == format!("{base}#3"), "{instances:?}");
        let writes = store.query(&Query { capability: Some("workspace.write_file".into()), ..Query::default() }).await.unwrap();
        let decided: Vec<(String, Option<String>, Option<String>)> = writes
            .iter()
            .filter(|r| r["kind"] == "decision")
            .map(|r| (r["decision"].as_str().unwrap().to_string(), r.get("reason").and_then(|v| v.as_str()).map(str::to_string), r.get("answered_by").and_then(|v| v.as_str()).map(str::to_string)))
            .collect();
        let local = Some("local".to_string());
        assert_eq!(
            decided,
            [("approved".to_string(), None, local.clone()), ("declined".to_string(), None, local), ("denied_gate".to_string(), Some("cannot_ask".to_string()), None)],
            "one decision per write, and no `declined` for an ask still in flight: {writes:#?}"
        );
    });
}

/// What each caller sees (DESIGN §10), through Python's client
/// (tests/py/views_e2e.py): two access tokens whose groups differ, against
/// one server with policies. `shell.*` is forbidden outside the group `ops`
/// and `notes.delete_note` to everyone, whatever the input; writes in plan
/// mode are forbidden too, which hides nothing (another mode allows them).
/// Each token lists its own tools; a left-out tool called anyway gets the
/// unknown-tool answer word for word; the support token's catalog is
/// smaller (the figure is printed), and its action neither lists, finds nor
/// calls `shell`. And on 2025-11-25 (tests/ts/views-client.mjs, the
/// TypeScript SDK's client): a session whose token is refreshed with other
/// groups gets `notifications/tools/list_changed`, once.
#[test]
fn each_caller_is_shown_what_the_policies_let_it_call() {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let scratch = TempDir::new("mcp-python-views");
    scratch.write(
        "policies/views.cedar",
        r#"@id("shell-for-ops")
forbid (principal, action in Capspec::Action::"module:shell", resource) unless { principal in Capspec::Group::"ops" };
@id("keep-notes")
forbid (principal, action == Capspec::Action::"notes.delete_note", resource);
@id("plan-reads-only")
forbid (principal, action in Capspec::Action::"category:write", resource) when { context.mode == "plan" };
"#,
    );
    let fixtures = repo_root().join("tests/fixtures/oauth");
    let (issuer, resource) = ("http://127.0.0.1:1/issuer", "http://127.0.0.1:8931/mcp");
    let key = EncodingKey::from_rsa_pem(&std::fs::read(fixtures.join("rsa.pem")).unwrap()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let token = |sub: &str, group: &str, scope: &str| {
        let claims = serde_json::json!({ "iss": issuer, "sub": sub, "aud": resource, "exp": now + 600, "scope": scope, "groups": [group] });
        jsonwebtoken::encode(&Header { kid: Some("rsa-1".into()), ..Header::new(Algorithm::RS256) }, &claims, &key).unwrap()
    };
    let all = "capspec:read capspec:write capspec:execute capspec:external";
    let views = serde_json::json!({
        "issuer": issuer, "resource": resource, "jwks": fixtures.join("jwks.json"), "policies": scratch.path().join("policies"),
        "support": token("sam", "support", all), "ops": token("olga", "ops", all), "support_read": token("rita", "support", "capspec:read"),
        "support_now_ops": token("sam", "ops", all),
    });
    scratch.write("views.json", views.to_string());
    // On 2025-11-25, the TypeScript SDK's client: a session whose token is
    // refreshed with other groups is told that its tools list changed.
    let binary = env!("CARGO_BIN_EXE_agent-host");
    if let Some(last) = capspec_testkit::node_script("views-client.mjs", "@modelcontextprotocol/sdk", &[binary.as_ref(), scratch.path().as_os_str()]) {
        let seen: serde_json::Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("no JSON summary ({e}): {last}"));
        assert_eq!((&seen["protocol"], &seen["listChanged"]), (&serde_json::json!("2025-11-25"), &serde_json::json!(true)), "{seen}");
        assert_eq!(seen["before"], seen["again"], "{seen}");
        assert_eq!(seen["unchanged"], 0, "told of a change that was not one: {seen}");
        assert_eq!(seen["notified"], 1, "{seen}");
        let (before, after) = (seen["before"].as_array().unwrap(), seen["after"].as_array().unwrap());
        assert!(!before.contains(&serde_json::json!("run_command")) && after.contains(&serde_json::json!("run_command")), "{seen}");
    }
    let Some((summary, text)) = python_script_in("views_e2e.py", &scratch) else { return };
    let tools = |who: &str| -> Vec<String> { summary["tools"][who]["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect() };
    let (support, ops) = (tools("support"), tools("ops"));
    for name in ["get_environment", "run_command", "which_program", "delete_note"] {
        assert!(!support.contains(&name.to_string()), "support is shown {name}: {support:?}\n{text}");
    }
    // `shell.get_environment` is deferred: found by `tool_search`, not listed.
    for name in ["run_command", "which_program", "write_file", "create_note"] {
        assert!(ops.contains(&name.to_string()), "ops is not shown {name}: {ops:?}\n{text}");
    }
    assert!(!ops.contains(&"delete_note".to_string()), "{text}");
    assert_eq!(ops.len(), support.len() + 2, "{text}");
    // A category the token's scopes leave out stays visible (the step-up is how it learns).
    assert_eq!(tools("support_read"), support, "{text}");
    let t = &summary["tools"]["support"];
    // On 2026-07-28 a list that depends on who asks is the caller's alone.
    assert_eq!(t["cache_scope"], "private", "{text}");
    assert_eq!(t["same_as_unknown"], true, "a left-out tool's answer differs from an unknown one's: {}\n{text}", t["hidden_call"]);
    assert!(!t["hidden_call"].as_str().unwrap().contains("run_command"), "the answer names a left-out tool: {}", t["hidden_call"]);
    assert!(!t["catalog"].as_str().unwrap().contains("## shell") && !t["catalog"].as_str().unwrap().contains("delete_note"), "{text}");
    assert!(!t["modules"].as_array().unwrap().contains(&serde_json::json!("shell")), "{text}");
    assert_eq!(summary["tools"]["ops"]["ops_call"], "ok", "{text}");
    // Code mode: the description is the catalog each is shown.
    let code = &summary["code"];
    let (mine, theirs) = (code["support"]["description"].as_str().unwrap(), code["ops"]["description"].as_str().unwrap());
    assert!(theirs.contains("## shell") && !mine.contains("## shell") && !mine.contains("delete_note("), "{text}");
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let (small, large) = (bpe.encode_ordinary(mine).len(), bpe.encode_ordinary(theirs).len());
    assert!(small < large, "{small} vs {large}");
    eprintln!("execute_code's description: {small} o200k_base tokens for support, {large} for ops ({} fewer)", large - small);
    let action = &code["support"]["action"];
    assert_eq!(action["shell"], serde_json::json!([]), "{text}");
    assert!(!action["notes"].as_array().unwrap().contains(&serde_json::json!("notes.delete_note")), "{text}");
    assert!(!action["found"].as_array().unwrap().iter().any(|n| ["run_command", "which_program", "get_environment"].contains(&n.as_str().unwrap())), "{text}");
    // Hidden is unknown in code mode too (DESIGN §10): an import of `shell`
    // is refused at load exactly as an import of a module that does not
    // exist (a name of the same length: the report cuts long messages), on
    // both revisions, and no answer names the hidden module.
    for (imports, protocol) in [(&code["support"]["imports"], "2026-07-28"), (&code["support_legacy"], "2025-11-25")] {
        if protocol == "2025-11-25" {
            assert_eq!(imports["protocol"], protocol, "{text}");
        }
        let (hidden, unknown) = (imports["hidden"][1].as_str().unwrap(), imports["unknown"][1].as_str().unwrap());
        assert_eq!((&imports["hidden"][0], &imports["unknown"][0]), (&serde_json::json!(true), &serde_json::json!(true)), "{protocol}: {text}");
        assert_eq!(hidden.replace("@capspec/host/shell", "@capspec/host/NAME"), unknown.replace("@capspec/host/ghost", "@capspec/host/NAME"), "{protocol}: {text}");
        assert!(!unknown.contains("shell"), "{protocol}: the refusal names the hidden module: {unknown}");
    }
    assert_eq!(code["support"]["protocol"], "2026-07-28", "{text}");
    // A caller shown `shell` imports and calls it.
    assert_eq!(code["ops"]["imports"]["hidden"][0], false, "{text}");
    assert_eq!(code["ops"]["action"]["called"], "ran", "{text}");
    assert!(code["ops"]["action"]["found"].as_array().unwrap().contains(&serde_json::json!("run_command")), "{text}");
    assert_eq!(code["ops"]["action"]["shell"], serde_json::json!(["shell.get_environment", "shell.run_command", "shell.which_program"]), "{text}");
}
