//! The guest host: model-written JavaScript in QuickJS, importing generated
//! facades, refused everything else, bounded by limits that each end the run
//! with a named reason.

use std::sync::Arc;
use std::time::{Duration, Instant};

use capspec::guest::{Guest, GuestError, GuestLimits, LimitKind};
use capspec::testing::ScriptedApprover;
use capspec::{Approval, ApprovalRequest, Approver, BoxFuture, CapResult, Gate, Mode, Registry, Run, SessionAllow, capability};
use capspec_tests::bindings::hostile::hostile;
use capspec_tests::canary;
use serde_json::{Value, json};

#[capability(hostile::hostile_text)]
async fn hostile_text(_run: &Run, _args: hostile::hostile_text::Args) -> CapResult<Value> {
    Ok(json!(hostile::hostile_text::SPEC.description))
}
#[capability(hostile::breakout)]
async fn breakout(_run: &Run, args: hostile::breakout::Args) -> CapResult<hostile::breakout::Output> {
    Ok(hostile::breakout::Output { r_raw: Some(serde_json::to_string(&args.mode).unwrap()) })
}

fn guest(limits: GuestLimits) -> Guest {
    let registry = Registry::new(&[canary::MODULE, hostile::MODULE]).unwrap();
    Guest::new(registry.mount(&["canary", "hostile"]).unwrap()).limits(limits)
}

fn auto() -> Run {
    Run::new(Gate::headless(Mode::Auto, "test"))
}

fn small() -> GuestLimits {
    GuestLimits { cpu_time: Duration::from_millis(200), memory_bytes: 16 * 1024 * 1024, stack_bytes: 256 * 1024, max_calls: 5, max_output_bytes: 4096 }
}

#[test]
fn an_action_calls_capabilities_and_returns_json() {
    let run = auto();
    let outcome = guest(small()).run(
        &run,
        r#"import canary from "@capspec/host/canary";
import { poke } from "@capspec/host/canary";
export default async function () {
  console.log("starting", { with: "data" }, 3);
  const a = await canary.peek({ note_id: "n1" });
  const b = await poke({ title: "t" });
  let code;
  try { await canary.peek({ note_id: 7 }); } catch (e) { code = e.code; }
  let failed;
  try { await canary.fail_always(); } catch (e) { failed = [e.code, e.message, e.capability, e.data]; }
  const listed = capabilities().map((c) => `${c.module}.${c.name}:${c.category}`);
  return { a, b, code, failed, count: listed.length, first: listed[0] };
}"#,
    );
    assert_eq!(outcome.error, None);
    assert_eq!(
        outcome.result.unwrap(),
        json!({"a": "n1", "b": {"saved": "t"}, "code": "invalid_arguments", "failed": ["failed", canary::FAILURE, "canary.fail_always", canary::failure_data()], "count": 8, "first": "canary.delegate:external"})
    );
    assert_eq!(outcome.logs, ["starting {\"with\":\"data\"} 3"]);
    assert_eq!(run.receipts().len(), 4);
}

#[test]
fn a_default_export_value_and_a_thrown_error() {
    let outcome = guest(small()).run(&auto(), "export default { answer: 42 };");
    assert_eq!(outcome.result, Some(json!({"answer": 42})));
    let outcome = guest(small()).run(&auto(), "export default async () => { const e = new Error('bad input'); e.code = 'mine'; throw e; };");
    assert_eq!(outcome.error, Some(GuestError::Threw { message: "bad input".into(), code: Some("mine".into()) }));
    let outcome = guest(small()).run(&auto(), "export default () => { this is not javascript");
    // A syntax error is a load failure (the action never ran), not a throw.
    assert!(matches!(&outcome.error, Some(GuestError::Load { message }) if message.to_lowercase().contains("expecting")), "{:?}", outcome.error);
}

#[test]
fn imports_other_than_mounted_facades_are_refused() {
    let registry = Registry::new(&[canary::MODULE, hostile::MODULE]).unwrap();
    let only_canary = Guest::new(registry.mount(&["canary"]).unwrap()).limits(small());
    for (source, needle) in [
        (r#"import h from "@capspec/host/hostile"; export default 1;"#, "not mounted in this session"),
        (r#"import fs from "fs"; export default 1;"#, "only capability modules can be imported"),
        (r#"import { call } from "capspec:bridge"; export default 1;"#, "the bridge is private to the generated facades"),
        (r#"import { dispatch } from "capspec:host"; export default 1;"#, "the bridge is private to the generated facades"),
        (r#"import { finish } from "capspec:finish"; export default 1;"#, "the bridge is private to the generated facades"),
        (r#"export default async () => (await import("@capspec/host/canary")).default;"#, "dynamic import() is not allowed"),
    ] {
        let outcome = only_canary.run(&auto(), source);
        let message = match outcome.error {
            Some(GuestError::Load { message }) | Some(GuestError::Threw { message, .. }) => message,
            other => panic!("{source}: {other:?}"),
        };
        assert!(message.contains(needle), "{source}: {message}");
        assert!(message.contains("@capspec/host/canary") && !message.contains("@capspec/host/hostile,"), "names what is mounted: {message}");
    }
}

fn limit(outcome: &capspec::guest::GuestOutcome) -> LimitKind {
    match &outcome.error {
        Some(GuestError::Limit { limit, .. }) => *limit,
        other => panic!("expected a limit, got {other:?}"),
    }
}

/// A limit is what the engine ran into, never what an error says: an action
/// cannot fake one (a host that retries on limits would be misled).
#[test]
fn thrown_text_never_fakes_a_limit() {
    let g = guest(small());
    for fake in [
        r#"throw new Error("out of memory")"#,
        r#"throw new Error("interrupted")"#,
        r#"throw new Error("stack overflow")"#,
        r#"throw new RangeError("Maximum call stack size exceeded")"#,
        r#"throw new InternalError("out of memory")"#,
    ] {
        let outcome = g.run(&auto(), &format!("export default () => {{ {fake}; }};"));
        assert!(matches!(outcome.error, Some(GuestError::Threw { .. })), "{fake}: {:?}", outcome.error);
        // Rejected promises and throws in later jobs are read the same way.
        let outcome = g.run(&auto(), &format!("export default async () => {{ await null; {fake}; }};"));
        assert!(matches!(outcome.error, Some(GuestError::Threw { .. })), "{fake} (async): {:?}", outcome.error);
    }
    // A real limit caught by the action is still the limit it was.
    let outcome = g.run(&auto(), "export default () => { try { const a = []; while (true) a.push(new Array(100000).fill(1)); } catch (e) { throw new Error(\"fine\"); } };");
    assert_eq!(limit(&outcome), LimitKind::Memory);
}

#[test]
fn the_host_leaves_nothing_on_global_this() {
    let outcome = guest(small()).run(&auto(), r#"export default () => Object.getOwnPropertyNames(globalThis).filter(n => n.startsWith("__capspec") || n === "finish");"#);
    assert_eq!(outcome.result, Some(json!([])));
}

#[test]
fn each_limit_ends_the_run_with_its_name() {
    let g = guest(small());
    let started = Instant::now();
    let outcome = g.run(&auto(), "export default () => { while (true) {} };");
    assert_eq!(limit(&outcome), LimitKind::CpuTime);
    // Not a benchmark: a guard that a runaway loop stops near its limit.
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    let outcome = g.run(&auto(), "export default () => { const a = []; while (true) a.push(new Array(100000).fill(1)); };");
    assert_eq!(limit(&outcome), LimitKind::Memory);
    let outcome = g.run(&auto(), "function f(n) { return f(n + 1) + 1; } export default () => f(0);");
    assert_eq!(limit(&outcome), LimitKind::Stack);
    // With the default (and the largest) stack, too: the guard band scales.
    for stack_bytes in [GuestLimits::DEFAULT.stack_bytes, GuestLimits::CEILING.stack_bytes] {
        let deep = guest(GuestLimits { stack_bytes, ..small() });
        let outcome = deep.run(&auto(), "function f(n) { return f(n + 1) + 1; } export default () => f(0);");
        assert_eq!(limit(&outcome), LimitKind::Stack, "{stack_bytes}");
    }
    let outcome = g.run(&auto(), r#"import c from "@capspec/host/canary"; export default async () => { for (let i = 0; i < 10; i++) await c.peek({ note_id: "x" }); };"#);
    assert_eq!(limit(&outcome), LimitKind::Calls);
    let outcome = g.run(&auto(), r#"export default () => { for (let i = 0; i < 100; i++) console.log("x".repeat(100)); };"#);
    assert_eq!(limit(&outcome), LimitKind::Output);
    let outcome = g.run(&auto(), r#"export default () => "y".repeat(10000);"#);
    assert_eq!(limit(&outcome), LimitKind::Output);
    // The host is unharmed: the next run works.
    assert_eq!(g.run(&auto(), "export default 1;").result, Some(json!(1)));
}

#[test]
fn limits_are_clamped_to_their_ceilings() {
    let huge = GuestLimits { cpu_time: Duration::from_secs(100_000), memory_bytes: usize::MAX, stack_bytes: usize::MAX, max_calls: u32::MAX, max_output_bytes: usize::MAX };
    assert_eq!(huge.clamped(), GuestLimits::CEILING);
}

/// An approver that takes its time, like a person deciding.
struct SlowApprover;

impl Approver for SlowApprover {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async {
            std::thread::sleep(Duration::from_millis(400));
            Approval::AllowOnce
        })
    }
}

#[test]
fn waiting_for_approval_does_not_count_against_the_cpu_limit() {
    let run = Run::new(Gate::new(Mode::Default, Arc::new(SlowApprover), SessionAllow::new()));
    let outcome = guest(small()).run(&run, r#"import c from "@capspec/host/canary"; export default async () => [await c.poke({ title: "a" }), await c.launch({ program: "b" })];"#);
    assert_eq!(outcome.error, None, "two 400 ms approvals under a 200 ms CPU limit");
    assert_eq!(outcome.result, Some(json!([{"saved": "a"}, "ran b"])));
    assert!(run.approval_wait() >= Duration::from_millis(800));
    assert!(outcome.cpu_time < Duration::from_millis(200));
}

#[test]
fn a_denial_is_a_catchable_error_and_the_impl_does_not_run() {
    let approver = ScriptedApprover::new([Approval::Deny("not today".into())]);
    let run = Run::new(Gate::new(Mode::Default, approver.clone(), SessionAllow::new()));
    let outcome = guest(small()).run(
        &run,
        r#"import c from "@capspec/host/canary";
export default async () => { try { await c.poke({ title: "a" }); return "wrote"; } catch (e) { return [e.code, e.message]; } };"#,
    );
    assert_eq!(outcome.result, Some(json!(["permission_denied", "not today"])));
    let outcome = guest(small()).run(&Run::new(Gate::headless(Mode::Plan, "test")), r#"import c from "@capspec/host/canary"; export default async () => { try { await c.launch({ program: "x" }); } catch (e) { return e.code; } };"#);
    assert_eq!(outcome.result, Some(json!("blocked_in_plan_mode")));
}

/// Hostile spec text reaches the guest only as data: the facade carries
/// names, never descriptions, and descriptions returned as values stay strings.
#[test]
fn hostile_spec_text_cannot_execute_in_the_guest() {
    // The hostile fixture's facades import the bridge as "./bridge.mjs"
    // (its capspec.toml sets `bridge`), so the guest host is told so.
    let registry = Registry::new(&[canary::MODULE, hostile::MODULE]).unwrap();
    let guest = Guest::new(registry.mount(&["hostile"]).unwrap()).bridge("./bridge.mjs").limits(small());
    let outcome = guest.run(
        &auto(),
        r#"import hostile from "@capspec/host/hostile";
export default async () => {
  const text = await hostile.hostile_text({});
  const echoed = await hostile.breakout({ mode: "a\"b" });
  return { pwned: typeof globalThis.pwned, text_is_string: typeof text === "string", has_script: text.includes("</script>"), echoed };
};"#,
    );
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.result, Some(json!({"pwned": "undefined", "text_is_string": true, "has_script": true, "echoed": {"r#\"raw\"#": "\"a\\\"b\""}})));
}
