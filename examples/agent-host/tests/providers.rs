//! Provider tool loops over the reference catalog: the round-trip property
//! (for every spec and valid argument value, project → encode as the
//! provider's model would → decode gives back the original, and it is
//! valid) and each adapter end to end (its tools array, a call in its
//! format through the gate into a real impl, its result message).

use agent_host::workspace::Workspace;
use capspec::__internals::Validator;
use capspec::testing::block_on;
use capspec::{Gate, Mode, Run};
use capspec_dialects::{Provider, decode, encode, project};
use capspec_testkit::TempDir;
use serde_json::{Map, Value, json};

/// The node a local `$ref` names.
fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => &root["$defs"][name],
        None => node,
    }
}

/// A value for `node`: its enum's, const's or default's, else one made from
/// its type and bounds. With `full`, objects carry every property.
fn sample(root: &Value, node: &Value, full: bool, depth: usize) -> Value {
    let node = resolve(root, node);
    if let Some(v) = node.get("const") {
        return v.clone();
    }
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        return values.iter().find(|v| !v.is_null()).cloned().unwrap_or(Value::Null);
    }
    if let Some(branches) = node.get("anyOf").or(node.get("oneOf")).and_then(Value::as_array) {
        return sample(root, &branches[0], full, depth + 1);
    }
    let kind = match node.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("null"),
        _ => "string",
    };
    let at_least = |key: &str| node.get(key).and_then(Value::as_u64).unwrap_or(0) as usize;
    match kind {
        "string" => Value::String(match node.get("format").and_then(Value::as_str) {
            Some("uri") => "http://127.0.0.1/x".into(),
            Some("date-time") => "2026-01-01T00:00:00Z".into(),
            _ => "a".repeat(at_least("minLength").max(1)),
        }),
        "integer" => json!(node.get("minimum").and_then(Value::as_i64).unwrap_or(1).max(1)),
        "number" => json!(node.get("minimum").and_then(Value::as_f64).unwrap_or(1.5)),
        "boolean" => json!(true),
        "null" => Value::Null,
        "array" if depth < 4 => Value::Array((0..at_least("minItems").max(1)).map(|_| sample(root, &node["items"], full, depth + 1)).collect()),
        "array" => json!([]),
        _ => {
            let required: Vec<&str> = node.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            let mut map = Map::new();
            for (name, property) in node.get("properties").and_then(Value::as_object).into_iter().flatten() {
                if (full && depth < 4) || required.contains(&name.as_str()) {
                    map.insert(name.clone(), sample(root, property, full, depth + 1));
                }
            }
            Value::Object(map)
        }
    }
}

#[test]
fn every_valid_argument_value_survives_every_provider_round_trip() {
    let registry = agent_host::registry().unwrap();
    let mounted = registry.mount_all();
    let specs: Vec<&capspec::Spec> = mounted.modules().flat_map(|m| m.specs.iter()).chain([&capspec::builtin::TOOL_SEARCH]).collect();
    let mut checked = 0;
    for spec in &specs {
        let schema: Value = serde_json::from_str(spec.input_schema).unwrap();
        let validator = Validator::compile(&schema).unwrap();
        for full in [false, true] {
            let args = sample(&schema, &schema, full, 0);
            if !validator.validate(&args).is_empty() {
                continue;
            }
            for provider in Provider::ALL {
                if project(provider, spec.wire_name, spec.description, &schema).is_err() {
                    continue;
                }
                // The provider's model sends JSON text; decode reverses the projection.
                let sent: Value = serde_json::from_str(&encode(provider, &schema, args.clone()).to_string()).unwrap();
                let back = decode(provider, &schema, sent);
                assert_eq!(back, args, "{} via {}", spec.wire_name, provider.as_str());
                assert!(validator.validate(&back).is_empty(), "{} via {}", spec.wire_name, provider.as_str());
                checked += 1;
            }
        }
    }
    // Both shapes (required only, everything) of nearly every spec were made valid.
    assert!(checked >= specs.len() * 2 * 3 * 9 / 10, "only {checked} round trips for {} specs", specs.len());
}

fn session(dir: &TempDir) -> (capspec::Mounted, Run) {
    let mounted = agent_host::registry().unwrap().mount_all();
    let run = Run::new(Gate::headless(Mode::AcceptEdits, "provider test")).with(Workspace::new(dir.path()).unwrap());
    (mounted, run)
}

#[test]
fn an_openai_call_with_nulls_for_omitted_options_reaches_the_impl_with_defaults() {
    let dir = TempDir::new("provider-openai");
    let (mounted, run) = session(&dir);
    let tools = capspec::provider::openai::tools(&mounted);
    let read = tools.iter().find(|t| t["name"] == "read_file").expect("read_file is offered");
    assert_eq!(read["strict"], true);
    assert!(tools.iter().any(|t| t["name"] == "tool_search"), "a deferred capability is reachable through tool_search");
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    // Strict mode sends every property: `offset` and `limit` as null.
    let item = json!({"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\": \"a.txt\", \"offset\": null, \"limit\": null}"});
    let output = block_on(capspec::provider::openai::call(&mounted, &run, &item));
    assert_eq!(output["type"], "function_call_output");
    assert_eq!(output["call_id"], "call_1");
    let reply: Value = serde_json::from_str(output["output"].as_str().unwrap()).unwrap();
    assert_eq!(reply["result"]["content"], "one\ntwo\nthree\n", "{reply}");
    // Arguments that are not JSON: a refusal, not a crash.
    let bad = json!({"type": "function_call", "call_id": "call_2", "name": "read_file", "arguments": "{path"});
    let reply: Value = serde_json::from_str(block_on(capspec::provider::openai::call(&mounted, &run, &bad))["output"].as_str().unwrap()).unwrap();
    assert_eq!(reply["error"], "invalid_arguments");
}

#[test]
fn an_anthropic_tool_use_goes_through_the_gate() {
    let dir = TempDir::new("provider-anthropic");
    let mounted = agent_host::registry().unwrap().mount_all();
    let run = Run::new(Gate::headless(Mode::Plan, "provider test")).with(Workspace::new(dir.path()).unwrap());
    let block = json!({"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {"path": "a.txt", "content": "x"}});
    let result = block_on(capspec::provider::anthropic::call(&mounted, &run, &block));
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert_eq!(result["is_error"], true);
    let reply: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(reply["error"], "blocked_in_plan_mode");
    assert!(!dir.path().join("a.txt").exists());
}

#[test]
fn a_gemini_function_call_gets_a_function_response() {
    let dir = TempDir::new("provider-gemini");
    let (mounted, run) = session(&dir);
    let declarations = capspec::provider::gemini::tools(&mounted);
    assert!(declarations.iter().all(|d| d.get("parameters").is_some() && d.get("strict").is_none()));
    let part = json!({"functionCall": {"id": "fc_1", "name": "write_file", "args": {"path": "g.txt", "content": "gemini"}}});
    let response = block_on(capspec::provider::gemini::call(&mounted, &run, &part));
    assert_eq!(response["functionResponse"]["name"], "write_file");
    assert_eq!(response["functionResponse"]["id"], "fc_1");
    assert!(response["functionResponse"]["response"].get("result").is_some(), "{response}");
    assert_eq!(std::fs::read_to_string(dir.path().join("g.txt")).unwrap(), "gemini");
}

#[test]
fn a_tool_loop_gets_binary_content_as_mime_type_and_data() {
    let dir = TempDir::new("provider-image");
    let (mounted, run) = session(&dir);
    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
    std::fs::write(dir.path().join("dot.png"), gif).unwrap();
    let block = json!({"type": "tool_use", "id": "toolu_2", "name": "view_image", "input": {"path": "dot.png"}});
    let result = block_on(capspec::provider::anthropic::call(&mounted, &run, &block));
    let reply: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(reply["result"]["image"], json!({"mimeType": "image/gif", "data": capspec::content::encode(gif)}), "typed by its bytes, not its name");
    assert_eq!(reply["result"]["size"], gif.len());
    // One call, one receipt, through the same ladder.
    assert_eq!(run.receipts()[0].status, capspec::Status::Ok);
}
