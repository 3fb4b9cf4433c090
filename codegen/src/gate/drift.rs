//! Compare rendered artifacts with the files on disk: `drift/*` findings.
//! Reads, never writes.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;

use crate::finding::Finding;
use crate::model::Category;
use crate::render::{Artifact, Targets, is_generated};
use crate::rules as rule;
use crate::source::relative;
use crate::yaml::Pos;

/// Files carrying the generated marker inside the output directories.
pub(crate) fn generated_files(root: &Path, targets: &Targets) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for dir in targets.output_dirs() {
        let walker = walkdir::WalkDir::new(root.join(dir)).follow_links(false).sort_by_file_name();
        for entry in walker.into_iter().filter_map(Result::ok) {
            if !entry.file_type().is_file() || is_temp(&entry.file_name().to_string_lossy()) {
                continue;
            }
            if first_line_is_marker(entry.path()) {
                found.insert(relative(root, entry.path()));
            }
        }
    }
    found
}

/// A file `sync` is staging (`.<name>.capspec-<pid>-<n>.tmp`): never an
/// orphan, whoever's it is.
fn is_temp(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(".capspec-")
}

fn first_line_is_marker(path: &Path) -> bool {
    let mut head = [0u8; 512];
    let Ok(mut file) = std::fs::File::open(path) else { return false };
    let n = file.read(&mut head).unwrap_or(0);
    is_generated(&String::from_utf8_lossy(&head[..n]))
}

/// What is on disk where an artifact goes.
pub(crate) enum OnDisk {
    /// No file (or none readable).
    Missing,
    /// Exactly the artifact's bytes.
    Same,
    /// Something else, as text.
    Differs(String),
}

/// Every artifact compared with the file on disk, read and compared in
/// parallel as bytes; only a file that differs is kept, as text.
pub(crate) fn on_disk(root: &Path, artifacts: &[Artifact]) -> Vec<OnDisk> {
    crate::parallel::map(artifacts.iter().collect(), |artifact: &Artifact| match std::fs::read(root.join(&artifact.path)) {
        Ok(bytes) if bytes == artifact.contents.as_bytes() => OnDisk::Same,
        Ok(bytes) => OnDisk::Differs(String::from_utf8_lossy(&bytes).into_owned()),
        Err(_) => OnDisk::Missing,
    })
}

/// Drift findings: every artifact compared with the file on disk.
pub(crate) fn drift(root: &Path, targets: &Targets, artifacts: &[Artifact], set: &crate::model::SpecSet) -> Vec<Finding> {
    let mut findings = Vec::new();
    let produced: BTreeSet<&str> = artifacts.iter().map(|a| a.path.as_str()).collect();
    for (artifact, disk) in artifacts.iter().zip(on_disk(root, artifacts)) {
        let current = match disk {
            OnDisk::Same => continue,
            OnDisk::Differs(current) => current,
            OnDisk::Missing => {
                findings.push(Finding::error(
                    rule::DRIFT_MISSING,
                    &artifact.path,
                    Pos::default(),
                    format!("generated file `{}` is missing; run `cargo xtask sync`", artifact.path),
                ));
                continue;
            }
        };
        if artifact.path == targets.snapshot {
            findings.extend(snapshot_drift(&artifact.path, &current, &artifact.contents, set));
            continue;
        }
        let (line, diff) = unified_diff(&artifact.path, &current, &artifact.contents);
        findings.push(
            Finding::error(
                rule::DRIFT_STALE,
                &artifact.path,
                Pos { line, column: 0 },
                format!(
                    "generated file `{}` differs from what the specs produce; it is never edited by hand — run `cargo xtask sync`",
                    artifact.path
                ),
            )
            .with_diff(diff),
        );
    }
    for orphan in generated_files(root, targets) {
        if !produced.contains(orphan.as_str()) {
            findings.push(Finding::error(
                rule::DRIFT_ORPHAN,
                &orphan,
                Pos::default(),
                format!("`{orphan}` carries the generated marker but no spec produces it any more; run `cargo xtask sync` to remove it"),
            ));
        }
    }
    findings
}

/// Most diff lines a finding carries.
const MAX_DIFF_LINES: usize = 200;

/// A unified diff (on disk → expected) and the first changed line on disk.
pub(crate) fn unified_diff(path: &str, current: &str, expected: &str) -> (u32, String) {
    let diff = similar::TextDiff::from_lines(current, expected);
    let first = diff
        .ops()
        .iter()
        .find(|op| !matches!(op, similar::DiffOp::Equal { .. }))
        .map_or(1, |op| op.old_range().start as u32 + 1);
    let text = diff.unified_diff().context_radius(3).header(&format!("a/{path}"), &format!("b/{path}")).to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = lines.iter().take(MAX_DIFF_LINES).copied().collect::<Vec<_>>().join("\n");
    if lines.len() > MAX_DIFF_LINES {
        out.push_str(&format!("\n… {} more diff lines", lines.len() - MAX_DIFF_LINES));
    }
    (first, out)
}

fn snapshot_entries(text: &str) -> BTreeMap<String, (String, u32)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|(i, l)| {
            let (name, category) = l.trim().rsplit_once(' ')?;
            Some((name.to_string(), (category.to_string(), i as u32 + 1)))
        })
        .collect()
}

/// One `drift/snapshot` finding per reclassified, added or removed
/// capability: at its line in the snapshot, or, for a code-first
/// capability, at its derive, where the category is written.
fn snapshot_drift(path: &str, current: &str, expected: &str, set: &crate::model::SpecSet) -> Vec<Finding> {
    let old = snapshot_entries(current);
    let new = snapshot_entries(expected);
    let fix = "review the classification, then run `cargo xtask sync`";
    let mut findings = Vec::new();
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for name in names {
        let message = match (old.get(name), new.get(name)) {
            (Some((a, _)), Some((b, _))) if a == b => continue,
            (Some((a, _)), Some((b, _))) => format!("{name}: {a} → {b}{}; {fix}", direction(a, b)),
            (None, Some((b, _))) => format!("{name}: (new) → {b}; {fix}"),
            (Some((a, _)), None) => format!("{name}: {a} → (removed); {fix}"),
            (None, None) => continue,
        };
        let derive = set.capabilities().find(|(m, c)| c.code_first.is_some() && name.split_once('.') == Some((m.name.as_str(), c.name.as_str())));
        match derive {
            Some((m, c)) => {
                let message = message.replacen("; ", &format!(" in the category snapshot `{path}`; "), 1);
                findings.push(Finding::error(rule::DRIFT_SNAPSHOT, c.file(m), c.pos, message));
            }
            None => {
                let line = old.get(name).map_or(0, |(_, l)| *l);
                findings.push(Finding::error(rule::DRIFT_SNAPSHOT, path, Pos { line, column: 0 }, message));
            }
        }
    }
    if findings.is_empty() {
        // Same entries, other text (a hand edit of the comment line, order).
        let (line, diff) = unified_diff(path, current, expected);
        findings.push(
            Finding::error(rule::DRIFT_SNAPSHOT, path, Pos { line, column: 0 }, format!("the category snapshot `{path}` was edited by hand; run `cargo xtask sync`"))
                .with_diff(diff),
        );
    }
    findings
}

/// ` (loosens the gate)` / ` (tightens the gate)` for a reclassification
/// in the snapshot; a category the snapshot misspells ranks above all.
fn direction(from: &str, to: &str) -> String {
    let change = match (Category::parse(from), Category::parse(to)) {
        (Some(a), Some(b)) => Category::direction(a, b),
        (Some(_), None) => Some("tightens the gate"),
        (None, Some(_)) => Some("loosens the gate"),
        (None, None) => None,
    };
    change.map(|c| format!(" ({c})")).unwrap_or_default()
}
