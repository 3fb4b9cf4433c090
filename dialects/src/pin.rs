//! The pin of an MCP tool (DESIGN §12): `sha256:` + the hex SHA-256 of the
//! RFC 8785 (JCS) canonical JSON of `{name, title, description,
//! inputSchema, outputSchema, annotations}` as the server listed it,
//! absent members left out. The generator writes it at import and compares
//! it at `check --upstream`; the runtime compares it when it mounts a
//! server — one definition for both.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The members of a listed tool its pin covers.
pub const PINNED_MEMBERS: [&str; 6] = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"];

/// The pin of `tool` (a `tools/list` entry): `sha256:<64 hex>`.
///
/// ```
/// use serde_json::json;
/// let a = json!({"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}, "_meta": {"x": 1}});
/// let b = json!({"inputSchema": {"type": "object"}, "description": "Echo.", "name": "echo"});
/// // Member order and members outside the pin do not matter; any pinned text does.
/// assert_eq!(capspec_dialects::pin::pin(&a), capspec_dialects::pin::pin(&b));
/// assert_ne!(capspec_dialects::pin::pin(&a), capspec_dialects::pin::pin(&json!({"name": "echo", "description": "Echo!"})));
/// assert!(capspec_dialects::pin::pin(&a).starts_with("sha256:"));
/// ```
pub fn pin(tool: &Value) -> String {
    let pinned: Map<String, Value> = PINNED_MEMBERS.iter().filter_map(|k| tool.get(*k).map(|v| (k.to_string(), v.clone()))).collect();
    digest(&Value::Object(pinned))
}

/// `sha256:` + the hex SHA-256 of `value`'s RFC 8785 canonical JSON: equal
/// for equal JSON values, whatever their member order.
pub fn digest(value: &Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    bytes_digest(text.as_bytes())
}

/// `sha256:` + the hex SHA-256 of `bytes`: the digest the coverage record
/// keeps of each project file a test run saw, and `check` compares.
///
/// ```
/// assert_eq!(&capspec_dialects::pin::bytes_digest(b"")[..15], "sha256:e3b0c442");
/// ```
pub fn bytes_digest(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

/// Whether the walk of a project's files that the coverage record keeps
/// (and `check` compares) leaves out the directory `name` at `path`: build
/// output (`target`, or any directory cargo tags with `CACHEDIR.TAG`),
/// hidden directories (version control, tools' state) and installed
/// packages (`node_modules`).
pub fn walk_skips(name: &str, path: &std::path::Path) -> bool {
    name.starts_with('.') || name == "target" || name == "node_modules" || path.join("CACHEDIR.TAG").exists()
}

/// Whether `text` is a well-formed pin: `sha256:` and 64 lower-case hex digits.
pub fn is_pin(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// RFC 8785: members sorted by their UTF-16 code units, no whitespace,
/// strings escaped as ECMAScript's `JSON.stringify` does, numbers in
/// ECMAScript's shortest form.
pub fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(key, out);
                out.push(':');
                canonical(value, out);
            }
            out.push('}');
        }
    }
}

/// `s` as an RFC 8785 JSON string (ECMAScript's `JSON.stringify`): the
/// runs that need no escape copied whole.
pub fn string(s: &str, out: &mut String) {
    out.push('"');
    let mut run = 0;
    for (i, b) in s.bytes().enumerate() {
        let escaped = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0C => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1F => "",
            _ => continue,
        };
        out.push_str(&s[run..i]);
        if escaped.is_empty() {
            out.push_str(&format!("\\u{b:04x}"));
        } else {
            out.push_str(escaped);
        }
        run = i + 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// ECMAScript's `Number.prototype.toString` for a JSON number: integers
/// as integers, others in the shortest round-trip form with JavaScript's
/// exponent rules (`1e+21`, `1e-7`).
pub fn number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` is the shortest round-trip digits: `d.ddde±x`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    let n = exp + 1; // the decimal point's position after the first digit
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        let rest = if k == 1 { String::new() } else { format!(".{}", &digits[1..]) };
        format!("{}{rest}e{sign}{}", &digits[..1], e.abs())
    };
    if negative { format!("-{body}") } else { body }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn canonical(value: serde_json::Value) -> String {
        let mut out = String::new();
        super::canonical(&value, &mut out);
        out
    }

    /// The examples of RFC 8785 §3.2.2 and its number table (Appendix B).
    #[test]
    fn rfc_8785_examples() {
        // The RFC's input text, parsed as any JSON would be.
        let input = r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}"#;
        assert_eq!(
            canonical(serde_json::from_str(input).unwrap()),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
        for (value, text) in [(1e21, "1e+21"), (1e20, "100000000000000000000"), (1e-7, "1e-7"), (0.000001, "0.000001"), (-0.5, "-0.5"), (123.456, "123.456"), (5e-324, "5e-324")] {
            assert_eq!(super::number(&serde_json::Number::from_f64(value).unwrap()), text, "{value}");
        }
    }

    #[test]
    fn members_sort_by_utf16_code_units() {
        // U+1F600 sorts after U+FB33 in UTF-8 but before it in UTF-16 (its surrogates are 0xD83D 0xDE00).
        assert_eq!(canonical(json!({"\u{1F600}": 1, "\u{FB33}": 2, "a": 3})), "{\"a\":3,\"\u{1F600}\":1,\"\u{FB33}\":2}");
    }
}
