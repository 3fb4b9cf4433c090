//! The runtime's one call path, driven the way a host uses it: impls
//! registered with `#[capability]`, a registry over generated tables, runs
//! with a scripted approver, and two entrances (Rust `invoke` and a JSON
//! tool call) that must leave identical receipts.

use std::sync::Arc;

use capspec::testing::{ScriptedApprover, block_on};
use capspec::{Approval, ErrorCode, Gate, GateDecision, Mode, Registry, Run, SessionAllow, Status};
use capspec_tests::canary::{self, Counters, registry};
use serde_json::{Value, json};

/// One call per canary capability, with valid arguments.
const CALLS: [(&str, &str); 4] = [
    ("peek", r#"{"note_id": "n1"}"#),
    ("poke", r#"{"title": "t"}"#),
    ("launch", r#"{"program": "ls"}"#),
    ("delegate", r#"{"agent": "coder", "task_id": "t1", "task": "fix it"}"#),
];

#[derive(Debug, PartialEq)]
struct Observed {
    results: Vec<Value>,
    receipts: Vec<(String, Option<GateDecision>, Status)>,
    asked: usize,
    impl_runs: usize,
}

#[derive(Clone, Copy, Debug)]
enum Entrance {
    /// `Mounted::invoke` from Rust.
    Direct,
    /// `Mounted::invoke_json`, as a provider tool loop calls it.
    Json,
    /// A guest JavaScript action in QuickJS, through the generated facade.
    Guest,
}

/// Run every canary once in `mode` through one entrance, with the approver
/// answering `answer` to every question.
fn observe(mode: Mode, answer: Approval, entrance: Entrance) -> Observed {
    let mounted = registry().mount_all();
    let approver = ScriptedApprover::new(std::iter::repeat_n(answer, 8));
    let counters = Arc::new(Counters::default());
    let run = Run::new(Gate::new(mode, approver.clone(), SessionAllow::new())).with(counters.clone());
    let mut results = Vec::new();
    if let Entrance::Guest = entrance {
        let calls: Vec<String> = CALLS.iter().map(|(n, a)| format!("[{n:?}, {a}]")).collect();
        let script = format!(
            r#"import canary from "@capspec/host/canary";
export default async () => {{
  const out = [];
  for (const [name, args] of [{}]) {{
    try {{ out.push({{ result: await canary[name](args) }}); }}
    catch (e) {{ out.push({{ error: e.code, message: e.message, capability: e.capability }}); }}
  }}
  return out;
}};"#,
            calls.join(", ")
        );
        let outcome = capspec::guest::Guest::new(mounted.clone()).run(&run, &script);
        assert_eq!(outcome.error, None, "guest run failed");
        results = outcome.result.unwrap().as_array().unwrap().clone();
    }
    for (name, args) in CALLS {
        let value = match entrance {
            Entrance::Guest => break,
            Entrance::Json => {
                let request = format!(r#"{{"name": "{name}", "arguments": {args}}}"#);
                serde_json::from_str(&block_on(mounted.invoke_json(&run, &request))).unwrap()
            }
            Entrance::Direct => match block_on(mounted.invoke(&run, name, serde_json::from_str(args).unwrap())) {
                Ok(v) => json!({ "result": v }),
                Err(e) => serde_json::to_value(e).unwrap(),
            },
        };
        results.push(value);
    }
    let impl_runs = counters.total();
    Observed {
        results,
        receipts: run.receipts().iter().map(|r| (r.capability.clone(), r.decision, r.status)).collect(),
        asked: approver.asked().len(),
        impl_runs,
    }
}

fn outcome(o: &Observed) -> Vec<(&str, Option<GateDecision>, Status)> {
    o.receipts.iter().map(|(c, d, s)| (c.as_str(), *d, *s)).collect()
}

/// The gate-parity test: every mode × category, through three entrances.
/// (Tests in this file share impl counters, so they run in one test.)
#[test]
fn gate_parity_across_modes_and_entrances() {
    use GateDecision::*;
    use Status::*;
    let deny = || Approval::Deny("no".into());
    for (mode, answer, expected, asked, ran) in [
        // read runs without asking; the rest ask in default mode
        (Mode::Default, Approval::AllowOnce, [(Auto, Ok), (Approved, Ok), (Approved, Ok), (Approved, Ok)], 3, 4),
        // a denial returns permission_denied and the impl does not run
        (Mode::Default, deny(), [(Auto, Ok), (Denied, Refused), (Denied, Refused), (Denied, Refused)], 3, 1),
        // plan blocks everything but read, without asking
        (Mode::Plan, Approval::AllowOnce, [(Auto, Ok), (Blocked, Refused), (Blocked, Refused), (Blocked, Refused)], 0, 1),
        // accept_edits allows write; execute and external ask
        (Mode::AcceptEdits, deny(), [(Auto, Ok), (Auto, Ok), (Denied, Refused), (Denied, Refused)], 2, 2),
        // auto allows all
        (Mode::Auto, deny(), [(Auto, Ok), (Auto, Ok), (Auto, Ok), (Auto, Ok)], 0, 4),
    ] {
        let direct = observe(mode, answer.clone(), Entrance::Direct);
        let json = observe(mode, answer.clone(), Entrance::Json);
        let guest = observe(mode, answer, Entrance::Guest);
        assert_eq!(direct, json, "direct and JSON entrances disagree in {mode:?}");
        assert_eq!(direct, guest, "direct and guest entrances disagree in {mode:?}");
        let want: Vec<(&str, Option<GateDecision>, Status)> = ["canary.peek", "canary.poke", "canary.launch", "canary.delegate"]
            .into_iter()
            .zip(expected)
            .map(|(c, (d, s))| (c, Some(d), s))
            .collect();
        assert_eq!(outcome(&direct), want, "{mode:?}");
        assert_eq!(direct.asked, asked, "approver questions in {mode:?}");
        assert_eq!(direct.impl_runs, ran, "impl runs in {mode:?}");
        for (result, (_, (decision, _))) in direct.results.iter().zip(want.iter().zip(expected)) {
            match decision {
                Denied => assert_eq!(result["error"], "permission_denied", "{result}"),
                Blocked => assert_eq!(result["error"], "blocked_in_plan_mode", "{result}"),
                _ => assert!(result.get("result").is_some(), "{result}"),
            }
        }
    }
    session_allow_is_shared_by_the_runs_of_a_session_only();
}

fn session_allow_is_shared_by_the_runs_of_a_session_only() {
    let mounted = registry().mount_all();
    let session = SessionAllow::new();
    let approver = ScriptedApprover::new([Approval::AllowForSession]);
    let first = capspec::testing::run(Mode::Default, approver.clone(), &session);
    block_on(mounted.invoke(&first, "poke", json!({"title": "a"}))).unwrap();
    // A second run of the same session: remembered, nobody asked.
    let second = capspec::testing::run(Mode::Default, approver.clone(), &session);
    block_on(mounted.invoke(&second, "poke", json!({"title": "b"}))).unwrap();
    assert_eq!(approver.asked().len(), 1);
    assert_eq!(second.receipts()[0].decision, Some(GateDecision::Approved));
    // Only that capability: launch still asks (and the script is empty: denied).
    let err = block_on(mounted.invoke(&second, "launch", json!({"program": "x"}))).unwrap_err();
    assert_eq!(err.code, ErrorCode::PermissionDenied);
    // Another session does not inherit it.
    let other = capspec::testing::run(Mode::Default, approver.clone(), &SessionAllow::new());
    let err = block_on(mounted.invoke(&other, "poke", json!({"title": "c"}))).unwrap_err();
    assert_eq!(err.code, ErrorCode::PermissionDenied);
    assert_eq!(approver.asked().len(), 3);
    assert_eq!(approver.asked()[0].message.as_deref(), Some("Saving a"), "the approver sees the filled user_message");
}

#[test]
fn mode_changes_between_calls_are_seen() {
    let mounted = registry().mount_all();
    let run = Run::new(Gate::headless(Mode::Auto, "test host"));
    let handle = run.gate().mode_handle();
    assert!(block_on(mounted.invoke(&run, "poke", json!({"title": "a"}))).is_ok());
    handle.set(Mode::Plan);
    let err = block_on(mounted.invoke(&run, "poke", json!({"title": "a"}))).unwrap_err();
    assert_eq!(err.code, ErrorCode::BlockedInPlanMode);
    handle.set(Mode::Default);
    let err = block_on(mounted.invoke(&run, "poke", json!({"title": "a"}))).unwrap_err();
    assert_eq!(err.code, ErrorCode::PermissionDenied);
    assert!(err.message.contains("test host runs headless"), "{}", err.message);
}

fn refusal(name: &str, args: Value) -> String {
    let mounted = registry().mount_all();
    let run = Run::new(Gate::headless(Mode::Auto, "test"));
    let err = block_on(mounted.invoke(&run, name, args)).unwrap_err();
    assert_eq!(run.receipts()[0].status, Status::Refused);
    assert_eq!(run.receipts()[0].decision, None, "refused before the gate");
    format!("{}: {}", err.code, err.message)
}

fn accepted(name: &str, args: Value) -> Value {
    let mounted = registry().mount_all();
    let run = Run::new(Gate::headless(Mode::Auto, "test"));
    block_on(mounted.invoke(&run, name, args)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn coercion_folds_only_when_unambiguous() {
    // camelCase keys fold onto snake_case properties.
    assert_eq!(accepted("peek", json!({"noteId": "n1", "maxLines": 3})), json!("n1 (3 lines)"));
    // A lone string becomes the one required string property.
    assert_eq!(accepted("poke", json!("A title")), json!({"saved": "A title"}));
    // A bare id becomes the one required `*_id` property.
    assert_eq!(accepted("peek", json!("n9")), json!("n9"));
    // Aliases resolve.
    assert_eq!(accepted("peek_note", json!({"note_id": "n2"})), json!("n2"));
    // null means no arguments.
    insta::assert_snapshot!(refusal("peek", Value::Null), @"invalid_arguments: `canary.peek` is missing required argument `note_id`; no arguments were passed");

    // Refused: a key already given in snake_case is not overwritten by its camelCase twin.
    insta::assert_snapshot!(
        refusal("peek", json!({"note_id": "a", "noteId": "b"})),
        @"invalid_arguments: `canary.peek` got invalid arguments: /noteId: unknown property `noteId` (expected one of: `max_lines`, `note_id`)"
    );
    // Refused: a lone string where several required strings could take it and no single `*_id` exists.
    insta::assert_snapshot!(
        refusal("launch", json!(42)),
        @"invalid_arguments: `canary.launch`: arguments must be an object; got the bare value 42 and no single required argument can take it"
    );
    insta::assert_snapshot!(
        refusal("poke", json!(true)),
        @"invalid_arguments: `canary.poke`: arguments must be an object; got the bare value true and a bare boolean cannot name an argument"
    );
    insta::assert_snapshot!(
        refusal("poke", json!(["a"])),
        @"invalid_arguments: `canary.poke`: arguments must be an object, not an array"
    );
    // Missing keys: named, with what was passed instead.
    insta::assert_snapshot!(
        refusal("delegate", json!({"taskId": "t1", "what": "x"})),
        @"invalid_arguments: `canary.delegate` is missing required arguments `agent`, `task`; passed: `taskId`, `what`"
    );
    insta::assert_snapshot!(
        refusal("delegate", json!("t1")),
        @"invalid_arguments: `canary.delegate` is missing required arguments `agent`, `task`; passed the bare value \"t1\""
    );
}

#[test]
fn validation_refuses_before_the_impl() {
    insta::assert_snapshot!(
        refusal("peek", json!({"note_id": "", "max_lines": 0})),
        @"invalid_arguments: `canary.peek` got invalid arguments: /max_lines: 0 is less than the minimum 1; /note_id: text is 0 characters, shorter than the minimum 1"
    );
    insta::assert_snapshot!(
        refusal("poke", json!({"title": "t", "tags": ["a", 2, "c", "d"]})),
        @"invalid_arguments: `canary.poke` got invalid arguments: /tags: 4 items, more than the maximum 3; /tags/1: expected string, got a number"
    );
    insta::assert_snapshot!(
        refusal("delegate", json!({"agent": "boss", "task_id": "1", "task": "x"})),
        @r#"invalid_arguments: `canary.delegate` got invalid arguments: /agent: "boss" is not one of "researcher", "coder""#
    );
    insta::assert_snapshot!(
        refusal("nope", json!({})),
        @"unknown_capability: no capability `nope` is mounted (mounted modules: canary)"
    );
}

#[test]
fn failures_and_panics_come_back_as_data() {
    let mounted = registry().mount_all();
    let run = Run::new(Gate::headless(Mode::Default, "test"));
    let err = block_on(mounted.invoke(&run, "fail_always", json!({}))).unwrap_err();
    assert_eq!((err.code, err.message.as_str(), err.capability.as_str()), (ErrorCode::Failed, canary::FAILURE, "canary.fail_always"));
    // The data and JSON-RPC code the impl attached reach the caller, in Rust
    // and as JSON; a failure without them carries neither key.
    assert_eq!((err.data.as_deref(), err.jsonrpc_code), (Some(&canary::failure_data()), Some(-32603)));
    let apart = Run::new(Gate::headless(Mode::Default, "test"));
    let as_json: Value = serde_json::from_str(&block_on(mounted.invoke_json(&apart, r#"{"name": "fail_always", "arguments": {}}"#))).unwrap();
    assert_eq!(as_json, json!({"error": "failed", "message": canary::FAILURE, "capability": "canary.fail_always", "data": canary::failure_data(), "jsonrpcCode": -32603}));
    let err = block_on(mounted.invoke(&run, "panic_always", json!({}))).unwrap_err();
    assert_eq!(err.code, ErrorCode::Failed);
    assert!(err.message.contains(&format!("panicked: {}", canary::PANIC)), "{}", err.message);
    let statuses: Vec<Status> = run.receipts().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [Status::Failed, Status::Failed]);
    // The run goes on after a panic.
    assert!(block_on(mounted.invoke(&run, "peek", json!({"note_id": "x"}))).is_ok());
    assert_eq!(
        serde_json::to_value(&err).unwrap(),
        json!({"error": "failed", "message": err.message, "capability": "canary.panic_always"})
    );
}

#[test]
fn the_call_budget_is_a_limit() {
    let mounted = registry().mount_all();
    let run = Run::new(Gate::headless(Mode::Auto, "test")).with_limits(capspec::Limits { max_calls: 2 });
    for _ in 0..2 {
        block_on(mounted.invoke(&run, "peek", json!({"note_id": "x"}))).unwrap();
    }
    let err = block_on(mounted.invoke(&run, "peek", json!({"note_id": "x"}))).unwrap_err();
    assert_eq!(err.code, ErrorCode::LimitExceeded);
}

#[test]
fn registry_reports_missing_and_unknown_impls_when_built() {
    let err = Registry::with_impls(&[canary::MODULE], []).unwrap_err();
    assert_eq!(err.problems.len(), 6, "{err}");
    assert!(err.problems[0].contains("`canary.delegate` has no impl; add a #[capability(canary::delegate)] fn"), "{err}");

    static BOGUS_SPEC: capspec::Spec = capspec::Spec { name: "ghost", ..canary::peek::SPEC };
    static BOGUS: capspec::__internals::Registration = capspec::__internals::Registration { module: BOGUS_SPEC.module, name: BOGUS_SPEC.name, fingerprint: Some(BOGUS_SPEC.fingerprint), call: |_, _| Box::pin(async { Ok(Value::Null) }), file: "ghost.rs", line: 7 };
    let impls = capspec::__internals::registrations().chain([&BOGUS]);
    let err = Registry::with_impls(&[canary::MODULE], impls).unwrap_err();
    assert_eq!(err.problems, ["ghost.rs:7: impl of `canary.ghost`, which no spec declares"]);
}

/// A `#[derive(Capability)]` spec that the generated tables miss, or carry
/// with another category or description, stops the registry from building:
/// a stale build never gates a write under a read classification.
#[test]
fn registry_refuses_code_first_specs_the_bindings_do_not_match() {
    fn schema() -> Value {
        json!({"type": "object"})
    }
    let declared = |name: &'static str, category: capspec::Category, description: &'static str| capspec::CodeFirst {
        module: "canary",
        name,
        category,
        description,
        title: None,
        aliases: &[],
        hints: &[],
        open: false,
        rust_type: "host::Args",
        file: "src/host.rs",
        line: 12,
        column: 8,
        input_schema: schema,
        fields: &[],
        feature: None,
    };
    let peek = canary::peek::SPEC;
    let matching = declared("peek", peek.category, peek.description);
    let impls: Vec<_> = capspec::__internals::registrations().collect();
    Registry::build(&[canary::MODULE], impls.iter().copied(), [&matching]).expect("a code-first spec the bindings carry as declared");

    let reclassified = declared("peek", capspec::Category::Write, peek.description);
    let redescribed = declared("peek", peek.category, "Something else.");
    let unsynced = declared("unsynced", capspec::Category::Read, "New.");
    let other_module = capspec::CodeFirst { module: "elsewhere", ..declared("x", capspec::Category::Read, "X.") };
    let err = Registry::build(&[canary::MODULE], impls.iter().copied(), [&reclassified, &redescribed, &unsynced, &other_module]).unwrap_err();
    assert_eq!(
        err.problems,
        [
            "src/host.rs:12: `canary.peek` is `write` in the code but `read` in the generated bindings; run `cargo xtask sync`",
            "src/host.rs:12: the description of `canary.peek` differs between the code and the generated bindings; run `cargo xtask sync`",
            "src/host.rs:12: `canary.unsynced` is declared by #[derive(Capability)] on `host::Args` but is not in the generated bindings; list its package under [code_first] in capspec.toml and run `cargo xtask sync`",
        ]
    );
}

#[test]
fn a_session_sees_only_what_it_mounted() {
    let registry = registry();
    let mounted = registry.mount(&["canary"]).unwrap();
    assert!(mounted.catalog().starts_with("## canary\n"));
    assert_eq!(mounted.capabilities().len(), 6);
    let err = registry.mount(&["canary", "nope"]).unwrap_err();
    assert_eq!(err.problems, ["no module `nope`; modules: canary"]);
    let none = registry.mount(&[]).unwrap();
    assert_eq!(none.catalog(), "");
    let run = Run::new(Gate::headless(Mode::Auto, "test"));
    let err = block_on(none.invoke(&run, "peek", json!({"note_id": "x"}))).unwrap_err();
    assert_eq!(err.code, ErrorCode::UnknownCapability);
}

/// Many runs at once, sharing one registry: two sessions, one whose approver
/// allows for the session and one whose approver always denies. No approval
/// leaks from one session to the other, and panicking impls on other threads
/// do not disturb anyone.
#[test]
fn concurrent_sessions_keep_their_own_approvals() {
    let mounted = registry().mount_all();
    let trusting = SessionAllow::new();
    let wary = SessionAllow::new();
    std::thread::scope(|scope| {
        for i in 0..16 {
            let mounted = mounted.clone();
            let (session, answer) = if i % 2 == 0 { (trusting.clone(), Approval::AllowForSession) } else { (wary.clone(), Approval::Deny("never".into())) };
            scope.spawn(move || {
                let approver = ScriptedApprover::new(std::iter::repeat_n(answer, 50));
                let run = capspec::testing::run(Mode::Default, approver, &session);
                for _ in 0..25 {
                    let result = block_on(mounted.invoke(&run, "poke", json!({"title": "t"})));
                    let _ = block_on(mounted.invoke(&run, "panic_always", json!({})));
                    if i % 2 == 0 {
                        assert!(result.is_ok(), "the trusting session is allowed: {result:?}");
                    } else {
                        assert_eq!(result.unwrap_err().code, ErrorCode::PermissionDenied, "no approval leaks into the wary session");
                    }
                }
            });
        }
    });
    assert!(trusting.contains("canary.poke"));
    assert!(!wary.contains("canary.poke"));
    assert!(!trusting.same_session(&wary));
}
