//! Run-time coverage (DESIGN §5): which capabilities a test run reached.
//!
//! A capability is *tested* only when a test ran it through the call path,
//! so the observation is made here, on the ladder's last step, and nowhere
//! else: a name that merely appears in a test cannot reach this code.
//!
//! It records only where all of these hold, else it costs one atomic load:
//! - `CAPSPEC_COVERAGE_DIR` names a directory (a project's
//!   `.cargo/config.toml` sets it for every process cargo starts);
//! - the process descends from a `cargo test` (or `cargo nextest`): the
//!   nearest `cargo` among its ancestors was started with that subcommand,
//!   so `cargo run`, `cargo bench` and a deployed server record nothing;
//! - the process is not a benchmark (`--bench`).
//!
//! Each process writes one file, `<dir>/<run>/<binary>-<pid>.jsonl`, where
//! `<run>` names that `cargo test` invocation (its pid and start time). The
//! first line says when the run started, which package the test binary
//! belongs to (`CARGO_MANIFEST_DIR`) and which binary it is; each further
//! line is one `(capability, test)` pair, written once. The test is the
//! calling thread's name, which libtest sets to the test's path; a call on
//! a thread of another name (a runtime's worker) or in a child process a
//! test started is recorded with no test name, the thread or process it
//! ran on said instead. The first file of a top-level run removes earlier
//! runs, so the directory holds the last `cargo test` (and any still
//! running, or started by its tests).
//!
//! That first process also writes `<dir>/<run>/inputs.json`: the digest of
//! every file of the project as the run saw it (the project is the
//! directory holding `.capspec/coverage`; build output, hidden directories
//! and `node_modules` are left out), and when it looked. `check` decides
//! freshness by content: the record is stale when an input differs from
//! what the run saw, or changed between the run's start and that look
//! (whether the run's binaries were built from it cannot be known then).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The environment variable naming the record directory.
pub const DIR_VAR: &str = "CAPSPEC_COVERAGE_DIR";

struct Recorder {
    dir: PathBuf,
    header: String,
    /// The test binary's name (its file stem without cargo's hash).
    binary: String,
    /// This process is not the test binary but a process one of its
    /// tests started (its name).
    via: Option<String>,
    file: Mutex<Option<std::fs::File>>,
    /// A `cargo test` started by a test of another: it removes no run.
    nested: bool,
}

static RECORDER: OnceLock<Option<Recorder>> = OnceLock::new();

thread_local! {
    /// The capabilities this thread has recorded already: a hit costs a
    /// hash of the name and no lock.
    static SEEN: std::cell::RefCell<HashSet<Box<str>>> = std::cell::RefCell::new(HashSet::new());
}

thread_local! {
    /// The test a thread works for when capspec started it for a test's
    /// call (a guest's engine and call threads).
    static BEHALF: std::cell::RefCell<Option<std::sync::Arc<str>>> = const { std::cell::RefCell::new(None) };
}

/// The test the current thread works for, to hand to a thread capspec
/// starts for it ([`Inherited::enter`]); nothing when no run records.
#[cfg(feature = "quickjs")]
pub(crate) fn inherit() -> Inherited {
    if RECORDER.get_or_init(Recorder::from_env).is_none() {
        return Inherited(None);
    }
    Inherited(BEHALF.with(|b| b.borrow().clone()).or_else(|| std::thread::current().name().map(std::sync::Arc::from)))
}

/// A test's name carried to another thread.
#[cfg(feature = "quickjs")]
pub(crate) struct Inherited(Option<std::sync::Arc<str>>);

#[cfg(feature = "quickjs")]
impl Inherited {
    /// On the new thread: its calls are the test's.
    pub(crate) fn enter(self) {
        if self.0.is_some() {
            BEHALF.with(|b| *b.borrow_mut() = self.0);
        }
    }
}

/// The ladder reached the implementation of `qualified`, whose contract
/// fingerprint is `fingerprint` (so `check` counts the call only for the
/// spec it was made against, not for another registry's capability of the
/// same name).
pub(crate) fn reached(qualified: &str, fingerprint: &str) {
    let Some(recorder) = RECORDER.get_or_init(Recorder::from_env) else { return };
    let fresh = SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if seen.contains(qualified) {
            false
        } else {
            seen.insert(qualified.into());
            true
        }
    });
    if fresh {
        recorder.write(qualified, fingerprint);
    }
}

impl Recorder {
    fn from_env() -> Option<Recorder> {
        let dir = std::env::var_os(DIR_VAR).filter(|d| !d.is_empty())?;
        if std::env::args().any(|a| a == "--bench") {
            return None;
        }
        let run = ancestry::test_run()?;
        let exe = std::env::current_exe().ok();
        let own = exe.as_deref().map(binary_name).unwrap_or_default();
        let (binary, via) = match &run.test_binary {
            Some(test_binary) => (binary_name(test_binary), Some(own)),
            None => (own, None),
        };
        let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        let header = serde_json::json!({
            "capspec_coverage": 1,
            "run": run.id,
            "started": run.started,
            "manifest_dir": manifest,
            "binary": binary,
            "via": via,
        });
        Some(Recorder { dir: PathBuf::from(dir).join(&run.id), header: header.to_string(), binary, via, file: Mutex::new(None), nested: run.nested })
    }

    fn write(&self, qualified: &str, fingerprint: &str) {
        let thread = std::thread::current();
        let behalf = BEHALF.with(|b| b.borrow().clone());
        let name = behalf.as_deref().or(thread.name());
        // Only a test binary's own threads are named after tests; `main`
        // and a runtime's workers are not.
        let test = name.filter(|n| self.via.is_none() && *n != "main" && !n.starts_with("tokio-"));
        let mut line = serde_json::json!({ "capability": qualified, "fingerprint": fingerprint, "test": test });
        if test.is_none() {
            line["thread"] = serde_json::json!(name.unwrap_or("unnamed"));
        }
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = self.open();
        }
        if let Some(file) = guard.as_mut() {
            // A failed write loses an observation, which can only make a
            // capability look untested: never the other way round.
            let _ = writeln!(file, "{line}");
        }
    }

    fn open(&self) -> Option<std::fs::File> {
        let parent = self.dir.parent()?;
        if std::fs::create_dir_all(parent).is_err() {
            return None;
        }
        if std::fs::create_dir(&self.dir).is_ok() {
            // The first process of a top-level run: earlier runs are
            // superseded. (A nested run may share the directory with the
            // run whose test started it, which is still going.)
            if !self.nested {
                if let Ok(entries) = std::fs::read_dir(parent) {
                    for entry in entries.flatten() {
                        if entry.path() != self.dir && entry.file_type().is_ok_and(|t| t.is_dir()) {
                            let _ = std::fs::remove_dir_all(entry.path());
                        }
                    }
                }
            }
            // The first process of any run says what it saw. A record
            // without its inputs is judged by the clock alone, which can
            // only make it stale.
            let _ = inputs::write(parent, &self.dir);
        }
        let path = self.dir.join(format!("{}-{}.jsonl", self.binary, std::process::id()));
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).ok()?;
        writeln!(file, "{}", self.header).ok()?;
        Some(file)
    }
}

/// `mcp-1f2e3d4c5b6a7980` → `mcp`: a test binary's name without cargo's hash.
fn binary_name(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => name.to_string(),
        _ => stem.to_string(),
    }
}

mod inputs {
    //! The project's files as a run saw them (`inputs.json`).

    use std::path::Path;

    /// The most files and bytes read: past them the list is marked
    /// incomplete, and `check` falls back to the clock.
    const MAX_FILES: usize = 100_000;
    const MAX_BYTES: u64 = 1 << 30;

    /// Write `<run>/inputs.json` for the project whose record directory is
    /// `record_dir` (`<project>/.capspec/coverage`; any other directory
    /// names no project, and nothing is written).
    pub(super) fn write(record_dir: &Path, run: &Path) -> Option<()> {
        let root = record_dir.parent().filter(|p| p.file_name().is_some_and(|n| n == ".capspec") && record_dir.file_name().is_some_and(|n| n == "coverage"))?.parent()?;
        let taken = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64();
        let mut files = serde_json::Map::new();
        let mut budget = (MAX_FILES, MAX_BYTES);
        let complete = walk(root, "", &mut files, &mut budget);
        let text = serde_json::json!({ "capspec_inputs": 1, "taken": taken, "complete": complete, "files": files }).to_string();
        let temp = run.join(format!(".inputs-{}.json", std::process::id()));
        std::fs::write(&temp, text).ok()?;
        std::fs::rename(&temp, run.join("inputs.json")).ok()
    }

    /// Digest every file under `dir` (`prefix` is its path relative to the
    /// project, with `/`), in name order; false when the budget ran out.
    fn walk(dir: &Path, prefix: &str, files: &mut serde_json::Map<String, serde_json::Value>, budget: &mut (usize, u64)) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else { return true };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            let Ok(kind) = entry.file_type() else { continue };
            let rel = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            if kind.is_dir() {
                if !capspec_dialects::pin::walk_skips(&name, &entry.path()) && !walk(&entry.path(), &rel, files, budget) {
                    return false;
                }
            } else if kind.is_file() {
                let Ok(bytes) = std::fs::read(entry.path()) else { continue };
                if budget.0 == 0 || budget.1 < bytes.len() as u64 {
                    return false;
                }
                budget.0 -= 1;
                budget.1 -= bytes.len() as u64;
                let modified = entry.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos() as u64);
                let digest = capspec_dialects::pin::bytes_digest(&bytes);
                files.insert(rel, serde_json::json!({ "digest": digest, "size": bytes.len(), "modified_ns": modified }));
            }
        }
        true
    }
}

mod ancestry {
    //! The `cargo test` this process descends from, read from `/proc`.

    use std::path::PathBuf;

    pub(super) struct TestRun {
        /// `<cargo pid>-<its start time>`: the same for every process of one run.
        pub id: String,
        /// When that cargo started, in seconds since the Unix epoch.
        pub started: f64,
        /// The test binary, when this process is not it but its descendant.
        pub test_binary: Option<PathBuf>,
        /// A test of another `cargo test` started this one.
        pub nested: bool,
    }

    #[cfg(target_os = "linux")]
    pub(super) fn test_run() -> Option<TestRun> {
        let me = std::process::id();
        let (mut pid, mut below) = (me, me);
        let mut found: Option<TestRun> = None;
        // A bounded walk: a process tree is never this deep.
        for _ in 0..64 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (comm, rest) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(") "))?;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if pid != me && comm.starts_with("cargo") && runs_tests(pid) {
                match &mut found {
                    // A `cargo test` that a test of another one started.
                    Some(run) => {
                        run.nested = true;
                        break;
                    }
                    None => {
                        let ticks = *fields.get(19)?;
                        // Its start in clock ticks (1/100 s) since boot, put
                        // on the wall clock through the uptime (1/100 s too);
                        // 0.05 s earlier, so an edit made as cargo started
                        // counts as made after it (stale, not fresh).
                        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64();
                        let started = now - uptime()? + ticks.parse::<f64>().ok()? / 100.0 - 0.05;
                        let test_binary = (below != me).then(|| std::fs::read_link(format!("/proc/{below}/exe")).ok()).flatten();
                        found = Some(TestRun { id: format!("{pid}-{ticks}"), started, test_binary, nested: false });
                    }
                }
            }
            let parent: u32 = fields.get(1)?.parse().ok()?;
            if parent <= 1 {
                break;
            }
            if found.is_none() {
                below = pid;
            }
            pid = parent;
        }
        found
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn test_run() -> Option<TestRun> {
        None
    }

    /// The cargo's subcommand is `test`, `t` or `nextest`: its first
    /// argument that is neither a flag nor a `+toolchain`.
    #[cfg(target_os = "linux")]
    fn runs_tests(pid: u32) -> bool {
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return false };
        let sub = cmdline.split(|b| *b == 0).skip(1).map(String::from_utf8_lossy).find(|a| !a.starts_with('-') && !a.starts_with('+'));
        matches!(sub.as_deref(), Some("test" | "t" | "nextest"))
    }

    /// Seconds since boot.
    #[cfg(target_os = "linux")]
    fn uptime() -> Option<f64> {
        std::fs::read_to_string("/proc/uptime").ok()?.split_whitespace().next()?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_binary_is_named_without_its_hash() {
        assert_eq!(binary_name(Path::new("/t/debug/deps/mcp_sdk-0123456789abcdef")), "mcp_sdk");
        assert_eq!(binary_name(Path::new("/t/debug/agent-host")), "agent-host");
        assert_eq!(binary_name(Path::new("/t/debug/deps/my-tool-12ab")), "my-tool-12ab");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_test_descends_from_cargo_test_or_from_nothing_that_records() {
        // Run by `cargo test`, the run is found and started before now;
        // run any other way, nothing records.
        let under_cargo_test = std::env::var_os("CARGO").is_some();
        match ancestry::test_run() {
            Some(run) => {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
                assert!(run.started <= now + 1.0, "{} > {now}", run.started);
                assert!(run.test_binary.is_none(), "this process is the test binary itself");
            }
            None => assert!(!under_cargo_test || std::env::var_os("NEXTEST").is_some(), "cargo test ran this test, but no cargo test was found among its ancestors"),
        }
    }
}
