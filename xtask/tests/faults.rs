//! `sync` under concurrency and faults, through the real binary: eight syncs
//! at once, a sync killed mid-run, and a write that cannot happen. No torn or
//! half-written file, ever; the same bytes as one clean sync.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn xtask() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
}

/// A project with `modules` × 20 capabilities, big enough that a sync takes
/// a noticeable time.
fn project(name: &str, modules: usize) -> PathBuf {
    let root = std::env::temp_dir().join(format!("capspec-faults-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("specs")).unwrap();
    std::fs::write(root.join("capspec.toml"), "specs = \"specs\"\n").unwrap();
    for m in 0..modules {
        let mut text = format!("module: m{m:03}\ndescription: Module {m}.\ncapabilities:\n");
        for c in 0..20 {
            text.push_str(&format!(
                "  - name: c{m:03}_{c:02}\n    category: read\n    description: Capability {c}.\n    input: {{ type: object, properties: {{ a: {{ type: string, enum: [x, y] }}, n: {{ type: integer, minimum: 0 }} }}, required: [a] }}\n"
            ));
        }
        std::fs::write(root.join(format!("specs/m{m:03}.yaml")), text).unwrap();
    }
    root
}

/// Every file under the output directories, with its bytes.
fn outputs(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in ["src", "guest", "catalog", "specs"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else { continue };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push((p.strip_prefix(root).unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()));
                }
            }
        }
    }
    out.sort();
    out
}

fn sync(root: &Path) -> std::process::Output {
    xtask().args(["sync", "--root"]).arg(root).output().unwrap()
}

#[test]
fn eight_concurrent_syncs_end_in_the_bytes_of_one() {
    let reference = project("reference", 10);
    assert!(sync(&reference).status.success());
    let expected = outputs(&reference);

    let root = project("concurrent", 10);
    let children: Vec<_> = (0..8).map(|_| xtask().args(["sync", "--root"]).arg(&root).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()).collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let got = outputs(&root);
    assert_eq!(got.len(), expected.len(), "no temp file or extra file is left");
    for ((p1, b1), (p2, b2)) in got.iter().zip(&expected) {
        assert_eq!(p1, p2);
        assert!(b1 == b2, "{p1} differs from a single sync's output");
    }
    for dir in [&reference, &root] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn a_killed_sync_leaves_old_or_new_files_never_torn_ones() {
    let reference = project("kill-reference", 40);
    assert!(sync(&reference).status.success());
    let new: std::collections::BTreeMap<String, Vec<u8>> = outputs(&reference).into_iter().collect();

    let root = project("kill", 40);
    for (i, delay) in [5u64, 20, 60, 120, 250].into_iter().enumerate() {
        // Old state: a previous generation of every file (edited specs).
        let mut child = xtask().args(["sync", "--root"]).arg(&root).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        for (path, bytes) in outputs(&root) {
            if path.ends_with(".yaml") {
                continue;
            }
            if path.contains(".capspec-") && path.ends_with(".tmp") {
                continue; // a staged temp file of the killed process; the next sync removes it
            }
            let complete = new.get(&path).is_some_and(|b| *b == bytes);
            assert!(complete, "round {i}: `{path}` is torn or unexpected after a kill at {delay} ms");
        }
    }
    // The next sync completes the work and cleans up the killed run's temp files.
    assert!(sync(&root).status.success());
    assert_eq!(outputs(&root), outputs(&reference));
    for dir in [&reference, &root] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn a_write_that_cannot_happen_fails_clearly_and_changes_nothing() {
    let root = project("blocked", 3);
    // A file where the catalog directory should be: nothing can be written there.
    std::fs::write(root.join("catalog"), "in the way").unwrap();
    let out = sync(&root);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write `catalog/") && err.contains("nothing was changed"), "{err}");
    let written: Vec<String> = outputs(&root).into_iter().map(|(p, _)| p).filter(|p| !p.ends_with(".yaml")).collect();
    assert_eq!(written, Vec::<String>::new(), "no partial writes");
    assert!(!root.join("src").exists() && !root.join("guest").exists(), "directories created for the failed sync are removed");
    std::fs::remove_dir_all(&root).unwrap();
}

/// A size-limited tmpfs, unmounted on drop. Needs root (mount); where it
/// cannot be had the tests that use it say so and skip.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn new(name: &str, size: &str) -> Option<Tmpfs> {
        let dir = std::env::temp_dir().join(format!("capspec-tmpfs-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(&dir).status().is_ok_and(|s| s.success());
        if !ok {
            let _ = std::fs::remove_dir(&dir);
            capspec_testkit::skip(None, &format!("cannot mount a tmpfs here (not root?); skipping the {name} test"));
            return None;
        }
        Some(Tmpfs(dir))
    }

    fn remount_read_only(&self) {
        assert!(Command::new("mount").args(["-o", "remount,ro"]).arg(&self.0).status().unwrap().success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_project(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("specs")).unwrap();
    std::fs::copy(from.join("capspec.toml"), to.join("capspec.toml")).unwrap();
    for e in std::fs::read_dir(from.join("specs")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join("specs").join(p.file_name().unwrap())).unwrap();
    }
}

#[test]
fn a_full_disk_fails_clearly_and_changes_nothing() {
    let source = project("full-source", 20);
    let Some(disk) = Tmpfs::new("full-disk", "256k") else { return };
    copy_project(&source, &disk.0);
    let paths = |root: &Path| outputs(root).into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    let before = paths(&disk.0);
    let out = sync(&disk.0);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No space left") && err.contains("nothing was changed"), "{err}");
    assert_eq!(paths(&disk.0), before, "no file was written, no temp file is left");
    std::fs::remove_dir_all(&source).unwrap();
}

#[test]
fn a_read_only_tree_fails_clearly_and_changes_nothing() {
    let source = project("ro-source", 2);
    let Some(disk) = Tmpfs::new("read-only", "4m") else { return };
    copy_project(&source, &disk.0);
    disk.remount_read_only();
    let out = sync(&disk.0);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Read-only file system") && err.contains("nothing was changed"), "{err}");
    assert!(!disk.0.join("src").exists() && !disk.0.join("catalog").exists());
    // check still runs on a read-only tree: it never writes.
    let check = xtask().args(["check", "--root"]).arg(&disk.0).output().unwrap();
    assert_eq!(check.status.code(), Some(1), "drift/missing findings, not a crash");
    std::fs::remove_dir_all(&source).unwrap();
}
