//! Arbitrary bytes as a spec file: findings, never a panic.
#![no_main]

use capspec_codegen::load::{SpecFile, load_files};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = load_files(vec![SpecFile { path: "specs/fuzz.yaml".into(), bytes: data.to_vec() }]);
});
