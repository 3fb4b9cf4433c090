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
fn the_table_follows_the_tests_with_no_sync() {
    let dir = project(CONFIG);
    let rows = |dir: &TempDir| capspec_codegen::coverage_table::coverage(dir.path()).unwrap().table.capabilities;
    let row = &rows(&dir)[0];
    assert_eq!(row.capability, "notes.read_note");
    assert_eq!(row.tests, ["tests/notes.rs::reads_a_note"]);
    assert_eq!((row.implemented_by[0].file.as_str(), row.implemented_by[0].line), ("src/notes.rs", 1));
    // The test is deleted: the row loses it, and shows the gap.
    dir.write("tests/notes.rs", "#[test]\nfn unrelated() {}\n");
    let table = capspec_codegen::coverage_table::coverage(dir.path()).unwrap().table;
    assert!(table.capabilities[0].tests.is_empty());
    insta::assert_snapshot!(table.to_markdown(), @r"
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

#[test]
fn a_name_two_modules_share_is_exercised_only_by_its_qualified_or_wire_name() {
    let dir = project(CONFIG);
    dir.write("specs/other.yaml", MINIMAL_SPEC.replace("module: notes", "module: other").replace("Notes.", "Other notes."));
    dir.write("src/other.rs", IMPL.replace("notes::", "other::"));
    // `tests/notes.rs` mentions the bare `read_note`, which both modules have.
    let rows = |dir: &TempDir| capspec_codegen::coverage_table::coverage(dir.path()).unwrap().table.capabilities;
    assert!(rows(&dir).iter().all(|r| r.tests.is_empty()), "a bare shared name exercises neither");
    let untested = capspec_codegen::check(dir.path()).unwrap().findings.into_iter().filter(|f| f.rule == "coverage/untested").collect::<Vec<_>>();
    assert_eq!(untested.len(), 2);
    assert!(untested[0].message.contains("\"notes.read_note\" or \"notes__read_note\" in a string"), "{}", untested[0].message);
    dir.write("tests/both.rs", "#[test]\nfn each() {\n    let _ = (\"notes.read_note\", \"other__read_note\");\n}\n");
    let tested: Vec<Vec<String>> = rows(&dir).into_iter().map(|r| r.tests).collect();
    assert_eq!(tested, [vec!["tests/both.rs::each".to_string()], vec!["tests/both.rs::each".to_string()]]);
}
