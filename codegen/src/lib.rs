//! capspec's generator and drift gate as a library.
//!
//! The pipeline reads top to bottom: `capspec.toml` and the specs are opened
//! into a [`Project`] ([`project::open`]: config → load → code-first specs
//! joined), rendered into artifacts, then either written ([`sync()`]) or
//! compared with the disk ([`check()`]: drift, coverage, breaking changes,
//! suppressions) into a [`Report`] printed in one of the [`Format`]s.
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

mod breaking;
pub mod check;
pub mod code_first;
mod config;
mod contract;
mod coverage;
pub mod coverage_table;
mod drift;
mod error;
mod finding;
pub mod import;
pub mod load;
pub mod model;
mod parallel;
pub mod project;
pub mod render;
pub mod report;
pub mod rules;
pub mod scaffold;
mod source;
mod suppress;
pub mod sync;
mod yaml;

pub use check::{CheckOptions, assert_fresh, check, check_with};
pub use config::CONFIG_FILE;
pub use coverage_table::CoverageTable;
pub use error::{BaseError, FatalError};
pub use finding::{Finding, Severity, Summary};
pub use model::{CapabilitySpec, Category, ModuleSpec, Schema, SpecSet};
pub use project::{Project, open};
pub use report::{Format, Report};
pub use source::Sources;
pub use sync::{SyncError, SyncOutcome, sync, sync_with};
pub use yaml::Pos;
