//! The coverage walk in both directions (specs → impls and tests, impls →
//! specs), stubs, unparsable sources and suppressions, on a fixture project
//! copied to a temp dir and synced first so only coverage findings remain.

use capspec_codegen::report::{self, Format};
use capspec_tests::{TempDir, copy_dir, fixtures};


#[test]
fn coverage_walk_and_suppressions() {
    let dir = TempDir::new("coverage-walk");
    copy_dir(&fixtures().join("coverage/walk"), dir.path());
    capspec_codegen::sync(dir.path()).unwrap();
    let report = capspec_codegen::check(dir.path()).unwrap();
    let rules: Vec<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
    for rule in ["coverage/unknown", "coverage/duplicate-impl", "coverage/stub", "coverage/untested", "coverage/parse", "config/allow-unmatched"] {
        assert!(rules.contains(&rule), "missing {rule}: {rules:?}");
    }
    // Suppressed with reasons: list_notes untested, archive_note unimplemented.
    assert!(!report.findings.iter().any(|f| f.rule == "coverage/unimplemented"), "{rules:?}");
    assert!(!report.findings.iter().any(|f| f.message.contains("notes.list_notes")), "{rules:?}");
    insta::assert_snapshot!(report::render(&report, Format::Human));
}

fn rules(dir: &std::path::Path) -> Vec<(String, String)> {
    capspec_codegen::check(dir).unwrap().findings.into_iter().map(|f| (f.rule, f.capability.unwrap_or_default())).collect()
}

/// scaffold → `coverage/stub` → fill in → clean, on a project whose
/// `--root` is not a Cargo project.
#[test]
fn scaffold_round_trip() {
    let dir = TempDir::new("scaffold");
    dir.write("capspec.toml", "specs = \"specs\"\n[generate]\nrust = \"host/src/generated\"\n[coverage]\nsources = [\"host/src\"]\ntests = [\"host/tests\"]\n");
    dir.write(
        "specs/notes.yaml",
        "module: notes\ndescription: N.\ncapabilities:\n  - { name: read_note, category: read, description: R., output: { type: string } }\n  - { name: drop_note, category: write, description: D. }\n",
    );
    dir.write("host/src/capabilities/notes.rs", "//! mine\nfn keep_me() {}\n");
    dir.write("host/tests/t.rs", "#[test]\nfn t() { call(\"read_note\"); call(\"drop_note\"); }\n");
    capspec_codegen::sync(dir.path()).unwrap();
    assert_eq!(rules(dir.path()), [("coverage/unimplemented".into(), "read_note".into()), ("coverage/unimplemented".into(), "drop_note".into())]);

    let outcome = capspec_codegen::scaffold::scaffold(dir.path()).unwrap();
    assert_eq!(outcome.written.get("host/src/capabilities/notes.rs").unwrap(), &["drop_note", "read_note"]);
    let text = std::fs::read_to_string(dir.path().join("host/src/capabilities/notes.rs")).unwrap();
    assert!(text.starts_with("//! mine\nfn keep_me() {}\n"), "existing code is kept: {text}");
    insta::assert_snapshot!(text);
    syn_parses(&text);
    let stubs: Vec<_> = rules(dir.path());
    assert_eq!(stubs, [("coverage/stub".into(), "drop_note".into()), ("coverage/stub".into(), "read_note".into())]);

    // A second scaffold adds nothing.
    assert!(capspec_codegen::scaffold::scaffold(dir.path()).unwrap().written.is_empty());
    // Filling in the bodies makes the project clean.
    let filled = text.replace("todo!(\"implement notes.drop_note\")", "Ok(())").replace("todo!(\"implement notes.read_note\")", "Ok(String::new())");
    dir.write("host/src/capabilities/notes.rs", &filled);
    assert_eq!(rules(dir.path()), Vec::<(String, String)>::new());
}

fn syn_parses(text: &str) {
    // The scan reports unparsable sources as coverage/parse; a stub file
    // must never be one.
    assert!(!text.contains("coverage/parse"));
    let dir = TempDir::new("scaffold-parse");
    dir.write("capspec.toml", "specs = \"specs\"\n");
    dir.write("specs/x.yaml", "module: x\ndescription: X.\ncapabilities:\n  - { name: y, category: read, description: Y. }\n");
    dir.write("src/a.rs", text);
    let report = capspec_codegen::check(dir.path()).unwrap();
    assert!(!report.findings.iter().any(|f| f.rule == "coverage/parse"), "{:?}", report.findings);
}
