//! A crate that depends on capspec, as users' crates do
//! (`tests/fixtures/dependent`), builds with zero warnings from capspec's
//! crates in each feature combination users enable: the runtime alone, with
//! the MCP server, with upstreams and policies, and the generator plus the
//! gate-only CLI that `cargo capspec init` adds. Path dependencies are not
//! lint-capped, so a dead-code warning in capspec reaches every dependent.

use std::process::Command;

use capspec_testkit::{TempDir, copy_dir, repo_root, text};
use capspec_tests::fixtures;

#[test]
fn a_dependent_builds_without_warnings_from_capspec_in_each_feature_combination() {
    let dir = TempDir::new("dependent");
    copy_dir(&fixtures().join("dependent"), dir.path());
    let manifest = dir.path().join("Cargo.toml");
    let checkout = repo_root().to_string_lossy().into_owned();
    std::fs::write(&manifest, std::fs::read_to_string(&manifest).unwrap().replace("{checkout}", &checkout)).unwrap();
    std::fs::copy(repo_root().join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for features in ["", "mcp", "upstream,policy", "gate"] {
        let out = Command::new(&cargo)
            .args(["check", "--quiet", "--message-format", "short", "--manifest-path"])
            .arg(&manifest)
            .args(["--features", features])
            .env("CARGO_NET_OFFLINE", "true")
            .env("CARGO_TARGET_DIR", repo_root().join("target/dependent"))
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap();
        let said = text(&out);
        assert!(out.status.success(), "features [{features}]:\n{said}");
        let warnings: Vec<&str> = said.lines().filter(|l| l.contains("warning")).collect();
        assert!(warnings.is_empty(), "features [{features}]: capspec warns its dependents:\n{}", warnings.join("\n"));
    }
}
