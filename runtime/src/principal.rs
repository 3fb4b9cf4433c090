//! Who calls (DESIGN §13): the principal of a run. Every receipt, span
//! (`enduser.id`), approval prompt and sealed `requestState` names it.
//!
//! - `local`: an in-process or stdio host, unless the host sets another;
//! - `token`: an HTTP request holding the server's one shared bearer token;
//! - a token's `sub`, in the groups its groups claim lists (OAuth), with
//!   the categories its scopes grant.

use std::sync::Arc;

use crate::spec::Category;

/// The caller of a run: an id, the groups it belongs to and the categories
/// it may call. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    id: Arc<str>,
    groups: Arc<[String]>,
    scopes: Scopes,
}

/// The categories a caller may call (DESIGN §13): every one for `local`,
/// `token` and a host's own principals; for an OAuth caller, those its
/// token's `capspec:<category>` scopes name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scopes(u8);

impl Scopes {
    /// Every category.
    pub const ALL: Scopes = Scopes(0b1111);

    fn bit(category: Category) -> u8 {
        1 << (category as u8)
    }

    /// The categories whose scopes are among `scopes`; other scopes are ignored.
    pub fn of<'a>(scopes: impl IntoIterator<Item = &'a str>) -> Scopes {
        Scopes(scopes.into_iter().filter_map(Category::of_scope).fold(0, |bits, c| bits | Scopes::bit(c)))
    }

    /// Whether a capability of `category` may be called.
    pub fn allows(self, category: Category) -> bool {
        self.0 & Scopes::bit(category) != 0
    }
}

impl Principal {
    /// The id of an in-process or stdio caller.
    pub const LOCAL: &'static str = "local";
    /// The id of an HTTP caller holding the server's shared bearer token.
    pub const TOKEN: &'static str = "token";

    /// `id`, in no group.
    pub fn new(id: impl Into<Arc<str>>) -> Principal {
        Principal { id: id.into(), groups: Arc::from([]), scopes: Scopes::ALL }
    }

    /// `id`, in `groups` (sorted, without repeats: the same set reads the same everywhere).
    pub fn with_groups(id: impl Into<Arc<str>>, groups: impl IntoIterator<Item = impl Into<String>>) -> Principal {
        let mut groups: Vec<String> = groups.into_iter().map(Into::into).collect();
        groups.sort();
        groups.dedup();
        Principal { id: id.into(), groups: groups.into(), scopes: Scopes::ALL }
    }

    /// This principal, limited to the categories `scopes` grants.
    pub fn with_scopes(self, scopes: Scopes) -> Principal {
        Principal { scopes, ..self }
    }

    /// The categories the principal may call.
    pub fn scopes(&self) -> Scopes {
        self.scopes
    }

    /// `local`: the caller of an in-process or stdio host. Made once and
    /// shared: every call of a host that names nobody else starts from it.
    pub fn local() -> Principal {
        static LOCAL: std::sync::LazyLock<Principal> = std::sync::LazyLock::new(|| Principal::new(Principal::LOCAL));
        LOCAL.clone()
    }

    /// `token`: the caller holding an HTTP server's shared bearer token.
    pub fn token() -> Principal {
        static TOKEN: std::sync::LazyLock<Principal> = std::sync::LazyLock::new(|| Principal::new(Principal::TOKEN));
        TOKEN.clone()
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
        assert!(Category::ALL.into_iter().all(|c| p.scopes().allows(c)), "no scopes set: every category");
    }

    #[test]
    fn scopes_name_categories() {
        let scopes = Scopes::of(["openid", "capspec:read", "capspec:external", "capspec:admin"]);
        let allowed: Vec<Category> = Category::ALL.into_iter().filter(|c| scopes.allows(*c)).collect();
        assert_eq!(allowed, [Category::Read, Category::External]);
        assert!(!Scopes::of([]).allows(Category::Read));
    }
}
