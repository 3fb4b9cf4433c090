//! `<catalog>/capabilities.json`: the machine-readable catalog a host serves
//! as its capabilities resource.

use serde::Serialize;
use serde_json::Value;

use crate::model::{Annotations, META_CATEGORY, SpecSet};
use super::artifact::{MARKER, Targets, contract_fingerprint, input_schema_json, marker_line};

/// MCP tool annotations: all four hints, always explicit (DESIGN §4).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct McpAnnotations {
    read_only_hint: bool,
    destructive_hint: bool,
    idempotent_hint: bool,
    open_world_hint: bool,
}

impl From<Annotations> for McpAnnotations {
    fn from(a: Annotations) -> McpAnnotations {
        McpAnnotations { read_only_hint: a.read_only, destructive_hint: a.destructive, idempotent_hint: a.idempotent, open_world_hint: a.open_world }
    }
}

#[derive(Serialize)]
struct CapabilityEntry<'a> {
    name: &'a str,
    wire_name: &'a str,
    module: &'a str,
    category: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    deferred: bool,
    deprecated: Option<&'a str>,
    fingerprint: String,
    annotations: McpAnnotations,
    #[serde(rename = "_meta")]
    meta: std::collections::BTreeMap<&'static str, &'static str>,
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
                wire_name: &cap.wire_name,
                module: &module.name,
                category: cap.category.as_str(),
                title: cap.title.as_deref(),
                description: cap.summary(),
                input_schema: input_schema_json(cap),
                output_schema: cap.output.as_ref().map(|s| s.to_json()),
                deferred: cap.deferred,
                deprecated: cap.deprecated.as_deref(),
                fingerprint: contract_fingerprint(module, cap),
                annotations: cap.hints.annotations(cap.category).into(),
                meta: [(META_CATEGORY, cap.category.as_str())].into(),
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
