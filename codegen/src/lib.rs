//! capspec's generator and drift gate as a library.
//!
//! The pipeline reads top to bottom: `capspec.toml` and the specs are opened
//! into a [`Project`] ([`project::open`]: config → load → code-first specs
//! joined), rendered into artifacts, then either written ([`sync()`]) or
//! compared with the disk ([`check()`]: drift, coverage, breaking changes,
//! suppressions) into a [`Report`] printed in one of the [`Format`]s.
//!
//! A spec with a problem is a located, rule-tagged finding:
//!
//! ```
//! let root = std::env::temp_dir().join(format!("capspec-docs-{}", std::process::id()));
//! std::fs::create_dir_all(root.join("specs")).unwrap();
//! std::fs::write(root.join("capspec.toml"), "specs = \"specs\"\n").unwrap();
//! std::fs::write(
//!     root.join("specs/notes.yaml"),
//!     "module: notes\ndescription: Notes.\ncapabilities:\n  - name: read_note\n    catgory: read\n    description: Read a note.\n",
//! )
//! .unwrap();
//! let report = capspec_codegen::check(&root).unwrap();
//! let typo = report.findings.iter().find(|f| f.rule == "spec/unknown-field").unwrap();
//! assert_eq!((typo.file.as_str(), typo.line), ("specs/notes.yaml", 5));
//! assert!(typo.message.contains("did you mean `category`?"));
//! std::fs::remove_dir_all(&root).unwrap();
//! ```
//!
//! A project's xtask is a thin front over this crate, and its freshness test
//! is one line:
//!
//! ```no_run
//! #[test]
//! fn generated_files_are_fresh() {
//!     capspec_codegen::assert_fresh(env!("CARGO_MANIFEST_DIR"));
//! }
//! ```

#![warn(missing_docs)]

pub mod code_first;
mod config;
pub mod coverage_table;
mod error;
pub mod explain;
mod finding;
mod gate;
pub mod import;
pub mod load;
mod lint;
pub mod model;
pub mod ordered;
mod parallel;
mod provider;
pub mod project;
pub mod render;
pub mod rules;
pub mod scaffold;
mod source;
pub mod sync;
mod yaml;

pub use config::{CONFIG_FILE, NamedSurface, ServeIdentity};
pub use config::keys as config_keys;
pub use coverage_table::CoverageTable;
pub use error::{BaseError, FatalError};
pub use finding::{Finding, Severity, Summary};
pub use gate::check::{CheckOptions, assert_fresh, check, check_with};
pub use gate::report::{Format, Report};
pub use gate::{check, report, upstream};
pub use model::{CapabilitySpec, Category, ModuleSpec, Schema, SpecSet};
pub use project::{Project, open};
pub use source::Sources;
pub use sync::{SyncError, SyncOutcome, sync, sync_with};
pub use yaml::Pos;
