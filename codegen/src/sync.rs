//! `sync`: write the rendered artifacts — atomically (stage every file,
//! then rename), only what changed, removing orphaned generated files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::code_first::CodeFirstInput;
use crate::gate::drift::{OnDisk, generated_files, on_disk};
use crate::error::FatalError;
use crate::finding::Finding;
use crate::project::{self, Rendered};
use crate::render::{Artifact, Targets};
use crate::source::{Sources, relative};

/// What `sync` did, or why it did nothing.
#[derive(Debug, Default)]
pub struct SyncOutcome {
    /// Findings that stopped the sync (spec or config errors): nothing was written.
    pub findings: Vec<Finding>,
    /// Files written, relative to the root.
    pub written: Vec<String>,
    /// Orphaned generated files removed.
    pub removed: Vec<String>,
    /// How many files were already up to date.
    pub unchanged: usize,
    /// The texts the findings point into.
    pub sources: Sources,
}

/// Why `sync` could not write (exit code 2); the tree is as it was.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The project could not be opened.
    #[error(transparent)]
    Fatal(#[from] FatalError),
    /// A file could not be written or removed.
    #[error("cannot write `{path}`: {source}; nothing was changed")]
    Write {
        /// The file, relative to the root.
        path: String,
        /// What the file system said.
        source: std::io::Error,
    },
    /// Writing would go through a symlink that leaves the root.
    #[error("refusing to write `{path}`: {reason}; nothing was changed")]
    Unsafe {
        /// The file, relative to the root.
        path: String,
        /// Which link leaves the root.
        reason: String,
    },
}

/// Regenerate every artifact: write what changed (atomically), remove
/// orphaned generated files, leave everything else alone. With spec or
/// config errors nothing is written and the findings are returned.
pub fn sync(root: &Path) -> Result<SyncOutcome, SyncError> {
    sync_with(root, None)
}

/// [`sync`] with code-first specs from `code_first` (see [`project::open_with`]).
pub fn sync_with(root: &Path, code_first: Option<&CodeFirstInput>) -> Result<SyncOutcome, SyncError> {
    let project = project::open_with(root, code_first)?;
    let Some(Rendered { targets, artifacts }) = project.render() else {
        let (findings, sources) = project.into_findings();
        return Ok(SyncOutcome { findings, sources, ..SyncOutcome::default() });
    };
    let mut outcome = SyncOutcome::default();
    let mut changed = Vec::new();
    for artifact in &artifacts {
        check_path_is_safe(root, &artifact.path)?;
    }
    // (Writes below stay serial: files created in one directory from two
    // threads contend on its lock.)
    for (artifact, disk) in artifacts.iter().zip(on_disk(root, &artifacts)) {
        if matches!(disk, OnDisk::Same) {
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
                        reason: format!("`{}` is a symlink leading outside the project root", relative(root, &current)),
                    });
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}
