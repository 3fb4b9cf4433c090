//! `check --base GIT_REF` against temporary git repositories built here:
//! each kind of breaking change, renames kept as aliases, and the refs users
//! pass (tags, commits, `origin/main`, a shallow clone without the ref).

use std::path::Path;

use capspec_codegen::check::{CheckOptions, check_with};
use capspec_codegen::report::{self, Format};
use capspec_testkit::{TempDir, copy_dir, git};

/// A repo whose first commit (tagged v1) holds the case's `base/` tree and
/// whose work tree holds its `head/` tree (`fixtures/breaking/README.md`).
/// The project lives in `sub/`, not at the top.
fn repo(case: &str) -> TempDir {
    let fixture = capspec_tests::fixtures().join("breaking").join(case);
    let dir = TempDir::new("breaking");
    git(dir.path(), &["init", "-q"]);
    copy_dir(&fixture.join("base"), &dir.path().join("sub"));
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "v1"]);
    git(dir.path(), &["tag", "v1"]);
    std::fs::remove_dir_all(dir.path().join("sub")).unwrap();
    copy_dir(&fixture.join("head"), &dir.path().join("sub"));
    dir
}

fn breaking(root: &Path, base: &str) -> capspec_codegen::Report {
    let mut report = check_with(root, &CheckOptions { base: Some(base.into()), ..CheckOptions::default() }).unwrap();
    report.findings.retain(|f| f.rule.starts_with("breaking/"));
    report
}

#[test]
fn every_kind_of_breaking_change() {
    let dir = repo("every-kind");
    let root = dir.path().join("sub");
    let report = breaking(&root, "v1");
    let rules: Vec<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
    for rule in [
        "breaking/removed-module",
        "breaking/removed-capability",
        "breaking/category-changed",
        "breaking/required-added",
        "breaking/property-removed",
        "breaking/property-retyped",
        "breaking/enum-value-removed",
    ] {
        assert!(rules.contains(&rule), "{rule} missing: {rules:?}");
    }
    assert!(!report.findings.iter().any(|f| f.message.contains("read_note")), "a rename kept as an alias is not a removal");
    let loosened = report.findings.iter().find(|f| f.rule == "breaking/category-changed").unwrap();
    assert_eq!(loosened.message, "`notes.create_note` changed category: write → read (loosens the gate)");
    insta::assert_snapshot!(report::render(&report, Format::Human));

    // Ids and fingerprints are stable: the same comparison gives the same ones.
    let again = breaking(&root, &git(dir.path(), &["rev-parse", "v1"]));
    let ids = |r: &capspec_codegen::Report| r.findings.iter().map(|f| (f.id.clone().unwrap(), f.fingerprint.clone().unwrap())).collect::<Vec<_>>();
    assert_eq!(ids(&report), ids(&again));
    // Nothing changed relative to the work tree's own commit once committed.
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "v2"]);
    assert!(breaking(&root, "HEAD").findings.is_empty());
}

#[test]
fn remote_branches_and_shallow_clones() {
    let dir = repo("every-kind");
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "v2"]);
    // A full clone: `origin/main` and `HEAD~1` resolve.
    let clone = TempDir::new("breaking-clone");
    std::fs::remove_dir_all(clone.path()).unwrap();
    let url = format!("file://{}", dir.path().display());
    git(dir.path(), &["clone", "-q", &url, &clone.path().to_string_lossy()]);
    let root = clone.path().join("sub");
    assert!(breaking(&root, "origin/main").findings.is_empty());
    assert!(!breaking(&root, "HEAD~1").findings.is_empty());
    // A shallow clone without the ref: exit 2 with a sentence saying what to do.
    let shallow = TempDir::new("breaking-shallow");
    std::fs::remove_dir_all(shallow.path()).unwrap();
    git(dir.path(), &["clone", "-q", "--depth", "1", &url, &shallow.path().to_string_lossy()]);
    let err = check_with(&shallow.path().join("sub"), &CheckOptions { base: Some("v1".into()), ..CheckOptions::default() }).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("shallow clone") && message.contains("fetch"), "{message}");
    let err = check_with(&root, &CheckOptions { base: Some("no-such-branch".into()), ..CheckOptions::default() }).unwrap_err();
    assert!(err.to_string().contains("no commit named `no-such-branch`"), "{err}");
}

/// Code-first specs are compared through the record at the base ref: a
/// reclassified derive and a removed one are breaking like YAML changes,
/// reported at the Rust source.
#[test]
fn code_first_changes_are_breaking_too() {
    let dir = repo("code-first");
    let report = breaking(&dir.path().join("sub"), "v1");
    let found: Vec<(String, String, u32)> = report.findings.iter().map(|f| (f.rule.clone(), f.file.clone(), f.line)).collect();
    assert_eq!(
        found,
        [
            ("breaking/removed-capability".to_string(), "specs/memory.yaml".to_string(), 0),
            ("breaking/category-changed".to_string(), "src/lib.rs".to_string(), 1),
        ]
    );
    assert!(report.findings[1].message.contains("`memory.pin` changed category: read → write"), "{}", report.findings[1].message);
}
