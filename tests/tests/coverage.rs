//! The coverage walk in both directions (specs → impls and tests, impls →
//! specs), stubs, unparsable sources and suppressions, on a fixture project
//! copied to a temp dir and synced first so only coverage findings remain.

use capspec_codegen::report::{self, Format};
use capspec_testkit::{TempDir, copy_dir};
use capspec_tests::fixtures;


#[test]
fn coverage_walk_and_suppressions() {
    let dir = TempDir::new("coverage-walk");
    copy_dir(&fixtures().join("coverage/walk"), dir.path());
    capspec_codegen::sync(dir.path()).unwrap();
    let report = capspec_codegen::check(dir.path()).unwrap();
    let rules: Vec<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
    for rule in ["coverage/unknown", "coverage/duplicate-impl", "coverage/stub", "coverage/untested", "coverage/parse", "config/allow-unmatched"] {
        assert!(rules.contains(&rule), "missing {rule}: {rules:?}");
    }
    // Suppressed with reasons: list_notes untested, archive_note unimplemented.
    assert!(!report.findings.iter().any(|f| f.rule == "coverage/unimplemented"), "{rules:?}");
    assert!(!report.findings.iter().any(|f| f.message.contains("notes.list_notes")), "{rules:?}");
    insta::assert_snapshot!(report::render(&report, Format::Human));
}

fn rules(dir: &std::path::Path) -> Vec<(String, String)> {
    capspec_codegen::check(dir).unwrap().findings.into_iter().map(|f| (f.rule, f.capability.unwrap_or_default())).collect()
}

/// scaffold → `coverage/stub` → fill in → clean, on a project whose
/// `--root` is not a Cargo project.
#[test]
fn scaffold_round_trip() {
    let dir = TempDir::new("scaffold");
    dir.write("capspec.toml", "specs = \"specs\"\n[generate]\nrust = \"host/src/generated\"\n[coverage]\nsources = [\"host/src\"]\ntests = [\"host/tests\"]\n");
    dir.write(
        "specs/notes.yaml",
        "module: notes\ndescription: N.\ncapabilities:\n  - { name: read_note, category: read, description: R., output: { type: string } }\n  - { name: drop_note, category: write, description: D. }\n",
    );
    dir.write("host/src/capabilities/notes.rs", "//! mine\nfn keep_me() {}\n");
    dir.write("host/tests/t.rs", "#[test]\nfn t() { call(\"read_note\"); call(\"drop_note\"); }\n");
    capspec_codegen::sync(dir.path()).unwrap();
    assert_eq!(rules(dir.path()), [("coverage/unimplemented".into(), "read_note".into()), ("coverage/unimplemented".into(), "drop_note".into())]);

    let outcome = capspec_codegen::scaffold::scaffold(dir.path()).unwrap();
    assert_eq!(outcome.written.get("host/src/capabilities/notes.rs").unwrap(), &["drop_note", "read_note"]);
    let text = std::fs::read_to_string(dir.path().join("host/src/capabilities/notes.rs")).unwrap();
    assert!(text.starts_with("//! mine\nfn keep_me() {}\n"), "existing code is kept: {text}");
    insta::assert_snapshot!(text);
    syn_parses(&text);
    let stubs: Vec<_> = rules(dir.path());
    assert_eq!(stubs, [("coverage/stub".into(), "drop_note".into()), ("coverage/stub".into(), "read_note".into())]);

    // A second scaffold adds nothing.
    assert!(capspec_codegen::scaffold::scaffold(dir.path()).unwrap().written.is_empty());
    // Filling in the bodies makes the project clean.
    let filled = text.replace("todo!(\"implement notes.drop_note\")", "Ok(())").replace("todo!(\"implement notes.read_note\")", "Ok(String::new())");
    dir.write("host/src/capabilities/notes.rs", &filled);
    assert_eq!(rules(dir.path()), Vec::<(String, String)>::new());
}

fn syn_parses(text: &str) {
    // A stub file is Rust that syn parses, and the scan (which reports
    // unparsable sources as coverage/parse) reads it without complaint.
    if let Err(e) = syn::parse_file(text) {
        panic!("the scaffolded file does not parse: {e}\n{text}");
    }
    let dir = TempDir::new("scaffold-parse");
    dir.write("capspec.toml", "specs = \"specs\"\n");
    dir.write("specs/x.yaml", "module: x\ndescription: X.\ncapabilities:\n  - { name: y, category: read, description: Y. }\n");
    dir.write("src/a.rs", text);
    let report = capspec_codegen::check(dir.path()).unwrap();
    assert!(!report.findings.iter().any(|f| f.rule == "coverage/parse"), "{:?}", report.findings);
}

/// Code-first capabilities are covered like YAML ones: a path-less
/// `#[capability]` fn implements the spec its args type's derive declares;
/// a derive whose spec was never exported, and a path-less impl whose type
/// has no derive, are `coverage/unknown`; `scaffold` stubs a code-first spec
/// with its own type.
#[test]
fn code_first_impls_and_derives_are_covered() {
    let dir = TempDir::new("coverage-code-first");
    dir.write("capspec.toml", "specs = \"specs\"\n[code_first]\npackages = [\"host\"]\n[coverage]\nsources = [\"src\"]\ntests = [\"tests\"]\n");
    dir.write("specs/notes.yaml", "module: notes\ndescription: N.\ncapabilities: []\n");
    let spec = |name: &str, ty: &str| {
        format!("{{\"package\":\"host\",\"module\":\"notes\",\"name\":\"{name}\",\"category\":\"write\",\"description\":\"D.\",\"rust_type\":\"host::notes::{ty}\",\"file\":\"src/notes.rs\",\"input_schema\":{{\"type\":\"object\",\"properties\":{{}}}}}}")
    };
    dir.write(
        "specs/code-first.json",
        format!("{{\"generated\": \"@generated by capspec\",\n\"capabilities\": [\n{},\n{}\n]}}\n", spec("tag_note", "TagNote"), spec("pin", "PinArgs")),
    );
    let source = "use capspec::Capability;\n\n\
        #[derive(serde::Deserialize, schemars::JsonSchema, Capability)]\n#[capability(module = \"notes\", category = \"write\", description = \"D.\")]\npub struct TagNote {}\n\n\
        #[derive(serde::Deserialize, schemars::JsonSchema, Capability)]\n#[capability(module = \"notes\", category = \"write\", description = \"D.\")]\npub struct PinArgs {}\n\n\
        #[derive(serde::Deserialize, schemars::JsonSchema, capspec::Capability)]\n#[capability(module = \"notes\", category = \"read\", description = \"D.\", name = \"peek_note\")]\npub struct Peek {}\n\n\
        #[capspec::capability]\nasync fn tag_note(_run: &capspec::Run, _args: TagNote) -> capspec::CapResult<()> { Ok(()) }\n\n\
        #[capability]\nasync fn stray(_run: &capspec::Run, _args: NotDerived) -> capspec::CapResult<()> { Ok(()) }\n";
    dir.write("src/notes.rs", source);
    dir.write("tests/t.rs", "#[test]\nfn t() { call(\"tag_note\"); call(\"pin\"); }\n");
    capspec_codegen::sync(dir.path()).unwrap();
    let report = capspec_codegen::check(dir.path()).unwrap();
    let found: Vec<(String, u32, String)> = report.findings.iter().map(|f| (f.rule.clone(), f.line, f.message.clone())).collect();
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!((found[0].0.as_str(), found[0].1), ("coverage/unimplemented", 9), "{found:#?}");
    assert!(found[0].2.contains("`notes.pin` has no implementation; add a `#[capability]` fn taking `PinArgs`"), "{found:#?}");
    assert_eq!((found[1].0.as_str(), found[1].1), ("coverage/unknown", 13), "{found:#?}");
    assert!(found[1].2.contains("#[derive(Capability)] on `Peek` declares `notes.peek_note`, which is not among the code-first specs"), "{found:#?}");
    assert_eq!((found[2].0.as_str(), found[2].1), ("coverage/unknown", 18), "{found:#?}");
    assert!(found[2].2.contains("`#[capability]` on `stray` takes `NotDerived`, which has no #[derive(Capability)]"), "{found:#?}");

    let outcome = capspec_codegen::scaffold::scaffold(dir.path()).unwrap();
    assert_eq!(outcome.written.get("src/capabilities/notes.rs").unwrap(), &["pin"]);
    let stub = std::fs::read_to_string(dir.path().join("src/capabilities/notes.rs")).unwrap();
    assert!(stub.contains("#[capspec::capability]\nasync fn pin(_run: &capspec::Run, _args: crate::notes::PinArgs) -> capspec::CapResult<()> {"), "{stub}");
    syn_parses(&stub);
}

/// A test exercises a capability only when it names it in a way no other
/// item shares (DESIGN §5). The fixture's tests call methods, fns and
/// fields that share capabilities' short names, which attribute nothing,
/// beside a `use` alias of a generated path, the impl fn's path (through
/// its module, imported by name, at the crate root) and a macro-generated
/// test naming the qualified name, which do. `check` and the coverage
/// table agree on every row.
#[test]
fn coverage_attribution_is_exact() {
    let dir = TempDir::new("coverage-attribution");
    copy_dir(&fixtures().join("coverage/attribution"), dir.path());
    capspec_codegen::sync(dir.path()).unwrap();
    let report = capspec_codegen::check(dir.path()).unwrap();
    let mut untested: Vec<String> = report
        .findings
        .iter()
        .map(|f| {
            assert_eq!(f.rule, "coverage/untested", "{f:?}");
            f.message.split('`').nth(1).unwrap().to_string()
        })
        .collect();
    untested.sort();
    assert_eq!(untested, ["memory.create_entities", "notes.close_note", "notes.drop_note", "notes.open_note"]);

    let table = capspec_codegen::coverage_table::coverage(dir.path()).unwrap().table;
    for row in &table.capabilities {
        assert_eq!(row.tests.is_empty(), untested.contains(&row.capability), "the table and check disagree on {row:?}");
    }
    insta::assert_snapshot!(table.to_markdown());
    insta::assert_snapshot!(report::render(&report, Format::Human));
}
