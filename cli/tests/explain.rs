//! `cargo capspec explain RULE` keeps its word: every rule has an
//! explanation, and each one's examples are run here through the command
//! line, on top of the project every example starts from (synced and
//! committed): the failing example really reports the rule, with the
//! rule's severity, and the fixed one (synced, as its text says) really
//! clears it. The upstream examples run their server with Node from
//! `tests/ts/node_modules` (skipped with a notice where absent; CI installs
//! it and may not skip).

use std::path::Path;
use std::process::Command;

use capspec_codegen::explain::{self, BASELINE, Example, Explanation, Step};
use capspec_codegen::rules;
use capspec_testkit::{TempDir, git, repo_root, skip, text};

/// The examples no test here can run, each with why. A change to this list
/// is a change to what `explain` promises.
const NOT_RUN: &[(&str, bool, &str)] = &[
    ("upstream/unauthorized", true, "logging in needs an authorization server and a browser; cli/tests/upstream_oauth.rs runs that log-in"),
    ("coverage/untested", true, "clearing it takes a `cargo test` run that records its calls; tests/tests/coverage_record.rs runs one"),
    ("coverage/stale", true, "clearing it takes a `cargo test` run that records its calls; tests/tests/coverage_record.rs runs one"),
    ("policy/feature", false, "only a capspec built without its `policy` feature reports it, and this test's build has it"),
];

/// The rules of the error findings in `out`. A fixed example may leave
/// `coverage/*` ones (the impl and tests a new or changed capability needs,
/// which the examples leave out) and nothing else.
/// The rules of capspec's error findings in `out` (`family/name`; the
/// compiler's `error[E0433]`, which a code-first export's build shows on
/// stderr, is no finding).
fn errors(out: &str) -> Vec<&str> {
    out.lines().filter_map(|l| l.strip_prefix("error[")?.split_once(']').map(|(rule, _)| rule)).filter(|rule| rule.contains('/')).collect()
}

fn capspec(dir: &Path, args: &[String]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-capspec"))
        .arg("capspec")
        .args(args)
        .current_dir(dir)
        .env_remove("CARGO_MANIFEST_DIR")
        .env("XDG_CONFIG_HOME", dir.join(".config"))
        .env("NO_COLOR", "1")
        .output()
        .expect("cargo-capspec runs");
    (out.status.success(), text(&out))
}

fn words(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_string).collect()
}

/// Build `example` (fixed: synced before its command) and run its command:
/// the output.
fn run(e: &Explanation, example: &Example, fixed: bool) -> Result<(bool, String), String> {
    let dir = TempDir::new("explain");
    for (path, content) in BASELINE {
        dir.write(path, content);
    }
    let (ok, out) = capspec(dir.path(), &words("sync"));
    assert!(ok, "the baseline syncs:\n{out}");
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "the baseline"]);
    let node_modules = repo_root().join("tests/ts/node_modules");
    #[cfg(unix)]
    if node_modules.is_dir() {
        std::os::unix::fs::symlink(&node_modules, dir.path().join("node_modules")).unwrap();
    }
    for step in example.setup() {
        match step {
            Step::Write { path, content, .. } => dir.write(path, content),
            Step::Remove { path } => std::fs::remove_file(dir.path().join(path)).unwrap_or_else(|err| panic!("{}: remove {path}: {err}", e.rule.id)),
            Step::Commit => {
                git(dir.path(), &["add", "-A"]);
                git(dir.path(), &["commit", "-qm", "the base"]);
            }
            Step::Run { args } => {
                let (ok, out) = capspec(dir.path(), args);
                if !ok {
                    return Err(format!("{}: `cargo capspec {}` fails:\n{out}", e.rule.id, args.join(" ")));
                }
            }
        }
    }
    let command = example.command();
    if fixed {
        let mut sync = words("sync");
        if command.iter().any(|a| a == "--no-build") {
            sync.push("--no-build".into());
        }
        let (ok, out) = capspec(dir.path(), &sync);
        if !ok {
            return Err(format!("{}: the fixed example does not sync:\n{out}", e.rule.id));
        }
    }
    let (ok, out) = capspec(dir.path(), &command);
    Ok((ok, out))
}

fn needs_node(e: &Explanation) -> bool {
    [&e.fails, &e.fixed].iter().flat_map(|x| &x.steps).any(|s| matches!(s, Step::Write { path, .. } if path.ends_with(".mjs")))
}

#[test]
fn every_rule_is_explained_and_every_example_does_what_it_says() {
    let all = explain::all();
    assert_eq!(all.iter().map(|e| e.rule.id).collect::<Vec<_>>(), rules::ALL.iter().map(|r| r.id).collect::<Vec<_>>());
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()) && repo_root().join("tests/ts/node_modules/@modelcontextprotocol/sdk").is_dir();
    let mut ran = 0;
    let mut wrong = Vec::new();
    for e in &all {
        if needs_node(e) && !node {
            skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), &format!("{}: node or tests/ts/node_modules is absent (npm ci --prefix tests/ts)", e.rule.id));
            continue;
        }
        let tag = format!("[{}]", e.rule.id);
        for (fixed, example) in [(false, &e.fails), (true, &e.fixed)] {
            if NOT_RUN.iter().any(|(rule, f, _)| *rule == e.rule.id && *f == fixed) {
                continue;
            }
            let (ok, out) = match run(e, example, fixed) {
                Ok(ran) => ran,
                Err(why) => {
                    wrong.push(why);
                    continue;
                }
            };
            let reported = format!("{}{tag}", e.rule.severity().as_str());
            if fixed && out.contains(&tag) {
                wrong.push(format!("{}: the fixed example still reports it:\n{out}", e.rule.id));
            } else if fixed && !ok && (errors(&out).is_empty() || errors(&out).iter().any(|rule| !rule.starts_with("coverage/"))) {
                wrong.push(format!("{}: the fixed example is not clean:\n{out}", e.rule.id));
            } else if !fixed && !out.contains(&reported) {
                wrong.push(format!("{}: the failing example does not report `{reported}`:\n{out}", e.rule.id));
            } else if !fixed && !out.contains(&format!("= help: `cargo capspec explain {}`", e.rule.id)) {
                wrong.push(format!("{}: the finding does not end with its explain command:\n{out}", e.rule.id));
            }
            ran += 1;
        }
    }
    eprintln!("ran {ran} explain examples");
    assert!(wrong.is_empty(), "{} of {ran} examples do not do what they say:\n\n{}", wrong.len(), wrong.join("\n\n"));
}

#[test]
fn explain_prints_the_rule_its_examples_and_the_command_and_refuses_an_unknown_rule() {
    let dir = TempDir::new("explain-cli");
    let (ok, out) = capspec(dir.path(), &words("explain spec/unknown-field"));
    assert!(ok, "{out}");
    assert!(out.starts_with("spec/unknown-field: a key the spec format does not define\n(error; it is fixed, not suppressed)"), "{out}");
    assert!(out.contains("    catgory: read") && out.contains("    category: read") && out.contains("$ cargo capspec check"), "{out}");
    let (ok, out) = capspec(dir.path(), &words("explain spec/unknown-feild"));
    assert!(!ok && out.contains("no rule `spec/unknown-feild`; did you mean `spec/unknown-field`?"), "{out}");
    let (ok, out) = capspec(dir.path(), &words("explain"));
    assert!(ok && rules::ALL.iter().all(|r| out.contains(r.id)), "{out}");
}

#[test]
fn the_not_run_list_names_real_examples() {
    for (rule, _, why) in NOT_RUN {
        assert!(explain::find(rule).is_some() && !why.is_empty(), "{rule}");
    }
}
