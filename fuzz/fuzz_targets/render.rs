//! Arbitrary valid specs → every generated Rust file still parses.
#![no_main]

use capspec_codegen::load::{SpecFile, load_files};
use capspec_codegen::render::{Targets, render_all};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let loaded = load_files(vec![SpecFile { path: "specs/fuzz.yaml".into(), bytes: data.to_vec() }]);
    if !loaded.findings.is_empty() || loaded.set.modules.is_empty() {
        return;
    }
    let targets = Targets::defaults();
    for artifact in render_all(&loaded.set, &targets) {
        if artifact.path.ends_with(".rs") {
            if let Err(e) = syn::parse_file(&artifact.contents) {
                panic!("{} does not parse: {e}\n{}", artifact.path, artifact.contents);
            }
        }
    }
});
