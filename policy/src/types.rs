//! The Cedar type of a capability's input (DESIGN §14): string → `String`,
//! integer → `Long`, number → `decimal`, boolean → `Bool`, array → `Set`,
//! object → record, enum → `String`, optional property → optional
//! attribute; a nullable one (`[T, "null"]`) is an optional `T`, as Cedar has
//! no null. A property Cedar cannot type (a union of types, an open map) is
//! left out, with why. The generator writes these types into the schema and
//! the runtime builds a call's `context.input` by them, so both agree.

use std::fmt::Write as _;

use serde_json::Value;

/// A Cedar type a spec's value maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CedarType {
    /// `String` (strings and string enums).
    String,
    /// `Long` (integers).
    Long,
    /// `decimal` (numbers: at most four decimals).
    Decimal,
    /// `Bool`.
    Bool,
    /// `Set<T>` (arrays).
    Set(Box<CedarType>),
    /// A record (objects), its attributes sorted by name.
    Record(Vec<Attribute>),
}

/// One attribute of a record type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    /// The property name.
    pub name: String,
    /// Whether every value has it (required and not nullable).
    pub required: bool,
    /// Its type.
    pub ty: CedarType,
}

/// A capability's `context.input` type, and what it leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputType {
    /// The record's attributes, sorted by name.
    pub attributes: Vec<Attribute>,
    /// Each property left out: its path (`a.b`, `list[]`) and why Cedar cannot type it.
    pub left_out: Vec<(String, String)>,
}

/// Deepest nesting typed; deeper values are left out.
const MAX_DEPTH: usize = 32;

/// The `context.input` type of a capability whose input schema is `schema`.
pub fn input_type(schema: &Value) -> InputType {
    let mut left_out = Vec::new();
    let attributes = record(schema, schema, "", &mut left_out, 0);
    InputType { attributes, left_out }
}

impl CedarType {
    /// The type as Cedar schema text; attribute names are quoted strings.
    pub fn schema_text(&self) -> String {
        match self {
            CedarType::String => "String".into(),
            CedarType::Long => "Long".into(),
            CedarType::Decimal => "__cedar::decimal".into(),
            CedarType::Bool => "Bool".into(),
            CedarType::Set(item) => format!("Set<{}>", item.schema_text()),
            CedarType::Record(attributes) => record_text(attributes),
        }
    }
}

impl CedarType {
    /// The type in Cedar's JSON schema format, which Cedar reads without
    /// its text grammar (`check` validates against schemas built this
    /// way): [`schema_text`](Self::schema_text)'s type exactly as Cedar
    /// reads that text, names as `EntityOrCommon` references it resolves.
    pub fn schema_json(&self) -> Value {
        match self {
            CedarType::Set(item) => object([("type", "Set".into()), ("element", item.schema_json())]),
            CedarType::Record(attributes) => record_json(attributes),
            named => object([("type", "EntityOrCommon".into()), ("name", named.schema_text().into())]),
        }
    }
}

/// A record type in Cedar's JSON schema format: [`record_text`]'s type.
pub fn record_json(attributes: &[Attribute]) -> Value {
    let mut fields = serde_json::Map::new();
    for a in attributes {
        let mut ty = a.ty.schema_json();
        if !a.required {
            ty["required"] = Value::Bool(false);
        }
        fields.insert(a.name.clone(), ty);
    }
    object([("type", "Record".into()), ("attributes", Value::Object(fields))])
}

/// A JSON object of `fields`, moved in (`json!` would copy a `Value` field).
pub fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// A record type's schema text: `{ "a": String, "b"?: Long }`, or `{}`.
pub fn record_text(attributes: &[Attribute]) -> String {
    if attributes.is_empty() {
        return "{}".into();
    }
    let fields: Vec<String> = attributes
        .iter()
        .map(|a| format!("{}{}: {}", quoted(&a.name), if a.required { "" } else { "?" }, a.ty.schema_text()))
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

/// The Cedar type of `schema`, or why Cedar cannot type it.
fn type_of(root: &Value, schema: &Value, path: &str, left_out: &mut Vec<(String, String)>, depth: usize) -> Result<CedarType, String> {
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
        return if values.iter().all(Value::is_string) { Ok(CedarType::String) } else { Err("an enum of values other than strings".into()) };
    }
    if let Some(value) = schema.get("const") {
        return if value.is_string() { Ok(CedarType::String) } else { Err("a constant other than a string".into()) };
    }
    if ["anyOf", "oneOf", "allOf"].iter().any(|k| schema.get(k).is_some()) {
        return Err("a union of types".into());
    }
    match schema.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "string" => Ok(CedarType::String),
            "integer" => Ok(CedarType::Long),
            "number" => Ok(CedarType::Decimal),
            "boolean" => Ok(CedarType::Bool),
            "array" => match schema.get("items") {
                Some(items) => type_of(root, items, &format!("{path}[]"), left_out, depth + 1).map(|t| CedarType::Set(Box::new(t))),
                None => Err("an array of any values".into()),
            },
            "object" if schema.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty()) => {
                Ok(CedarType::Record(record(root, schema, path, left_out, depth + 1)))
            }
            "object" if schema.get("additionalProperties").is_some_and(|a| a != &Value::Bool(false)) => Err("an open map".into()),
            "object" => Ok(CedarType::Record(Vec::new())),
            "null" => Err("null".into()),
            other => Err(format!("the type `{other}`")),
        },
        Some(Value::Array(_)) => Err("a union of types".into()),
        _ => Err("a value of any type".into()),
    }
}

/// The attributes of an object schema's properties (optional unless
/// required), sorted by name; each property Cedar cannot type is recorded
/// in `left_out` instead.
fn record(root: &Value, schema: &Value, path: &str, left_out: &mut Vec<(String, String)>, depth: usize) -> Vec<Attribute> {
    let required: Vec<&str> = schema.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Vec::new() };
    let mut names: Vec<&String> = properties.keys().collect();
    names.sort();
    let mut attributes = Vec::new();
    for name in names {
        let at = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
        // Cedar has no null: a nullable property is an optional attribute,
        // absent when the value is null.
        let (schema, nullable) = match non_null(&properties[name]) {
            Some(schema) => (schema, true),
            None => (properties[name].clone(), false),
        };
        match type_of(root, &schema, &at, left_out, depth) {
            Ok(ty) => attributes.push(Attribute { name: name.clone(), required: required.contains(&name.as_str()) && !nullable, ty }),
            Err(why) => left_out.push((at, why)),
        }
    }
    attributes
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

/// `text` as a Cedar string literal: printable ASCII as is, everything else
/// escaped, so no spec text can form Cedar syntax.
pub fn quoted(text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_schemas_become_records_and_what_cedar_cannot_type_is_left_out_with_why() {
        let input = input_type(&json!({
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
            record_text(&input.attributes),
            r#"{ "amount": __cedar::decimal, "count"?: Long, "force"?: Bool, "mode"?: String, "note"?: String, "owner"?: { "id": String, "tel"?: String }, "path": String, "say \"hi\""?: String, "since"?: Long, "tags"?: Set<String> }"#
        );
        assert_eq!(input.left_out, [("either".into(), "a union of types".into()), ("labels".into(), "an open map".into())]);
    }

    #[test]
    fn names_are_quoted_cedar_strings() {
        assert_eq!(quoted("notes.write_note"), r#""notes.write_note""#);
        assert_eq!(quoted("a\"b\\c\nd\u{2028}"), r#""a\"b\\c\u{a}d\u{2028}""#);
    }
}
