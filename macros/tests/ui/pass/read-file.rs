#[path = "../../../../examples/agent-host/src/generated/mod.rs"]
mod generated;

use capspec::{capability, CapResult, Run};
use generated::workspace;

#[derive(serde::Serialize)]
struct Out {
    content: String,
}

#[capability(workspace::read_file)]
async fn read_file(_run: &Run, args: workspace::read_file::Args) -> CapResult<Out> {
    Ok(Out { content: args.path })
}

#[capspec::capability(generated::workspace::delete_file)]
async fn delete_file(_run: &Run, _args: generated::workspace::delete_file::Args) -> CapResult<()> {
    Ok(())
}

fn main() {}
