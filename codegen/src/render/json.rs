//! `<catalog>/capabilities.json`: the machine-readable catalog a host serves
//! as its capabilities resource.

use serde::Serialize;
use serde_json::Value;

use crate::model::{Category, SpecSet};
use super::artifact::{MARKER, Targets, contract_fingerprint, input_schema_json, marker_line};

/// MCP tool annotations derived from the category, always explicit.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    read_only_hint: bool,
    destructive_hint: bool,
    open_world_hint: bool,
}

pub fn annotations(category: Category) -> Annotations {
    let (read_only_hint, destructive_hint, open_world_hint) = match category {
        Category::Read => (true, false, false),
        Category::Write => (false, false, false),
        Category::Execute => (false, true, false),
        Category::External => (false, true, true),
    };
    Annotations { read_only_hint, destructive_hint, open_world_hint }
}

#[derive(Serialize)]
struct CapabilityEntry<'a> {
    name: &'a str,
    module: &'a str,
    category: &'static str,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    deferred: bool,
    deprecated: Option<&'a str>,
    fingerprint: String,
    annotations: Annotations,
}

#[derive(Serialize)]
struct ModuleEntry<'a> {
    name: &'a str,
    description: &'a str,
    import: String,
    capabilities: Vec<CapabilityEntry<'a>>,
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(rename = "@generated")]
    generated: String,
    modules: Vec<ModuleEntry<'a>>,
}

pub fn capabilities(set: &SpecSet, targets: &Targets) -> String {
    let modules = crate::parallel::map(set.modules.iter().collect(), |module| ModuleEntry {
        name: &module.name,
        description: &module.description,
        import: targets.import_path(&module.name),
        capabilities: module
            .capabilities
            .iter()
            .map(|cap| CapabilityEntry {
                name: &cap.name,
                module: &module.name,
                category: cap.category.as_str(),
                description: cap.summary(),
                input_schema: input_schema_json(cap),
                output_schema: cap.output.as_ref().map(|s| s.to_json()),
                deferred: cap.deferred,
                deprecated: cap.deprecated.as_deref(),
                fingerprint: contract_fingerprint(module, cap),
                annotations: annotations(cap.category),
            })
            .collect(),
    });
    // JSON has no comments: the marker is the first member, on the first line.
    let generated = marker_line(&targets.specs);
    debug_assert!(generated.contains(MARKER));
    let body = serde_json::to_string_pretty(&Document { generated, modules }).expect("catalog serializes");
    let rest = body.strip_prefix("{\n  ").expect("an object with members");
    format!("{{{rest}\n")
}
