use capspec::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "Notes", category = "write", description = "Tag a note.")]
struct TagNote {
    title: String,
}

fn main() {}
