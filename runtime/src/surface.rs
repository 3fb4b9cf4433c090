//! What a session offers on a flat tool surface (MCP's tools surface, a
//! provider's tools array) — one rule for both: every mounted, non-deferred
//! capability, plus the built-in `tool_search` when some are deferred, so
//! those stay reachable. And the catalog a tiered session loads up front.

use crate::builtin::TOOL_SEARCH;
use crate::registry::Mounted;
use crate::spec::Spec;

impl Mounted {
    /// Whether any mounted capability is deferred (listed by name only):
    /// then `tool_search` is how a model finds it.
    pub fn has_deferred(&self) -> bool {
        self.modules().any(|m| m.specs.iter().any(|s| s.deferred))
    }

    /// The specs a flat tool surface lists, in module then name order:
    /// the non-deferred ones, then `tool_search` when any is deferred.
    pub fn tool_surface(&self) -> Vec<&'static Spec> {
        let search: Option<&'static Spec> = self.has_deferred().then_some(&TOOL_SEARCH);
        self.modules().flat_map(|m| m.specs.iter()).filter(|s| !s.deferred).chain(search).collect()
    }

    /// The always-loaded catalog for a tiered session: counts, module
    /// names, `tool_search` and the non-deferred entries
    /// ([`tiered_catalog`](crate::tiered_catalog)).
    pub fn tiered_catalog(&self) -> String {
        crate::tiered::tiered_catalog(self.modules())
    }
}
