#[path = "../../../../examples/agent-host/src/generated/mod.rs"]
mod generated;

use capspec::{capability, CapResult, Run};
use generated::workspace;

#[capability(workspace::read_fil)]
async fn read_file(_run: &Run, _args: workspace::read_file::Args) -> CapResult<()> {
    Ok(())
}

fn main() {}
