use capspec::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "write", description = "Tag a note.", title = "", hints(idempotnt = true, open_world = "yes"))]
struct TagNote {
    title: String,
}

fn main() {}
