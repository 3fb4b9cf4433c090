//! Reading spec files: the only code that reads them from disk. Size is
//! checked here, before a byte is read, and again for bytes that arrive
//! another way (from git, from a fuzzer).

use std::path::Path;

use crate::finding::Finding;
use crate::rules as rule;
use crate::source::relative;
use crate::yaml::Pos;

/// Spec files larger than this are refused unread.
pub(crate) const MAX_SPEC_BYTES: u64 = 1024 * 1024;

/// One spec file's contents, already read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecFile {
    /// Path relative to the project root, `/`-separated.
    pub path: String,
    /// The file's contents.
    pub bytes: Vec<u8>,
}

/// Walk `root/specs_dir` recursively for `.yaml`/`.yml` files, in a stable
/// order. Files over [`MAX_SPEC_BYTES`] are not read; their findings are
/// returned instead.
pub fn read_spec_dir(root: &Path, specs_dir: &str) -> (Vec<SpecFile>, Vec<Finding>) {
    let mut files = Vec::new();
    let mut findings = Vec::new();
    let dir = root.join(specs_dir);
    let walker = walkdir::WalkDir::new(&dir).follow_links(false).sort_by_file_name();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                let where_ = err.path().map(|p| relative(root, p)).unwrap_or_else(|| specs_dir.to_string());
                findings.push(Finding::error(rule::SPEC_PARSE, &where_, Pos::default(), format!("cannot read: {err}")));
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path();
        let is_yaml = matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"));
        if !is_yaml {
            continue;
        }
        let rel = relative(root, path);
        if let Some(finding) = entry.metadata().ok().and_then(|m| too_large(&rel, m.len())) {
            findings.push(finding);
            continue;
        }
        match std::fs::read(path) {
            Ok(bytes) => files.push(SpecFile { path: rel, bytes }),
            Err(err) => findings.push(Finding::error(rule::SPEC_PARSE, &rel, Pos::default(), format!("cannot read: {err}"))),
        }
    }
    (files, findings)
}

/// The finding for a spec file of `len` bytes, when it is over the limit.
pub(crate) fn too_large(path: &str, len: u64) -> Option<Finding> {
    (len > MAX_SPEC_BYTES).then(|| {
        Finding::error(
            rule::SPEC_PARSE,
            path,
            Pos::default(),
            format!("spec file is larger than {} KiB; split it into several modules", MAX_SPEC_BYTES / 1024),
        )
    })
}

/// A spec file's bytes as text, or the finding placing the first byte that
/// is not UTF-8.
pub(crate) fn text(file: SpecFile) -> Result<String, Box<Finding>> {
    String::from_utf8(file.bytes).map_err(|err| {
        let valid = &err.as_bytes()[..err.utf8_error().valid_up_to()];
        let valid = std::str::from_utf8(valid).expect("prefix is valid");
        let line = valid.matches('\n').count() as u32 + 1;
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
        Box::new(Finding::error(rule::SPEC_PARSE, &file.path, Pos { line, column }, "spec file is not valid UTF-8; save it as UTF-8"))
    })
}
