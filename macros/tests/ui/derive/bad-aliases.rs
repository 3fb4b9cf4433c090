use capspec::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "write", description = "Tag a note.", aliases = ["tag-note", "tag note", 3])]
struct TagNote {
    title: String,
}

#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "read", description = "Read a note.", aliases = "read-note")]
struct ReadNote {
    title: String,
}

fn main() {}
