//! What one principal is shown (DESIGN §10, "What a caller sees"): the
//! capabilities the project's policies deny it whatever the input and the
//! mode are [`Hidden`]. A run that hides any carries them, and the ladder's
//! lookup, `tool_search` and a guest's `capabilities()` treat a hidden
//! capability as one that is not mounted; the MCP surface lists, describes
//! and serves only what is left (`mcp/view.rs`).
//!
//! The decision is Cedar's partial evaluation
//! (`capspec_policy::Policies::denies_whatever_input`), never a rule of
//! capspec's own.

pub use crate::hidden::{CapabilityInfo, Hidden};
use crate::registry::Mounted;
use crate::spec::Module;
#[cfg(feature = "policy")]
use crate::spec::Spec;

/// `mounted`'s capabilities as the policies see them, and what deciding
/// them for a principal comes down to ([`capspec_policy::Policies::plan`]):
/// worked out once per host, at its first view.
#[cfg(feature = "policy")]
pub struct Planned {
    specs: Vec<&'static Spec>,
    upstreams: Vec<Option<String>>,
    plan: capspec_policy::Plan,
}

#[cfg(feature = "policy")]
impl Planned {
    /// The plan of `mounted` under `gate`'s policies.
    pub fn new(mounted: &Mounted, gate: &crate::policy_gate::PolicyGate) -> Planned {
        // A module's capabilities are all its upstream server's, or all local.
        let (mut specs, mut upstreams) = (Vec::new(), Vec::new());
        for module in mounted.modules() {
            let upstream = module.specs.first().and_then(|s| mounted.upstream_of(&format!("{}.{}", s.module, s.name))).map(str::to_string);
            for spec in module.specs {
                specs.push(spec);
                upstreams.push(upstream.clone());
            }
        }
        let plan = capspec_policy::Plan::default();
        let mut planned = Planned { specs, upstreams, plan };
        planned.plan = gate.policies().plan(&planned.listed());
        planned
    }

    fn listed(&self) -> Vec<capspec_policy::Listed<'_>> {
        self.specs
            .iter()
            .zip(&self.upstreams)
            .map(|(s, u)| capspec_policy::Listed { module: s.module, capability: s.name, category: s.category, upstream: u.as_deref() })
            .collect()
    }
}

/// What the project's policies deny `principal` whatever the input and the
/// mode, among the capabilities `planned` holds. Nothing in `log` mode:
/// there the policies decide no call.
#[cfg(feature = "policy")]
pub fn hidden(planned: &Planned, gate: &crate::policy_gate::PolicyGate, principal: &crate::principal::Principal) -> Hidden {
    if gate.mode() == crate::policy_gate::PolicyMode::Log || gate.policies().is_empty() {
        return Hidden::default();
    }
    let who = capspec_policy::Who { principal: principal.id(), groups: principal.groups() };
    let denied = gate.policies().deny_planned(&planned.plan, who, &planned.listed());
    Hidden::new(planned.specs.iter().zip(denied).filter(|(_, d)| *d).map(|(s, _)| format!("{}.{}", s.module, s.name)))
}

/// The prompt catalog of `mounted` without the hidden capabilities: their
/// entries and deferred names left out, and a module none of whose
/// capabilities is shown left out whole.
pub fn catalog(mounted: &Mounted, hidden: &Hidden) -> String {
    if hidden.is_empty() {
        return mounted.catalog();
    }
    mounted
        .modules()
        .filter(|m| !m.specs.iter().all(|s| hidden.hides(s)))
        .map(|m| if m.specs.iter().any(|s| hidden.hides(s)) { section(m, hidden) } else { m.catalog.to_string() })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A module's catalog section without its hidden capabilities. An entry is
/// a line `- <category> `<name>(…` and the indented lines under it; the
/// deferred ones are named on the line `Deferred (…): `a`, `b``.
fn section(module: &Module, hidden: &Hidden) -> String {
    let hidden_name = |name: &str| module.specs.iter().any(|s| s.name == name && hidden.hides(s));
    let mut out = String::new();
    let mut skipping = false;
    for line in module.catalog.split_inclusive('\n') {
        if skipping && line.starts_with("  ") {
            continue;
        }
        skipping = entry_name(line).is_some_and(hidden_name);
        if skipping {
            continue;
        }
        match line.split_once("): ").filter(|_| line.starts_with("Deferred (")) {
            Some((head, names)) => {
                let kept: Vec<&str> = names.trim_end().split(", ").filter(|n| !hidden_name(n.trim_matches('`').trim())).collect();
                if !kept.is_empty() {
                    out.push_str(&format!("{head}): {}\n", kept.join(", ")));
                }
            }
            None => out.push_str(line),
        }
    }
    out
}

/// The capability a catalog line begins the entry of: `name` in
/// ``- write `name({…}) → …`: …``.
fn entry_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("- ")?;
    let (category, rest) = rest.split_once(' ')?;
    if !matches!(category, "read" | "write" | "execute" | "external") {
        return None;
    }
    let rest = rest.trim_start_matches('`').trim_start();
    rest.split_once('(').map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_line_names_its_capability_and_nothing_else_does() {
        assert_eq!(entry_name("- write `create_note({title}) → {id}`: Create a note.\n"), Some("create_note"));
        assert_eq!(entry_name("- read `` odd`name({}) ``: x"), Some("odd`name"));
        assert_eq!(entry_name("- `tags`: Tags to add.\n"), None);
        assert_eq!(entry_name("  - `type Note = {id}`\n"), None);
    }
}
