//! What one principal is not shown (DESIGN §10): a leaf the registry, the
//! built-in search and the guest read from a call's run, and the listing
//! type they share. How it is decided and what a surface shows are
//! `crate::view`'s.

use std::collections::BTreeSet;

use crate::spec::Spec;

/// A capability as listed to a session.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CapabilityInfo {
    /// The module.
    pub module: &'static str,
    /// The capability name.
    pub name: &'static str,
    /// The safety category.
    pub category: crate::spec::Category,
    /// The catalog one-liner.
    pub summary: &'static str,
    /// Listed by name only in the catalog.
    pub deferred: bool,
}

/// The capabilities (qualified names) one principal is not shown and whose
/// calls are answered as a call of an unknown capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Hidden(pub(crate) BTreeSet<String>);

impl Hidden {
    /// Hide these qualified names.
    pub fn new(names: impl IntoIterator<Item = String>) -> Hidden {
        Hidden(names.into_iter().collect())
    }

    /// Whether `module.name` is hidden.
    pub fn contains(&self, qualified: &str) -> bool {
        self.0.contains(qualified)
    }

    /// Whether `spec` is hidden.
    pub fn hides(&self, spec: &Spec) -> bool {
        !self.0.is_empty() && self.0.contains(&format!("{}.{}", spec.module, spec.name))
    }

    /// This and `more` hidden.
    pub fn with(mut self, more: &Hidden) -> Hidden {
        self.0.extend(more.0.iter().cloned());
        self
    }

    /// Whether nothing is hidden.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The hidden capabilities' qualified names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

