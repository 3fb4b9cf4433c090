//! Argument coercion: the forgiving half of the argument check. Each fold
//! applies only when exactly one reading is possible; nothing is guessed.
//!
//! - camelCase keys fold onto snake_case properties (`noteId` → `note_id`);
//! - a lone string becomes the one required string property;
//! - a bare id (string or number) becomes the one required `*_id` property;
//! - `null` means no arguments (`{}`).

use serde_json::{Map, Value};

use crate::validate::Validator;

/// `maxResults` → `max_results`
pub fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for (i, c) in key.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Why arguments could not be read as an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoerceError(pub String);

/// `7.0` → `7`: JSON Schema counts an integral float as an integer, and a
/// JavaScript guest has no other kind of number, but the generated `Args`
/// decode integers only from integral JSON numbers. Floats fields accept
/// both, so normalizing every integral float in range is safe.
fn normalize_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64() {
                if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
                    *value = Value::from(f as i64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_numbers),
        Value::Object(map) => map.values_mut().for_each(normalize_numbers),
        _ => {}
    }
}

/// Fold `args` into the argument object the schema describes.
pub fn coerce(mut args: Value, schema: &Validator) -> Result<Map<String, Value>, CoerceError> {
    normalize_numbers(&mut args);
    match args {
        Value::Null => Ok(Map::new()),
        Value::Object(map) => Ok(fold_keys(map, schema)),
        scalar @ (Value::String(_) | Value::Number(_) | Value::Bool(_)) => {
            let required = schema.required();
            let ids: Vec<&String> = required.iter().filter(|k| k.ends_with("_id")).collect();
            let strings: Vec<&String> = required.iter().filter(|k| schema.is_string_property(k)).collect();
            let target = match &scalar {
                Value::String(_) if strings.len() == 1 => Some(strings[0]),
                Value::String(_) | Value::Number(_) if ids.len() == 1 => Some(ids[0]),
                _ => None,
            };
            match target {
                Some(key) => Ok(Map::from_iter([(key.clone(), scalar)])),
                None => {
                    let why = match (&scalar, strings.len(), ids.len()) {
                        (Value::Bool(_), ..) => "a bare boolean cannot name an argument".to_string(),
                        (Value::String(_), 0, 0) | (Value::Number(_), _, 0) => {
                            "no single required argument can take it".to_string()
                        }
                        (_, s, i) => format!(
                            "it is ambiguous ({s} required string argument{}, {i} required `*_id` argument{})",
                            if s == 1 { "" } else { "s" },
                            if i == 1 { "" } else { "s" }
                        ),
                    };
                    Err(CoerceError(format!("arguments must be an object; got the bare value {scalar} and {why}")))
                }
            }
        }
        Value::Array(_) => Err(CoerceError("arguments must be an object, not an array".into())),
    }
}

/// Fold camelCase keys onto declared snake_case properties, only when the
/// key itself is not declared and the target is not already present.
fn fold_keys(map: Map<String, Value>, schema: &Validator) -> Map<String, Value> {
    let declared: Vec<&str> = schema.properties().collect();
    let needs_fold = map.keys().any(|k| !declared.contains(&k.as_str()) && k.chars().any(|c| c.is_ascii_uppercase()));
    if !needs_fold {
        return map;
    }
    let mut out = Map::new();
    let mut pending = Vec::new();
    for (key, value) in crate::json::sorted_owned(map) {
        if declared.contains(&key.as_str()) || !key.chars().any(|c| c.is_ascii_uppercase()) {
            out.insert(key, value);
        } else {
            pending.push((key, value));
        }
    }
    for (key, value) in pending {
        let folded = snake_case(&key);
        if declared.contains(&folded.as_str()) && !out.contains_key(&folded) {
            out.insert(folded, value);
        } else {
            // Ambiguous or unknown: keep it, so validation names it.
            out.insert(key, value);
        }
    }
    out.sort_keys();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snake_case_folds_camel_case() {
        assert_eq!(snake_case("maxResults"), "max_results");
        assert_eq!(snake_case("noteId"), "note_id");
        assert_eq!(snake_case("plain"), "plain");
    }

    #[test]
    fn integral_floats_become_integers() {
        let v = Validator::compile(&json!({"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"}}})).unwrap();
        let map = coerce(json!({"n": 7.0, "x": 2.5}), &v).unwrap();
        assert!(map["n"].is_i64(), "7.0 decodes into an integer field");
        assert_eq!(map["x"], json!(2.5));
    }

    #[test]
    fn lone_string_and_bare_id() {
        let v = Validator::compile(&json!({"type": "object", "properties": {"note_id": {"type": "string"}}, "required": ["note_id"]})).unwrap();
        assert_eq!(coerce(json!("n1"), &v).unwrap(), json!({"note_id": "n1"}).as_object().unwrap().clone());
        assert_eq!(coerce(json!(7), &v).unwrap(), json!({"note_id": 7}).as_object().unwrap().clone());
    }
}
