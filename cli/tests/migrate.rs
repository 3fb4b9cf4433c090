//! The migration guide (docs/src/migrating-from-rmcp.md), followed command by
//! command on a copy of a server shaped like real rmcp servers
//! (tests/fixtures/migrate/rmcp: `#[tool_router]`, `Parameters<T>`, serde
//! renames, `Option` fields, a shared store, an app with `/health`), both
//! ways: pinned as an upstream and served by `cargo capspec serve`, and
//! native (tests/fixtures/migrate/native), where `check` names the one
//! capability no test calls — the store's same-named method does not count
//! — until a test calls it. The server's tools are kebab-case, three answer
//! structured content under an output schema (one a generic
//! `Json<Envelope<T>>`) and one Markdown text. After
//! each way, Python's official MCP client adds, lists and reads a note
//! through the tools' old names, searches with the calls the rmcp server
//! accepted and refused (schemars' `schema_with` helpers under
//! `#[serde(default)] Option<T>`, an untagged and a documented enum), and the
//! served `tools/list` is compared with the rmcp server's own: equal except
//! where the guide says.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use capspec_testkit::{KillOnDrop, TempDir, copy_dir, repo_root, skip, text};
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/migrate").join(name)
}

/// Where each way builds the server: the two are one package (before and
/// after), so they build apart; crates come from the registry.
fn target(dir: &Path) -> PathBuf {
    let rmcp = std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|manifest| manifest.contains("rmcp ="));
    repo_root().join("target").join(if rmcp { "migrate-rmcp" } else { "migrate-native" })
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target(dir))
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .expect("the command runs")
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn capspec(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["capspec"];
    all.extend(args);
    run(dir, env!("CARGO_BIN_EXE_cargo-capspec"), &all)
}

/// `check` passed with nothing to report.
fn clean(out: Output, what: &str) {
    assert!(out.status.success(), "{what}:\n{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().last(), Some("capspec: no findings"), "{what}:\n{}", text(&out));
}

fn ok(out: Output, what: &str) -> String {
    assert!(out.status.success(), "{what}:\n{}", text(&out));
    text(&out)
}

/// Python's client against the notes server: its summary.
fn python(args: &[&str]) -> Option<Value> {
    let venv = repo_root().join("tests/py/.venv/bin/python");
    if !Command::new(&venv).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success()) {
        skip(Some("CAPSPEC_REQUIRE_PYTHON_TOOLS"), "Python's mcp client is not installed (tests/py/requirements.txt); skipping the client half of the migration guide");
        return None;
    }
    let out = Command::new(venv).arg(repo_root().join("tests/py/migrate_e2e.py")).args(args).output().unwrap();
    let said = ok(out, "the Python client");
    Some(serde_json::from_str(said.lines().rfind(|l| l.starts_with('{')).unwrap()).unwrap())
}

/// What the client did through the tools' old (kebab-case) names: the
/// note added and listed as structured content, read back as Markdown text.
fn assert_notes(summary: &Value, asked: u64) {
    let note = json!({"noteId": 1, "title": "migrate", "tag": "docs"});
    assert_eq!((&summary["added"]["error"], &summary["added"]["structured"]), (&json!(false), &note), "{summary:#}");
    assert_eq!(summary["listed"]["structured"], json!({"notes": [note]}), "{summary:#}");
    assert_eq!(summary["read"], json!({"error": false, "structured": null, "texts": ["# migrate\n\ntag: docs\n"]}), "Markdown stays text: {summary:#}");
    assert_eq!(summary["asked"], asked, "{summary:#}");
    // The search table (tests/py/migrate_e2e.py's SEARCHES): what the rmcp
    // server accepted and refused, and what each found.
    let accepted = |found: u64| json!({"accepted": true, "found": found});
    let refused = json!({"accepted": false});
    assert_eq!(summary["searched"], json!([accepted(1), accepted(1), accepted(1), accepted(0), refused, refused, refused]), "{summary:#}");
}

/// What the rmcp server itself answers, as Python's client sees it (built
/// from tests/fixtures/migrate/rmcp): its `tools/list`, and a missing
/// note's JSON-RPC error with its code and data.
fn rmcp_summary() -> Option<Value> {
    let server = TempDir::copy_of("migrate-rmcp-listing", &fixture("rmcp"));
    ok(run(server.path(), &cargo(), &["build", "--quiet"]), "the rmcp server builds");
    let binary = target(server.path()).join("debug/notes-server");
    let summary = python(&["stdio", &binary.to_string_lossy(), "--stdio"])?;
    assert_notes(&summary, 0);
    assert_eq!(summary["missing"], missing_note_error(), "{summary:#}");
    assert_eq!(summary["identity"], json!({"name": "notes-server", "version": "0.1.0", "title": "Notes", "instructions": INSTRUCTIONS}), "{summary:#}");
    Some(summary)
}

/// The rmcp server's instructions.
const INSTRUCTIONS: &str = "Notes every session shares: add them, list them by tag, search and read them.";

/// The server is still the rmcp server by name, version and title, and its
/// instructions come first; capspec's text about its surface follows.
fn assert_same_identity(summary: &Value) {
    let identity = &summary["identity"];
    assert_eq!((&identity["name"], &identity["version"], &identity["title"]), (&json!("notes-server"), &json!("0.1.0"), &json!("Notes")), "{summary:#}");
    let instructions = identity["instructions"].as_str().unwrap();
    assert!(instructions.starts_with(&format!("{INSTRUCTIONS}\n\ncapspec host (modules: notes)")), "{instructions}");
}

/// The rmcp server's answer to reading a note that does not exist: a
/// JSON-RPC error whose data its clients read.
fn missing_note_error() -> Value {
    json!({"jsonrpc": {"code": -32602, "message": "no note 999", "data": {"code": "not_found", "retryable": false, "noteId": 999}}})
}

/// `schema` as capspec advertises it, by the guide's "What changes": as
/// schemars wrote it and, for an input, every object with declared
/// properties closed (`additionalProperties: false`).
fn as_advertised(schema: &Value, input: bool) -> Value {
    fn close(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                    map.insert("additionalProperties".into(), json!(false));
                }
                map.values_mut().for_each(close);
            }
            Value::Array(items) => items.iter_mut().for_each(close),
            _ => {}
        }
    }
    let mut schema = schema.clone();
    if input {
        close(&mut schema);
    }
    schema
}

/// The served `tools/list` is the rmcp server's (names, descriptions, input
/// and output schemas) except where the migration guide says it changes:
/// snake_case names (each old name an alias, called above) and closed
/// inputs; and annotations from each tool's reviewed category.
fn assert_same_surface(rmcp: &Value, served: &Value, categories: &[(&str, &str)]) {
    let project = |tool: &Value| json!({"name": tool["name"], "description": tool["description"], "inputSchema": tool["inputSchema"], "outputSchema": tool["outputSchema"]});
    let expected: Vec<Value> = rmcp
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let output = tool.get("outputSchema").map_or(Value::Null, |s| as_advertised(s, false));
            json!({"name": tool["name"].as_str().unwrap().replace('-', "_"), "description": tool["description"], "inputSchema": as_advertised(&tool["inputSchema"], true), "outputSchema": output})
        })
        .collect();
    let got: Vec<Value> = served.as_array().unwrap().iter().map(project).collect();
    assert!(got == expected, "the served surface is the rmcp server's, as the guide says:\nserved: {got:#?}\nexpected: {expected:#?}");
    for (tool, category) in categories {
        let listed = served.as_array().unwrap().iter().find(|t| t["name"] == *tool).unwrap();
        assert_eq!(listed["_meta"]["io.capspec/category"], *category, "{listed:#}");
        assert_eq!(listed["annotations"]["readOnlyHint"], *category == "read", "{listed:#}");
    }
}

const CATEGORIES: [(&str, &str); 4] = [("add_note", "write"), ("list_notes", "read"), ("read_note", "read"), ("search_notes", "read")];

#[test]
fn an_rmcp_server_is_pinned_as_an_upstream_and_served_through_the_gate() {
    let server = TempDir::copy_of("migrate-rmcp", &fixture("rmcp"));
    ok(run(server.path(), &cargo(), &["build", "--quiet"]), "the rmcp server builds");
    let binary = target(server.path()).join("debug/notes-server");

    let project = TempDir::new("migrate-upstream");
    // The gateway serves under the server's own identity ([serve]).
    project.write(
        "capspec.toml",
        format!("specs = \"specs\"\n\n[serve]\nname = \"notes-server\"\nversion = \"0.1.0\"\ntitle = \"Notes\"\ninstructions = \"{INSTRUCTIONS}\"\n\n[upstream.notes]\ncommand = [\"{}\", \"--stdio\"]\n", binary.display()),
    );
    let said = ok(capspec(project.path(), &["import", "mcp", "--upstream", "notes"]), "import");
    assert!(said.contains("pinned 4 tools of [upstream.notes] into specs/notes.yaml"), "{said}");
    // Each kebab-case tool gets a capability name; the import says so.
    for tool in ["add-note", "list-notes", "read-note", "search-notes"] {
        assert!(said.contains(&format!("renamed  `{tool}` → `{}` (the tool name stays an alias", tool.replace('-', "_"))), "{said}");
    }
    let pinned = project.read("specs/notes.yaml");
    assert!(!pinned.contains("deferred: true"), "four tools are listed in full:\n{pinned}");
    // The review the guide asks for: rmcp wrote no annotations on add_note.
    assert!(pinned.contains("  - name: add_note\n    category: external\n"), "{pinned}");
    project.write("specs/notes.yaml", pinned.replacen("  - name: add_note\n    category: external\n", "  - name: add_note\n    category: write\n", 1));
    ok(capspec(project.path(), &["sync"]), "sync");
    clean(capspec(project.path(), &["check", "--upstream"]), "check --upstream");

    let root = project.path().to_string_lossy().into_owned();
    let bin = env!("CARGO_BIN_EXE_cargo-capspec");
    let Some(summary) = python(&["stdio", bin, "capspec", "serve", "--surface", "tools", "--root", &root]) else { return };
    assert_notes(&summary, 1);
    // The upstream's JSON-RPC error passes through the gateway as an
    // `upstream_error` result keeping its message, code and data.
    let error = &summary["missing"]["result"];
    assert_eq!(error["error"], true, "{summary:#}");
    assert_eq!(
        error["structured"],
        json!({"error": "upstream_error", "message": "`notes` answered the call with an error: no note 999", "capability": "notes.read_note", "jsonrpcCode": -32602, "data": {"code": "not_found", "retryable": false, "noteId": 999}}),
        "{summary:#}"
    );
    assert_same_surface(&rmcp_summary().unwrap()["listing"], &summary["listing"], &CATEGORIES);
    assert_same_identity(&summary);
}

#[test]
fn an_rmcp_server_goes_native_keeps_its_routes_and_its_gate_tells_the_truth() {
    let dir = TempDir::copy_of("migrate-native", &fixture("rmcp"));
    copy_dir(&fixture("native"), dir.path());
    let manifest = dir.path().join("Cargo.toml");
    let checkout = repo_root().to_string_lossy().into_owned();
    std::fs::write(&manifest, std::fs::read_to_string(&manifest).unwrap().replace("{checkout}", &checkout)).unwrap();
    let lib = dir.read("src/lib.rs");
    // As the guide says: sync once before the library names `generated`.
    dir.write("src/lib.rs", lib.replacen("pub mod generated;\n", "", 1));
    ok(capspec(dir.path(), &["sync"]), "the first sync");
    dir.write("src/lib.rs", &lib);

    // As the guide says: `cargo test` records which capabilities its tests
    // ran, and `check` reads that record.
    dir.write(".cargo/config.toml", "[env]\nCAPSPEC_COVERAGE_DIR = { value = \".capspec/coverage\", relative = true, force = true }\n");
    // The record's run start is known to 1/100 s: the edits above come before it.
    std::thread::sleep(std::time::Duration::from_millis(200));
    ok(run(dir.path(), &cargo(), &["test"]), "cargo test");
    // The store's test calls `store.read_note(…)`: that is not the tool.
    let out = capspec(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("error[coverage/untested]: no test ran `notes.read_note`"), "{said}");
    assert!(said.contains("capspec: 1 error, 0 warnings"), "only that: {said}");

    dir.write("tests/read.rs", READ_TEST);
    // The record's run start is known to 1/100 s: the edits above come before it.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let tested = ok(run(dir.path(), &cargo(), &["test"]), "cargo test");
    assert!(tested.contains("a_note_is_read_back_and_a_missing_one_is_an_error ... ok") && tested.contains("the_store_adds_and_lists ... ok"), "{tested}");
    clean(capspec(dir.path(), &["check"]), "check");

    ok(run(dir.path(), &cargo(), &["build", "--quiet"]), "the native server builds");
    dir.write("token", "migrate-token\n");
    let token = dir.path().join("token");
    let mut child = Command::new(target(dir.path()).join("debug/notes-server"))
        .args(["127.0.0.1:0".as_ref(), token.as_os_str()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = KillOnDrop(child);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stderr), &mut line).unwrap();
    let url = line.trim().rsplit("serving MCP at ").next().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{line}");
    // The app's own route is still there.
    let health = Command::new("python3").args(["-c", &format!("import urllib.request;print(urllib.request.urlopen('{}/health').read().decode())", url.trim_end_matches("/mcp"))]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&health.stdout).trim(), "ok", "{}", text(&health));
    if let Some(summary) = python(&["http", &url, "migrate-token"]) {
        assert_notes(&summary, 1);
        // `CapError::with_code(…).with_data(…)` on a host `with_json_rpc_errors`:
        // the JSON-RPC error the rmcp server answered, code and data alike.
        assert_eq!(summary["missing"], missing_note_error(), "{summary:#}");
        assert_same_surface(&rmcp_summary().unwrap()["listing"], &summary["listing"], &CATEGORIES);
        assert_same_identity(&summary);
    }
    drop(server);
}

const READ_TEST: &str = r##"//! `notes.read_note` through `invoke`.
use capspec::testing::block_on;
use capspec::{Gate, Mode, Registry, Run};
use notes_server::{NotesStore, generated};
use serde_json::json;

#[test]
fn a_note_is_read_back_and_a_missing_one_is_an_error() {
    let registry = Registry::new(generated::MODULES).unwrap();
    let mounted = registry.mount_all();
    let store = NotesStore::default();
    store.add_note("a".into(), None);
    let run = Run::new(Gate::headless(Mode::Default, "notes test")).with(store);
    assert_eq!(block_on(mounted.invoke(&run, "notes.read_note", json!({"noteId": 1}))).unwrap(), "# a\n\ntag: none\n");
    assert!(block_on(mounted.invoke(&run, "notes.read_note", json!({"noteId": 9}))).is_err());
}
"##;
