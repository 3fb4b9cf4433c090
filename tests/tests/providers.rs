//! Provider projections (`[generate] providers`): `sync` writes
//! `<catalog>/tools.{openai,anthropic,gemini}.json`, `check` compares them
//! like every other artifact, and each file keeps its provider's documented
//! rules — checked here rule by rule on the repo's reference specs.

use capspec_testkit::{TempDir, copy_dir, repo_root};
use serde_json::Value;

/// The repo's reference specs in a temp project with every provider on.
fn project(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    copy_dir(&repo_root().join("specs"), &dir.path().join("specs"));
    // `specs/kg.yaml` pins an upstream server: configured, never started here.
    dir.write("capspec.toml", "specs = \"specs\"\n\n[generate]\nproviders = [\"gemini\", \"openai\", \"anthropic\"]\n\n[upstream.kg]\ncommand = [\"node\", \"server.js\"]\n");
    let outcome = capspec_codegen::sync(dir.path()).expect("sync");
    assert!(!outcome.findings.iter().any(|f| f.severity == capspec_codegen::Severity::Error), "{:?}", outcome.findings);
    dir
}

fn tools(dir: &TempDir, provider: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(&dir.read(&format!("catalog/tools.{provider}.json"))).expect("JSON").as_array().expect("an array").clone()
}

/// Every schema node under `schema` (properties, items, branches, defs).
fn nodes(schema: &Value, out: &mut Vec<Value>) {
    out.push(schema.clone());
    let Some(map) = schema.as_object() else { return };
    for key in ["properties", "$defs"] {
        for child in map.get(key).and_then(Value::as_object).into_iter().flat_map(|m| m.values()) {
            nodes(child, out);
        }
    }
    if let Some(items) = map.get("items") {
        nodes(items, out);
    }
    for key in ["anyOf", "oneOf"] {
        for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            nodes(branch, out);
        }
    }
}

fn all_nodes(schema: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    nodes(schema, &mut out);
    out
}

/// The non-deferred wire names of the project's specs, in module then name order.
fn offered(dir: &TempDir) -> Vec<String> {
    let project = capspec_codegen::open(dir.path()).unwrap();
    project.loaded.set.capabilities().filter(|(_, c)| !c.deferred).map(|(_, c)| c.wire_name.clone()).collect()
}

#[test]
fn openai_tools_keep_strict_mode_rules() {
    let dir = project("providers-openai");
    let tools = tools(&dir, "openai");
    assert_eq!(tools.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect::<Vec<_>>(), offered(&dir));
    for tool in &tools {
        assert_eq!(tool["type"], "function");
        assert_eq!(tool["strict"], true);
        let name = tool["name"].as_str().unwrap();
        assert!(name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'), "{name}");
        assert_eq!(tool["parameters"]["type"], "object", "{name}");
        for node in all_nodes(&tool["parameters"]) {
            for refused in ["default", "oneOf", "allOf", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems"] {
                assert!(node.get(refused).is_none(), "{name}: `{refused}` in {node}");
            }
            if let Some(properties) = node.get("properties").and_then(Value::as_object) {
                // Every property required; every object closed.
                let mut keys: Vec<&String> = properties.keys().collect();
                keys.sort();
                let required: Vec<&str> = node["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
                assert_eq!(keys.iter().map(|k| k.as_str()).collect::<Vec<_>>(), required, "{name}");
                assert_eq!(node["additionalProperties"], false, "{name}: {node}");
            }
        }
    }
    // An optional property is nullable, and its default is in the description.
    let list = tools.iter().find(|t| t["name"] == "list_notes").unwrap();
    assert_eq!(list["parameters"]["properties"]["limit"]["type"], serde_json::json!(["integer", "null"]));
    assert!(list["parameters"]["properties"]["limit"]["description"].as_str().unwrap().contains("default: 50"));
}

#[test]
fn gemini_declarations_keep_gemini_rules() {
    let dir = project("providers-gemini");
    let tools = tools(&dir, "gemini");
    assert_eq!(tools.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect::<Vec<_>>(), offered(&dir));
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        assert_eq!(tool.as_object().unwrap().keys().collect::<Vec<_>>(), ["description", "name", "parameters"]);
        for node in all_nodes(&tool["parameters"]) {
            assert!(!node.get("type").is_some_and(Value::is_array), "{name}: a type array in {node}");
            for refused in ["$ref", "$defs", "const", "oneOf", "allOf", "additionalProperties", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems"] {
                assert!(node.get(refused).is_none(), "{name}: `{refused}` in {node}");
            }
            if node.get("anyOf").is_some() {
                let others: Vec<&String> = node.as_object().unwrap().keys().filter(|k| !["anyOf", "description", "title", "nullable"].contains(&k.as_str())).collect();
                assert!(others.is_empty(), "{name}: anyOf does not stand alone: {node}");
            }
            if let Some(values) = node.get("enum").and_then(Value::as_array) {
                assert!(values.iter().all(Value::is_string), "{name}: enums are strings: {node}");
            }
        }
    }
    // A nullable type array became `nullable`.
    let read = tools.iter().find(|t| t["name"] == "read_file").unwrap();
    assert_eq!(read["parameters"]["properties"]["limit"]["type"], "integer");
    assert_eq!(read["parameters"]["properties"]["limit"]["nullable"], true);
}

#[test]
fn anthropic_tools_carry_the_input_schema_unchanged() {
    let dir = project("providers-anthropic");
    let tools = tools(&dir, "anthropic");
    let catalog: Value = serde_json::from_str(&std::fs::read_to_string(repo_root().join("catalog/capabilities.json")).unwrap()).unwrap();
    let entries: Vec<&Value> = catalog["modules"].as_array().unwrap().iter().flat_map(|m| m["capabilities"].as_array().unwrap().iter()).collect();
    assert_eq!(tools.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect::<Vec<_>>(), offered(&dir));
    for tool in &tools {
        assert_eq!(tool.as_object().unwrap().keys().collect::<Vec<_>>(), ["description", "input_schema", "name"]);
        let entry = entries.iter().find(|e| e["wire_name"] == tool["name"]).unwrap();
        assert_eq!(tool["input_schema"], entry["input_schema"]);
        assert_eq!(tool["input_schema"]["type"], "object");
    }
}

#[test]
fn check_compares_the_provider_files_like_every_artifact() {
    let dir = project("providers-drift");
    let clean = capspec_codegen::check(dir.path()).unwrap();
    // (The temp project has no impls: coverage errors aside, it is clean.)
    let errors: Vec<&capspec_codegen::Finding> = clean.findings.iter().filter(|f| f.severity == capspec_codegen::Severity::Error && !f.rule.starts_with("coverage/")).collect();
    assert!(errors.is_empty(), "{errors:?}");
    // Lossy steps are warnings naming provider, capability, pointer and what moved.
    let lossy: Vec<&capspec_codegen::Finding> = clean.findings.iter().filter(|f| f.rule == "provider/lossy").collect();
    assert!(lossy.iter().any(|f| f.message.starts_with("openai: `notes.list_notes` at `/properties/limit`: `default: 50` moved into the description")), "{lossy:?}");
    let path = "catalog/tools.gemini.json";
    let edited = dir.read(path).replacen("\"nullable\": true", "\"nullable\": false", 1);
    dir.write(path, edited);
    let drifted = capspec_codegen::check(dir.path()).unwrap();
    assert!(drifted.findings.iter().any(|f| f.rule == "drift/stale" && f.file == path), "{:?}", drifted.findings);
    std::fs::remove_file(dir.path().join("catalog/tools.openai.json")).unwrap();
    let missing = capspec_codegen::check(dir.path()).unwrap();
    assert!(missing.findings.iter().any(|f| f.rule == "drift/missing" && f.file == "catalog/tools.openai.json"));
}

#[test]
fn a_tool_count_over_openais_limit_is_a_limit_error() {
    let dir = TempDir::new("providers-limit");
    let caps: String = (0..129).map(|i| format!("  - {{ name: cap_{i}, category: read, description: Capability {i}. }}\n")).collect();
    dir.write("specs/many.yaml", format!("module: many\ndescription: Many.\ncapabilities:\n{caps}"));
    dir.write("capspec.toml", "specs = \"specs\"\n\n[generate]\nproviders = [\"openai\", \"anthropic\"]\n");
    let report = capspec_codegen::check(dir.path()).unwrap();
    let limits: Vec<&String> = report.findings.iter().filter(|f| f.rule == "provider/limit").map(|f| &f.message).collect();
    assert_eq!(limits.len(), 1, "only OpenAI documents a tool limit: {limits:?}");
    assert!(limits[0].contains("at most 128 tools") && limits[0].contains("129"), "{}", limits[0]);
}

#[test]
fn an_unknown_provider_is_a_config_error() {
    let dir = TempDir::new("providers-unknown");
    dir.write("specs/m.yaml", "module: m\ndescription: M.\ncapabilities:\n  - { name: a, category: read, description: A. }\n");
    dir.write("capspec.toml", "specs = \"specs\"\n\n[generate]\nproviders = [\"openai\", \"cohere\", \"openai\"]\n");
    let report = capspec_codegen::check(dir.path()).unwrap();
    let messages: Vec<&String> = report.findings.iter().filter(|f| f.rule == "config/invalid-value").map(|f| &f.message).collect();
    assert!(messages.iter().any(|m| m.contains("unknown provider `cohere`")), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("`openai` is listed twice")), "{messages:?}");
}

/// The Python with Google's SDK installed: `tests/py/.venv` (what `.ci/run`
/// makes), when it is there.
fn python_with_google_genai() -> Option<std::path::PathBuf> {
    let python = repo_root().join("tests/py/.venv/bin/python");
    let works = std::process::Command::new(&python).args(["-c", "import google.genai.types"]).output().is_ok_and(|o| o.status.success());
    works.then_some(python)
}

#[test]
fn googles_sdk_accepts_every_gemini_declaration() {
    let Some(python) = python_with_google_genai() else {
        capspec_testkit::skip(
            Some("CAPSPEC_REQUIRE_PYTHON_TOOLS"),
            "google-genai is not installed (python3 -m venv tests/py/.venv && tests/py/.venv/bin/pip install -r tests/py/requirements.txt); skipping the Gemini SDK check",
        );
        return;
    };
    let dir = project("providers-google-genai");
    let out = std::process::Command::new(python)
        .arg(repo_root().join("tests/py/validate_gemini.py"))
        .arg(dir.path().join("catalog/tools.gemini.json"))
        .output()
        .expect("python runs");
    let text = capspec_testkit::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&format!("{} declarations valid", offered(&dir).len())), "{text}");
}
