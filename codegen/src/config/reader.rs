//! The reader of `capspec.toml`: positions, findings and the typed getters
//! every section shares (the sections themselves are read in `mod.rs` and
//! `upstream.rs`).

use std::path::{Component, Path};

use toml::de::{DeTable, DeValue};

use crate::finding::Finding;
use crate::rules as rule;
use crate::yaml::Pos;
use capspec_names::did_you_mean;

/// The config file's name, in the project root.
pub const CONFIG_FILE: &str = "capspec.toml";

pub(super) type Entry<'i> = (&'i toml::Spanned<std::borrow::Cow<'i, str>>, &'i toml::Spanned<DeValue<'i>>);

pub(super) struct Reader<'t> {
    pub(super) text: &'t str,
    pub(super) findings: Vec<Finding>,
}

impl Reader<'_> {
    pub(super) fn pos(&self, offset: usize) -> Pos {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() as u32 + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
        Pos { line, column }
    }

    pub(super) fn error(&mut self, rule: &str, pos: Pos, message: String) {
        self.findings.push(Finding::error(rule, CONFIG_FILE, pos, message));
    }

    pub(super) fn unknown_keys(&mut self, table: &DeTable<'_>, allowed: &[&str], section: &str) {
        for (key, _) in table.iter() {
            if !allowed.contains(&key.get_ref().as_ref()) {
                let hint = did_you_mean(key.get_ref(), allowed.iter().copied());
                let pos = self.pos(key.span().start);
                self.error(
                    rule::CONFIG_UNKNOWN_KEY,
                    pos,
                    format!("unknown key `{}` in {section}{hint}", key.get_ref()),
                );
            }
        }
    }

    pub(super) fn string(&mut self, entry: Option<Entry<'_>>, default: &str) -> String {
        let Some((key, value)) = entry else { return default.to_string() };
        match value.get_ref() {
            DeValue::String(s) => s.to_string(),
            _ => {
                let pos = self.pos(value.span().start);
                self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`{}` must be a string", key.get_ref()));
                default.to_string()
            }
        }
    }

    pub(super) fn path(&mut self, entry: Option<Entry<'_>>, default: &str) -> String {
        let value = self.string(entry, default);
        if let Some((key, v)) = entry {
            let pos = self.pos(v.span().start);
            self.check_path(key.get_ref(), &value, pos);
        }
        value
    }

    pub(super) fn check_path(&mut self, key: &str, value: &str, pos: Pos) {
        if let Some(problem) = path_problem(value) {
            self.error(rule::CONFIG_BAD_PATH, pos, format!("`{key} = {value:?}` {problem}"));
        }
    }

    pub(super) fn paths(&mut self, entry: Option<Entry<'_>>, default: &[&str]) -> Vec<String> {
        let Some((key, value)) = entry else { return default.iter().map(|s| s.to_string()).collect() };
        let DeValue::Array(items) = value.get_ref() else {
            let pos = self.pos(value.span().start);
            self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`{}` must be a list of paths", key.get_ref()));
            return default.iter().map(|s| s.to_string()).collect();
        };
        let mut out = Vec::new();
        for item in items.iter() {
            let pos = self.pos(item.span().start);
            match item.get_ref() {
                DeValue::String(s) => {
                    self.check_path(key.get_ref(), s, pos);
                    out.push(s.to_string());
                }
                _ => self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`{}` entries must be strings", key.get_ref())),
            }
        }
        out
    }

    pub(super) fn section<'a, 'i>(&mut self, table: &'a DeTable<'i>, name: &str) -> Option<&'a DeTable<'i>> {
        let (key, value) = table.get_key_value(name)?;
        match value.get_ref() {
            DeValue::Table(t) => Some(t),
            _ => {
                let pos = self.pos(key.span().start);
                self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`{name}` must be a table (`[{name}]`)"));
                None
            }
        }
    }
}

/// Why a configured path is unacceptable: absolute, or leaving the root.
pub(crate) fn path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("is empty");
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with('/') || path.starts_with('\\') || path.contains(':') && cfg!(windows) {
        return Some("must be relative to the directory holding capspec.toml");
    }
    let mut depth: i64 = 0;
    for c in p.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            _ => return Some("must be relative to the directory holding capspec.toml"),
        }
        if depth < 0 {
            return Some("leaves the project root (`..`); paths must stay inside it");
        }
    }
    None
}
