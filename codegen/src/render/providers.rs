//! `<catalog>/tools.<provider>.json`: every non-deferred capability as the
//! provider's tool entry, under its wire name (DESIGN §11). A JSON array
//! cannot carry the marker line; the file is generated all the same.

use capspec_dialects::{Provider, project};

use crate::model::SpecSet;
use super::artifact::input_schema_json;

/// The provider's tools file. A capability that cannot be projected is
/// left out; its `provider/unsupported` or `provider/limit` error blocks
/// `sync` before this file is written.
pub fn tools_file(set: &SpecSet, provider: Provider) -> String {
    let tools: Vec<serde_json::Value> = set
        .capabilities()
        .filter(|(_, c)| !c.deferred)
        .filter_map(|(_, c)| project(provider, &c.wire_name, &c.description, &input_schema_json(c)).ok())
        .map(|p| p.tool)
        .collect();
    let mut text = serde_json::to_string_pretty(&tools).expect("tools serialize");
    text.push('\n');
    text
}
