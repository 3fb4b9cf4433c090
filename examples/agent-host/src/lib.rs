//! agent-host: a small, real host for the repo's reference catalog
//! (`specs/`). Every capability is implemented here with `#[capability]`;
//! the runtime calls them only through `invoke`, behind the gate.

pub mod capabilities;
pub mod generated;
pub mod workspace;

use std::sync::Arc;

use capspec::{Registry, RegistryError};

/// The registry of every generated module and its impls.
pub fn registry() -> Result<Arc<Registry>, RegistryError> {
    Registry::new(generated::MODULES)
}
