//! The built-in `tool_search` (`capspec.tool_search`): a read capability
//! over the session's capabilities, deferred ones included, reached through
//! `invoke` — from Rust, from a guest (`capabilities.search`) — with the
//! same ladder, gate and receipts as any other capability.

use capspec::guest::Guest;
use capspec::{ErrorCode, Gate, Mode, Run};
use capspec::testing::block_on;
use serde_json::{Value, json};

fn session() -> capspec::Mounted {
    agent_host::registry().expect("registry").mount_all()
}

#[test]
fn tool_search_finds_a_deferred_capability_with_its_signature_and_schema() {
    let mounted = session();
    // Plan mode: a read runs even where nothing else may.
    let run = Run::new(Gate::headless(Mode::Plan, "search test"));
    let found = block_on(mounted.invoke(&run, "tool_search", json!({"query": "list the environment variables", "limit": 3}))).expect("a result");
    let matches = found["matches"].as_array().expect("matches");
    assert!(!matches.is_empty() && matches.len() <= 3, "{found}");
    let first = &matches[0];
    let spec = mounted.lookup(&format!("{}.{}", first["module"].as_str().unwrap(), first["name"].as_str().unwrap())).expect("a real capability");
    assert!(spec.deferred, "the deferred capability is found: {found}");
    assert_eq!(first["wire_name"], spec.wire_name);
    assert_eq!(first["category"], spec.category.as_str());
    assert_eq!(first["description"], spec.summary);
    assert_eq!(first["signature"], spec.signature);
    assert!(spec.signature.starts_with(&format!("{}({{", spec.name)), "{}", spec.signature);
    assert_eq!(first["input_schema"], serde_json::from_str::<Value>(spec.input_schema).unwrap());
    // One receipt, under the built-in's qualified name, decided without asking.
    let receipts = run.receipts();
    assert_eq!(receipts.len(), 1);
    assert_eq!(serde_json::to_value(&receipts[0]).unwrap()["capability"], "capspec.tool_search");
    assert_eq!(serde_json::to_value(&receipts[0]).unwrap()["decision"], "auto");
}

#[test]
fn tool_search_arguments_pass_the_same_ladder() {
    let mounted = session();
    let run = Run::new(Gate::headless(Mode::Default, "search test"));
    let missing = block_on(mounted.invoke(&run, "capspec.tool_search", json!({}))).unwrap_err();
    assert_eq!(missing.code, ErrorCode::InvalidArguments);
    assert!(missing.message.contains("`query`"), "{}", missing.message);
    let too_many = block_on(mounted.invoke(&run, "tool_search", json!({"query": "files", "limit": 500}))).unwrap_err();
    assert_eq!(too_many.code, ErrorCode::InvalidArguments);
    // The default limit applies: 5.
    let found = block_on(mounted.invoke(&run, "tool_search", json!({"query": "file"}))).unwrap();
    assert_eq!(found["matches"].as_array().unwrap().len(), 5);
    // Only what the session mounted is searched.
    let notes_only = agent_host::registry().unwrap().mount(&["notes"]).unwrap();
    let found = block_on(notes_only.invoke(&run, "tool_search", json!({"query": "delete a file"}))).unwrap();
    assert!(found["matches"].as_array().unwrap().iter().all(|m| m["module"] == "notes"), "{found}");
}

#[test]
fn a_guest_searches_with_capabilities_search() {
    let mounted = session();
    let run = Run::new(Gate::headless(Mode::Default, "search test"));
    let outcome = Guest::new(mounted).run(
        &run,
        r#"export default async () => {
             const found = await capabilities.search("remove a remembered fact", 2);
             let refused = null;
             try { await capabilities.search(""); } catch (e) { refused = e.code; }
             return { first: found[0].wire_name, count: found.length, refused };
           };"#,
    );
    assert_eq!(outcome.error, None, "{:?}", outcome.error);
    assert_eq!(outcome.result, Some(json!({"first": "forget", "count": 2, "refused": "invalid_arguments"})));
    let names: Vec<String> = run.receipts().iter().map(|r| r.capability.clone()).collect();
    assert_eq!(names, ["capspec.tool_search", "capspec.tool_search"]);
}
