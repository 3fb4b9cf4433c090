//! The book's notes host works, and its generated bindings are fresh.

use capspec::testing::block_on;
use capspec::{Gate, Mode, Registry, Run};
use capspec_book::{Notes, generated};
use serde_json::json;

#[test]
fn the_generated_files_are_fresh() {
    capspec_codegen::assert_fresh(env!("CARGO_MANIFEST_DIR"));
}

#[test]
fn notes_are_created_read_and_listed() {
    let session = Registry::new(generated::MODULES).unwrap().mount_all();
    let run = Run::new(Gate::headless(Mode::AcceptEdits, "book")).with(Notes::default());
    assert_eq!(block_on(session.invoke(&run, "notes.create_note", json!({"title": "a", "body": "b"}))).unwrap(), json!({"id": 1}));
    assert_eq!(block_on(session.invoke(&run, "notes.read_note", json!({"title": "a"}))).unwrap(), json!("b"));
    assert_eq!(block_on(session.invoke(&run, "notes.list_notes", json!({}))).unwrap(), json!({"notes": ["a"]}));
}
