//! The drift gate: `check` and its rules, one file per rule family.
//!
//! [`check::check_with`] opens the project (below this folder) and runs the
//! families in order: `drift` (`drift/*`: the generated files against a
//! fresh render), `coverage/` (`coverage/*`: which capabilities have an
//! impl and which a test ran), `breaking` and `contract` (`--base`),
//! `policy` and `policy_tests` (`policy/*`), and `upstream`
//! (`upstream/*`, from `check --upstream`); `suppress` applies the
//! `[[allow]]` entries, and `report` prints what is left.
//!
//! `lint` (`lint/*`) is the one family the loaders run, on every located
//! text they read: it imports only the crate's foundation (the model, the
//! located tree, findings and the rule table), so the loaders below this
//! folder may call it. Nothing else here is imported from below.

pub(crate) mod breaking;
pub mod check;
pub(crate) mod contract;
pub(crate) mod coverage;
pub(crate) mod drift;
pub(crate) mod lint;
pub(crate) mod policy;
#[cfg(feature = "policy")]
pub(crate) mod policy_tests;
pub mod report;
pub(crate) mod suppress;
pub(crate) mod surface;
pub mod upstream;
