//! The one schema walker: what a schema denotes, decided in one order that
//! every renderer shares — `$ref`, `const`, `enum`, `oneOf`/`anyOf`, then
//! the (single non-null) type. The catalog, TypeScript and Rust renderers
//! each match on [`Shape`] and only spell the result.

use serde_json::Value as Json;

use crate::model::{JsonType, Schema};

/// What a schema denotes, before any target's notation.
pub enum Shape<'s> {
    /// `$ref`: a `$defs` entry by name.
    Ref(&'s str),
    /// `const`: exactly this value.
    Const(&'s Json),
    /// `enum`: one of these values.
    Enum(&'s [Json]),
    /// `oneOf`/`anyOf`: one of these schemas.
    Union(&'s [Schema]),
    /// `type: string` with `contentEncoding: base64`: bytes, with the
    /// `contentMediaType` when there is one.
    Bytes(Option<&'s str>),
    /// `type: string`.
    String,
    /// `type: integer`.
    Integer,
    /// `type: number`.
    Number,
    /// `type: boolean`.
    Boolean,
    /// `type: null`.
    Null,
    /// `type: array`, with its `items`.
    Array(Option<&'s Schema>),
    /// `type: object`, or an untyped schema with properties.
    Object,
    /// Anything (`{}`).
    Any,
}

impl<'s> Shape<'s> {
    /// The shape of `schema`.
    pub fn of(schema: &'s Schema) -> Shape<'s> {
        if let Some(r) = &schema.reference {
            return Shape::Ref(r);
        }
        if let Some(c) = &schema.const_value {
            return Shape::Const(c);
        }
        if let Some(values) = &schema.enum_values {
            return Shape::Enum(values);
        }
        if let Some(variants) = schema.one_of.as_ref().or(schema.any_of.as_ref()) {
            return Shape::Union(variants);
        }
        match schema.single_type() {
            Some(JsonType::String) if schema.base64 => Shape::Bytes(schema.content_media_type.as_deref()),
            Some(JsonType::String) => Shape::String,
            Some(JsonType::Integer) => Shape::Integer,
            Some(JsonType::Number) => Shape::Number,
            Some(JsonType::Boolean) => Shape::Boolean,
            Some(JsonType::Null) => Shape::Null,
            Some(JsonType::Array) => Shape::Array(schema.items.as_deref()),
            Some(JsonType::Object) => Shape::Object,
            None if schema.types == [JsonType::Null] => Shape::Null,
            None if !schema.properties.is_empty() => Shape::Object,
            None => Shape::Any,
        }
    }
}
