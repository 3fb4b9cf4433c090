//! `notes`: durable notes stored as JSON files in `<workspace>/.agent/notes/`.

use std::path::PathBuf;

use capspec::{CapError, CapResult, Capability, Run, capability};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::generated::notes as spec;
use crate::workspace::Workspace;

#[derive(Serialize, Deserialize)]
struct Stored {
    id: String,
    title: String,
    body: String,
    tags: Vec<String>,
    updated: String,
}

fn dir(run: &Run) -> CapResult<PathBuf> {
    Workspace::of(run)?.state_dir("notes")
}

fn path_of(run: &Run, id: &str) -> CapResult<PathBuf> {
    // Ids are validated by the spec's pattern for read_note; check here too,
    // since update/delete take any string.
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return Err(CapError::new(format!("no note `{id}`")));
    }
    Ok(dir(run)?.join(format!("{id}.json")))
}

fn load(run: &Run, id: &str) -> CapResult<Stored> {
    let text = std::fs::read_to_string(path_of(run, id)?).map_err(|_| CapError::new(format!("no note `{id}`")))?;
    Ok(serde_json::from_str(&text)?)
}

fn save(run: &Run, note: &Stored) -> CapResult<()> {
    std::fs::write(path_of(run, &note.id)?, serde_json::to_string_pretty(note)?)?;
    Ok(())
}

fn all(run: &Run) -> CapResult<Vec<Stored>> {
    let mut notes = Vec::new();
    for entry in std::fs::read_dir(dir(run)?)? {
        let text = std::fs::read_to_string(entry?.path())?;
        notes.push(serde_json::from_str::<Stored>(&text)?);
    }
    Ok(notes)
}

#[capability(spec::list_notes)]
async fn list_notes(run: &Run, args: spec::list_notes::Args) -> CapResult<spec::list_notes::Output> {
    let mut notes = all(run)?;
    notes.retain(|n| args.tag.as_ref().is_none_or(|t| n.tags.contains(t)));
    notes.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| b.id.cmp(&a.id)));
    notes.truncate(args.limit.max(1) as usize);
    let notes = notes
        .into_iter()
        .map(|n| spec::list_notes::NoteSummary { id: n.id, title: n.title, tags: n.tags, updated: n.updated })
        .collect();
    Ok(spec::list_notes::Output { notes })
}

#[capability(spec::read_note)]
async fn read_note(run: &Run, args: spec::read_note::Args) -> CapResult<spec::read_note::Output> {
    let n = load(run, &args.note_id)?;
    Ok(spec::read_note::Note { id: n.id, title: n.title, body: n.body, tags: n.tags })
}

#[capability(spec::create_note)]
async fn create_note(run: &Run, args: spec::create_note::Args) -> CapResult<spec::create_note::Output> {
    let existing = all(run)?;
    let next = existing.iter().filter_map(|n| n.id.strip_prefix("note-")?.parse::<u64>().ok()).max().unwrap_or(0) + 1;
    let note = Stored { id: format!("note-{next}"), title: args.title, body: args.body, tags: args.tags, updated: super::now() };
    save(run, &note)?;
    Ok(spec::create_note::Output { id: note.id })
}

#[capability(spec::update_note)]
async fn update_note(run: &Run, args: spec::update_note::Args) -> CapResult<()> {
    let mut note = load(run, &args.note_id)?;
    if let Some(title) = args.title {
        note.title = title;
    }
    if let Some(body) = args.body {
        note.body = body;
    }
    if let Some(tags) = args.tags {
        note.tags = tags;
    }
    note.updated = super::now();
    save(run, &note)
}

#[capability(spec::delete_note)]
async fn delete_note(run: &Run, args: spec::delete_note::Args) -> CapResult<()> {
    std::fs::remove_file(path_of(run, &args.note_id)?).map_err(|_| CapError::new(format!("no note `{}`", args.note_id)))?;
    Ok(())
}

/// The arguments of `notes.tag_note`, a capability declared here in Rust
/// rather than in `specs/notes.yaml`: `cargo xtask sync` exports its spec
/// into the generated bindings, facade and catalog beside the YAML ones.
#[derive(Deserialize, JsonSchema, Capability)]
#[capability(
    module = "notes",
    category = "write",
    description = "Add tags to a note; tags it already carries are kept once. Returns the note's tags, sorted.",
    title = "Tag a note",
    hints(destructive = false, idempotent = true)
)]
#[serde(deny_unknown_fields)]
pub struct TagNote {
    /// The note to tag.
    pub note_id: String,
    /// Tags to add.
    #[schemars(length(min = 1, max = 20))]
    pub tags: Vec<String>,
}

/// A tagged note's tags: its output schema, published from this type.
#[derive(Serialize, JsonSchema)]
struct Tagged {
    /// Every tag the note has now.
    tags: Vec<String>,
}

#[capability]
async fn tag_note(run: &Run, args: TagNote) -> CapResult<Tagged> {
    let mut note = load(run, &args.note_id)?;
    note.tags.extend(args.tags);
    note.tags.sort();
    note.tags.dedup();
    note.updated = super::now();
    save(run, &note)?;
    Ok(Tagged { tags: note.tags })
}
