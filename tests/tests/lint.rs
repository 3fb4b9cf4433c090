//! `lint/*` on the published tool-poisoning patterns
//! (`tests/fixtures/lint/poisoned.json`) and on every real tool definition
//! under `tests/fixtures/import` (the clean set): each pattern is caught,
//! located and named; the clean set yields no error and no warning.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use capspec_codegen::Finding;
use capspec_codegen::import;
use capspec_codegen::load::{self, SpecFile};
use capspec_codegen::report::{self, Format, Report};
use capspec_testkit::{MINIMAL_CONFIG, TempDir};
use capspec_tests::fixtures;

/// A module beside the poisoned one, whose capability a poisoned
/// description redirects.
const MAIL: &str = "module: mail\ndescription: Mail.\ncapabilities:\n  - name: send_email\n    category: external\n    description: Send an email to the given recipients.\n";

fn imported(module: &str, paths: &[&Path]) -> SpecFile {
    let tools = import::read_tools(paths).expect("readable tools");
    let imported = import::import(module, &tools).expect("imports");
    SpecFile { path: format!("{module}.yaml"), bytes: imported.yaml.into_bytes() }
}

fn lint_findings(findings: &[Finding]) -> Vec<&Finding> {
    findings.iter().filter(|f| f.rule.starts_with("lint/")).collect()
}

fn poisoned() -> load::Loaded {
    let file = imported("poisoned", &[fixtures().join("lint/poisoned.json").as_path()]);
    load::load_files(vec![file, SpecFile { path: "mail.yaml".into(), bytes: MAIL.as_bytes().to_vec() }])
}

#[test]
fn every_poisoning_pattern_is_caught_located_and_named() {
    let loaded = poisoned();
    let expected: BTreeMap<String, BTreeSet<String>> = serde_json::from_str(&std::fs::read_to_string(fixtures().join("lint/expected.json")).unwrap()).unwrap();
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in lint_findings(&loaded.findings) {
        assert!(f.line > 0 && f.column > 0, "located: {f:?}");
        let capability = f.capability.clone().unwrap_or_else(|| panic!("names its capability, for [[allow]]: {f:?}"));
        found.entry(capability).or_default().insert(f.rule.clone());
    }
    assert_eq!(found, expected);
    // The tag characters' hidden text is spelled out for the reviewer.
    let smuggled = loaded.findings.iter().find(|f| f.capability.as_deref() == Some("get_weather")).unwrap();
    assert!(smuggled.message.contains("spell: \"Ignore all previous instructions"), "{}", smuggled.message);
    // Nothing else is wrong with these specs: lint is the only finding.
    assert_eq!(lint_findings(&loaded.findings).len(), loaded.findings.len(), "{:?}", loaded.findings);
}

#[test]
fn poisoning_findings_read_like_compiler_errors() {
    let loaded = poisoned();
    let findings: Vec<Finding> = lint_findings(&loaded.findings).into_iter().cloned().collect();
    insta::assert_snapshot!(report::render(&Report { findings, sources: loaded.sources }, Format::Human));
}

/// Every tool definition of the import fixtures, one module per server.
fn clean_set() -> Vec<SpecFile> {
    let corpus = fixtures().join("import/corpus");
    let mut files = vec![imported("github", &[corpus.join("github-mcp-server").as_path()])];
    let mut servers: Vec<PathBuf> = std::fs::read_dir(corpus.join("mcp-reference-servers")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    servers.sort();
    for path in servers {
        let module = path.file_stem().unwrap().to_string_lossy().trim_start_matches("server-").replace('-', "_");
        files.push(imported(&module, &[path.as_path()]));
    }
    files.push(SpecFile { path: "github_fixture.yaml".into(), bytes: std::fs::read(fixtures().join("import/github/specs/github.yaml")).unwrap() });
    files
}

#[test]
fn the_clean_set_has_no_false_positive() {
    let files = clean_set();
    let modules = files.len();
    // Loaded as one project, so shadowing across servers is looked for too
    // (the committed GitHub fixture is the same module under another file).
    let loaded = load::load_files(files.into_iter().filter(|f| f.path != "github_fixture.yaml").collect());
    let capabilities = loaded.set.capabilities().count();
    let lint = lint_findings(&loaded.findings);
    let errors = lint.iter().filter(|f| f.severity == capspec_codegen::Severity::Error).count();
    println!("clean set: {modules} modules, {capabilities} capabilities: {errors} lint errors, {} lint warnings", lint.len() - errors);
    assert!(capabilities > 150, "{capabilities}");
    assert!(lint.is_empty(), "false positives on real descriptions: {lint:#?}");
    let fixture = load::load_files(vec![clean_set().pop().unwrap()]);
    assert!(lint_findings(&fixture.findings).is_empty());
}

#[test]
fn lint_findings_are_suppressible_fail_check_and_do_not_block_sync() {
    let dir = TempDir::new("lint-allow");
    dir.write("capspec.toml", MINIMAL_CONFIG);
    dir.write("specs/notes.yaml", "module: notes\ndescription: Notes.\ncapabilities:\n  - name: read_note\n    category: read\n    description: \"Read a note.\\u200B\"\n");
    let rules = |root: &Path| -> Vec<(String, u32)> {
        let report = capspec_codegen::check(root).unwrap();
        report.findings.iter().filter(|f| f.rule.starts_with("lint/") || f.rule.starts_with("config/")).map(|f| (f.rule.clone(), f.line)).collect()
    };
    assert_eq!(rules(dir.path()), [("lint/hidden-text".to_string(), 6)]);
    // Well-formed specs still generate: sync writes; check is the gate.
    let synced = capspec_codegen::sync(dir.path()).unwrap();
    assert!(synced.findings.is_empty() && !synced.written.is_empty(), "{:?}", synced.findings);
    let sarif = report::render(&capspec_codegen::check(dir.path()).unwrap(), Format::Sarif);
    assert!(sarif.contains("\"ruleId\": \"lint/hidden-text\""), "{sarif}");
    let github = report::render(&capspec_codegen::check(dir.path()).unwrap(), Format::Github);
    assert!(github.contains("::error file=specs/notes.yaml,line=6,col=18,title=lint/hidden-text::"), "{github}");
    dir.write(
        "capspec.toml",
        format!("{MINIMAL_CONFIG}\n[[allow]]\nrule = \"lint/hidden-text\"\ncapability = \"read_note\"\nreason = \"the zero-width space is a test of the lint itself\"\n"),
    );
    assert_eq!(rules(dir.path()), [], "the [[allow]] explains it, and is used");
}
