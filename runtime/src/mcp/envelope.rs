//! What the HTTP admission reads of a POST body before rmcp does: that it
//! is JSON-RPC 2.0 (else a parse error, -32700, or an invalid request,
//! -32600), and, behind OAuth, each message's method and tool name (the
//! step-up of DESIGN §13 needs them). Read in one pass that borrows from the body and
//! skips everything else unbuilt: rmcp parses the message again, so this
//! pass is a cost every call pays twice. A body this pass cannot read is
//! read again as a whole JSON value, which decides what is wrong with it.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

/// One message: its version and, where the step-up needs them (feature
/// `oauth`), its method and the `name` of its params.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[cfg(feature = "oauth")]
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[cfg(feature = "oauth")]
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

/// One message's version alone: what a server without the step-up (the
/// shared token) needs of it.
#[derive(Deserialize)]
struct Version<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
}

impl<'a> From<Version<'a>> for Envelope<'a> {
    fn from(version: Version<'a>) -> Envelope<'a> {
        Envelope {
            jsonrpc: version.jsonrpc,
            #[cfg(feature = "oauth")]
            method: None,
            #[cfg(feature = "oauth")]
            params: None,
        }
    }
}

#[cfg(feature = "oauth")]
/// A message's params, read only when they are an object (a `tools/call`'s
/// are); any other shape fails this pass, and the whole value decides.
#[derive(Debug, Default)]
struct Params<'a> {
    name: Option<Cow<'a, str>>,
}

#[cfg(feature = "oauth")]
impl<'de: 'a, 'a> Deserialize<'de> for Params<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Params<'a>, D::Error> {
        struct Object<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Object<'a> {
            type Value = Params<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }

            // Borrowed text only: an escaped key or name fails this pass.
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Params<'a>, M::Error> {
                let mut name = None;
                while let Some(key) = map.next_key::<&'de str>()? {
                    if key == "name" {
                        name = map.next_value::<Option<&'de str>>()?;
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(Params { name: name.map(Cow::Borrowed) })
            }
        }
        deserializer.deserialize_map(Object(std::marker::PhantomData))
    }
}

impl Envelope<'_> {
    /// The tool a `tools/call` names.
    #[cfg(feature = "oauth")]
    pub(super) fn tool_called(&self) -> Option<&str> {
        (self.method.as_deref() == Some("tools/call")).then(|| self.params.as_ref()?.name.as_deref()).flatten()
    }

    fn of(value: &Value) -> Envelope<'static> {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(|s| Cow::Owned(s.to_string()));
        Envelope {
            jsonrpc: text(value.get("jsonrpc")),
            #[cfg(feature = "oauth")]
            method: text(value.get("method")),
            #[cfg(feature = "oauth")]
            params: Some(Params { name: text(value.get("params").and_then(|p| p.get("name"))) }),
        }
    }
}

/// A body's messages: one, or a batch.
pub(super) enum Messages<'a> {
    One(Envelope<'a>),
    Batch(Vec<Envelope<'a>>),
}

impl<'a> Messages<'a> {
    pub(super) fn iter(&self) -> std::slice::Iter<'_, Envelope<'a>> {
        match self {
            Messages::One(one) => std::slice::from_ref(one).iter(),
            Messages::Batch(batch) => batch.iter(),
        }
    }
}

/// A POST body as JSON-RPC, or why it is not: a parse error (-32700) or an
/// invalid request (-32600), with a message saying what was wrong. Each
/// message's method and tool name are read only for the `step_up`.
pub(super) fn json_rpc(body: &[u8], step_up: bool) -> Result<Messages<'_>, (i64, String)> {
    let quick = match (body.iter().find(|b| !b.is_ascii_whitespace()), step_up) {
        (Some(b'{'), true) => serde_json::from_slice(body).ok().map(Messages::One),
        (Some(b'['), true) => serde_json::from_slice(body).ok().map(Messages::Batch),
        (Some(b'{'), false) => serde_json::from_slice::<Version>(body).ok().map(|v| Messages::One(v.into())),
        (Some(b'['), false) => serde_json::from_slice::<Vec<Version>>(body).ok().map(|b| Messages::Batch(b.into_iter().map(Envelope::from).collect())),
        _ => None,
    };
    let messages = match quick {
        Some(messages) => messages,
        None => {
            let value: Value = serde_json::from_slice(body).map_err(|e| (-32700, format!("Parse error: the body is not JSON ({e})")))?;
            match &value {
                Value::Object(_) => Messages::One(Envelope::of(&value)),
                Value::Array(batch) => Messages::Batch(batch.iter().map(|m| if m.is_object() { Envelope::of(m) } else { Envelope::default() }).collect()),
                _ => Messages::Batch(Vec::new()),
            }
        }
    };
    let valid = messages.iter().next().is_some() && messages.iter().all(|m| m.jsonrpc.as_deref() == Some("2.0"));
    if valid { Ok(messages) } else { Err((-32600, "Invalid Request: a JSON-RPC 2.0 message is an object with \"jsonrpc\": \"2.0\"".to_string())) }
}

#[cfg(test)]
mod tests {
    use super::json_rpc;

    /// How many messages the body holds, or the JSON-RPC error code: the
    /// same with the step-up's reading and without.
    fn messages(body: &str) -> Result<usize, i64> {
        let counted = |step_up| json_rpc(body.as_bytes(), step_up).map(|m| m.iter().count()).map_err(|e| e.0);
        assert_eq!(counted(true), counted(false), "{body}");
        counted(false)
    }

    #[cfg(feature = "oauth")]
    fn called(body: &str) -> Result<Vec<Option<String>>, i64> {
        json_rpc(body.as_bytes(), true).map(|m| m.iter().map(|e| e.tool_called().map(str::to_string)).collect()).map_err(|e| e.0)
    }

    #[test]
    fn only_json_rpc_messages_pass() {
        let called = messages;
        assert_eq!(called(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Ok(1));
        assert_eq!(called("{ nope"), Err(-32700));
        assert_eq!(called(r#"{"jsonrpc":"2.0"} trailing"#), Err(-32700));
        assert_eq!(called(r#"{"id":1}"#), Err(-32600));
        assert_eq!(called(r#"{"jsonrpc":2,"id":1}"#), Err(-32600));
        assert_eq!(called(r#"{"jsonrpc":"1.0","id":1}"#), Err(-32600));
        assert_eq!(called("[]"), Err(-32600));
        assert_eq!(called("42"), Err(-32600));
        assert_eq!(called(r#"[{"jsonrpc":"2.0","method":"ping"}, 7]"#), Err(-32600));
        // Members the step-up reads, in shapes it cannot: the version decides.
        assert_eq!(called(r#"{"jsonrpc":"2.0","id":1,"method":7,"params":[1]}"#), Ok(1));
        assert_eq!(called(r#"{"jsonrpc":"2\u002e0","id":1,"method":"tools/call","params":{"name":"n\u006fte"}}"#), Ok(1));
        assert_eq!(called(r#" [{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#), Ok(2));
    }

    /// The tool named wherever the message puts it, escaped or not, params
    /// of any shape, duplicate members as a JSON value reads them (the last).
    #[cfg(feature = "oauth")]
    #[test]
    fn the_tool_a_call_names_is_read_in_any_form() {
        let call = |params: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
        assert_eq!(called(&call(r#"{"name":"notes.read","arguments":{"a":[1,{"b":null}]}}"#)), Ok(vec![Some("notes.read".into())]));
        assert_eq!(called(&call(r#"{"arguments":{},"name":"n\u006fte\"s"}"#)), Ok(vec![Some("note\"s".into())]));
        assert_eq!(called(&call(r#"["notes.read"]"#)), Ok(vec![None]));
        assert_eq!(called(&call(r#"{"name":"first","name":"second"}"#)), Ok(vec![Some("second".into())]));
        assert_eq!(called(r#"{"method":"tools/call","jsonrpc":"2.0","params":{"name":7}}"#), Ok(vec![None]));
        let batch = format!(r#"[{},{{"jsonrpc":"2.0","method":"ping"}}]"#, call(r#"{"name":"shell.run"}"#));
        assert_eq!(called(&batch), Ok(vec![Some("shell.run".into()), None]));
    }
}
