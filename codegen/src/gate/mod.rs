//! The drift gate: `check` and its rules, one file per rule family.
//!
//! [`check::check_with`] opens the project (below this folder) and runs the
//! families in order: `drift` (`drift/*`: the generated files against a
//! fresh render), `coverage/` (`coverage/*`: which capabilities have an
//! impl and which a test ran), `breaking` and `contract` (`--base`),
//! `policy` and `policy_tests` (`policy/*`), and `upstream`
//! (`upstream/*`, from `check --upstream`); `suppress` applies the
//! `[[allow]]` entries, and `report` prints what is left. The `lint/*`
//! family is not here: the loaders run it on every located text they read,
//! so it lives in the foundation below them (`crate::lint`). Nothing here
//! is imported from below.

pub(crate) mod breaking;
pub mod check;
pub(crate) mod contract;
pub(crate) mod coverage;
pub(crate) mod drift;
pub(crate) mod policy;
#[cfg(feature = "policy")]
pub(crate) mod policy_tests;
pub mod report;
pub(crate) mod suppress;
pub(crate) mod surface;
pub mod upstream;
