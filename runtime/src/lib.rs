//! capspec runtime: what an agent host links.
//!
//! - [`Spec`], [`Category`], [`Module`]: what generated bindings declare.
//! - [`Registry`] and [`Mounted`]: every capability with its impl; a
//!   session mounts some modules and calls them only through
//!   [`Mounted::invoke`] — lookup → argument coercion → validation → gate →
//!   impl → receipt.
//! - [`Run`], [`Principal`], [`Gate`], [`Mode`], [`Approver`]: per-run
//!   state supplied at call time (who calls, the gate, the host's extensions).
//! - [`capability`]: the attribute that registers an impl;
//!   [`Capability`](derive@Capability): the derive that declares a
//!   code-first spec on an args struct.
//! - [`testing`]: a scripted approver and a small executor for tests.
//!
//! Every outcome of a call is data, and nothing reaches an impl except
//! through the ladder:
//!
//! ```
//! use capspec::{ErrorCode, Gate, Mode, Registry, Run};
//!
//! // A host builds its registry from its generated modules (none here).
//! let registry = Registry::new(&[]).expect("every spec has an impl");
//! let session = registry.mount_all();
//! let run = Run::new(Gate::headless(Mode::Default, "docs"));
//! let call = session.invoke(&run, "notes.read_note", serde_json::json!({"note_id": "n1"}));
//! let err = capspec::testing::block_on(call).unwrap_err();
//! assert_eq!(err.code, ErrorCode::UnknownCapability);
//! // Every call leaves a receipt, refused ones too.
//! assert_eq!(run.receipts().len(), 1);
//! ```

#![warn(missing_docs)]

pub mod audit;
pub mod builtin;
mod code_first;
mod coerce;
mod coverage;
pub mod content;
mod forward;
mod json;
mod json_call;
mod ladder;
mod error;
mod gate;
mod hidden;
#[cfg(feature = "quickjs")]
pub mod guest;
#[cfg(feature = "mcp")]
pub mod mcp;

/// The identity of the package this is expanded in: its Cargo name and
/// version (`CARGO_PKG_NAME`, `CARGO_PKG_VERSION`), as an rmcp server's
/// `Implementation::from_build_env()` gives them.
///
/// ```
/// let identity = capspec::server_identity!().with_instructions("Use sql_query for reads.");
/// assert_eq!(identity.name, env!("CARGO_PKG_NAME"));
/// ```
#[cfg(feature = "mcp")]
#[macro_export]
macro_rules! server_identity {
    () => {
        $crate::mcp::ServerIdentity::new(::core::env!("CARGO_PKG_NAME"), ::core::env!("CARGO_PKG_VERSION"))
    };
}

#[cfg(feature = "upstream")]
pub mod upstream;
#[cfg(feature = "otlp")]
pub mod otlp;
pub mod provider;
mod principal;
pub mod policy;
#[cfg(feature = "policy")]
mod policy_gate;
mod receipt;
mod registration;
mod registry;
pub mod replay;
mod run;
pub mod search;
mod spec;
mod surface;
pub mod testing;
mod tiered;
#[cfg(any(feature = "oauth", feature = "otlp", feature = "upstream"))]
mod tls;
pub mod trace;
mod validate;
pub mod view;

pub use capspec_macros::{Capability, capability};
pub use code_first::{Capability, CodeFirst};
pub use error::{CallError, CapError, CapResult, ErrorCode};
pub use gate::{Approval, ApprovalRequest, Approver, AskUrl, BoxFuture, Gate, HeadlessApprover, Mode, ModeHandle, SessionAllow, Verdict, decide};
pub use principal::{Principal, Scopes};
pub use receipt::{GateDecision, Receipt, Status};
pub use hidden::CapabilityInfo;
pub use registry::{Forward, Forwarded, Mounted, Registry, RegistryError};
pub use run::{ClientRouter, Extensions, Limits, Run};
pub use spec::{Annotations, Category, Module, Spec};
pub use tiered::tiered_catalog;

/// What generated bindings and the macros name. Not a public API: paths
/// here may change in any release, and the macro crate is pinned to this
/// crate's exact version.
#[doc(hidden)]
pub mod __private;

/// capspec's own tests, fuzz targets and benchmarks reach the argument
/// ladder's pieces and the registration table here. Not a public API.
#[doc(hidden)]
pub mod __internals {
    pub use crate::code_first::code_first_specs;
    pub use crate::coerce::coerce;
    pub use crate::coverage::DIR_VAR as COVERAGE_DIR_VAR;
    pub use crate::registry::{Registration, registrations};
    pub use crate::validate::{Objects, Validator};
}
