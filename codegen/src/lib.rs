//! capspec's generator and drift gate as a library.
//!
//! The pipeline reads top to bottom: [`config`] → [`load`] (YAML → located
//! tree → validated [`model::SpecSet`]) → [`check`](mod@check) (findings) → [`report`]
//! (human, JSON, GitHub). The `xtask` binary is a thin front over it, and a
//! project can call [`check::check`] from a `#[test]`.

pub mod breaking;
pub mod check;
pub mod code_first;
pub mod config;
pub mod coverage;
pub mod finding;
pub mod import;
pub mod load;
pub mod model;
pub mod names;
pub mod parallel;
pub mod render;
pub mod scaffold;
pub mod report;
pub mod spec_format;
pub mod sync;
pub mod yaml;

pub use check::{assert_fresh, check};
pub use sync::sync;
pub use finding::{Finding, Severity, Summary};
pub use model::{CapabilitySpec, Category, ModuleSpec, Schema, SpecSet};
pub use report::{Format, Report};
