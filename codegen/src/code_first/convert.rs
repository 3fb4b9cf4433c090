//! Exported specs → loader entries: the `schemars` schema reduced to the
//! supported subset, and a spec-shaped node located at the derive.

use std::path::Path;

use serde_json::Value;

use crate::finding::Finding;
use crate::load::CodeFirstEntry;
use crate::model::CodeOrigin;
use crate::rules as rule;
use crate::yaml::{self, Key, Node, Pos};

use super::record::Exported;

/// The code-first specs of a project, ready for loading and recording.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    pub entries: Vec<CodeFirstEntry>,
    /// What the record file must hold (converted schemas), sorted.
    pub record: Vec<Exported>,
    pub findings: Vec<Finding>,
}


/// Convert exported or recorded specs into loader entries and the record.
pub(crate) fn convert(root: &Path, mut specs: Vec<Exported>) -> Resolved {
    let mut out = Resolved::default();
    let mut texts: std::collections::BTreeMap<String, Option<String>> = std::collections::BTreeMap::new();
    for spec in &mut specs {
        // Only files inside the project are read (for snippets): a record
        // naming `/etc/…` or `../…` reads nothing.
        let inside = crate::config::path_problem(&spec.file).is_none();
        let text = texts.entry(spec.file.clone()).or_insert_with(|| inside.then(|| std::fs::read_to_string(root.join(&spec.file)).ok()).flatten());
        if spec.line == 0 {
            let type_name = spec.rust_type.rsplit("::").next().unwrap_or_default();
            (spec.line, spec.column) = text.as_deref().and_then(|t| locate_struct(t, type_name)).unwrap_or((1, 1));
        }
        let (file, pos, qualified) = (spec.file.clone(), Pos { line: spec.line, column: spec.column }, format!("{}.{}", spec.module, spec.name));
        let mut schema = std::mem::take(&mut spec.input_schema);
        to_subset(&mut schema, "/input", &file, pos, &qualified, &mut out.findings);
        // Closed like a YAML spec's input (declared properties close an
        // object): a field-less struct declares none, so it says so.
        // `#[capability(open)]` opens it; a map flattened into the struct
        // already says what extra keys may hold.
        if let Some(map) = schema.as_object_mut() {
            match (map.contains_key("additionalProperties"), map.contains_key("properties"), spec.open) {
                (false, true, true) => drop(map.insert("additionalProperties".into(), Value::Bool(true))),
                (false, false, false) => drop(map.insert("additionalProperties".into(), Value::Bool(false))),
                _ => {}
            }
        }
        spec.input_schema = schema;
        if let Some(output) = spec.output_schema.as_mut() {
            to_subset(output, "/output", &file, pos, &qualified, &mut out.findings);
        }
    }
    specs.sort_by(|a, b| (&a.module, &a.name, &a.rust_type, &a.package).cmp(&(&b.module, &b.name, &b.rust_type, &b.package)));
    for spec in &specs {
        let pos = Pos { line: spec.line, column: spec.column };
        let mut entries = vec![
            entry("name", Value::String(spec.name.clone()), pos),
            entry("category", Value::String(spec.category.clone()), pos),
            entry("description", Value::String(spec.description.clone()), pos),
            input_entry(spec, pos),
        ];
        if let Some(output) = &spec.output_schema {
            entries.push(entry("output", output.clone(), pos));
        }
        if let Some(title) = &spec.title {
            entries.push(entry("title", Value::String(title.clone()), pos));
        }
        if let Some(feature) = &spec.feature {
            entries.push(entry("feature", Value::String(feature.clone()), pos));
        }
        if !spec.aliases.is_empty() {
            entries.push(entry("aliases", spec.aliases.iter().cloned().map(Value::String).collect::<Vec<_>>().into(), pos));
        }
        if !spec.hints.is_empty() {
            entries.push(entry("hints", spec.hints.iter().map(|(k, v)| (k.clone(), Value::Bool(*v))).collect::<serde_json::Map<_, _>>().into(), pos));
        }
        let node = Node { value: yaml::Value::Map(entries), pos };
        out.entries.push(CodeFirstEntry {
            module: spec.module.clone(),
            node,
            origin: CodeOrigin { package: spec.package.clone(), file: spec.file.clone(), rust_type: spec.rust_type.clone() },
            text: texts.get(&spec.file).cloned().flatten(),
        });
    }
    out.record = specs;
    out
}

/// The position of the name in `struct <name>` (1-based line and column).
fn locate_struct(text: &str, name: &str) -> Option<(u32, u32)> {
    let needle = format!("struct {name}");
    text.lines().enumerate().find_map(|(i, line)| {
        let at = line.find(&needle)?;
        let after = line[at + needle.len()..].chars().next();
        if after.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        Some((i as u32 + 1, line[..at + "struct ".len()].chars().count() as u32 + 1))
    })
}

/// The `input` entry: its properties in the order the struct declares its
/// fields (the model keeps document order, and every artifact writes it).
fn input_entry(spec: &Exported, pos: Pos) -> (Key, Node) {
    let (key, mut node) = entry("input", spec.input_schema.clone(), pos);
    if let yaml::Value::Map(members) = &mut node.value {
        if let Some((_, Node { value: yaml::Value::Map(properties), .. })) = members.iter_mut().find(|(k, _)| k.name == "properties") {
            properties.sort_by_key(|(k, _)| spec.field_rank(&k.name));
        }
    }
    (key, node)
}

fn entry(key: &str, value: Value, pos: Pos) -> (Key, Node) {
    (Key { name: key.to_string(), pos }, node_of(value, pos))
}

/// A JSON value as a located node, every position `pos` (a code-first spec
/// has one place in the source: its derive).
fn node_of(value: Value, pos: Pos) -> Node {
    let value = match value {
        Value::Null => yaml::Value::Null,
        Value::Bool(b) => yaml::Value::Bool(b),
        Value::Number(n) => yaml::Value::Number(n),
        Value::String(s) => yaml::Value::String(s),
        Value::Array(items) => yaml::Value::Seq(items.into_iter().map(|v| node_of(v, pos)).collect()),
        Value::Object(mut map) => {
            // Key order in every build (serde_json's `preserve_order` keeps
            // insertion order): properties list in name order.
            map.sort_keys();
            yaml::Value::Map(map.into_iter().map(|(k, v)| (Key { name: k, pos }, node_of(v, pos))).collect())
        }
    };
    Node { value, pos }
}

/// A schemars schema in the spec format's subset, as rmcp advertises a
/// type's schema (DESIGN §2, "Schemas as declared"): as schemars writes it
/// (`$schema`, `anyOf [T, {type: null}]`, bounds, `default: null` and
/// every title and description inside kept), but for the root's `title`
/// and `description` (the type's name and doc comment, which the
/// capability's name and description already say, and which rmcp leaves
/// out too); a keyword outside the subset goes with a warning at the
/// derive.
fn to_subset(schema: &mut Value, root: &str, file: &str, pos: Pos, qualified: &str, findings: &mut Vec<Finding>) {
    if let Some(map) = schema.as_object_mut() {
        map.remove("title");
        map.remove("description");
    }
    crate::import::strip_unsupported(schema, root, &mut |key, at| {
        findings.push(
            Finding::warning(
                rule::CODE_FIRST_KEYWORD,
                file,
                pos,
                format!("`{qualified}`: dropped keyword `{key}` at `{at}`, which the spec format does not support; the generated schema goes without it"),
            )
            .for_capability(qualified),
        );
    });
}
