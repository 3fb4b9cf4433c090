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
/// The extension of a `#[capability]` fn's output export (the runtime's
/// `OUTPUT_EXPORT_EXTENSION`; the generator does not depend on the runtime).
const OUTPUT_EXPORT_EXTENSION: &str = "output";
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
///
/// The tests are built once for the whole workspace, as
/// `cargo test --workspace` builds them (`--no-run`): the same targets and
/// the same feature resolution, so after the tests (as CI runs them) the
/// export compiles nothing new. `-p PACKAGE --lib` would resolve features
/// for that package alone, and `--lib` without dev-dependencies' targets,
/// and either rebuilds every dependency whose features differ.
/// Each package's test binary then runs its export tests. When the
/// workspace-wide build fails (another member does not compile), each
/// package is built alone, as `cargo test -p PACKAGE --lib`, whose errors
/// are its own.
pub(super) fn export(root: &Path, config: &Config) -> (Vec<Exported>, Vec<ExportFailure>) {
    let mut exported: Vec<Exported> = Vec::new();
    let mut failures = Vec::new();
    if config.code_first.packages.is_empty() {
        return (exported, failures);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = workspace_root(root, &cargo);
    let binaries = workspace_test_binaries(root, &cargo, &[]);
    exported.extend(export_from(root, config, &cargo, binaries.as_ref(), workspace.as_deref(), &mut failures));
    // Each `[check] features` set the packages declare a feature of is a
    // build of its own: a derive behind `#[cfg(feature = "…")]` exists only
    // there. A spec the default build exported is kept as it exported it.
    for features in feature_builds(config, binaries.as_ref()) {
        let mut failed = Vec::new();
        match workspace_test_binaries(root, &cargo, &features) {
            Some(built) => {
                for spec in export_from(root, config, &cargo, Some(&built), workspace.as_deref(), &mut failed) {
                    if !exported.iter().any(|e| (&e.module, &e.name, &e.rust_type) == (&spec.module, &spec.name, &spec.rust_type)) {
                        exported.push(spec);
                    }
                }
            }
            None => {
                let named = config.code_first.packages.iter().filter(|(package, _)| features.iter().any(|f| f.starts_with(&format!("{package}/"))));
                failed.extend(named.map(|(package, pos)| ExportFailure {
                    package: package.clone(),
                    pos: *pos,
                    message: format!("cannot export the code-first specs of `{package}`: `cargo test --workspace --no-run --features {}` failed (its errors are above)", features.join(",")),
                }));
            }
        }
        // A package one of its builds could not export comes from the
        // record whole, as when its default build fails.
        for failure in failed {
            if !failures.iter().any(|f: &ExportFailure| f.package == failure.package) {
                exported.retain(|e| e.package != failure.package);
                failures.push(failure);
            }
        }
    }
    (exported, failures)
}

/// Per package: its library test binary and directory.
type Binaries = std::collections::BTreeMap<String, (PathBuf, PathBuf)>;

/// The `--features` of each `[check] features` set that turns on a feature
/// a `[code_first]` package declares, as `package/feature`.
fn feature_builds(config: &Config, binaries: Option<&Binaries>) -> Vec<Vec<String>> {
    let Some(binaries) = binaries else { return Vec::new() };
    let mut builds: Vec<Vec<String>> = Vec::new();
    for set in config.check_features.iter().filter(|s| !s.is_empty()) {
        let mut features = Vec::new();
        for (package, _) in &config.code_first.packages {
            let Some((_, dir)) = binaries.get(package.as_str()) else { continue };
            let declared = crate::source::declared_features(dir).unwrap_or_default();
            features.extend(set.iter().filter(|f| declared.contains(*f)).map(|f| format!("{package}/{f}")));
        }
        if !features.is_empty() && !builds.contains(&features) {
            builds.push(features);
        }
    }
    builds
}

/// Run each `[code_first]` package's export tests from `binaries` (or, where
/// the workspace build failed, through `cargo test -p PACKAGE --lib`).
fn export_from(root: &Path, config: &Config, cargo: &std::ffi::OsStr, binaries: Option<&Binaries>, workspace: Option<&Path>, failures: &mut Vec<ExportFailure>) -> Vec<Exported> {
    let mut exported = Vec::new();
    for (n, (package, pos)) in config.code_first.packages.iter().enumerate() {
        let fail = |message: String| ExportFailure { package: package.clone(), pos: *pos, message };
        let dir = std::env::temp_dir().join(format!("capspec-export-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            failures.push(fail(format!("cannot create the export directory {}: {e}", dir.display())));
            continue;
        }
        let mut command = match binaries.and_then(|b| b.get(package.as_str())) {
            // The library's test binary, run as `cargo test` runs it: in the
            // package's directory.
            Some((executable, package_dir)) => {
                let mut command = Command::new(executable);
                command.current_dir(package_dir).args(["--quiet", EXPORT_TEST_PREFIX]);
                command
            }
            None => {
                let mut command = cargo_command(cargo);
                command.current_dir(root).args(["test", "--quiet", "--color", "never", "--message-format", "short", "-p", package, "--lib", "--"]).arg(EXPORT_TEST_PREFIX);
                command
            }
        };
        // The export is no test run: it records no coverage.
        let result = command.env(EXPORT_DIR_VAR, &dir).env_remove("CAPSPEC_COVERAGE_DIR").output();
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
            Ok(_) => match read_exports(&dir, package, root, workspace) {
                Ok(specs) => exported.extend(specs),
                Err(message) => failures.push(fail(message)),
            },
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    exported
}

/// A cargo command without the variables `cargo run` sets for the program
/// it runs (`CARGO_PKG_*`, `CARGO_MANIFEST_*`, …): `cargo xtask` runs
/// under `cargo run`, and a build script that reads one of them (ring's
/// does) would otherwise run again with the xtask's values, so the
/// project's next `cargo test` would rebuild it and all that depends on it.
fn cargo_command(cargo: &std::ffi::OsStr) -> Command {
    let mut command = Command::new(cargo);
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if is_set_by_cargo_run(name) {
            command.env_remove(name);
        }
    }
    command
}

/// Whether `cargo run` sets `name` for the program it runs (as opposed to a
/// variable that configures cargo, such as `CARGO_TARGET_DIR`).
fn is_set_by_cargo_run(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_MANIFEST_")
        || matches!(name, "CARGO_CRATE_NAME" | "CARGO_BIN_NAME" | "CARGO_PRIMARY_PACKAGE" | "CARGO_TARGET_TMPDIR" | "OUT_DIR")
}

/// `cargo test --workspace --no-run`: each package's library test binary
/// and directory, by package name; `None` when the build failed. Cargo's
/// progress and diagnostics go to this process's stderr as they come (a
/// first build of a project takes minutes, and says so line by line);
/// stdout carries its JSON messages, read here.
fn workspace_test_binaries(root: &Path, cargo: &std::ffi::OsStr, features: &[String]) -> Option<Binaries> {
    let mut command = cargo_command(cargo);
    command.current_dir(root).args(["test", "--workspace", "--no-run", "--message-format", "json-render-diagnostics"]);
    if !features.is_empty() {
        command.arg("--features").arg(features.join(","));
    }
    let out = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut binaries = Binaries::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let is_lib_test = message["reason"] == "compiler-artifact"
            && message["profile"]["test"] == true
            && message["target"]["kind"].as_array().is_some_and(|kinds| kinds.iter().any(|k| k == "lib" || k == "rlib"));
        let (Some(executable), Some(id), Some(manifest)) = (message["executable"].as_str(), message["package_id"].as_str(), message["manifest_path"].as_str()) else { continue };
        if let (true, Some(name), Some(dir)) = (is_lib_test, package_name(id), Path::new(manifest).parent()) {
            binaries.insert(name, (PathBuf::from(executable), dir.to_path_buf()));
        }
    }
    Some(binaries)
}

/// The package name in a cargo package ID: `…#name@version`, or
/// `…/name#version` when the name is the directory's.
fn package_name(id: &str) -> Option<String> {
    let (url, fragment) = id.split_once('#')?;
    match fragment.split_once('@') {
        Some((name, _)) => Some(name.to_string()),
        None => url.trim_end_matches('/').rsplit('/').next().map(str::to_string),
    }
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
    let out = cargo_command(cargo).current_dir(root).args(["locate-project", "--workspace", "--message-format", "plain"]).output().ok()?;
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
        // The `#[capability]` fn's export beside it: its return type's schema.
        if let Ok(text) = std::fs::read_to_string(file.with_extension(OUTPUT_EXPORT_EXTENSION)) {
            let mut output: serde_json::Value = serde_json::from_str(&text).map_err(unreadable)?;
            output.sort_all_objects();
            spec.output_schema = output.get("output_schema").filter(|s| !s.is_null()).cloned();
        }
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

#[cfg(test)]
mod tests {
    use super::{is_set_by_cargo_run, package_name};

    #[test]
    fn only_what_cargo_run_sets_is_left_out() {
        for name in ["CARGO_PKG_NAME", "CARGO_PKG_VERSION_MAJOR", "CARGO_MANIFEST_DIR", "CARGO_MANIFEST_PATH", "CARGO_PRIMARY_PACKAGE", "OUT_DIR"] {
            assert!(is_set_by_cargo_run(name), "{name}");
        }
        for name in ["CARGO_TARGET_DIR", "CARGO_HOME", "CARGO_INCREMENTAL", "CARGO_NET_OFFLINE", "CARGO_PROFILE_DEV_OPT_LEVEL", "CARGO"] {
            assert!(!is_set_by_cargo_run(name), "{name}");
        }
    }

    #[test]
    fn a_package_id_names_its_package() {
        assert_eq!(package_name("path+file:///work/examples/agent-host#0.1.0").as_deref(), Some("agent-host"));
        assert_eq!(package_name("path+file:///work/examples/host#agent-host@0.1.0").as_deref(), Some("agent-host"));
        assert_eq!(package_name("registry+https://github.com/rust-lang/crates.io-index#serde@1.0.228").as_deref(), Some("serde"));
    }
}
