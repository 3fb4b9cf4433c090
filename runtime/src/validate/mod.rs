//! Argument validation against the supported JSON Schema subset. Each
//! capability's input schema is compiled once, when the registry is built.
//!
//! Objects that declare `properties` are closed unless the schema says
//! `additionalProperties: true` (or gives a schema), matching the generated
//! `Args` types, which deny unknown fields.

use serde_json::Value;

mod compile;
mod node;

use compile::{Compiler, escape_pointer};
use node::{Extra, Node, Ref, Type, kind};
pub use node::{Objects, SchemaError};

/// The deepest a validation follows schemas into one value (a `$ref` cycle
/// that consumes nothing would otherwise never end).
const MAX_DEPTH: usize = 256;

/// A compiled input schema.
#[derive(Debug)]
pub struct Validator {
    root: Node,
    defs: Vec<Node>,
    /// Whether any node has a `default` (else filling defaults is skipped).
    any_default: bool,
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
    /// Compile a schema of the supported subset, objects closed by default;
    /// an unsupported keyword or a malformed schema is an error.
    pub fn compile(schema: &Value) -> Result<Validator, SchemaError> {
        Validator::compile_with(schema, Objects::Closed)
    }

    /// [`Validator::compile`], choosing how objects without
    /// `additionalProperties` treat unknown keys.
    pub fn compile_with(schema: &Value, objects: Objects) -> Result<Validator, SchemaError> {
        let defs_map = match schema.get("$defs") {
            None => None,
            Some(Value::Object(m)) => Some(m),
            Some(other) => return Err(SchemaError(format!("`$defs` must be an object, found {other}"))),
        };
        let compiler = Compiler { def_names: defs_map.map(|m| m.keys().cloned().collect()).unwrap_or_default(), objects };
        let mut defs = Vec::new();
        if let Some(map) = defs_map {
            for (name, def) in map {
                defs.push(compiler.compile(def, &format!("/$defs/{}", escape_pointer(name)))?);
            }
        }
        let mut validator = Validator { root: compiler.compile(schema, "")?, defs, any_default: mentions_default(schema) };
        if validator.any_default {
            validator.keep_applicable_defaults();
        }
        Ok(validator)
    }

    /// Decide once, at compile time, the default each node's omission
    /// takes ([`Validator::apply_defaults`]): its own or its `$ref`'s, when
    /// not `null` and valid against the node's schema; else none. Read in
    /// one walk, written in a second of the same order.
    fn keep_applicable_defaults(&mut self) {
        fn each<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
            out.push(node);
            let extra = match &node.extra {
                Some(Extra::Schema(s)) => Some(&**s),
                _ => None,
            };
            for child in node.properties.iter().map(|(_, n)| n).chain(node.items.as_deref()).chain(extra).chain(&node.one_of).chain(&node.any_of) {
                each(child, out);
            }
        }
        fn each_mut(node: &mut Node, verdicts: &mut impl Iterator<Item = Option<Value>>) {
            node.default = verdicts.next().flatten();
            let extra = match &mut node.extra {
                Some(Extra::Schema(s)) => Some(&mut **s),
                _ => None,
            };
            for child in node.properties.iter_mut().map(|(_, n)| n).chain(node.items.as_deref_mut()).chain(extra).chain(&mut node.one_of).chain(&mut node.any_of) {
                each_mut(child, verdicts);
            }
        }
        let mut nodes = Vec::new();
        each(&self.root, &mut nodes);
        self.defs.iter().for_each(|d| each(d, &mut nodes));
        let verdicts: Vec<Option<Value>> = nodes
            .iter()
            .map(|node| {
                let default = node.default.as_ref().or_else(|| node.reference.and_then(|r| self.target(r).default.as_ref()))?;
                (!default.is_null() && self.validate_node(node, default, 0)).then(|| default.clone())
            })
            .collect();
        let mut verdicts = verdicts.into_iter();
        each_mut(&mut self.root, &mut verdicts);
        self.defs.iter_mut().for_each(|d| each_mut(d, &mut verdicts));
    }

    /// All violations (up to a small bound), properties in name order.
    pub fn validate(&self, value: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        self.check(&self.root, value, &mut String::new(), &mut out, 0);
        out.truncate(MAX_VIOLATIONS);
        out
    }

    /// Fill every omitted property that has a `default` with exactly that
    /// value, where the value is valid against the property's own schema
    /// (`default` is an annotation in JSON Schema: one that does not fit,
    /// such as schemars' `default: null` on a non-null `schema_with` helper,
    /// is never injected), and never `null` (an optional property whose
    /// default is `null` stays absent: the impl's serde default decides);
    /// in objects the arguments hold (nested ones included, through
    /// `items` and `$ref`; not inside `oneOf`/`anyOf`, where which branch
    /// applies is not known). Runs before validation, so the impl, the
    /// receipt and the guest see one value.
    pub fn apply_defaults(&self, value: &mut Value) {
        if self.any_default {
            self.fill(&self.root, value, 0);
        }
    }

    fn fill(&self, node: &Node, value: &mut Value, depth: usize) {
        // Recursive `$defs` cannot loop forever: the walk follows the value,
        // which is finite, and a depth bound guards empty cycles.
        if depth > 64 {
            return;
        }
        if let Some(r) = node.reference {
            self.fill(self.target(r), value, depth + 1);
        }
        match value {
            Value::Object(map) => {
                for (key, prop) in &node.properties {
                    match map.get_mut(key) {
                        Some(v) => self.fill(prop, v, depth + 1),
                        None => {
                            if let Some(d) = &prop.default {
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

    fn target(&self, r: Ref) -> &Node {
        match r {
            Ref::Root => &self.root,
            Ref::Def(i) => &self.defs[i],
        }
    }

    fn check(&self, node: &Node, value: &Value, pointer: &mut String, out: &mut Vec<Violation>, depth: usize) {
        if out.len() >= MAX_VIOLATIONS {
            return;
        }
        let at = |pointer: &str| if pointer.is_empty() { "/".to_string() } else { pointer.to_string() };
        if depth > MAX_DEPTH {
            out.push(Violation { pointer: at(pointer), message: format!("the schema nests more than {MAX_DEPTH} levels here (a `$ref` cycle?)") });
            return;
        }
        if node.never {
            out.push(Violation { pointer: at(pointer), message: "no value is allowed here".into() });
            return;
        }
        // A `$ref` applies beside the node's other keywords, not instead.
        if let Some(r) = node.reference {
            let before = out.len();
            self.check(self.target(r), value, pointer, out, depth + 1);
            if out.len() > before {
                return;
            }
        }
        let mut fail = |pointer: &str, message: String| out.push(Violation { pointer: at(pointer), message });
        if !node.types.is_empty() && !node.types.iter().any(|t| t.accepts(value)) {
            let want = node.types.iter().map(|t| t.name()).collect::<Vec<_>>().join(" or ");
            fail(pointer, format!("expected {want}, got {}", kind(value)));
            return;
        }
        if let Some(values) = &node.enum_values {
            if !values.iter().any(|v| json_eq(v, value)) {
                fail(pointer, not_one_of(value, values));
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
                if node.base64 && crate::content::decode(s).is_none() {
                    fail(pointer, "text is not base64 (standard alphabet, padded), which this binary content must be".into());
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
                        self.check(item_node, item, pointer, out, depth + 1);
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
                for (key, v) in crate::json::sorted_entries(map) {
                    let len = pointer.len();
                    pointer.push('/');
                    if key.contains(['~', '/']) {
                        pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    } else {
                        pointer.push_str(key);
                    }
                    match node.properties.iter().find(|(k, _)| k == key) {
                        Some((_, prop)) => self.check(prop, v, pointer, out, depth + 1),
                        None => match &node.extra {
                            Some(Extra::Schema(s)) => self.check(s, v, pointer, out, depth + 1),
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
            let matching: Vec<usize> = (0..node.one_of.len()).filter(|i| self.validate_node(&node.one_of[*i], value, depth + 1)).collect();
            if matching.len() != 1 {
                let message = match (matching.as_slice(), self.allowed_values(node, 0)) {
                    ([], Some(values)) => not_one_of(value, &values),
                    ([], None) => format!("matches none of the `oneOf` alternatives ({})", self.why_not(&node.one_of, value, depth)),
                    (many, _) => {
                        let which = many.iter().map(|i| (i + 1).to_string()).collect::<Vec<_>>().join(", ");
                        format!("matches {} of the `oneOf` alternatives (numbers {which}); exactly one must match", many.len())
                    }
                };
                out.push(Violation { pointer: at(pointer), message });
            }
        }
        if !node.any_of.is_empty() && !node.any_of.iter().any(|n| self.validate_node(n, value, depth + 1)) {
            let message = match self.allowed_values(node, 0) {
                Some(values) => not_one_of(value, &values),
                None => format!("matches none of the `anyOf` alternatives ({})", self.why_not(&node.any_of, value, depth)),
            };
            out.push(Violation { pointer: at(pointer), message });
        }
    }

    /// Why each alternative refused `value`: its first violation, numbered
    /// from 1 as a person counts them.
    fn why_not(&self, alternatives: &[Node], value: &Value, depth: usize) -> String {
        let reasons: Vec<String> = alternatives
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut out = Vec::new();
                self.check(n, value, &mut String::new(), &mut out, depth + 1);
                match out.first() {
                    Some(v) if v.pointer == "/" => format!("{}: {}", i + 1, v.message),
                    Some(v) => format!("{}: {} {}", i + 1, v.pointer, v.message),
                    None => format!("{}: no match", i + 1),
                }
            })
            .collect();
        reasons.join("; ")
    }

    /// Every value a node of `const`s and `enum`s allows (schemars writes a
    /// documented enum as `oneOf` of one `const` or `enum` per variant), or
    /// `None` when it allows more than a list of values.
    fn allowed_values(&self, node: &Node, depth: usize) -> Option<Vec<Value>> {
        if depth > 16 || !node.properties.is_empty() || node.items.is_some() {
            return None;
        }
        if let Some(r) = node.reference {
            return self.allowed_values(self.target(r), depth + 1);
        }
        if let Some(c) = &node.const_value {
            return Some(vec![c.clone()]);
        }
        if let Some(values) = &node.enum_values {
            return Some(values.clone());
        }
        // `{"type": "null"}`, the other half of an optional enum.
        if node.types == [Type::Null] && node.one_of.is_empty() && node.any_of.is_empty() {
            return Some(vec![Value::Null]);
        }
        let alternatives = if node.one_of.is_empty() { &node.any_of } else { &node.one_of };
        if alternatives.is_empty() {
            return None;
        }
        let mut all: Vec<Value> = Vec::new();
        for alternative in alternatives {
            for v in self.allowed_values(alternative, depth + 1)? {
                if !all.contains(&v) {
                    all.push(v);
                }
            }
        }
        Some(all)
    }

    fn validate_node(&self, node: &Node, value: &Value, depth: usize) -> bool {
        let mut out = Vec::new();
        self.check(node, value, &mut String::new(), &mut out, depth);
        out.is_empty()
    }
}

/// `"z" is not one of "x", "y"`: the allowed values, each as JSON.
fn not_one_of(value: &Value, values: &[Value]) -> String {
    let list = values.iter().map(Value::to_string).collect::<Vec<_>>().join(", ");
    format!("{value} is not one of {list}")
}

/// Whether `default` appears as a key anywhere in a schema (a property
/// named `default` counts too: that only costs a walk).
fn mentions_default(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key("default") || map.values().any(mentions_default),
        Value::Array(items) => items.iter().any(mentions_default),
        _ => false,
    }
}

/// JSON equality where `1` and `1.0` are the same number, at any depth.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(i), Some(j), _, _) => i == j,
            (_, _, Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w))),
        _ => a == b,
    }
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
                "/one: matches none of the `oneOf` alternatives (1: expected string, got a boolean; 2: expected integer, got a boolean)",
                "/s: text is 1 characters, shorter than the minimum 2",
                "/s: text does not match the pattern /^a/",
            ]
        );
    }

    #[test]
    fn binary_content_must_be_base64() {
        let schema = json!({"type": "string", "contentMediaType": "image/png", "contentEncoding": "base64"});
        assert!(violations(schema.clone(), json!("iVBORw0KGgo=")).is_empty());
        assert_eq!(violations(schema, json!("not base64!")), ["/: text is not base64 (standard alphabet, padded), which this binary content must be"]);
        let refused = Validator::compile(&json!({"type": "string", "contentEncoding": "base32"})).unwrap_err();
        assert!(refused.0.contains("`contentEncoding` must be `base64`"), "{refused:?}");
    }

    #[test]
    fn constraints_are_never_dropped() {
        // Decimal bounds count as integers.
        assert_eq!(violations(json!({"maxLength": 2.0}), json!("abc")), ["/: text is 3 characters, longer than the maximum 2"]);
        assert_eq!(violations(json!({"minItems": 1.0}), json!([])), ["/: 0 items, fewer than the minimum 1"]);
        assert!(Validator::compile(&json!({"minItems": 1.5})).is_err());
        // Keywords beside a `$ref` apply too.
        let beside = json!({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 2});
        assert_eq!(violations(beside, json!("abc")), ["/: text is 3 characters, longer than the maximum 2"]);
        // `1` and `1.0` are one number, nested too.
        assert!(violations(json!({"enum": [[1], {"a": 1}]}), json!([1.0])).is_empty());
        assert!(violations(json!({"enum": [[1], {"a": 1}]}), json!({"a": 1.0})).is_empty());
        assert_eq!(violations(json!({"const": [false]}), json!([0])).len(), 1);
        // Percent-encoded and `~`-escaped `$defs` pointers resolve.
        let escaped = json!({"$defs": {"a%b": {"type": "integer"}, "c/d": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a%25b"}, "y": {"$ref": "#/$defs/c~1d"}}});
        assert_eq!(violations(escaped, json!({"x": "no", "y": 1})), ["/x: expected integer, got a string", "/y: expected string, got a number"]);
        // Anything unsupported is refused at compile time, naming where.
        assert_eq!(Validator::compile(&json!({"properties": {"a": {"not": {}}}})).unwrap_err().0, "unsupported keyword `not` at `/properties/a/not`");
        assert!(Validator::compile(&json!({"$ref": "#/properties/a"})).is_err());
        // A `$ref` cycle that consumes nothing ends with a violation, not a crash.
        let cycle = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
        assert_eq!(violations(cycle, json!(1)).len(), 1);
    }

    #[test]
    fn defaults_fill_omitted_properties_at_any_depth() {
        let v = Validator::compile(&json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "default": 50},
                "kept": {"type": ["integer", "null"], "default": 1},
                "filter": {"type": "object", "properties": {"tag": {"type": "string", "default": "all"}}},
                "rows": {"type": "array", "items": {"$ref": "#/$defs/Row"}}
            },
            "$defs": {"Row": {"type": "object", "properties": {"on": {"type": "boolean", "default": true}}}}
        }))
        .unwrap();
        let mut args = json!({"kept": null, "filter": {}, "rows": [{}, {"on": false}]});
        v.apply_defaults(&mut args);
        assert_eq!(args, json!({"limit": 50, "kept": null, "filter": {"tag": "all"}, "rows": [{"on": true}, {"on": false}]}));
    }

    #[test]
    fn a_default_that_does_not_fit_its_schema_or_is_null_is_never_injected() {
        // What schemars writes for `#[serde(default)] Option<T>` with a
        // `schema_with` helper: the helper's schema, and `default: null`.
        let v = Validator::compile(&json!({
            "type": "object",
            "properties": {
                "sql": {"type": "string"},
                "params": {"anyOf": [{"type": "array", "items": {}}, {"type": "object"}], "default": null},
                "limit": {"type": "integer", "minimum": 0, "default": null},
                "nullable": {"type": ["integer", "null"], "default": null},
                "wrong": {"type": "integer", "default": "ten"},
                "fits": {"type": "integer", "minimum": 0, "default": 5}
            },
            "required": ["sql"]
        }))
        .unwrap();
        let mut args = json!({"sql": "SELECT 1"});
        v.apply_defaults(&mut args);
        assert_eq!(args, json!({"sql": "SELECT 1", "fits": 5}), "only the default that fits its own schema is applied");
        assert!(v.validate(&args).is_empty());
        // What the schema refuses is still refused.
        assert_eq!(v.validate(&json!({"sql": "x", "limit": -1})).len(), 1);
        assert_eq!(v.validate(&json!({"sql": "x", "params": "a"})), vec![Violation {
            pointer: "/params".into(),
            message: "matches none of the `anyOf` alternatives (1: expected array, got a string; 2: expected object, got a string)".into()
        }]);
    }

    #[test]
    fn a_failed_union_of_values_names_every_allowed_value() {
        // schemars writes a documented unit enum as `oneOf` of one
        // `const` (or one-value `enum`) per variant.
        let mode = json!({"oneOf": [
            {"description": "In memory.", "type": "string", "const": "memory"},
            {"description": "On disk.", "type": "string", "enum": ["persist"]}
        ]});
        assert_eq!(violations(mode, json!("disk")), [r#"/: "disk" is not one of "memory", "persist""#]);
        let nested = json!({"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}], "$defs": {"Mode": {"enum": ["a", "b"]}}});
        assert_eq!(violations(nested, json!("c")), [r#"/: "c" is not one of "a", "b", null"#]);
        let values = json!({"anyOf": [{"enum": ["none", "ignore"]}, {"enum": ["replace", null]}, {"const": null}]});
        assert_eq!(violations(values, json!("x")), [r#"/: "x" is not one of "none", "ignore", "replace", null"#]);
        // Two matches of a `oneOf` are numbered.
        let two = json!({"oneOf": [{"type": "integer"}, {"type": "number"}]});
        assert_eq!(violations(two, json!(1)), ["/: matches 2 of the `oneOf` alternatives (numbers 1, 2); exactly one must match"]);
    }

    #[test]
    fn annotations_are_accepted_and_check_nothing() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Args", "$comment": "c",
            "type": "object",
            "properties": {"n": {"type": "integer", "examples": [1], "deprecated": true, "readOnly": true, "writeOnly": false, "title": "N"}}
        });
        assert!(violations(schema.clone(), json!({"n": 2})).is_empty());
        assert_eq!(violations(schema, json!({"n": "2"})), ["/n: expected integer, got a string"]);
    }
}
