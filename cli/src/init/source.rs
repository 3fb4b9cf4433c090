//! Where `init` points the capspec crates: the registry, a checkout by
//! path (relative inside the project's repository), or a git repository
//! and commit, and how each is written into a manifest.

use std::path::{Path, PathBuf};

/// Where the capspec crates come from in the manifests init writes.
pub(super) struct Source {
    pub(super) kind: SourceKind,
    /// Named by a flag: existing capspec entries are rewritten to it.
    pub(super) explicit: bool,
}

pub(super) enum SourceKind {
    /// crates.io, this version.
    Registry(&'static str),
    /// A local capspec checkout (canonical); written relative to each
    /// manifest when `relative`.
    Path { dir: PathBuf, relative: bool },
    /// capspec's git repository.
    Git { url: String, rev: Option<String> },
}

/// The checkout this binary was built from, if it is still there: the
/// parent of the `cli` crate's manifest directory, holding the runtime,
/// codegen and cli crates. A binary installed from the registry was built
/// in cargo's registry cache, whose parent holds no such crates.
pub(super) fn own_checkout() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.canonicalize().ok()?;
    is_checkout(&dir).then_some(dir)
}

pub(super) fn is_checkout(dir: &Path) -> bool {
    ["runtime", "codegen", "cli"].iter().all(|c| dir.join(c).join("Cargo.toml").is_file())
}

/// A capspec checkout that is a git clone of a repository others can fetch.
#[derive(Debug, PartialEq)]
pub(super) struct Published {
    /// The remote's URL (`origin`, else the first remote).
    pub(super) url: String,
    /// The commit checked out.
    pub(super) rev: String,
    /// The work tree differs from that commit.
    pub(super) dirty: bool,
}

/// `dir` as a published clone: `None` when it is not a git work tree, has no
/// remote, or its remote is a path on this machine (which a teammate's
/// machine and CI cannot fetch either).
pub(super) fn published(dir: &Path) -> Option<Published> {
    let git = |args: &[&str]| -> Option<String> {
        let output = std::process::Command::new("git").arg("-C").arg(dir).args(args).stdin(std::process::Stdio::null()).stderr(std::process::Stdio::null()).output().ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    let remotes = git(&["remote"])?;
    let remote = remotes.lines().find(|r| *r == "origin").or_else(|| remotes.lines().next())?;
    let url = git(&["remote", "get-url", remote])?;
    if !is_network_url(&url) {
        return None;
    }
    let rev = git(&["rev-parse", "HEAD"])?;
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_none_or(|s| !s.is_empty());
    Some(Published { url, rev, dirty })
}

/// A git URL that names another machine: `https://`, `ssh://`, `git://`, or
/// scp-like `user@host:path`; not `file://` nor a path.
pub(super) fn is_network_url(url: &str) -> bool {
    if let Some((scheme, _)) = url.split_once("://") {
        return matches!(scheme, "https" | "http" | "ssh" | "git" | "git+ssh" | "ssh+git");
    }
    // scp-like: a host before the first `:`, and no `/` before it.
    url.split_once(':').is_some_and(|(host, _)| !host.is_empty() && !host.contains('/') && host.len() > 1)
}

/// The repository `dir` lies in: the nearest ancestor holding `.git`.
pub(super) fn repository_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

/// `to` relative to the directory `from` (both absolute and canonical).
pub(super) fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

impl Source {
    /// The entry for `krate` (in the checkout's `folder`) in the manifest in `manifest_dir`.
    pub(super) fn dep(&self, krate: &str, folder: &str, manifest_dir: &Path) -> String {
        format!("{krate} = {}", self.spec(folder, manifest_dir, None))
    }

    /// `capspec-cli` as an xtask depends on it: without the feature `live`
    /// (the MCP client `--upstream` needs), so the xtask CI builds stays small.
    pub(super) fn cli_dep(&self, xtask_dir: &Path) -> String {
        format!("capspec-cli = {}", self.spec("cli", xtask_dir, Some("default-features = false, features = [\"mimalloc\"]")))
    }

    /// The value of a dependency entry: a version string, or an inline table.
    pub(super) fn spec(&self, folder: &str, manifest_dir: &Path, extra: Option<&str>) -> String {
        let location = match &self.kind {
            SourceKind::Registry(version) if extra.is_none() => return toml_string(version),
            SourceKind::Registry(version) => format!("version = {}", toml_string(version)),
            SourceKind::Path { dir, relative } => {
                let target = dir.join(folder);
                // The manifest's directory may not exist yet (a new xtask).
                let base = manifest_dir.canonicalize().unwrap_or_else(|_| manifest_dir.to_path_buf());
                let shown = if *relative { relative_path(&base, &target) } else { target };
                format!("path = {}", toml_string(&shown.to_string_lossy()))
            }
            SourceKind::Git { url, rev } => match rev {
                Some(rev) => format!("git = {}, rev = {}", toml_string(url), toml_string(rev)),
                None => format!("git = {}", toml_string(url)),
            },
        };
        match extra {
            Some(extra) => format!("{{ {location}, {extra} }}"),
            None => format!("{{ {location} }}"),
        }
    }

    /// The flag that would fix a project that does not resolve with this source.
    pub(super) fn fix(&self) -> &'static str {
        match self.kind {
            SourceKind::Registry(_) => {
                "capspec's crates are not on the registry at this version: run init again with --capspec-path DIR (a capspec checkout) or --capspec-git URL [--rev REV]"
            }
            SourceKind::Path { .. } => "run init again with --capspec-path naming a capspec checkout, or with --capspec-git URL [--rev REV]",
            SourceKind::Git { .. } => "check the URL and --rev, or run init again with --capspec-path DIR (a capspec checkout)",
        }
    }
}

/// A TOML basic string.
pub(super) fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
