//! `<catalog>/capspec.cedarschema` (DESIGN §14): the Cedar schema a
//! project's policies are validated against, derived from the specs.
//!
//! - namespace `Capspec`; entity types `Group`, `User in [Group]`, `Module`;
//! - the action groups `module:<name>` (one per module) and
//!   `category:<category>` (all four, so a policy may name any of them);
//! - one action per capability, its id the qualified name, in its module's
//!   and its category's groups, applying to `User` principals and `Module`
//!   resources with the context `{ input, mode, category, upstream? }`;
//! - `input` is a record typed from the input schema: string → `String`,
//!   integer → `Long`, number → `decimal`, boolean → `Bool`, array → `Set`,
//!   object → record, enum → `String`, optional property → optional
//!   attribute; a nullable one (`[T, "null"]`) is an optional `T`, as Cedar
//!   has no null. A property Cedar cannot type (a union of types, an open
//!   map) is left out, and a comment above the action says which and why.
//!
//! Every name is written as a quoted Cedar string, so no spec text can form
//! schema syntax.

use std::fmt::Write as _;

use serde_json::Value;

use super::artifact::{Targets, input_schema_json, marker_line};
use crate::model::{Category, SpecSet};

/// The schema file's name inside the catalog directory.
pub const FILE: &str = "capspec.cedarschema";
/// The namespace every type and action is declared in.
pub const NAMESPACE: &str = "Capspec";

/// The schema text.
pub fn schema(set: &SpecSet, targets: &Targets) -> String {
    let mut out = format!("// {}\n", marker_line(&targets.specs));
    let _ = writeln!(out, "namespace {NAMESPACE} {{");
    out.push_str("  entity Group;\n  entity User in [Group];\n  entity Module;\n\n");
    for category in Category::ALL {
        let _ = writeln!(out, "  action {};", quoted(&format!("category:{}", category.as_str())));
    }
    for module in &set.modules {
        let _ = writeln!(out, "  action {};", quoted(&format!("module:{}", module.name)));
    }
    for (module, cap) in set.capabilities() {
        let root = input_schema_json(cap);
        let mut left_out = Vec::new();
        let input = record(&root, &root, "", &mut left_out, 0);
        out.push('\n');
        for (path, why) in &left_out {
            let _ = writeln!(out, "  // left out of `input`: `{}` ({why})", comment_safe(path));
        }
        let id = format!("{}.{}", module.name, cap.name);
        let groups = [format!("module:{}", module.name), format!("category:{}", cap.category.as_str())];
        let _ = writeln!(out, "  action {} in [{}, {}] appliesTo {{", quoted(&id), quoted(&groups[0]), quoted(&groups[1]));
        out.push_str("    principal: [User],\n    resource: [Module],\n");
        let _ = writeln!(out, "    context: {{ input: {input}, mode: String, category: String, upstream?: String }}");
        out.push_str("  };\n");
    }
    out.push_str("}\n");
    out
}

/// Deepest nesting typed; deeper values are left out.
const MAX_DEPTH: usize = 32;

/// The Cedar type of `schema`, or why Cedar cannot type it.
fn type_of(root: &Value, schema: &Value, path: &str, left_out: &mut Vec<(String, String)>, depth: usize) -> Result<String, String> {
    if depth > MAX_DEPTH {
        return Err(format!("nested deeper than {MAX_DEPTH} levels"));
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let target = reference.strip_prefix('#').filter(|p| p.starts_with('/')).and_then(|p| root.pointer(p));
        return match target {
            Some(target) => type_of(root, target, path, left_out, depth + 1),
            None => Err(format!("its `$ref` {reference} is not a local definition")),
        };
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return if values.iter().all(Value::is_string) { Ok("String".into()) } else { Err("an enum of values other than strings".into()) };
    }
    if let Some(value) = schema.get("const") {
        return if value.is_string() { Ok("String".into()) } else { Err("a constant other than a string".into()) };
    }
    if ["anyOf", "oneOf", "allOf"].iter().any(|k| schema.get(k).is_some()) {
        return Err("a union of types".into());
    }
    match schema.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "string" => Ok("String".into()),
            "integer" => Ok("Long".into()),
            "number" => Ok("__cedar::decimal".into()),
            "boolean" => Ok("Bool".into()),
            "array" => match schema.get("items") {
                Some(items) => type_of(root, items, &format!("{path}[]"), left_out, depth + 1).map(|t| format!("Set<{t}>")),
                None => Err("an array of any values".into()),
            },
            "object" if schema.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty()) => Ok(record(root, schema, path, left_out, depth + 1)),
            "object" if schema.get("additionalProperties").is_some_and(|a| a != &Value::Bool(false)) => Err("an open map".into()),
            "object" => Ok("{}".into()),
            "null" => Err("null".into()),
            other => Err(format!("the type `{other}`")),
        },
        Some(Value::Array(_)) => Err("a union of types".into()),
        _ => Err("a value of any type".into()),
    }
}

/// The record of an object schema's properties (optional unless required);
/// each property Cedar cannot type is recorded in `left_out` instead.
fn record(root: &Value, schema: &Value, path: &str, left_out: &mut Vec<(String, String)>, depth: usize) -> String {
    let required: Vec<&str> = schema.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return "{}".into() };
    let mut names: Vec<&String> = properties.keys().collect();
    names.sort();
    let mut fields = Vec::new();
    for name in names {
        let at = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
        // Cedar has no null: a nullable property is an optional attribute,
        // absent when the value is null.
        let (schema, nullable) = match non_null(&properties[name]) {
            Some(schema) => (schema, true),
            None => (properties[name].clone(), false),
        };
        match type_of(root, &schema, &at, left_out, depth) {
            Ok(t) => fields.push(format!("{}{}: {t}", quoted(name), if required.contains(&name.as_str()) && !nullable { "" } else { "?" })),
            Err(why) => left_out.push((at, why)),
        }
    }
    if fields.is_empty() { "{}".into() } else { format!("{{ {} }}", fields.join(", ")) }
}

/// The schema of a nullable value without its null: `type: [T, "null"]`, or
/// `anyOf`/`oneOf` of one schema and `{type: null}`; `None` when the value
/// is not nullable that way.
fn non_null(schema: &Value) -> Option<Value> {
    let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    if let Some(Value::Array(types)) = schema.get("type") {
        let rest: Vec<&Value> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
        if let ([only], true) = (rest.as_slice(), rest.len() < types.len()) {
            let mut schema = schema.clone();
            schema["type"] = (*only).clone();
            return Some(schema);
        }
        return None;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            let rest: Vec<&Value> = branches.iter().filter(|b| !is_null(b)).collect();
            if let ([only], true) = (rest.as_slice(), rest.len() < branches.len()) {
                return Some((*only).clone());
            }
        }
    }
    None
}

/// `text` as a Cedar string literal.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || !(' '..='~').contains(&c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A property path inside a `//` comment: on one line, printable ASCII.
fn comment_safe(text: &str) -> String {
    text.chars().map(|c| if (' '..='~').contains(&c) { c } else { '?' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn typed(schema: Value) -> (String, Vec<(String, String)>) {
        let mut left_out = Vec::new();
        (record(&schema, &schema, "", &mut left_out, 0), left_out)
    }

    #[test]
    fn input_schemas_become_records_and_what_cedar_cannot_type_is_left_out_with_why() {
        let (input, left_out) = typed(json!({
            "type": "object",
            "required": ["path", "amount"],
            "properties": {
                "path": {"type": "string"},
                "amount": {"type": "number"},
                "count": {"type": "integer"},
                "force": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "mode": {"enum": ["a", "b"]},
                "owner": {"$ref": "#/$defs/Owner"},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "note": {"type": ["string", "null"]},
                "since": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "say \"hi\"": {"type": "string"}
            },
            "$defs": {"Owner": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}, "tel": {"type": ["string", "null"]}}}}
        }));
        assert_eq!(
            input,
            r#"{ "amount": __cedar::decimal, "count"?: Long, "force"?: Bool, "mode"?: String, "note"?: String, "owner"?: { "id": String, "tel"?: String }, "path": String, "say \"hi\""?: String, "since"?: Long, "tags"?: Set<String> }"#
        );
        assert_eq!(
            left_out,
            [("either".into(), "a union of types".into()), ("labels".into(), "an open map".into())]
        );
    }

    #[test]
    fn names_are_quoted_cedar_strings() {
        assert_eq!(quoted("notes.write_note"), r#""notes.write_note""#);
        assert_eq!(quoted("a\"b\\c\nd\u{2028}"), r#""a\"b\\c\u{a}d\u{2028}""#);
    }
}
