use schemars::JsonSchema;
use serde::Deserialize;

// The attribute macro is in scope, but the struct has no derive.
use capspec::capability;

#[derive(Deserialize, JsonSchema)]
#[capability(module = "notes", category = "write", description = "Tag a note.")]
struct TagNote {
    title: String,
}

fn main() {}
