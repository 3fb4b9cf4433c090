//! `cargo capspec init` as a new user runs it: `cargo new` in a temp dir
//! outside this repo, `init` with path dependencies on this checkout, then
//! the new project's own `cargo xtask sync`, `cargo xtask check` and `cargo
//! test` — which pass — and a reclassified capability, which `check` refuses;
//! then the shapes real projects have: a member of a workspace, a project
//! whose xtask has tasks of its own, and two adopting members.
//!
//! The new project reuses this workspace's `Cargo.lock`, offline, and the
//! target directory the other end-to-end tests build into.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use capspec_testkit::{TempDir, repo_root, text};

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TARGET_DIR", repo_root().join("target/code-first-e2e"))
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .expect("the command runs")
}

fn init(dir: &Path, extra: &[&str]) -> Output {
    let checkout = repo_root().to_string_lossy().into_owned();
    let mut args = vec!["capspec", "init", "--capspec-path", checkout.as_str()];
    args.extend(extra);
    run(dir, env!("CARGO_BIN_EXE_cargo-capspec"), &args)
}

/// Every file under `dir` (but `target/`) and its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    stack.push(path);
                }
            } else {
                out.insert(path.strip_prefix(dir).unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_new_cargo_project_adopts_capspec_in_one_command() {
    let tmp = TempDir::new("init");
    let out = run(tmp.path(), &cargo(), &["new", "--quiet", "--vcs", "none", "demo_host"]);
    assert!(out.status.success(), "{}", text(&out));
    let project = tmp.path().join("demo_host");
    std::fs::copy(repo_root().join("Cargo.lock"), project.join("Cargo.lock")).unwrap();

    let out = init(&project, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    for path in ["capspec.toml", "specs/example.yaml", "src/capabilities/example.rs", "tests/capspec_fresh.rs", "xtask/src/main.rs", ".cargo/config.toml", ".github/workflows/capspec.yml"] {
        assert!(said.contains(&format!("wrote    {path}\n")), "{path} not written:\n{said}");
    }
    // `cargo new --vcs none` writes no .gitignore: init writes one keeping
    // the serve store (`serve`'s default `.capspec/store.db`) out of git.
    assert!(said.contains("wrote    .gitignore\n"), "{said}");
    assert_eq!(std::fs::read_to_string(project.join(".gitignore")).unwrap(), "/.capspec/\n");
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("[workspace]\nmembers = [\".\", \"xtask\"]"), "{manifest}");
    // The same dev-profile overrides as this repo's (`cargo xtask` runs in
    // the dev profile; these are the crates the generator spends its time in).
    let ours = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    for krate in capspec_cli::DEV_OPTIMIZED {
        let section = format!("[profile.dev.package.{krate}]\nopt-level = 3");
        assert!(manifest.contains(&section) && ours.contains(&section), "{section}: new project or this repo lacks it\n{manifest}");
    }
    // And no other: this repo optimises exactly what it tells projects to.
    let overridden: Vec<&str> = ours.lines().filter_map(|l| l.strip_prefix("[profile.dev.package.")?.strip_suffix(']')).filter(|k| *k != "\"*\"").collect();
    assert_eq!(overridden, capspec_cli::DEV_OPTIMIZED, "this repo's dev-profile overrides");

    // The new project's own commands pass right away, the tests before
    // the gate: `check` before any `cargo test` knows of no test.
    let sync = run(&project, &cargo(), &["xtask", "sync"]);
    assert_eq!(sync.status.code(), Some(0), "{}", text(&sync));
    assert!(String::from_utf8_lossy(&sync.stdout).contains("sync: 0 written, 0 removed"), "init already synced: {}", text(&sync));
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("error[coverage/stale]: no coverage record"), "{}", text(&check));
    let test = run(&project, &cargo(), &["test", "--workspace"]);
    assert!(test.status.success(), "{}", text(&test));
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
    // The coverage table names the test the runtime saw run each one.
    let table = run(&project, &cargo(), &["xtask", "coverage"]);
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    for capability in ["example.read_greeting", "example.save_greeting"] {
        let row = table.lines().find(|l| l.starts_with(&format!("| `{capability}`"))).unwrap_or_else(|| panic!("{table}"));
        assert!(row.contains("`capabilities::example::tests::read_greeting_runs_and_save_greeting_is_gated (demo_host)`"), "{table}");
    }
    // The xtask carries no MCP client or server: the commands that start
    // MCP servers say how to get them.
    for args in [&["xtask", "serve"][..], &["xtask", "check", "--upstream"]] {
        let out = run(&project, &cargo(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("features = [\"live\"]"), "{args:?}: {}", text(&out));
    }
    let test = run(&project, &cargo(), &["test", "--workspace"]);
    assert!(test.status.success(), "{}", text(&test));
    let tested = text(&test);
    assert!(tested.contains("read_greeting_runs_and_save_greeting_is_gated ... ok") && tested.contains("generated_files_are_fresh ... ok"), "{tested}");

    // A second init keeps everything and changes nothing.
    let before = tree(&project);
    let again = init(&project, &[]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(!String::from_utf8_lossy(&again.stdout).contains("wrote "), "{}", text(&again));
    assert_eq!(tree(&project), before, "a second init changes no file");

    // Policies in a project whose xtask was built without the `policy`
    // feature (init's is): one finding, at the policy, saying how to turn
    // it on. Taken out again afterwards.
    let config = std::fs::read_to_string(project.join("capspec.toml")).unwrap();
    std::fs::write(project.join("capspec.toml"), format!("{config}\n[policy]\ndir = \"policies\"\n")).unwrap();
    std::fs::create_dir_all(project.join("policies")).unwrap();
    std::fs::write(project.join("policies/guard.cedar"), "forbid (principal, action, resource);\n").unwrap();
    assert_eq!(run(&project, &cargo(), &["xtask", "sync"]).status.code(), Some(0));
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    let said = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(said.contains("error[policy/feature]") && said.contains("policies/guard.cedar:1:1") && said.contains("add `\"policy\"` to `features` of `capspec-cli`"), "{said}");
    std::fs::write(project.join("capspec.toml"), config).unwrap();
    std::fs::remove_dir_all(project.join("policies")).unwrap();
    assert_eq!(run(&project, &cargo(), &["xtask", "sync"]).status.code(), Some(0));
    // capspec.toml and the generated files were written after the last
    // `cargo test`, back as they were: freshness is content, so the record
    // still counts.
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(0), "restored files are not an edit: {}", text(&check));

    // Names are never evidence: a module whose tests only name its
    // capabilities — a test-local args type of the same name, the short
    // name as a string and in an enum value, the qualified name in an
    // assertion, a fn of the same name, a comment — is untested; a test
    // that calls one through `invoke` makes that one tested, by name.
    std::fs::write(
        project.join("specs/memory.yaml"),
        "module: memory\ndescription: The knowledge graph.\ncapabilities:\n  - { name: search_nodes, category: read, description: Search the graph's nodes., input: { type: object, properties: { query: { type: string } } } }\n  - { name: frontmatter, category: read, description: Read a note's frontmatter. }\n  - { name: list, category: read, description: List the graph's nodes. }\n",
    )
    .unwrap();
    std::fs::write(project.join("src/capabilities/mod.rs"), "pub mod example;\npub mod memory;\n").unwrap();
    std::fs::write(
        project.join("src/capabilities/memory.rs"),
        "use capspec::{CapResult, Run, capability};\n\nuse crate::generated::memory;\n\n\
         #[capability(memory::search_nodes)]\nasync fn search_nodes(_run: &Run, _args: memory::search_nodes::Args) -> CapResult<Vec<String>> {\n    Ok(Vec::new())\n}\n\n\
         #[capability(memory::frontmatter)]\nasync fn frontmatter(_run: &Run, _args: memory::frontmatter::Args) -> CapResult<String> {\n    Ok(String::new())\n}\n\n\
         #[capability(memory::list)]\nasync fn list(_run: &Run, _args: memory::list::Args) -> CapResult<Vec<String>> {\n    Ok(Vec::new())\n}\n",
    )
    .unwrap();
    std::fs::write(
        project.join("tests/names_only.rs"),
        "//! memory.search_nodes memory.frontmatter memory.list\n\
         mod memory {\n    pub mod search_nodes {\n        #[allow(dead_code)]\n        pub struct Args { pub query: Option<String> }\n    }\n}\n\n\
         #[allow(dead_code)]\nenum TagLocation { Frontmatter, Body }\n\n\
         fn search_nodes() -> Vec<&'static str> { vec![\"memory.search_nodes\", \"frontmatter\", \"list\"] }\n\n\
         #[test]\nfn local_items_only() {\n    let _ = memory::search_nodes::Args { query: None };\n    let pairs = [(\"frontmatter\", TagLocation::Frontmatter)];\n    assert_eq!(pairs.len(), 1);\n    assert!(search_nodes().contains(&\"memory.search_nodes\"));\n    assert!(\"the list\".contains(\"list\"));\n}\n\n\
         #[test]\nfn lists_through_invoke() {\n    let registry = capspec::Registry::new(demo_host::generated::MODULES).unwrap();\n    let run = capspec::Run::new(capspec::Gate::headless(capspec::Mode::Default, \"names test\"));\n    let listed = capspec::testing::block_on(registry.mount_all().invoke_json(&run, r#\"{\"name\": \"memory.list\", \"arguments\": {}}\"#));\n    assert_eq!(listed, r#\"{\"result\":[]}\"#);\n}\n",
    )
    .unwrap();
    assert_eq!(run(&project, &cargo(), &["xtask", "sync"]).status.code(), Some(0));
    let check = run(&project, &cargo(), &["xtask", "check"]);
    let said = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(said.contains("error[coverage/stale]: this file changed after the last `cargo test` started"), "the specs changed after the last cargo test: {}", text(&check));
    assert!(said.contains("the last `cargo test` ran it (capabilities::example::tests::read_greeting_runs_and_save_greeting_is_gated (demo_host)), but `"), "{said}");
    // No pause: the record is judged by content, not by the clock.
    let test = run(&project, &cargo(), &["test", "--workspace"]);
    assert!(test.status.success(), "{}", text(&test));
    let check = run(&project, &cargo(), &["xtask", "check", "--format", "json"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    let mut found: Vec<(String, String)> = report["findings"].as_array().unwrap().iter().map(|f| (f["rule"].as_str().unwrap().to_string(), f["message"].as_str().unwrap().split('`').nth(1).unwrap_or_default().to_string())).collect();
    found.sort();
    assert_eq!(found, [("coverage/untested".to_string(), "memory.frontmatter".to_string()), ("coverage/untested".into(), "memory.search_nodes".into())], "{report:#}");
    // Taken out again.
    for file in ["specs/memory.yaml", "src/capabilities/memory.rs", "tests/names_only.rs"] {
        std::fs::remove_file(project.join(file)).unwrap();
    }
    std::fs::write(project.join("src/capabilities/mod.rs"), "pub mod example;\n").unwrap();
    assert_eq!(run(&project, &cargo(), &["xtask", "sync"]).status.code(), Some(0));

    // Reclassifying the example capability fails the gate.
    let spec = std::fs::read_to_string(project.join("specs/example.yaml")).unwrap();
    std::fs::write(project.join("specs/example.yaml"), spec.replacen("category: read", "category: write", 1)).unwrap();
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("error[drift/snapshot]: example.read_greeting: read → write"), "{}", text(&check));

    // A project that deleted the example: a re-run of init never writes it
    // back, says what it skipped, and `check` stays green.
    std::fs::write(project.join("specs/example.yaml"), spec).unwrap();
    std::fs::write(project.join("specs/greeter.yaml"), "module: greeter\ndescription: Greetings.\ncapabilities:\n  - { name: greet, category: read, description: Greet someone. }\n").unwrap();
    std::fs::write(project.join("src/capabilities/mod.rs"), "pub mod greeter;\n").unwrap();
    std::fs::write(
        project.join("src/capabilities/greeter.rs"),
        "use capspec::{CapResult, Run, capability};\n\nuse crate::generated::greeter;\n\n#[capability(greeter::greet)]\nasync fn greet(_run: &Run, _args: greeter::greet::Args) -> CapResult<String> {\n    Ok(\"hello\".into())\n}\n\n\
         #[cfg(test)]\nmod tests {\n    #[test]\n    fn greets() {\n        let registry = capspec::Registry::new(crate::generated::MODULES).unwrap();\n        let run = capspec::Run::new(capspec::Gate::headless(capspec::Mode::Default, \"greeter test\"));\n        let said = capspec::testing::block_on(registry.mount_all().invoke_json(&run, r#\"{\"name\": \"greeter.greet\", \"arguments\": {}}\"#));\n        assert_eq!(said, r#\"{\"result\":\"hello\"}\"#);\n    }\n}\n",
    )
    .unwrap();
    for file in ["specs/example.yaml", "src/capabilities/example.rs"] {
        std::fs::remove_file(project.join(file)).unwrap();
    }
    assert_eq!(run(&project, &cargo(), &["xtask", "sync"]).status.code(), Some(0));
    let again = init(&project, &[]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let said = String::from_utf8_lossy(&again.stdout).into_owned();
    for file in ["specs/example.yaml", "src/capabilities/example.rs"] {
        assert!(!project.join(file).exists(), "init wrote back {file}:\n{said}");
        assert!(said.contains(&format!("skipped the example's {file}: capspec.toml exists")), "{said}");
    }
    let test = run(&project, &cargo(), &["test", "--workspace"]);
    assert!(test.status.success(), "{}", text(&test));
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));

    // Back to back, twenty times, with no pause: `sync && cargo test &&
    // check`, and an edit (a touch of a test) immediately followed by
    // `cargo test`, which rebuilds that test. Never stale.
    let touched = project.join("tests/capspec_fresh.rs");
    for round in 0..20 {
        if round % 2 == 0 {
            assert_eq!(run(&project, &cargo(), &["xtask", "sync"]).status.code(), Some(0));
        } else {
            std::fs::File::options().append(true).open(&touched).unwrap().set_modified(std::time::SystemTime::now()).unwrap();
        }
        let test = run(&project, &cargo(), &["test", "--workspace"]);
        assert!(test.status.success(), "round {round}: {}", text(&test));
        let check = run(&project, &cargo(), &["xtask", "check"]);
        assert_eq!(check.status.code(), Some(0), "round {round}: {}", text(&check));
    }
    // An edit in the middle of a run: a test changes an input before its
    // call; the run may not have been built from it, so the record is stale.
    std::fs::write(
        project.join("tests/mid_run.rs"),
        "#[test]\nfn edits_an_input_then_calls() {\n    let note = concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/tests/mid_run.txt\");\n    std::fs::write(note, format!(\"{:?}\\n\", std::time::SystemTime::now())).unwrap();\n    let registry = capspec::Registry::new(demo_host::generated::MODULES).unwrap();\n    let run = capspec::Run::new(capspec::Gate::headless(capspec::Mode::Default, \"mid-run test\"));\n    let said = capspec::testing::block_on(registry.mount_all().invoke_json(&run, r#\"{\"name\": \"greeter.greet\", \"arguments\": {}}\"#));\n    assert_eq!(said, r#\"{\"result\":\"hello\"}\"#);\n}\n",
    )
    .unwrap();
    std::fs::write(project.join("tests/mid_run.txt"), "before the run\n").unwrap();
    let test = run(&project, &cargo(), &["test", "--workspace"]);
    assert!(test.status.success(), "{}", text(&test));
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("tests/mid_run.txt"), "{}", text(&check));
}

/// The `run:` commands of the workflow init wrote, in order.
fn workflow_commands(workflow: &str) -> Vec<String> {
    workflow.lines().filter_map(|l| l.trim_start().trim_start_matches("- ").strip_prefix("run: ")).map(str::to_owned).collect()
}

/// Run each `run:` command of the written workflow as written, in `dir`
/// (GitHub runs them with bash at the checkout's root); each must succeed.
fn run_workflow(dir: &Path) -> String {
    let workflow = std::fs::read_to_string(dir.join(".github/workflows/capspec.yml")).unwrap();
    let commands = workflow_commands(&workflow);
    assert_eq!(commands.len(), 3, "test, check, check (SARIF):\n{workflow}");
    for command in &commands {
        let out = run(dir, "bash", &["-c", command]);
        assert!(out.status.success(), "workflow step `{command}` failed:\n{}", text(&out));
    }
    let sarif: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("capspec.sarif")).unwrap()).expect("the SARIF step writes JSON");
    assert_eq!(sarif["version"], "2.1.0");
    workflow
}

/// The user adds what a kept `src/lib.rs` needs, as init's note says.
fn add_mod_lines(lib: &Path) {
    let mut text = std::fs::read_to_string(lib).unwrap();
    text.push_str("pub mod capabilities;\npub mod generated;\n");
    std::fs::write(lib, text).unwrap();
}

#[test]
fn a_workspace_member_adopts_capspec_and_the_commands_work_from_the_root_and_the_member() {
    let ws = TempDir::new("init-ws");
    ws.write("Cargo.toml", "[workspace]\nresolver = \"3\"\nmembers = [\"host\", \"util\"]\n");
    ws.write("host/Cargo.toml", "[package]\nname = \"host\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nserde = \"1\"\n");
    ws.write("host/src/lib.rs", "pub fn hello() {}\n");
    ws.write("util/Cargo.toml", "[package]\nname = \"util\"\nversion = \"0.1.0\"\nedition = \"2024\"\n");
    ws.write("util/src/lib.rs", "pub fn util() {}\n");
    ws.write(".cargo/config.toml", "[alias]\nb = \"build\"\n");
    std::fs::copy(repo_root().join("Cargo.lock"), ws.path().join("Cargo.lock")).unwrap();
    let host = ws.path().join("host");

    let out = init(&host, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("kept     src/lib.rs (exists)") && said.contains("add `pub mod capabilities;` and `pub mod generated;`"), "{said}");
    assert!(said.contains("wrote    ../xtask/src/main.rs"), "{said}");
    // Each manifest's edits are reported against it.
    assert!(said.contains("edited   Cargo.toml: [dependencies] capspec, [dev-dependencies] capspec-codegen\n"), "{said}");
    assert!(said.contains("edited   ../Cargo.toml: [workspace] members += \"xtask\", dev-profile override"), "{said}");
    assert!(said.ends_with("init: done; next `cargo test` and `cargo xtask check`\n"), "{said}");
    assert_eq!(ws.read("Cargo.toml").lines().find(|l| l.starts_with("members")), Some("members = [\"xtask\", \"host\", \"util\"]"));
    assert_eq!(
        ws.read(".cargo/config.toml"),
        "[alias]\nxtask = \"run --quiet --package xtask --\"\nb = \"build\"\n\n[env]\nCAPSPEC_COVERAGE_DIR = { value = \"host/.capspec/coverage\", relative = true, force = true }\n"
    );
    let manifest = ws.read("host/Cargo.toml");
    assert!(manifest.contains("[dependencies]\ncapspec = { path = ") && manifest.contains("serde = \"1\""), "{manifest}");
    assert!(!manifest.contains("[workspace]"), "a member does not become a workspace: {manifest}");
    assert_eq!(ws.read("host/src/lib.rs"), "pub fn hello() {}\n", "an existing file is never touched");
    add_mod_lines(&host.join("src/lib.rs"));

    // The printed next step, from the workspace root and from the member:
    // the tests (which record into the member's .capspec/), then the gate.
    // (The record's run start is known to 1/100 s: lib.rs comes before it.)
    std::thread::sleep(std::time::Duration::from_millis(200));
    let test = run(ws.path(), &cargo(), &["test"]);
    assert!(test.status.success(), "{}", text(&test));
    for dir in [ws.path(), host.as_path()] {
        let check = run(dir, &cargo(), &["xtask", "check"]);
        assert_eq!(check.status.code(), Some(0), "from {}: {}", dir.display(), text(&check));
        assert!(String::from_utf8_lossy(&check.stdout).contains("no findings"), "{}", text(&check));
    }
    let workflow = run_workflow(ws.path());
    assert!(workflow.contains("run: cargo xtask check --format github"), "{workflow}");
    let test = run(ws.path(), &cargo(), &["test"]);
    assert!(test.status.success(), "{}", text(&test));
    assert!(text(&test).contains("read_greeting_runs_and_save_greeting_is_gated ... ok"), "{}", text(&test));
}

#[test]
fn a_project_with_its_own_xtask_keeps_its_tasks_and_gets_capspec_as_a_subcommand() {
    let ws = TempDir::new("init-own-xtask");
    ws.write("Cargo.toml", "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\nmembers = [\"xtask\"]\n");
    ws.write("src/main.rs", "fn main() {}\n");
    // Its package has a name of its own (the tests share a target directory,
    // where two binaries named `xtask` would overwrite each other).
    ws.write("xtask/Cargo.toml", "[package]\nname = \"tasks\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n");
    let own_main = "fn main() {\n    match std::env::args().nth(1).as_deref() {\n        Some(\"dist\") => println!(\"dist: the project's own task ran\"),\n        other => {\n            eprintln!(\"unknown task {other:?}\");\n            std::process::exit(2);\n        }\n    }\n}\n";
    ws.write("xtask/src/main.rs", own_main);
    ws.write(".cargo/config.toml", "[alias]\nxtask = \"run --package tasks --\"\n");
    std::fs::copy(repo_root().join("Cargo.lock"), ws.path().join("Cargo.lock")).unwrap();

    let out = init(ws.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("kept     xtask (exists, with tasks of its own"), "{said}");
    assert!(said.contains("edited   xtask/Cargo.toml: [dependencies] capspec-cli\n"), "{said}");
    assert!(said.contains("kept     .cargo/config.toml (it already has an `xtask` alias)"), "{said}");
    assert!(said.ends_with("init: done; next add that line to the xtask's main, then `cargo test` and `cargo xtask capspec check`\n"), "{said}");
    assert_eq!(ws.read("xtask/src/main.rs"), own_main, "the project's xtask is never rewritten");
    // The line to paste, exactly as printed.
    let line = said.lines().map(str::trim).find(|l| l.starts_with("capspec_cli::")).unwrap_or_else(|| panic!("no line to paste:\n{said}"));
    assert_eq!(line, "capspec_cli::run_subcommand();");
    ws.write("xtask/src/main.rs", own_main.replacen("fn main() {\n", &format!("fn main() {{\n    {line}\n"), 1));

    // Its own task still works; the capspec commands work the way init said.
    let dist = run(ws.path(), &cargo(), &["xtask", "dist"]);
    assert!(dist.status.success() && String::from_utf8_lossy(&dist.stdout).contains("dist: the project's own task ran"), "{}", text(&dist));
    let test = run(ws.path(), &cargo(), &["test", "--workspace"]);
    assert!(test.status.success(), "{}", text(&test));
    let check = run(ws.path(), &cargo(), &["xtask", "capspec", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("no findings"), "{}", text(&check));
    let help = run(ws.path(), &cargo(), &["xtask", "capspec", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: cargo xtask capspec <COMMAND>"), "{}", text(&help));
    let workflow = run_workflow(ws.path());
    assert!(workflow.contains("run: cargo xtask capspec check --format github"), "{workflow}");

    // A second init sees the line and says the same commands.
    let again = init(ws.path(), &[]);
    let said = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(!said.contains("edited ") && !said.contains("capspec_cli::run_subcommand"), "{said}");
    assert!(said.ends_with("init: done; next `cargo test` and `cargo xtask capspec check`\n"), "{said}");
}

#[test]
fn a_workspace_with_two_adopting_members_asks_which_one() {
    let ws = TempDir::new("init-two");
    ws.write("Cargo.toml", "[workspace]\nresolver = \"3\"\nmembers = [\"crates/*\"]\n");
    for member in ["alpha", "beta"] {
        ws.write(&format!("crates/{member}/Cargo.toml"), format!("[package]\nname = \"{member}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"));
        ws.write(&format!("crates/{member}/capspec.toml"), capspec_testkit::MINIMAL_CONFIG);
        ws.write(&format!("crates/{member}/specs/notes.yaml"), capspec_testkit::MINIMAL_SPEC);
    }
    let capspec = env!("CARGO_BIN_EXE_cargo-capspec");
    let out = run(ws.path(), capspec, &["capspec", "check"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("2 members of the workspace") && err.contains("`crates/alpha`, `crates/beta`") && err.contains("--root"), "{err}");
    // Inside a member, or with --root, that member is the project.
    for (dir, args) in [(ws.path().join("crates/beta/specs"), vec!["capspec", "coverage"]), (ws.path().to_path_buf(), vec!["capspec", "coverage", "--root", "crates/alpha"])] {
        let out = run(&dir, capspec, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("notes.read_note"), "{}", text(&out));
    }
    // With one member holding a config, it is found from the root.
    std::fs::remove_file(ws.path().join("crates/alpha/capspec.toml")).unwrap();
    let out = run(ws.path(), capspec, &["capspec", "coverage", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Its findings (nothing generated yet) name files relative to it in JSON,
    // and from the repository root in GitHub annotations and SARIF.
    let json = String::from_utf8_lossy(&run(ws.path(), capspec, &["capspec", "check", "--format", "json"]).stdout).into_owned();
    assert!(json.contains("\"file\": \"src/generated/mod.rs\""), "{json}");
    let github = String::from_utf8_lossy(&run(ws.path(), capspec, &["capspec", "check", "--format", "github"]).stdout).into_owned();
    assert!(github.contains("file=crates/beta/src/generated/mod.rs,"), "{github}");
    let sarif = String::from_utf8_lossy(&run(ws.path(), capspec, &["capspec", "check", "--format", "sarif"]).stdout).into_owned();
    assert!(sarif.contains("\"uri\": \"crates/beta/src/generated/mod.rs\""), "{sarif}");
    let inside = String::from_utf8_lossy(&run(&ws.path().join("crates/beta"), capspec, &["capspec", "check", "--format", "github"]).stdout).into_owned();
    assert!(inside.contains("file=src/generated/mod.rs,"), "{inside}");
    // Outside any workspace and config, the error says where it looked.
    let bare = TempDir::new("init-bare");
    let out = run(bare.path(), capspec, &["capspec", "check"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at or above"), "{}", text(&out));
}

#[test]
fn init_outside_a_cargo_package_exits_2() {
    let dir = TempDir::new("init-none");
    let out = init(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Cargo.toml"), "{}", text(&out));
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "nothing is written");
}

/// `cargo new` in `dir`, with this workspace's lock file (the new project
/// resolves offline).
fn new_project(dir: &Path, name: &str) -> std::path::PathBuf {
    let out = run(dir, &cargo(), &["new", "--quiet", "--vcs", "none", name]);
    assert!(out.status.success(), "{}", text(&out));
    let project = dir.join(name);
    std::fs::copy(repo_root().join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    project
}

fn bare_init(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["capspec", "init"];
    all.extend(args);
    run(dir, env!("CARGO_BIN_EXE_cargo-capspec"), &all)
}

/// init resolves what it wrote before it says "done": a source cargo cannot
/// fetch is an error naming the flags that fix it. Running init again with
/// another source rewrites capspec's own dependency entries, and only
/// those (their source keys: features and default-features stay), reporting
/// each, and the project still compiles; a checkout outside the project's
/// repository gets a warning that the CI workflow cannot see it.
#[test]
fn init_says_done_only_when_the_project_resolves_and_a_new_source_rewrites_its_entries() {
    let tmp = TempDir::new("init-source");
    let project = new_project(tmp.path(), "graph_host");
    let mut manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    // The project depends on capspec already, with features of its own.
    manifest.push_str("capspec = { git = \"file:///nonexistent/capspec.git\", default-features = false, features = [\"quickjs\"] }\nserde = \"1\"\n");
    std::fs::write(project.join("Cargo.toml"), &manifest).unwrap();

    let out = bare_init(&project, &["--capspec-git", "file:///nonexistent/capspec.git"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(!said.contains("init: done"), "{said}");
    assert!(said.contains("error: the project does not resolve: `cargo metadata` failed:"), "{said}");
    assert!(said.contains("run init again with --capspec-path DIR"), "{said}");
    let broken = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(broken.contains("capspec = { git = \"file:///nonexistent/capspec.git\", default-features = false, features = [\"quickjs\"] }\n"), "{broken}");

    let checkout = repo_root().canonicalize().unwrap();
    let out = bare_init(&project, &["--capspec-path", checkout.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    for change in [
        "edited   Cargo.toml: [dependencies] capspec: was `capspec = { git = \"file:///nonexistent/capspec.git\", default-features = false, features = [\"quickjs\"] }`, [dev-dependencies] capspec-codegen: was `capspec-codegen = { git = \"file:///nonexistent/capspec.git\" }`",
        "edited   xtask/Cargo.toml: [dependencies] capspec-cli: was `capspec-cli = { git = \"file:///nonexistent/capspec.git\", default-features = false, features = [\"mimalloc\"] }`",
        "init: done",
    ] {
        assert!(said.contains(change), "{change}\n{said}");
    }
    assert!(said.contains(&format!("warning: capspec's path dependencies point at `{}`, outside this project's repository", checkout.display())), "{said}");
    let fixed = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    let runtime = format!("capspec = {{ path = \"{}\", default-features = false, features = [\"quickjs\"] }}\n", checkout.join("runtime").display());
    assert!(fixed.contains(&runtime), "{fixed}");
    // Only capspec's own entries changed.
    let changed: Vec<(&str, &str)> = broken.lines().zip(fixed.lines()).filter(|(a, b)| a != b).collect();
    assert_eq!(changed.len(), 2, "{changed:#?}");
    assert!(changed.iter().all(|(a, _)| a.starts_with("capspec")), "{changed:#?}");
    assert_eq!(broken.lines().count(), fixed.lines().count());
    // It compiles with its own features: the example, the generated code, its main.
    let built = run(&project, &cargo(), &["check", "--quiet", "--offline"]);
    assert!(built.status.success(), "{}", text(&built));
}

/// The guide's order: a server's tools pinned as an upstream first (its
/// `capspec.toml` and module), then init. init writes no example beside
/// them and says so; the project compiles and `check` is clean.
#[test]
fn init_after_an_upstream_pin_leaves_check_clean() {
    let tmp = TempDir::new("init-pinned");
    let project = new_project(tmp.path(), "kg_host");
    std::fs::create_dir_all(project.join("specs")).unwrap();
    std::fs::copy(repo_root().join("specs/kg.yaml"), project.join("specs/kg.yaml")).unwrap();
    std::fs::write(project.join("capspec.toml"), "specs = \"specs\"\n\n[upstream.kg]\ncommand = [\"node\", \"server-memory.js\"]\n").unwrap();
    let out = init(&project, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("skipped the example's specs/example.yaml: capspec.toml exists"), "{said}");
    assert!(!project.join("specs/example.yaml").exists() && !project.join("src/capabilities").exists(), "{said}");
    let built = run(&project, &cargo(), &["check", "--quiet", "--offline", "--all-targets"]);
    assert!(built.status.success(), "{}\n{said}", text(&built));
    let check = run(&project, env!("CARGO_BIN_EXE_cargo-capspec"), &["capspec", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
    assert!(text(&check).contains("capspec: no findings"), "{}", text(&check));
}

/// Without a source flag, init depends on the checkout the running binary
/// was built from; a project inside that checkout's tree gets relative
/// paths, which the repository's CI sees, and no warning.
#[test]
fn init_defaults_to_the_checkout_it_came_from_relative_inside_its_tree() {
    let base = repo_root().join("target/init-inside");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    // Written by hand, as a workspace of its own: `cargo new` would add it
    // to the checkout's workspace.
    let project = base.join("inside_host");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("Cargo.toml"), "[package]\nname = \"inside_host\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\nmembers = [\".\"]\n").unwrap();
    std::fs::copy(repo_root().join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    let out = bare_init(&project, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("warning:"), "{}", text(&out));
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("capspec = { path = \"../../../runtime\" }"), "{manifest}");
    assert!(manifest.contains("capspec-codegen = { path = \"../../../codegen\" }"), "{manifest}");
    let xtask = std::fs::read_to_string(project.join("xtask/Cargo.toml")).unwrap();
    assert!(xtask.contains("capspec-cli = { path = \"../../../../cli\", default-features = false"), "{xtask}");
    std::fs::remove_dir_all(&base).unwrap();
}

/// A project that already builds crates the generator is optimised in
/// (serde_json here, as every rmcp server does) gets no dev-profile override
/// on them: one would rebuild them and everything above them at its next
/// `cargo test`. init says which it left out and how to opt in; the crates
/// only capspec brings keep theirs.
#[test]
fn init_adds_no_profile_override_to_a_crate_the_project_already_builds() {
    let tmp = TempDir::new("init-overrides");
    let project = new_project(tmp.path(), "json_host");
    let manifest = project.join("Cargo.toml");
    let original = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, original.replace("[dependencies]\n", "[dependencies]\nserde_json = \"1\"\n")).unwrap();
    let locked = run(&project, &cargo(), &["generate-lockfile", "--offline"]);
    assert!(locked.status.success(), "{}", text(&locked));
    let out = init(&project, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("no dev-profile override for serde_json: the project builds them already"), "{said}");
    let written = std::fs::read_to_string(&manifest).unwrap();
    assert!(!written.contains("[profile.dev.package.serde_json]"), "{written}");
    for krate in ["capspec-codegen", "saphyr-parser", "prettyplease"] {
        assert!(written.contains(&format!("[profile.dev.package.{krate}]\nopt-level = 3")), "{krate}: {written}");
    }
}

/// The same bytes from every front-end (DESIGN §4). `cargo capspec` (built
/// here, where serde_json's `preserve_order` is on through Cedar) and the
/// project's own `cargo xtask` (built without it) write the code-first
/// record and every artifact alike, in either order, whether or not the
/// project's build — which exports the derives' schemas — has
/// `preserve_order`. The derive's properties and its output's are declared
/// out of key order, so an exported schema's order differs between the two
/// builds.
#[test]
fn both_front_ends_write_the_same_bytes_whether_or_not_the_project_keeps_json_key_order() {
    let tmp = TempDir::new("init-key-order");
    let project = new_project(tmp.path(), "notes_host");
    let out = init(&project, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let manifest = project.join("Cargo.toml");
    let plain = std::fs::read_to_string(&manifest).unwrap().replace("[dependencies]\n", "[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\nschemars = \"1\"\n");
    let ordered = plain.replace("[dependencies]\n", "[dependencies]\nserde_json = { version = \"1\", features = [\"preserve_order\"] }\n");
    std::fs::write(&manifest, &plain).unwrap();
    let config = std::fs::read_to_string(project.join("capspec.toml")).unwrap();
    std::fs::write(project.join("capspec.toml"), format!("{config}\n[code_first]\npackages = [\"notes_host\"]\n")).unwrap();
    // A spec's properties out of name order: artifacts list them as written.
    std::fs::write(
        project.join("specs/notes.yaml"),
        "module: notes\ndescription: The notes.\ncapabilities:\n  - name: archive_note\n    category: write\n    description: Archive a note.\n    input:\n      type: object\n      properties:\n        title: {type: string}\n        body: {type: string}\n        after: {type: string}\n      required: [title]\n",
    )
    .unwrap();
    std::fs::write(project.join("src/capabilities/mod.rs"), "pub mod example;\npub mod notes;\n").unwrap();
    std::fs::write(
        project.join("src/capabilities/notes.rs"),
        "use capspec::{CapResult, Capability, Run, capability};\n\n\
         /// Which notes a search keeps.\n#[derive(serde::Deserialize, schemars::JsonSchema, Default)]\npub struct Filter {\n    /// Only notes with this tag.\n    pub tag: Option<String>,\n    /// Archived notes too.\n    #[serde(default)]\n    pub archived: bool,\n}\n\n\
         /// Search the notes.\n#[derive(serde::Deserialize, schemars::JsonSchema, Capability)]\n#[capability(module = \"notes\", category = \"read\")]\npub struct SearchNotes {\n    /// What to look for.\n    pub query: String,\n    /// At most this many.\n    pub limit: Option<u32>,\n    #[serde(default)]\n    pub filter: Filter,\n    /// Continue after this note.\n    pub after: Option<String>,\n}\n\n\
         /// One note.\n#[derive(serde::Serialize, schemars::JsonSchema)]\npub struct Note {\n    pub title: String,\n    pub body: String,\n    pub id: u64,\n}\n\n\
         /// A page of notes.\n#[derive(serde::Serialize, schemars::JsonSchema)]\npub struct NoteList {\n    pub total: u32,\n    pub notes: Vec<Note>,\n}\n\n\
         #[capability]\nasync fn search_notes(_run: &Run, _args: SearchNotes) -> CapResult<NoteList> {\n    Ok(NoteList { total: 0, notes: Vec::new() })\n}\n",
    )
    .unwrap();

    let capspec = env!("CARGO_BIN_EXE_cargo-capspec");
    let no_drift = |out: &Output, what: &str| {
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(!said.contains("error[drift/") && !said.contains("error[code-first/") && !said.contains("warning[drift/"), "{what}: {}", text(out));
    };
    // The first sync writes the record and the artifacts.
    let first = run(&project, capspec, &["capspec", "sync"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let record = std::fs::read_to_string(project.join("specs/code-first.json")).unwrap();
    assert!(record.contains("notes_host::capabilities::notes::SearchNotes"), "{record}");
    let catalog = std::fs::read_to_string(project.join("catalog/capabilities.json")).unwrap();
    let archive = &catalog[catalog.find("\"archive_note\"").unwrap()..];
    let at = |name: &str| archive.find(&format!("\"{name}\": {{")).unwrap_or_else(|| panic!("{name} in {archive}"));
    assert!(at("title") < at("body") && at("body") < at("after"), "properties as the spec declares them: {archive}");
    // A derive's properties as its struct declares its fields, in the
    // catalog and in the record, whichever build wrote them.
    let search = &catalog[catalog.find("\"search_notes\"").unwrap()..];
    let at = |name: &str| search.find(&format!("\"{name}\": {{")).unwrap_or_else(|| panic!("{name} in {search}"));
    assert!(at("query") < at("limit") && at("limit") < at("filter") && at("filter") < at("after"), "properties as the struct declares them: {search}");
    let line = record.lines().find(|l| l.contains("SearchNotes")).unwrap();
    let at = |name: &str| line.find(&format!("\"{name}\":{{")).unwrap_or_else(|| panic!("{name} in {line}"));
    assert!(at("query") < at("limit") && at("limit") < at("filter") && at("filter") < at("after"), "{line}");
    let mut written = tree(&project);
    // The manifest is edited below, and cargo writes the lock file.
    written.retain(|path, _| !path.starts_with("Cargo."));
    for (manifest_text, build) in [(&plain, "without preserve_order"), (&ordered, "with preserve_order"), (&plain, "without preserve_order, again")] {
        std::fs::write(&manifest, manifest_text).unwrap();
        // `cargo xtask check` after `cargo capspec sync`, then the reverse.
        for (sync, check) in [((capspec, &["capspec", "sync"][..]), (cargo(), &["xtask", "check"][..])), ((&*cargo(), &["xtask", "sync"][..]), (capspec.to_string(), &["capspec", "check"][..]))] {
            let synced = run(&project, sync.0, sync.1);
            assert_eq!(synced.status.code(), Some(0), "{build}: {:?}: {}", sync.1, text(&synced));
            assert!(String::from_utf8_lossy(&synced.stdout).contains("sync: 0 written, 0 removed"), "{build}: {:?} rewrote files: {}", sync.1, text(&synced));
            no_drift(&run(&project, &check.0, check.1), build);
        }
        let mut now = tree(&project);
        now.retain(|path, _| !path.starts_with("Cargo."));
        assert!(now == written, "{build}: the files changed");
    }
}

/// A capability behind a cargo feature (DESIGN §2), as a project migrating
/// feature-gated tools writes it: the spec names the feature, the impl sits
/// behind the same `cfg`. Both builds compile; each mounts, lists and
/// catalogs exactly what it has; `check` holds the project to both.
#[test]
fn a_feature_gated_capability_compiles_mounts_and_checks_in_each_build() {
    let tmp = TempDir::new("init-feature");
    let project = new_project(tmp.path(), "vector_host");
    let out = init(&project, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let manifest = project.join("Cargo.toml");
    std::fs::write(&manifest, format!("{}\n[features]\nvector = []\n", std::fs::read_to_string(&manifest).unwrap())).unwrap();
    let config = std::fs::read_to_string(project.join("capspec.toml")).unwrap();
    std::fs::write(project.join("capspec.toml"), format!("{config}\n[check]\nfeatures = [[], [\"vector\"]]\n")).unwrap();
    std::fs::write(
        project.join("specs/search.yaml"),
        "module: search\ndescription: Search the notes.\ncapabilities:\n  - { name: by_text, category: read, description: Find notes containing a text. }\n  - { name: by_meaning, category: read, feature: vector, description: Find notes by meaning. }\n",
    )
    .unwrap();
    std::fs::write(project.join("src/capabilities/mod.rs"), "pub mod example;\npub mod search;\n#[cfg(feature = \"vector\")]\npub mod vector;\n").unwrap();
    std::fs::write(
        project.join("src/capabilities/search.rs"),
        "use capspec::{CapResult, Run, capability};\n\nuse crate::generated::search;\n\n#[capability(search::by_text)]\nasync fn by_text(_run: &Run, _args: search::by_text::Args) -> CapResult<String> {\n    Ok(\"text\".into())\n}\n",
    )
    .unwrap();
    std::fs::write(
        project.join("src/capabilities/vector.rs"),
        "use capspec::{CapResult, Run, capability};\n\nuse crate::generated::search;\n\n#[capability(search::by_meaning)]\nasync fn by_meaning(_run: &Run, _args: search::by_meaning::Args) -> CapResult<String> {\n    Ok(\"meaning\".into())\n}\n",
    )
    .unwrap();
    // What each build has: the registry, the module's catalog section, and a call.
    std::fs::write(
        project.join("tests/builds.rs"),
        "#[test]\nfn each_build_has_what_its_features_give() {\n    let registry = capspec::Registry::new(vector_host::generated::MODULES).unwrap();\n    let mounted = registry.mount_all();\n    let run = capspec::Run::new(capspec::Gate::headless(capspec::Mode::Default, \"builds test\"));\n    let by_text = capspec::testing::block_on(mounted.invoke_json(&run, r#\"{\"name\": \"search.by_text\", \"arguments\": {}}\"#));\n    assert_eq!(by_text, r#\"{\"result\":\"text\"}\"#);\n    let by_meaning = capspec::testing::block_on(mounted.invoke_json(&run, r#\"{\"name\": \"search.by_meaning\", \"arguments\": {}}\"#));\n    let catalog = vector_host::generated::search::CATALOG;\n    if cfg!(feature = \"vector\") {\n        assert_eq!(by_meaning, r#\"{\"result\":\"meaning\"}\"#);\n        assert!(catalog.contains(\"by_meaning\"), \"{catalog}\");\n    } else {\n        assert!(by_meaning.contains(\"unknown_capability\"), \"{by_meaning}\");\n        assert!(!catalog.contains(\"by_meaning\") && catalog.contains(\"by_text\"), \"{catalog}\");\n        assert!(!vector_host::generated::search::FACADE.contains(\"by_meaning\"));\n    }\n}\n",
    )
    .unwrap();
    let sync = run(&project, &cargo(), &["xtask", "sync"]);
    assert_eq!(sync.status.code(), Some(0), "{}", text(&sync));
    for features in [&[][..], &["--features", "vector"]] {
        let mut args = vec!["test", "--workspace"];
        args.extend(features);
        let test = run(&project, &cargo(), &args);
        assert!(test.status.success(), "{features:?}: {}", text(&test));
        assert!(text(&test).contains("each_build_has_what_its_features_give ... ok"), "{}", text(&test));
    }
    // Both builds' calls in one record: the gate holds both and passes.
    let test = run(&project, &cargo(), &["test", "--workspace", "--all-features"]);
    assert!(test.status.success(), "{}", text(&test));
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
    // The feature's impl left out of its build: unimplemented there, at its `cfg`.
    std::fs::write(project.join("src/capabilities/mod.rs"), "pub mod example;\npub mod search;\n#[cfg(all(feature = \"vector\", feature = \"gpu\"))]\npub mod vector;\n").unwrap();
    let check = run(&project, &cargo(), &["xtask", "check"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("error[coverage/unimplemented]: `search.by_meaning` has no implementation its crate compiles with features `vector` on top of its default ones"), "{}", text(&check));
}
