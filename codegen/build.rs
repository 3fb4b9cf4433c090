//! Records the versions of the crates that shape generated Rust text (`syn`,
//! `quote`, `proc-macro2`, `prettyplease`, `minijinja`, `serde_json`), read
//! from the `Cargo.lock` this build resolved against, as `CAPSPEC_RENDER_DEPS`.
//! The reuse cache keys on it: after an upgrade of any of them, every
//! module's Rust file is rendered afresh instead of reused.

use std::path::{Path, PathBuf};

const RENDER_DEPS: [&str; 6] = ["syn", "quote", "proc-macro2", "prettyplease", "minijinja", "serde_json"];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    // A workspace or path build finds the lock above the manifest; a build
    // from a registry finds the consumer's lock above its target directory.
    let lock = manifest.ancestors().chain(out.ancestors()).map(|d| d.join("Cargo.lock")).find(|p| p.is_file());
    let versions = match &lock {
        Some(lock) => {
            println!("cargo:rerun-if-changed={}", lock.display());
            versions(lock)
        }
        None => {
            println!("cargo:warning=capspec-codegen: no Cargo.lock found; generated files are reused by generator version only");
            String::from("unknown")
        }
    };
    println!("cargo:rustc-env=CAPSPEC_RENDER_DEPS={versions}");
    println!("cargo:rerun-if-changed=build.rs");
}

/// `name version` of each render dependency in `lock` (every version of a
/// name, when several are locked), sorted.
fn versions(lock: &Path) -> String {
    let text = std::fs::read_to_string(lock).unwrap_or_default();
    let mut found = Vec::new();
    let mut name: Option<&str> = None;
    for line in text.lines() {
        if line == "[[package]]" {
            name = None;
        } else if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"'));
        } else if let (Some(n), Some(v)) = (name, line.strip_prefix("version = ")) {
            if RENDER_DEPS.contains(&n) {
                found.push(format!("{n} {}", v.trim_matches('"')));
            }
        }
    }
    found.sort();
    found.join(", ")
}
