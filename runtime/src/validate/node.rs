//! What a compiled schema is: nodes of the supported subset, and the
//! choices and errors compiling takes and gives.

use serde_json::Value;

/// A schema the runtime cannot compile (a spec that bypassed `check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Type {
    String,
    Number,
    Integer,
    Boolean,
    Object,
    Array,
    Null,
}

impl Type {
    pub(super) fn parse(s: &str) -> Option<Type> {
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

    pub(super) fn name(self) -> &'static str {
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

    pub(super) fn accepts(self, v: &Value) -> bool {
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

pub(super) fn kind(v: &Value) -> &'static str {
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
pub(super) enum Extra {
    Allowed,
    Denied,
    Schema(Box<Node>),
}

#[derive(Debug, Default)]
pub(super) struct Node {
    pub(super) types: Vec<Type>,
    pub(super) enum_values: Option<Vec<Value>>,
    pub(super) const_value: Option<Value>,
    pub(super) properties: Vec<(String, Node)>,
    pub(super) required: Vec<String>,
    pub(super) extra: Option<Extra>,
    pub(super) items: Option<Box<Node>>,
    pub(super) minimum: Option<f64>,
    pub(super) maximum: Option<f64>,
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) pattern: Option<(String, regex_lite::Regex)>,
    /// `contentEncoding: base64`: text must be base64 (capspec checks what
    /// JSON Schema leaves as an annotation, as the Rust binding decodes it).
    pub(super) base64: bool,
    pub(super) one_of: Vec<Node>,
    pub(super) any_of: Vec<Node>,
    pub(super) reference: Option<Ref>,
    /// `false` as a schema: nothing is valid.
    pub(super) never: bool,
    /// `default`: the value an omitted property takes; once compiled, only
    /// one that applies (`Validator::keep_applicable_defaults`).
    pub(super) default: Option<Value>,
}

/// A local `$ref`: the whole schema (`#`) or one of its `$defs`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ref {
    Root,
    Def(usize),
}

/// Whether objects that declare `properties` but no `additionalProperties`
/// are closed (capspec's rule, matching the generated `Args`) or open (JSON
/// Schema's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objects {
    /// Unknown keys are refused unless the schema allows them.
    Closed,
    /// Unknown keys are allowed unless the schema refuses them.
    Open,
}

