//! The JSON Schema subset an import keeps (DESIGN §4): what real servers'
//! schemas say, translated where the subset says the same another way,
//! and every keyword that cannot be kept reported where it was.

use serde_json::{Map, Value};

use crate::load::keys::SCHEMA_KEYWORDS;

/// Keywords that only annotate and that the format does not keep: dropped
/// without a warning. (`title`, `$schema`, `$comment`, `examples`,
/// `deprecated`, `readOnly` and `writeOnly` are kept as written.)
const ANNOTATIONS: &[&str] = &["$id"];

/// Bring a schema into the supported subset, telling `dropped` each keyword
/// that could not be kept and the JSON pointer where it was. Shared by the
/// MCP importer and the code-first export (schemars output). Translated, not
/// dropped: a multi-type `type` (→ `anyOf`), `nullable` (OpenAPI's, → a
/// union with `null`), `exclusiveMinimum` and `exclusiveMaximum` on
/// integers (→ `minimum`/`maximum` one step in). Kept as written: the
/// annotations, integer bounds (zod's ±2^53−1 too) and `anyOf [T, {type:
/// null}]` (DESIGN §2, "Schemas as declared"). Dropped silently: `$id`.
pub(crate) fn strip_unsupported(schema: &mut Value, pointer: &str, dropped: &mut dyn FnMut(&str, &str)) {
    let Some(map) = schema.as_object_mut() else { return };
    // `type: [A, B, …]` beyond `[T, "null"]` is the same as `anyOf` of each
    // type, which the subset supports.
    let union = map.get("type").and_then(Value::as_array).filter(|ts| ts.iter().filter(|t| t.as_str() != Some("null")).count() > 1).cloned();
    if let (Some(types), false) = (union, map.contains_key("anyOf") || map.contains_key("oneOf")) {
        map.remove("type");
        map.insert("anyOf".into(), Value::Array(types.into_iter().map(|t| serde_json::json!({ "type": t })).collect()));
    }
    open_nullable(map);
    let integer = map.get("type").is_some_and(|t| t == "integer" || t.as_array().is_some_and(|ts| ts.iter().any(|t| t == "integer")));
    for (exclusive, inclusive, step) in [("exclusiveMinimum", "minimum", 1.0), ("exclusiveMaximum", "maximum", -1.0)] {
        let Some(bound) = map.get(exclusive).and_then(Value::as_f64) else { continue };
        if integer && bound.fract() == 0.0 {
            map.remove(exclusive);
            let bound = bound + step;
            let stricter = match map.get(inclusive).and_then(Value::as_f64) {
                Some(b) if step > 0.0 => b.max(bound),
                Some(b) => b.min(bound),
                None => bound,
            };
            map.insert(inclusive.into(), serde_json::json!(stricter as i64));
        }
    }
    // Binary content is a string with `contentEncoding: base64` (and maybe
    // a media type); any other use of the two keywords is dropped.
    let binary = map.get("contentEncoding").is_some_and(|e| e == "base64") && map.get("type").is_none_or(|t| t == "string" || t.as_array().is_some_and(|ts| ts.iter().any(|t| t == "string")));
    let media_type_ok = map.get("contentMediaType").and_then(Value::as_str).is_some_and(|m| m.contains('/') && !m.contains(char::is_whitespace));
    for (key, keep) in [("contentEncoding", binary), ("contentMediaType", binary && media_type_ok)] {
        if !keep && map.remove(key).is_some() {
            dropped(key, &format!("{pointer}/{key}"));
        }
    }
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let at = format!("{pointer}/{key}");
        if ANNOTATIONS.contains(&key.as_str()) {
            map.remove(&key);
            continue;
        }
        if !SCHEMA_KEYWORDS.contains(&key.as_str()) {
            map.remove(&key);
            dropped(&key, &at);
            continue;
        }
        match key.as_str() {
            "properties" | "$defs" => {
                if let Some(props) = map.get_mut(&key).and_then(Value::as_object_mut) {
                    for (p, v) in props.iter_mut() {
                        strip_unsupported(v, &format!("{at}/{p}"), dropped);
                    }
                }
            }
            "items" | "additionalProperties" => {
                if let Some(v) = map.get_mut(&key) {
                    strip_unsupported(v, &at, dropped);
                }
            }
            "oneOf" | "anyOf" => {
                if let Some(list) = map.get_mut(&key).and_then(Value::as_array_mut) {
                    for (i, v) in list.iter_mut().enumerate() {
                        strip_unsupported(v, &format!("{at}/{i}"), dropped);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `nullable: true` (OpenAPI 3.0's form, which older rmcp and schemars
/// 0.8's `option_nullable` emit) → the same union with `null` that `anyOf
/// [T, {type: null}]` is: `null` joins the `type` and an `enum`, a `$ref`
/// or `anyOf` gains a `null` variant. Without a type the schema already
/// admits `null`. `nullable: false` says nothing. Either way the keyword
/// goes, and nothing it allowed is lost.
fn open_nullable(map: &mut Map<String, Value>) {
    let Some(nullable) = map.remove("nullable") else { return };
    if nullable != Value::Bool(true) {
        return;
    }
    let null = Value::String("null".into());
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = Value::String(std::mem::take(t));
            map.insert("type".into(), Value::Array(vec![t, null]));
        }
        Some(Value::Array(types)) if !types.contains(&null) => types.push(null),
        Some(_) => {}
        None => {
            if let Some(reference) = map.remove("$ref") {
                map.insert("anyOf".into(), serde_json::json!([{ "$ref": reference }, { "type": "null" }]));
            } else if let Some(Value::Array(variants)) = map.get_mut("anyOf") {
                variants.push(serde_json::json!({ "type": "null" }));
            } else if let Some(Value::Array(variants)) = map.get_mut("oneOf") {
                variants.push(serde_json::json!({ "type": "null" }));
            }
        }
    }
}
