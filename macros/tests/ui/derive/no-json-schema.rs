use capspec::Capability;
use serde::Deserialize;

#[derive(Deserialize, Capability)]
#[capability(module = "notes", category = "write", description = "Tag a note.")]
struct TagNote {
    title: String,
}

fn main() {}
