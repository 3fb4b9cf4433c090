//! `cargo capspec init`: adopt capspec in an existing Cargo package or
//! workspace. It writes the config, an example module with its impl and a
//! test, the `xtask` crate and its alias, a freshness test, a CI workflow
//! and the dev-profile override, then runs `sync` so the project builds at
//! once. It never overwrites a file, an alias or an xtask: it adds entries
//! to manifests and says what it kept.

use std::path::{Path, PathBuf};

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

/// Where the capspec crates come from in the manifests init writes.
struct Source {
    kind: SourceKind,
    /// Named by a flag: existing capspec entries are rewritten to it.
    explicit: bool,
}

enum SourceKind {
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
fn own_checkout() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.canonicalize().ok()?;
    is_checkout(&dir).then_some(dir)
}

fn is_checkout(dir: &Path) -> bool {
    ["runtime", "codegen", "cli"].iter().all(|c| dir.join(c).join("Cargo.toml").is_file())
}

/// A capspec checkout that is a git clone of a repository others can fetch.
#[derive(Debug, PartialEq)]
struct Published {
    /// The remote's URL (`origin`, else the first remote).
    url: String,
    /// The commit checked out.
    rev: String,
    /// The work tree differs from that commit.
    dirty: bool,
}

/// `dir` as a published clone: `None` when it is not a git work tree, has no
/// remote, or its remote is a path on this machine (which a teammate's
/// machine and CI cannot fetch either).
fn published(dir: &Path) -> Option<Published> {
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
fn is_network_url(url: &str) -> bool {
    if let Some((scheme, _)) = url.split_once("://") {
        return matches!(scheme, "https" | "http" | "ssh" | "git" | "git+ssh" | "ssh+git");
    }
    // scp-like: a host before the first `:`, and no `/` before it.
    url.split_once(':').is_some_and(|(host, _)| !host.is_empty() && !host.contains('/') && host.len() > 1)
}

/// The repository `dir` lies in: the nearest ancestor holding `.git`.
fn repository_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

/// `to` relative to the directory `from` (both absolute and canonical).
fn relative_path(from: &Path, to: &Path) -> PathBuf {
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
    fn dep(&self, krate: &str, folder: &str, manifest_dir: &Path) -> String {
        format!("{krate} = {}", self.spec(folder, manifest_dir, None))
    }

    /// `capspec-cli` as an xtask depends on it: without the feature `live`
    /// (the MCP client `--upstream` needs), so the xtask CI builds stays small.
    fn cli_dep(&self, xtask_dir: &Path) -> String {
        format!("capspec-cli = {}", self.spec("cli", xtask_dir, Some("default-features = false, features = [\"mimalloc\"]")))
    }

    /// The value of a dependency entry: a version string, or an inline table.
    fn spec(&self, folder: &str, manifest_dir: &Path, extra: Option<&str>) -> String {
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
    fn fix(&self) -> &'static str {
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
fn toml_string(text: &str) -> String {
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

/// What [`set_entry`] did to a dependency entry.
enum Entry {
    /// It was absent and is added.
    Added,
    /// It was there with another value (the old line), and is rewritten.
    Replaced(String),
    /// It was there with another value (the old line), and is kept: no
    /// source flag asked for a change.
    Kept(String),
    /// It was there, unchanged.
    Same,
}

impl Entry {
    fn describe(&self, table: &str, key: &str) -> String {
        match self {
            Entry::Added | Entry::Same => format!("[{table}] {key}"),
            Entry::Replaced(old) | Entry::Kept(old) => format!("[{table}] {key}: was `{}`", old.trim()),
        }
    }
}

/// The keys of a dependency entry that say where it comes from: a new
/// source replaces these and keeps every other key (`features`,
/// `default-features`, `optional`, `package`, …).
const SOURCE_KEYS: [&str; 7] = ["version", "path", "git", "rev", "branch", "tag", "registry"];

/// Set `key`'s entry in `[table]` to `line` (`key = value`): add it when
/// absent; when its source differs, rewrite the source keys if `rewrite`
/// (keeping the entry's other keys), else keep it. Nothing else in the
/// manifest changes.
fn set_entry(text: &mut String, table: &str, key: &str, line: &str, rewrite: bool) -> Entry {
    let value = line.split_once('=').map_or(line, |(_, v)| v).trim();
    let new: toml_edit::Value = value.parse().expect("init writes valid TOML values");
    // A manifest toml_edit cannot read, cargo cannot either: add the entry
    // line by line and let `cargo metadata` say what is wrong.
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
        add_entry(text, table, key, line);
        return Entry::Added;
    };
    let Some(item) = doc.get_mut(table).and_then(|t| t.get_mut(key)).filter(|i| !i.is_none()) else {
        add_entry(text, table, key, line);
        return Entry::Added;
    };
    let old = shown(key, item);
    let merged = with_source(item, &new);
    if entries(item) == entries(&merged) {
        return Entry::Same;
    }
    if !rewrite {
        return Entry::Kept(old);
    }
    *item = merged;
    *text = doc.to_string();
    Entry::Replaced(old)
}

/// `item` with its source keys replaced by `new`'s. An entry that is only
/// a version string becomes `new` as it is.
fn with_source(item: &toml_edit::Item, new: &toml_edit::Value) -> toml_edit::Item {
    let location = |v: &toml_edit::Value| -> Vec<(String, toml_edit::Value)> {
        match v {
            toml_edit::Value::InlineTable(t) => t.iter().filter(|(k, _)| SOURCE_KEYS.contains(k)).map(|(k, v)| (k.to_string(), v.clone())).collect(),
            other => vec![("version".to_string(), other.clone())],
        }
    };
    match item {
        toml_edit::Item::Value(toml_edit::Value::InlineTable(old)) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in location(new) {
                table.insert(&k, v.decorated(" ", " "));
            }
            for (k, v) in old.iter().filter(|(k, _)| !SOURCE_KEYS.contains(k)) {
                table.insert(k, v.clone().decorated(" ", " "));
            }
            table.fmt();
            toml_edit::Item::Value(toml_edit::Value::InlineTable(table).decorated(" ", ""))
        }
        toml_edit::Item::Table(old) => {
            let mut table = old.clone();
            table.retain(|k, _| !SOURCE_KEYS.contains(&k));
            let kept: Vec<(String, toml_edit::Item)> = table.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
            table.clear();
            for (k, v) in location(new) {
                table.insert(&k, toml_edit::value(v.decorated(" ", "")));
            }
            for (k, v) in kept {
                table.insert(&k, v);
            }
            toml_edit::Item::Table(table)
        }
        _ => toml_edit::Item::Value(new.clone().decorated(" ", "")),
    }
}

/// An entry's keys and values as text, ignoring layout: what decides
/// whether a rewrite changes anything.
fn entries(item: &toml_edit::Item) -> Vec<(String, String)> {
    let flat = |v: &toml_edit::Value| v.clone().decorated("", "").to_string();
    let mut out: Vec<(String, String)> = match item {
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => t.iter().map(|(k, v)| (k.to_string(), flat(v))).collect(),
        toml_edit::Item::Table(t) => t.iter().filter_map(|(k, v)| v.as_value().map(|v| (k.to_string(), flat(v)))).collect(),
        toml_edit::Item::Value(v) => vec![("version".to_string(), flat(v))],
        _ => Vec::new(),
    };
    out.sort();
    out
}

/// An entry as one line, `key = value`, as a report shows it.
fn shown(key: &str, item: &toml_edit::Item) -> String {
    match item {
        toml_edit::Item::Table(t) => {
            let inline = t.clone().into_inline_table();
            format!("{key} = {}", toml_edit::Value::InlineTable(inline).decorated("", ""))
        }
        toml_edit::Item::Value(v) => format!("{key} = {}", v.clone().decorated("", "")),
        other => format!("{key} = {}", other.to_string().trim()),
    }
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

/// Whether a TOML text has the table `[name]` (a header line).
fn has_table(text: &str, name: &str) -> bool {
    text.lines().any(|l| l.trim() == format!("[{name}]"))
}

/// Add `line` (the entry for `key`) to `[table]`, creating the table at the
/// end; `false` when the table already has `key`.
fn add_entry(text: &mut String, table: &str, key: &str, line: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    if entry_line(&lines, table, key).is_some() {
        return false;
    }
    match table_span(&lines, table) {
        Some((at, _)) => {
            let mut new: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            new.insert(at + 1, line.to_string());
            *text = new.join("\n") + "\n";
        }
        None => {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("[{table}]\n{line}\n"));
        }
    }
    true
}

/// `[table]`'s header line, and where its entries end.
fn table_span(lines: &[&str], table: &str) -> Option<(usize, usize)> {
    let header = format!("[{table}]");
    let at = lines.iter().position(|l| l.trim() == header)?;
    let end = lines[at + 1..].iter().position(|l| l.trim_start().starts_with('[')).map_or(lines.len(), |i| at + 1 + i);
    Some((at, end))
}

/// The line of `key`'s entry in `[table]`.
fn entry_line(lines: &[&str], table: &str, key: &str) -> Option<usize> {
    let (at, end) = table_span(lines, table)?;
    (at + 1..end).find(|&i| lines[i].split('=').next().is_some_and(|k| k.trim() == key))
}

/// Add `member` to `[workspace] members`; `false` when it is there already
/// or the workspace lists no members (then cargo finds none to add to).
fn add_member(text: &mut String, member: &str) -> bool {
    let quoted = format!("\"{member}\"");
    let Some(start) = text.find("members") else { return false };
    let Some(open) = text[start..].find('[').map(|i| start + i) else { return false };
    let Some(close) = text[open..].find(']').map(|i| open + i) else { return false };
    if text[open..close].contains(&quoted) {
        return false;
    }
    let inside = text[open + 1..close].trim();
    let insert = if inside.is_empty() { quoted } else { format!("{quoted}, ") };
    text.insert_str(open + 1, &insert);
    true
}

const CONFIG: &str = r#"# capspec: this package's capabilities are declared in specs/; `cargo xtask sync`
# generates the bindings, facades and catalog, `cargo xtask check` fails on drift.
specs = "specs"

[generate]
rust = "src/generated"
js = "guest"
catalog = "catalog"

[coverage]
sources = ["src"]
tests = ["src", "tests"]
"#;

const SPEC: &str = r#"module: example
description: An example module written by `cargo capspec init`; replace it with your own.
capabilities:
  - name: read_greeting
    category: read
    description: Greet someone by name with the saved greeting.
    input:
      type: object
      properties:
        name: { type: string, minLength: 1, description: Who to greet. }
      required: [name]
    output:
      type: object
      properties:
        text: { type: string }
      required: [text]
  - name: save_greeting
    category: write
    description: Save the greeting every later read uses.
    input:
      type: object
      properties:
        template: { type: string, minLength: 1, description: "The greeting; `{name}` stands for the name." }
      required: [template]
"#;

const LIB: &str = r#"//! This package's capabilities: declared in `specs/`, generated into
//! `src/generated` by `cargo xtask sync`, implemented in `src/capabilities`.

pub mod capabilities;
pub mod generated;
"#;

/// `src/lib.rs` beside a project's own modules (no example).
const LIB_WITHOUT_EXAMPLE: &str = r#"//! This package's capabilities: declared in `specs/`, generated into
//! `src/generated` by `cargo xtask sync`.

pub mod generated;
"#;

const EXAMPLE_IMPL: &str = r##"//! The example capabilities of `specs/example.yaml`. Each `#[capability]` fn
//! implements one spec; `capspec::Registry::new(generated::MODULES)` finds
//! them, and `invoke` is the one way they are called.

use std::sync::Mutex;

use capspec::{CapResult, Run, capability};

use crate::generated::example;

/// The saved greeting; `None` until `save_greeting` runs.
static TEMPLATE: Mutex<Option<String>> = Mutex::new(None);

#[capability(example::read_greeting)]
async fn read_greeting(_run: &Run, args: example::read_greeting::Args) -> CapResult<example::read_greeting::Output> {
    let template = TEMPLATE.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_else(|| "Hello, {name}!".into());
    Ok(example::read_greeting::Output { text: template.replace("{name}", &args.name) })
}

#[capability(example::save_greeting)]
async fn save_greeting(_run: &Run, args: example::save_greeting::Args) -> CapResult<()> {
    *TEMPLATE.lock().unwrap_or_else(|e| e.into_inner()) = Some(args.template);
    Ok(())
}

#[cfg(test)]
mod tests {
    use capspec::testing::block_on;
    use capspec::{Gate, Mode, Registry, Run};

    use crate::generated;

    /// Through `invoke`, as a host calls them: a read runs in the default
    /// mode; a write asks first, and with nobody to ask it is denied; in
    /// the accept-edits mode it runs. (`check` counts a capability as
    /// tested when a test's call reached its implementation.)
    #[test]
    fn read_greeting_runs_and_save_greeting_is_gated() {
        let registry = Registry::new(generated::MODULES).expect("every capability has an impl");
        let session = registry.mount_all();
        // A tool call as a model's tool loop sends it: name and arguments.
        let call = |mode: Mode, name: &str, arguments: &str| {
            let run = Run::new(Gate::headless(mode, "example test"));
            block_on(session.invoke_json(&run, &format!(r#"{{"name": "{name}", "arguments": {arguments}}}"#)))
        };
        assert_eq!(call(Mode::Default, "read_greeting", r#"{"name": "Ada"}"#), r#"{"result":{"text":"Hello, Ada!"}}"#);
        let denied = call(Mode::Default, "save_greeting", r#"{"template": "Hi, {name}."}"#);
        assert!(denied.contains(r#""error":"permission_denied""#), "{denied}");
        assert_eq!(call(Mode::AcceptEdits, "save_greeting", r#"{"template": "Hi, {name}."}"#), r#"{"result":null}"#);
        assert_eq!(call(Mode::Default, "read_greeting", r#"{"name": "Ada"}"#), r#"{"result":{"text":"Hi, Ada."}}"#);
    }
}
"##;

const FRESHNESS_TEST: &str = r#"//! `cargo test` fails when a generated file drifts from `specs/`: run
//! `cargo xtask sync` and commit the result.

#[test]
fn generated_files_are_fresh() {
    capspec_codegen::assert_fresh(env!("CARGO_MANIFEST_DIR"));
}
"#;

const XTASK_MANIFEST: &str = r#"[package]
name = "xtask"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
{cli}
"#;

const XTASK_MAIN: &str = r#"//! `cargo xtask`: the capspec command line (sync, check, scaffold, coverage, import).

fn main() -> std::process::ExitCode {
    capspec_cli::main()
}
"#;

const WORKFLOW: &str = r#"# Written by `cargo capspec init`: fail on drift, unimplemented or untested
# capabilities, and show the findings in pull requests and code scanning.
name: capspec
on: [push, pull_request]
permissions:
  contents: read
  security-events: write
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - uses: dtolnay/rust-toolchain@stable
      # The tests first: `check` counts a capability as tested only when
      # this run of them called it (the coverage record in .capspec/).
      - run: cargo test --workspace
      - name: capspec check
        run: {xtask} check --format github
      - name: capspec check (SARIF)
        if: always()
        run: {xtask} check --format sarif > capspec.sarif || true
      - uses: github/codeql-action/upload-sarif@v3
        if: always()
        with:
          sarif_file: capspec.sarif
"#;

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
