#[path = "../../../../examples/agent-host/src/generated/mod.rs"]
mod generated;

use capspec::{capability, CapResult, Run};
use generated::workspace;

// Without a path the args type must carry #[derive(Capability)].
#[capability]
async fn read_file(_run: &Run, _args: workspace::read_file::Args) -> CapResult<()> {
    Ok(())
}

fn main() {}
