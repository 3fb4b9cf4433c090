#[path = "../../../../examples/agent-host/src/generated/mod.rs"]
mod generated;

use capspec::{capability, CapResult, Run};
use generated::workspace;

#[capability(workspace::read_file)]
async fn read_file(_run: &Run, _args: workspace::read_file::Args) {}

fn main() {}
