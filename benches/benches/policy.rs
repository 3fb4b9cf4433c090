//! The policy step's cost in `invoke` (DESIGN §14), side by side in one run:
//! the canary `peek` (a read with small arguments, headless gate in `auto`)
//!
//! - `no_policies`: a `Run` with no `PolicyGate`, so the ladder does no
//!   policy work;
//! - `thousand_policies`: 1,000 policies naming 10,000 actions, of which 10
//!   apply to `canary.peek` (by its id, its module group or its category
//!   group; forbids that do not fire, permits with conditions), enforced;
//! - `thousand_policies_log`: the same in log mode.
//!
//! The policies are indexed by action, so a call evaluates its 10, not 1,000.

use std::sync::Arc;

use capspec::policy::{Policies, PolicyGate, PolicyMode, Source};
use capspec::testing::block_on;
use capspec::{Gate, Mode, Run};
use capspec_benches::registry;
use serde_json::json;

fn main() {
    divan::main();
}

/// `others` policies over ten other actions each (990 of them name 9,900
/// actions), and 10 that apply to `canary.peek`.
pub fn policies(others: usize) -> Policies {
    let mut text = String::new();
    for i in 0..others {
        let actions: Vec<String> = (0..10).map(|j| format!("Capspec::Action::\"m{}.cap_{}\"", i % 500, i * 10 + j)).collect();
        let effect = if i % 3 == 0 { "forbid" } else { "permit" };
        text.push_str(&format!(
            "@id(\"other-{i}\")\n{effect}(principal, action in [{}], resource) when {{ context.input has path && context.input.path like \"*.env\" }};\n",
            actions.join(", ")
        ));
    }
    let applying = [
        "forbid(principal, action == Capspec::Action::\"canary.peek\", resource) when { context.input.note_id == \"secret\" };",
        "forbid(principal, action == Capspec::Action::\"canary.peek\", resource) when { context.input.note_id like \"*.env\" };",
        "forbid(principal, action == Capspec::Action::\"canary.peek\", resource) when { context.input has max_lines && context.input.max_lines > 90 };",
        "forbid(principal, action in Capspec::Action::\"module:canary\", resource) unless { context.mode != \"bypass\" };",
        "forbid(principal, action in Capspec::Action::\"category:read\", resource) when { principal in Capspec::Group::\"banned\" };",
        "permit(principal, action == Capspec::Action::\"canary.peek\", resource) when { context.input.note_id like \"n*\" };",
        "permit(principal, action == Capspec::Action::\"canary.peek\", resource) when { principal in Capspec::Group::\"support\" };",
        "permit(principal, action in Capspec::Action::\"module:canary\", resource) when { context.mode == \"auto\" };",
        "permit(principal, action in Capspec::Action::\"category:read\", resource) when { context.category == \"read\" };",
        "permit(principal, action in [Capspec::Action::\"canary.peek\", Capspec::Action::\"canary.poke\"], resource) when { context.input has note_id };",
    ];
    for (i, policy) in applying.iter().enumerate() {
        text.push_str(&format!("@id(\"peek-{i}\")\n{policy}\n"));
    }
    Policies::parse(&[Source { file: "policies/bench.cedar".into(), text }]).expect("the benchmark's policies parse")
}

fn session(mode: Option<PolicyMode>) -> Run {
    let run = Run::new(Gate::headless(Mode::Auto, "bench")).with_limits(capspec::Limits { max_calls: u32::MAX });
    match mode {
        None => run,
        Some(mode) => run.with_policies(Arc::new(PolicyGate::new(policies(990), mode))),
    }
}

fn bench_invoke(bencher: divan::Bencher, run: Run) {
    let mounted = registry().mount_all();
    let first = block_on(mounted.invoke(&run, "peek", json!({"note_id": "n1"})));
    assert!(first.is_ok(), "{first:?}");
    bencher.bench_local(|| block_on(mounted.invoke(&run, "peek", divan::black_box(json!({"note_id": "n1"})))));
}

#[divan::bench]
fn no_policies(bencher: divan::Bencher) {
    bench_invoke(bencher, session(None));
}

#[divan::bench]
fn thousand_policies_enforced(bencher: divan::Bencher) {
    let run = session(Some(PolicyMode::Enforce));
    let gate = run.policies().expect("a policy gate");
    let applying = gate.policies().for_action("canary", "peek", capspec::Category::Read);
    assert_eq!((gate.policies().len(), applying.policies().count()), (1_000, 10));
    bench_invoke(bencher, run);
}

/// The same 10 applying policies alone: what the index saves is the
/// difference from `thousand_policies_enforced`.
#[divan::bench]
fn ten_policies_enforced(bencher: divan::Bencher) {
    let run = Run::new(Gate::headless(Mode::Auto, "bench")).with_limits(capspec::Limits { max_calls: u32::MAX });
    bench_invoke(bencher, run.with_policies(Arc::new(PolicyGate::new(policies(0), PolicyMode::Enforce))));
}

#[divan::bench]
fn thousand_policies_log(bencher: divan::Bencher) {
    bench_invoke(bencher, session(Some(PolicyMode::Log)));
}
