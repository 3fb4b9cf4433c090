//! Argument validation: capspec's hand-written validator against the
//! `jsonschema` crate, on the same schemas and arguments — the canary's
//! small `peek` input and the subset fixture's `everything`, which uses
//! every supported keyword. Both validators are built once, outside the
//! timed loop, as the registry builds its validators once.

use capspec::__internals::Validator;
use capspec_tests::bindings::subset::subset::everything;
use serde_json::{Value, json};

fn main() {
    divan::main();
}

fn cases() -> [(&'static str, Value, Value); 2] {
    [
        ("peek", serde_json::from_str(capspec_benches::canary::peek::SPEC.input_schema).unwrap(), json!({"note_id": "n1", "max_lines": 3})),
        (
            "everything",
            serde_json::from_str(everything::SPEC.input_schema).unwrap(),
            json!({
                "s": "abc", "n": 1.5, "i": 4, "b": true, "e": "b", "c": "fixed",
                "arr": [1, 2], "map": {"k": 2.0}, "free": {"any": ["thing"]},
                "obj": {"inner": {"label": "x"}}, "one": {"x": 1}, "any": 7,
                "type": "t", "self": "s", "Self": "S", "maxResults": 3, "content-type": "c", "3d": false
            }),
        ),
    ]
}

#[divan::bench(args = ["peek", "everything"])]
fn capspec(bencher: divan::Bencher, case: &str) {
    let (_, schema, args) = cases().into_iter().find(|(n, _, _)| *n == case).unwrap();
    let validator = Validator::compile(&schema).unwrap();
    assert!(validator.validate(&args).is_empty());
    bencher.bench_local(|| validator.validate(divan::black_box(&args)));
}

#[divan::bench(args = ["peek", "everything"])]
fn jsonschema_crate(bencher: divan::Bencher, case: &str) {
    let (_, schema, args) = cases().into_iter().find(|(n, _, _)| *n == case).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&args));
    // All errors, as capspec reports them (none here: the arguments are valid).
    bencher.bench_local(|| validator.iter_errors(divan::black_box(&args)).count());
}
