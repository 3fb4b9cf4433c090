//! How an import writes its module file: YAML whose scalars are JSON,
//! schemas in block style one key per line, and for an upstream module the
//! digest of what it wrote of each capability, which `--update` reads back
//! to see a person's edit (DESIGN §12).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::finding::Finding;
use crate::model::{CapabilitySpec, ModuleSpec};

/// The comment an upstream module's capability carries after its pin: the
/// digest of its description and schemas as import wrote them, so
/// `--update` sees an edit rather than guess at one (DESIGN §12).
pub(super) const WRITTEN: &str = "# as written by import: ";

/// The digest of what import writes of `c` and a project may edit: its
/// description and schemas, as loaded.
pub fn written_digest(c: &CapabilitySpec) -> String {
    let content = serde_json::json!({
        "description": c.description,
        "input": c.input.as_ref().map(crate::model::Schema::to_json),
        "output": c.output.as_ref().map(crate::model::Schema::to_json),
    });
    let mut text = String::new();
    capspec_dialects::pin::canonical(&content, &mut text);
    let digest = capspec_dialects::pin::bytes_digest(text.as_bytes());
    digest["sha256:".len().."sha256:".len() + 16].to_string()
}

/// Each capability's digest as its `# as written by import:` line in an
/// upstream module's `text` records it, by capability name.
pub fn written_digests(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("  - name: ") {
            current = Some(serde_json::from_str::<String>(name).unwrap_or_else(|_| name.trim().to_string()));
        } else if let (Some(digest), Some(name)) = (line.trim_start().strip_prefix(WRITTEN), &current) {
            out.insert(name.clone(), digest.trim().to_string());
        }
    }
    out
}

/// What `--update` did with a project's edits to its pins.
#[derive(Debug, Default)]
pub(super) struct Edits {
    /// Capabilities kept as edited.
    pub kept: Vec<String>,
    /// Their digests as import first wrote them, which they keep.
    pub carried: BTreeMap<String, String>,
    /// An edit the update would lose: nothing may be written.
    pub refused: bool,
    pub findings: Vec<Finding>,
}

/// `--update` for one tool the project pins (`project`: the module as the
/// project has it, the digests its file records, the server): when the project edited its
/// description or schemas after import (its content no longer has the
/// digest import wrote), the edit is kept while the server's tool is
/// unchanged, and refused — named, nothing written — when the server
/// changed it, since writing the server's version would lose the edit.
pub(super) fn edited_entry(entry: &mut Map<String, Value>, tool_name: &str, project: (Option<&ModuleSpec>, Option<&BTreeMap<String, String>>, Option<&str>), out: &mut Edits) {
    let (Some(keep), Some(written), Some(server)) = project else { return };
    let Some(c) = keep.capabilities.iter().find(|c| c.tool.as_deref().unwrap_or(&c.name) == tool_name) else { return };
    let Some(recorded) = written.get(&c.name) else { return };
    if *recorded == written_digest(c) {
        return;
    }
    if c.pin.as_deref() == entry.get("pin").and_then(Value::as_str) {
        entry.insert("description".into(), Value::String(c.description.clone()));
        for (key, schema) in [("input", &c.input), ("output", &c.output)] {
            match schema {
                Some(schema) => entry.insert(key.into(), schema.to_json()),
                None => entry.remove(key),
            };
        }
        out.carried.insert(c.name.clone(), recorded.clone());
        out.kept.push(c.name.clone());
    } else {
        out.refused = true;
        out.findings.push(
            Finding::error(
                crate::rules::UPSTREAM_CHANGED,
                &keep.file,
                c.pos,
                format!(
                    "`{}.{}`: its description or schemas were edited in this file after import, and [upstream.{server}] has changed `{tool_name}` since; `--update` wrote nothing rather than lose the edit. Take the server's version by undoing the edit (or deleting its `{}` line), then run `--update` again and edit anew",
                    keep.name,
                    c.name,
                    WRITTEN.trim_end()
                ),
            )
            .for_capability(&c.name),
        );
    }
}

pub(super) fn render_yaml(module: &str, description: &str, upstream: Option<&str>, entries: &[Value], digests: &BTreeMap<String, String>) -> String {
    // Keys sorted in every build, translated keywords included.
    let json = |v: &Value| {
        let mut v = v.clone();
        v.sort_all_objects();
        serde_json::to_string(&v).expect("values serialize")
    };
    let mut out = String::new();
    match upstream {
        Some(server) => out.push_str(&format!("# Pinned from the MCP server [upstream.{server}] by `cargo capspec import mcp --upstream {server}`;\n# `--update` rewrites descriptions, schemas and pins and keeps categories, hints, deferred, direct, titles and aliases.\n")),
        None => out.push_str("# Imported from MCP tools/list by `cargo xtask import mcp`.\n"),
    }
    out.push_str("# Categories: _meta io.capspec/category; else readOnlyHint → read; else openWorldHint (absent = true) → external; else write.\n");
    out.push_str(&format!("module: {module}\n"));
    out.push_str(&format!("description: {}\n", json(&Value::String(description.to_string()))));
    if let Some(server) = upstream {
        out.push_str(&format!("upstream: {server}\n"));
    }
    out.push_str("capabilities:\n");
    for entry in entries {
        let e = entry.as_object().expect("entries are objects");
        out.push_str(&format!("  - name: {}\n", e["name"].as_str().expect("names are strings")));
        out.push_str(&format!("    category: {}\n", e["category"].as_str().expect("categories are strings")));
        out.push_str(&format!("    description: {}\n", json(&e["description"])));
        for key in ["aliases", "title", "hints", "input", "output", "deferred", "direct", "tool", "pin"] {
            if let Some(value) = e.get(key) {
                let mut value = value.clone();
                value.sort_all_objects();
                block(&mut out, key, &value, 4);
            }
        }
        if let Some(digest) = e["name"].as_str().and_then(|n| digests.get(n)) {
            out.push_str(&format!("    {WRITTEN}{digest}\n"));
        }
    }
    out
}

/// `key: value` at `indent` as block YAML, one key per line (DESIGN §12), so
/// a review diff and an error's caret land on the line that holds it. Every
/// scalar is JSON (JSON is YAML 1.2), an array of scalars one flow line, an
/// empty object or array `{}` / `[]`, and a key that YAML would read as
/// anything but that string is JSON-quoted.
fn block(out: &mut String, key: &str, value: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    let key = yaml_key(key);
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push_str(&format!("{pad}{key}:\n"));
            for (k, v) in map {
                block(out, k, v, indent + 2);
            }
        }
        Value::Array(items) if items.iter().any(|i| matches!(i, Value::Object(m) if !m.is_empty()) || matches!(i, Value::Array(a) if !a.is_empty())) => {
            out.push_str(&format!("{pad}{key}:\n"));
            for item in items {
                item_block(out, item, indent + 2);
            }
        }
        scalar => out.push_str(&format!("{pad}{key}: {}\n", serde_json::to_string(scalar).expect("values serialize"))),
    }
}

/// One item of a block sequence at `indent`: `- ` then the item, its
/// further keys aligned under its first.
fn item_block(out: &mut String, item: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match item {
        Value::Object(map) if !map.is_empty() => {
            let mut inner = String::new();
            for (k, v) in map {
                block(&mut inner, k, v, indent + 2);
            }
            out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
        }
        Value::Array(items) if !items.is_empty() => {
            let mut inner = String::new();
            for nested in items {
                item_block(&mut inner, nested, indent + 2);
            }
            out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
        }
        scalar => out.push_str(&format!("{pad}- {}\n", serde_json::to_string(scalar).expect("values serialize"))),
    }
}

/// A mapping key as YAML reads it back as the same string: plain where it
/// is a plain word YAML gives no other meaning, JSON-quoted otherwise.
fn yaml_key(key: &str) -> String {
    let plain = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '-' | '.'))
        && !matches!(key.to_ascii_lowercase().as_str(), "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n");
    if plain { key.to_string() } else { serde_json::to_string(key).expect("strings serialize") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_yaml_reads_back_as_the_json_it_was_written_from() {
        let value = json!({
            "type": "object",
            "$defs": {"Entity": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "properties": {
                "3d": {"type": "boolean"}, "true": {}, "null": {"const": null}, "a: b": {"description": "# not a comment\nsecond line"},
                "-x": {"enum": ["yes", "no", "", "1", 1, 1.5, true, null]}, "content-type": {"type": ["string", "null"]},
                "nested": {"oneOf": [{"type": "string"}, {"type": "array", "items": [{"type": "integer"}, {"anyOf": [{"type": "null"}, {"properties": {"k": {}}}]}]}]},
                "matrix": {"default": [[1, 2], [], [{"a": [{"b": {}}]}]]},
            },
            "required": ["3d"],
        });
        let mut text = String::new();
        block(&mut text, "input", &value, 0);
        assert!(text.lines().all(|l| l.len() < 120), "one key per line:\n{text}");
        let read = crate::yaml::parse(&text).unwrap().to_json();
        assert_eq!(read["input"], value, "{text}");
    }

}
