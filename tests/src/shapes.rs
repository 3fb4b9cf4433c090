//! Impls for the `shapes` fixture (`fixtures/import/shapes`): the real
//! schema shapes of `shapes.json` imported as one module, one tool each.
//! Each impl answers with the arguments its generated binding parsed, so a
//! test sees what the impl received, not only that the call was accepted.

use capspec::{CapResult, Run, capability};
use serde_json::{Value, json};

use crate::bindings::shapes::shapes;

/// The shapes' tool names, in the order of `shapes.json`.
pub const TOOLS: [&str; 6] = ["search_nodes", "add_observations", "create_entities", "read_file", "search", "search_notes"];

/// What the impl of `tool` answers for `arguments` the server accepted:
/// the arguments as its binding parsed and serializes them: each property
/// sent with a value, and the declared default where one applies (only
/// `search`'s `mode` has one that fits its schema). A property sent as
/// `null` or omitted is `None`, which the binding leaves out.
pub fn expected(tool: &str, arguments: &Value) -> Value {
    let mut out: serde_json::Map<String, Value> = arguments.as_object().into_iter().flatten().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
    if tool == "search" && !out.contains_key("mode") {
        out.insert("mode".into(), json!("fast"));
    }
    Value::Object(out)
}

/// `value` with every number as a float: a `number` property is an `f64`
/// in its binding, so `10` comes back as `10.0`, the same number.
pub fn numbers_as_floats(value: &Value) -> Value {
    match value {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(items) => Value::Array(items.iter().map(numbers_as_floats).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), numbers_as_floats(v))).collect()),
        other => other.clone(),
    }
}

macro_rules! echo {
    ($($tool:ident),*) => {$(
        #[capability(shapes::$tool)]
        async fn $tool(_run: &Run, args: shapes::$tool::Args) -> CapResult<Value> {
            serde_json::to_value(&args).map_err(|e| capspec::CapError::new(e.to_string()))
        }
    )*};
}

echo!(search_nodes, add_observations, create_entities, read_file, search, search_notes);
