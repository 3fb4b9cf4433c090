//! `[surface.NAME]` (DESIGN §10, "Named surfaces"): a tool set one
//! deployment serves a team at its own path — some modules, the
//! capabilities among them that globs pick, who may connect, in which mode.
//! Read here; `check` holds each against the specs (`gate/surface.rs`) and
//! `serve` serves it.

use std::collections::BTreeMap;

use toml::de::{DeTable, DeValue};

use super::reader::{Entry, Reader};
use crate::rules as rule;
use crate::yaml::Pos;

/// One `[surface.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedSurface {
    /// Its name: `--surface-name NAME`, and `/mcp/NAME` unless `path` says otherwise.
    pub name: String,
    /// `modules`: the modules it mounts (empty: every module), each where it is written.
    pub modules: Vec<(String, Pos)>,
    /// `capabilities`: globs over qualified names (empty: every capability of its modules).
    pub capabilities: Vec<(String, Pos)>,
    /// `groups`: who may connect (empty: everyone).
    pub groups: Vec<(String, Pos)>,
    /// `mode`: its permission mode (`plan`, `default`, `accept-edits`, `auto`); else serve's `--mode`.
    pub mode: Option<String>,
    /// `path`: where it is served over HTTP.
    pub path: String,
    /// Where `path` is written (the table's name when defaulted).
    pub path_pos: Pos,
    /// Where its table is written.
    pub pos: Pos,
}

/// The modes a surface may name, as `--mode` takes them.
const MODES: [&str; 4] = ["plan", "default", "accept-edits", "auto"];

impl Reader<'_> {
    /// Every `[surface.NAME]` table; a broken one is reported and left out.
    pub(super) fn surfaces(&mut self, table: &DeTable<'_>) -> BTreeMap<String, NamedSurface> {
        let mut out = BTreeMap::new();
        let Some(section) = self.section(table, "surface") else { return out };
        for (key, value) in section.iter() {
            let name = key.get_ref().to_string();
            let pos = self.pos(key.span().start);
            let DeValue::Table(surface) = value.get_ref() else {
                self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`surface.{name}` must be a table (`[surface.{name}]`)"));
                continue;
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`[surface.{name}]`: a surface's name is a path segment and a flag's value: letters, digits, `-` and `_` only"));
                continue;
            }
            self.unknown_keys(surface, &super::keys::of("surface"), &format!("[surface.{name}]"));
            let modules = self.strings(surface.get_key_value("modules"));
            let capabilities = self.strings(surface.get_key_value("capabilities"));
            let groups = self.strings(surface.get_key_value("groups"));
            let mode = surface.get_key_value("mode").map(|entry| (self.string(Some(entry), ""), self.pos(entry.1.span().start)));
            let mode = match mode {
                Some((mode, at)) if !MODES.contains(&mode.as_str()) => {
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`mode = {mode:?}` in [surface.{name}] is not a mode: plan, default, accept-edits or auto"));
                    None
                }
                other => other.map(|(mode, _)| mode),
            };
            let (path, path_pos) = match surface.get_key_value("path") {
                Some(entry) => {
                    let at = self.pos(entry.1.span().start);
                    let path = self.string(Some(entry), "");
                    if !path.starts_with('/') || path.contains(['?', '#', ' ']) {
                        self.error(rule::CONFIG_INVALID_VALUE, at, format!("`path = {path:?}` in [surface.{name}] is not an absolute URL path (`/mcp/{name}`)"));
                        continue;
                    }
                    (path, at)
                }
                None => (format!("/mcp/{name}"), pos),
            };
            out.insert(name.clone(), NamedSurface { name, modules, capabilities, groups, mode, path, path_pos, pos });
        }
        out
    }

    /// A list of strings, each with where it is written.
    fn strings(&mut self, entry: Option<Entry<'_>>) -> Vec<(String, Pos)> {
        let Some((key, value)) = entry else { return Vec::new() };
        let DeValue::Array(items) = value.get_ref() else {
            let pos = self.pos(value.span().start);
            self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`{}` must be a list of strings", key.get_ref()));
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items.iter() {
            let pos = self.pos(item.span().start);
            match item.get_ref() {
                DeValue::String(s) => out.push((s.to_string(), pos)),
                _ => self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`{}` entries must be strings", key.get_ref())),
            }
        }
        out
    }
}
