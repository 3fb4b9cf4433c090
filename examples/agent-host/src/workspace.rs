//! The run's workspace directory. Every file capability resolves paths
//! through [`Workspace::resolve`], which refuses anything that leaves it.

use std::path::{Component, Path, PathBuf};

use capspec::{CapError, Run};

/// The workspace a run works in (a run extension).
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// A workspace rooted at `root` (created if absent).
    pub fn new(root: impl Into<PathBuf>) -> std::io::Result<Workspace> {
        let root = root.into();
        std::fs::create_dir_all(&root)?;
        Ok(Workspace { root: root.canonicalize()? })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The run's workspace, or an error naming what the host forgot.
    pub fn of(run: &Run) -> Result<&Workspace, CapError> {
        run.get::<Workspace>().ok_or_else(|| CapError::new("this run has no workspace; the host must add one"))
    }

    /// Resolve a workspace-relative path. Absolute paths, `..` that climbs
    /// out, and symlinks that lead outside are refused.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, CapError> {
        let path = Path::new(rel);
        if path.is_absolute() {
            return Err(CapError::new(format!("`{rel}` is absolute; paths are relative to the workspace root")));
        }
        let mut out = self.root.clone();
        for part in path.components() {
            match part {
                Component::Normal(p) => out.push(p),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() || !out.starts_with(&self.root) {
                        return Err(CapError::new(format!("`{rel}` leaves the workspace")));
                    }
                }
                _ => return Err(CapError::new(format!("`{rel}` is not a workspace path"))),
            }
        }
        if !out.starts_with(&self.root) {
            return Err(CapError::new(format!("`{rel}` leaves the workspace")));
        }
        // Follow symlinks on the existing part of the path.
        let mut existing = out.clone();
        while !existing.exists() {
            if !existing.pop() {
                break;
            }
        }
        if let Ok(real) = existing.canonicalize() {
            if !real.starts_with(&self.root) {
                return Err(CapError::new(format!("`{rel}` leads outside the workspace through a symlink")));
            }
        }
        Ok(out)
    }

    /// A path relative to the root, `/`-separated, for results.
    pub fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        let text = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        if text.is_empty() { ".".into() } else { text }
    }

    /// The host's own state directory inside the workspace (`.agent/<name>`).
    pub fn state_dir(&self, name: &str) -> Result<PathBuf, CapError> {
        let dir = self.root.join(".agent").join(name);
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }
}
