use capspec::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "write", description = "Tag a note.")]
enum TagNote {
    Title(String),
}

fn main() {}
