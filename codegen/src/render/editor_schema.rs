//! The spec file format itself as Rust types, so `schemars` can derive the
//! editor schema (`sync` writes it where `[generate] editor_schema` says;
//! this repo: `schema/capspec-spec.schema.json`) from it. The loader's key
//! lists and these types are tied together by a test: they cannot drift.

#![allow(dead_code)] // the types exist for their derived schema only

use schemars::JsonSchema;

/// A capspec module spec: one file per module under the specs directory.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, title = "capspec module spec")]
struct SpecFile {
    /// The module name; must equal the file stem.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,63}$"))]
    module: String,
    /// One line describing the module.
    #[schemars(length(min = 1))]
    description: String,
    /// The module's capabilities: at least one, here or declared in Rust
    /// with `#[derive(Capability)]` in a `[code_first]` package (then `[]`
    /// is allowed).
    capabilities: Vec<Capability>,
    /// An upstream module: its capabilities are the tools of the MCP server
    /// `[upstream.<this>]` in capspec.toml configures (written by `import
    /// mcp --upstream`).
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,63}$"))]
    upstream: Option<String>,
}

/// One capability: a tool a model can call.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct Capability {
    /// Unique within its module, aliases included; the same name in two
    /// modules is legal (identity is `module.name`).
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,63}$"))]
    name: String,
    /// The safety category. Required; there is no default.
    category: Category,
    /// What it does; the first sentence is the catalog one-liner.
    #[schemars(length(min = 1))]
    description: String,
    /// JSON Schema of the argument object (`type: object`).
    input: Option<Schema>,
    /// JSON Schema of the result.
    output: Option<Schema>,
    /// Message shown to a person; `{placeholders}` must be input properties.
    user_message: Option<String>,
    /// `true`: listed by name only in the prompt catalog.
    deferred: Option<bool>,
    /// Hidden compatibility names: resolve at invoke, never shown in catalogs.
    aliases: Option<Vec<Alias>>,
    /// Why it is deprecated and what to use instead; still callable.
    deprecated: Option<String>,
    /// A short human title (the MCP `title`).
    title: Option<String>,
    /// Refines the category's MCP hints, only where the category leaves them
    /// open: read → `open_world: true`; write → `destructive: false`,
    /// `idempotent: true`, `open_world: true`; execute → `idempotent: true`,
    /// `open_world: false`; external → `destructive: false`, `idempotent: true`.
    hints: Option<Hints>,
    /// `true`: also a direct tool on the MCP code surface.
    direct: Option<bool>,
    /// Upstream modules only: the tool's name on the server (default: the
    /// capability name).
    #[schemars(length(min = 1))]
    tool: Option<String>,
    /// Upstream modules only: `sha256:` and the hex SHA-256 of the tool as
    /// the server listed it (RFC 8785 canonical JSON of name, title,
    /// description, inputSchema, outputSchema, annotations).
    #[schemars(regex(pattern = r"^sha256:[0-9a-f]{64}$"))]
    pin: Option<String>,
    /// The cargo feature of the host crate the capability lives behind: its
    /// bindings are compiled, mounted and served only with it on.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_][A-Za-z0-9_+.-]*$"))]
    feature: Option<String>,
}

/// A name a client has called: `listWorkflows`, `File`, `get-annotated-message`.
#[derive(JsonSchema)]
struct Alias(#[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$"))] String);

/// MCP hint refinements.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct Hints {
    /// May destroy or overwrite data (`destructiveHint`).
    destructive: Option<bool>,
    /// Repeating a call with the same arguments has no further effect (`idempotentHint`).
    idempotent: Option<bool>,
    /// Reaches entities outside the host (`openWorldHint`).
    open_world: Option<bool>,
}

/// The safety category of a capability.
#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum Category {
    /// Inspects state, mutates nothing anywhere.
    Read,
    /// Edits persisted state, local or remote.
    Write,
    /// Runs code, ships a deliverable, triggers automation.
    Execute,
    /// Acts through a third party or runs many actions at once.
    External,
}

/// A JSON Schema of the subset capspec supports.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct Schema {
    #[schemars(rename = "type")]
    ty: Option<TypeOrNullable>,
    description: Option<String>,
    default: Option<serde_json::Value>,
    #[schemars(rename = "enum")]
    enum_values: Option<Vec<serde_json::Value>>,
    #[schemars(rename = "const")]
    const_value: Option<serde_json::Value>,
    properties: Option<std::collections::BTreeMap<String, Schema>>,
    required: Option<Vec<String>>,
    #[schemars(rename = "additionalProperties")]
    additional_properties: Option<BoolOrSchema>,
    items: Option<Box<Schema>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    #[schemars(rename = "minLength")]
    min_length: Option<u64>,
    #[schemars(rename = "maxLength")]
    max_length: Option<u64>,
    pattern: Option<String>,
    format: Option<String>,
    /// Binary content's media type (`image/png`, `image/*`); needs `contentEncoding: base64`.
    #[schemars(rename = "contentMediaType")]
    content_media_type: Option<String>,
    /// Binary content: the string is base64.
    #[schemars(rename = "contentEncoding")]
    content_encoding: Option<ContentEncoding>,
    #[schemars(rename = "minItems")]
    min_items: Option<u64>,
    #[schemars(rename = "maxItems")]
    max_items: Option<u64>,
    #[schemars(rename = "oneOf")]
    one_of: Option<Vec<Schema>>,
    #[schemars(rename = "anyOf")]
    any_of: Option<Vec<Schema>>,
    #[schemars(rename = "$defs")]
    defs: Option<std::collections::BTreeMap<String, Schema>>,
    /// `#/$defs/<Name>`
    #[schemars(rename = "$ref")]
    reference: Option<String>,
    /// An annotation: kept and served as written.
    title: Option<String>,
    /// An annotation: the JSON Schema dialect.
    #[schemars(rename = "$schema")]
    dialect: Option<String>,
    /// An annotation: a comment for people.
    #[schemars(rename = "$comment")]
    comment: Option<String>,
    /// An annotation: example values.
    examples: Option<Vec<serde_json::Value>>,
    /// An annotation.
    deprecated: Option<bool>,
    /// An annotation.
    #[schemars(rename = "readOnly")]
    read_only: Option<bool>,
    /// An annotation.
    #[schemars(rename = "writeOnly")]
    write_only: Option<bool>,
}

/// The one encoding of binary content.
#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum ContentEncoding {
    Base64,
}

#[derive(JsonSchema)]
#[schemars(untagged)]
enum TypeOrNullable {
    One(JsonType),
    /// `[T, "null"]`
    Nullable([JsonType; 2]),
}

#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum JsonType {
    String,
    Number,
    Integer,
    Boolean,
    Object,
    Array,
    Null,
}

#[derive(JsonSchema)]
#[schemars(untagged)]
enum BoolOrSchema {
    Bool(bool),
    Schema(Box<Schema>),
}

/// The editor schema of the spec format, as `sync` writes it to
/// `[generate] editor_schema`: JSON whose first line carries the generated
/// marker (as a `$comment`).
pub(super) fn editor_schema() -> String {
    let mut schema = schemars::schema_for!(SpecFile).to_value();
    schema.sort_all_objects();
    let text = serde_json::to_string_pretty(&schema).expect("schema serializes");
    let marker = serde_json::to_string(&super::artifact::marker_line("the spec format of capspec-codegen")).expect("strings serialize");
    let body = text.strip_prefix("{\n").expect("a schema is a JSON object");
    format!("{{\"$comment\": {marker},\n{body}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::keys::{CAPABILITY_KEYS, MODULE_KEYS, SCHEMA_KEYWORDS};

    fn keys(value: &serde_json::Value) -> Vec<String> {
        let mut k: Vec<String> = value["properties"].as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    }

    fn sorted(list: &[&str]) -> Vec<String> {
        let mut k: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        k.sort();
        k
    }

    #[test]
    fn editor_schema_has_exactly_the_loaders_keys() {
        let text = editor_schema();
        assert!(crate::render::is_generated(&text), "{text}");
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(keys(&schema), sorted(MODULE_KEYS));
        assert_eq!(keys(&schema["$defs"]["Capability"]), sorted(CAPABILITY_KEYS));
        assert_eq!(keys(&schema["$defs"]["Schema"]), sorted(SCHEMA_KEYWORDS));
    }
}
