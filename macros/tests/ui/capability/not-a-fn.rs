#[path = "../../../../examples/agent-host/src/generated/mod.rs"]
mod generated;

use capspec::{capability, CapResult, Run};
use generated::workspace;

#[capability(workspace::read_file)]
struct ReadFile;

fn main() {}
