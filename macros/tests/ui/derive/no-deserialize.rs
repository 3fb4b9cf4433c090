use capspec::Capability;
use schemars::JsonSchema;

#[derive(JsonSchema, Capability)]
#[capability(module = "notes", category = "write", description = "Tag a note.")]
struct TagNote {
    title: String,
}

fn main() {}
