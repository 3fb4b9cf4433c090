//! The keys of the spec format: what a module, a capability and a schema
//! may hold. The editor schema is tied to these lists by a test.

/// Keys of a spec file's top level.
pub(crate) const MODULE_KEYS: &[&str] = &["module", "description", "capabilities", "upstream"];
/// Keys of one capability entry.
pub(crate) const CAPABILITY_KEYS: &[&str] = &[
    "name",
    "category",
    "description",
    "input",
    "output",
    "user_message",
    "deferred",
    "aliases",
    "deprecated",
    "title",
    "hints",
    "direct",
    "tool",
    "pin",
    "feature",
];
/// The supported JSON Schema keywords (the README lists the subset).
pub(crate) const SCHEMA_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "description",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "oneOf",
    "anyOf",
    "$defs",
    "$ref",
    "contentMediaType",
    "contentEncoding",
    // Annotations (DESIGN §2, "Schemas as declared"): kept and served as
    // written, nothing checked against them.
    "title",
    "$schema",
    "$comment",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];
