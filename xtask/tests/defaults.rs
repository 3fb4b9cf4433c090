//! Spec defaults are applied, not re-typed: a host built against the
//! generated bindings sees the spec's default both through `invoke` and in
//! its own `Args`, and changing the default in the spec changes what the
//! impl receives after `sync` and a rebuild — with no edit to the impl.
//!
//! The host is a small Cargo crate in a temp directory that depends on this
//! repo's runtime by path and reuses the workspace's `Cargo.lock`, offline,
//! with the target directory the code-first end-to-end tests use.

use std::process::Command;

use capspec_testkit::{TempDir, repo_root as repo, text};

fn spec(limit: i64, order: &str) -> String {
    format!(
        "module: pager\ndescription: Pages.\ncapabilities:\n  - name: list_items\n    category: read\n    description: List items.\n    input:\n      type: object\n      properties:\n        limit: {{ type: integer, minimum: 1, default: {limit} }}\n        order: {{ type: string, enum: [asc, desc], default: {order} }}\n        tags: {{ type: array, items: {{ type: string }}, default: [a, b] }}\n"
    )
}

const HOST: &str = r#"#[path = "generated/mod.rs"]
mod generated;

use capspec::{CapResult, Gate, Mode, Registry, Run, capability};
use generated::pager::list_items;

/// The impl reads its arguments as they are: no default is written here.
#[capability(generated::pager::list_items)]
async fn list_items(_run: &Run, args: list_items::Args) -> CapResult<String> {
    Ok(format!("{} {:?} {:?}", args.limit, args.order, args.tags))
}

fn main() {
    let registry = Registry::new(&[generated::pager::MODULE]).expect("registry builds");
    let run = Run::new(Gate::headless(Mode::Auto, "defaults test"));
    let invoked = capspec::testing::block_on(registry.mount_all().invoke(&run, "list_items", serde_json::json!({}))).expect("invoke succeeds");
    let direct: list_items::Args = serde_json::from_str("{}").expect("empty args decode");
    println!("invoke: {}", invoked.as_str().unwrap());
    println!("serde: {} {:?} {:?}", direct.limit, direct.order, direct.tags);
}
"#;

fn run(dir: &TempDir, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir.path())
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TARGET_DIR", repo().join("target/code-first-e2e"))
        .output()
        .expect("command runs");
    assert!(out.status.success(), "{program} {args:?}:\n{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_changed_spec_default_reaches_the_impl_without_a_code_edit() {
    let dir = TempDir::new("defaults");
    dir.write("capspec.toml", "specs = \"specs\"\n");
    dir.write("specs/pager.yaml", spec(50, "asc"));
    dir.write(
        "Cargo.toml",
        format!(
            "[package]\nname = \"pager\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[workspace]\n\n[dependencies]\ncapspec = {{ path = {:?} }}\nserde_json = \"1\"\n",
            repo().join("runtime").to_string_lossy()
        ),
    );
    std::fs::copy(repo().join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    dir.write("src/main.rs", HOST);
    let xtask = env!("CARGO_BIN_EXE_xtask");
    let root = dir.path().to_string_lossy().into_owned();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());

    run(&dir, xtask, &["sync", "--no-build", "--root", &root]);
    let first = run(&dir, &cargo, &["run", "--quiet"]);
    assert_eq!(first, "invoke: 50 Asc [\"a\", \"b\"]\nserde: 50 Asc [\"a\", \"b\"]\n");

    dir.write("specs/pager.yaml", spec(75, "desc"));
    run(&dir, xtask, &["sync", "--no-build", "--root", &root]);
    let second = run(&dir, &cargo, &["run", "--quiet"]);
    assert_eq!(second, "invoke: 75 Desc [\"a\", \"b\"]\nserde: 75 Desc [\"a\", \"b\"]\n", "the new default reaches the impl; src/main.rs is unchanged");
}
