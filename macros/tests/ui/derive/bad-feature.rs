use capspec::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "search", category = "read", description = "Find by meaning.", feature = "vector search")]
struct ByMeaning {
    text: String,
}

fn main() {}
