//! Argument validation against the supported JSON Schema subset. Each
//! capability's input schema is compiled once, when the registry is built.
//!
//! Objects that declare `properties` are closed unless the schema says
//! `additionalProperties: true` (or gives a schema), matching the generated
//! `Args` types, which deny unknown fields.

use serde_json::Value;

/// A schema the runtime cannot compile (a spec that bypassed `check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    String,
    Number,
    Integer,
    Boolean,
    Object,
    Array,
    Null,
}

impl Type {
    fn parse(s: &str) -> Option<Type> {
        Some(match s {
            "string" => Type::String,
            "number" => Type::Number,
            "integer" => Type::Integer,
            "boolean" => Type::Boolean,
            "object" => Type::Object,
            "array" => Type::Array,
            "null" => Type::Null,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Type::String => "string",
            Type::Number => "number",
            Type::Integer => "integer",
            Type::Boolean => "boolean",
            Type::Object => "object",
            Type::Array => "array",
            Type::Null => "null",
        }
    }

    fn accepts(self, v: &Value) -> bool {
        match self {
            Type::String => v.is_string(),
            Type::Number => v.is_number(),
            Type::Integer => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
            Type::Boolean => v.is_boolean(),
            Type::Object => v.is_object(),
            Type::Array => v.is_array(),
            Type::Null => v.is_null(),
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[derive(Debug)]
enum Extra {
    Allowed,
    Denied,
    Schema(Box<Node>),
}

#[derive(Debug, Default)]
struct Node {
    types: Vec<Type>,
    enum_values: Option<Vec<Value>>,
    const_value: Option<Value>,
    properties: Vec<(String, Node)>,
    required: Vec<String>,
    extra: Option<Extra>,
    items: Option<Box<Node>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    pattern: Option<(String, regex_lite::Regex)>,
    one_of: Vec<Node>,
    any_of: Vec<Node>,
    reference: Option<usize>,
    /// `default`: the value an omitted property takes.
    default: Option<Value>,
}

/// A compiled input schema.
#[derive(Debug)]
pub struct Validator {
    root: Node,
    defs: Vec<Node>,
}

/// One reason arguments are invalid, at a JSON pointer into the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
}

/// Most violations one validation reports.
const MAX_VIOLATIONS: usize = 8;

impl Validator {
    /// Compile a schema of the supported subset; an unsupported one is an error.
    pub fn compile(schema: &Value) -> Result<Validator, SchemaError> {
        let def_names: Vec<String> = schema.get("$defs").and_then(Value::as_object).map(|m| m.keys().cloned().collect()).unwrap_or_default();
        let mut defs = Vec::new();
        if let Some(map) = schema.get("$defs").and_then(Value::as_object) {
            for (_, def) in map {
                defs.push(compile(def, &def_names)?);
            }
        }
        Ok(Validator { root: compile(schema, &def_names)?, defs })
    }

    /// All violations (up to a small bound), in document order.
    pub fn validate(&self, value: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        self.check(&self.root, value, &mut String::new(), &mut out);
        out.truncate(MAX_VIOLATIONS);
        out
    }

    /// Fill every omitted property that has a `default` with exactly that
    /// value, in objects the arguments hold (nested ones included, through
    /// `items` and `$ref`; not inside `oneOf`/`anyOf`, where which branch
    /// applies is not known). Runs before validation, so the impl, the
    /// receipt and the guest see one value.
    pub fn apply_defaults(&self, value: &mut Value) {
        self.fill(&self.root, value, 0);
    }

    fn fill(&self, node: &Node, value: &mut Value, depth: usize) {
        // Recursive `$defs` cannot loop forever: the walk follows the value,
        // which is finite, and a depth bound guards empty cycles.
        if depth > 64 {
            return;
        }
        if let Some(r) = node.reference {
            return self.fill(&self.defs[r], value, depth + 1);
        }
        match value {
            Value::Object(map) => {
                for (key, prop) in &node.properties {
                    match map.get_mut(key) {
                        Some(v) => self.fill(prop, v, depth + 1),
                        None => {
                            if let Some(d) = self.default_of(prop) {
                                map.insert(key.clone(), d.clone());
                            }
                        }
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &node.items {
                    for v in items {
                        self.fill(item, v, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    fn default_of<'a>(&'a self, node: &'a Node) -> Option<&'a Value> {
        node.default.as_ref().or_else(|| node.reference.and_then(|r| self.defs[r].default.as_ref()))
    }

    /// Top-level property names, in schema order.
    pub fn properties(&self) -> impl Iterator<Item = &str> {
        self.root.properties.iter().map(|(k, _)| k.as_str())
    }

    /// The required property names of the root object.
    pub fn required(&self) -> &[String] {
        &self.root.required
    }

    /// Whether a top-level property is a (possibly nullable) string.
    pub fn is_string_property(&self, name: &str) -> bool {
        self.root.properties.iter().any(|(k, n)| k == name && n.types.contains(&Type::String))
    }

    fn check(&self, node: &Node, value: &Value, pointer: &mut String, out: &mut Vec<Violation>) {
        if out.len() >= MAX_VIOLATIONS {
            return;
        }
        let mut fail = |pointer: &str, message: String| {
            out.push(Violation { pointer: if pointer.is_empty() { "/".into() } else { pointer.to_string() }, message })
        };
        if let Some(r) = node.reference {
            return self.check(&self.defs[r], value, pointer, out);
        }
        if !node.types.is_empty() && !node.types.iter().any(|t| t.accepts(value)) {
            let want = node.types.iter().map(|t| t.name()).collect::<Vec<_>>().join(" or ");
            fail(pointer, format!("expected {want}, got {}", kind(value)));
            return;
        }
        if let Some(values) = &node.enum_values {
            if !values.iter().any(|v| json_eq(v, value)) {
                let list = values.iter().map(Value::to_string).collect::<Vec<_>>().join(", ");
                fail(pointer, format!("{value} is not one of {list}"));
                return;
            }
        }
        if let Some(c) = &node.const_value {
            if !json_eq(c, value) {
                fail(pointer, format!("expected {c}, got {value}"));
                return;
            }
        }
        match value {
            Value::Number(n) => {
                let f = n.as_f64().unwrap_or(0.0);
                if let Some(min) = node.minimum.filter(|m| f < *m) {
                    fail(pointer, format!("{n} is less than the minimum {min}"));
                }
                if let Some(max) = node.maximum.filter(|m| f > *m) {
                    fail(pointer, format!("{n} is greater than the maximum {max}"));
                }
            }
            Value::String(s) => {
                let len = s.chars().count() as u64;
                if let Some(min) = node.min_length.filter(|m| len < *m) {
                    fail(pointer, format!("text is {len} characters, shorter than the minimum {min}"));
                }
                if let Some(max) = node.max_length.filter(|m| len > *m) {
                    fail(pointer, format!("text is {len} characters, longer than the maximum {max}"));
                }
                if let Some((source, re)) = &node.pattern {
                    if !re.is_match(s) {
                        fail(pointer, format!("text does not match the pattern /{source}/"));
                    }
                }
            }
            Value::Array(items) => {
                let n = items.len() as u64;
                if let Some(min) = node.min_items.filter(|m| n < *m) {
                    fail(pointer, format!("{n} items, fewer than the minimum {min}"));
                }
                if let Some(max) = node.max_items.filter(|m| n > *m) {
                    fail(pointer, format!("{n} items, more than the maximum {max}"));
                }
                if let Some(item_node) = &node.items {
                    for (i, item) in items.iter().enumerate() {
                        let len = pointer.len();
                        pointer.push_str(&format!("/{i}"));
                        self.check(item_node, item, pointer, out);
                        pointer.truncate(len);
                    }
                }
            }
            Value::Object(map) => {
                for key in &node.required {
                    if !map.contains_key(key) {
                        fail(pointer, format!("missing required property `{key}`"));
                    }
                }
                for (key, v) in map {
                    let len = pointer.len();
                    pointer.push('/');
                    if key.contains(['~', '/']) {
                        pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    } else {
                        pointer.push_str(key);
                    }
                    match node.properties.iter().find(|(k, _)| k == key) {
                        Some((_, prop)) => self.check(prop, v, pointer, out),
                        None => match &node.extra {
                            Some(Extra::Schema(s)) => self.check(s, v, pointer, out),
                            Some(Extra::Denied) => {
                                let known = node.properties.iter().map(|(k, _)| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                                let expected = if known.is_empty() { "it takes no properties".to_string() } else { format!("expected one of: {known}") };
                                out.push(Violation { pointer: pointer.clone(), message: format!("unknown property `{key}` ({expected})") });
                            }
                            Some(Extra::Allowed) | None => {}
                        },
                    }
                    pointer.truncate(len);
                }
            }
            _ => {}
        }
        if !node.one_of.is_empty() {
            let matching = node.one_of.iter().filter(|n| self.validate_node(n, value)).count();
            if matching != 1 {
                out.push(Violation {
                    pointer: if pointer.is_empty() { "/".into() } else { pointer.clone() },
                    message: format!("matches {matching} of the `oneOf` alternatives; exactly one must match"),
                });
            }
        }
        if !node.any_of.is_empty() && !node.any_of.iter().any(|n| self.validate_node(n, value)) {
            out.push(Violation {
                pointer: if pointer.is_empty() { "/".into() } else { pointer.clone() },
                message: "matches none of the `anyOf` alternatives".into(),
            });
        }
    }

    fn validate_node(&self, node: &Node, value: &Value) -> bool {
        let mut out = Vec::new();
        self.check(node, value, &mut String::new(), &mut out);
        out.is_empty()
    }
}

/// JSON equality where `1` and `1.0` are the same number.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn compile(schema: &Value, def_names: &[String]) -> Result<Node, SchemaError> {
    let Some(map) = schema.as_object() else {
        return Err(SchemaError(format!("a schema must be an object, found {schema}")));
    };
    let mut node = Node::default();
    let num = |k: &str| map.get(k).and_then(Value::as_f64);
    let count = |k: &str| map.get(k).and_then(Value::as_u64);
    match map.get("type") {
        None => {}
        Some(Value::String(t)) => node.types.push(Type::parse(t).ok_or_else(|| SchemaError(format!("unknown type {t}")))?),
        Some(Value::Array(ts)) => {
            for t in ts {
                let t = t.as_str().and_then(Type::parse).ok_or_else(|| SchemaError(format!("unknown type {t}")))?;
                node.types.push(t);
            }
        }
        Some(other) => return Err(SchemaError(format!("bad type {other}"))),
    }
    node.enum_values = map.get("enum").and_then(Value::as_array).cloned();
    node.const_value = map.get("const").cloned();
    node.default = map.get("default").cloned();
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            node.properties.push((k.clone(), compile(v, def_names)?));
        }
    }
    node.required = map.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(|v| v.as_str().map(String::from)).collect()).unwrap_or_default();
    node.extra = match map.get("additionalProperties") {
        Some(Value::Bool(true)) => Some(Extra::Allowed),
        Some(Value::Bool(false)) => Some(Extra::Denied),
        Some(s @ Value::Object(_)) => Some(Extra::Schema(Box::new(compile(s, def_names)?))),
        Some(other) => return Err(SchemaError(format!("bad additionalProperties {other}"))),
        // Closed when properties are declared (like the generated `Args`).
        None if map.contains_key("properties") => Some(Extra::Denied),
        None => None,
    };
    if let Some(items) = map.get("items") {
        node.items = Some(Box::new(compile(items, def_names)?));
    }
    node.minimum = num("minimum");
    node.maximum = num("maximum");
    node.min_length = count("minLength");
    node.max_length = count("maxLength");
    node.min_items = count("minItems");
    node.max_items = count("maxItems");
    if let Some(p) = map.get("pattern").and_then(Value::as_str) {
        let re = regex_lite::Regex::new(p).map_err(|e| SchemaError(format!("pattern /{p}/ does not compile: {e}")))?;
        node.pattern = Some((p.to_string(), re));
    }
    for (key, slot) in [("oneOf", &mut node.one_of), ("anyOf", &mut node.any_of)] {
        if let Some(variants) = map.get(key).and_then(Value::as_array) {
            for v in variants {
                slot.push(compile(v, def_names)?);
            }
        }
    }
    if let Some(r) = map.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").ok_or_else(|| SchemaError(format!("unsupported $ref {r}")))?;
        node.reference = Some(def_names.iter().position(|d| d == name).ok_or_else(|| SchemaError(format!("$ref {r} is not defined")))?);
    }
    Ok(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn violations(schema: Value, value: Value) -> Vec<String> {
        Validator::compile(&schema).unwrap().validate(&value).into_iter().map(|v| format!("{}: {}", v.pointer, v.message)).collect()
    }

    #[test]
    fn checks_the_subset() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 10},
                "s": {"type": ["string", "null"], "minLength": 2, "pattern": "^a"},
                "e": {"enum": ["x", "y"]},
                "list": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "maxItems": 2},
                "one": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
            },
            "required": ["n"],
            "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}
        });
        assert!(violations(schema.clone(), json!({"n": 3, "s": null, "e": "x", "list": [{"id": "a"}], "one": 2})).is_empty());
        assert_eq!(
            violations(schema, json!({"n": 0, "s": "b", "e": "z", "list": [{}, {"id": 1}, {"id": "c"}], "one": true, "zz": 1})),
            vec![
                "/e: \"z\" is not one of \"x\", \"y\"",
                "/list: 3 items, more than the maximum 2",
                "/list/0: missing required property `id`",
                "/list/1/id: expected string, got a number",
                "/n: 0 is less than the minimum 1",
                "/one: matches 0 of the `oneOf` alternatives; exactly one must match",
                "/s: text is 1 characters, shorter than the minimum 2",
                "/s: text does not match the pattern /^a/",
            ]
        );
    }
}
