//! What the last `cargo test` ran (DESIGN §5, `coverage/untested`): the
//! runtime's coverage record, written under `.capspec/coverage/` by every
//! process of a `cargo test` whose calls reached an implementation
//! (`capspec`'s `coverage.rs`). This is the only evidence that makes a
//! capability tested; nothing here reads a test's source.
//!
//! Freshness is decided by content (DESIGN §5): the run's first process
//! wrote the digest of every project file it saw (`inputs.json`, beside
//! the run's files). The record is stale, and counts for nothing, when one
//! of its inputs (the specs, the coverage sources and tests, and
//! `capspec.toml`) differs from what the run saw, was added or removed
//! since, or changed between the run's start and that look (whether the
//! run's binaries were built from such a file cannot be known, so the
//! clock makes the verdict conservative there, and only there). A record
//! without its inputs is judged by the clock alone: fresh only when its
//! run started after every input's last change.

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

/// `inputs.json`: what the run saw of the project's files.
#[derive(serde::Deserialize)]
struct Inputs {
    capspec_inputs: u32,
    /// When the run looked, in seconds since the Unix epoch.
    taken: f64,
    /// Every file was read (no budget ran out).
    complete: bool,
    files: BTreeMap<String, Seen>,
}

#[derive(serde::Deserialize)]
struct Seen {
    digest: String,
    size: u64,
    modified_ns: u64,
}

/// How late after a run's recorded start an edit still counts as made
/// before it: the header's start is 0.05 s early (so the clock alone stays
/// conservative) and known to 1/100 s, and cargo reads no source in its
/// first hundredths of a second.
const START_SLACK: f64 = 0.07;

/// Read the record of the project at `root`.
pub fn read(root: &Path, config: &Config) -> Record {
    let workspace = workspace_root(root);
    // run id → (started, (capability, fingerprint) → labels)
    type Ran = BTreeMap<(String, String), BTreeSet<String>>;
    let mut runs: BTreeMap<String, (f64, Ran, PathBuf)> = BTreeMap::new();
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
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let run = runs.entry(header.run.clone()).or_insert_with(|| (header.started, BTreeMap::new(), dir));
        for line in lines.filter_map(|l| serde_json::from_str::<Line>(l).ok()) {
            let label = match (&line.test, &header.via) {
                (Some(test), None) => format!("{test} ({})", header.binary),
                (_, Some(via)) => format!("a process {via} that a test of {} started", header.binary),
                (None, None) => format!("a test of {} (on its thread {})", header.binary, line.thread.as_deref().unwrap_or("unnamed")),
            };
            run.1.entry((line.capability, line.fingerprint)).or_default().insert(label);
        }
    }
    let Some((started, ran, dir)) = runs.into_values().max_by(|a, b| a.0.total_cmp(&b.0)) else {
        return Record { freshness: Freshness::Missing, ran: BTreeMap::new() };
    };
    let inputs = std::fs::read_to_string(dir.join("inputs.json")).ok().and_then(|t| serde_json::from_str::<Inputs>(&t).ok()).filter(|i| i.capspec_inputs == 1 && i.complete);
    let freshness = match inputs {
        Some(inputs) => by_content(root, config, started, &inputs),
        None => match newest_input(root, config) {
            Some((changed, when)) if seconds(when) > started => Freshness::Stale { changed },
            _ => Freshness::Fresh,
        },
    };
    Record { freshness, ran }
}

/// Fresh when every input is what the run saw and none changed between
/// the run's start and its look; else stale, naming the first input (in
/// path order) that is not.
fn by_content(root: &Path, config: &Config, started: f64, inputs: &Inputs) -> Freshness {
    let mut current: BTreeMap<String, PathBuf> = BTreeMap::new();
    for_each_input(root, config, |path| drop(current.insert(crate::source::relative(root, path), path.to_path_buf())));
    let window = (started + START_SLACK)..=inputs.taken;
    let changed = |path: &Path, seen: &Seen| -> bool {
        let Ok(meta) = std::fs::metadata(path) else { return true };
        let modified = meta.modified().ok().and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok());
        if modified.is_some_and(|m| window.contains(&m.as_secs_f64())) {
            return true;
        }
        // Unchanged size and modification time: the content the run read
        // (as git decides); else the bytes are compared.
        if meta.len() == seen.size && modified.is_some_and(|m| m.as_nanos() as u64 == seen.modified_ns) {
            return false;
        }
        std::fs::read(path).map_or(true, |bytes| capspec_dialects::pin::bytes_digest(&bytes) != seen.digest)
    };
    let input_dirs: Vec<String> = std::iter::once(&config.specs).chain(&config.coverage.sources).chain(&config.coverage.tests).map(|d| crate::source::relative(root, &root.join(d))).collect();
    let is_input = |rel: &str| rel == crate::config::CONFIG_FILE || input_dirs.iter().any(|d| d.is_empty() || d == "." || rel.starts_with(&format!("{d}/")));
    let mut stale: BTreeSet<&str> = BTreeSet::new();
    for (rel, path) in &current {
        if inputs.files.get(rel).is_none_or(|seen| changed(path, seen)) {
            stale.insert(rel);
        }
    }
    for rel in inputs.files.keys() {
        if is_input(rel) && !current.contains_key(rel) {
            stale.insert(rel);
        }
    }
    match stale.first() {
        Some(changed) => Freshness::Stale { changed: changed.to_string() },
        None => Freshness::Fresh,
    }
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
    let mut newest: Option<(String, SystemTime)> = None;
    for_each_input(root, config, |path| {
        if let Ok(modified) = std::fs::metadata(path).and_then(|m| m.modified()) {
            if newest.as_ref().is_none_or(|(_, t)| modified > *t) {
                newest = Some((crate::source::relative(root, path), modified));
            }
        }
    });
    newest
}

/// Every input file: `capspec.toml`, then the files under the specs
/// directory, the coverage sources and the tests, but for the directories
/// the run's walk leaves out too (build output, hidden ones,
/// `node_modules`: `capspec_dialects::pin::walk_skips`).
fn for_each_input(root: &Path, config: &Config, mut each: impl FnMut(&Path)) {
    let config_file = root.join(crate::config::CONFIG_FILE);
    if config_file.is_file() {
        each(&config_file);
    }
    let dirs = std::iter::once(&config.specs).chain(&config.coverage.sources).chain(&config.coverage.tests);
    for dir in dirs {
        let walk = walkdir::WalkDir::new(root.join(dir)).sort_by_file_name().into_iter();
        let kept = walk.filter_entry(|e| e.depth() == 0 || !e.file_type().is_dir() || !capspec_dialects::pin::walk_skips(&e.file_name().to_string_lossy(), e.path()));
        for entry in kept.flatten() {
            if entry.file_type().is_file() {
                each(entry.path());
            }
        }
    }
}

fn seconds(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}
