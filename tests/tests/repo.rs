//! The repository checks itself: `cargo test` fails when the repo's own
//! specs, config or committed editor schema are out of date, like
//! rust-analyzer's codegen freshness tests.

use capspec_codegen::report::{self, Format};
use capspec_testkit::repo_root as workspace_root;

/// The freshness entry point a project calls from its own tests: plain
/// `cargo test` fails when a generated file drifted from the specs.
#[test]
fn repo_artifacts_are_fresh() {
    capspec_codegen::assert_fresh(workspace_root());
}

#[test]
fn assert_fresh_names_the_stale_file() {
    let dir = capspec_testkit::TempDir::new("assert-fresh");
    dir.write("capspec.toml", "specs = \"specs\"\n");
    dir.write("specs/x.yaml", "module: x\ndescription: X.\ncapabilities:\n  - { name: y, category: read, description: Y. }\n");
    capspec_codegen::sync(dir.path()).unwrap();
    std::fs::write(dir.path().join("guest/x.js"), "// edited\n").unwrap();
    let panic = std::panic::catch_unwind(|| capspec_codegen::assert_fresh(dir.path())).expect_err("stale file must fail");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("drift/stale") && message.contains("guest/x.js"), "{message}");
    let report = capspec_codegen::check(dir.path()).unwrap();
    assert_eq!(report.exit_code(), 1, "{}", report::render(&report, Format::Human));
}

#[test]
fn reference_catalog_is_broad() {
    // The reference catalog must exercise what later stages implement:
    // at least 5 modules, 25 capabilities and every category.
    let project = capspec_codegen::open(&workspace_root()).unwrap();
    let set = &project.loaded.set;
    assert!(set.modules.len() >= 5, "{} modules", set.modules.len());
    assert!(set.capabilities().count() >= 25, "{} capabilities", set.capabilities().count());
    for category in capspec_codegen::Category::ALL {
        assert!(set.capabilities().any(|(_, c)| c.category == category), "no {category} capability");
    }
}

#[test]
fn repo_specs_reference_the_editor_schema() {
    let specs = workspace_root().join("specs");
    for entry in std::fs::read_dir(specs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with("# yaml-language-server: $schema=../schema/capspec-spec.schema.json\n"),
                "{} lacks the editor schema line",
                path.display()
            );
        }
    }
}

/// Every `cargo install` a person is told to run (README, book, the CLI's
/// own messages) carries `--locked`: what they install is what CI built
/// from `Cargo.lock`, not whatever newer crates resolve that day.
#[test]
fn every_documented_install_is_locked() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() && !matches!(name.as_str(), "target" | "book" | "node_modules" | ".git" | "fixtures" | ".venv") {
                walk(&path, out);
            } else if name.ends_with(".md") || (name.ends_with(".rs") && path.components().any(|c| c.as_os_str() == "src")) {
                out.push(path);
            }
        }
    }
    let root = workspace_root();
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    let mut unlocked = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices("cargo install") {
                // The command runs to the end of its code span or line.
                let command = line[at..].split('`').next().unwrap_or_default();
                if !command.contains("--locked") {
                    unlocked.push(format!("{}:{}: {}", file.strip_prefix(&root).unwrap().display(), i + 1, command.trim()));
                }
            }
        }
    }
    assert!(files.len() > 50, "the walk found the docs and sources: {}", files.len());
    assert!(unlocked.is_empty(), "`cargo install` without `--locked`:\n{}", unlocked.join("\n"));
}

/// The process-wide rustls provider is chosen in one place
/// (`runtime/src/tls.rs`), and not by naming a provider module: rustls
/// deprecates its ring provider's constructor, and a deprecated call warns
/// every crate that depends on capspec.
#[test]
fn the_tls_provider_is_installed_in_one_place() {
    let dir = workspace_root().join("runtime/src");
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() { stack.push(path) } else if path.extension().is_some_and(|e| e == "rs") { files.push(path) }
        }
    }
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let relative = file.strip_prefix(&dir).unwrap().display().to_string();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if code.contains("rustls::crypto::") || code.contains("ClientConfig::builder") || code.contains("install_default()") {
                found.push(format!("{relative}:{}", i + 1));
            }
        }
    }
    assert!(files.len() > 40, "the walk found the runtime's sources: {}", files.len());
    assert_eq!(found, ["tls.rs:21"], "the rustls provider is chosen outside runtime/src/tls.rs");
}

/// `cargo xtask` builds from the units `cargo test --workspace` built: every
/// crate in the xtask's own graph (`cargo run -p xtask` resolves features
/// for that one package) has a feature set the workspace's test build has
/// too, so the gate after the tests compiles nothing new. A dependency
/// change that breaks this names what xtask/Cargo.toml must pin.
/// `cargo tree`'s lines (`name version [features]`) for these arguments.
fn cargo_tree(args: &[&str], format: &str) -> std::collections::BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .arg("tree")
        .args(args)
        .args(["--locked", "--prefix", "none", "--format", format])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo tree {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.trim_end_matches(" (*)").to_string()).filter(|l| !l.is_empty()).collect()
}

#[test]
fn every_workspace_of_the_repo_builds_from_its_committed_lock_file() {
    // benches/rmcp and fuzz are workspaces of their own over capspec's
    // crates: a dependency change here changes their lock files too, and a
    // stale one makes a fresh clone's build there resolve anew.
    // `cargo tree --locked` fails, naming the lock file, where it would
    // have to change.
    // Offline where the packages are here already; a fresh machine that has
    // never built that workspace fetches them first, and `--locked` fails
    // the fetch just as it fails the tree.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for manifest in ["Cargo.toml", "benches/rmcp/Cargo.toml", "fuzz/Cargo.toml"] {
        let offline = std::process::Command::new(&cargo).args(["tree", "--offline", "--locked", "--depth", "0", "--manifest-path", manifest]).current_dir(workspace_root()).output().unwrap();
        if !offline.status.success() {
            let fetched = std::process::Command::new(&cargo).args(["fetch", "--locked", "--manifest-path", manifest]).current_dir(workspace_root()).output().unwrap();
            assert!(fetched.status.success(), "cargo fetch --locked --manifest-path {manifest}: {}", String::from_utf8_lossy(&fetched.stderr));
        }
        assert!(!cargo_tree(&["--offline", "--depth", "0", "--manifest-path", manifest], "{p}").is_empty(), "{manifest}");
    }
}

#[test]
fn the_build_scripts_generator_is_the_test_builds() {
    // Each crate of the generator's graph, with the feature sets the test
    // build resolves it with: one set means one compiled crate for the test
    // build and for tests/build.rs; two, that it is compiled twice.
    let generator = cargo_tree(&["--package", "capspec-codegen", "--features", "policy", "--edges", "normal"], "{p}");
    let mut sets: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for line in cargo_tree(&["--workspace", "--edges", "normal,build,dev"], "{p} [{f}]") {
        let at = line.rfind(" [").unwrap();
        sets.entry(line[..at].to_string()).or_default().push(line[at + 1..].to_string());
    }
    assert!(generator.len() > 50, "the generator's graph: {}", generator.len());
    let twice: Vec<String> = generator.iter().filter(|p| sets[*p].len() > 1).map(|p| format!("  {p}: {}", sets[p].join(" and "))).collect();
    assert!(
        twice.is_empty(),
        "tests/build.rs's generator resolves these crates with other features than the test build's, so both are compiled twice: pin them in tests/Cargo.toml's build-dependencies (and xtask/Cargo.toml's)\n{}",
        twice.join("\n")
    );
}

#[test]
fn the_xtask_builds_from_the_test_builds_crates() {
    let tree = |args: &[&str]| cargo_tree(args, "{p} [{f}]");
    let xtask = tree(&["--package", "xtask", "--edges", "normal,build"]);
    let workspace = tree(&["--workspace", "--edges", "normal,build,dev"]);
    assert!(xtask.len() > 300, "the xtask's graph holds the CLI's: {}", xtask.len());
    let own: Vec<&String> = xtask.difference(&workspace).collect();
    assert!(
        own.is_empty(),
        "`cargo xtask` would build these crates with features the test build has not: pin the test build's features in xtask/Cargo.toml\n{}",
        own.iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
    );
}

/// Features follow use: a server of tools builds the MCP server and no
/// JavaScript engine (`McpHost::tools_surface`); code mode, the feature
/// `code-mode`, adds QuickJS.
#[test]
fn the_tools_surface_builds_no_javascript_engine() {
    let tree = |features: &str| cargo_tree(&["--package", "capspec", "--no-default-features", "--features", features, "--edges", "normal"], "{p}");
    let tools = tree("mcp,axum");
    assert!(tools.iter().any(|l| l.starts_with("rmcp ")), "the MCP server is rmcp's: {tools:?}");
    let engines: Vec<&String> = tools.iter().filter(|l| l.contains("quickjs")).collect();
    assert!(engines.is_empty(), "the tools surface builds a JavaScript engine: {engines:?}");
    assert!(tree("code-mode").iter().any(|l| l.starts_with("rquickjs ")), "code mode runs actions in QuickJS");
}
