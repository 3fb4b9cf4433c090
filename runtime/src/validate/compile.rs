//! Compiling a schema of the supported subset into the validator's nodes.
//! Every keyword outside the subset, and every malformed value, is refused
//! here — with the JSON pointer where it is — never ignored at validation.

use serde_json::Value;

use super::node::{Extra, Node, Objects, Ref, SchemaError, Type};

/// The keywords the validator understands; any other is refused at compile
/// time, never ignored.
pub(super) const KEYWORDS: &[&str] = &[
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "description", "default", "minimum", "maximum",
    "minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "oneOf", "anyOf", "$defs", "$ref",
    "contentMediaType", "contentEncoding",
    // Annotations (DESIGN §2, "Schemas as declared"): kept and served,
    // nothing is checked against them.
    "title", "$schema", "$id", "$comment", "examples", "deprecated", "readOnly", "writeOnly",
];

pub(super) struct Compiler {
    pub(super) def_names: Vec<String>,
    pub(super) objects: Objects,
}

impl Compiler {
    pub(super) fn compile(&self, schema: &Value, pointer: &str) -> Result<Node, SchemaError> {
        let at = |p: &str| if p.is_empty() { "/".to_string() } else { p.to_string() };
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => return Ok(Node::default()),
            Value::Bool(false) => return Ok(Node { never: true, ..Node::default() }),
            other => return Err(SchemaError(format!("a schema must be an object or a boolean, found {other} at `{}`", at(pointer)))),
        };
        if let Some(key) = map.keys().find(|k| !KEYWORDS.contains(&k.as_str())) {
            return Err(SchemaError(format!("unsupported keyword `{key}` at `{}`", at(&format!("{pointer}/{}", escape_pointer(key))))));
        }
        let bad = |key: &str, what: &str| SchemaError(format!("`{key}` must be {what} (at `{}`)", at(&format!("{pointer}/{key}"))));
        let mut node = Node::default();
        match map.get("type") {
            None => {}
            Some(Value::String(t)) => node.types.push(Type::parse(t).ok_or_else(|| bad("type", "a JSON type name"))?),
            Some(Value::Array(ts)) => {
                for t in ts {
                    node.types.push(t.as_str().and_then(Type::parse).ok_or_else(|| bad("type", "a list of JSON type names"))?);
                }
            }
            Some(_) => return Err(bad("type", "a type name or a list of them")),
        }
        node.enum_values = match map.get("enum") {
            None => None,
            Some(Value::Array(values)) => Some(values.clone()),
            Some(_) => return Err(bad("enum", "an array")),
        };
        node.const_value = map.get("const").cloned();
        node.default = map.get("default").cloned();
        match map.get("properties") {
            None => {}
            Some(Value::Object(props)) => {
                for (k, v) in crate::json::sorted_entries(props) {
                    node.properties.push((k.clone(), self.compile(v, &format!("{pointer}/properties/{}", escape_pointer(k)))?));
                }
            }
            Some(_) => return Err(bad("properties", "an object of schemas")),
        }
        node.required = match map.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names.iter().map(|n| n.as_str().map(String::from).ok_or_else(|| bad("required", "an array of property names"))).collect::<Result<_, _>>()?,
            Some(_) => return Err(bad("required", "an array of property names")),
        };
        node.extra = match map.get("additionalProperties") {
            Some(Value::Bool(true)) => Some(Extra::Allowed),
            Some(Value::Bool(false)) => Some(Extra::Denied),
            Some(s @ Value::Object(_)) => Some(Extra::Schema(Box::new(self.compile(s, &format!("{pointer}/additionalProperties"))?))),
            Some(_) => return Err(bad("additionalProperties", "a boolean or a schema")),
            // Closed when properties are declared (like the generated `Args`).
            None if self.objects == Objects::Closed && map.contains_key("properties") => Some(Extra::Denied),
            None => None,
        };
        if let Some(items) = map.get("items") {
            if items.is_array() {
                return Err(bad("items", "one schema (an array of schemas is `prefixItems`, which is not supported)"));
            }
            node.items = Some(Box::new(self.compile(items, &format!("{pointer}/items"))?));
        }
        let number = |key: &str| -> Result<Option<f64>, SchemaError> {
            match map.get(key) {
                None => Ok(None),
                Some(v) => v.as_f64().map(Some).ok_or_else(|| bad(key, "a number")),
            }
        };
        // Counts may be written as integral floats (`2.0`); never ignored.
        let count = |key: &str| -> Result<Option<u64>, SchemaError> {
            match map.get(key) {
                None => Ok(None),
                Some(v) => v
                    .as_u64()
                    .or_else(|| v.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f <= u64::MAX as f64).map(|f| f as u64))
                    .map(Some)
                    .ok_or_else(|| bad(key, "a non-negative integer")),
            }
        };
        node.minimum = number("minimum")?;
        node.maximum = number("maximum")?;
        node.min_length = count("minLength")?;
        node.max_length = count("maxLength")?;
        node.min_items = count("minItems")?;
        node.max_items = count("maxItems")?;
        match map.get("pattern") {
            None => {}
            Some(Value::String(p)) => {
                let re = regex_lite::Regex::new(p).map_err(|e| SchemaError(format!("pattern /{p}/ does not compile: {e} (at `{}`)", at(&format!("{pointer}/pattern")))))?;
                node.pattern = Some((p.to_string(), re));
            }
            Some(_) => return Err(bad("pattern", "a regular expression string")),
        }
        for key in ["format", "contentMediaType"] {
            if map.get(key).is_some_and(|v| !v.is_string()) {
                return Err(bad(key, "a string"));
            }
        }
        match map.get("contentEncoding") {
            None => {}
            Some(Value::String(e)) if e == "base64" => node.base64 = true,
            Some(_) => return Err(bad("contentEncoding", "`base64`, the one encoding supported")),
        }
        for (key, slot) in [("oneOf", &mut node.one_of), ("anyOf", &mut node.any_of)] {
            match map.get(key) {
                None => {}
                Some(Value::Array(variants)) if !variants.is_empty() => {
                    for (i, v) in variants.iter().enumerate() {
                        slot.push(self.compile(v, &format!("{pointer}/{key}/{i}"))?);
                    }
                }
                Some(_) => return Err(bad(key, "a non-empty array of schemas")),
            }
        }
        if let Some(r) = map.get("$ref") {
            let r = r.as_str().ok_or_else(|| bad("$ref", "a string"))?;
            node.reference = Some(self.resolve(r).ok_or_else(|| {
                SchemaError(format!("unsupported $ref `{r}` at `{}`: only `#` and `#/$defs/<name>` resolve", at(&format!("{pointer}/$ref"))))
            })?);
        }
        if map.contains_key("$defs") && !pointer.is_empty() {
            return Err(SchemaError(format!("`$defs` is supported only at the root (found at `{}`)", at(&format!("{pointer}/$defs")))));
        }
        Ok(node)
    }

    fn resolve(&self, reference: &str) -> Option<Ref> {
        if reference == "#" {
            return Some(Ref::Root);
        }
        let segment = reference.strip_prefix("#/$defs/")?;
        // A further `/` would point inside a definition, which is not supported.
        if segment.contains('/') {
            return None;
        }
        let name = unescape_ref_segment(segment)?;
        self.def_names.iter().position(|d| *d == name).map(Ref::Def)
    }
}

/// A key as a JSON pointer segment.
pub(super) fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A JSON pointer segment of a `$ref` (URI fragment): percent-decoded, then
/// `~1` → `/` and `~0` → `~`. `None` when the percent-encoding is malformed.
fn unescape_ref_segment(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    Some(String::from_utf8(decoded).ok()?.replace("~1", "/").replace("~0", "~"))
}
