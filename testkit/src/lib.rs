//! Helpers every capspec test target shares, so no test file rewrites them:
//! temp projects that clean up even when a test panics, the repo root, the
//! minimal project, findings by rule, and a command's output as text.

use std::path::{Path, PathBuf};
use std::process::Output;

use capspec_codegen::Finding;

/// The repository root (where the repo's own `capspec.toml` lives).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("testkit/ is inside the repository").to_path_buf()
}

/// The smallest valid `capspec.toml`: only the required key.
pub const MINIMAL_CONFIG: &str = "specs = \"specs\"\n";

/// A spec module with one read capability, valid as it is.
pub const MINIMAL_SPEC: &str = "module: notes\ndescription: Notes.\ncapabilities:\n  - name: read_note\n    category: read\n    description: Read a note.\n";

/// A fresh, empty temporary directory for one test. It is removed when
/// dropped — also while a failing test unwinds — so nothing is left behind.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory whose name contains `name`.
    pub fn new(name: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("capspec-test-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    /// A project holding [`MINIMAL_CONFIG`] and `specs/notes.yaml` =
    /// [`MINIMAL_SPEC`].
    pub fn minimal_project(name: &str) -> TempDir {
        let dir = TempDir::new(name);
        dir.write("capspec.toml", MINIMAL_CONFIG);
        dir.write("specs/notes.yaml", MINIMAL_SPEC);
        dir
    }

    /// A copy of the directory tree at `from`.
    pub fn copy_of(name: &str, from: &Path) -> TempDir {
        let dir = TempDir::new(name);
        copy_dir(from, dir.path());
        dir
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Write a file (creating parent directories) relative to the directory.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("create dirs");
        std::fs::write(path, contents).expect("write file");
    }

    /// Read a file relative to the directory.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.0.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copy a directory tree (fixture projects into temp dirs), creating `to`
/// if it does not exist.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("readable dir") {
        let entry = entry.expect("readable entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy file");
        }
    }
}

/// The findings of `rule`.
pub fn with_rule<'a>(findings: &'a [Finding], rule: &str) -> Vec<&'a Finding> {
    findings.iter().filter(|f| f.rule == rule).collect()
}

/// The rule ids of `findings`, in order.
pub fn rules(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.rule.as_str()).collect()
}

/// A command's stdout and stderr as one text, for assertion messages.
pub fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Skip a test whose tool is absent: fail when `required_by` (an
/// environment variable CI sets where the tool is installed) is set,
/// otherwise print `NOTICE: …` straight to the process's stderr — past the
/// test harness's capture, so a skip is never silent.
pub fn skip(required_by: Option<&str>, why: &str) {
    if let Some(var) = required_by {
        assert!(std::env::var_os(var).is_none(), "{var} is set, so this test may not skip: {why}");
    }
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "NOTICE: {why}");
}

/// Run the Node script `tests/ts/<script>` with `args` (from `tests/ts`),
/// where the npm `package` is installed there (`npm ci --prefix tests/ts`):
/// the last line of its stdout — the scripts print a JSON summary last —
/// after asserting it succeeded. `None`, with a skip notice, where node or
/// the package is absent (a failure where CI set CAPSPEC_REQUIRE_NODE_TOOLS).
pub fn node_script(script: &str, package: &str, args: &[&std::ffi::OsStr]) -> Option<String> {
    let ts = repo_root().join("tests/ts");
    let node = std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !ts.join("node_modules").join(package).is_dir() {
        skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), &format!("node or {package} is not installed (run `npm ci --prefix tests/ts`); skipping tests/ts/{script}"));
        return None;
    }
    let out = std::process::Command::new("node").arg(ts.join(script)).args(args).current_dir(&ts).output().expect("node runs");
    let all = text(&out);
    assert!(out.status.success(), "tests/ts/{script} failed:\n{all}");
    Some(String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_string())
}

/// Run git in `dir` with a fixed identity and branch name (so commits work
/// on any machine); its trimmed stdout. Panics with git's stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=capspec", "-c", "user.email=capspec@example.invalid", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub mod http;
pub mod phoenix;
pub mod postgres;

/// A child process the test ends however the test ends (killed and waited
/// for when dropped, a panicking test's included).
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
