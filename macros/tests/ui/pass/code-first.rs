use capspec::{capability, CapResult, Capability, Run};
use schemars::JsonSchema;
use serde::Deserialize;

/// The attribute macro `capability` is in scope too: the derive's helper
/// attribute must still resolve.
#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "write", description = "Tag a note. Tags are lowercase.")]
struct TagNoteArgs {
    /// The note's title.
    title: String,
    tag: String,
}

#[derive(Deserialize, JsonSchema, capspec::Capability)]
#[capability(module = "notes", category = "read", description = "Count notes.", name = "count_notes", aliases = ["count-notes", "countNotes"])]
struct Counting {}

/// Pin a note to the top.
///
/// Pinned notes are listed first.
#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "write")]
struct PinNote {
    note_id: String,
}

#[derive(Deserialize, JsonSchema, Capability)]
#[capability(module = "notes", category = "write", description = "Merge metadata into a note.", open)]
struct MergeMeta {
    note_id: String,
}

#[capability]
async fn tag_note(_run: &Run, args: TagNoteArgs) -> CapResult<String> {
    Ok(format!("{}#{}", args.title, args.tag))
}

#[capspec::capability]
async fn count_notes(_run: &Run, _args: Counting) -> CapResult<u32> {
    Ok(0)
}

fn main() {
    let spec = <TagNoteArgs as capspec::Capability>::SPEC;
    assert_eq!((spec.module, spec.name, spec.category), ("notes", "tag_note", capspec::Category::Write));
    assert!(spec.rust_type.ends_with("::TagNoteArgs"), "{}", spec.rust_type);
    let schema = (spec.input_schema)();
    assert_eq!(schema["properties"]["title"]["description"], "The note's title.");
    // Without `description`, the doc comment is the description, as rustdoc reads it.
    let pin = <PinNote as capspec::Capability>::SPEC;
    assert_eq!(pin.description, "Pin a note to the top.\n\nPinned notes are listed first.");
    // Closed unless `open`.
    assert!(!pin.open && <MergeMeta as capspec::Capability>::SPEC.open);
    assert_eq!(<Counting as capspec::Capability>::SPEC.aliases, ["count-notes", "countNotes"]);
    let declared: Vec<&str> = capspec::__internals::code_first_specs().map(|c| c.name).collect();
    assert!(declared.contains(&"tag_note") && declared.contains(&"count_notes"), "{declared:?}");
    let impls: Vec<(&str, Option<&str>)> = capspec::__internals::registrations().map(|r| (r.name, r.fingerprint)).collect();
    assert!(impls.contains(&("tag_note", None)) && impls.contains(&("count_notes", None)), "{impls:?}");
}
