//! The README's and the book's examples, run. Console blocks are trycmd
//! cases (command, exit code, output) run from the repository's root with
//! `cargo capspec` as installed; every `capspec.toml` block (a whole file
//! or a section of one) loads through the real config reader without a
//! config error. The Rust blocks are doctests of `docs/crate`.

use capspec_testkit::{TempDir, repo_root};

/// The Markdown files whose examples run: the README and every chapter.
fn pages() -> Vec<std::path::PathBuf> {
    let mut pages = vec![repo_root().join("README.md")];
    let mut chapters: Vec<_> = std::fs::read_dir(repo_root().join("docs/src")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "md")).collect();
    chapters.sort();
    pages.extend(chapters);
    pages
}

/// The fenced blocks of `text` whose info string is `lang`.
fn blocks<'t>(text: &'t str, lang: &str) -> Vec<&'t str> {
    let mut out = Vec::new();
    let mut rest = text;
    let open = format!("```{lang}\n");
    while let Some(start) = rest.find(&open) {
        let body = &rest[start + open.len()..];
        let end = body.find("```").expect("a closed block");
        out.push(&body[..end]);
        rest = &body[end + 3..];
    }
    out
}

#[test]
fn the_console_examples_print_what_they_show() {
    std::env::set_current_dir(repo_root()).unwrap();
    let cases = trycmd::TestCases::new();
    cases.register_bin("cargo", std::path::Path::new(env!("CARGO_BIN_EXE_cargo-capspec")));
    let mut count = 0;
    for page in pages() {
        let n = blocks(&std::fs::read_to_string(&page).unwrap(), "console").len();
        if n > 0 {
            cases.case(&page);
            count += n;
        }
    }
    assert!(count >= 3, "the README's tour and the gate chapter show console examples; found {count}");
    cases.run();
}

#[test]
fn every_capspec_toml_example_loads_through_the_config_reader() {
    let mut count = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for block in blocks(&text, "toml") {
            if block.contains("[package]") || block.contains("[dependencies]") {
                continue; // a Cargo manifest
            }
            if block.lines().any(|l| l.trim() == "[env]" || l.trim() == "[alias]") {
                continue; // a .cargo/config.toml
            }
            let config = if block.lines().any(|l| l.starts_with("specs =")) { block.to_string() } else { format!("specs = \"specs\"\n{block}") };
            let dir = TempDir::new("book-toml");
            dir.write("capspec.toml", &config);
            dir.write("specs/notes.yaml", capspec_testkit::MINIMAL_SPEC);
            let report = capspec_codegen::check(dir.path()).expect("check runs");
            let wrong: Vec<_> = report.findings.iter().filter(|f| ["config/parse", "config/unknown-key", "config/invalid-value", "config/allow-invalid", "config/allow-missing-reason"].contains(&f.rule.as_str())).map(|f| format!("{}: {}", f.rule, f.message)).collect();
            assert!(wrong.is_empty(), "{}: a capspec.toml example the reader refuses:\n{config}\n{wrong:#?}", page.display());
            count += 1;
        }
    }
    assert!(count >= 5, "found {count} capspec.toml examples");
    eprintln!("{count} capspec.toml examples load");
}

/// Every `sh` block runs, or says on the page why it does not: a block
/// fenced `sh,ignore` opens with `# not run by the book's tests: <why>`.
/// A block that runs agent-host is run by `examples/agent-host/tests/
/// book.rs`; every other `sh` block runs here, in order per page, in a
/// scratch directory where `cargo` is the `cargo capspec` under test.
#[test]
fn every_shell_block_runs_or_says_why_not() {
    const WHY: &str = "# not run by the book's tests: ";
    let bin = TempDir::new("book-sh-bin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_cargo-capspec"), bin.path().join("cargo")).unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let (mut ran, mut ignored) = (0, 0);
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(repo_root()).unwrap().display().to_string();
        for line in text.lines().filter(|l| l.trim_start().starts_with("```")) {
            let info = line.trim_start().trim_start_matches('`');
            assert!(!["bash", "shell", "zsh"].iter().any(|s| info.starts_with(s)), "{name}: fence shell blocks as `sh` (run) or `sh,ignore` (with the reason), not `{info}`");
            assert!(!info.starts_with("sh") || info == "sh" || info == "sh,ignore", "{name}: `{info}`: a shell block is `sh` or `sh,ignore`");
        }
        for block in blocks(&text, "sh,ignore") {
            let why = block.lines().next().and_then(|l| l.trim_start().strip_prefix(WHY)).unwrap_or_default();
            assert!(why.trim().len() > 10, "{name}: an `sh,ignore` block opens with `{WHY}<the reason>`:\n{block}");
            ignored += 1;
        }
        let dir = TempDir::new("book-sh");
        for block in blocks(&text, "sh") {
            if block.contains("cargo run -p agent-host") {
                continue; // examples/agent-host/tests/book.rs
            }
            let out = std::process::Command::new("sh").arg("-ec").arg(block).current_dir(dir.path()).env("PATH", &path).output().unwrap();
            assert!(out.status.success(), "{name}: a shell block failed:\n{block}\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            ran += 1;
        }
    }
    assert!(ran >= 1 && ignored >= 10, "ran {ran} shell blocks, {ignored} say why not");
    eprintln!("{ran} shell blocks run here, {ignored} say why not");
}
