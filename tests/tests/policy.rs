//! Policies as checked code (DESIGN §14), through `check` and `policy test`
//! the way a project meets them: the reference host's policies validate and
//! their tests pass; each kind of broken policy is a located finding that
//! says what the spec has; a spec change under a policy fails at the policy.

use std::path::Path;

use capspec_codegen::Finding;
use capspec_codegen::report::{self, Format, Report};
use capspec_testkit::{TempDir, copy_dir, repo_root};

/// A project with the reference specs and `policies` as its policy
/// directory's files, synced.
fn project(name: &str, policies: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new(name);
    copy_dir(&repo_root().join("specs"), &dir.path().join("specs"));
    // The reference specs mount one upstream module (`kg`); it is never started here.
    dir.write("capspec.toml", "specs = \"specs\"\n\n[generate]\nrust = \"src/generated\"\njs = \"guest\"\ncatalog = \"catalog\"\n\n[upstream.kg]\ncommand = [\"kg-server\"]\n");
    for (file, text) in policies {
        dir.write(&format!("policies/{file}"), text);
    }
    sync(dir.path());
    dir
}

fn sync(root: &Path) {
    let outcome = capspec_codegen::sync::sync(root).expect("sync runs");
    assert!(outcome.findings.iter().all(|f| f.severity != capspec_codegen::Severity::Error || !f.rule.starts_with("spec/")), "{:?}", outcome.findings);
}

/// `check`'s `policy/*` findings, rendered as a user reads them.
fn policy_findings(root: &Path) -> (Vec<Finding>, String) {
    let report = capspec_codegen::check(root).expect("check runs");
    let findings: Vec<Finding> = report.findings.into_iter().filter(|f| f.rule.starts_with("policy/")).collect();
    let text = report::render(&Report { findings: findings.clone(), sources: report.sources }, Format::Human);
    (findings, text)
}

fn reference_policies() -> Vec<(&'static str, String)> {
    ["host.cedar", "tests.yaml"].into_iter().map(|f| (f, std::fs::read_to_string(repo_root().join("policies").join(f)).unwrap())).collect()
}

#[test]
fn the_reference_hosts_policies_validate_and_policy_test_prints_each_decision_with_who_made_it() {
    let files = reference_policies();
    let files: Vec<(&str, &str)> = files.iter().map(|(f, t)| (*f, t.as_str())).collect();
    let dir = project("policy-reference", &files);
    let (findings, text) = policy_findings(dir.path());
    assert!(findings.is_empty(), "{text}");
    let (lines, report) = capspec_codegen::check::policy_test(dir.path()).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    insta::assert_snapshot!(lines.join("\n"));
}

/// The corpus of patterns users ask for, beside the reference host's own
/// policies: each pattern's decisions in its tests.yaml hold (agent-host's
/// tests/policies.rs enforces the same file end to end; the gateway corpus
/// is enforced on an upstream server by cli/tests/upstream.rs).
#[test]
fn the_pattern_corpus_validates_and_gives_the_decisions_its_tests_expect() {
    let corpus = repo_root().join("tests/fixtures/policy-corpus/host");
    let read = |f: &str| std::fs::read_to_string(corpus.join(f)).unwrap();
    let host = std::fs::read_to_string(repo_root().join("policies/host.cedar")).unwrap();
    let dir = project("policy-corpus", &[("host.cedar", &host), ("patterns.cedar", &read("patterns.cedar")), ("tests.yaml", &read("tests.yaml"))]);
    let (findings, text) = policy_findings(dir.path());
    assert!(findings.is_empty(), "{text}");
    let (lines, report) = capspec_codegen::check::policy_test(dir.path()).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let decided: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("ok     ")).collect();
    assert_eq!(decided.len(), 6, "{lines:#?}");
    assert!(decided.contains(&"a note is deleted by support only: deny (by `only-support-deletes`; denied by policy `only-support-deletes`: deleting notes is the support group's job)"), "{lines:#?}");
}

#[test]
fn broken_policies_are_located_findings_that_say_what_the_spec_has() {
    let broken = r#"@id("unknown-capability")
forbid(principal, action == Capspec::Action::"workspace.read_fil", resource);

@id("unknown-argument")
forbid(principal, action == Capspec::Action::"workspace.read_file", resource)
when { context.input.file like "*.pem" };

@id("type-error")
forbid(principal, action == Capspec::Action::"workspace.read_file", resource)
when { context.input.path > 3 };

@id("optional-without-has")
forbid(principal, action == Capspec::Action::"workspace.read_file", resource)
when { context.input.limit > 100 };

@id("shadowed")
permit(principal, action == Capspec::Action::"shell.run_command", resource);

@id("no-shell")
forbid(principal, action in Capspec::Action::"module:shell", resource);
"#;
    let tests = "- name: expects the wrong thing\n  capability: shell.which_program\n  input: { program: cargo }\n  mode: auto\n  expect: allow\n- name: a typo\n  capability: shell.run_comand\n  expect: deny\n";
    let dir = project("policy-broken", &[("broken.cedar", broken), ("tests.yaml", tests)]);
    let (findings, text) = policy_findings(dir.path());
    let rules: Vec<(&str, u32)> = findings.iter().map(|f| (f.rule.as_str(), f.line)).collect();
    assert_eq!(
        rules,
        [
            ("policy/invalid", 2),
            ("policy/invalid", 6),
            ("policy/invalid", 10),
            ("policy/invalid", 14),
            ("policy/unreachable", 16),
            ("policy/test", 1),
            ("policy/test", 7),
        ],
        "{text}"
    );
    insta::assert_snapshot!(text);

    // A syntax error stops the file at the place it is.
    let dir = project("policy-syntax", &[("bad.cedar", "permit(principal, action, resource);\nforbid(principal action, resource);\n")]);
    let (findings, text) = policy_findings(dir.path());
    assert_eq!(findings.iter().map(|f| (f.rule.as_str(), f.file.as_str(), f.line)).collect::<Vec<_>>(), [("policy/parse", "policies/bad.cedar", 2)], "{text}");
}

#[test]
fn renaming_an_argument_under_a_policy_fails_check_at_the_policy() {
    let files = reference_policies();
    let files: Vec<(&str, &str)> = files.iter().map(|(f, t)| (*f, t.as_str())).collect();
    let dir = project("policy-renamed", &files);
    assert!(policy_findings(dir.path()).0.is_empty());
    let spec = dir.read("specs/shell.yaml");
    // `run_command`'s `program` becomes `command` (its placeholder too); `which_program` keeps its own.
    let (run, rest) = spec.split_at(spec.find("  - name: which_program").unwrap());
    let run = run.replace("        program:", "        command:").replace("{program}", "{command}").replace("required: [program]", "required: [command]");
    dir.write("specs/shell.yaml", format!("{run}{rest}"));
    sync(dir.path());
    let (findings, text) = policy_findings(dir.path());
    let invalid: Vec<&Finding> = findings.iter().filter(|f| f.rule == "policy/invalid").collect();
    assert_eq!(invalid.len(), 1, "{text}");
    assert_eq!((invalid[0].file.as_str(), invalid[0].line), ("policies/host.cedar", 26), "{text}");
    assert!(invalid[0].message.contains("`input.program`"), "{text}");
    assert!(invalid[0].message.contains("the spec's `shell.run_command` takes `args`?, `command`"), "{text}");
}
