//! The README's and the book's `sh` blocks that run agent-host, run as
//! written: `cargo run -p agent-host -- ARGS` is this test's agent-host
//! binary with ARGS, from the repository's root. `cli/tests/book.rs` runs
//! the other `sh` blocks and holds every `sh,ignore` block to its stated
//! reason.

use std::io::Write;
use std::process::{Command, Stdio};

use capspec_testkit::{TempDir, repo_root};

const RUN: &str = "cargo run -p agent-host -- ";

/// What an MCP client sends a `serve` over stdio: initialize, then list.
const CLIENT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"book","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    "\n",
);

/// The `sh` blocks (not `sh,ignore`) of `text` that run agent-host.
fn agent_host_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```sh\n") {
        let body = &rest[start + "```sh\n".len()..];
        let end = body.find("```").expect("a closed block");
        if body[..end].contains(RUN) {
            out.push(&body[..end]);
        }
        rest = &body[end + 3..];
    }
    out
}

#[test]
fn the_shell_blocks_that_run_agent_host_do_what_they_say() {
    let binary = env!("CARGO_BIN_EXE_agent-host");
    let workspace = TempDir::new("book-ws");
    let mut ran = 0;
    for page in ["README.md", "docs/src/getting-started.md"] {
        let text = std::fs::read_to_string(repo_root().join(page)).unwrap();
        for block in agent_host_blocks(&text) {
            for line in block.lines().filter(|l| !l.trim().is_empty()) {
                let args = line.strip_prefix(RUN).unwrap_or_else(|| panic!("{page}: every line of an agent-host block runs agent-host: {line}"));
                // The page's scratch workspace, made a temporary directory.
                let args = args.replace("/tmp/ws", &workspace.path().display().to_string());
                let words = shell_words(&args);
                let serve = words.first().is_some_and(|w| w == "serve");
                let mut child = Command::new(binary)
                    .args(&words)
                    .current_dir(repo_root())
                    .stdin(if serve { Stdio::piped() } else { Stdio::null() })
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                if serve {
                    // A client initializes, lists the tools and closes.
                    child.stdin.take().unwrap().write_all(CLIENT.as_bytes()).unwrap();
                }
                let out = child.wait_with_output().unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout);
                assert!(out.status.success(), "{page}: `{line}` failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
                if serve {
                    assert!(stdout.contains(r#""id":2,"result":{"tools":["#), "{page}: `{line}` listed no tools: {stdout}");
                }
                ran += 1;
            }
        }
    }
    // The README's tour and serve, the guide's tour, catalog and two calls.
    assert!(ran >= 6, "ran {ran} agent-host commands from the pages");
    assert_eq!(std::fs::read_to_string(workspace.path().join("a.txt")).unwrap(), "hi", "the guide's write_file call wrote its file");
}

/// A command line's words: split on spaces, `'…'` quoting kept whole.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}
