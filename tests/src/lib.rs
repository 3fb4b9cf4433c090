//! End-to-end tests for capspec live in `tests/`; fixtures in `fixtures/`.
//! This library holds the helpers they share.

use std::path::{Path, PathBuf};

/// The generated Rust bindings of every fixture under `fixtures/render/`,
/// rendered by `build.rs`: if capspec generated Rust that does not compile,
/// this crate would not build.
pub mod bindings {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}

/// The fixtures directory of this crate.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The workspace root (where the repo's own capspec.toml lives).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is inside the workspace").to_path_buf()
}

/// Copy a directory tree (fixture projects into temp dirs).
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("readable dir") {
        let entry = entry.expect("readable entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&target).expect("create dir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy file");
        }
    }
}

/// A fresh, empty temporary directory for one test, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("capspec-test-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Write a file (creating parent directories) relative to the temp dir.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("create dirs");
        std::fs::write(path, contents).expect("write file");
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
