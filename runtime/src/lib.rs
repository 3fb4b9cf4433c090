//! capspec runtime: what an agent host links.
//!
//! - [`Spec`], [`Category`], [`Module`]: what generated bindings declare.
//! - [`Registry`] and [`Mounted`]: every capability with its impl; a
//!   session mounts some modules and calls them only through
//!   [`Mounted::invoke`] — lookup → argument coercion → validation → gate →
//!   impl → receipt.
//! - [`Run`], [`Gate`], [`Mode`], [`Approver`]: per-run state supplied at
//!   call time.
//! - [`capability`]: the attribute that registers an impl;
//!   [`Capability`](derive@Capability): the derive that declares a
//!   code-first spec on an args struct.
//! - [`testing`]: a scripted approver and a small executor for tests.

#![warn(missing_docs)]

use std::fmt;

mod code_first;
mod coerce;
mod error;
mod gate;
#[cfg(feature = "quickjs")]
pub mod guest;
mod receipt;
mod registry;
mod run;
pub mod testing;
mod validate;

pub use capspec_macros::{Capability, capability};
pub use code_first::{Capability, CodeFirst};
pub use error::{CallError, CapError, CapResult, ErrorCode};
pub use gate::{Approval, ApprovalRequest, Approver, BoxFuture, Gate, HeadlessApprover, Mode, ModeHandle, SessionAllow, Verdict, decide};
pub use receipt::{GateDecision, Receipt, Status};
pub use registry::{CapabilityInfo, Mounted, Registry, RegistryError};
pub use run::{ClientRouter, Extensions, Limits, Run};

/// What generated bindings and the macros name. Not a public API: paths
/// here may change in any release, and the macro crate is pinned to this
/// crate's exact version.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::Category;
    pub use crate::code_first::{Capability, CodeFirst, require_deserialize, schema_of};
    pub use crate::error::CapError;
    pub use crate::gate::BoxFuture;
    pub use crate::registry::Registration;
    pub use crate::run::Run;

    /// Decode validated arguments into the generated `Args` type.
    pub fn decode_args<T: serde::de::DeserializeOwned>(args: serde_json::Value) -> Result<T, CapError> {
        serde_json::from_value(args).map_err(|e| CapError::new(format!("arguments do not fit the generated Args type: {e}")))
    }

    /// Encode an impl's output as JSON.
    pub fn encode_output<T: serde::Serialize>(output: &T) -> Result<serde_json::Value, CapError> {
        serde_json::to_value(output).map_err(|e| CapError::new(format!("the result does not serialize: {e}")))
    }

    /// Call an impl with its decoded arguments. Written as a generic call so
    /// that an impl whose argument type is not the capability's `Args` is
    /// one type error, at the impl.
    pub fn call_impl<'a, F, A, Fut>(f: F, run: &'a Run, args: A) -> Fut
    where
        F: FnOnce(&'a Run, A) -> Fut,
    {
        f(run, args)
    }
}

/// capspec's own tests, fuzz targets and benchmarks reach the argument
/// ladder's pieces and the registration table here. Not a public API.
#[doc(hidden)]
pub mod __internals {
    pub use crate::code_first::code_first_specs;
    pub use crate::coerce::coerce;
    pub use crate::registry::{Registration, registrations};
    pub use crate::validate::Validator;
}

/// The safety category of a capability: a closed enum with no default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Inspects state and mutates nothing anywhere.
    Read,
    /// Edits persisted state, local or remote.
    Write,
    /// Runs code, ships a deliverable, triggers automation.
    Execute,
    /// Acts through a third party or runs many actions at once.
    External,
}

impl Category {
    /// The category as written in specs: `read`, `write`, `execute`, `external`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Read => "read",
            Category::Write => "write",
            Category::Execute => "execute",
            Category::External => "external",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One capability's spec, as generated into a host's bindings
/// (`pub const SPEC: capspec::Spec`). Everything is `'static` so the whole
/// table lives in the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The module it belongs to.
    pub module: &'static str,
    /// The capability name, unique in its module.
    pub name: &'static str,
    /// The safety category; there is no default.
    pub category: Category,
    /// The full description from the spec.
    pub description: &'static str,
    /// The catalog one-liner (the description's first sentence).
    pub summary: &'static str,
    /// The input schema as minified JSON (`{}`-free object schema when the
    /// spec gives none).
    pub input_schema: &'static str,
    /// The output schema as minified JSON, when the spec gives one.
    pub output_schema: Option<&'static str>,
    /// A message for people, with `{placeholders}` naming input properties.
    pub user_message: Option<&'static str>,
    /// Listed by name only in the prompt catalog.
    pub deferred: bool,
    /// Hidden compatibility names; resolve at invoke.
    pub aliases: &'static [&'static str],
    /// Why it is deprecated and what to use instead; still callable.
    pub deprecated: Option<&'static str>,
    /// Hash of description, schemas and category: changes when the contract does.
    pub fingerprint: &'static str,
}

/// One module of capabilities as generated into a host's bindings
/// (`pub const MODULE: capspec::Module`): its specs, the guest facade source
/// and its prompt-catalog section, so a host embeds everything from one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module {
    /// The module name.
    pub name: &'static str,
    /// One line describing the module.
    pub description: &'static str,
    /// Its capabilities' specs, sorted by name.
    pub specs: &'static [Spec],
    /// The ES module source served to guests for `<specifier>/<name>`.
    pub facade: &'static str,
    /// This module's section of the prompt catalog (Markdown).
    pub catalog: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_text_matches_its_serde_form() {
        for c in [Category::Read, Category::Write, Category::Execute, Category::External] {
            assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{c}\""));
        }
    }
}
