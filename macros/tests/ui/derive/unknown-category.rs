use capspec::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "wirte", description = "Tag a note.")]
struct TagNote {
    title: String,
}

fn main() {}
