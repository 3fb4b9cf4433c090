//! `cargo capspec init`: adopt capspec in an existing Cargo package or
//! workspace. It writes the config, an example module with its impl and a
//! test, the `xtask` crate and its alias, a freshness test, a CI workflow
//! and the dev-profile override, then runs `sync` so the project builds at
//! once. It never overwrites a file, an alias or an xtask: it adds entries
//! to manifests and says what it kept.

use std::path::{Path, PathBuf};

mod manifest;
mod source;
mod templates;

use manifest::*;
use source::*;
use templates::*;

/// What `init` did, path by path (relative to the package root).
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) written: Vec<String>,
    pub(crate) edited: Vec<String>,
    pub(crate) kept: Vec<String>,
    pub(crate) notes: Vec<String>,
    /// What the user should fix, though init could finish (a path the CI
    /// workflow cannot see).
    pub(crate) warnings: Vec<String>,
    /// Why the project does not resolve (`cargo metadata` failed) and which
    /// flag fixes it; init is then not done.
    pub(crate) unresolved: Option<String>,
    /// How the project's xtask runs the capspec commands.
    pub(crate) xtask: Xtask,
}

/// The project's `xtask` and how it runs the capspec commands.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Xtask {
    /// init wrote it: `capspec_cli::main()`, `cargo xtask check`.
    #[default]
    Written,
    /// The project's own, whose `main` is `capspec_cli::main()`.
    Capspec,
    /// The project's own, with tasks of its own; the capspec commands are
    /// its `capspec` task (`capspec_cli::run_subcommand()`).
    Subcommand,
    /// The project's own, not yet calling capspec: its `main` needs the
    /// line init printed.
    NeedsLine,
}

impl Xtask {
    /// What runs a capspec command, as a user types it: `{} check`.
    pub(crate) fn command(self) -> &'static str {
        match self {
            Xtask::Written | Xtask::Capspec => "cargo xtask",
            Xtask::Subcommand | Xtask::NeedsLine => "cargo xtask capspec",
        }
    }
}

/// The line an existing xtask's `main` starts with to run the capspec
/// commands as its `capspec` task.
/// The variable that turns on the runtime's coverage record (DESIGN §5).
const COVERAGE_VAR: &str = "CAPSPEC_COVERAGE_DIR";

pub(crate) const SUBCOMMAND_LINE: &str = "capspec_cli::run_subcommand();";

/// Write the xtask crate, or keep the project's own: then add `capspec-cli`
/// to its manifest and say how its `main` reaches the capspec commands
/// without losing its own tasks.
fn adopt_xtask(ws_root: &Path, up: &str, source: &Source, out: &mut Outcome) -> Result<Xtask, String> {
    let dir = ws_root.join("xtask");
    let cli = source.cli_dep(&dir);
    if !dir.exists() {
        write_new(ws_root, up, "xtask/Cargo.toml", &XTASK_MANIFEST.replace("{cli}", &cli), out)?;
        write_new(ws_root, up, "xtask/src/main.rs", XTASK_MAIN, out)?;
        return Ok(Xtask::Written);
    }
    let main_rs = dir.join("src/main.rs");
    let main = std::fs::read_to_string(&main_rs).unwrap_or_default();
    let xtask = if main.contains("capspec_cli::main()") {
        Xtask::Capspec
    } else if main.contains("capspec_cli::run_subcommand()") {
        Xtask::Subcommand
    } else {
        Xtask::NeedsLine
    };
    if xtask == Xtask::Capspec {
        out.kept.push(format!("{up}xtask (exists; its main is `capspec_cli::main()`)"));
    } else {
        out.kept.push(format!("{up}xtask (exists, with tasks of its own: the capspec commands become its `capspec` task)"));
    }
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| format!("cannot read `{}`: {e}", manifest.display()))?;
    let mut new_text = text.clone();
    let change = set_entry(&mut new_text, "dependencies", "capspec-cli", &cli, source.explicit);
    if write_if_changed(&manifest, &new_text)? {
        out.edited.push(format!("{up}xtask/Cargo.toml: {}", change.describe("dependencies", "capspec-cli")));
    }
    if xtask == Xtask::Capspec {
        return Ok(xtask);
    }
    if xtask == Xtask::NeedsLine {
        out.notes.push(format!(
            "to run the capspec commands as `cargo xtask capspec <command>` beside the xtask's own tasks, make this the first line of `fn main` in {up}xtask/src/main.rs:\n\n    {SUBCOMMAND_LINE}\n"
        ));
    }
    Ok(xtask)
}

/// Where capspec comes from, as the user asked.
pub(crate) enum SourceArg {
    /// No flag: the checkout the running binary was built from, else the registry.
    Default,
    /// `--capspec-path DIR`.
    Path(PathBuf),
    /// `--capspec-git URL [--rev REV]`.
    Git { url: String, rev: Option<String> },
}

/// The package at `root` adopts capspec. `Err` (exit 2) when `root` holds
/// no Cargo package or a file cannot be read or written.
pub(crate) fn init(root: &Path, source: SourceArg) -> Result<Outcome, String> {
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("no Cargo.toml in `{}` ({e}); run init in the Cargo package that will host the capabilities", root.display()))?;
    if !has_table(&text, "package") {
        return Err(format!(
            "`{}` holds no [package] (a virtual workspace); run init with --root pointing at the member that will host the capabilities",
            manifest.display()
        ));
    }
    let canonical = root.canonicalize().map_err(|e| format!("`{}`: {e}", root.display()))?;
    let root = canonical.as_path();
    let manifest = root.join("Cargo.toml");
    let mut out = Outcome::default();
    let repository = repository_of(root);
    let path_source = |dir: PathBuf, explicit: bool, out: &mut Outcome| {
        let inside = repository.as_ref().is_some_and(|r| dir.starts_with(r));
        if !inside {
            out.warnings.push(format!(
                "capspec's path dependencies point at `{}`, outside this project's repository: the CI workflow init writes cannot see it; run init again with --capspec-git URL [--rev REV], or keep the capspec checkout inside the repository",
                dir.display()
            ));
        }
        Source { kind: SourceKind::Path { dir, relative: inside }, explicit }
    };
    let source = match source {
        SourceArg::Path(dir) => {
            let dir = dir.canonicalize().map_err(|e| format!("--capspec-path `{}`: {e}", dir.display()))?;
            if !is_checkout(&dir) {
                return Err(format!("--capspec-path `{}` is not a capspec checkout (no runtime/, codegen/ and cli/ crates)", dir.display()));
            }
            path_source(dir, true, &mut out)
        }
        SourceArg::Git { url, rev } => Source { kind: SourceKind::Git { url, rev }, explicit: true },
        SourceArg::Default => match own_checkout() {
            // A clone of a published repository: its URL and commit, which a
            // teammate's machine and CI resolve as well as this one.
            Some(dir) => match published(&dir) {
                Some(clone) => {
                    out.notes.push(format!(
                        "capspec's dependencies are git = {}, rev = {}: the clone this cargo-capspec was built from (`{}`); a teammate and CI fetch that commit, so it must be pushed (--capspec-path DIR uses the clone's files instead)",
                        clone.url,
                        clone.rev,
                        dir.display()
                    ));
                    if clone.dirty {
                        out.warnings.push(format!("`{}` has changes that are not in commit {}: the git dependencies build the commit, not those changes", dir.display(), clone.rev));
                    }
                    Source { kind: SourceKind::Git { url: clone.url, rev: Some(clone.rev) }, explicit: false }
                }
                None => path_source(dir, false, &mut out),
            },
            None => Source { kind: SourceKind::Registry(concat!("=", env!("CARGO_PKG_VERSION"))), explicit: false },
        },
    };
    let workspace = root.ancestors().find(|dir| std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|t| has_table(&t, "workspace"))).map(Path::to_path_buf);

    // A project that has adopted capspec (its capspec.toml) or has modules
    // of its own gets no example: a re-run never writes it back.
    let adopted = root.join("capspec.toml").exists();
    let own_modules = has_spec_file(&root.join("specs"));
    let with_example = !adopted && !own_modules;
    // Files of the package.
    let files: [(&str, String); 6] = [
        ("capspec.toml", CONFIG.to_string()),
        ("specs/example.yaml", SPEC.to_string()),
        ("src/capabilities/mod.rs", "//! The implementations of the capabilities declared in `specs/`.\n\npub mod example;\n".to_string()),
        ("src/capabilities/example.rs", EXAMPLE_IMPL.to_string()),
        ("tests/capspec_fresh.rs", FRESHNESS_TEST.to_string()),
        ("src/lib.rs", if with_example { LIB.to_string() } else { LIB_WITHOUT_EXAMPLE.to_string() }),
    ];
    let example = ["specs/example.yaml", "src/capabilities/mod.rs", "src/capabilities/example.rs"];
    for (path, contents) in &files {
        if !with_example && example.contains(path) {
            if !root.join(path).exists() {
                let why = if adopted { "capspec.toml exists" } else { "specs/ has modules of its own" };
                out.notes.push(format!("skipped the example's {path}: {why}"));
            }
            continue;
        }
        write_new(root, "", path, contents, &mut out)?;
    }
    gitignore(root, &mut out)?;
    if out.kept.iter().any(|k| k.starts_with("src/lib.rs")) {
        out.notes.push(if with_example {
            "src/lib.rs exists and was kept: add `pub mod capabilities;` and `pub mod generated;` to it so the example compiles".into()
        } else {
            "src/lib.rs exists and was kept: add `pub mod generated;` to it (where `sync` writes the bindings) unless it has it".into()
        });
    }

    // The package's dependencies.
    let mut manifest_text = text;
    let mut added = Vec::new();
    for (table, krate, folder) in [("dependencies", "capspec", "runtime"), ("dev-dependencies", "capspec-codegen", "codegen")] {
        match set_entry(&mut manifest_text, table, krate, &source.dep(krate, folder, root), source.explicit) {
            Entry::Same => {}
            Entry::Kept(old) => out.kept.push(format!("Cargo.toml: [{table}] {old}")),
            change => added.push(change.describe(table, krate)),
        }
    }

    // The workspace: the package becomes one when it is in none.
    let ws_root = match &workspace {
        Some(dir) => dir.clone(),
        None => {
            manifest_text.push_str("\n[workspace]\nmembers = [\".\", \"xtask\"]\n");
            added.push("[workspace] members = [\".\", \"xtask\"]".into());
            root.to_path_buf()
        }
    };
    // Workspace files are shown relative to the package: `../` per level.
    let up = "../".repeat(root.strip_prefix(&ws_root).map_or(0, |p| p.components().count()));
    // Every edit of the package manifest happens before it is written once;
    // edits of the workspace manifest are reported against it.
    let same_manifest = ws_root == root;
    let mut ws_text = if same_manifest { manifest_text.clone() } else { std::fs::read_to_string(ws_root.join("Cargo.toml")).map_err(|e| e.to_string())? };
    let mut ws_added = Vec::new();
    out.xtask = adopt_xtask(&ws_root, &up, &source, &mut out)?;
    if out.xtask == Xtask::Written && workspace.is_some() && add_member(&mut ws_text, "xtask") {
        ws_added.push("[workspace] members += \"xtask\"".to_string());
    }
    // An override on a crate the project already builds (syn, serde_json in
    // an rmcp server) rebuilds it and everything above it at the project's
    // next `cargo test`: those are left to the project (DESIGN §5).
    let built = built_crates(&ws_root);
    let left_out: Vec<&str> = crate::DEV_OPTIMIZED.iter().copied().filter(|k| built.contains(*k)).collect();
    if !left_out.is_empty() {
        out.notes.push(format!(
            "no dev-profile override for {}: the project builds them already, and an override would rebuild them and every crate above them; for a large catalog whose `sync` is slow, add `[profile.dev.package.NAME] opt-level = 3` by hand",
            left_out.join(", ")
        ));
    }
    for krate in crate::DEV_OPTIMIZED.iter().filter(|k| !left_out.contains(k)) {
        let header = format!("[profile.dev.package.{krate}]");
        if !ws_text.contains(&header) {
            ws_text.push_str(&format!("\n{header}\nopt-level = 3\n"));
            if *krate == "capspec-codegen" {
                ws_added.push("dev-profile override: the generator and the crates it spends its time in at opt-level 3".into());
            }
        }
    }
    if same_manifest {
        manifest_text = ws_text;
        added.extend(ws_added);
    } else if write_if_changed(&ws_root.join("Cargo.toml"), &ws_text)? {
        out.edited.push(format!("{up}Cargo.toml: {}", ws_added.join(", ")));
    }
    if !added.is_empty() && write_if_changed(&manifest, &manifest_text)? {
        out.edited.push(format!("Cargo.toml: {}", added.join(", ")));
    }

    // The `cargo xtask` alias.
    let config = ws_root.join(".cargo/config.toml");
    let config_text = std::fs::read_to_string(&config).unwrap_or_default();
    let config_rel = format!("{up}.cargo/config.toml");
    if config_text.lines().any(|l| l.trim_start().starts_with("xtask")) {
        out.kept.push(format!("{config_rel} (it already has an `xtask` alias)"));
    } else {
        let mut new_text = config_text.clone();
        add_entry(&mut new_text, "alias", "xtask", "xtask = \"run --quiet --package xtask --\"");
        write_if_changed(&config, &new_text)?;
        if config_text.is_empty() { out.written.push(config_rel.clone()) } else { out.edited.push(format!("{config_rel}: the `xtask` alias")) }
    }
    // Where `cargo test` records which capabilities each test ran (the
    // runtime writes it; `check` reads `<root>/.capspec/coverage`).
    let config_text = std::fs::read_to_string(&config).unwrap_or_default();
    if config_text.lines().any(|l| l.trim_start().starts_with(COVERAGE_VAR)) {
        out.kept.push(format!("{config_rel} (it already sets {COVERAGE_VAR})"));
    } else {
        let record = root.strip_prefix(&ws_root).unwrap_or(Path::new("")).join(".capspec/coverage");
        let record = record.to_string_lossy().replace('\\', "/");
        let mut new_text = config_text.clone();
        add_entry(&mut new_text, "env", COVERAGE_VAR, &format!("{COVERAGE_VAR} = {{ value = {}, relative = true, force = true }}", toml_string(&record)));
        write_if_changed(&config, &new_text)?;
        out.edited.push(format!("{config_rel}: [env] {COVERAGE_VAR}, where `cargo test` records which capabilities each test ran"));
    }
    write_new(&ws_root, &up, ".github/workflows/capspec.yml", &WORKFLOW.replace("{xtask}", out.xtask.command()), &mut out)?;

    // Generate the bindings now, so the package builds right away.
    match capspec_codegen::sync(root) {
        Ok(outcome) if outcome.findings.is_empty() => {
            out.notes.push(format!("sync: {} generated files written", outcome.written.len()));
        }
        Ok(_) => out.notes.push(format!("the specs have errors; run `{} check` to see them", out.xtask.command())),
        Err(e) => out.notes.push(format!("sync could not run: {e}")),
    }
    // Done only when cargo resolves what was written.
    if let Err(failure) = resolve(root) {
        out.unresolved = Some(format!("the project does not resolve: {failure}\n{}", source.fix()));
    }
    Ok(out)
}

/// The crates the project builds today (`cargo tree` on its lockfile, with
/// nothing fetched and nothing written); none when cargo cannot tell.
fn built_crates(ws_root: &Path) -> std::collections::BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["tree", "--frozen", "--prefix", "none", "--format", "{p}", "--manifest-path"])
        .arg(ws_root.join("Cargo.toml"))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.split_whitespace().next()).map(str::to_owned).collect(),
        _ => Default::default(),
    }
}

/// `cargo metadata` on the package: every dependency found, as the first
/// build will need them.
fn resolve(root: &Path) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command.args(["metadata", "--format-version", "1", "--manifest-path"]).arg(root.join("Cargo.toml"));
    // For this machine's platform only: cargo then fetches only the crates
    // a build here needs (not, say, Windows-only ones).
    if let Some(host) = host_triple() {
        command.args(["--filter-platform", &host]);
    }
    let output = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cargo metadata could not run ({e})"))?;
    if output.status.success() {
        return Ok(());
    }
    // cargo's own words, from its first error on.
    let stderr = String::from_utf8_lossy(&output.stderr);
    let from_error: Vec<&str> = stderr.lines().skip_while(|l| !l.starts_with("error")).filter(|l| !l.trim().is_empty()).take(6).collect();
    let said = if from_error.is_empty() { stderr.trim().to_string() } else { from_error.join("\n") };
    Err(format!("`cargo metadata` failed:\n{said}"))
}

/// The host's target triple, as `rustc -vV` names it.
fn host_triple() -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = std::process::Command::new(rustc).arg("-vV").stdin(std::process::Stdio::null()).output().ok()?;
    String::from_utf8(output.stdout).ok()?.lines().find_map(|l| l.strip_prefix("host: ")).map(str::to_string)
}

/// Add `/.capspec/` (where `serve` keeps its store by default) to the
/// package's `.gitignore`, unless it is there.
fn gitignore(root: &Path, out: &mut Outcome) -> Result<(), String> {
    let path = root.join(".gitignore");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if text.lines().any(|l| matches!(l.trim(), ".capspec" | ".capspec/" | "/.capspec" | "/.capspec/")) {
        return Ok(());
    }
    let sep = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
    std::fs::write(&path, format!("{text}{sep}/.capspec/\n")).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    match text.is_empty() {
        true => out.written.push(".gitignore".into()),
        false => out.edited.push(".gitignore (+ /.capspec/, where `serve` keeps its store)".into()),
    }
    Ok(())
}

/// Write `path` under `base` unless it exists (then it is kept); it is
/// reported as `shown` + `path` (relative to the package).
fn write_new(base: &Path, shown: &str, path: &str, contents: &str, out: &mut Outcome) -> Result<(), String> {
    let full = base.join(path);
    if full.exists() {
        out.kept.push(format!("{shown}{path} (exists)"));
        return Ok(());
    }
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    }
    std::fs::write(&full, contents).map_err(|e| format!("cannot write `{}`: {e}", full.display()))?;
    out.written.push(format!("{shown}{path}"));
    Ok(())
}

/// Whether `dir` holds a spec file (`*.yaml`, `*.yml`) at any depth.
fn has_spec_file(dir: &Path) -> bool {
    std::fs::read_dir(dir).into_iter().flatten().flatten().any(|entry| {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            has_spec_file(&path)
        } else {
            path.extension().is_some_and(|x| x == "yaml" || x == "yml")
        }
    })
}

fn write_if_changed(path: &Path, text: &str) -> Result<bool, String> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git").arg("-C").arg(dir).args(args).env("GIT_CONFIG_NOSYSTEM", "1").env("HOME", dir).output().unwrap();
        assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
    }

    /// A default init from a clone of a published repository depends on its
    /// URL and commit; a clone of a path, or no remote, gives no such source.
    #[test]
    fn a_published_clone_is_its_url_and_commit() {
        let dir = std::env::temp_dir().join(format!("capspec-init-clone-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for krate in ["runtime", "codegen", "cli"] {
            std::fs::create_dir_all(dir.join(krate)).unwrap();
            std::fs::write(dir.join(krate).join("Cargo.toml"), "[package]\n").unwrap();
        }
        git(&dir, &["init", "--quiet"]);
        git(&dir, &["add", "."]);
        git(&dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "c"]);
        assert_eq!(published(&dir), None, "no remote");
        git(&dir, &["remote", "add", "origin", "/srv/capspec.git"]);
        assert_eq!(published(&dir), None, "a path remote");
        git(&dir, &["remote", "set-url", "origin", "https://example.com/capspec.git"]);
        let rev = String::from_utf8(std::process::Command::new("git").arg("-C").arg(&dir).args(["rev-parse", "HEAD"]).output().unwrap().stdout).unwrap().trim().to_string();
        assert_eq!(published(&dir), Some(Published { url: "https://example.com/capspec.git".into(), rev: rev.clone(), dirty: false }));
        std::fs::write(dir.join("cli/Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        assert_eq!(published(&dir).map(|c| c.dirty), Some(true));
        assert!(is_network_url("git@github.com:org/capspec.git") && is_network_url("ssh://host/capspec") && !is_network_url("file:///srv/capspec") && !is_network_url("C:/capspec") && !is_network_url("../capspec"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A new source rewrites only the source keys of an entry: its
    /// features, default-features and optional stay, in an inline table or
    /// a `[dependencies.capspec]` table; a same source changes nothing.
    #[test]
    fn a_new_source_keeps_the_entrys_other_keys() {
        let mut text = "[package]\nname = \"a\"\n\n[dependencies]\n# ours\ncapspec = { path = \"../capspec/runtime\", default-features = false, features = [\"mcp\"], optional = true }\nserde = \"1\"\n\n[dev-dependencies.capspec-codegen]\nversion = \"0.1\"\nfeatures = [\"x\"]\n".to_string();
        let git = "capspec = { git = \"https://example.com/capspec.git\", rev = \"abc\" }";
        let change = set_entry(&mut text, "dependencies", "capspec", git, true);
        assert!(matches!(&change, Entry::Replaced(old) if old.starts_with("capspec = { path = \"../capspec/runtime\"")), "{}", change.describe("dependencies", "capspec"));
        let codegen = "capspec-codegen = { git = \"https://example.com/capspec.git\", rev = \"abc\" }";
        assert!(matches!(set_entry(&mut text, "dev-dependencies", "capspec-codegen", codegen, true), Entry::Replaced(_)));
        assert_eq!(
            text,
            "[package]\nname = \"a\"\n\n[dependencies]\n# ours\ncapspec = { git = \"https://example.com/capspec.git\", rev = \"abc\", default-features = false, features = [\"mcp\"], optional = true }\nserde = \"1\"\n\n[dev-dependencies.capspec-codegen]\ngit = \"https://example.com/capspec.git\"\nrev = \"abc\"\nfeatures = [\"x\"]\n"
        );
        assert!(matches!(set_entry(&mut text, "dependencies", "capspec", git, true), Entry::Same));
        assert!(matches!(set_entry(&mut text, "dependencies", "capspec", "capspec = \"=0.1.0\"", false), Entry::Kept(_)));
    }
}
