//! The fuzz targets' checked-in inputs (`fuzz/corpus/<target>/`: the seeds
//! and every crash input found so far) run through the same checks as the
//! fuzz targets, in plain `cargo test`.

use std::path::PathBuf;

use capspec_codegen::load::{SpecFile, load_files};
use capspec_codegen::render::{Targets, render_all};

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no inputs for {target}");
    out
}

#[test]
fn load_spec_inputs_never_panic() {
    for (name, bytes) in inputs("load_spec") {
        let result = std::panic::catch_unwind(|| load_files(vec![SpecFile { path: "specs/fuzz.yaml".into(), bytes: bytes.clone() }]));
        assert!(result.is_ok(), "{name} panicked the loader");
    }
}

#[test]
fn render_inputs_generate_rust_that_parses() {
    let targets = Targets::defaults();
    let mut rendered = 0;
    for (name, bytes) in inputs("render") {
        // The module name comes from the file stem, so keep the seed's name.
        let stem = name.split('.').next().unwrap().to_string();
        let loaded = load_files(vec![SpecFile { path: format!("specs/{stem}.yaml"), bytes }]);
        if !loaded.findings.is_empty() {
            continue;
        }
        for a in render_all(&loaded.set, &targets).iter().filter(|a| a.path.ends_with(".rs")) {
            assert!(syn::parse_file(&a.contents).is_ok(), "{name}: {} does not parse", a.path);
        }
        rendered += 1;
    }
    assert!(rendered >= 3, "only {rendered} render inputs were valid specs");
}

#[test]
fn argument_inputs_never_panic() {
    let mut exercised = 0;
    for (name, bytes) in inputs("arguments") {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let Some((schema, args)) = text.split_once('\n') else { continue };
        // Exactly what the fuzz target does: inputs that are not a schema and
        // arguments are skipped, the rest must never panic.
        let (Ok(schema), Ok(args)) = (serde_json::from_str::<serde_json::Value>(schema), serde_json::from_str::<serde_json::Value>(args)) else { continue };
        let Ok(validator) = capspec::__internals::Validator::compile(&schema) else { continue };
        let result = std::panic::catch_unwind(|| capspec::__internals::coerce(args.clone(), &validator).map(|m| validator.validate(&serde_json::Value::Object(m))));
        assert!(result.is_ok(), "{name} panicked");
        exercised += 1;
    }
    // A corpus where every input is skipped would test nothing: the seeds
    // that reach coerce/validate today must keep reaching it.
    assert!(exercised >= 2, "only {exercised} argument seeds reached coerce/validate");
}

#[test]
fn code_first_record_inputs_load_and_render() {
    use capspec_codegen::code_first::{load_with, parse_record};
    const NOTES: &str = "module: notes\ndescription: Notes.\ncapabilities:\n  - { name: read_note, category: read, description: Read. }\n";
    let mut rendered = 0;
    for (name, bytes) in inputs("code_first") {
        let Ok(text) = String::from_utf8(bytes) else { continue };
        let result = std::panic::catch_unwind(|| {
            let (specs, _) = parse_record("specs/code-first.json", &text);
            load_with(std::path::Path::new("/nonexistent/capspec-fuzz"), vec![SpecFile { path: "specs/notes.yaml".into(), bytes: NOTES.into() }], specs)
        });
        let loaded = result.unwrap_or_else(|_| panic!("{name} panicked the loader"));
        if loaded.findings.iter().any(|f| f.severity == capspec_codegen::Severity::Error) {
            continue;
        }
        for a in render_all(&loaded.set, &Targets::defaults()).iter().filter(|a| a.path.ends_with(".rs")) {
            assert!(syn::parse_file(&a.contents).is_ok(), "{name}: {} does not parse", a.path);
        }
        rendered += 1;
    }
    assert!(rendered >= 3, "only {rendered} code-first inputs were valid");
}
