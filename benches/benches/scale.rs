//! `sync` and `check` on generated spec sets of 100, 1,000 and 10,000
//! capabilities (20 per module), called as a library (no process start-up).
//!
//! - `check_clean`: `check` on a tree whose artifacts are up to date.
//! - `sync_fresh`: `sync` into empty output directories (every file written).
//! - `sync_noop`: a second `sync` that writes nothing.
//! - `check_policies`: `check_clean` with 1,000 Cedar policies (validated
//!   strictly against the schema `sync` derives), beside `check_clean` at
//!   the same sizes.

use std::path::PathBuf;

use capspec_benches::specs::{write_policies, write_project};

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [100, 1_000, 10_000];

fn project(name: &str, n: usize, synced: bool) -> PathBuf {
    let root = std::env::temp_dir().join(format!("capspec-bench-{name}-{n}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    write_project(&root, n);
    if synced {
        capspec_codegen::sync(&root).expect("sync");
    }
    root
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn check_clean(bencher: divan::Bencher, n: usize) {
    let root = project("check", n, true);
    bencher.bench(|| {
        let report = capspec_codegen::check(&root).expect("check runs");
        assert!(!report.findings.iter().any(|f| f.rule.starts_with("drift/") || f.rule.starts_with("spec/")));
        report
    });
    let _ = std::fs::remove_dir_all(&root);
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn sync_fresh(bencher: divan::Bencher, n: usize) {
    let root = project("sync", n, false);
    bencher
        .with_inputs(|| {
            for dir in ["src", "guest", "catalog"] {
                let _ = std::fs::remove_dir_all(root.join(dir));
            }
        })
        .bench_values(|()| capspec_codegen::sync(&root).expect("sync"));
    let _ = std::fs::remove_dir_all(&root);
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn sync_noop(bencher: divan::Bencher, n: usize) {
    let root = project("noop", n, true);
    bencher.bench(|| {
        let outcome = capspec_codegen::sync(&root).expect("sync");
        assert!(outcome.written.is_empty());
        outcome
    });
    let _ = std::fs::remove_dir_all(&root);
}

#[divan::bench(args = [1_000, 10_000], sample_count = 5, sample_size = 1)]
fn check_policies(bencher: divan::Bencher, n: usize) {
    let root = project("policies", n, false);
    write_policies(&root, n, 1_000);
    capspec_codegen::sync(&root).expect("sync");
    bencher.bench(|| {
        let report = capspec_codegen::check(&root).expect("check runs");
        assert!(report.findings.iter().all(|f| !f.rule.starts_with("policy/") && !f.rule.starts_with("drift/")), "{:?}", report.findings);
        report
    });
    let _ = std::fs::remove_dir_all(&root);
}
