//! `<catalog>/capabilities.json`: the machine-readable catalog a host serves
//! as its capabilities resource.

use serde_json::{Value, json};

use crate::model::{Category, SpecSet};
use crate::render::{MARKER, Targets, contract_fingerprint, input_schema_json, marker_line};

/// MCP tool annotations derived from the category, always explicit.
pub fn annotations(category: Category) -> Value {
    match category {
        Category::Read => json!({"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false}),
        Category::Write => json!({"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}),
        Category::Execute => json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false}),
        Category::External => json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true}),
    }
}

pub fn capabilities(set: &SpecSet, targets: &Targets) -> String {
    let modules: Vec<Value> = set
        .modules
        .iter()
        .map(|module| {
            let caps: Vec<Value> = module
                .capabilities
                .iter()
                .map(|cap| {
                    json!({
                        "name": cap.name,
                        "module": module.name,
                        "category": cap.category.as_str(),
                        "description": cap.summary(),
                        "input_schema": input_schema_json(cap),
                        "output_schema": cap.output.as_ref().map(|s| s.to_json()),
                        "deferred": cap.deferred,
                        "deprecated": cap.deprecated,
                        "fingerprint": contract_fingerprint(module, cap),
                        "annotations": annotations(cap.category),
                    })
                })
                .collect();
            json!({
                "name": module.name,
                "description": module.description,
                "import": targets.import_path(&module.name),
                "capabilities": caps,
            })
        })
        .collect();
    let body = serde_json::to_string_pretty(&json!({ "modules": modules })).expect("catalog serializes");
    // JSON has no comments: the marker is the first member, on the first line.
    let marker = serde_json::to_string(&marker_line(&targets.specs)).expect("string serializes");
    debug_assert!(marker.contains(MARKER));
    let rest = body.strip_prefix('{').expect("an object");
    format!("{{\"@generated\": {marker},{rest}\n")
}
