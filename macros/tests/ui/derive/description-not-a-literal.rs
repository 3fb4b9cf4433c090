use capspec::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

const DESCRIPTION: &str = "Tag a note.";

// One error, at the value: a description that is not a literal is not also "missing".
#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "write", description = DESCRIPTION)]
struct TagNote {
    title: String,
}

fn main() {}
