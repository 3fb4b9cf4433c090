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

    /// The crate `pinboard`, depending on this repo's runtime by path (and
    /// on `more`), with the workspace's `Cargo.lock`.
    fn pinboard(&self, more: &str) {
        let runtime = repo().join("runtime");
        self.write(
            "Cargo.toml",
            &format!(
                "[package]\nname = \"pinboard\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n\n[dependencies]\ncapspec = {{ path = {:?} }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\nschemars = \"1\"\n{more}",
                runtime.to_string_lossy()
            ),
        );
        std::fs::copy(repo().join("Cargo.lock"), self.0.path().join("Cargo.lock")).unwrap();
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
    p.pinboard("");
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

/// Count the pins.
#[derive(serde::Deserialize, schemars::JsonSchema, Capability)]
#[capability(module = "board", category = "read")]
pub struct CountPins {}

/// How many pins there are.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct PinCount {
    pub count: u32,
}

#[capability]
async fn count_pins(_run: &Run, _args: CountPins) -> CapResult<PinCount> {
    Ok(PinCount { count: 0 })
}

/// Clear the board.
#[derive(serde::Deserialize, schemars::JsonSchema, Capability)]
#[capability(module = "board", category = "write")]
pub struct ClearBoard {}

/// Serialize only: no schema to publish.
#[derive(serde::Serialize)]
pub struct Cleared {
    pub removed: u32,
}

#[capability]
async fn clear_board(_run: &Run, _args: ClearBoard) -> CapResult<Cleared> {
    Ok(Cleared { removed: 0 })
}
"#,
    );
    p.write("tests/board.rs", "#[test]\nfn pins() {\n    assert_eq!([\"list_pins\", \"pin_note\", \"count_pins\", \"clear_board\"].len(), 4);\n}\n");
    // The bindings do not exist yet: a first sync with the crate not
    // building still writes them (and says the export failed) …
    let first = p.xtask(&["sync"]);
    assert_eq!(first.status.code(), Some(1), "{}", text(&first));
    assert!(text(&first).contains("cannot export the code-first specs of `pinboard`"), "{}", text(&first));
    assert!(p.read("catalog/board.md").contains("list_pins"));
    // … after which the crate builds, and the derived spec joins.
    let second = p.xtask(&["sync"]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    // The build the export starts shows cargo's progress as it goes.
    let progress = String::from_utf8_lossy(&second.stderr);
    assert!(progress.contains("Compiling pinboard") && progress.contains("Finished `test` profile"), "{progress}");
    let catalog = p.read("catalog/board.md");
    assert!(catalog.contains("- write `pin_note({text /* What the pin says. */}) → string`: Pin a note to the board."), "{catalog}");
    assert!(p.read("specs/categories.snap").contains("board.pin_note write"));
    assert!(p.read("specs/code-first.json").contains("\"rust_type\":\"pinboard::PinNote\""));
    // Each output schema is its fn's return type's (schemars); a type that
    // is not JsonSchema publishes none.
    let json: serde_json::Value = serde_json::from_str(&p.read("catalog/capabilities.json")).unwrap();
    let output = |name: &str| json["modules"][0]["capabilities"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("{name}: {json:#}"))["output_schema"].clone();
    // As rmcp serves a type's schema (DESIGN §2, "Schemas as declared").
    assert_eq!(output("pin_note"), serde_json::json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"}));
    let count = output("count_pins");
    assert_eq!((count["type"].as_str(), count["properties"]["count"]["type"].as_str(), count["required"].clone()), (Some("object"), Some("integer"), serde_json::json!(["count"])), "{count:#}");
    assert_eq!(output("clear_board"), serde_json::Value::Null);
    // Nothing drifted and every capability is implemented; which tests
    // ran them waits for the project's own `cargo test` (not run here).
    let check = p.xtask(&["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    let said = text(&check);
    assert!(said.lines().filter(|l| l.starts_with("error[")).all(|l| l.starts_with("error[coverage/untested]") || l.starts_with("error[coverage/stale]")), "{said}");

    // Reclassifying the derive is drift that only the build can see.
    let lib = p.read("src/lib.rs").replace("category = \"write\"", "category = \"read\"");
    p.write("src/lib.rs", &lib);
    let stale = p.xtask(&["check"]);
    assert_eq!(stale.status.code(), Some(1), "{}", text(&stale));
    assert!(text(&stale).contains("board.pin_note: write → read (loosens the gate)"), "{}", text(&stale));
    // `--no-build` trusts the record, which still matches the other files:
    // no drift, only the test verdict the project's `cargo test` gives.
    let trusted = p.xtask(&["check", "--no-build"]);
    assert!(!text(&trusted).contains("error[drift/") && !text(&trusted).contains("error[code-first/"), "{}", text(&trusted));
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

/// `cargo xtask` runs under `cargo run`, which gives it the xtask's
/// `CARGO_PKG_*` and `CARGO_MANIFEST_*` variables. The export's own cargo
/// must not pass them on: a build script that reads one (ring's does)
/// would run again with the xtask's values, and the project's next
/// `cargo test` would rebuild it and everything after it.
#[test]
fn the_export_leaves_the_projects_next_cargo_test_nothing_to_rebuild() {
    let p = Project::new("env");
    p.write("capspec.toml", CONFIG);
    p.write("specs/board.yaml", "module: board\ndescription: A pinboard.\ncapabilities: []\n");
    p.pinboard("reads-env = { path = \"reads-env\" }\n");
    p.write("reads-env/Cargo.toml", "[package]\nname = \"reads-env\"\nversion = \"0.1.0\"\nedition = \"2024\"\n");
    p.write("reads-env/build.rs", "fn main() {\n    println!(\"cargo:rerun-if-env-changed=CARGO_PKG_NAME\");\n    println!(\"cargo:rerun-if-env-changed=CARGO_MANIFEST_DIR\");\n}\n");
    p.write("reads-env/src/lib.rs", "");
    p.write(
        "src/lib.rs",
        "use capspec::{capability, CapResult, Capability, Run};\n\n/// Pin a note.\n#[derive(serde::Deserialize, schemars::JsonSchema, Capability)]\n#[capability(module = \"board\", category = \"write\")]\npub struct PinNote {\n    /// What the pin says.\n    pub text: String,\n}\n\n#[capability]\nasync fn pin_note(_run: &Run, args: PinNote) -> CapResult<String> {\n    Ok(args.text)\n}\n",
    );
    let cargo = |args: &[&str]| {
        Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(args)
            .current_dir(p.0.path())
            .env("CARGO_NET_OFFLINE", "true")
            .env("CARGO_TARGET_DIR", repo().join("target/code-first-e2e"))
            .env_remove("CARGO_PKG_NAME")
            .env_remove("CARGO_MANIFEST_DIR")
            .output()
            .unwrap()
    };
    let built = cargo(&["test", "--no-run"]);
    assert!(built.status.success(), "{}", text(&built));
    // As `cargo run -p xtask` starts it.
    let synced = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["sync", "--root"])
        .arg(p.0.path())
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TARGET_DIR", repo().join("target/code-first-e2e"))
        .env("CARGO_PKG_NAME", "xtask")
        .env("CARGO_MANIFEST_DIR", repo().join("xtask"))
        .output()
        .unwrap();
    assert!(synced.status.success(), "{}", text(&synced));
    assert!(p.read("specs/code-first.json").contains("pin_note"), "the export ran");
    let again = cargo(&["test", "--no-run"]);
    assert!(again.status.success(), "{}", text(&again));
    let rebuilt: Vec<&str> = std::str::from_utf8(&again.stderr).unwrap().lines().filter(|l| l.trim_start().starts_with("Compiling")).collect();
    assert!(rebuilt.is_empty(), "the next `cargo test` rebuilt what the export's build changed:\n{}", rebuilt.join("\n"));
}

/// A derive behind a cargo feature (DESIGN §2): `feature = "vector"` on it,
/// the struct and its impl behind the same `cfg`. `[check] features`
/// builds the export with the feature on too, so the spec joins, names its
/// feature, and `check` holds the project to both builds.
#[test]
fn a_derive_behind_a_feature_is_exported_from_the_build_that_has_it() {
    let p = Project::new("feature");
    p.write("capspec.toml", &format!("{CONFIG}\n[check]\nfeatures = [[], [\"vector\"]]\n"));
    p.write("specs/board.yaml", SPEC);
    p.pinboard("\n[features]\nvector = []\n");
    p.write(
        "src/lib.rs",
        r#"use capspec::{capability, CapResult, Run};

#[capability(generated::board::list_pins)]
async fn list_pins(_run: &Run, _args: generated::board::list_pins::Args) -> CapResult<Vec<String>> {
    Ok(vec![])
}

#[path = "generated/mod.rs"]
mod generated;

#[cfg(feature = "vector")]
mod vector {
    use capspec::{capability, CapResult, Capability, Run};

    /// Find the pins nearest in meaning.
    #[derive(serde::Deserialize, schemars::JsonSchema, Capability)]
    #[capability(module = "board", category = "read", feature = "vector")]
    pub struct FindSimilar {
        /// What to look for.
        pub text: String,
    }

    #[capability]
    async fn find_similar(_run: &Run, args: FindSimilar) -> CapResult<String> {
        Ok(args.text)
    }
}
"#,
    );
    // The first sync writes the bindings the crate needs to compile.
    let _ = p.xtask(&["sync"]);
    let second = p.xtask(&["sync"]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let json: serde_json::Value = serde_json::from_str(&p.read("catalog/capabilities.json")).unwrap();
    let similar = json["modules"][0]["capabilities"].as_array().unwrap().iter().find(|c| c["name"] == "find_similar").cloned().unwrap_or_else(|| panic!("the feature build's derive joins: {json:#}"));
    assert_eq!(similar["feature"], "vector", "{similar:#}");
    assert!(p.read("specs/code-first.json").contains("\"feature\":\"vector\""));
    assert!(p.read("src/generated/board.rs").contains("#[cfg(feature = \"vector\")]"));
    // Nothing drifted, and the impl counts where its feature is on.
    let check = p.xtask(&["check"]);
    let said = text(&check);
    assert!(said.lines().filter(|l| l.starts_with("error[")).all(|l| l.starts_with("error[coverage/untested]") || l.starts_with("error[coverage/stale]")), "{said}");
}
