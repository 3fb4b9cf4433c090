//! Provider schema dialects: a capability's input schema (capspec's JSON
//! Schema subset) projected into what one model API accepts, and that API's
//! tool-call arguments decoded back.
//!
//! | provider | tool entry | what the projection changes |
//! |---|---|---|
//! | OpenAI (strict function calling) | `{"type": "function", "name", "description", "parameters", "strict": true}` | every property required, an optional one made nullable; `additionalProperties: false` on every object; `default`, length, item-count, property-count and uniqueness bounds move into the description; `oneOf` becomes `anyOf`; an optional free-form map is left out |
//! | Anthropic | `{"name", "description", "input_schema"}` | nothing; composition at the root is refused |
//! | Gemini (function declarations) | `{"name", "description", "parameters"}` | `$ref` inlined (a recursive one is refused); a type array becomes `nullable` or `anyOf`; `const` becomes a one-value `enum`; `additionalProperties`, exclusive bounds, `multipleOf`, `uniqueItems`, non-string enums and formats other than `date-time` move into the description; `oneOf` becomes `anyOf`; `anyOf` stands alone on its node |
//!
//! [`pin`] is the other wire rule the generator and the runtime share: the
//! fingerprint of an MCP tool as a server lists it (DESIGN §12).
//!
//! A constraint that moves into the description is a [`Loss`]: the model
//! reads it, and `invoke` still enforces it. A schema that cannot be
//! projected at all is a [`Problem::Unsupported`]; a name or tool count the
//! provider refuses is a [`Problem::Limit`]. [`decode`] reverses what the
//! projection changed in values (OpenAI's `null` for an omitted optional
//! property becomes absent again), so an impl sees the same arguments
//! whichever provider made the call.
//!
//! # Node by node
//!
//! The transforms, node by node (a constraint that moves into a description is
//! appended to that node's `description` in parentheses and reported as a
//! `Loss` → `provider/lossy`; it stays enforced by `invoke`):
//!
//! | provider | kept | changed | moved into the description | refused (`provider/unsupported`) |
//! |---|---|---|---|---|
//! | OpenAI strict | `type`, `enum`, `const`, `pattern`, `format`, `minimum`/`maximum`, `exclusive*`, `multipleOf`, `items`, `anyOf`, `$ref`/`$defs`, `description` | every object: all properties in `required`, `additionalProperties: false`; an optional property nullable (`type` gains `"null"`, an `enum` gains `null`, a `$ref` becomes `anyOf [ref, null]`); `oneOf` → `anyOf` (a loss); an optional free-form map is left out (a loss); `title`, `examples`, `$comment` dropped | `default`, `minLength`, `maxLength`, `minItems`, `maxItems`, `minProperties`, `maxProperties`, `uniqueItems`, `contentEncoding`, `contentMediaType`; an optional nullable property with a default (strict mode's `null` for "omitted" means the default never applies) | a root that is not `type: object`; a required free-form map; `allOf`, `not`; a bare `true`/`false` schema |
//! | Anthropic | everything | nothing | nothing | `anyOf`/`oneOf`/`allOf` at the root |
//! | Gemini | `type` (one), `format: date-time`, `description`, `title`, `nullable`, string `enum`, `items`, `minItems`/`maxItems`, `properties`, `required`, `minProperties`/`maxProperties`, `minLength`/`maxLength`, `pattern`, `minimum`/`maximum`, `anyOf`, `default` | `$ref` inlined from `$defs`; a type array → `nullable: true` (with `null`) or `anyOf` of single types; a string `const` → `enum: [v]`; `null` in an `enum` → `nullable`; `oneOf` → `anyOf` (a loss); `anyOf` stands alone (other keys move) | `additionalProperties` (other than `false`), `exclusiveMinimum`/`exclusiveMaximum`, `multipleOf`, `uniqueItems`, non-string `enum`, a non-string `const`, formats other than `date-time`, `contentEncoding`/`contentMediaType`, unknown keywords | a recursive `$ref`; a `$ref` to no definition; `allOf`, `not` |
//!
//! Names: OpenAI and Anthropic take `^[a-zA-Z0-9_-]{1,64}$`, Gemini
//! `^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`; OpenAI takes at most 128 tools
//! (`provider/limit`). Decoding: OpenAI's `null` for an optional property
//! becomes absent (then `invoke` applies its default), except where the
//! property admits `null` and has a default; Anthropic and Gemini arguments
//! pass as they are.
//!
//! ```
//! use capspec_dialects::{Provider, project, decode, encode};
//! use serde_json::json;
//! let schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "default": 50}}, "required": ["path"]});
//! let tool = project(Provider::OpenAi, "read", "Read a file.", &schema).unwrap();
//! assert_eq!(tool.tool["parameters"]["required"], json!(["limit", "path"]));
//! assert_eq!(tool.tool["parameters"]["properties"]["limit"]["type"], json!(["integer", "null"]));
//! let sent = encode(Provider::OpenAi, &schema, json!({"path": "a"}));
//! assert_eq!(sent, json!({"path": "a", "limit": null}));
//! assert_eq!(decode(Provider::OpenAi, &schema, sent), json!({"path": "a"}));
//! ```

#![warn(missing_docs)]

use serde_json::{Map, Value, json};

mod gemini;
mod openai;
pub mod pin;

/// A model API whose tool format capspec projects into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provider {
    /// OpenAI's Responses API function tools, in strict mode.
    OpenAi,
    /// Anthropic's Messages API tools.
    Anthropic,
    /// Gemini's function declarations.
    Gemini,
}

impl Provider {
    /// Every provider, in file order.
    pub const ALL: [Provider; 3] = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini];

    /// `openai`, `anthropic` or `gemini`, as `[generate] providers` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
        }
    }

    /// The provider `[generate] providers` names.
    pub fn parse(text: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// The catalog file of this provider's tools: `tools.<provider>.json`.
    pub fn file_name(self) -> String {
        format!("tools.{}.json", self.as_str())
    }

    /// Most tools one request may carry, when the provider documents a limit.
    pub fn max_tools(self) -> Option<usize> {
        match self {
            Provider::OpenAi => Some(128),
            Provider::Anthropic | Provider::Gemini => None,
        }
    }

    /// Why the provider refuses `name` as a tool name, if it does.
    pub fn name_problem(self, name: &str) -> Option<String> {
        let (ok, rule) = match self {
            Provider::OpenAi | Provider::Anthropic => (
                !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "1 to 64 of a-z, A-Z, 0-9, `_` and `-`",
            ),
            Provider::Gemini => (
                name.len() <= 64
                    && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b)),
                "a letter or `_`, then up to 63 of a-z, A-Z, 0-9, `_`, `.`, `:` and `-`",
            ),
        };
        (!ok).then(|| format!("{} tool names are {rule}; `{name}` is not", self.as_str()))
    }
}

/// A constraint the provider cannot express, moved into the description
/// (and still enforced by `invoke`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loss {
    /// JSON pointer into the input schema.
    pub pointer: String,
    /// What moved, in words.
    pub moved: String,
}

/// Why a capability cannot be offered to a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The schema cannot be expressed (e.g. a recursive `$ref` for Gemini).
    Unsupported {
        /// JSON pointer into the input schema.
        pointer: String,
        /// Why, in words.
        why: String,
    },
    /// The provider refuses the name.
    Limit(String),
}

/// One capability as a provider's tool entry, and what it lost.
#[derive(Debug, Clone, PartialEq)]
pub struct Projected {
    /// The tool entry, in the provider's shape.
    pub tool: Value,
    /// Every constraint moved into a description, in schema order.
    pub losses: Vec<Loss>,
}

/// Project one capability (its wire name, description and input schema).
pub fn project(provider: Provider, name: &str, description: &str, schema: &Value) -> Result<Projected, Problem> {
    if let Some(problem) = provider.name_problem(name) {
        return Err(Problem::Limit(problem));
    }
    // Keys sorted in every build (serde_json's `preserve_order` keeps
    // insertion order): what moves into a description, and in what order,
    // must not depend on it.
    let schema = &{
        let mut schema = schema.clone();
        schema.sort_all_objects();
        schema
    };
    let mut losses = Vec::new();
    let mut tool = match provider {
        Provider::OpenAi => {
            let parameters = openai::project(schema, &mut losses)?;
            json!({ "type": "function", "name": name, "description": description, "parameters": parameters, "strict": true })
        }
        Provider::Anthropic => {
            if let Some(key) = ["anyOf", "oneOf", "allOf"].into_iter().find(|k| schema.get(*k).is_some()) {
                return Err(Problem::Unsupported { pointer: format!("/{key}"), why: format!("Anthropic refuses `{key}` at the top level of an input schema") });
            }
            json!({ "name": name, "description": description, "input_schema": schema })
        }
        Provider::Gemini => {
            let parameters = gemini::project(schema, &mut losses)?;
            json!({ "name": name, "description": description, "parameters": parameters })
        }
    };
    tool.sort_all_objects();
    Ok(Projected { tool, losses })
}

/// The arguments a provider's model sends for `args` (valid for `schema`):
/// what a decoder must undo. OpenAI's strict mode sends every property,
/// `null` for one the caller omits; the others send `args` as they are.
pub fn encode(provider: Provider, schema: &Value, args: Value) -> Value {
    match provider {
        Provider::OpenAi => openai::encode(schema, schema, args),
        Provider::Anthropic | Provider::Gemini => args,
    }
}

/// A provider's tool-call arguments, as the spec describes them: OpenAI's
/// `null` for an optional property that does not accept `null` becomes
/// absent (and `invoke` then applies its default).
pub fn decode(provider: Provider, schema: &Value, args: Value) -> Value {
    match provider {
        Provider::OpenAi => openai::decode(schema, schema, args),
        Provider::Anthropic | Provider::Gemini => args,
    }
}

/// `text` with `notes` appended in parentheses.
fn with_notes(text: Option<&str>, notes: &[String]) -> Option<String> {
    if notes.is_empty() {
        return text.map(str::to_string);
    }
    let notes = notes.join("; ");
    Some(match text {
        Some(t) if !t.is_empty() => format!("{t} ({notes})"),
        _ => format!("({notes})"),
    })
}

/// Move `keys` of `node` into its description, recording each as a loss.
fn move_to_description(node: &mut Map<String, Value>, keys: &[&str], pointer: &str, losses: &mut Vec<Loss>) {
    let mut notes = Vec::new();
    for key in keys {
        if let Some(value) = node.remove(*key) {
            let note = describe(key, &value);
            losses.push(Loss { pointer: pointer.to_string(), moved: format!("`{key}: {value}` moved into the description as \"{note}\"") });
            notes.push(note);
        }
    }
    if let Some(text) = with_notes(node.get("description").and_then(Value::as_str), &notes) {
        node.insert("description".into(), Value::String(text));
    }
}

/// A keyword and its value as a note a model reads.
fn describe(key: &str, value: &Value) -> String {
    match key {
        "default" => format!("default: {value}"),
        "minLength" => format!("at least {}", count(value, "character")),
        "maxLength" => format!("at most {}", count(value, "character")),
        "minItems" => format!("at least {}", count(value, "item")),
        "maxItems" => format!("at most {}", count(value, "item")),
        "minProperties" => format!("at least {}", count(value, "key")),
        "maxProperties" => format!("at most {}", count(value, "key")),
        "uniqueItems" => "items are unique".into(),
        "exclusiveMinimum" => format!("greater than {value}"),
        "exclusiveMaximum" => format!("less than {value}"),
        "multipleOf" => format!("a multiple of {value}"),
        "format" => format!("format: {}", value.as_str().unwrap_or_default()),
        "contentEncoding" => format!("{} text", value.as_str().unwrap_or_default()),
        "contentMediaType" => format!("bytes of {}", value.as_str().unwrap_or_default()),
        "enum" => format!("one of {value}"),
        "const" => format!("exactly {value}"),
        "additionalProperties" => match value {
            Value::Object(_) => format!("any other keys, each {}", compact(value)),
            _ => "any other keys".into(),
        },
        _ => format!("{key}: {value}"),
    }
}

/// `1 item`, `20 items`.
fn count(value: &Value, noun: &str) -> String {
    if value.as_u64() == Some(1) { format!("1 {noun}") } else { format!("{value} {noun}s") }
}

/// A short text form of a schema, for descriptions.
fn compact(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(other) => other.to_string(),
        None => "any value".into(),
    }
}

/// `/a/b` + `c` (escaped per RFC 6901).
fn child(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// The property names an object node requires.
fn required(node: &Value) -> Vec<&str> {
    node.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

/// The node a local `$ref` (`#/$defs/<name>`) names in `root`.
fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => root.get("$defs").and_then(|d| d.get(name)).unwrap_or(node),
        None => node,
    }
}

/// Whether `node` admits `null`.
fn admits_null(root: &Value, node: &Value) -> bool {
    let node = resolve(root, node);
    match node.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => {
            node.get("enum").and_then(Value::as_array).is_some_and(|e| e.contains(&Value::Null))
                || ["anyOf", "oneOf"].iter().any(|k| node.get(*k).and_then(Value::as_array).is_some_and(|b| b.iter().any(|s| admits_null(root, s))))
                || node.as_object().is_some_and(|m| !m.contains_key("type") && !m.contains_key("enum") && !m.contains_key("const") && !m.contains_key("anyOf") && !m.contains_key("oneOf") && !m.contains_key("$ref"))
        }
    }
}
