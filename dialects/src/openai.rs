//! OpenAI strict function calling: every property required (an optional
//! one nullable), every object closed, and the keywords strict mode refuses
//! moved into descriptions.

use serde_json::{Map, Value, json};

use crate::{Loss, Problem, admits_null, child, move_to_description, required, resolve};

/// Keywords strict mode refuses; they move into the description.
const MOVED: &[&str] =
    &["default", "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "uniqueItems", "contentEncoding", "contentMediaType"];
/// Keywords that are not constraints and strict mode does not take.
const DROPPED: &[&str] = &["title", "examples", "$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly"];

pub(crate) fn project(schema: &Value, losses: &mut Vec<Loss>) -> Result<Value, Problem> {
    if schema.get("type") != Some(&json!("object")) {
        return Err(Problem::Unsupported { pointer: String::new(), why: "OpenAI strict mode takes an object schema at the root".into() });
    }
    let mut out = node(schema, schema, "", losses)?;
    if let Some(Value::Object(defs)) = schema.get("$defs") {
        let mut projected = Map::new();
        for (name, def) in defs {
            projected.insert(name.clone(), node(schema, def, &child("/$defs", name), losses)?);
        }
        out["$defs"] = Value::Object(projected);
    }
    Ok(out)
}

/// One node of the schema rooted at `root` (for `$ref`s), projected.
fn node(root: &Value, schema: &Value, pointer: &str, losses: &mut Vec<Loss>) -> Result<Value, Problem> {
    let Some(map) = schema.as_object() else {
        return Err(Problem::Unsupported { pointer: pointer.into(), why: "OpenAI strict mode needs a typed schema here, not `true`/`false`".into() });
    };
    if map.contains_key("allOf") || map.contains_key("not") {
        let key = if map.contains_key("allOf") { "allOf" } else { "not" };
        return Err(Problem::Unsupported { pointer: child(pointer, key), why: format!("OpenAI strict mode has no `{key}`") });
    }
    let mut out: Map<String, Value> = map.iter().filter(|(k, _)| !DROPPED.contains(&k.as_str()) && k.as_str() != "$defs").map(|(k, v)| (k.clone(), v.clone())).collect();
    if let Some(branches) = out.remove("oneOf") {
        losses.push(Loss { pointer: child(pointer, "oneOf"), moved: "`oneOf` became `anyOf`; exactly one branch is still enforced by invoke".into() });
        out.insert("anyOf".into(), branches);
    }
    move_to_description(&mut out, MOVED, pointer, losses);
    if let Some(Value::Array(branches)) = out.get("anyOf").cloned() {
        let projected: Result<Vec<Value>, Problem> = branches.iter().enumerate().map(|(i, b)| node(root, b, &child(&child(pointer, "anyOf"), &i.to_string()), losses)).collect();
        out.insert("anyOf".into(), Value::Array(projected?));
    }
    if let Some(items) = map.get("items") {
        out.insert("items".into(), node(root, items, &child(pointer, "items"), losses)?);
    }
    let is_object = map.get("type") == Some(&json!("object")) || map.contains_key("properties");
    if is_object {
        let kept = required(schema);
        let mut properties = Map::new();
        let mut names = Vec::new();
        for (name, property) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
            let at = child(&child(pointer, "properties"), name);
            let optional = !kept.contains(&name.as_str());
            if is_map(resolve(root, property)) {
                if optional {
                    losses.push(Loss { pointer: at, moved: "a free-form map cannot be expressed in strict mode; the property is left out (invoke still accepts it)".into() });
                    continue;
                }
                return Err(Problem::Unsupported { pointer: at, why: "a required free-form map (an object with open keys) cannot be expressed in OpenAI strict mode".into() });
            }
            if optional && null_is_a_value(root, property) {
                losses.push(Loss {
                    pointer: at.clone(),
                    moved: "optional, nullable and with a default: strict mode sends `null` for an omitted property, so `null` is passed and the default never applies".into(),
                });
            }
            let mut projected = node(root, property, &at, losses)?;
            if optional {
                projected = nullable(projected);
            }
            names.push(Value::String(name.clone()));
            properties.insert(name.clone(), projected);
        }
        if matches!(map.get("additionalProperties"), Some(v) if v != &Value::Bool(false)) && !properties.is_empty() {
            losses.push(Loss { pointer: child(pointer, "additionalProperties"), moved: "other keys are not offered in strict mode (invoke still accepts them)".into() });
        }
        names.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        out.insert("properties".into(), Value::Object(properties));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Ok(Value::Object(out))
}

/// An object whose keys are free: `additionalProperties` a schema or `true`
/// and no declared properties.
fn is_map(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("object"))
        && schema.get("properties").and_then(Value::as_object).is_none_or(Map::is_empty)
        && matches!(schema.get("additionalProperties"), Some(Value::Object(_)) | Some(Value::Bool(true)) | None)
}

/// `schema`, also admitting `null`.
fn nullable(mut schema: Value) -> Value {
    let Some(map) = schema.as_object_mut() else { return schema };
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.contains(&json!("null")) => types.push(json!("null")),
        Some(_) => {}
        None => {
            if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
                branches.push(json!({"type": "null"}));
            } else if map.contains_key("$ref") {
                return json!({ "anyOf": [schema, {"type": "null"}] });
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
    schema
}

/// What a strict-mode model sends for `args`: `null` for every omitted
/// property the projection kept.
pub(crate) fn encode(root: &Value, schema: &Value, args: Value) -> Value {
    walk(root, schema, args, &|property, value, optional| match value {
        None if optional && !is_map(resolve(root, property)) => Some(Value::Null),
        other => other,
    })
}

/// The arguments as the spec describes them: `null` for an optional
/// property becomes absent — unless the property admits `null` and has a
/// default, where `null` is a value of its own (the projection reported
/// that omitting it cannot be told apart).
pub(crate) fn decode(root: &Value, schema: &Value, args: Value) -> Value {
    walk(root, schema, args, &|property, value, optional| match value {
        Some(Value::Null) if optional && !null_is_a_value(root, property) => None,
        other => other,
    })
}

/// A nullable property with a default: there `null` and "omitted" differ.
fn null_is_a_value(root: &Value, property: &Value) -> bool {
    admits_null(root, property) && resolve(root, property).get("default").is_some()
}

/// Rewrite each object's properties with `f(property schema, value,
/// optional)`, depth first, following local `$ref`s and array items.
/// How [`walk`] rewrites one property: `(its schema, its value, optional)`
/// → the value to keep, or none.
type Rewrite<'a> = &'a dyn Fn(&Value, Option<Value>, bool) -> Option<Value>;

fn walk(root: &Value, schema: &Value, args: Value, f: Rewrite<'_>) -> Value {
    let schema = resolve(root, schema);
    match args {
        Value::Object(mut map) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Value::Object(map) };
            let kept = required(schema);
            for (name, property) in properties {
                let value = map.remove(name).map(|v| walk(root, property, v, f));
                if let Some(value) = f(property, value, !kept.contains(&name.as_str())) {
                    map.insert(name.clone(), value);
                }
            }
            Value::Object(map)
        }
        Value::Array(items) => match schema.get("items") {
            Some(item) => Value::Array(items.into_iter().map(|v| walk(root, item, v, f)).collect()),
            None => Value::Array(items),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Properties reached through a `$ref` are judged by their definition:
    /// a nullable one with a default is reported, and its `null` kept.
    #[test]
    fn referenced_properties_are_resolved_against_the_root() {
        let schema = json!({
            "type": "object",
            "properties": { "mode": { "$ref": "#/$defs/Mode" } },
            "$defs": { "Mode": { "type": ["string", "null"], "default": "fast" } }
        });
        let mut losses = Vec::new();
        super::project(&schema, &mut losses).unwrap();
        assert!(losses.iter().any(|l| l.pointer == "/properties/mode" && l.moved.contains("the default never applies")), "{losses:?}");
        assert_eq!(super::decode(&schema, &schema, json!({"mode": null})), json!({"mode": null}));
    }
}
