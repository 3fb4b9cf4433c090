//! Upstream modules (DESIGN §12): a module whose capabilities an MCP
//! server implements. This file holds what needs no server: writing the
//! pinned module from a listing (`import mcp --upstream`, with `--update`
//! keeping the project's decisions), and comparing a live listing with the
//! pins (`check --upstream`). Connecting is the caller's: the command line
//! lists the tools and hands them here, so a plain `check` never starts a
//! server.

use serde_json::Value;

pub use crate::config::{Credentials, OAuthClient, Start, Transport, Upstream};
use crate::finding::Finding;
use crate::import::{self, ImportError, ImportOptions, Imported};
use crate::load::{self, SpecFile};
use crate::model::{CapabilitySpec, ModuleSpec};
use crate::rules as rule;

/// The pinned module of `server`'s listing `tools` (each a `tools/list`
/// entry), written as `<module>.yaml`; with `keep`, the project's module,
/// whose decisions stay.
pub fn pin_module(module: &str, server: &str, tools: &[Value], keep: Option<&ModuleSpec>) -> Result<Imported, ImportError> {
    let listed: Vec<(String, Value)> = tools.iter().map(|t| (format!("[upstream.{server}]"), t.clone())).collect();
    import::import_with(module, &listed, ImportOptions { upstream: Some(server), keep, written: None })
}

/// `import mcp --upstream --update`: [`pin_module`] keeping `kept`, the
/// project's module, whose file's text is `text` — an edit made there to a
/// capability's description or schemas stays while the server's tool is
/// unchanged, and is refused by name (`Imported::refused`) when it changed.
pub fn update_module(module: &str, server: &str, tools: &[Value], kept: &ModuleSpec, text: &str) -> Result<Imported, ImportError> {
    let listed: Vec<(String, Value)> = tools.iter().map(|t| (format!("[upstream.{server}]"), t.clone())).collect();
    let written = import::written_digests(text);
    import::import_with(module, &listed, ImportOptions { upstream: Some(server), keep: Some(kept), written: Some(&written) })
}

/// How one tool moved between two pinned modules of the same server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Listed now, pinned by no capability.
    Added {
        /// The tool's name on the server.
        tool: String,
    },
    /// Pinned and still listed, but its listing no longer makes a valid
    /// spec (the loader's errors say why).
    Invalid {
        /// The capability that pinned it.
        capability: String,
        /// The tool's name on the server.
        tool: String,
    },
    /// Pinned, no longer listed.
    Removed {
        /// The capability that pinned it.
        capability: String,
        /// The tool's name on the server.
        tool: String,
    },
    /// Listed with another pin.
    Changed {
        /// The capability that pinned it.
        capability: String,
        /// The tool's name on the server.
        tool: String,
        /// Which of `description`, `input schema`, `output schema`, `title or annotations` moved.
        what: Vec<&'static str>,
        /// A unified diff of the texts that moved.
        diff: String,
    },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Added { tool } => write!(f, "added    `{tool}`"),
            Change::Invalid { capability, tool } => write!(f, "invalid  `{tool}` (capability `{capability}`): still listed, but its listing no longer makes a valid spec"),
            Change::Removed { capability, tool } => write!(f, "removed  `{tool}` (capability `{capability}`)"),
            Change::Changed { capability, tool, what, .. } => write!(f, "changed  `{tool}` (capability `{capability}`): {}", what.join(", ")),
        }
    }
}

fn tool_of(c: &CapabilitySpec) -> &str {
    c.tool.as_deref().unwrap_or(&c.name)
}

/// What moved from the pinned module `old` to `new` (both of one server),
/// tool by tool in name order.
pub fn changes(old: &ModuleSpec, new: &ModuleSpec) -> Vec<Change> {
    let mut out = Vec::new();
    for c in &old.capabilities {
        let tool = tool_of(c).to_string();
        match new.capabilities.iter().find(|n| tool_of(n) == tool) {
            None => out.push(Change::Removed { capability: c.name.clone(), tool }),
            Some(n) if n.pin == c.pin => {}
            Some(n) => {
                let json = |s: &Option<crate::model::Schema>| s.as_ref().map(|s| serde_json::to_string_pretty(&s.to_json()).expect("schemas serialize") + "\n").unwrap_or_default();
                let mut what = Vec::new();
                let mut diff = String::new();
                for (label, before, after) in [
                    ("description", format!("{}\n", c.description), format!("{}\n", n.description)),
                    ("input schema", json(&c.input), json(&n.input)),
                    ("output schema", json(&c.output), json(&n.output)),
                ] {
                    if before != after {
                        what.push(label);
                        diff.push_str(&super::drift::unified_diff(&format!("{tool} {label}"), &before, &after).1);
                        diff.push('\n');
                    }
                }
                if what.is_empty() {
                    // The pin covers the title and annotations too, which the
                    // module keeps as the project decided.
                    what.push("title or annotations");
                }
                out.push(Change::Changed { capability: c.name.clone(), tool, what, diff: diff.trim_end().to_string() });
            }
        }
    }
    for n in &new.capabilities {
        if !old.capabilities.iter().any(|c| tool_of(c) == tool_of(n)) {
            out.push(Change::Added { tool: tool_of(n).to_string() });
        }
    }
    out
}

/// [`changes`] from `old` to `new`, the pinned module of the live listing
/// `tools`: a tool `tools` still names is never removed — when `new` lacks
/// it, its listing did not load, and it is [`Change::Invalid`].
pub fn changes_listed(old: &ModuleSpec, new: &ModuleSpec, tools: &[Value]) -> Vec<Change> {
    let listed: std::collections::BTreeSet<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    changes(old, new)
        .into_iter()
        .map(|change| match change {
            Change::Removed { capability, tool } if listed.contains(tool.as_str()) => Change::Invalid { capability, tool },
            other => other,
        })
        .collect()
}

/// `check --upstream` for one module: its server's live listing `tools`
/// compared with its pins, as `upstream/*` findings.
pub fn compare(module: &ModuleSpec, tools: &[Value]) -> Vec<Finding> {
    let Some((server, server_pos)) = &module.upstream else { return Vec::new() };
    // Why each tool's new listing does not load, by capability name.
    let mut problems: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    let live = match pin_module(&module.name, server, tools, Some(module)) {
        Ok(imported) => {
            let loaded = load::load_files(vec![SpecFile { path: module.file.clone(), bytes: imported.yaml.into_bytes() }]);
            for f in loaded.findings.iter().filter(|f| f.severity == crate::finding::Severity::Error) {
                problems.entry(f.capability.clone().unwrap_or_default()).or_default().push(f.message.clone());
            }
            loaded.set.modules.into_iter().next()
        }
        Err(_) => None,
    };

    let Some(live) = live else {
        return vec![unreachable(module, "it listed no usable tool")];
    };
    changes_listed(module, &live, tools)
        .into_iter()
        .map(|change| {
            let at = |capability: &str| module.capabilities.iter().find(|c| c.name == capability).map_or(*server_pos, |c| c.pos);
            match change {
                Change::Added { tool } => Finding::warning(
                    rule::UPSTREAM_ADDED,
                    &module.file,
                    *server_pos,
                    format!("[upstream.{server}] lists `{tool}`, which no capability of `{}` pins; it is not mounted until `cargo capspec import mcp --upstream {server} --update` pins it", module.name),
                ),
                // Still listed: its new listing is what does not load.
                Change::Invalid { capability, tool } => {
                    let why = problems.get(&capability).or_else(|| problems.get("")).map(|p| p.join("; ")).unwrap_or_else(|| "it is not among the tools its listing pins".into());
                    Finding::error(
                        rule::UPSTREAM_CHANGED,
                        &module.file,
                        at(&capability),
                        format!("`{}.{capability}`: [upstream.{server}] still lists `{tool}`, but its listing no longer makes a valid spec: {why}; until that is fixed at the server (or by hand in its pin) the runtime refuses it with `upstream_changed`", module.name),
                    )
                    .for_capability(&capability)
                }
                Change::Removed { capability, tool } => Finding::error(
                    rule::UPSTREAM_REMOVED,
                    &module.file,
                    at(&capability),
                    format!("`{}.{capability}` pins `{tool}`, which [upstream.{server}] no longer lists; remove the capability or run `import mcp --upstream {server} --update`", module.name),
                )
                .for_capability(&capability),
                Change::Changed { capability, tool, what, diff } => Finding::error(
                    rule::UPSTREAM_CHANGED,
                    &module.file,
                    at(&capability),
                    format!(
                        "`{}.{capability}`: [upstream.{server}] lists `{tool}` with another {} than its pin; review the change, then `import mcp --upstream {server} --update` pins it (until then the runtime refuses it with `upstream_changed`)",
                        module.name,
                        what.join(", ")
                    ),
                )
                .with_diff(diff)
                .for_capability(&capability),
            }
        })
        .collect()
}

/// `upstream/unauthorized` for a module whose OAuth server has no usable
/// log-in (`why` names the log-in command).
pub fn unauthorized(module: &ModuleSpec, why: &str) -> Finding {
    let (server, pos) = module.upstream.clone().unwrap_or_default();
    Finding::error(rule::UPSTREAM_UNAUTHORIZED, &module.file, pos, format!("[upstream.{server}] is behind OAuth and could not be listed: {why}; `{}` was not compared with its pins", module.name))
}

/// `upstream/unreachable` for a module whose server could not be listed.
pub fn unreachable(module: &ModuleSpec, why: &str) -> Finding {
    let (server, pos) = module.upstream.clone().unwrap_or_default();
    Finding::error(rule::UPSTREAM_UNREACHABLE, &module.file, pos, format!("[upstream.{server}] could not be listed ({why}); `{}` was not compared with its pins", module.name))
}
