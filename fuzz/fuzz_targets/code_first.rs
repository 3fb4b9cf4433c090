//! Arbitrary text as the code-first record → converted specs joining a YAML
//! module: findings, never a panic; when valid, every generated Rust file
//! parses.
#![no_main]

use std::path::Path;

use capspec_codegen::code_first::{convert, parse_record};
use capspec_codegen::load::{SpecFile, load_files_with};
use capspec_codegen::render::{Targets, render_all};
use libfuzzer_sys::fuzz_target;

const NOTES: &str = "module: notes\ndescription: Notes.\ncapabilities:\n  - { name: read_note, category: read, description: Read. }\n";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (specs, _) = parse_record("specs/code-first.json", text);
    let entries = convert(Path::new("/nonexistent/capspec-fuzz"), specs).entries;
    let loaded = load_files_with(vec![SpecFile { path: "specs/notes.yaml".into(), bytes: NOTES.into() }], entries);
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
