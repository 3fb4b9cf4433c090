//! Policies enforced wherever the ladder is (DESIGN §14): the reference
//! host's `policies/` plus the patterns users ask for
//! (tests/fixtures/policy-corpus/host: an `@ask` permit that asks even in
//! `auto`, group membership, a mode-scoped permit that `plan` still blocks,
//! each with its decisions in that tests.yaml) — through in-process
//! `invoke`, a guest action on the MCP code surface, the MCP tools surface
//! and the provider tool loops; log mode records without deciding. Each refusal names its policy, and the impl never runs.

use std::sync::Arc;

use agent_host::capabilities::memory::SessionMemory;
use agent_host::workspace::Workspace;
use capspec::mcp::{McpHost, Surface};
use capspec::policy::{PolicyGate, PolicyMode};
use capspec::testing::{ScriptedApprover, block_on};
use capspec::{Approval, Gate, Mode, Principal, Run, SessionAllow};
use capspec_testkit::{TempDir, copy_dir, repo_root};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};


/// The reference host's policies and the patterns, in one directory.
fn policies(mode: PolicyMode) -> (TempDir, Arc<PolicyGate>) {
    let dir = TempDir::new("host-policies");
    copy_dir(&repo_root().join("policies"), dir.path());
    copy_dir(&repo_root().join("tests/fixtures/policy-corpus/host"), dir.path());
    let gate = PolicyGate::load(dir.path(), mode).expect("the policies parse");
    (dir, Arc::new(gate))
}

fn workspace(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    dir.write(".env", "TOKEN=secret\n");
    dir.write("notes.txt", "hello\n");
    dir
}

fn run(dir: &TempDir, mode: Mode, approver: Arc<ScriptedApprover>, who: Principal, policies: &Arc<PolicyGate>) -> Run {
    Run::new(Gate::new(mode, approver, SessionAllow::new()))
        .with(Workspace::new(dir.path()).unwrap())
        .with(SessionMemory::default())
        .with_principal(who)
        .with_policies(policies.clone())
}

#[test]
fn invoke_refuses_by_policy_asks_by_policy_and_logs_without_deciding() {
    let mounted = agent_host::registry().unwrap().mount_all();
    let (_p, enforced) = policies(PolicyMode::Enforce);
    let dir = workspace("policy-invoke");
    let approver = ScriptedApprover::new([Approval::AllowForSession, Approval::AllowOnce]);
    let alice = run(&dir, Mode::Auto, approver.clone(), Principal::new("alice"), &enforced);

    let env = block_on(mounted.invoke(&alice, "workspace.read_file", json!({"path": ".env"}))).unwrap_err();
    assert_eq!((env.code.as_str(), env.message.as_str()), ("permission_denied", "denied by policy `no-env-reads`: environment files hold secrets; a program's configuration comes from shell.get_environment"));
    let written = block_on(mounted.invoke(&alice, "workspace.write_file", json!({"path": "prod.env", "content": "x"}))).unwrap_err();
    assert!(written.message.starts_with("denied by policy `no-env-writes`"), "{written:?}");
    assert!(!dir.path().join("prod.env").exists(), "the impl did not run");
    let curl = block_on(mounted.invoke(&alice, "shell.run_command", json!({"program": "curl"}))).unwrap_err();
    assert!(curl.message.starts_with("denied by policy `shell-programs`"), "{curl:?}");
    assert!(block_on(mounted.invoke(&alice, "workspace.read_file", json!({"path": "notes.txt"}))).is_ok());

    // `@ask` asks in auto, every time: an allowance for the session does not answer it.
    let first = block_on(mounted.invoke(&alice, "notes.create_note", json!({"title": "a", "body": "b"})));
    let second = block_on(mounted.invoke(&alice, "notes.create_note", json!({"title": "c", "body": "d"})));
    assert!(first.is_ok() && second.is_ok(), "{first:?} {second:?}");
    let asked = approver.asked();
    assert_eq!(asked.len(), 2, "asked once per call");
    assert_eq!(asked[0].principal.id(), "alice");

    // Group membership comes from the principal.
    let id = first.unwrap()["id"].as_str().unwrap().to_string();
    let refused = block_on(mounted.invoke(&alice, "notes.delete_note", json!({"note_id": id}))).unwrap_err();
    assert_eq!(refused.message, "denied by policy `only-support-deletes`: deleting notes is the support group's job");
    let bob = run(&dir, Mode::Auto, ScriptedApprover::new([]), Principal::with_groups("bob", ["support"]), &enforced);
    assert!(block_on(mounted.invoke(&bob, "notes.delete_note", json!({"note_id": id}))).is_ok());

    // A permit does not beat plan mode.
    let planner = run(&dir, Mode::Plan, ScriptedApprover::new([]), Principal::new("alice"), &enforced);
    let blocked = block_on(mounted.invoke(&planner, "notes.update_note", json!({"note_id": "x", "title": "t"}))).unwrap_err();
    assert_eq!(blocked.code.as_str(), "blocked_in_plan_mode");

    let receipts: Vec<(String, Option<&str>, Vec<String>)> =
        alice.receipts().into_iter().map(|r| (r.capability, r.decision.map(|d| d.as_str()), r.policy)).collect();
    assert_eq!(
        receipts,
        [
            ("workspace.read_file".to_string(), Some("denied"), vec!["no-env-reads".to_string()]),
            ("workspace.write_file".to_string(), Some("denied"), vec!["no-env-writes".to_string()]),
            ("shell.run_command".to_string(), Some("denied"), vec!["shell-programs".to_string()]),
            ("workspace.read_file".to_string(), Some("auto"), vec![]),
            ("notes.create_note".to_string(), Some("approved"), vec!["notes-ask".to_string()]),
            ("notes.create_note".to_string(), Some("approved"), vec!["notes-ask".to_string()]),
            ("notes.delete_note".to_string(), Some("denied"), vec!["only-support-deletes".to_string()]),
        ]
    );

    // Log mode: the matrix decides, the receipt says what the policies would have done.
    let (_p, logged) = policies(PolicyMode::Log);
    let logging = run(&dir, Mode::Auto, ScriptedApprover::new([]), Principal::new("alice"), &logged);
    let read = block_on(mounted.invoke(&logging, "workspace.read_file", json!({"path": ".env"}))).unwrap();
    assert_eq!(read["content"], "TOKEN=secret\n");
    let receipt = &logging.receipts()[0];
    assert_eq!((receipt.decision.map(|d| d.as_str()), receipt.policy.clone()), (Some("auto"), vec!["no-env-reads".to_string()]));
    assert_eq!(serde_json::to_value(receipt).unwrap()["policy"], json!(["no-env-reads"]));
}

fn host(dir: &TempDir, surface: Surface, policies: Arc<PolicyGate>) -> McpHost {
    let mounted = agent_host::registry().expect("registry").mount_all();
    let workspace = Workspace::new(dir.path()).expect("workspace");
    McpHost::new(capspec::guest::Guest::new(mounted), surface, Mode::Auto)
        .prepare_run(move |gate| Run::new(gate).with(workspace.clone()).with(SessionMemory::default()).with_policies(policies.clone()))
}

/// rmcp's client on a new session of `host` (principal `local`).
async fn connect(host: &McpHost) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let session = host.session();
    tokio::spawn(async move {
        let running = session.serve(server_io).await.expect("server starts");
        let _ = running.waiting().await;
    });
    ().serve(client_io).await.expect("client connects")
}

async fn call(host: &McpHost, name: &str, args: Value) -> rmcp::model::CallToolResult {
    let client = connect(host).await;
    let Value::Object(args) = args else { panic!("arguments are an object") };
    let result = client.call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args)).await.expect("a tool result");
    let _ = client.cancel().await;
    result
}

#[tokio::test]
async fn both_mcp_surfaces_enforce_the_policies() {
    let (_p, enforced) = policies(PolicyMode::Enforce);
    let dir = workspace("policy-mcp");
    // The tools surface: a tool error naming the policy.
    let tools = host(&dir, Surface::Tools, enforced.clone());
    let refused = call(&tools, "read_file", json!({"path": ".env"})).await;
    assert_eq!(refused.is_error, Some(true));
    let error = serde_json::to_value(&refused.meta).unwrap()[capspec::mcp::META_ERROR].clone();
    assert_eq!(error["error"], "permission_denied");
    assert!(error["message"].as_str().unwrap().contains("`no-env-reads`"), "{error}");
    let receipts = serde_json::to_value(&refused.meta).unwrap()["io.capspec/receipts"].clone();
    assert_eq!(receipts[0]["policy"], json!(["no-env-reads"]));
    // The code surface: a guest action catches the refusal and goes on.
    let code = host(&dir, Surface::Code, enforced);
    let action = r#"
        import workspace from "@capspec/host/workspace";
        export default async () => {
          // A refusal is thrown as a `CapabilityError` carrying the code.
          let secret;
          try { await workspace.read_file({ path: ".env" }); } catch (e) { secret = { error: e.code, message: e.message }; }
          const notes = await workspace.read_file({ path: "notes.txt" });
          return { secret, notes: notes.content };
        };"#;
    let result = call(&code, "execute_code", json!({ "code": action })).await;
    let report = result.structured_content.expect("the run report");
    assert_eq!(report["result"]["secret"]["error"], "permission_denied", "{report}");
    assert!(report["result"]["secret"]["message"].as_str().unwrap().contains("`no-env-reads`"), "{report}");
    assert_eq!(report["result"]["notes"], "hello\n");
}

#[test]
fn provider_tool_loops_meet_the_same_policies() {
    let (_p, enforced) = policies(PolicyMode::Enforce);
    let dir = workspace("policy-providers");
    let mounted = agent_host::registry().unwrap().mount_all();
    let alice = run(&dir, Mode::Auto, ScriptedApprover::new([]), Principal::new("alice"), &enforced);
    let reply = |text: &str| -> Value { serde_json::from_str(text).unwrap() };

    let item = json!({"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\": \".env\", \"offset\": null, \"limit\": null}"});
    let openai = reply(block_on(capspec::provider::openai::call(&mounted, &alice, &item))["output"].as_str().unwrap());
    assert_eq!((openai["error"].as_str(), openai["message"].as_str()), (Some("permission_denied"), Some("denied by policy `no-env-reads`: environment files hold secrets; a program's configuration comes from shell.get_environment")));
    let block = json!({"type": "tool_use", "id": "toolu_1", "name": "run_command", "input": {"program": "curl"}});
    let anthropic = block_on(capspec::provider::anthropic::call(&mounted, &alice, &block));
    assert_eq!(anthropic["is_error"], true);
    assert!(reply(anthropic["content"].as_str().unwrap())["message"].as_str().unwrap().starts_with("denied by policy `shell-programs`"), "{anthropic}");
    // `@ask` with no one to ask: refused, in auto, though the mode alone would allow the write.
    let part = json!({"functionCall": {"id": "fc_1", "name": "create_note", "args": {"title": "t", "body": "b"}}});
    let gemini = block_on(capspec::provider::gemini::call(&mounted, &alice, &part));
    assert_eq!(gemini["functionResponse"]["response"]["error"], "permission_denied", "{gemini}");
    let permitted = json!({"functionCall": {"id": "fc_2", "name": "read_file", "args": {"path": "notes.txt"}}});
    assert_eq!(block_on(capspec::provider::gemini::call(&mounted, &alice, &permitted))["functionResponse"]["response"]["result"]["content"], "hello\n");

    let decided: Vec<(String, Vec<String>)> = alice.receipts().into_iter().map(|r| (r.capability, r.policy)).collect();
    let ids = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        decided,
        [
            ("workspace.read_file".to_string(), ids(&["no-env-reads"])),
            ("shell.run_command".to_string(), ids(&["shell-programs"])),
            ("notes.create_note".to_string(), ids(&["notes-ask"])),
            ("workspace.read_file".to_string(), ids(&[])),
        ]
    );
}

/// What a caller sees (DESIGN §10) on a stdio-like session (principal
/// `local`, in no group): the pattern `delete-needs-support` forbids
/// `notes.delete_note` outside `support` whatever the input, so it is not
/// listed, not in the catalog, and a call of it gets the unknown-tool
/// answer; `read_file`, which `no-env-reads` forbids only for some paths,
/// stays.
#[tokio::test]
async fn a_capability_the_policies_always_deny_is_not_shown_and_answers_as_unknown() {
    let (_p, enforced) = policies(PolicyMode::Enforce);
    let dir = workspace("policy-views");
    let tools = host(&dir, Surface::Tools, enforced.clone());
    let client = connect(&tools).await;
    let listed: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert!(!listed.contains(&"delete_note".to_string()) && listed.contains(&"read_file".to_string()), "{listed:?}");
    let everyone: Vec<String> = tools.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(everyone.len(), listed.len() + 1, "exactly one tool is left out");
    let answer = |name: &str| {
        let client = &client;
        let name = name.to_string();
        async move { client.call_tool(CallToolRequestParams::new(name.clone()).with_arguments(json!({"note_id": "n"}).as_object().unwrap().clone())).await.unwrap_err().to_string().replace(&name, "NAME") }
    };
    assert_eq!(answer("delete_note").await, answer("no_such_tool").await);
    let catalog = client.read_resource(rmcp::model::ReadResourceRequestParams::new(capspec::mcp::CATALOG_URI)).await.unwrap();
    let text = serde_json::to_string(&catalog).unwrap();
    assert!(!text.contains("delete_note(") && text.contains("read_note("), "{text}");
    let _ = client.cancel().await;
    // Log mode decides nothing, so it hides nothing.
    let (_q, logged) = policies(PolicyMode::Log);
    let logging = host(&dir, Surface::Tools, logged);
    assert_eq!(logging.tools().len(), everyone.len());
}

/// Hiding any one capability of the reference host takes exactly its entry
/// out of the catalog, and hiding a module's every capability takes the module out.
#[test]
fn a_catalog_without_a_hidden_capability_loses_its_entry_and_nothing_else() {
    use capspec::view::{Hidden, catalog};
    let mounted = agent_host::registry().expect("registry").mount_all();
    let full = mounted.catalog();
    for module in mounted.modules() {
        for spec in module.specs {
            let shown = catalog(&mounted, &Hidden::new([format!("{}.{}", spec.module, spec.name)]));
            let entry = |text: &str, name: &str| text.lines().any(|l| l.starts_with("- ") && (l.contains(&format!("`{name}(")) || l.contains(&format!("`` {name}("))));
            let deferred = |text: &str, name: &str| text.lines().any(|l| l.starts_with("Deferred (") && l.contains(&format!("`{name}`")));
            assert!(!entry(&shown, spec.name) && !deferred(&shown, spec.name), "{}.{} is still in the catalog", spec.module, spec.name);
            for other in module.specs.iter().filter(|s| s.name != spec.name) {
                assert_eq!(entry(&shown, other.name), entry(&full, other.name), "{}.{} changed", other.module, other.name);
                assert_eq!(deferred(&shown, other.name), deferred(&full, other.name), "{}.{} changed", other.module, other.name);
            }
            assert!(shown.len() < full.len());
        }
        let all = Hidden::new(module.specs.iter().map(|s| format!("{}.{}", s.module, s.name)));
        assert!(!catalog(&mounted, &all).contains(&format!("## {}\n", module.name)), "{} is still in the catalog", module.name);
    }
}
