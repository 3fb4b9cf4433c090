use capspec::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "write", description = "  ")]
struct TagNote {
    title: String,
}

fn main() {}
