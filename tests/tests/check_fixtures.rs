//! Every spec and config rule, demonstrated by a fixture project under
//! `fixtures/check/<case>/` and pinned by an insta snapshot of the findings
//! exactly as `cargo xtask check` prints them.

use std::time::{Duration, Instant};

use capspec_codegen::report::{self, Format};
use capspec_testkit::TempDir;
use capspec_tests::fixtures;

fn human_report(case: &std::path::Path) -> (String, capspec_codegen::Report) {
    let report = capspec_codegen::check(case).expect("check runs");
    (report::render(&report, Format::Human), report)
}

#[test]
fn fixture_findings() {
    insta::glob!("../fixtures/check", "*/capspec.toml", |path| {
        let case = path.parent().unwrap();
        let name = case.file_name().unwrap().to_str().unwrap();
        let (text, report) = human_report(case);
        assert!(report.has_errors(), "{name} must produce at least one error:\n{text}");
        insta::assert_snapshot!(text);
    });
}

#[test]
fn every_bad_fixture_names_its_rule() {
    // The case name says which rule family it demonstrates; the findings
    // must include that rule.
    for (case, rule) in [
        ("parse-syntax", "spec/parse"),
        ("parse-alias-bomb", "spec/parse"),
        ("parse-deep-nesting", "spec/parse"),
        ("parse-not-utf8", "spec/parse"),
        ("missing-field", "spec/missing-field"),
        ("unknown-field", "spec/unknown-field"),
        ("unknown-category", "spec/unknown-category"),
        ("invalid-name", "spec/invalid-name"),
        ("duplicate-name", "spec/duplicate-name"),
        ("module-mismatch", "spec/module-mismatch"),
        ("invalid-schema", "spec/invalid-schema"),
        ("user-message", "spec/user-message"),
        ("config-errors", "config/unknown-key"),
        ("config-errors", "config/bad-path"),
        ("config-errors", "config/allow-missing-reason"),
        ("config-errors", "config/allow-todo-reason"),
        ("config-errors", "config/allow-invalid"),
        ("config-errors", "config/allow-unmatched"),
        ("config-bad-toml", "config/parse"),
        ("config-oauth", "config/invalid-value"),
        ("config-specs-dir-absent", "config/bad-path"),
        ("config-empty-specs", "spec/empty"),
        ("drift-missing", "drift/missing"),
        ("drift-missing", "drift/orphan"),
        ("coverage-gaps", "coverage/stub"),
        ("coverage-gaps", "coverage/unknown"),
        ("coverage-gaps", "coverage/unimplemented"),
        ("coverage-gaps", "coverage/untested"),
        ("code-first-record", "code-first/unknown-module"),
        ("providers", "provider/unsupported"),
        ("providers", "provider/lossy"),
    ] {
        let report = capspec_codegen::check(&fixtures().join("check").join(case)).unwrap();
        assert!(
            report.findings.iter().any(|f| f.rule == rule),
            "{case} should report {rule}; got {:?}",
            report.findings.iter().map(|f| &f.rule).collect::<Vec<_>>()
        );
    }
}

#[test]
fn json_format_matches_the_contract() {
    let report = capspec_codegen::check(&fixtures().join("check/module-mismatch")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&report::render(&report, Format::Json)).unwrap();
    insta::assert_json_snapshot!(value);
    let finding = &value["findings"][0];
    for key in ["rule", "severity", "file", "line", "column", "message"] {
        assert!(finding.get(key).is_some(), "finding lacks `{key}`: {finding}");
    }
    assert_eq!(value["summary"], serde_json::json!({"errors": 1, "warnings": 0}));
}

#[test]
fn github_format_prints_workflow_commands() {
    let report = capspec_codegen::check(&fixtures().join("check/unknown-category")).unwrap();
    insta::assert_snapshot!(report::render(&report, Format::Github));
}

/// Run `check` on a project whose one spec file is `contents`, returning the
/// findings and how long loading took.
fn check_spec(name: &str, file: &str, contents: &[u8]) -> (Vec<capspec_codegen::Finding>, Duration) {
    let dir = TempDir::new(name);
    dir.write("capspec.toml", "specs = \"specs\"\n");
    dir.write(&format!("specs/{file}"), contents);
    let start = Instant::now();
    let report = capspec_codegen::check(dir.path()).unwrap();
    (report.findings, start.elapsed())
}

#[test]
fn oversized_file_is_refused_unread() {
    let mut text = String::from("module: big\ndescription: Big.\ncapabilities:\n");
    while text.len() <= 1024 * 1024 {
        text.push_str("  - { name: x, category: read, description: padding padding padding padding. }\n");
    }
    let (findings, _) = check_spec("oversized", "big.yaml", text.as_bytes());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].rule, "spec/parse");
    assert_eq!(findings[0].file, "specs/big.yaml");
    assert!(findings[0].message.contains("larger than 1024 KiB"), "{}", findings[0].message);
}

#[test]
fn alias_bomb_is_refused_quickly() {
    // Nine levels of nine aliases: 9^9 (387 million) nodes if expanded.
    let bomb = std::fs::read(fixtures().join("check/parse-alias-bomb/specs/bomb.yaml")).unwrap();
    let (findings, took) = check_spec("alias-bomb", "bomb.yaml", &bomb);
    assert_eq!(findings[0].rule, "spec/parse");
    assert!(findings[0].message.contains("alias"), "{}", findings[0].message);
    // Not a benchmark: a guard that expansion is refused, not attempted.
    assert!(took < Duration::from_secs(1), "alias bomb took {took:?}");
}

#[test]
fn pathological_nesting_is_refused_without_overflowing_the_stack() {
    let text = format!("module: deep\ndescription: x\ncapabilities: {}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (findings, _) = check_spec("deep", "deep.yaml", text.as_bytes());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].rule, "spec/parse");
    assert!(findings[0].message.contains("nesting deeper than 64"), "{}", findings[0].message);
}

#[test]
fn results_do_not_depend_on_the_root_path() {
    let a = TempDir::new("root-a");
    let b = TempDir::new("root-b-with-a-longer-name");
    for dir in [&a, &b] {
        dir.write("capspec.toml", "specs = \"specs\"\n");
        dir.write("specs/x.yaml", "module: x\ndescription: X.\ncapabilities:\n  - { name: y, category: raed, description: Y. }\n");
    }
    let ra = report::render(&capspec_codegen::check(a.path()).unwrap(), Format::Json);
    let rb = report::render(&capspec_codegen::check(b.path()).unwrap(), Format::Json);
    assert_eq!(ra, rb);
    assert!(!ra.contains(a.path().to_str().unwrap()));
}
