//! Decoding one `input`/`output` schema into the typed [`Schema`] model,
//! reporting every unsupported keyword with its JSON pointer.

use serde_json::Value as Json;

use crate::model::{Additional, JsonType, Schema};
use crate::ordered::Ordered;
use crate::rules as rule;
use crate::yaml::{Key, Node, Pos, Value};
use capspec_names::did_you_mean;

use crate::finding::Finding;

use super::keys::SCHEMA_KEYWORDS;

/// RFC 6901 escaping of one pointer segment.
fn pointer_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Decodes one `input`/`output` schema into the typed model, reporting every
/// unsupported keyword with its JSON pointer.
pub(super) struct SchemaDecoder<'d> {
    /// The spec file findings point into.
    file: &'d str,
    findings: &'d mut Vec<Finding>,
    /// `$ref`s seen, checked against `$defs` at the end of the root.
    refs: Vec<(String, Pos, String)>,
    ok: bool,
    /// The project wrote this schema (a YAML spec of its own), so a
    /// default that does not fit it is worth a warning; an import's, a
    /// pin's or a derive's is taken as declared (DESIGN §2).
    owned: bool,
}

impl<'d> SchemaDecoder<'d> {
    pub(super) fn new(file: &'d str, findings: &'d mut Vec<Finding>, owned: bool) -> Self {
        SchemaDecoder { file, findings, refs: Vec::new(), ok: true, owned }
    }

    fn error(&mut self, pos: Pos, message: String) {
        self.ok = false;
        self.findings.push(Finding::error(rule::SPEC_INVALID_SCHEMA, self.file, pos, message));
    }

    pub(super) fn root(mut self, node: &Node, pointer: &str) -> Option<Schema> {
        let schema = self.schema(node, pointer, true);
        let def_names: Vec<String> = schema.as_ref().map(|s| s.defs.iter().map(|(n, _)| n.clone()).collect()).unwrap_or_default();
        for (name, pos, at) in std::mem::take(&mut self.refs) {
            if !def_names.contains(&name) {
                let hint = did_you_mean(&name, def_names.iter().map(String::as_str));
                self.error(pos, format!("`$ref` at `{at}` names `#/$defs/{name}`, which is not defined{hint}"));
            }
        }
        if self.ok { schema } else { None }
    }

    fn schema(&mut self, node: &Node, pointer: &str, is_root: bool) -> Option<Schema> {
        let Value::Map(entries) = &node.value else {
            self.error(node.pos, format!("a schema must be a mapping (at `{pointer}`), found {}", node.value.kind()));
            return None;
        };
        if let Some(folded) = fold_nullable(entries, node.pos) {
            let mut schema = self.schema(&folded, pointer, is_root)?;
            schema.declared = Some(Ordered::schema_from_node(node));
            return Some(schema);
        }
        let mut schema = Schema::default();
        for (key, value) in entries {
            let at = format!("{pointer}/{}", pointer_segment(&key.name));
            match key.name.as_str() {
                "type" => schema.types = self.types(value, &at),
                "description" => {
                    if let Value::String(s) = &value.value {
                        schema.description = Some(s.clone());
                    } else {
                        self.error(value.pos, format!("`{}` must be a string (at `{at}`)", key.name));
                    }
                }
                "properties" => {
                    if let Value::Map(props) = &value.value {
                        for (prop, prop_schema) in props {
                            let prop_at = format!("{at}/{}", pointer_segment(&prop.name));
                            if let Some(s) = self.schema(prop_schema, &prop_at, false) {
                                schema.properties.push((prop.name.clone(), s));
                            }
                        }
                    } else {
                        self.error(value.pos, format!("`properties` must be a mapping of schemas (at `{at}`)"));
                    }
                }
                "required" => schema.required = self.required(value, &at),
                "additionalProperties" => {
                    schema.additional_properties = match &value.value {
                        Value::Bool(b) => Some(Additional::Allowed(*b)),
                        Value::Map(_) => self.schema(value, &at, false).map(|s| Additional::Schema(Box::new(s))),
                        other => {
                            self.error(value.pos, format!("`additionalProperties` must be a boolean or a schema (at `{at}`), found {}", other.kind()));
                            None
                        }
                    }
                }
                "items" => {
                    if let Value::Seq(_) = value.value {
                        self.error(value.pos, format!("tuple `items` (a list of schemas) is not supported (at `{at}`); use one schema"));
                    } else {
                        schema.items = self.schema(value, &at, false).map(Box::new);
                    }
                }
                "enum" => match &value.value {
                    Value::Seq(items) if !items.is_empty() => {
                        let mut values: Vec<Json> = Vec::new();
                        for item in items {
                            let v = item.to_json();
                            if v.is_array() || v.is_object() {
                                self.error(item.pos, format!("`enum` values must be strings, numbers, booleans or null (at `{at}`)"));
                            } else if values.contains(&v) {
                                self.error(item.pos, format!("`enum` lists {v} twice (at `{at}`)"));
                            } else {
                                values.push(v);
                            }
                        }
                        schema.enum_values = Some(values);
                    }
                    _ => self.error(value.pos, format!("`enum` must be a non-empty list (at `{at}`)")),
                },
                "const" => schema.const_value = Some(value.to_json()),
                "default" => schema.default = Some(value.to_json()),
                "minimum" | "maximum" => match &value.value {
                    Value::Number(n) => {
                        if key.name == "minimum" {
                            schema.minimum = Some(n.clone());
                        } else {
                            schema.maximum = Some(n.clone());
                        }
                    }
                    _ => self.error(value.pos, format!("`{}` must be a number (at `{at}`)", key.name)),
                },
                "minLength" | "maxLength" | "minItems" | "maxItems" => {
                    // JSON Schema counts `2.0` as the integer 2.
                    let n = match &value.value {
                        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f <= u64::MAX as f64).map(|f| f as u64)),
                        _ => None,
                    };
                    match n {
                        None => self.error(value.pos, format!("`{}` must be a non-negative integer (at `{at}`)", key.name)),
                        Some(n) => match key.name.as_str() {
                            "minLength" => schema.min_length = Some(n),
                            "maxLength" => schema.max_length = Some(n),
                            "minItems" => schema.min_items = Some(n),
                            _ => schema.max_items = Some(n),
                        },
                    }
                }
                "pattern" | "format" => match &value.value {
                    Value::String(s) => {
                        if key.name == "pattern" {
                            schema.pattern = Some(s.clone());
                        } else {
                            schema.format = Some(s.clone());
                        }
                    }
                    _ => self.error(value.pos, format!("`{}` must be a string (at `{at}`)", key.name)),
                },
                "contentEncoding" => match &value.value {
                    Value::String(e) if e == "base64" => schema.base64 = true,
                    _ => self.error(value.pos, format!("`contentEncoding` must be `base64`, the one encoding capspec supports (at `{at}`)")),
                },
                "contentMediaType" => match &value.value {
                    Value::String(m) if is_media_type(m) => schema.content_media_type = Some(m.clone()),
                    _ => self.error(value.pos, format!("`contentMediaType` must be a media type such as `image/png` or a range such as `image/*` (at `{at}`)")),
                },
                "oneOf" | "anyOf" => {
                    let variants = self.variants(value, &at);
                    if key.name == "oneOf" {
                        schema.one_of = variants;
                    } else {
                        schema.any_of = variants;
                    }
                }
                "$defs" => {
                    if !is_root {
                        self.error(key.pos, format!("`$defs` is supported only at the root of `input` or `output` (found at `{at}`)"));
                    } else if let Value::Map(defs) = &value.value {
                        for (def, def_schema) in defs {
                            let def_at = format!("{at}/{}", pointer_segment(&def.name));
                            if !is_type_name(&def.name) {
                                self.error(def.pos, format!("`$defs` name `{}` must be an identifier such as `Label` (at `{def_at}`)", def.name));
                                continue;
                            }
                            if let Some(s) = self.schema(def_schema, &def_at, false) {
                                schema.defs.push((def.name.clone(), s));
                            }
                        }
                    } else {
                        self.error(value.pos, format!("`$defs` must be a mapping of schemas (at `{at}`)"));
                    }
                }
                "title" | "$schema" | "$comment" => match &value.value {
                    Value::String(_) => schema.annotations.push((key.name.clone(), value.to_json())),
                    _ => self.error(value.pos, format!("`{}` must be a string (at `{at}`)", key.name)),
                },
                "deprecated" | "readOnly" | "writeOnly" => match &value.value {
                    Value::Bool(_) => schema.annotations.push((key.name.clone(), value.to_json())),
                    _ => self.error(value.pos, format!("`{}` must be `true` or `false` (at `{at}`)", key.name)),
                },
                "examples" => match &value.value {
                    Value::Seq(_) => schema.annotations.push((key.name.clone(), value.to_json())),
                    _ => self.error(value.pos, format!("`examples` must be a list of values (at `{at}`)")),
                },
                "$ref" => match &value.value {
                    Value::String(r) => match r.strip_prefix("#/$defs/") {
                        Some(name) if !name.contains('/') => {
                            self.refs.push((name.to_string(), value.pos, at.clone()));
                            schema.reference = Some(name.to_string());
                        }
                        _ => self.error(value.pos, format!("`$ref` must point into this schema's `$defs` as `#/$defs/<Name>` (at `{at}`), found `{r}`")),
                    },
                    _ => self.error(value.pos, format!("`$ref` must be a string (at `{at}`)")),
                },
                other => {
                    let hint = did_you_mean(other, SCHEMA_KEYWORDS.iter().copied());
                    self.error(key.pos, format!("unsupported JSON Schema keyword `{other}` at `{at}`{hint}"));
                }
            }
        }
        self.consistency(&schema, node.pos, pointer, entries);
        Some(schema)
    }

    fn types(&mut self, node: &Node, at: &str) -> Vec<JsonType> {
        let one = |s: &mut Self, n: &Node| -> Option<JsonType> {
            match &n.value {
                Value::String(t) => match JsonType::parse(t) {
                    Some(ty) => Some(ty),
                    None => {
                        let hint = did_you_mean(t, JsonType::ALL.iter().map(|t| t.as_str()));
                        s.error(n.pos, format!("unknown type `{t}` (at `{at}`); allowed: string, number, integer, boolean, object, array, null{hint}"));
                        None
                    }
                },
                Value::Null => Some(JsonType::Null),
                _ => {
                    s.error(n.pos, format!("`type` must be a type name or `[T, \"null\"]` (at `{at}`)"));
                    None
                }
            }
        };
        match &node.value {
            Value::Seq(items) => {
                let types: Vec<JsonType> = items.iter().filter_map(|n| one(self, n)).collect();
                let non_null = types.iter().filter(|t| **t != JsonType::Null).count();
                let nulls = types.len() - non_null;
                if types.len() != items.len() {
                    return Vec::new();
                }
                if !(non_null == 1 && nulls == 1) {
                    self.error(node.pos, format!("a list of types must be `[T, \"null\"]` (at `{at}`); use `oneOf` for other unions"));
                    return Vec::new();
                }
                types
            }
            _ => one(self, node).into_iter().collect(),
        }
    }

    fn required(&mut self, node: &Node, at: &str) -> Vec<String> {
        let Value::Seq(items) = &node.value else {
            self.error(node.pos, format!("`required` must be a list of property names (at `{at}`)"));
            return Vec::new();
        };
        let mut names: Vec<String> = Vec::new();
        for item in items {
            match &item.value {
                Value::String(s) if names.contains(s) => self.error(item.pos, format!("`required` lists `{s}` twice (at `{at}`)")),
                Value::String(s) => names.push(s.clone()),
                _ => self.error(item.pos, format!("`required` entries must be property names (at `{at}`)")),
            }
        }
        names
    }

    fn variants(&mut self, node: &Node, at: &str) -> Option<Vec<Schema>> {
        let Value::Seq(items) = &node.value else {
            self.error(node.pos, format!("`oneOf`/`anyOf` must be a non-empty list of schemas (at `{at}`)"));
            return None;
        };
        if items.is_empty() {
            self.error(node.pos, format!("`oneOf`/`anyOf` must be a non-empty list of schemas (at `{at}`)"));
            return None;
        }
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let item_at = format!("{at}/{i}");
            if let Some(s) = self.schema(item, &item_at, false) {
                out.push(s);
            }
        }
        Some(out)
    }

    /// Keyword/type agreement and cross-keyword rules.
    fn consistency(&mut self, schema: &Schema, pos: Pos, pointer: &str, entries: &[(Key, Node)]) {
        let key_pos = |name: &str| entries.iter().find(|(k, _)| k.name == name).map_or(pos, |(k, _)| k.pos);
        for name in &schema.required {
            if !schema.properties.iter().any(|(p, _)| p == name) {
                let hint = did_you_mean(name, schema.properties.iter().map(|(p, _)| p.as_str()));
                self.error(key_pos("required"), format!("`required` names `{name}`, which is not a declared property (at `{pointer}/required`){hint}"));
            }
        }
        if let Some(ty) = schema.single_type() {
            let applies: &[(&str, &[JsonType])] = &[
                ("properties", &[JsonType::Object]),
                ("required", &[JsonType::Object]),
                ("additionalProperties", &[JsonType::Object]),
                ("items", &[JsonType::Array]),
                ("minItems", &[JsonType::Array]),
                ("maxItems", &[JsonType::Array]),
                ("minLength", &[JsonType::String]),
                ("maxLength", &[JsonType::String]),
                ("pattern", &[JsonType::String]),
                ("minimum", &[JsonType::Number, JsonType::Integer]),
                ("maximum", &[JsonType::Number, JsonType::Integer]),
                ("contentEncoding", &[JsonType::String]),
                ("contentMediaType", &[JsonType::String]),
            ];
            for (keyword, types) in applies {
                if entries.iter().any(|(k, _)| k.name == *keyword) && !types.contains(&ty) {
                    let want = types.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(" or ");
                    self.error(
                        key_pos(keyword),
                        format!("`{keyword}` applies to `type: {want}`, but the schema at `{pointer}` has `type: {}`", ty.as_str()),
                    );
                }
            }
        }
        if schema.content_media_type.is_some() && !schema.base64 {
            self.error(
                key_pos("contentMediaType"),
                format!("`contentMediaType` marks binary content, which also needs `contentEncoding: base64` (at `{pointer}`)"),
            );
        }
        if schema.base64 && schema.single_type().is_none() {
            self.error(key_pos("contentEncoding"), format!("binary content (`contentEncoding: base64`) needs `type: string` (at `{pointer}`)"));
        }
        if !schema.types.is_empty() {
            let fits = |v: &Json| schema.types.iter().any(|t| t.accepts(v));
            if let Some(values) = &schema.enum_values {
                for v in values {
                    if !fits(v) {
                        self.error(key_pos("enum"), format!("`enum` value {v} does not match the schema's type (at `{pointer}/enum`)"));
                    }
                }
            }
        }
        // `default` is an annotation: one that does not fit is never applied
        // (`Schema::applied_default`), and only the project's own spec
        // hears of it.
        if let (true, Some(problem)) = (self.owned, schema.default_problem()) {
            self.findings.push(Finding::warning(
                rule::SPEC_INVALID_SCHEMA,
                self.file,
                key_pos("default"),
                format!("{problem} (at `{pointer}/default`), so it is never applied: an omitted value stays absent; remove `default`, or give a value the schema accepts"),
            ));
        }
        let pairs = [
            ("minimum", "maximum", schema.minimum.as_ref().and_then(|n| n.as_f64()), schema.maximum.as_ref().and_then(|n| n.as_f64())),
            ("minLength", "maxLength", schema.min_length.map(|n| n as f64), schema.max_length.map(|n| n as f64)),
            ("minItems", "maxItems", schema.min_items.map(|n| n as f64), schema.max_items.map(|n| n as f64)),
        ];
        for (lo_name, hi_name, lo, hi) in pairs {
            if let (Some(lo), Some(hi)) = (lo, hi) {
                if lo > hi {
                    self.error(key_pos(lo_name), format!("`{lo_name}` ({lo}) is greater than `{hi_name}` ({hi}) at `{pointer}`"));
                }
            }
        }
    }
}

/// `anyOf: [T, {type: null}]` (how schemars, Pydantic and zod write an
/// optional value), read as T's keywords beside the outer ones with `type:
/// [T, "null"]`, when T has one type and shares no keyword with the outer
/// schema; `None` for any other schema. The caller keeps the schema as
/// written for serving.
fn fold_nullable(entries: &[(Key, Node)], pos: Pos) -> Option<Node> {
    let (any_of_key, any_of) = entries.iter().find(|(k, _)| k.name == "anyOf")?;
    let Value::Seq(variants) = &any_of.value else { return None };
    let [a, b] = variants.as_slice() else { return None };
    let is_null = |n: &Node| matches!(&n.value, Value::Map(m) if m.len() == 1 && m[0].0.name == "type" && matches!(&m[0].1.value, Value::String(t) if t == "null"));
    let other = match (is_null(a), is_null(b)) {
        (true, false) => b,
        (false, true) => a,
        _ => return None,
    };
    let Value::Map(inner) = &other.value else { return None };
    let (type_key, ty) = inner.iter().find(|(k, _)| k.name == "type")?;
    if !matches!(&ty.value, Value::String(t) if t != "null") || inner.iter().any(|(k, _)| k.name == "anyOf" || k.name == "oneOf") {
        return None;
    }
    if inner.iter().any(|(k, _)| k.name != "type" && entries.iter().any(|(o, _)| o.name == k.name)) {
        return None;
    }
    let mut folded: Vec<(Key, Node)> = entries.iter().filter(|(k, _)| k.name != any_of_key.name).cloned().collect();
    for (k, v) in inner {
        if k.name == "type" {
            let null = Node { value: Value::String("null".into()), pos: any_of.pos };
            folded.push((type_key.clone(), Node { value: Value::Seq(vec![ty.clone(), null]), pos: ty.pos }));
        } else {
            folded.push((k.clone(), v.clone()));
        }
    }
    Some(Node { value: Value::Map(folded), pos })
}

/// `type/subtype` (RFC 6838 names), or the range `type/*`.
fn is_media_type(text: &str) -> bool {
    let name = |s: &str| !s.is_empty() && s.len() <= 127 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
    match text.split_once('/') {
        Some((ty, sub)) => name(ty) && (sub == "*" || name(sub)),
        None => false,
    }
}

/// `$defs` names become Rust and TypeScript type names.
fn is_type_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && name.len() <= 64
}
