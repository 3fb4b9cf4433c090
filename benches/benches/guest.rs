//! The guest host: starting a sandbox, and one guest → host capability call.
//!
//! `start` runs an action that makes no call; `calls_N` runs an action that
//! makes N sequential calls of a read capability. The cost of one call is
//! (calls_101 − calls_1) / 100, reported in BENCHMARKS.md. `replay_*`: one
//! resumed round of an action against the same action run once in `auto`.

use capspec::guest::Guest;

use capspec::{Gate, Mode, Run};
use capspec_benches::canary::TEN_READS_THEN_A_WRITE;
use capspec_benches::registry;

fn main() {
    divan::main();
}

fn action(calls: usize) -> String {
    format!(
        r#"import canary from "@capspec/host/canary";
export default async () => {{ let last; for (let i = 0; i < {calls}; i++) last = await canary.peek({{ note_id: "n" }}); return last; }};"#
    )
}

#[divan::bench]
fn start(bencher: divan::Bencher) {
    let guest = Guest::new(registry().mount_all());
    let run = Run::new(Gate::headless(Mode::Auto, "bench"));
    bencher.bench_local(|| guest.run(&run, "export default 1;"));
}

#[divan::bench(args = [1, 101])]
fn calls(bencher: divan::Bencher, n: usize) {
    let limits = capspec::guest::GuestLimits { max_calls: 1000, ..capspec::guest::GuestLimits::DEFAULT };
    let guest = Guest::new(registry().mount_all()).limits(limits);
    let source = action(n);
    bencher.bench_local(|| {
        let run = Run::new(Gate::headless(Mode::Auto, "bench"));
        let outcome = guest.run(&run, &source);
        assert!(outcome.error.is_none());
        outcome
    });
}

/// The action run once in `auto` mode: every call runs, nothing asks.
#[divan::bench]
fn replay_baseline_auto(bencher: divan::Bencher) {
    let guest = Guest::new(registry().mount_all());
    bencher.bench_local(|| {
        let run = Run::new(Gate::headless(Mode::Auto, "bench"));
        let outcome = guest.run(&run, TEN_READS_THEN_A_WRITE);
        assert!(outcome.error.is_none());
        outcome
    });
}

/// The server's side of one resumed round of the same action in `default`
/// mode: open and check the sealed state, run the action from the start
/// with its ten reads answered from the journal, run the approved write,
/// and end the round.
#[divan::bench]
fn replay_resumed_round(bencher: divan::Bencher) {
    use capspec::mcp::resume::{InputResponses, Request, round};
    use capspec::mcp::{APPROVAL_INPUT, ReplayBounds, StateKey};
    let guest = Guest::new(registry().mount_all());
    let key = StateKey::random();
    let default = || Run::new(Gate::headless(Mode::Default, "bench"));
    let first = Request { code: TEN_READS_THEN_A_WRITE, state: None, responses: None, can_ask: true };
    let (_, _, asked) = round(&guest, default(), &key, ReplayBounds::default(), first).expect("a first round");
    let state = asked.and_then(|a| a.request_state).expect("the write asks");
    let accept: InputResponses = serde_json::from_value(serde_json::json!({ APPROVAL_INPUT: {"action": "accept", "content": {}} })).unwrap();
    bencher.bench_local(|| {
        let retry = Request { code: TEN_READS_THEN_A_WRITE, state: Some(&state), responses: Some(&accept), can_ask: true };
        let (outcome, run, asked) = round(&guest, default(), &key, ReplayBounds::default(), retry).expect("the state opens");
        assert!(outcome.error.is_none() && asked.is_none());
        (outcome, run)
    });
}
