//! Where a command's project is when `--root` is not given (DESIGN §5):
//! the nearest directory holding `capspec.toml` at or above the current
//! one; failing that, the one member of the current Cargo workspace that
//! holds one. So `cargo xtask check` finds a workspace member's project from
//! the workspace root (where CI runs it) and from inside the member alike.

use std::path::{Path, PathBuf};

use capspec_codegen::CONFIG_FILE;

/// The default root for a command run in `cwd`. `xtask_dir` is the package
/// `cargo run` started (`CARGO_MANIFEST_DIR`), whose workspace is searched
/// when `cwd` is in none. `Err` (exit 2) names where it looked, or every
/// member holding a config when there are several.
pub(crate) fn default_root(cwd: &Path, xtask_dir: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = cwd.ancestors().find(|dir| dir.join(CONFIG_FILE).is_file()) {
        return Ok(dir.to_path_buf());
    }
    let workspace = workspace_of(cwd).or_else(|| xtask_dir.and_then(workspace_of));
    let Some(workspace) = workspace else {
        return Err(format!(
            "no `{CONFIG_FILE}` at or above `{}`, and it is in no Cargo workspace; run `cargo capspec init` in the package that will host the capabilities, or pass --root",
            cwd.display()
        ));
    };
    let ws = &workspace.dir;
    let mut holding: Vec<PathBuf> = std::iter::once(ws.clone()).chain(workspace.members()).filter(|dir| dir.join(CONFIG_FILE).is_file()).collect();
    holding.sort();
    holding.dedup();
    match holding.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "no `{CONFIG_FILE}` at or above `{}`, nor in a member of the workspace at `{}`; run `cargo capspec init` in the member that will host the capabilities, or pass --root",
            cwd.display(),
            ws.display()
        )),
        several => {
            let names: Vec<String> = several.iter().map(|dir| format!("`{}`", relative(dir, ws))).collect();
            Err(format!(
                "{} members of the workspace at `{}` hold a `{CONFIG_FILE}`: {}; pass --root with the one to use (e.g. `--root {}`), or run the command inside it",
                several.len(),
                ws.display(),
                names.join(", "),
                relative(&several[0], ws)
            ))
        }
    }
}

/// A Cargo workspace: its root and what its `[workspace]` table says of members.
struct Workspace {
    dir: PathBuf,
    members: Vec<String>,
    exclude: Vec<String>,
    /// The root manifest is also a `[package]`, which cargo counts as a member.
    root_package: bool,
}

/// The workspace containing `dir`: the nearest `Cargo.toml` at or above it
/// with a `[workspace]` table.
fn workspace_of(dir: &Path) -> Option<Workspace> {
    dir.ancestors().find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        let manifest: toml::Table = toml::from_str(&text).ok()?;
        let table = manifest.get("workspace")?.as_table()?;
        let strings = |key: &str| -> Vec<String> {
            table.get(key).and_then(toml::Value::as_array).map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()).unwrap_or_default()
        };
        Some(Workspace { dir: dir.to_path_buf(), members: strings("members"), exclude: strings("exclude"), root_package: manifest.contains_key("package") })
    })
}

impl Workspace {
    /// The member directories, in a stable order: `members` (globs of `*`
    /// and `?` within a path segment) less `exclude`, each a directory with
    /// a `Cargo.toml`, and the root when it is a package.
    fn members(&self) -> Vec<PathBuf> {
        let excluded: Vec<PathBuf> = self.exclude.iter().map(|p| self.dir.join(p)).collect();
        let mut out: Vec<PathBuf> = self.members.iter().flat_map(|pattern| expand(&self.dir, pattern)).collect();
        if self.root_package {
            out.push(self.dir.clone());
        }
        out.retain(|dir| dir.join("Cargo.toml").is_file() && !excluded.iter().any(|e| dir.starts_with(e)));
        out.sort();
        out.dedup();
        out
    }
}

/// The directories a member pattern names under `base`.
fn expand(base: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut dirs = vec![base.to_path_buf()];
    for segment in pattern.split('/').filter(|s| !s.is_empty() && *s != ".") {
        dirs = dirs
            .into_iter()
            .flat_map(|dir| {
                if segment.contains(['*', '?']) {
                    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .filter(|entry| entry.path().is_dir() && wildcard(segment, &entry.file_name().to_string_lossy()))
                        .map(|entry| entry.path())
                        .collect();
                    found.sort();
                    found
                } else {
                    vec![dir.join(segment)]
                }
            })
            .collect();
    }
    dirs
}

/// `*` (any run) and `?` (one character) against a whole name.
fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Positions of the pattern reachable after each character of the name.
    let mut reach = vec![false; p.len() + 1];
    reach[0] = true;
    let close = |reach: &mut Vec<bool>| {
        for i in 0..p.len() {
            if reach[i] && p[i] == '*' {
                reach[i + 1] = true;
            }
        }
    };
    close(&mut reach);
    for c in n {
        let mut next = vec![false; p.len() + 1];
        for i in 0..p.len() {
            if reach[i] && (p[i] == '*' || p[i] == '?' || p[i] == c) {
                next[if p[i] == '*' { i } else { i + 1 }] = true;
            }
        }
        close(&mut next);
        reach = next;
    }
    reach[p.len()]
}

fn relative(dir: &Path, ws: &Path) -> String {
    match dir.strip_prefix(ws) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => dir.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::wildcard;

    #[test]
    fn wildcards_match_whole_segments() {
        assert!(wildcard("*", "host"));
        assert!(wildcard("crate-*", "crate-a"));
        assert!(wildcard("c?ate*", "crate-a"));
        assert!(wildcard("*-a", "crate-a"));
        assert!(!wildcard("crate-*", "crates"));
        assert!(!wildcard("c?", "c"));
        assert!(wildcard("a*b*c", "aXXbYYc"));
        assert!(!wildcard("a*b*c", "aXXbYY"));
    }
}
