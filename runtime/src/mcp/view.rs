//! What each principal is shown on one host's surface (DESIGN §10, "What a
//! caller sees"): the tools list, `execute_code`'s catalog, the
//! capabilities resource and the catalog resource, less what the
//! project's policies deny that principal whatever the input and mode
//! (`crate::view`). A view is built once per key and kept: the key is the
//! principal's groups, and its id too when some policy names a user (the
//! surface and the policy set are the host's own, so fixed). With no
//! policies, or policies in `log` mode, everyone is shown the same view
//! and nothing is kept per principal.

#[cfg(feature = "policy")]
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
#[cfg(feature = "policy")]
use std::sync::RwLock;

use rmcp::model::Tool;
use serde_json::Value;

use crate::principal::Principal;
use crate::registry::Mounted;
use crate::spec::Spec;
use crate::view::Hidden;

use super::tools;

/// Which tools a session lists (DESIGN §10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Surface {
    /// `execute_code` plus one tool per mounted capability whose spec says
    /// `direct: true`.
    #[default]
    Code,
    /// One tool per mounted, non-deferred capability, named by its wire name.
    Tools,
}

impl Surface {
    /// `code` or `tools`, as `--surface` takes it.
    pub fn parse(text: &str) -> Option<Surface> {
        match text {
            "code" => Some(Surface::Code),
            "tools" => Some(Surface::Tools),
            _ => None,
        }
    }
}

/// How many views a host keeps; past it, it starts again.
#[cfg(feature = "policy")]
const KEPT: usize = 4096;

/// What one principal is shown. Its tools are cut from the surface's
/// (built once, at start); the catalog and the capabilities resource are
/// written the first time they are read, except where `execute_code`'s
/// description needs the catalog at once.
pub(super) struct View {
    /// What it is not shown; `None` when nothing is hidden.
    pub(super) hidden: Option<Arc<Hidden>>,
    /// `execute_code`, described with this view's catalog (code surface).
    execute_code: Option<Tool>,
    /// Which of the surface's tools it lists, by position.
    picks: Vec<usize>,
    catalog: OnceLock<String>,
    capabilities: OnceLock<String>,
}

impl View {
    fn build(what: &Listing, hidden: Hidden) -> View {
        let catalog = OnceLock::new();
        // The code surface exists only in a build with code mode.
        #[cfg(feature = "quickjs")]
        let execute_code = (what.surface == Surface::Code).then(|| tools::execute_code_tool(catalog.get_or_init(|| crate::view::catalog(&what.mounted, &hidden))));
        #[cfg(not(feature = "quickjs"))]
        let execute_code = None;
        let picks = what.tools.iter().enumerate().filter(|(_, (qualified, _))| !hidden.contains(qualified)).map(|(i, _)| i).collect();
        let hidden = (!hidden.is_empty()).then(|| Arc::new(hidden));
        View { hidden, execute_code, picks, catalog, capabilities: OnceLock::new() }
    }

    /// What it is not shown, empty or not.
    fn hidden_or_none(&self) -> &Hidden {
        static NONE: std::sync::LazyLock<Hidden> = std::sync::LazyLock::new(Hidden::default);
        self.hidden.as_deref().unwrap_or(&NONE)
    }

    /// Whether the capability `qualified` is hidden from this view's principal.
    pub(super) fn hides(&self, qualified: &str) -> bool {
        self.hidden.as_ref().is_some_and(|h| h.contains(qualified))
    }
}

/// The specs a surface lists: the direct ones (code), the mount's tool
/// surface (tools), in module then name order.
pub(super) fn listed(mounted: &Mounted, surface: Surface) -> Vec<&'static Spec> {
    match surface {
        Surface::Code => mounted.modules().flat_map(|m| m.specs.iter()).filter(|s| s.direct).collect(),
        Surface::Tools => mounted.tool_surface(),
    }
}

/// What a view is built from: the mount, and the tools its surface lists
/// (each with the capability it calls), built once.
struct Listing {
    mounted: Mounted,
    #[cfg_attr(not(feature = "quickjs"), allow(dead_code))]
    surface: Surface,
    specifier: String,
    unmounted: Vec<Value>,
    tools: Vec<(String, Tool)>,
}

/// Who a view is kept for.
#[cfg(feature = "policy")]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    /// Only when some policy names a user.
    principal: Option<String>,
    groups: Vec<String>,
}

/// Every view of one host: everyone's, and those kept per key.
pub(super) struct Views {
    listing: Listing,
    /// Everyone's tools list, whole.
    all: Vec<Tool>,
    /// What the host serves nobody (a named surface's capabilities outside its globs).
    outside: Hidden,
    everyone: Arc<View>,
    #[cfg(feature = "policy")]
    gate: Option<Arc<crate::policy_gate::PolicyGate>>,
    #[cfg(feature = "policy")]
    planned: OnceLock<crate::view::Planned>,
    #[cfg(feature = "policy")]
    kept: RwLock<HashMap<Key, Arc<View>>>,
}

impl Views {
    /// The views of `mounted` on `surface`, under the policies `probe`
    /// (a run as the host prepares every call's) enforces: so what is shown
    /// comes from the very policies that decide the calls.
    pub(super) fn new(mounted: Mounted, surface: Surface, specifier: &str, unmounted: Vec<Value>, probe: &crate::run::Run, outside: Hidden) -> Views {
        let tools = listed(&mounted, surface).into_iter().map(|s| (format!("{}.{}", s.module, s.name), tools::capability_tool(s))).collect();
        let listing = Listing { mounted, surface, specifier: specifier.to_string(), unmounted, tools };
        let everyone = Arc::new(View::build(&listing, outside.clone()));
        let all = Views::list(&listing, &everyone);
        #[cfg(feature = "policy")]
        let gate = probe.policy_gate().filter(|g| g.mode() == crate::policy_gate::PolicyMode::Enforce && !g.policies().is_empty()).cloned();
        #[cfg(not(feature = "policy"))]
        let _ = probe;
        Views {
            all,
            listing,
            outside,
            everyone,
            #[cfg(feature = "policy")]
            gate,
            #[cfg(feature = "policy")]
            planned: OnceLock::new(),
            #[cfg(feature = "policy")]
            kept: RwLock::new(HashMap::new()),
        }
    }

    fn list(listing: &Listing, view: &View) -> Vec<Tool> {
        let mut out = Vec::with_capacity(view.picks.len() + 1);
        out.extend(view.execute_code.iter().cloned());
        out.extend(view.picks.iter().map(|&i| listing.tools[i].1.clone()));
        out
    }

    /// `view`'s tools list (`tools/list`), in the surface's order.
    pub(super) fn tools(&self, view: &View) -> Vec<Tool> {
        if std::ptr::eq(view, &*self.everyone) { self.all.clone() } else { Views::list(&self.listing, view) }
    }

    /// The tools a caller who is not hidden anything is shown.
    pub(super) fn all(&self) -> &[Tool] {
        &self.all
    }

    /// The names of `view`'s tools, in order.
    pub(super) fn names<'v>(&'v self, view: &'v View) -> impl Iterator<Item = &'v str> {
        view.execute_code.iter().map(|t| t.name.as_ref()).chain(view.picks.iter().map(|&i| self.listing.tools[i].1.name.as_ref()))
    }

    /// `view`'s catalog (the `capspec://catalog` resource).
    pub(super) fn catalog<'v>(&self, view: &'v View) -> &'v str {
        view.catalog.get_or_init(|| crate::view::catalog(&self.listing.mounted, view.hidden_or_none()))
    }

    /// `view`'s capabilities.json (the `capspec://capabilities` resource).
    pub(super) fn capabilities<'v>(&self, view: &'v View) -> &'v str {
        let listing = &self.listing;
        view.capabilities.get_or_init(|| tools::capabilities_json(&listing.mounted, &listing.specifier, view.hidden_or_none(), &listing.unmounted))
    }

    /// What is shown when no policy hides anything.
    pub(super) fn everyone(&self) -> &View {
        &self.everyone
    }

    /// What `principal` is shown: built the first time its key is seen, then kept.
    pub(super) fn of(&self, principal: &Principal) -> Arc<View> {
        #[cfg(feature = "policy")]
        if let Some(gate) = &self.gate {
            let key = Key { principal: gate.policies().names_users().then(|| principal.id().to_string()), groups: sorted(principal.groups()) };
            if let Some(view) = self.kept.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
                return view.clone();
            }
            let planned = self.planned.get_or_init(|| crate::view::Planned::new(&self.listing.mounted, gate));
            let hidden = crate::view::hidden(planned, gate, principal).with(&self.outside);
            let view = if hidden == self.outside { self.everyone.clone() } else { Arc::new(View::build(&self.listing, hidden)) };
            let mut kept = self.kept.write().unwrap_or_else(|e| e.into_inner());
            if kept.len() >= KEPT {
                kept.clear();
            }
            kept.insert(key, view.clone());
            return view;
        }
        let _ = principal;
        self.everyone.clone()
    }

    /// Whether principals may be shown different views (policies are enforced).
    pub(super) fn per_principal(&self) -> bool {
        #[cfg(feature = "policy")]
        return self.gate.is_some();
        #[cfg(not(feature = "policy"))]
        false
    }

    /// Whether some capability may be hidden from some caller: policies
    /// are enforced, or the host serves only some of its capabilities.
    pub(super) fn filters(&self) -> bool {
        self.per_principal() || !self.outside.is_empty()
    }

    /// What a call's run must not reach for `principal`; `None` when
    /// nothing is hidden.
    pub(super) fn hidden(&self, principal: &Principal) -> Option<Arc<Hidden>> {
        #[cfg(feature = "policy")]
        if self.gate.is_some() {
            return self.of(principal).hidden.clone();
        }
        let _ = principal;
        self.everyone.hidden.clone()
    }
}

/// Groups in one order, each once: the same set is the same key.
#[cfg(feature = "policy")]
fn sorted(groups: &[String]) -> Vec<String> {
    let mut groups = groups.to_vec();
    groups.sort();
    groups.dedup();
    groups
}

/// What one 2025-11-25 session was last shown, so that it is told
/// (`notifications/tools/list_changed`) when that changes: a refreshed
/// token with other groups, in the same session. Made only where views
/// are per principal.
#[derive(Clone, Default)]
pub(super) struct Shown(Arc<Mutex<Option<Option<Arc<Hidden>>>>>);

impl Shown {
    /// Whether `view` shows other capabilities than this session was last
    /// shown (never the first time); `view` is what it is shown now.
    pub(super) fn changed(&self, view: &View) -> bool {
        let mut last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let now = view.hidden.clone();
        let changed = last.as_ref().is_some_and(|before| *before != now);
        *last = Some(now);
        changed
    }
}
