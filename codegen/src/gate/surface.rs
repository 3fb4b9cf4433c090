//! `check`'s half of named surfaces (DESIGN §10): each `[surface.NAME]` of
//! `capspec.toml` held against the specs, every finding located at the key
//! in `capspec.toml` that is wrong.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{CONFIG_FILE, Config};
use crate::finding::Finding;
use crate::model::SpecSet;
use crate::rules::*;
use capspec_names::{did_you_mean, glob_matches};

/// What the config's named surfaces get wrong against `set`, and against
/// the groups the project's policies name.
pub(crate) fn findings(root: &Path, config: &Config, set: &SpecSet) -> Vec<Finding> {
    let mut out = Vec::new();
    let known: Vec<&str> = set.modules.iter().map(|m| m.name.as_str()).collect();
    let named_groups = policy_groups(root, config);
    // `/mcp` itself is the default surface's.
    let mut paths: BTreeMap<&str, &str> = BTreeMap::from([("/mcp", "the default surface")]);
    for surface in config.surfaces.values() {
        let name = &surface.name;
        for (module, pos) in &surface.modules {
            if !known.contains(&module.as_str()) {
                let hint = did_you_mean(module, known.iter().copied());
                out.push(Finding::error(SURFACE_UNKNOWN_MODULE, CONFIG_FILE, *pos, format!("[surface.{name}] mounts `{module}`, which no spec declares{hint}")));
            }
        }
        let mounted = |module: &str| surface.modules.is_empty() || surface.modules.iter().any(|(m, _)| m == module);
        let qualified: Vec<String> = set.capabilities().filter(|(m, _)| mounted(&m.name)).map(|(m, c)| format!("{}.{}", m.name, c.name)).collect();
        for (glob, pos) in &surface.capabilities {
            if !qualified.iter().any(|q| glob_matches(glob, q)) {
                let among = if surface.modules.is_empty() { "any module".to_string() } else { format!("its modules ({})", surface.modules.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>().join(", ")) };
                out.push(Finding::error(SURFACE_NO_MATCH, CONFIG_FILE, *pos, format!("[surface.{name}] serves `{glob}`, which matches no capability of {among}: qualified names are `module.capability`, and `*` stands for any run of characters")));
            }
        }
        if let Some(first) = paths.insert(&surface.path, name) {
            let first = if first == "the default surface" { first.to_string() } else { format!("[surface.{first}]") };
            out.push(Finding::error(SURFACE_PATH_TAKEN, CONFIG_FILE, surface.path_pos, format!("[surface.{name}] is served at `{}`, where {first} is already: give it its own `path`", surface.path)));
        }
        if let Some(named) = &named_groups {
            for (group, pos) in &surface.groups {
                if !named.contains(group) {
                    out.push(Finding::warning(SURFACE_UNKNOWN_GROUP, CONFIG_FILE, *pos, format!("[surface.{name}] admits the group `{group}`, which no policy names: only a token that carries it admits anyone, so check the spelling against your identity provider's groups")));
                }
            }
        }
    }
    out
}

/// The groups the project's policies name; `None` when they cannot be read
/// (another check reports why) or this capspec has no policy support.
#[cfg(feature = "policy")]
fn policy_groups(root: &Path, config: &Config) -> Option<std::collections::BTreeSet<String>> {
    let dir = config.policy.as_ref().map_or(crate::config::defaults::POLICY_DIR, |p| p.dir.as_str());
    capspec_policy::Policies::load_dir(&root.join(dir), dir).ok().map(|p| p.group_names())
}

#[cfg(not(feature = "policy"))]
fn policy_groups(_root: &Path, _config: &Config) -> Option<std::collections::BTreeSet<String>> {
    None
}
