//! `cargo capspec init` as a new user runs it: `cargo new` in a temp dir
//! outside this repo, `init` with path dependencies on this checkout, then
//! the new project's own `cargo xtask sync`, `cargo xtask check` and `cargo
//! test` — which pass — and a reclassified capability, which `check` refuses.
//!
//! The new project reuses this workspace's `Cargo.lock`, offline, and the
//! target directory the other end-to-end tests build into.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use capspec_testkit::{TempDir, repo_root, text};

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TARGET_DIR", repo_root().join("target/code-first-e2e"))
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .expect("the command runs")
}

fn init(dir: &Path, extra: &[&str]) -> Output {
    let checkout = repo_root().to_string_lossy().into_owned();
    let mut args = vec!["capspec", "init", "--capspec-path", checkout.as_str()];
    args.extend(extra);
    run(dir, env!("CARGO_BIN_EXE_cargo-capspec"), &args)
}

/// Every file under `dir` (but `target/`) and its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    stack.push(path);
                }
            } else {
                out.insert(path.strip_prefix(dir).unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_new_cargo_project_adopts_capspec_in_one_command() {
    let tmp = TempDir::new("init");
    let out = run(tmp.path(), &cargo(), &["new", "--quiet", "--vcs", "none", "demo_host"]);
    assert!(out.status.success(), "{}", text(&out));
    let project = tmp.path().join("demo_host");
    std::fs::copy(repo_root().join("Cargo.lock"), project.join("Cargo.lock")).unwrap();

    let out = init(&project, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    for path in ["capspec.toml", "specs/example.yaml", "src/capabilities/example.rs", "tests/capspec_fresh.rs", "xtask/src/main.rs", ".cargo/config.toml", ".github/workflows/capspec.yml"] {
        assert!(said.contains(&format!("wrote    {path}\n")), "{path} not written:\n{said}");
    }
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("[workspace]\nmembers = [\".\", \"xtask\"]"), "{manifest}");
    // The same dev-profile overrides as this repo's (`cargo xtask` runs in
    // the dev profile; these are the crates the generator spends its time in).
    let ours = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    for krate in capspec_cli::DEV_OPTIMIZED {
        let section = format!("[profile.dev.package.{krate}]\nopt-level = 3");
        assert!(manifest.contains(&section) && ours.contains(&section), "{section}: new project or this repo lacks it\n{manifest}");
    }

    // The new project's own commands pass right away.
    let sync = run(&project, &cargo(), &["xtask", "sync"]);
    assert_eq!(sync.status.code(), Some(0), "{}", text(&sync));
    assert!(String::from_utf8_lossy(&sync.stdout).contains("sync: 0 written, 0 removed"), "init already synced: {}", text(&sync));
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
    let test = run(&project, &cargo(), &["test", "--workspace"]);
    assert!(test.status.success(), "{}", text(&test));
    let tested = text(&test);
    assert!(tested.contains("read_greeting_runs_and_save_greeting_is_gated ... ok") && tested.contains("generated_files_are_fresh ... ok"), "{tested}");

    // A second init keeps everything and changes nothing.
    let before = tree(&project);
    let again = init(&project, &[]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(!String::from_utf8_lossy(&again.stdout).contains("wrote "), "{}", text(&again));
    assert_eq!(tree(&project), before, "a second init changes no file");

    // Reclassifying the example capability fails the gate.
    let spec = std::fs::read_to_string(project.join("specs/example.yaml")).unwrap();
    std::fs::write(project.join("specs/example.yaml"), spec.replacen("category: read", "category: write", 1)).unwrap();
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("error[drift/snapshot]: example.read_greeting: read → write"), "{}", text(&check));
}

#[test]
fn a_workspace_member_gets_the_xtask_at_the_workspace_root() {
    let ws = TempDir::new("init-ws");
    ws.write("Cargo.toml", "[workspace]\nresolver = \"3\"\nmembers = [\"host\"]\n");
    ws.write("host/Cargo.toml", "[package]\nname = \"host\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nserde = \"1\"\n");
    ws.write("host/src/lib.rs", "pub fn hello() {}\n");
    ws.write(".cargo/config.toml", "[alias]\nb = \"build\"\n");
    let out = init(&ws.path().join("host"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("kept     src/lib.rs (exists)") && said.contains("add `pub mod capabilities;` and `pub mod generated;`"), "{said}");
    assert!(said.contains("wrote    ../xtask/src/main.rs"), "{said}");
    assert_eq!(ws.read("Cargo.toml").lines().find(|l| l.starts_with("members")), Some("members = [\"xtask\", \"host\"]"));
    assert_eq!(ws.read(".cargo/config.toml"), "[alias]\nxtask = \"run --quiet --package xtask --\"\nb = \"build\"\n");
    let host = ws.read("host/Cargo.toml");
    assert!(host.contains("[dependencies]\ncapspec = { path = ") && host.contains("serde = \"1\""), "{host}");
    assert!(!host.contains("[workspace]"), "a member does not become a workspace: {host}");
    assert_eq!(ws.read("host/src/lib.rs"), "pub fn hello() {}\n", "an existing file is never touched");
}

#[test]
fn init_outside_a_cargo_package_exits_2() {
    let dir = TempDir::new("init-none");
    let out = init(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Cargo.toml"), "{}", text(&out));
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "nothing is written");
}
