//! The texts findings point into (for rustc-like snippets), and project-
//! relative paths.

use std::collections::BTreeMap;
use std::path::Path;

/// Source texts of the files findings point into, for rendering snippets.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    files: BTreeMap<String, String>,
}

impl Sources {
    /// Remember `text` as the contents of `file` (relative to the root).
    pub fn insert(&mut self, file: &str, text: String) {
        self.files.insert(file.to_string(), text);
    }

    /// Add every text of `other`.
    pub fn extend(&mut self, other: Sources) {
        self.files.extend(other.files);
    }

    /// The text of a 1-based line of a file, when known.
    pub fn line(&self, file: &str, line: u32) -> Option<&str> {
        let text = self.files.get(file)?;
        text.lines().nth((line as usize).checked_sub(1)?)
    }
}

/// Path of `path` relative to `root`, `/`-separated.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// The features the package at `dir` declares in `[features]` (`None`
/// when its manifest cannot be read).
pub(crate) fn declared_features(dir: &Path) -> Option<std::collections::BTreeSet<String>> {
    let table = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?.parse::<toml::Table>().ok()?;
    Some(table.get("features").and_then(|f| f.as_table()).map(|f| f.keys().filter(|k| *k != "default").cloned().collect()).unwrap_or_default())
}
