//! The notes host's impls.

use capspec::{CapError, CapResult, Run, capability};

use crate::Notes;
use crate::generated::notes;

fn store(run: &Run) -> CapResult<&Notes> {
    run.get::<Notes>().ok_or_else(|| CapError::new("the host attached no notes store"))
}

#[capability(notes::create_note)]
async fn create_note(run: &Run, args: notes::create_note::Args) -> CapResult<notes::create_note::Output> {
    let mut titles = store(run)?.titles.lock().unwrap();
    titles.push((args.title, args.body));
    Ok(notes::create_note::Output { id: titles.len() as i64 })
}

#[capability(notes::read_note)]
async fn read_note(run: &Run, args: notes::read_note::Args) -> CapResult<String> {
    let titles = store(run)?.titles.lock().unwrap();
    titles.iter().find(|(t, _)| *t == args.title).map(|(_, b)| b.clone()).ok_or_else(|| CapError::new(format!("no note `{}`", args.title)))
}

#[capability(notes::list_notes)]
async fn list_notes(run: &Run, args: notes::list_notes::Args) -> CapResult<notes::list_notes::Output> {
    let titles = store(run)?.titles.lock().unwrap();
    let limit = args.limit.max(0) as usize;
    Ok(notes::list_notes::Output { notes: titles.iter().rev().take(limit).map(|(t, _)| t.clone()).collect() })
}
