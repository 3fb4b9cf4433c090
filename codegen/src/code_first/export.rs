//! Building the `[code_first]` packages' library tests, whose hidden
//! `__capspec_export_*` tests write each derive's spec.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::{CONFIG_FILE, Config};
use crate::finding::Finding;
use crate::rules as rule;
use crate::yaml::Pos;

use super::record::Exported;

/// The libtest filter that selects the derives' export tests.
const EXPORT_TEST_PREFIX: &str = "__capspec_export_";
/// The variable naming the directory the export tests write into.
const EXPORT_DIR_VAR: &str = "CAPSPEC_EXPORT_DIR";

/// A package whose specs could not be exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportFailure {
    /// The package, as listed under `[code_first] packages`.
    pub package: String,
    /// Where the package is listed in `capspec.toml`.
    pub pos: Pos,
    /// What went wrong, with the compiler's first errors.
    pub message: String,
}

impl ExportFailure {
    /// The `code-first/export` error finding, at the package's line in `capspec.toml`.
    pub fn finding(&self) -> Finding {
        Finding::error(rule::CODE_FIRST_EXPORT, CONFIG_FILE, self.pos, self.message.clone())
    }
}

/// Build every `[code_first]` package's library tests and collect what its
/// derives export. Runs `cargo` (`$CARGO` when set) in the project root.
pub(super) fn export(root: &Path, config: &Config) -> (Vec<Exported>, Vec<ExportFailure>) {
    let mut exported = Vec::new();
    let mut failures = Vec::new();
    if config.code_first.packages.is_empty() {
        return (exported, failures);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = workspace_root(root, &cargo);
    for (n, (package, pos)) in config.code_first.packages.iter().enumerate() {
        let fail = |message: String| ExportFailure { package: package.clone(), pos: *pos, message };
        let dir = std::env::temp_dir().join(format!("capspec-export-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            failures.push(fail(format!("cannot create the export directory {}: {e}", dir.display())));
            continue;
        }
        let result = Command::new(&cargo)
            .current_dir(root)
            .args(["test", "--quiet", "--color", "never", "--message-format", "short", "-p", package, "--lib", "--"])
            .arg(EXPORT_TEST_PREFIX)
            .env(EXPORT_DIR_VAR, &dir)
            .output();
        match result {
            Err(e) => failures.push(fail(format!("cannot run cargo to export the code-first specs of `{package}`: {e}"))),
            Ok(out) if !out.status.success() => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let stdout = String::from_utf8_lossy(&out.stdout);
                failures.push(fail(format!(
                    "cannot export the code-first specs of `{package}`: `cargo test -p {package} --lib` failed{}",
                    excerpt(&stderr, &stdout)
                )));
            }
            Ok(_) => match read_exports(&dir, package, root, workspace.as_deref()) {
                Ok(specs) => exported.extend(specs),
                Err(message) => failures.push(fail(message)),
            },
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    (exported, failures)
}

/// The first compiler errors (or the failing test's panic), enough to act on.
fn excerpt(stderr: &str, stdout: &str) -> String {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error") && !l.starts_with("error: could not compile")).take(8).collect();
    let lines: Vec<&str> = if errors.is_empty() {
        let all: Vec<&str> = stdout.lines().chain(stderr.lines()).filter(|l| !l.trim().is_empty()).collect();
        all[all.len().saturating_sub(12)..].to_vec()
    } else {
        errors
    };
    if lines.is_empty() { String::new() } else { format!(":\n    {}", lines.join("\n    ")) }
}

/// `cargo locate-project --workspace`: the directory `file!()` paths are
/// relative to.
fn workspace_root(root: &Path, cargo: &std::ffi::OsStr) -> Option<PathBuf> {
    let out = Command::new(cargo).current_dir(root).args(["locate-project", "--workspace", "--message-format", "plain"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let manifest = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    manifest.parent().map(Path::to_path_buf)
}

fn read_exports(dir: &Path, package: &str, root: &Path, workspace: Option<&Path>) -> Result<Vec<Exported>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the export directory {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let unreadable = |e: serde_json::Error| format!("`{package}` exported a spec this capspec cannot read ({e}); are the capspec runtime and xtask the same version?");
        let mut value: serde_json::Value = serde_json::from_str(&text).map_err(unreadable)?;
        // Keys sorted in every build, as the spec loader sorts them.
        value.sort_all_objects();
        let mut spec: Exported = serde_json::from_value(value).map_err(unreadable)?;
        spec.package = package.to_string();
        spec.file = project_relative(&spec.file, root, workspace);
        out.push(spec);
    }
    Ok(out)
}

/// A `file!()` path (relative to the Cargo workspace, or absolute) made
/// relative to the project root, `/`-separated.
fn project_relative(file: &str, root: &Path, workspace: Option<&Path>) -> String {
    let absolute = match workspace {
        Some(ws) if Path::new(file).is_relative() => ws.join(file),
        _ => PathBuf::from(file),
    };
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    match canonical(&absolute).strip_prefix(canonical(root)) {
        Ok(rel) => rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/"),
        Err(_) => file.replace('\\', "/"),
    }
}
