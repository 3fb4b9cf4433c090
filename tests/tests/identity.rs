//! Identity is `module.name`: two mounted modules may share a capability
//! name (two imported MCP servers that both have `git_add`). `invoke`
//! accepts the qualified name, the wire name, and a bare name or alias that
//! exactly one mounted module has; an ambiguous bare name is refused with
//! `ambiguous_capability`, naming the candidates. Aliases hold the legacy
//! names clients have actually called.

use std::sync::Arc;

use capspec::guest::Guest;
use capspec::testing::block_on;
use capspec::{CapResult, ErrorCode, Gate, Mode, Registry, Run, capability};
use capspec_tests::bindings::twins::{git_a, git_b};
use serde_json::{Value, json};

#[capability(git_a::git_add)]
async fn add_a(_run: &Run, args: git_a::git_add::Args) -> CapResult<String> {
    Ok(format!("A staged {}", args.path))
}
#[capability(git_a::status)]
async fn status_a(_run: &Run, _args: git_a::status::Args) -> CapResult<String> {
    Ok("A status".into())
}
#[capability(git_b::git_add)]
async fn add_b(_run: &Run, args: git_b::git_add::Args) -> CapResult<String> {
    Ok(format!("B staged {}", args.path))
}
#[capability(git_b::log)]
async fn log_b(_run: &Run, _args: git_b::log::Args) -> CapResult<String> {
    Ok("B log".into())
}

fn registry() -> Arc<Registry> {
    Registry::new(&[git_a::MODULE, git_b::MODULE]).expect("both twins build one registry")
}

fn auto() -> Run {
    Run::new(Gate::headless(Mode::Auto, "identity test"))
}

/// Call `name` with the mounted `modules`: `git_add` with a path, the rest
/// with no arguments.
fn call(modules: &[&str], name: &str) -> Result<Value, (ErrorCode, String)> {
    let mounted = registry().mount(modules).unwrap();
    let args = if name.contains("add") { json!({"path": "x.rs"}) } else { json!({}) };
    block_on(mounted.invoke(&auto(), name, args)).map_err(|e| (e.code, e.message))
}

#[test]
fn wire_names_are_bare_unless_shared() {
    assert_eq!(git_a::git_add::SPEC.wire_name, "git_a__git_add");
    assert_eq!(git_b::git_add::SPEC.wire_name, "git_b__git_add");
    assert_eq!(git_a::status::SPEC.wire_name, "status");
    assert_eq!(git_b::log::SPEC.wire_name, "log");
}

#[test]
fn qualified_wire_and_unique_bare_names_resolve() {
    let both = ["git_a", "git_b"];
    assert_eq!(call(&both, "git_a.git_add"), Ok(json!("A staged x.rs")));
    assert_eq!(call(&both, "git_b.git_add"), Ok(json!("B staged x.rs")));
    assert_eq!(call(&both, "git_b__git_add"), Ok(json!("B staged x.rs")));
    assert_eq!(call(&both, "git_a__git_add"), Ok(json!("A staged x.rs")));
    // A bare name that one mounted module has is enough.
    assert_eq!(call(&["git_b"], "git_add"), Ok(json!("B staged x.rs")));
    assert_eq!(call(&both, "log"), Ok(json!("B log")));
    // A name of an unmounted module does not resolve, qualified or not.
    assert_eq!(call(&["git_a"], "git_b.git_add").unwrap_err().0, ErrorCode::UnknownCapability);
}

#[test]
fn an_ambiguous_bare_name_is_refused_naming_the_candidates() {
    let (code, message) = call(&["git_a", "git_b"], "git_add").unwrap_err();
    assert_eq!(code, ErrorCode::AmbiguousCapability);
    insta::assert_snapshot!(message, @"`git_add` is a capability of more than one mounted module: `git_a.git_add`, `git_b.git_add`; call it by its qualified name");
    // The refusal crosses as data with its code, like every other.
    let reply = block_on(registry().mount_all().invoke_json(&auto(), r#"{"name": "git_add", "arguments": {"path": "x"}}"#));
    assert_eq!(serde_json::from_str::<Value>(&reply).unwrap()["error"], "ambiguous_capability");
    // `status` is git_a's name and one of git_b's aliases. As a bare name it
    // would be ambiguous, but it is also `git_a.status`'s wire name — the
    // one name flat surfaces know it by — and a wire name resolves first.
    assert_eq!(call(&["git_a", "git_b"], "status"), Ok(json!("A status")));
    assert_eq!(call(&["git_a", "git_b"], "git_b.status"), Ok(json!("B log")));
    assert_eq!(call(&["git_b"], "status"), Ok(json!("B log")));
}

#[test]
fn legacy_aliases_resolve_exactly() {
    for (alias, result) in [("File", "A status"), ("Bash", "A status"), ("listWorkflows", "B log"), ("get-annotated-message", "B log")] {
        assert_eq!(call(&["git_a", "git_b"], alias), Ok(json!(result)), "{alias}");
    }
    assert_eq!(call(&["git_a", "git_b"], "git_a.File"), Ok(json!("A status")));
    // Exact and case-sensitive.
    assert_eq!(call(&["git_a", "git_b"], "file").unwrap_err().0, ErrorCode::UnknownCapability);
    // Aliases are never exports of the facade nor catalog text.
    assert!(!git_a::MODULE.facade.contains("File") && !git_a::MODULE.catalog.contains("Bash"));
}

#[test]
fn a_guest_calls_each_module_s_own_capability() {
    let outcome = Guest::new(registry().mount_all()).run(
        &auto(),
        r#"import a from "@capspec/host/git_a";
import b from "@capspec/host/git_b";
export default async () => [await a.git_add({ path: "1" }), await b.git_add({ path: "2" })];"#,
    );
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.result, Some(json!(["A staged 1", "B staged 2"])));
}

#[test]
fn title_and_hints_reach_the_spec() {
    assert_eq!(git_b::git_add::SPEC.title, Some("Stage files"));
    let a = git_b::git_add::SPEC.annotations;
    assert_eq!((a.read_only, a.destructive, a.idempotent, a.open_world), (false, true, true, false));
    let plain_write = git_a::git_add::SPEC.annotations;
    assert_eq!((plain_write.destructive, plain_write.idempotent), (true, false), "a write capability is destructive unless its spec says it only adds");
}
