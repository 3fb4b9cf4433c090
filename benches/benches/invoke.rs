//! `invoke` overhead for a read capability with small arguments, against a
//! direct call of the same async fn. The difference is lookup + coercion +
//! validation + gate + dispatch + receipt.

use capspec::testing::block_on;
use capspec::{Gate, Mode, Run};
use capspec_benches::{canary, peek_impl, registry};
use serde_json::json;

fn main() {
    divan::main();
}

#[divan::bench]
fn direct_call(bencher: divan::Bencher) {
    let run = Run::new(Gate::headless(Mode::Default, "bench"));
    bencher.bench_local(|| {
        let args: canary::peek::Args = serde_json::from_value(json!({"note_id": "n1"})).unwrap();
        block_on(peek_impl(&run, divan::black_box(args)))
    });
}

#[divan::bench]
fn invoke_read(bencher: divan::Bencher) {
    let mounted = registry().mount_all();
    let run = Run::new(Gate::headless(Mode::Default, "bench")).with_limits(capspec::Limits { max_calls: u32::MAX });
    bencher.bench_local(|| block_on(mounted.invoke(&run, "peek", divan::black_box(json!({"note_id": "n1"})))));
}
