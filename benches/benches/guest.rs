//! The guest host: starting a sandbox, and one guest → host capability call.
//!
//! `start` runs an action that makes no call; `calls_N` runs an action that
//! makes N sequential calls of a read capability. The cost of one call is
//! (calls_101 − calls_1) / 100, reported in BENCHMARKS.md.

use capspec::guest::Guest;

use capspec::{Gate, Mode, Run};
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
