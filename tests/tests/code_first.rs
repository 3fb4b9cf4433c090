//! Code-first specs (`#[derive(Capability)]`) joining the YAML specs in
//! `check` and `sync`, fed as the export step delivers them: the same rules
//! and locations as YAML, one name space, the record that stands in for a
//! host that does not build, and the generated files they appear in.

use std::path::Path;

use capspec_codegen::code_first::{CodeFirstInput, Exported};
use capspec_codegen::report::{self, Format};
use capspec_testkit::TempDir;
use serde_json::{Value, json};

const CONFIG: &str = "specs = \"specs\"\n[generate]\nrust = \"src/generated\"\n[code_first]\npackages = [\"host\"]\n";
const NOTES: &str = "module: notes\ndescription: Notes.\ncapabilities:\n  - name: read_note\n    category: read\n    description: Read a note.\n";
const SOURCE: &str = "use capspec::Capability;\n\n/// Rust-side docs.\n#[derive(serde::Deserialize, schemars::JsonSchema, Capability)]\n#[capability(module = \"notes\", category = \"write\", description = \"Tag a note.\")]\npub struct TagNote {\n    pub note_id: String,\n}\n";

fn project(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    dir.write("capspec.toml", CONFIG);
    dir.write("specs/notes.yaml", NOTES);
    dir.write("src/notes.rs", SOURCE);
    dir
}

/// An export record as the derive's hidden test writes it (schemars schema
/// included), with the package the export step adds.
fn exported(module: &str, name: &str, category: &str, description: &str, schema: Value) -> Exported {
    serde_json::from_value(json!({
        "package": "host",
        "module": module,
        "name": name,
        "category": category,
        "description": description,
        "rust_type": "host::notes::TagNote",
        "file": "src/notes.rs",
        "line": 6,
        "column": 12,
        "input_schema": schema,
    }))
    .unwrap()
}

fn tag_note_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "TagNote",
        "description": "Rust-side docs.",
        "type": "object",
        "properties": {
            "note_id": {"type": "string", "description": "The note."},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true}
        },
        "required": ["note_id"],
        "additionalProperties": false
    })
}

fn fresh(specs: Vec<Exported>) -> CodeFirstInput {
    CodeFirstInput { exported: specs, from_record: Default::default() }
}

fn check(root: &Path, input: CodeFirstInput) -> capspec_codegen::Report {
    let options = capspec_codegen::check::CheckOptions { code_first: Some(input), ..Default::default() };
    let mut report = capspec_codegen::check::check_with(root, &options).unwrap();
    // These projects have no impls or tests: coverage is not the subject.
    report.findings.retain(|f| !f.rule.starts_with("coverage/"));
    report
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn an_exported_spec_reaches_every_generated_file_after_sync() {
    let dir = project("cf-sync");
    let input = fresh(vec![exported("notes", "tag_note", "write", "Tag a note.", tag_note_schema())]);
    let outcome = capspec_codegen::sync::sync_with(dir.path(), Some(&input)).unwrap();
    assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
    let root = dir.path();
    assert!(read(root, "catalog/notes.md").contains("- write `tag_note({note_id /* The note. */, tags?: string[](≥1 items)})`: Tag a note."));
    assert!(read(root, "catalog/CATALOG.md").contains("tag_note"));
    let json: Value = serde_json::from_str(&read(root, "catalog/capabilities.json")).unwrap();
    let caps = json["modules"][0]["capabilities"].as_array().unwrap();
    let tag = caps.iter().find(|c| c["name"] == "tag_note").expect("tag_note in capabilities.json");
    assert_eq!(tag["category"], "write");
    assert_eq!(tag["annotations"]["readOnlyHint"], false);
    assert!(read(root, "specs/categories.snap").contains("\nnotes.tag_note write\n"));
    assert!(read(root, "guest/notes.js").contains("export async function tag_note(args = {})"));
    assert!(read(root, "guest/notes.d.ts").contains("tag_note"));
    // The Rust bindings carry the spec but no Args: the struct is the args.
    let rust = read(root, "src/generated/notes.rs");
    let start = rust.find("pub mod tag_note").unwrap();
    let module = &rust[start..rust[start..].find("\n}\n").unwrap() + start];
    assert!(module.contains("#[derive(Capability)]` on `host::notes::TagNote`") && module.contains("pub const SPEC"));
    assert!(!module.contains("struct Args"), "{module}");
    syn::parse_file(&rust).expect("the generated Rust parses");
    // Unsupported keywords go (`uniqueItems`, with a warning); the schema is
    // served as rmcp serves a type's (DESIGN §2, "Schemas as declared"):
    // schemars' `$schema` and every description inside kept, the root's
    // title and doc comment (the capability's name and description say
    // them) left out.
    assert!(!rust.contains("uniqueItems"), "{module}");
    let served = &tag["input_schema"];
    assert_eq!(served["$schema"], "https://json-schema.org/draft/2020-12/schema", "{served:#}");
    assert_eq!((served.get("title"), served.get("description")), (None, None), "{served:#}");
    assert!(!rust.contains("Rust-side docs"), "{module}");
    // The record holds the converted spec, without line numbers.
    let record = read(root, "specs/code-first.json");
    assert!(record.starts_with("{\"generated\": \"@generated by capspec"), "{record}");
    let parsed: Value = serde_json::from_str(&record).unwrap();
    assert_eq!(parsed["capabilities"][0]["input_schema"]["properties"]["tags"], json!({"type": "array", "items": {"type": "string"}, "minItems": 1}));
    assert!(parsed["capabilities"][0].get("line").is_none());

    // Fresh again: clean. Without a build, the record stands in: clean too.
    assert_eq!(check(root, input.clone()).findings.iter().filter(|f| f.severity == capspec_codegen::Severity::Error).count(), 0);
    assert_eq!(capspec_codegen::check(root).unwrap().findings.iter().filter(|f| f.rule.starts_with("drift/")).count(), 0);
}

/// `aliases = ["tag-note"]` in the derive: the spec's hidden names, in the
/// generated `SPEC` (which `invoke` and `tools/call` resolve) and never in
/// a catalog, a facade or capabilities.json; a bad alias is a located finding.
#[test]
fn a_derives_aliases_reach_the_spec_and_no_listing() {
    let dir = project("cf-aliases");
    let mut spec = exported("notes", "tag_note", "write", "Tag a note.", tag_note_schema());
    spec.aliases = vec!["tag-note".into(), "labelNote".into()];
    let outcome = capspec_codegen::sync::sync_with(dir.path(), Some(&fresh(vec![spec.clone()]))).unwrap();
    assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
    let root = dir.path();
    let rust = read(root, "src/generated/notes.rs");
    assert!(rust.contains("aliases: &[\"tag-note\", \"labelNote\"]"), "{rust}");
    for listing in ["catalog/notes.md", "catalog/capabilities.json", "guest/notes.js", "guest/notes.d.ts"] {
        assert!(!read(root, listing).contains("tag-note") && !read(root, listing).contains("labelNote"), "{listing} lists an alias");
    }
    let record: Value = serde_json::from_str(&read(root, "specs/code-first.json")).unwrap();
    assert_eq!(record["capabilities"][0]["aliases"], json!(["tag-note", "labelNote"]));
    spec.aliases = vec!["tag note".into()];
    let report = check(root, fresh(vec![spec]));
    let bad = report.findings.iter().find(|f| f.rule == "spec/invalid-name").unwrap_or_else(|| panic!("{:?}", report.findings));
    assert!(bad.message.contains("invalid alias") && bad.file == "src/notes.rs", "{bad:?}");
}

#[test]
fn a_dropped_keyword_is_a_warning_at_the_derive() {
    let dir = project("cf-keyword");
    let report = check(dir.path(), fresh(vec![exported("notes", "tag_note", "write", "Tag a note.", tag_note_schema())]));
    let warnings: Vec<String> = report.findings.iter().filter(|f| f.rule == "code-first/unsupported-keyword").map(|f| format!("{}:{} {}", f.file, f.line, f.message)).collect();
    assert_eq!(warnings, ["src/notes.rs:6 `notes.tag_note`: dropped keyword `uniqueItems` at `/input/properties/tags/uniqueItems`, which the spec format does not support; the generated schema goes without it"]);
}

#[test]
fn a_yaml_and_a_code_first_capability_of_one_name_are_a_duplicate() {
    let dir = project("cf-duplicate");
    let report = check(dir.path(), fresh(vec![exported("notes", "read_note", "read", "Read a note.", json!({"type": "object", "properties": {}}))]));
    insta::assert_snapshot!(report::render(&report, Format::Human));
}

#[test]
fn spec_rules_apply_to_code_first_specs_with_rust_locations() {
    let dir = project("cf-rules");
    let report = check(
        dir.path(),
        fresh(vec![
            // A record edited by hand (or an older runtime) may say anything.
            exported("notes", "tag_note", "reed", "Tag a note.", json!({"type": "object", "properties": {}})),
            exported("nots", "pin_note", "write", "Pin a note.", json!({"type": "object", "properties": {}})),
            exported("notes", "star_note", "write", "Star a note.", json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}})),
        ]),
    );
    insta::assert_snapshot!(report::render(&report, Format::Human));
}

#[test]
fn a_module_of_only_code_first_capabilities_is_declared_in_yaml() {
    let dir = project("cf-empty");
    dir.write("specs/tags.yaml", "module: tags\ndescription: Tags, all declared in Rust.\ncapabilities: []\n");
    // Without code-first specs the empty module is an error …
    let alone = check(dir.path(), fresh(vec![]));
    assert!(alone.findings.iter().any(|f| f.rule == "spec/missing-field" && f.file == "specs/tags.yaml"), "{:?}", alone.findings);
    // … with one it is a module like any other.
    let input = fresh(vec![exported("tags", "add_tag", "write", "Add a tag.", json!({"type": "object", "properties": {}}))]);
    let outcome = capspec_codegen::sync::sync_with(dir.path(), Some(&input)).unwrap();
    assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
    assert!(read(dir.path(), "catalog/tags.md").contains("add_tag"));
}

#[test]
fn drift_between_the_code_and_the_generated_files_is_caught() {
    let dir = project("cf-drift");
    let before = fresh(vec![exported("notes", "tag_note", "read", "Tag a note.", json!({"type": "object", "properties": {}}))]);
    capspec_codegen::sync::sync_with(dir.path(), Some(&before)).unwrap();
    // The derive now says `write`: the record, bindings and snapshot are stale.
    let after = fresh(vec![exported("notes", "tag_note", "write", "Tag a note.", json!({"type": "object", "properties": {}}))]);
    let report = check(dir.path(), after);
    let mut stale: Vec<(&str, &str)> = report.findings.iter().map(|f| (f.rule.as_str(), f.file.as_str())).collect();
    stale.sort();
    stale.dedup();
    assert!(stale.contains(&("drift/stale", "specs/code-first.json")), "{stale:?}");
    assert!(stale.contains(&("drift/stale", "src/generated/notes.rs")), "{stale:?}");
    // The reclassification is reported at the derive, where the category is written.
    let snapshot = report.findings.iter().find(|f| f.rule == "drift/snapshot").unwrap();
    assert_eq!((snapshot.file.as_str(), snapshot.line), ("src/notes.rs", 6), "{snapshot:?}");
    assert!(snapshot.message.starts_with("notes.tag_note: read → write (tightens the gate) in the category snapshot `specs/categories.snap`; "), "{}", snapshot.message);
}

#[test]
fn a_package_that_fails_to_export_keeps_its_recorded_specs() {
    let dir = project("cf-fallback");
    let good = fresh(vec![exported("notes", "tag_note", "write", "Tag a note.", tag_note_schema())]);
    capspec_codegen::sync::sync_with(dir.path(), Some(&good)).unwrap();
    let record = read(dir.path(), "specs/code-first.json");
    // A YAML change while the host does not build: the YAML-derived files
    // are regenerated, the host's code-first spec comes from the record.
    dir.write("specs/notes.yaml", format!("{NOTES}  - name: list_notes\n    category: read\n    description: List notes.\n"));
    let broken = CodeFirstInput { exported: vec![], from_record: ["host".to_string()].into() };
    let outcome = capspec_codegen::sync::sync_with(dir.path(), Some(&broken)).unwrap();
    assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
    let catalog = read(dir.path(), "catalog/notes.md");
    assert!(catalog.contains("list_notes") && catalog.contains("tag_note"), "{catalog}");
    assert_eq!(read(dir.path(), "specs/code-first.json"), record, "the record is kept as it was");
}

#[test]
fn a_broken_record_is_reported_where_it_breaks() {
    let dir = project("cf-record");
    dir.write("specs/code-first.json", "{\"generated\": \"x\",\n\"capabilities\": [\n{\"module\": 1}\n]}\n");
    let report = capspec_codegen::check(dir.path()).unwrap();
    let f = report.findings.iter().find(|f| f.rule == "code-first/record").expect("a record finding");
    assert_eq!((f.file.as_str(), f.line), ("specs/code-first.json", 3));
    assert!(f.message.contains("not what `cargo xtask sync` writes"), "{}", f.message);
    // A record that cannot be read blocks sync: nothing is written.
    let outcome = capspec_codegen::sync(dir.path()).unwrap();
    assert!(!outcome.findings.is_empty() && outcome.written.is_empty());
}

#[test]
fn hostile_code_first_text_stays_inert() {
    let dir = project("cf-hostile");
    let hostile = "Ends */ a comment, </script>, ${globalThis.pwned = 1}, `tick`, \"# raw, \u{2028} and \\ too.";
    let schema = json!({"type": "object", "properties": {"q": {"type": "string", "description": hostile}}});
    let input = fresh(vec![exported("notes", "tag_note", "write", hostile, schema)]);
    let outcome = capspec_codegen::sync::sync_with(dir.path(), Some(&input)).unwrap();
    assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
    let rust = read(dir.path(), "src/generated/notes.rs");
    syn::parse_file(&rust).expect("generated Rust parses");
    // The description survives as one string literal with the exact text.
    let spec = rust.lines().find(|l| l.trim_start().starts_with("description: \"Ends")).expect("the description literal");
    let literal: syn::LitStr = syn::parse_str(spec.trim().trim_start_matches("description: ").trim_end_matches(',')).unwrap();
    assert_eq!(literal.value(), hostile);
    let record: Value = serde_json::from_str(&read(dir.path(), "specs/code-first.json")).unwrap();
    assert_eq!(record["capabilities"][0]["description"], hostile);
    let js = read(dir.path(), "guest/notes.js");
    assert!(!js.contains("${globalThis"), "descriptions never reach the facade as code");
}

mod real {
    //! A real `#[derive(Capability)]` with the shapes schemars emits for
    //! everyday Rust types (Option, unsigned ints, nested structs, unit and
    //! documented enums, sets, maps), exported by the runtime exactly as the
    //! hidden test does and read back by the generator.
    use capspec::__private::{schemars, serde};
    use std::collections::{BTreeMap, BTreeSet};

    #[derive(serde::Deserialize, schemars::JsonSchema, capspec::Capability)]
    #[serde(crate = "capspec::__private::serde", deny_unknown_fields)]
    #[schemars(crate = "capspec::__private::schemars")]
    #[capability(module = "notes", category = "execute", description = "Schedule a reminder.")]
    #[allow(dead_code)] // exists for its derived schema and spec
    pub struct ScheduleReminderArgs {
        /// What to say.
        pub text: String,
        pub delay_seconds: u32,
        pub repeat: Option<Repeat>,
        pub channel: Channel,
        pub tags: BTreeSet<String>,
        pub labels: BTreeMap<String, i64>,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(crate = "capspec::__private::serde")]
    #[schemars(crate = "capspec::__private::schemars")]
    #[allow(dead_code)] // exists for its derived schema
    pub struct Repeat {
        pub times: u8,
        pub every_seconds: f64,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(crate = "capspec::__private::serde", rename_all = "snake_case")]
    #[schemars(crate = "capspec::__private::schemars")]
    pub enum Channel {
        /// A desktop notification.
        Desktop,
        Email,
    }
}

#[test]
fn a_real_schemars_export_round_trips_through_the_generator() {
    let dir = project("cf-real");
    let spec = <real::ScheduleReminderArgs as capspec::Capability>::SPEC;
    let mut record = spec.export();
    record["package"] = json!("host");
    record["file"] = json!("src/notes.rs");
    let exported: Exported = serde_json::from_value(record).expect("the runtime's export record is what the generator reads");
    assert_eq!(exported.name, "schedule_reminder");
    let input = fresh(vec![exported]);
    let report = check(dir.path(), input.clone());
    let dropped: Vec<&str> = report.findings.iter().filter(|f| f.rule == "code-first/unsupported-keyword").map(|f| f.message.as_str()).collect();
    assert_eq!(dropped.len(), 1, "{dropped:#?}");
    assert!(dropped[0].contains("dropped keyword `uniqueItems` at `/input/properties/tags/uniqueItems`"), "{dropped:#?}");
    let outcome = capspec_codegen::sync::sync_with(dir.path(), Some(&input)).unwrap();
    assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
    let catalog = read(dir.path(), "catalog/notes.md");
    let line = catalog.lines().find(|l| l.contains("schedule_reminder(")).expect("in the catalog");
    insta::assert_snapshot!(line);
}

/// A code-first input is closed like a YAML spec's: a field-less struct
/// (whose schemars schema declares no properties) refuses unknown keys;
/// `#[capability(open)]` accepts them, with fields or without.
#[test]
fn code_first_inputs_are_closed_unless_open() {
    use capspec::__internals::{Objects, Validator};
    let dir = project("cf-closed");
    let mut open = exported("notes", "merge_meta", "write", "Merge metadata.", json!({"type": "object", "properties": {"note_id": {"type": "string"}}}));
    open.open = true;
    let input = fresh(vec![exported("notes", "count_notes", "read", "Count notes.", json!({"type": "object"})), open]);
    let outcome = capspec_codegen::sync::sync_with(dir.path(), Some(&input)).unwrap();
    assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
    let json: Value = serde_json::from_str(&read(dir.path(), "catalog/capabilities.json")).unwrap();
    let caps = json["modules"][0]["capabilities"].as_array().unwrap();
    let validator = |name: &str| {
        let cap = caps.iter().find(|c| c["name"] == name).unwrap();
        Validator::compile_with(&cap["input_schema"], Objects::Closed).unwrap()
    };
    assert_eq!(validator("count_notes").validate(&json!({})).len(), 0);
    assert_eq!(validator("count_notes").validate(&json!({"surprise": 1})).len(), 1, "a field-less struct refuses unknown keys");
    assert_eq!(validator("merge_meta").validate(&json!({"note_id": "a", "surprise": 1})).len(), 0, "`open` accepts them");
}
