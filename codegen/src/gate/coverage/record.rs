//! What the last `cargo test` ran (DESIGN §5, `coverage/untested`): the
//! runtime's coverage record, written under `.capspec/coverage/` by every
//! process of a `cargo test` whose calls reached an implementation
//! (`capspec`'s `coverage.rs`). This is the only evidence that makes a
//! capability tested; nothing here reads a test's source.
//!
//! The record is fresh when its run started after the newest change to the
//! specs, the coverage sources and tests, and `capspec.toml`; else it is
//! stale and counts for nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::config::Config;

/// Where the record lives, relative to the project root.
pub const RECORD_DIR: &str = ".capspec/coverage";

/// The command that refreshes the record, as findings name it.
pub const REFRESH: &str = "cargo test";

/// Whether the record can be believed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// The last run started after every input's last change.
    Fresh,
    /// No `cargo test` of this project has recorded anything.
    Missing,
    /// `file` (relative to the root) changed after the last run started.
    Stale { changed: String },
}

/// The last run's observations.
#[derive(Debug, Clone)]
pub struct Record {
    pub freshness: Freshness,
    /// (qualified capability, contract fingerprint it was compiled with)
    /// → who ran it, as the coverage table shows it.
    ran: BTreeMap<(String, String), BTreeSet<String>>,
}

impl Record {
    /// Who ran `qualified`, built against the contract `fingerprint`, in a
    /// fresh record; nothing when the record is missing or stale. A call
    /// to a capability of the same name in another registry, or against
    /// another version of its contract, is not this one's.
    pub fn tests(&self, qualified: &str, fingerprint: &str) -> Vec<String> {
        match self.freshness {
            Freshness::Fresh => self.ran.get(&(qualified.to_string(), fingerprint.to_string())).map(|t| t.iter().cloned().collect()).unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Who ran a capability named `qualified` in the last run, fresh or
    /// not, against any contract.
    pub fn last_run(&self, qualified: &str) -> Vec<String> {
        let labels: BTreeSet<&String> = self.ran.iter().filter(|((q, _), _)| q == qualified).flat_map(|(_, t)| t).collect();
        labels.into_iter().cloned().collect()
    }
}

#[derive(serde::Deserialize)]
struct Header {
    capspec_coverage: u32,
    run: String,
    started: f64,
    manifest_dir: String,
    binary: String,
    via: Option<String>,
}

#[derive(serde::Deserialize)]
struct Line {
    capability: String,
    fingerprint: String,
    test: Option<String>,
    thread: Option<String>,
}

/// Read the record of the project at `root`.
pub fn read(root: &Path, config: &Config) -> Record {
    let workspace = workspace_root(root);
    // run id → (started, (capability, fingerprint) → labels)
    type Ran = BTreeMap<(String, String), BTreeSet<String>>;
    let mut runs: BTreeMap<String, (f64, Ran)> = BTreeMap::new();
    for file in record_files(&root.join(RECORD_DIR)) {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let mut lines = text.lines();
        let Some(header) = lines.next().and_then(|l| serde_json::from_str::<Header>(l).ok()) else { continue };
        // Only the tests of this project's workspace count: a test of
        // another project that inherited the variable (one a test builds,
        // even inside this tree) does not.
        if header.capspec_coverage != 1 || header.manifest_dir.is_empty() || workspace_root(Path::new(&header.manifest_dir)) != workspace {
            continue;
        }
        let run = runs.entry(header.run.clone()).or_insert_with(|| (header.started, BTreeMap::new()));
        for line in lines.filter_map(|l| serde_json::from_str::<Line>(l).ok()) {
            let label = match (&line.test, &header.via) {
                (Some(test), None) => format!("{test} ({})", header.binary),
                (_, Some(via)) => format!("a process {via} that a test of {} started", header.binary),
                (None, None) => format!("a test of {} (on its thread {})", header.binary, line.thread.as_deref().unwrap_or("unnamed")),
            };
            run.1.entry((line.capability, line.fingerprint)).or_default().insert(label);
        }
    }
    let Some((started, ran)) = runs.into_values().max_by(|a, b| a.0.total_cmp(&b.0)) else {
        return Record { freshness: Freshness::Missing, ran: BTreeMap::new() };
    };
    let freshness = match newest_input(root, config) {
        Some((changed, when)) if seconds(when) > started => Freshness::Stale { changed },
        _ => Freshness::Fresh,
    };
    Record { freshness, ran }
}

fn record_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .min_depth(2)
        .max_depth(2)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files
}

/// The Cargo workspace a directory belongs to: the nearest `Cargo.toml`
/// with a `[workspace]` table at or above it (as cargo looks), else the
/// directory itself.
fn workspace_root(dir: &Path) -> PathBuf {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find(|d| std::fs::read_to_string(d.join("Cargo.toml")).is_ok_and(|t| t.parse::<toml::Table>().is_ok_and(|t| t.contains_key("workspace"))))
        .map_or(dir.clone(), Path::to_path_buf)
}

/// The input that changed last: a spec file, a coverage source or test, or
/// `capspec.toml`.
fn newest_input(root: &Path, config: &Config) -> Option<(String, SystemTime)> {
    let dirs = std::iter::once(&config.specs).chain(&config.coverage.sources).chain(&config.coverage.tests);
    let mut newest: Option<(String, SystemTime)> = None;
    let mut consider = |path: &Path| {
        if let Ok(modified) = std::fs::metadata(path).and_then(|m| m.modified()) {
            if newest.as_ref().is_none_or(|(_, t)| modified > *t) {
                newest = Some((crate::source::relative(root, path), modified));
            }
        }
    };
    consider(&root.join(crate::config::CONFIG_FILE));
    for dir in dirs {
        for entry in walkdir::WalkDir::new(root.join(dir)).sort_by_file_name().into_iter().flatten() {
            if entry.file_type().is_file() {
                consider(entry.path());
            }
        }
    }
    newest
}

fn seconds(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}
