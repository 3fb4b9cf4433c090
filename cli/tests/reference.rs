//! The book's reference pages (`docs/src/reference/`) are printed from the
//! code's own tables (rules and their explanations, error codes, config
//! keys, commands and flags); this test fails when a committed page
//! differs, and `CAPSPEC_UPDATE_DOCS=1` rewrites them.

use capspec_testkit::repo_root;

#[test]
fn the_reference_pages_are_what_the_code_says() {
    let update = std::env::var_os("CAPSPEC_UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for (path, text) in capspec_cli::reference::pages() {
        let file = repo_root().join("docs/src").join(path);
        if update {
            std::fs::write(&file, &text).unwrap();
        } else if std::fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
            stale.push(path);
        }
    }
    assert!(stale.is_empty(), "{stale:?} differ from what the code says; run `CAPSPEC_UPDATE_DOCS=1 cargo test -p capspec-cli --test reference` and commit them");
}

#[test]
fn help_is_one_line_per_command_in_the_order_of_use_and_names_no_document_users_lack() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-capspec")).args(["capspec", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<&str> = help.split("Commands:\n").nth(1).unwrap().split("\n\n").next().unwrap().lines().collect();
    for line in &commands {
        assert!(line.chars().count() <= 80, "over 80 columns: {line:?}");
    }
    let names: Vec<&str> = commands.iter().map(|l| l.split_whitespace().next().unwrap()).filter(|n| *n != "help").collect();
    // The order of use (DESIGN's list, where `audit` comes once the audit log does).
    let order = ["init", "check", "sync", "coverage", "scaffold", "import", "serve", "auth", "audit", "policy", "explain"];
    let expected: Vec<&str> = order.iter().copied().filter(|n| names.contains(n)).collect();
    assert_eq!(names, expected, "commands out of the order of use");
    assert!(names.len() >= 10, "{names:?}");
    // Every command's and subcommand's help, as the reference page prints it.
    let cli = capspec_cli::reference::pages().into_iter().find(|(p, _)| *p == "reference/cli.md").unwrap().1;
    for doc in ["DESIGN", "§"] {
        assert!(!cli.contains(doc), "a help text refers to `{doc}`, which users do not have");
    }
}

/// A finding's advice names a command that exists: run as `cargo capspec`
/// (a project with no xtask yet, as the migration guide's first step), it
/// says `cargo capspec sync`, not `cargo xtask sync`.
#[test]
fn findings_name_the_command_that_ran() {
    let dir = capspec_testkit::TempDir::new("advice");
    dir.write("capspec.toml", "specs = \"specs\"\n");
    dir.write("specs/notes.yaml", "module: notes\ndescription: Notes.\ncapabilities:\n  - { name: list, category: read, description: List the notes. }\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-capspec")).args(["capspec", "check", "--root"]).arg(dir.path()).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("is missing; run `cargo capspec sync`") && !said.contains("cargo xtask"), "{said}");
}
