//! Provider tool loops (DESIGN §11): for a mounted session, each provider's
//! tools array, its tool call parsed into [`Mounted::invoke`] (the
//! projection reversed first, so an impl sees the same arguments whichever
//! provider made the call), and its tool-result message. The schema
//! transforms are `capspec-dialects`', the ones the generator writes
//! `tools.<provider>.json` with.
//!
//! ```
//! # let registry = capspec::Registry::new(&[]).unwrap();
//! # let session = registry.mount_all();
//! # let run = capspec::Run::new(capspec::Gate::headless(capspec::Mode::Default, "docs"));
//! let tools = capspec::provider::openai::tools(&session); // send with the request
//! let item = serde_json::json!({"type": "function_call", "call_id": "c1", "name": "tool_search", "arguments": "{\"query\": \"files\"}"});
//! let output = capspec::testing::block_on(capspec::provider::openai::call(&session, &run, &item));
//! assert_eq!(output["type"], "function_call_output");
//! assert_eq!(output["call_id"], "c1");
//! # let _ = tools;
//! ```

use capspec_dialects::Provider;
use serde_json::{Value, json};

use crate::error::{CallError, ErrorCode};
use crate::registry::Mounted;
use crate::run::Run;

/// The tools array for `mounted`: its [tool surface](Mounted::tool_surface)
/// under wire names. A capability the provider cannot take is left out
/// (`check` reports it).
fn tools(provider: Provider, mounted: &Mounted) -> Vec<Value> {
    mounted
        .tool_surface()
        .into_iter()
        .filter_map(|spec| {
            let schema: Value = serde_json::from_str(spec.input_schema).ok()?;
            capspec_dialects::project(provider, spec.wire_name, spec.description, &schema).ok().map(|p| p.tool)
        })
        .collect()
}

/// Decode a provider's arguments for `name`, then invoke.
async fn invoke(provider: Provider, mounted: &Mounted, run: &Run, name: &str, args: Value) -> Result<Value, CallError> {
    let args = match mounted.lookup(name).and_then(|spec| serde_json::from_str::<Value>(spec.input_schema).ok()) {
        Some(schema) => capspec_dialects::decode(provider, &schema, args),
        // Unknown names are refused by `invoke`, naming what is mounted.
        None => args,
    };
    mounted.invoke_presented(run, name, args, None).await
}

/// A call's outcome as the JSON a model reads: `{"result": …}` (binary
/// content as `{mimeType, data}`) or
/// `{"error", "message", "capability"}`.
fn reply(outcome: &Result<Value, CallError>) -> Value {
    match outcome {
        Ok(result) => json!({ "result": result }),
        Err(error) => serde_json::to_value(error).expect("errors serialize"),
    }
}

fn malformed(name: &str, message: String) -> Result<Value, CallError> {
    Err(CallError::new(ErrorCode::InvalidArguments, message, name))
}

/// OpenAI's Responses API: function tools in strict mode.
pub mod openai {
    use super::*;

    /// `[{"type": "function", "name", "description", "parameters", "strict": true}, …]`.
    pub fn tools(mounted: &Mounted) -> Vec<Value> {
        super::tools(Provider::OpenAi, mounted)
    }

    /// Run a `function_call` output item (`{"type": "function_call",
    /// "call_id", "name", "arguments": "<JSON text>"}`) and return its
    /// `function_call_output` item. `null` for an optional property becomes
    /// absent before validation, so the spec's default applies.
    pub async fn call(mounted: &Mounted, run: &Run, item: &Value) -> Value {
        let name = item["name"].as_str().unwrap_or_default();
        let outcome = match item["arguments"].as_str().map(serde_json::from_str::<Value>) {
            Some(Ok(args)) => invoke(Provider::OpenAi, mounted, run, name, args).await,
            Some(Err(e)) => malformed(name, format!("`{name}`: the call's `arguments` is not JSON: {e}")),
            None => malformed(name, format!("`{name}`: a function_call carries its arguments as a JSON string in `arguments`")),
        };
        json!({ "type": "function_call_output", "call_id": item["call_id"], "output": reply(&outcome).to_string() })
    }
}

/// Anthropic's Messages API: `tool_use` blocks in, `tool_result` blocks out.
pub mod anthropic {
    use super::*;

    /// `[{"name", "description", "input_schema"}, …]`.
    pub fn tools(mounted: &Mounted) -> Vec<Value> {
        super::tools(Provider::Anthropic, mounted)
    }

    /// Run a `tool_use` content block (`{"type": "tool_use", "id", "name",
    /// "input"}`) and return its `tool_result` block (`is_error` when the
    /// call was refused or failed).
    pub async fn call(mounted: &Mounted, run: &Run, block: &Value) -> Value {
        let name = block["name"].as_str().unwrap_or_default();
        let outcome = invoke(Provider::Anthropic, mounted, run, name, block["input"].clone()).await;
        json!({ "type": "tool_result", "tool_use_id": block["id"], "content": reply(&outcome).to_string(), "is_error": outcome.is_err() })
    }
}

/// Gemini's function calling: `functionCall` parts in, `functionResponse`
/// parts out.
pub mod gemini {
    use super::*;

    /// `[{"name", "description", "parameters"}, …]`: the `functionDeclarations`
    /// of one tool.
    pub fn tools(mounted: &Mounted) -> Vec<Value> {
        super::tools(Provider::Gemini, mounted)
    }

    /// Run a `functionCall` part (`{"functionCall": {"id"?, "name", "args"}}`,
    /// or the bare `functionCall` object) and return its `functionResponse`
    /// part, whose `response` is `{"result": …}` or the refusal.
    pub async fn call(mounted: &Mounted, run: &Run, part: &Value) -> Value {
        let call = part.get("functionCall").unwrap_or(part);
        let name = call["name"].as_str().unwrap_or_default();
        let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
        let outcome = invoke(Provider::Gemini, mounted, run, name, args).await;
        let mut response = json!({ "name": name, "response": reply(&outcome) });
        if let Some(id) = call.get("id") {
            response["id"] = id.clone();
        }
        json!({ "functionResponse": response })
    }
}
