//! Code-first specs through the real command line: `sync` and `check` build
//! the `[code_first]` packages, export their `#[derive(Capability)]` specs
//! and put them in the generated files; a package that does not compile
//! does not stop the YAML-derived files from being regenerated.
//!
//! The projects are small Cargo crates in temp directories. The one that
//! builds depends on this repo's runtime by path and reuses the workspace's
//! `Cargo.lock`, offline, with its own target directory under `target/` (so
//! it never waits on the lock of the build running these tests).

use std::process::{Command, Output};

use capspec_testkit::{TempDir, repo_root as repo, text};

/// A temp project driven through the real binary.
struct Project(TempDir);

impl Project {
    fn new(name: &str) -> Project {
        Project(TempDir::new(&format!("cf-{name}")))
    }

    fn write(&self, rel: &str, text: &str) {
        self.0.write(rel, text);
    }

    fn read(&self, rel: &str) -> String {
        self.0.read(rel)
    }

    fn xtask(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(args)
            .arg("--root")
            .arg(self.0.path())
            .env("CARGO_NET_OFFLINE", "true")
            .env("CARGO_TARGET_DIR", repo().join("target/code-first-e2e"))
            .output()
            .expect("run xtask")
    }
}

const CONFIG: &str = "specs = \"specs\"\n\n[code_first]\npackages = [\"pinboard\"]\n";
const SPEC: &str = "module: board\ndescription: A pinboard.\ncapabilities:\n  - name: list_pins\n    category: read\n    description: List the pins.\n";

#[test]
fn sync_exports_a_derived_spec_into_the_catalog_and_check_passes() {
    let p = Project::new("builds");
    p.write("capspec.toml", CONFIG);
    p.write("specs/board.yaml", SPEC);
    p.write(
        "Cargo.toml",
        &format!(
            "[package]\nname = \"pinboard\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n\n[dependencies]\ncapspec = {{ path = {:?} }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\nschemars = \"1\"\n",
            repo().join("runtime").to_string_lossy()
        ),
    );
    std::fs::copy(repo().join("Cargo.lock"), p.0.path().join("Cargo.lock")).unwrap();
    p.write(
        "src/lib.rs",
        r#"use capspec::{capability, CapResult, Capability, Run};

#[capability(generated::board::list_pins)]
async fn list_pins(_run: &Run, _args: generated::board::list_pins::Args) -> CapResult<Vec<String>> {
    Ok(vec![])
}

#[path = "generated/mod.rs"]
mod generated;

/// Pin a note to the board.
#[derive(serde::Deserialize, schemars::JsonSchema, Capability)]
#[capability(module = "board", category = "write", description = "Pin a note to the board.")]
pub struct PinNote {
    /// What the pin says.
    pub text: String,
}

#[capability]
async fn pin_note(_run: &Run, args: PinNote) -> CapResult<String> {
    Ok(args.text)
}
"#,
    );
    p.write("tests/board.rs", "#[test]\nfn pins() {\n    assert_eq!([\"list_pins\", \"pin_note\"].len(), 2);\n}\n");
    // The bindings do not exist yet: a first sync with the crate not
    // building still writes them (and says the export failed) …
    let first = p.xtask(&["sync"]);
    assert_eq!(first.status.code(), Some(1), "{}", text(&first));
    assert!(text(&first).contains("cannot export the code-first specs of `pinboard`"), "{}", text(&first));
    assert!(p.read("catalog/board.md").contains("list_pins"));
    // … after which the crate builds, and the derived spec joins.
    let second = p.xtask(&["sync"]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let catalog = p.read("catalog/board.md");
    assert!(catalog.contains("- write `pin_note({text /* What the pin says. */})`: Pin a note to the board."), "{catalog}");
    assert!(p.read("specs/categories.snap").contains("board.pin_note write"));
    assert!(p.read("specs/code-first.json").contains("\"rust_type\":\"pinboard::PinNote\""));
    let check = p.xtask(&["check"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
    assert!(text(&check).contains("capspec: no findings"), "{}", text(&check));

    // Reclassifying the derive is drift that only the build can see.
    let lib = p.read("src/lib.rs").replace("category = \"write\"", "category = \"read\"");
    p.write("src/lib.rs", &lib);
    let stale = p.xtask(&["check"]);
    assert_eq!(stale.status.code(), Some(1), "{}", text(&stale));
    assert!(text(&stale).contains("board.pin_note: write → read (loosens the gate)"), "{}", text(&stale));
    // `--no-build` trusts the record, which still matches the other files.
    assert_eq!(p.xtask(&["check", "--no-build"]).status.code(), Some(0));
}

#[test]
fn a_host_that_does_not_compile_does_not_block_sync() {
    let p = Project::new("broken");
    p.write("capspec.toml", CONFIG);
    p.write("specs/board.yaml", SPEC);
    p.write("Cargo.toml", "[package]\nname = \"pinboard\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n");
    p.write("src/lib.rs", "pub fn broken( {}\n");
    let out = p.xtask(&["sync"]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("warning: cannot export the code-first specs of `pinboard`: `cargo test -p pinboard --lib` failed"), "{all}");
    assert!(all.contains("src/lib.rs:1:"), "the compiler's error is shown with its location: {all}");
    assert!(all.contains("keeps the code-first specs recorded at its last export"), "{all}");
    assert!(p.read("catalog/board.md").contains("list_pins"), "YAML-derived files are regenerated");
    assert!(p.read("specs/code-first.json").contains("\"capabilities\": [\n]"), "an empty record: nothing was ever exported");

    let check = p.xtask(&["check", "--format", "json"]);
    assert_eq!(check.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).expect("stdout stays one JSON object");
    let finding = report["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "code-first/export").expect("an export finding");
    assert_eq!((finding["file"].as_str(), finding["line"].as_u64()), (Some("capspec.toml"), Some(4)));
}
