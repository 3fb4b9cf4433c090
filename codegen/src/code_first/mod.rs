//! Code-first specs: capabilities declared in Rust with `#[derive(Capability)]`.
//!
//! The flow, and why it does not tie generation to a compiling host:
//!
//! 1. **Export.** Build the workspace's tests once, as `cargo test
//!    --workspace` builds them (`--no-run`: after the tests, nothing is
//!    built twice), then run the library test binary of every package
//!    under `[code_first] packages` with the filter `__capspec_export_` and
//!    `CAPSPEC_EXPORT_DIR` set (`cargo test -p <package> --lib` when the
//!    workspace does not build). Each derive emits one hidden test that writes
//!    its spec (module, name, category, description, `schemars` schema, the
//!    Rust type and where the derive is) as JSON into that directory. The
//!    package's own unit-test binary links every derive of the library, so
//!    nothing depends on how a final binary is linked.
//! 2. **Convert.** The `schemars` schema is reduced to the supported subset
//!    (the importer's rule: unsupported keywords dropped, each a warning;
//!    `$schema`, `title` and the root `description` — the struct's doc
//!    comment — silently), then the spec becomes a spec-shaped
//!    node whose every position is the derive's, and joins its module
//!    through the same capability rules as YAML (`load::load_files_with`).
//! 3. **Record.** `sync` writes what the packages exported to the record
//!    file (`[code_first] record`, default `<specs>/code-first.json`), a
//!    generated file like the category snapshot. When a package does not
//!    build, its specs come from the record instead, so the YAML-derived
//!    files can still be regenerated — which is often what makes the host
//!    build again. `check` reports the failed export as an error.

mod convert;
mod export;
mod record;

use std::collections::BTreeSet;
use std::path::Path;

use crate::config::Config;
use crate::finding::Finding;

pub(crate) use convert::{Resolved, convert};
pub use export::ExportFailure;
use export::export;
pub use record::parse_record;
pub(crate) use record::render_record;
pub use record::Exported;

/// Where the code-first specs of a `check` or `sync` come from.
#[derive(Debug, Clone, Default)]
pub struct CodeFirstInput {
    /// Freshly exported specs (schemas as `schemars` wrote them).
    pub exported: Vec<Exported>,
    /// Packages whose specs are taken from the record file instead (their
    /// export failed, or the build was skipped).
    pub from_record: BTreeSet<String>,
}

impl CodeFirstInput {
    /// Every configured package from the record: no build.
    pub(crate) fn recorded(config: &Config) -> CodeFirstInput {
        CodeFirstInput { exported: Vec::new(), from_record: config.code_first.packages.iter().map(|(p, _)| p.clone()).collect() }
    }
}

/// Combine fresh exports and recorded specs, convert their schemas, and
/// turn them into loader entries.
pub(crate) fn resolve(root: &Path, config: &Config, input: &CodeFirstInput) -> Resolved {
    if config.code_first.packages.is_empty() {
        return Resolved::default();
    }
    let configured: BTreeSet<&str> = config.code_first.packages.iter().map(|(p, _)| p.as_str()).collect();
    let mut specs: Vec<Exported> = input.exported.iter().filter(|e| configured.contains(e.package.as_str())).cloned().collect();
    let mut record_findings = Vec::new();
    if !input.from_record.is_empty() {
        let (recorded, findings) = record::read_record(root, &config.code_first.record);
        record_findings = findings;
        specs.extend(recorded.into_iter().filter(|e| input.from_record.contains(&e.package) && configured.contains(e.package.as_str())));
    }
    let mut out = convert::convert(root, specs);
    out.findings.extend(record_findings);
    out
}


/// What `check` and `sync` build before they run: the `[code_first]`
/// packages of a project, read from its config once.
pub struct ExportPlan {
    root: std::path::PathBuf,
    config: Config,
}

impl ExportPlan {
    /// The plan for the project at `root`; `None` when there is nothing to
    /// build (no `[code_first]` package, or a config `check` and `sync`
    /// will report themselves).
    pub fn of(root: &Path) -> Option<ExportPlan> {
        let mut sources = crate::source::Sources::default();
        let config = crate::config::load_config(root, &mut sources).ok()?.config?;
        (!config.code_first.packages.is_empty()).then(|| ExportPlan { root: root.to_path_buf(), config })
    }

    /// The packages it builds, as listed.
    pub fn packages(&self) -> Vec<&str> {
        self.config.code_first.packages.iter().map(|(p, _)| p.as_str()).collect()
    }

    /// Build every package and collect its exports: the input for
    /// [`crate::project::open_with`] and the packages that failed, whose
    /// specs then come from the record.
    pub fn run(&self) -> (CodeFirstInput, Vec<ExportFailure>) {
        let (exported, failures) = export(&self.root, &self.config);
        let from_record = failures.iter().map(|f| f.package.clone()).collect();
        (CodeFirstInput { exported, from_record }, failures)
    }
}

/// Load spec files with code-first specs joining them, as `check` does:
/// `exports` are converted to the supported subset (dropped keywords are
/// warnings) and decoded with the same capability rules as YAML. Rust
/// sources are read for snippets only inside `root`.
pub fn load_with(root: &Path, files: Vec<crate::load::SpecFile>, exports: Vec<Exported>) -> crate::load::Loaded {
    let converted = convert(root, exports);
    let mut loaded = crate::load::load_files_with(files, converted.entries);
    loaded.findings.extend(converted.findings);
    Finding::sort(&mut loaded.findings);
    loaded
}
