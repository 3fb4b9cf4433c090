use capspec::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

// The name defaults to the struct name in snake_case: `await` is reserved.
#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "read", description = "Wait.")]
struct Await {
    seconds: u32,
}

fn main() {}
