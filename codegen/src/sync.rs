//! Write versus compare. `sync` writes the rendered artifacts; `drift`
//! compares them with the files on disk. Both start from the same
//! [`crate::render::render_all`] call.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::check::{self, Project};
use crate::config::FatalError;
use crate::finding::{Finding, rule};
use crate::render::{self, Artifact, Targets, is_generated};
use crate::yaml::Pos;

/// What `sync` did, or why it did nothing.
#[derive(Debug, Default)]
pub struct SyncOutcome {
    /// Findings that stopped the sync (spec or config errors): nothing was written.
    pub findings: Vec<Finding>,
    pub written: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: usize,
    pub sources: crate::load::Sources,
}

/// Why `sync` could not write (exit code 2); the tree is as it was.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Fatal(#[from] FatalError),
    #[error("cannot write `{path}`: {source}; nothing was changed")]
    Write { path: String, source: std::io::Error },
    #[error("refusing to write `{path}`: {reason}; nothing was changed")]
    Unsafe { path: String, reason: String },
}

/// Render the project's artifacts, or `None` when specs or config have errors.
pub fn render_project(project: &Project) -> Option<(Targets, Vec<Artifact>)> {
    let config = project.config.as_ref()?;
    let blocked = project.config_findings.iter().chain(&project.loaded.findings).any(|f| f.severity == crate::Severity::Error);
    if blocked {
        return None;
    }
    let targets = Targets::from_config(config);
    let root = &config.root;
    let existing = |path: &str| std::fs::read_to_string(root.join(path)).ok();
    let mut artifacts = render::render_all_reusing(&project.loaded.set, &targets, &existing);
    if let Some(record) = &project.code_first_record {
        artifacts.push(Artifact { path: config.code_first.record.clone(), contents: crate::code_first::render_record(record) });
        artifacts.sort();
    }
    Some((targets, artifacts))
}

/// Files carrying the generated marker inside the output directories.
fn generated_files(root: &Path, targets: &Targets) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for dir in targets.output_dirs() {
        let walker = walkdir::WalkDir::new(root.join(dir)).follow_links(false).sort_by_file_name();
        for entry in walker.into_iter().filter_map(Result::ok) {
            if !entry.file_type().is_file() || is_temp(&entry.file_name().to_string_lossy()) {
                continue;
            }
            if first_line_is_marker(entry.path()) {
                found.insert(crate::load::relative(root, entry.path()));
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

/// Drift findings: every artifact compared with the file on disk.
pub fn drift(root: &Path, targets: &Targets, artifacts: &[Artifact]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let produced: BTreeSet<&str> = artifacts.iter().map(|a| a.path.as_str()).collect();
    for artifact in artifacts {
        let path = root.join(&artifact.path);
        let current = std::fs::read(&path).ok().map(|b| String::from_utf8_lossy(&b).into_owned());
        let Some(current) = current else {
            findings.push(Finding::error(
                rule::DRIFT_MISSING,
                &artifact.path,
                Pos::default(),
                format!("generated file `{}` is missing; run `cargo xtask sync`", artifact.path),
            ));
            continue;
        };
        if current == artifact.contents {
            continue;
        }
        if artifact.path == targets.snapshot {
            findings.extend(snapshot_drift(&artifact.path, &current, &artifact.contents));
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
fn unified_diff(path: &str, current: &str, expected: &str) -> (u32, String) {
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

/// One `drift/snapshot` finding per reclassified, added or removed capability.
fn snapshot_drift(path: &str, current: &str, expected: &str) -> Vec<Finding> {
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
        let line = old.get(name).map_or(0, |(_, l)| *l);
        findings.push(Finding::error(rule::DRIFT_SNAPSHOT, path, Pos { line, column: 0 }, message));
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

/// Whether a reclassification loosens or tightens the gate.
fn direction(from: &str, to: &str) -> &'static str {
    let rank = |c: &str| match c {
        "read" => 0,
        "write" => 1,
        "execute" => 2,
        "external" => 3,
        _ => 4,
    };
    match rank(to).cmp(&rank(from)) {
        std::cmp::Ordering::Less => " (loosens the gate)",
        std::cmp::Ordering::Greater => " (tightens the gate)",
        std::cmp::Ordering::Equal => "",
    }
}

/// Regenerate every artifact: write what changed (atomically), remove
/// orphaned generated files, leave everything else alone. With spec or
/// config errors nothing is written and the findings are returned.
pub fn sync(root: &Path) -> Result<SyncOutcome, SyncError> {
    sync_with(root, None)
}

/// [`sync`] with code-first specs from `code_first` (see [`check::open_with`]).
pub fn sync_with(root: &Path, code_first: Option<&crate::code_first::CodeFirstInput>) -> Result<SyncOutcome, SyncError> {
    let project = check::open_with(root, code_first)?;
    let Some((targets, artifacts)) = render_project(&project) else {
        let mut findings = project.config_findings;
        findings.extend(project.loaded.findings);
        Finding::sort(&mut findings);
        return Ok(SyncOutcome { findings, sources: project.loaded.sources, ..SyncOutcome::default() });
    };
    let mut outcome = SyncOutcome::default();
    let mut changed = Vec::new();
    for artifact in &artifacts {
        check_path_is_safe(root, &artifact.path)?;
        let current = std::fs::read(root.join(&artifact.path)).ok();
        if current.as_deref() == Some(artifact.contents.as_bytes()) {
            outcome.unchanged += 1;
        } else {
            changed.push(artifact);
        }
    }
    let produced: BTreeSet<&str> = artifacts.iter().map(|a| a.path.as_str()).collect();
    let orphans: Vec<String> = generated_files(root, &targets).into_iter().filter(|p| !produced.contains(p.as_str())).collect();
    remove_stale_temps(root, &targets, &artifacts);

    // Stage every write as a temp file beside its target; only when all are
    // staged do the renames happen, so a failure changes nothing.
    let mut staged: Vec<(PathBuf, PathBuf, String)> = Vec::new();
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let stage = |artifact: &Artifact, staged: &mut Vec<(PathBuf, PathBuf, String)>, created: &mut Vec<PathBuf>| -> std::io::Result<()> {
        let target = root.join(&artifact.path);
        let dir = target.parent().expect("artifact paths have a parent").to_path_buf();
        create_dirs(&dir, created)?;
        let file_name = target.file_name().expect("artifact paths name a file").to_string_lossy();
        let temp = dir.join(format!(".{file_name}.capspec-{}-{}.tmp", std::process::id(), staged.len()));
        if let Err(e) = std::fs::write(&temp, artifact.contents.as_bytes()) {
            // A partly written temp (a full disk) goes too.
            let _ = std::fs::remove_file(&temp);
            return Err(e);
        }
        staged.push((temp, target, artifact.path.clone()));
        Ok(())
    };
    for artifact in &changed {
        if let Err(source) = stage(artifact, &mut staged, &mut created_dirs) {
            for (temp, _, _) in &staged {
                let _ = std::fs::remove_file(temp);
            }
            for dir in created_dirs.iter().rev() {
                let _ = std::fs::remove_dir(dir);
            }
            return Err(SyncError::Write { path: artifact.path.clone(), source });
        }
    }
    for (temp, target, rel) in staged {
        if let Err(source) = std::fs::rename(&temp, &target) {
            let _ = std::fs::remove_file(&temp);
            return Err(SyncError::Write { path: rel, source });
        }
        outcome.written.push(rel);
    }
    for orphan in orphans {
        check_path_is_safe(root, &orphan)?;
        match std::fs::remove_file(root.join(&orphan)) {
            Ok(()) => outcome.removed.push(orphan),
            Err(source) => return Err(SyncError::Write { path: orphan, source }),
        }
    }
    Ok(outcome)
}

/// Temp files left by a `sync` that was killed before its renames
/// (`.<name>.capspec-<pid>-<n>.tmp` beside a target): removed when the
/// process that wrote them is gone. A live concurrent `sync`'s are kept.
fn remove_stale_temps(root: &Path, targets: &Targets, artifacts: &[Artifact]) {
    let mut dirs: BTreeSet<PathBuf> = targets.output_dirs().iter().map(|d| root.join(d)).collect();
    for a in artifacts {
        if let Some(parent) = root.join(&a.path).parent() {
            dirs.insert(parent.to_path_buf());
        }
    }
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_suffix(".tmp") else { continue };
            let Some((_, tail)) = rest.rsplit_once(".capspec-") else { continue };
            let Some(pid) = tail.split('-').next().and_then(|p| p.parse::<u32>().ok()) else { continue };
            if pid != std::process::id() && !process_alive(pid) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") { Path::new(&format!("/proc/{pid}")).exists() } else { true }
}

fn create_dirs(dir: &Path, created: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_dirs(parent, created)?;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => {
            created.push(dir.to_path_buf());
            Ok(())
        }
        // A concurrent sync made it first: it is not ours to remove.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Refuse to write through a symlink that leaves the project root.
fn check_path_is_safe(root: &Path, rel: &str) -> Result<(), SyncError> {
    let Ok(root_real) = root.canonicalize() else { return Ok(()) };
    let mut current = root.to_path_buf();
    for part in Path::new(rel).components() {
        current.push(part);
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let resolved = current.canonicalize().unwrap_or_else(|_| current.clone());
                if !resolved.starts_with(&root_real) {
                    return Err(SyncError::Unsafe {
                        path: rel.to_string(),
                        reason: format!("`{}` is a symlink leading outside the project root", crate::load::relative(root, &current)),
                    });
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}
