//! `coverage/contract-unchecked` and the coverage table, against real git
//! repositories in temp dirs: a changed contract must come with a touched
//! test that exercises it, or an `[[allow]]` that says why not; the table is
//! computed from the same scan, so it follows the tests without a sync.

use capspec_codegen::check::{CheckOptions, check_with};
use capspec_testkit::{MINIMAL_SPEC, TempDir, git, rules};

const CONFIG: &str = "specs = \"specs\"\n\n[coverage]\nsources = [\"src\"]\ntests = [\"tests\"]\n";
const IMPL: &str = "#[capability(notes::read_note)]\nasync fn read_note(run: &Run, args: notes::read_note::Args) -> CapResult<String> {\n    Ok(String::new())\n}\n";
const TEST: &str = "#[test]\nfn reads_a_note() {\n    let name = \"read_note\";\n    assert_eq!(name.len(), 9);\n}\n\n#[test]\nfn unrelated() {\n    assert!(true);\n}\n";

/// A committed project (tag `v1`) whose one capability has an impl and a test.
fn project(config: &str) -> TempDir {
    let dir = TempDir::new("contract");
    git(dir.path(), &["init", "-q"]);
    dir.write("capspec.toml", config);
    dir.write("specs/notes.yaml", MINIMAL_SPEC);
    dir.write("src/notes.rs", IMPL);
    dir.write("tests/notes.rs", TEST);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "v1"]);
    git(dir.path(), &["tag", "v1"]);
    dir
}

/// The findings of one rule family after `check --base v1`.
fn found(dir: &TempDir, prefix: &str) -> Vec<capspec_codegen::Finding> {
    let report = check_with(dir.path(), &CheckOptions { base: Some("v1".into()), ..CheckOptions::default() }).unwrap();
    report.findings.into_iter().filter(|f| f.rule.starts_with(prefix)).collect()
}

fn edit_description(dir: &TempDir) {
    dir.write("specs/notes.yaml", MINIMAL_SPEC.replace("Read a note.", "Read a note by its id."));
}

#[test]
fn a_changed_contract_with_no_test_touched_fails() {
    let dir = project(CONFIG);
    edit_description(&dir);
    let findings = found(&dir, "coverage/contract-unchecked");
    assert_eq!(rules(&findings), ["coverage/contract-unchecked"]);
    insta::assert_snapshot!(findings[0].message, @"`notes.read_note` changed its description since `v1`, and the diff touches no test that exercises it (tests that exercise it: `tests/notes.rs::reads_a_note`; update one to check the new contract), or add an `[[allow]]` with the reason");
    assert_eq!((findings[0].file.as_str(), findings[0].line), ("specs/notes.yaml", 4));
}

#[test]
fn the_same_edit_with_the_exercising_test_touched_passes() {
    let dir = project(CONFIG);
    edit_description(&dir);
    // Touching an unrelated test is not enough …
    dir.write("tests/notes.rs", TEST.replace("assert!(true);", "assert!(1 + 1 == 2);"));
    assert_eq!(found(&dir, "coverage/contract-unchecked").len(), 1);
    // … touching the one that exercises it is.
    dir.write("tests/notes.rs", TEST.replace("assert_eq!(name.len(), 9);", "assert_eq!(name.len(), 9, \"by id\");"));
    assert!(found(&dir, "coverage/contract-unchecked").is_empty());
    // A new, untracked test file that exercises it counts too.
    dir.write("tests/notes.rs", TEST);
    dir.write("tests/by_id.rs", "#[test]\nfn read_note_by_id() {\n    let _ = \"read_note\";\n}\n");
    assert!(found(&dir, "coverage/contract-unchecked").is_empty());
}

#[test]
fn an_allow_with_a_reason_passes_and_a_todo_reason_fails() {
    let allow = |reason: &str| format!("{CONFIG}\n[[allow]]\nrule = \"coverage/contract-unchecked\"\ncapability = \"read_note\"\nreason = \"{reason}\"\n");
    let dir = project(&allow("the wording changed; the behaviour did not"));
    edit_description(&dir);
    assert!(found(&dir, "coverage/contract-unchecked").is_empty());
    assert!(found(&dir, "config/").is_empty());
    let dir = project(&allow("TODO: write a test"));
    edit_description(&dir);
    assert!(!found(&dir, "config/").is_empty(), "a TODO is not a reason");
}

#[test]
fn an_unchanged_contract_with_a_refactored_impl_passes() {
    let dir = project(CONFIG);
    dir.write("src/notes.rs", IMPL.replace("Ok(String::new())", "let text = String::new();\n    Ok(text)"));
    assert!(found(&dir, "coverage/contract-unchecked").is_empty());
}

#[test]
fn new_capabilities_count_and_renames_kept_as_aliases_count_only_when_changed() {
    let dir = project(CONFIG);
    // Renamed, the old name kept as an alias, contract unchanged: fine.
    dir.write("specs/notes.yaml", MINIMAL_SPEC.replace("name: read_note", "name: get_note\n    aliases: [read_note]"));
    dir.write("src/notes.rs", IMPL.replace("read_note", "get_note"));
    assert!(found(&dir, "coverage/contract-unchecked").is_empty());
    // A new capability with no touched test is unchecked.
    dir.write("specs/notes.yaml", format!("{MINIMAL_SPEC}  - name: list_notes\n    category: read\n    description: List notes.\n"));
    dir.write("src/notes.rs", IMPL.replace("read_note", "list_notes") + IMPL);
    let findings = found(&dir, "coverage/contract-unchecked");
    assert_eq!(findings.len(), 1);
    assert!(findings[0].message.starts_with("`notes.list_notes` is new since `v1`"), "{}", findings[0].message);
}

#[test]
fn the_table_names_no_test_without_a_record_and_shows_the_gap_note() {
    let dir = project(CONFIG);
    let table = capspec_codegen::coverage_table::coverage(dir.path()).unwrap().table;
    let row = &table.capabilities[0];
    assert_eq!(row.capability, "notes.read_note");
    // The test names it, but no `cargo test` recorded a call: no test.
    assert!(row.tests.is_empty(), "{row:?}");
    assert_eq!((row.implemented_by[0].file.as_str(), row.implemented_by[0].line), ("src/notes.rs", 1));
    insta::assert_snapshot!(table.to_markdown(), @r"
    Tests: none counted: no coverage record; run `cargo test` to record which tests run each capability.

    | capability | category | implemented by | tests | gap |
    |---|---|---|---|---|
    | `notes.read_note` | read | `src/notes.rs:1` |  | **untested** |
    ");
    // With a written gap note, the table shows the reason.
    dir.write("capspec.toml", format!("{CONFIG}\n[[allow]]\nrule = \"coverage/untested\"\ncapability = \"read_note\"\nreason = \"exercised | by the browser suite\"\n"));
    let table = capspec_codegen::coverage_table::coverage(dir.path()).unwrap().table;
    assert_eq!(table.capabilities[0].gap.as_deref(), Some("exercised | by the browser suite"));
    assert!(table.to_markdown().contains("| exercised \\| by the browser suite |"));
}
