//! Arbitrary text as the code-first record → converted specs joining a YAML
//! module: findings, never a panic; when valid, every generated Rust file
//! parses.
#![no_main]

use std::path::Path;

use capspec_codegen::code_first::{load_with, parse_record};
use capspec_codegen::load::SpecFile;
use capspec_codegen::render::{Targets, render_all};
use libfuzzer_sys::fuzz_target;

const NOTES: &str = "module: notes\ndescription: Notes.\ncapabilities:\n  - { name: read_note, category: read, description: Read. }\n";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (specs, _) = parse_record("specs/code-first.json", text);
    let loaded = load_with(Path::new("/nonexistent/capspec-fuzz"), vec![SpecFile { path: "specs/notes.yaml".into(), bytes: NOTES.into() }], specs);
    if loaded.findings.iter().any(|f| f.severity == capspec_codegen::Severity::Error) {
        return;
    }
    for artifact in render_all(&loaded.set, &Targets::defaults()) {
        if artifact.path.ends_with(".rs") {
            if let Err(e) = syn::parse_file(&artifact.contents) {
                panic!("{} does not parse: {e}\n{}", artifact.path, artifact.contents);
            }
        }
    }
});
