//! Who calls (DESIGN §13): the principal of a run. Every receipt, span
//! (`enduser.id`), approval prompt and sealed `requestState` names it.
//!
//! - `local`: an in-process or stdio host, unless the host sets another;
//! - `token`: an HTTP request holding the server's one shared bearer token;
//! - a token's `sub`, in the groups its groups claim lists (OAuth).

use std::sync::Arc;

/// The caller of a run: an id and the groups it belongs to. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    id: Arc<str>,
    groups: Arc<[String]>,
}

impl Principal {
    /// The id of an in-process or stdio caller.
    pub const LOCAL: &'static str = "local";
    /// The id of an HTTP caller holding the server's shared bearer token.
    pub const TOKEN: &'static str = "token";

    /// `id`, in no group.
    pub fn new(id: impl Into<Arc<str>>) -> Principal {
        Principal { id: id.into(), groups: Arc::from([]) }
    }

    /// `id`, in `groups` (sorted, without repeats: the same set reads the same everywhere).
    pub fn with_groups(id: impl Into<Arc<str>>, groups: impl IntoIterator<Item = impl Into<String>>) -> Principal {
        let mut groups: Vec<String> = groups.into_iter().map(Into::into).collect();
        groups.sort();
        groups.dedup();
        Principal { id: id.into(), groups: groups.into() }
    }

    /// `local`: the caller of an in-process or stdio host.
    pub fn local() -> Principal {
        Principal::new(Principal::LOCAL)
    }

    /// `token`: the caller holding an HTTP server's shared bearer token.
    pub fn token() -> Principal {
        Principal::new(Principal::TOKEN)
    }

    /// The principal's id: what receipts and spans name.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The shared id, for a receipt.
    pub(crate) fn shared_id(&self) -> Arc<str> {
        self.id.clone()
    }

    /// The groups the principal is in, sorted.
    pub fn groups(&self) -> &[String] {
        &self.groups
    }
}

impl Default for Principal {
    fn default() -> Principal {
        Principal::local()
    }
}

impl std::fmt::Display for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_a_set_and_the_defaults_are_named() {
        let p = Principal::with_groups("alice", ["support", "admins", "support"]);
        assert_eq!(p.id(), "alice");
        assert_eq!(p.groups(), ["admins", "support"]);
        assert_eq!(Principal::default().id(), "local");
        assert_eq!(Principal::token().to_string(), "token");
    }
}
