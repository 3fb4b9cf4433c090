//! Binary content (DESIGN §2, §10): a string schema with
//! `contentEncoding: base64` (and usually `contentMediaType`) carries bytes.
//!
//! - In Rust the value is a [`Base64`]: bytes that serialize as base64 text,
//!   so `Args`/`Output` round-trip through JSON as the schema says.
//! - Through `invoke`, receipts and validation it stays base64 text.
//! - To guests and provider tool loops it is [presented](present) as
//!   `{mimeType, data}`; over MCP it becomes an image, audio or embedded
//!   resource block ([`parts`]).
//!
//! A media type range (`image/*`) is made concrete by [`sniff`]ing the bytes.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

/// Bytes that are base64 text in JSON (`{"type": "string",
/// "contentEncoding": "base64"}`): the binding of a binary-content schema.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Base64(pub Vec<u8>);

impl Base64 {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The bytes as base64 text (standard alphabet, padded).
    pub fn encode(&self) -> String {
        encode(&self.0)
    }
}

impl From<Vec<u8>> for Base64 {
    fn from(bytes: Vec<u8>) -> Base64 {
        Base64(bytes)
    }
}

/// Only the length: bytes are not text and may be large.
impl fmt::Debug for Base64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Base64({} bytes)", self.0.len())
    }
}

impl serde::Serialize for Base64 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.encode())
    }
}

impl<'de> serde::Deserialize<'de> for Base64 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Base64, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        decode(&text).map(Base64).ok_or_else(|| serde::de::Error::custom("expected base64 text (standard alphabet, padded)"))
    }
}

impl schemars::JsonSchema for Base64 {
    fn schema_name() -> Cow<'static, str> {
        "Base64".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "contentEncoding": "base64" })
    }
}

/// Base64 text of `bytes` (standard alphabet, padded).
pub fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// The bytes of base64 text (standard alphabet, padded); `None` when it is
/// not that.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).ok()
}

/// Content blocks a capability returned beside its value — an upstream
/// server's image, audio or resource blocks (DESIGN §12) — for a host that
/// passes them on: the MCP server puts one in each capability call's run
/// (where its mount has an upstream server) and appends what it collected
/// to the tool result. Where a run has none,
/// such blocks are left out (the value carries the text).
#[derive(Debug, Default)]
pub struct Blocks(std::sync::Mutex<Vec<Value>>);

impl Blocks {
    /// Collect one MCP content block (as its JSON).
    pub fn push(&self, block: Value) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(block);
    }

    /// Every block collected so far, in order; empties the collection.
    pub fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The image type the bytes begin with: PNG, JPEG, GIF or WebP — read from
/// the bytes, never from a file name.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// One binary value found in an output: its concrete media type and its
/// base64 text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// `image/png`, `audio/wav`, … (`application/octet-stream` when the
    /// schema names none and the bytes say nothing).
    pub mime_type: String,
    /// The base64 text, as the output carries it.
    pub data: String,
}

/// Whether an output schema (JSON text, as in [`Spec::output_schema`](crate::Spec))
/// declares binary content anywhere. A cheap test, for the per-call paths.
pub fn declares(schema: Option<&str>) -> bool {
    schema.is_some_and(|s| s.contains("\"contentEncoding\""))
}

/// A spec's output schema, parsed, when it marks binary content (the
/// registry keeps it, so presenting costs nothing for other capabilities).
pub(crate) fn content_schema(spec: &crate::Spec) -> Option<Value> {
    spec.output_schema.filter(|s| declares(Some(s))).and_then(|s| serde_json::from_str(s).ok())
}

/// `value` as guests and provider tool loops see it: every binary value the
/// output schema marks becomes `{mimeType, data}`.
pub fn present(schema: &Value, value: Value) -> Value {
    walk(schema, schema, value, &mut |part| {
        let mut map = Map::new();
        map.insert("mimeType".into(), Value::String(part.mime_type));
        map.insert("data".into(), Value::String(part.data));
        Value::Object(map)
    })
}

/// The binary values of `value` in the order of its keys and items, and `value` with each
/// replaced by `{mimeType}` (what is left to say as text).
pub fn parts(schema: &Value, value: Value) -> (Vec<Part>, Value) {
    let mut found = Vec::new();
    let rest = walk(schema, schema, value, &mut |part| {
        let mut map = Map::new();
        map.insert("mimeType".into(), Value::String(part.mime_type.clone()));
        found.push(part);
        Value::Object(map)
    });
    (found, rest)
}

/// Rebuild `value`, replacing each binary value its schema marks with
/// `replace(part)`. Follows properties, `additionalProperties`, `items` and
/// local `$ref`s; a value that is not base64 text is left as it is.
fn walk(root: &Value, schema: &Value, value: Value, replace: &mut dyn FnMut(Part) -> Value) -> Value {
    let schema = match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => root.get("$defs").and_then(|d| d.get(name)).unwrap_or(schema),
        None => schema,
    };
    match value {
        Value::String(text) if schema.get("contentEncoding").and_then(Value::as_str) == Some("base64") => {
            let declared = schema.get("contentMediaType").and_then(Value::as_str);
            match media_type(declared, &text) {
                Some(mime_type) => replace(Part { mime_type, data: text }),
                None => Value::String(text),
            }
        }
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|s| s.is_object());
            Value::Object(
                crate::json::sorted_owned(map)
                    .map(|(key, v)| {
                        let sub = properties.and_then(|p| p.get(&key)).or(extra);
                        let v = match sub {
                            Some(sub) => walk(root, sub, v, replace),
                            None => v,
                        };
                        (key, v)
                    })
                    .collect(),
            )
        }
        Value::Array(items) => match schema.get("items") {
            Some(sub) => Value::Array(items.into_iter().map(|v| walk(root, sub, v, replace)).collect()),
            None => Value::Array(items),
        },
        other => other,
    }
}

/// The concrete media type of a binary value: the schema's when it names
/// one, else what the bytes are (for a range such as `image/*`, only a type
/// within it). `None` when the text is not base64.
fn media_type(declared: Option<&str>, text: &str) -> Option<String> {
    if let Some(concrete) = declared.filter(|d| !d.contains('*')) {
        return Some(concrete.to_string());
    }
    let bytes = decode(text)?;
    let range = declared.and_then(|d| d.strip_suffix("/*")).unwrap_or("");
    match sniff(&bytes) {
        Some(found) if range.is_empty() || found.starts_with(&format!("{range}/")) => Some(found.to_string()),
        _ => Some("application/octet-stream".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn sniffing_reads_the_bytes() {
        assert_eq!(sniff(PNG), Some("image/png"));
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF89a..."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(sniff(b"<svg xmlns="), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn base64_round_trips_through_serde_and_refuses_other_text() {
        let value = Base64(PNG.to_vec());
        let text = serde_json::to_value(&value).unwrap();
        assert_eq!(text, json!("iVBORw0KGgoAAAANSUhEUg=="));
        assert_eq!(serde_json::from_value::<Base64>(text).unwrap(), value);
        assert!(serde_json::from_value::<Base64>(json!("not base64!")).is_err());
        assert_eq!(format!("{value:?}"), "Base64(16 bytes)");
    }

    #[test]
    fn presenting_replaces_marked_values_with_mime_type_and_data() {
        let schema = json!({
            "type": "object",
            "properties": {
                "image": {"type": "string", "contentMediaType": "image/*", "contentEncoding": "base64"},
                "clip": {"$ref": "#/$defs/Clip"},
                "name": {"type": "string"}
            },
            "$defs": {"Clip": {"type": "string", "contentMediaType": "audio/wav", "contentEncoding": "base64"}}
        });
        let png = encode(PNG);
        let value = json!({"image": png, "clip": "UklGRg==", "name": "a.png"});
        assert_eq!(
            present(&schema, value.clone()),
            json!({"image": {"mimeType": "image/png", "data": png}, "clip": {"mimeType": "audio/wav", "data": "UklGRg=="}, "name": "a.png"})
        );
        let (found, rest) = parts(&schema, value);
        assert_eq!(found.iter().map(|p| p.mime_type.as_str()).collect::<Vec<_>>(), ["audio/wav", "image/png"], "`clip` before `image`");
        assert_eq!(rest, json!({"image": {"mimeType": "image/png"}, "clip": {"mimeType": "audio/wav"}, "name": "a.png"}));
    }

    #[test]
    fn a_range_the_bytes_do_not_fit_is_octet_stream() {
        let schema = json!({"type": "string", "contentMediaType": "audio/*", "contentEncoding": "base64"});
        assert_eq!(present(&schema, json!(encode(PNG)))["mimeType"], "application/octet-stream");
        assert!(declares(Some(&schema.to_string())));
        assert!(!declares(Some(r#"{"type":"string"}"#)));
    }
}
