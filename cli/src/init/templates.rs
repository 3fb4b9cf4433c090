//! What `init` writes into a project that has none of it: the config, the
//! example module with its impl and test, the freshness test, the xtask
//! and the CI workflow.

pub(super) const CONFIG: &str = r#"# capspec: this package's capabilities are declared in specs/; `cargo xtask sync`
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

pub(super) const SPEC: &str = r#"module: example
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

pub(super) const LIB: &str = r#"//! This package's capabilities: declared in `specs/`, generated into
//! `src/generated` by `cargo xtask sync`, implemented in `src/capabilities`.

pub mod capabilities;
pub mod generated;
"#;

/// `src/lib.rs` beside a project's own modules (no example).
pub(super) const LIB_WITHOUT_EXAMPLE: &str = r#"//! This package's capabilities: declared in `specs/`, generated into
//! `src/generated` by `cargo xtask sync`.

pub mod generated;
"#;

pub(super) const EXAMPLE_IMPL: &str = r##"//! The example capabilities of `specs/example.yaml`. Each `#[capability]` fn
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

pub(super) const FRESHNESS_TEST: &str = r#"//! `cargo test` fails when a generated file drifts from `specs/`: run
//! `cargo xtask sync` and commit the result.

#[test]
fn generated_files_are_fresh() {
    capspec_codegen::assert_fresh(env!("CARGO_MANIFEST_DIR"));
}
"#;

pub(super) const XTASK_MANIFEST: &str = r#"[package]
name = "xtask"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
{cli}
"#;

pub(super) const XTASK_MAIN: &str = r#"//! `cargo xtask`: the capspec command line (sync, check, scaffold, coverage, import).

fn main() -> std::process::ExitCode {
    capspec_cli::main()
}
"#;

pub(super) const WORKFLOW: &str = r#"# Written by `cargo capspec init`: fail on drift, unimplemented or untested
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
