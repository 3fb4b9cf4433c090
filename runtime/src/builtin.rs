//! Capabilities every registry has: `capspec.tool_search` (wire name
//! `tool_search`), the search over a session's mounted capabilities —
//! deferred ones included — as a read capability, so guests, tool loops and
//! MCP clients reach it through `invoke` like any other.

use serde_json::{Value, json};

use crate::spec::{Annotations, Category, Spec};

/// The built-in module's name; no host module may take it.
pub const MODULE: &str = "capspec";

/// `capspec.tool_search`: find capabilities by what they do.
pub const TOOL_SEARCH: Spec = Spec {
    module: MODULE,
    name: "tool_search",
    wire_name: "tool_search",
    title: Some("Find a capability"),
    annotations: Annotations { read_only: true, destructive: false, idempotent: true, open_world: false },
    category: Category::Read,
    description: "Find capabilities by what they do. Ranks every capability of the session, including those the catalog lists by name only, by relevance to a natural-language query, and returns each match's wire name, module, category, one-line description, signature and input schema.",
    summary: "Find capabilities by what they do.",
    signature: "tool_search({query: string(len ≥1) /* What the capability should do, in words. */, limit?: int(1..50) = 5}) → {matches: Match[]}",
    input_schema: r#"{"additionalProperties":false,"properties":{"limit":{"default":5,"maximum":50,"minimum":1,"type":"integer"},"query":{"description":"What the capability should do, in words.","minLength":1,"type":"string"}},"required":["query"],"type":"object"}"#,
    output_schema: Some(
        r#"{"properties":{"matches":{"items":{"properties":{"category":{"type":"string"},"description":{"type":"string"},"input_schema":{"type":"object"},"module":{"type":"string"},"name":{"type":"string"},"score":{"type":"number"},"signature":{"type":"string"},"wire_name":{"type":"string"}},"required":["wire_name","module","name","category","description","signature","input_schema","score"],"type":"object"},"type":"array"}},"required":["matches"],"type":"object"}"#,
    ),
    user_message: None,
    deferred: false,
    direct: false,
    aliases: &[],
    deprecated: None,
    fingerprint: "builtin-tool-search-1",
};

/// The result of `tool_search` for `hits`, each resolved to its spec.
pub(crate) fn matches<'a>(hits: impl Iterator<Item = (&'a Spec, f64)>) -> Value {
    let matches: Vec<Value> = hits
        .map(|(spec, score)| {
            json!({
                "wire_name": spec.wire_name,
                "module": spec.module,
                "name": spec.name,
                "category": spec.category.as_str(),
                "description": spec.summary,
                "signature": spec.signature,
                "input_schema": serde_json::from_str::<Value>(spec.input_schema).unwrap_or(Value::Null),
                "score": (score * 1000.0).round() / 1000.0,
            })
        })
        .collect();
    json!({ "matches": matches })
}

/// The built-in `tool_search`'s result: the best matches among `mounted`'s
/// capabilities for the validated arguments' `query`, up to `limit`.
/// What the caller is not shown (`hidden`) is never found.
pub(crate) fn tool_search(mounted: &crate::Mounted, args: &serde_json::Value, hidden: Option<&crate::hidden::Hidden>) -> serde_json::Value {
    let query = args.get("query").and_then(serde_json::Value::as_str).unwrap_or_default();
    let limit = args.get("limit").and_then(serde_json::Value::as_u64).unwrap_or(5) as usize;
    let hits = match hidden {
        Some(hidden) => mounted.search_where(query, limit, |spec| !hidden.hides(spec)),
        None => mounted.search(query, limit),
    };
    matches(hits.iter().filter_map(|h| mounted.lookup(&format!("{}.{}", h.module, h.name)).map(|spec| (spec, h.score))))
}
