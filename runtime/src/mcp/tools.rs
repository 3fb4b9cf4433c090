//! Specs and call outcomes as MCP values: tools, tool results, and the
//! resources. Every shape is written as the JSON the protocol defines and
//! decoded into rmcp's types once, so what a client sees is readable here.

use rmcp::model::{CallToolResult, ListResourcesResult, MetaObject, ReadResourceResult, Tool};
use serde_json::{Map, Value, json};

use crate::error::CallError;
#[cfg(feature = "quickjs")]
use crate::guest::GuestOutcome;
use crate::registry::Mounted;
use crate::run::Run;
use crate::spec::Spec;
use crate::validate::{Objects, Validator};

/// The name of the code surface's action tool.
pub const EXECUTE_CODE: &str = "execute_code";
/// The capabilities resource (application/json).
pub const CAPABILITIES_URI: &str = "capspec://capabilities";
/// The catalog resource (text/markdown).
pub const CATALOG_URI: &str = "capspec://catalog";

/// The `_meta` key of a capability's category, as in capabilities.json.
const META_CATEGORY: &str = "io.capspec/category";
/// The `_meta` key of a result's receipts.
const META_RECEIPTS: &str = "io.capspec/receipts";
/// The `_meta` key of a refused or failed call's error object.
pub const META_ERROR: &str = "io.capspec/error";

fn decode<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("capspec writes MCP values rmcp reads")
}

/// The code surface's action tool: the contract, then the mounted catalog.
#[cfg(feature = "quickjs")]
pub(super) fn execute_code_tool(catalog: &str) -> Tool {
    decode(json!({
        "name": EXECUTE_CODE,
        "title": "Run a JavaScript action",
        "description": format!("{}\n\n{catalog}", crate::guest::ACTION_CONTRACT),
        "inputSchema": {
            "type": "object",
            "properties": { "code": { "type": "string", "description": "An ES module whose default export is the action." } },
            "required": ["code"],
            "additionalProperties": false,
        },
        "annotations": { "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true },
    }))
}

/// A capability as an MCP tool: named by its wire name, with the spec's full
/// description, every other field as in capabilities.json.
pub(super) fn capability_tool(spec: &Spec) -> Tool {
    let entry = entry(spec);
    let mut tool = json!({
        "name": spec.wire_name,
        "description": spec.description,
        "inputSchema": entry["input_schema"],
        "annotations": entry["annotations"],
        "_meta": entry["_meta"],
    });
    if let Some(title) = spec.title {
        tool["title"] = json!(title);
    }
    if let Some(output) = output_schema(&entry["output_schema"]) {
        tool["outputSchema"] = output;
    }
    let mut tool: Tool = decode(tool);
    // The spec's own text, borrowed: a `tools/list` clones every tool, and
    // a borrowed name and description clone without allocating.
    tool.name = std::borrow::Cow::Borrowed(spec.wire_name);
    tool.description = Some(std::borrow::Cow::Borrowed(spec.description));
    tool
}

/// The spec's output schema as MCP takes it: an object schema with `type`
/// at its root. A root `$ref` to an object definition gains that `type`
/// beside it (the same schema); an output that is not an object has no
/// MCP output schema, and its value is wrapped as `{"result": …}`. An
/// output with binary content has none either: its bytes are content
/// blocks, not structured content.
pub(super) fn output_schema(schema: &Value) -> Option<Value> {
    if schema.is_null() || crate::content::declares(Some(&schema.to_string())) {
        return None;
    }
    let object = json!("object");
    if schema.get("type") == Some(&object) {
        return Some(schema.clone());
    }
    let target = schema.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
    if schema.get("$defs")?.get(target)?.get("type") != Some(&object) {
        return None;
    }
    let mut with_type = schema.clone();
    with_type["type"] = object;
    Some(with_type)
}

/// A capability's entry in capabilities.json (`codegen`'s `render/json.rs`
/// writes the same fields from the spec file; a test keeps them equal).
fn entry(spec: &Spec) -> Value {
    let schema = |text: &str| serde_json::from_str::<Value>(text).expect("generated schemas are JSON");
    let a = spec.annotations;
    let mut entry = json!({
        "name": spec.name,
        "wire_name": spec.wire_name,
        "module": spec.module,
        "category": spec.category.as_str(),
        "description": spec.summary,
        "input_schema": schema(spec.input_schema),
        "output_schema": spec.output_schema.map(schema),
        "deferred": spec.deferred,
        "deprecated": spec.deprecated,
        "fingerprint": spec.fingerprint,
        "annotations": {
            "readOnlyHint": a.read_only,
            "destructiveHint": a.destructive,
            "idempotentHint": a.idempotent,
            "openWorldHint": a.open_world,
        },
        "_meta": { META_CATEGORY: spec.category.as_str() },
    });
    if let Some(title) = spec.title {
        entry["title"] = json!(title);
    }
    entry
}

/// The mount's capabilities.json: the generated file's `modules`, for the
/// mounted modules only.
pub(super) fn capabilities_json(mounted: &Mounted, specifier: &str, hidden: &crate::view::Hidden, unmounted: &[Value]) -> String {
    let modules: Vec<Value> = mounted
        .modules()
        .filter(|m| !m.specs.iter().all(|s| hidden.hides(s)))
        .map(|m| {
            json!({
                "name": m.name,
                "description": m.description,
                "import": format!("{specifier}/{}", m.name),
                "capabilities": m.specs.iter().filter(|s| !hidden.hides(s)).map(entry).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut json = json!({ "modules": modules });
    if !unmounted.is_empty() {
        json["unmounted"] = Value::Array(unmounted.to_vec());
    }
    serde_json::to_string_pretty(&json).expect("JSON serializes")
}

/// Receipts as a result's `_meta`.
fn receipts_meta(run: &Run) -> MetaObject {
    let receipts = run.with_receipts(|r| serde_json::to_value(r)).expect("receipts serialize");
    MetaObject(Map::from_iter([(META_RECEIPTS.to_string(), receipts)]))
}

/// A result whose structured content is `structured`, repeated as text.
/// Built directly, not decoded from JSON: this is every call's path.
fn result(structured: Value, is_error: bool, meta: Option<MetaObject>) -> CallToolResult {
    let result = if is_error { CallToolResult::structured_error(structured) } else { CallToolResult::structured(structured) };
    result.with_meta(meta)
}

/// A refused or failed call: the error object `{"error", "message",
/// "capability"}` as text and in `_meta`, and as structured content only
/// when the tool declares no output schema (clients check structured
/// content against it, on error results too).
fn error_result(error: &CallError, structured: bool, meta: Option<MetaObject>) -> CallToolResult {
    let value = serde_json::to_value(error).expect("errors serialize");
    let mut meta = meta.unwrap_or_default();
    meta.0.insert(META_ERROR.to_string(), value.clone());
    let result = if structured { CallToolResult::structured_error(value) } else { CallToolResult::error(vec![rmcp::model::ContentBlock::text(value.to_string())]) };
    result.with_meta(Some(meta))
}

/// A call refused before anything ran (an unknown tool, `execute_code`
/// without code). Neither has an output schema.
pub(super) fn refused(code: crate::ErrorCode, capability: &str, message: &str) -> CallToolResult {
    let error = CallError::new(code, message, capability);
    error_result(&error, true, None)
}

/// `execute_code`'s result: the run's report; an error when the action
/// threw or hit a limit. Its receipts are in `_meta` too where `receipts`.
#[cfg(feature = "quickjs")]
pub(super) fn action_result(outcome: &GuestOutcome, run: &Run, receipts: bool) -> CallToolResult {
    result(outcome.report(run), outcome.error.is_some(), receipts.then(|| receipts_meta(run)))
}

/// How a capability's value becomes a tool result.
pub(super) struct Output {
    /// The output schema's validator, when the spec has one.
    pub(super) validator: Option<Box<Validator>>,
    /// The tool lists an MCP `outputSchema` (then an error result carries no structured content).
    pub(super) declared: bool,
    /// The output schema, when it marks binary content (§10).
    pub(super) content: Option<Box<Value>>,
    /// The output schema is a plain string (`{type: string}`, no media
    /// type), or the capability is an upstream tool with no output schema
    /// (its server answered in text): a string value is served as one
    /// `text` block, not `{"result": …}`.
    pub(super) text: bool,
}

impl Output {
    /// `forwarded`: the capability is an upstream server's tool (§12).
    pub(super) fn of(spec: &Spec, forwarded: bool) -> Output {
        let schema = spec.output_schema.and_then(|s| serde_json::from_str::<Value>(s).ok());
        let declared = schema.as_ref().and_then(output_schema).is_some();
        let validator = schema.as_ref().and_then(|s| Validator::compile_with(s, Objects::Open).ok()).map(Box::new);
        let content = crate::content::content_schema(spec).map(Box::new);
        let text = content.is_none()
            && match &schema {
                Some(schema) => schema.get("type").and_then(Value::as_str) == Some("string"),
                None => forwarded,
            };
        Output { validator, declared, content, text }
    }
}

/// A value with binary content: each binary value as an `image`, `audio` or
/// embedded `resource` block, after the text of the rest (each binary value
/// there is `{mimeType}`).
fn content_result(schema: &Value, value: Value, capability: &str, meta: Option<MetaObject>) -> CallToolResult {
    let (parts, rest) = crate::content::parts(schema, value);
    let mut blocks = vec![rmcp::model::ContentBlock::text(rest.to_string())];
    for (i, part) in parts.into_iter().enumerate() {
        blocks.push(match part.mime_type.split_once('/').map(|(ty, _)| ty) {
            Some("image") => rmcp::model::ContentBlock::image(part.data, part.mime_type),
            Some("audio") => rmcp::model::ContentBlock::audio(part.data, part.mime_type),
            _ => decode(json!({
                "type": "resource",
                "resource": { "uri": format!("capspec://content/{capability}/{i}"), "mimeType": part.mime_type, "blob": part.data },
            })),
        });
    }
    CallToolResult::success(blocks).with_meta(meta)
}

/// A capability call's result: its value as structured content (checked
/// against the output schema, when there is one) or as content blocks when
/// it holds binary content; or the refusal. Its receipts in `_meta` where
/// `receipts`.
pub(super) fn call_result(outcome: Result<Value, CallError>, output: &Output, capability: &str, run: &Run, receipts: bool) -> CallToolResult {
    let declares_output = output.declared;
    let meta = receipts.then(|| receipts_meta(run));
    let value = match outcome {
        Ok(value) => value,
        Err(error) => return error_result(&error, !declares_output, meta),
    };
    if let Some(validator) = &output.validator {
        let violations = validator.validate(&value);
        if !violations.is_empty() {
            let list = violations.iter().map(|v| format!("{}: {}", v.pointer, v.message)).collect::<Vec<_>>().join("; ");
            let error = CallError::new(crate::ErrorCode::Failed, format!("`{capability}` returned a value its output schema refuses: {list}"), capability);
            return error_result(&error, !declares_output, meta);
        }
    }
    if let Some(schema) = &output.content {
        return content_result(schema, value, capability, meta);
    }
    if let (true, Value::String(text)) = (output.text, &value) {
        return CallToolResult::success(vec![rmcp::model::ContentBlock::text(text.clone())]).with_meta(meta);
    }
    // structuredContent is an object; any other value is wrapped.
    let structured = match value {
        Value::Object(map) => Value::Object(map),
        other => Value::Object(Map::from_iter([("result".to_string(), other)])),
    };
    result(structured, false, meta)
}

/// `result` with `blocks` (MCP content blocks as JSON) after its own.
pub(super) fn with_blocks(mut result: CallToolResult, blocks: Vec<Value>) -> CallToolResult {
    result.content.extend(blocks.into_iter().filter_map(|b| serde_json::from_value::<rmcp::model::ContentBlock>(b).ok()));
    result
}

/// The two resources. `resultType` is what the 2026-07-28 revision
/// requires; rmcp strips it for a peer on an earlier one.
pub(super) fn resource_list() -> ListResourcesResult {
    decode(json!({
        "resultType": "complete",
        "resources": [
            { "uri": CAPABILITIES_URI, "name": "capabilities", "title": "Capabilities (JSON)", "mimeType": "application/json",
              "description": "The mounted capabilities: names, categories, schemas, annotations (capabilities.json)." },
            { "uri": CATALOG_URI, "name": "catalog", "title": "Capability catalog", "mimeType": "text/markdown",
              "description": "The prompt catalog of the mounted modules." },
        ]
    }))
}

/// One resource's text.
pub(super) fn resource_contents(uri: &str, mime: &str, text: &str) -> ReadResourceResult {
    decode(json!({ "resultType": "complete", "contents": [{ "uri": uri, "mimeType": mime, "text": text }] }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(output_schema: Option<&'static str>) -> Spec {
        Spec { output_schema, ..crate::builtin::TOOL_SEARCH }
    }

    fn run() -> Run {
        Run::new(crate::gate::Gate::new(crate::Mode::Auto, std::sync::Arc::new(crate::gate::HeadlessApprover::new("test")), crate::gate::SessionAllow::new()))
    }

    /// A `{type: string}` output (Markdown, say) is one text block, the
    /// string as it is, with no structured content and no `outputSchema`;
    /// a value without such a schema stays `{"result": …}`.
    #[test]
    fn a_string_output_is_a_text_block() {
        let markdown = "# Notes\n\n- \"quoted\"\n";
        let text = Output::of(&spec(Some(r#"{"type":"string"}"#)), false);
        let result = serde_json::to_value(call_result(Ok(json!(markdown)), &text, "notes.render", &run(), true)).unwrap();
        assert_eq!(result["content"], json!([{"type": "text", "text": markdown}]), "{result}");
        assert!(result.get("structuredContent").is_none() && result.get("isError") != Some(&json!(true)), "{result}");
        assert!(output_schema(&json!({"type": "string"})).is_none());
        let untyped = Output::of(&spec(None), false);
        let result = serde_json::to_value(call_result(Ok(json!(markdown)), &untyped, "notes.render", &run(), true)).unwrap();
        assert_eq!(result["structuredContent"], json!({"result": markdown}));
        // An upstream tool without an output schema answered in text: its
        // text is passed on as text, as its server served it.
        let forwarded = Output::of(&spec(None), true);
        let result = serde_json::to_value(call_result(Ok(json!(markdown)), &forwarded, "notes.render", &run(), true)).unwrap();
        assert_eq!(result["content"], json!([{"type": "text", "text": markdown}]), "{result}");
        assert!(result.get("structuredContent").is_none(), "{result}");
        // A string the schema refuses is an error result, as any output.
        let bounded = Output::of(&spec(Some(r#"{"type":"string","maxLength":3}"#)), false);
        let result = serde_json::to_value(call_result(Ok(json!(markdown)), &bounded, "notes.render", &run(), true)).unwrap();
        assert_eq!(result["isError"], true, "{result}");
    }
}
