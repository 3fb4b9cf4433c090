//! What `#[capability]` registers at link time, and what the registry
//! reports when the registrations and the specs disagree.

use std::fmt;

use serde_json::Value;

use crate::error::CapError;
use crate::gate::BoxFuture;
use crate::run::Run;

/// A type-erased capability implementation, as `#[capability]` registers it.
pub type ImplFn = for<'a> fn(&'a Run, Value) -> BoxFuture<'a, Result<Value, CapError>>;

/// One `#[capability]` fn, registered at link time.
pub struct Registration {
    /// The module and name of the spec the fn implements.
    pub module: &'static str,
    /// (With `module`.)
    pub name: &'static str,
    /// The fingerprint of the generated spec the fn was compiled against;
    /// `None` for an impl of a code-first spec (its args struct is the
    /// spec's own type, so there is nothing older to compile against).
    pub fingerprint: Option<&'static str>,
    /// The type-erased wrapper the macro generates.
    pub call: ImplFn,
    /// Where the fn is written, for registry errors.
    pub file: &'static str,
    /// Line of the fn.
    pub line: u32,
}

inventory::collect!(Registration);

/// Every registration linked into this binary.
pub fn registrations() -> impl Iterator<Item = &'static Registration> {
    inventory::iter::<Registration>.into_iter()
}

/// Problems found when the registry is built; all of them, not the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    /// Every problem found, one line each.
    pub problems: Vec<String>,
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the capability registry is inconsistent:")?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistryError {}
