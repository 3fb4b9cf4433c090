//! Gemini function declarations: an OpenAPI-style schema subset — one type
//! per node (`nullable` for null), no `$ref`, no `const`, `anyOf` alone on
//! its node.

use serde_json::{Map, Value, json};

use crate::{Loss, Problem, child, move_to_description};

/// Keywords Gemini's schema takes as they are.
const KEPT: &[&str] = &[
    "type", "format", "description", "nullable", "enum", "items", "minItems", "maxItems", "properties", "required", "minProperties", "maxProperties", "minLength",
    "maxLength", "pattern", "minimum", "maximum", "anyOf", "default", "title",
];
/// Constraints Gemini cannot express; they move into the description.
const MOVED: &[&str] = &["exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems", "additionalProperties"];

pub(crate) fn project(schema: &Value, losses: &mut Vec<Loss>) -> Result<Value, Problem> {
    node(schema, schema, "", &mut Vec::new(), losses)
}

fn node(root: &Value, schema: &Value, pointer: &str, expanding: &mut Vec<String>, losses: &mut Vec<Loss>) -> Result<Value, Problem> {
    let Some(map) = schema.as_object() else {
        return Err(Problem::Unsupported { pointer: pointer.into(), why: "Gemini needs a schema object here, not `true`/`false`".into() });
    };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        let name = reference.strip_prefix("#/$defs/").unwrap_or(reference).to_string();
        if expanding.contains(&name) {
            return Err(Problem::Unsupported { pointer: child(pointer, "$ref"), why: format!("`$ref` to `{name}` is recursive, and Gemini has no `$ref` to keep it finite") });
        }
        let Some(target) = root.get("$defs").and_then(|d| d.get(&name)) else {
            return Err(Problem::Unsupported { pointer: child(pointer, "$ref"), why: format!("`{reference}` names no definition") });
        };
        expanding.push(name);
        let mut inlined = node(root, target, pointer, expanding, losses)?;
        expanding.pop();
        // Keywords beside the reference (a description) stay.
        if let (Some(out), Some(text)) = (inlined.as_object_mut(), map.get("description")) {
            out.insert("description".into(), text.clone());
        }
        return Ok(inlined);
    }
    if map.contains_key("allOf") || map.contains_key("not") {
        let key = if map.contains_key("allOf") { "allOf" } else { "not" };
        return Err(Problem::Unsupported { pointer: child(pointer, key), why: format!("Gemini has no `{key}`") });
    }
    let mut out: Map<String, Value> = Map::new();
    let mut moved: Map<String, Value> = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "$defs" | "$schema" | "$id" | "$comment" | "examples" => {}
            "oneOf" => {
                losses.push(Loss { pointer: child(pointer, "oneOf"), moved: "`oneOf` became `anyOf`; exactly one branch is still enforced by invoke".into() });
                out.insert("anyOf".into(), value.clone());
            }
            "const" => match value {
                Value::String(_) => {
                    out.insert("enum".into(), json!([value]));
                    out.entry("type").or_insert(json!("string"));
                }
                _ => {
                    moved.insert(key.clone(), value.clone());
                }
            },
            "enum" if !value.as_array().is_some_and(|v| v.iter().all(|e| e.is_string() || e.is_null())) => {
                moved.insert(key.clone(), value.clone());
            }
            "format" if value != "date-time" => {
                moved.insert(key.clone(), value.clone());
            }
            k if MOVED.contains(&k) => {
                if !(k == "additionalProperties" && value == &Value::Bool(false)) {
                    moved.insert(key.clone(), value.clone());
                }
            }
            k if KEPT.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            _ => {
                moved.insert(key.clone(), value.clone());
            }
        }
    }
    // One type per node: null becomes `nullable`, several become `anyOf`.
    if let Some(Value::Array(types)) = out.get("type").cloned() {
        let concrete: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if concrete.len() < types.len() {
            out.insert("nullable".into(), Value::Bool(true));
        }
        match concrete.as_slice() {
            [one] => {
                out.insert("type".into(), (*one).clone());
            }
            _ => {
                out.remove("type");
                out.insert("anyOf".into(), Value::Array(concrete.iter().map(|t| json!({ "type": t })).collect()));
            }
        }
    }
    if let Some(Value::Array(values)) = out.get_mut("enum") {
        if values.contains(&Value::Null) {
            values.retain(|v| !v.is_null());
            out.insert("nullable".into(), Value::Bool(true));
        }
    }
    // `anyOf` stands alone: what else the node says moves into the description.
    if out.contains_key("anyOf") {
        let extra: Vec<String> = out.keys().filter(|k| !["anyOf", "description", "title", "nullable"].contains(&k.as_str())).cloned().collect();
        for key in extra {
            if let Some(value) = out.remove(&key) {
                moved.insert(key, value);
            }
        }
    }
    let moved_keys: Vec<String> = moved.keys().cloned().collect();
    out.extend(moved);
    move_to_description(&mut out, &moved_keys.iter().map(String::as_str).collect::<Vec<_>>(), pointer, losses);
    if let Some(Value::Array(branches)) = out.get("anyOf").cloned() {
        let projected: Result<Vec<Value>, Problem> =
            branches.iter().enumerate().map(|(i, b)| node(root, b, &child(&child(pointer, "anyOf"), &i.to_string()), expanding, losses)).collect();
        out.insert("anyOf".into(), Value::Array(projected?));
    }
    if let Some(items) = map.get("items") {
        out.insert("items".into(), node(root, items, &child(pointer, "items"), expanding, losses)?);
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        let mut projected = Map::new();
        for (name, property) in properties {
            projected.insert(name.clone(), node(root, property, &child(&child(pointer, "properties"), name), expanding, losses)?);
        }
        out.insert("properties".into(), Value::Object(projected));
    }
    Ok(Value::Object(out))
}
