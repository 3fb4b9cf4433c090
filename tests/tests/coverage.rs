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

/// The findings but the run-time coverage verdict (no test of these
/// projects runs; `only_a_recorded_call_makes_a_capability_tested` covers it).
fn static_check(dir: &std::path::Path) -> capspec_codegen::Report {
    let options = capspec_codegen::CheckOptions { without_test_record: true, ..Default::default() };
    capspec_codegen::check_with(dir, &options).unwrap()
}

fn rules(dir: &std::path::Path) -> Vec<(String, String)> {
    static_check(dir).findings.into_iter().map(|f| (f.rule, f.capability.unwrap_or_default())).collect()
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
    let report = static_check(dir.path());
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

/// An impl counts only in the build `check` holds the project to (DESIGN
/// §5): a `mod` item, an inline module or the fn under a `#[cfg(…)]` that
/// the feature set leaves out links nothing, and the finding is at that
/// attribute. Every set of `[check] features` must compile it; a predicate
/// no feature set decides (`unix`) leaves the impl in.
#[test]
fn an_impl_a_cfg_leaves_out_of_the_build_implements_nothing() {
    let dir = TempDir::new("coverage-cfg");
    copy_dir(&fixtures().join("coverage/attribution"), dir.path());
    capspec_codegen::sync(dir.path()).unwrap();
    let manifest = dir.read("Cargo.toml");
    let config = dir.read("capspec.toml");
    let memory = dir.read("src/capabilities/memory.rs");
    let unimplemented = |dir: &TempDir| -> Vec<(String, String, u32, String)> {
        let report = capspec_codegen::check(dir.path()).unwrap();
        report.findings.iter().filter(|f| f.rule == "coverage/unimplemented").map(|f| (f.message.split('`').nth(1).unwrap().to_string(), f.file.clone(), f.pos().line, f.message.clone())).collect()
    };
    let names = |found: &[(String, String, u32, String)]| found.iter().map(|f| f.0.clone()).collect::<Vec<_>>();

    // As the fixture is: everything compiled.
    assert_eq!(unimplemented(&dir), []);
    // `#[cfg(any())]` on the `mod` item: both of memory's impls, at that line.
    dir.write("src/capabilities/mod.rs", "#[cfg(any())]\npub mod memory;\npub mod notes;\n");
    let found = unimplemented(&dir);
    assert_eq!(names(&found), ["memory.create_entities", "memory.read_graph"], "{found:#?}");
    assert_eq!((found[0].1.as_str(), found[0].2), ("src/capabilities/mod.rs", 1), "{found:#?}");
    assert!(found[0].3.contains("has no implementation its crate compiles with its default features: `create_entities` at src/capabilities/memory.rs:4 is left out by `#[cfg(any())]` here"), "{}", found[0].3);

    // A feature the default build lacks, then has.
    dir.write("src/capabilities/mod.rs", "#[cfg(feature = \"graph\")]\npub mod memory;\npub mod notes;\n");
    dir.write("Cargo.toml", format!("{manifest}\n[features]\ngraph = []\n"));
    assert_eq!(names(&unimplemented(&dir)), ["memory.create_entities", "memory.read_graph"]);
    dir.write("Cargo.toml", format!("{manifest}\n[features]\ndefault = [\"full\"]\nfull = [\"graph\", \"dep:serde\"]\ngraph = []\n"));
    assert_eq!(unimplemented(&dir), []);
    // `check` holds the project to a build without the defaults' `graph` too.
    dir.write("Cargo.toml", format!("{manifest}\n[features]\ngraph = []\n"));
    dir.write("capspec.toml", format!("{config}\n[check]\nfeatures = [[\"graph\"], []]\n"));
    let found = unimplemented(&dir);
    assert_eq!(names(&found), ["memory.create_entities", "memory.read_graph"], "{found:#?}");
    assert!(found[0].3.contains("with its default features (`[check] features` set `[]`)"), "{}", found[0].3);
    dir.write("capspec.toml", format!("{config}\n[check]\nfeatures = [[\"graph\"]]\n"));
    assert_eq!(unimplemented(&dir), []);
    dir.write("capspec.toml", &config);

    // On an inline module and on the fn itself; `unix` is left to the build.
    dir.write("src/capabilities/mod.rs", "pub mod memory;\npub mod notes;\n");
    dir.write("src/capabilities/memory.rs", memory.replacen("#[capability(memory::read_graph)]", "#[cfg(all(unix, feature = \"off\"))]\n#[capability(memory::read_graph)]", 1).replacen("#[capability(memory::create_entities)]", "#[cfg(unix)]\n#[capability(memory::create_entities)]", 1));
    let found = unimplemented(&dir);
    assert_eq!(names(&found), ["memory.read_graph"], "{found:#?}");
    assert_eq!((found[0].1.as_str(), found[0].2), ("src/capabilities/memory.rs", 10), "{found:#?}");
    assert!(found[0].3.contains("left out by `#[cfg(all(unix, feature = \"off\"))]` here"), "{}", found[0].3);
    dir.write("src/capabilities/memory.rs", format!("#[cfg(test)]\nmod only_in_tests {{\n    use super::*;\n{memory}}}\n").replace("use crate::generated::memory;\n", "").replacen("use capspec", "use crate::generated::memory;\nuse capspec", 1));
    let found = unimplemented(&dir);
    assert_eq!(names(&found), ["memory.create_entities", "memory.read_graph"], "{found:#?}");
    assert_eq!((found[0].1.as_str(), found[0].2), ("src/capabilities/memory.rs", 1), "{found:#?}");
}

/// A capability behind a cargo feature (`feature:`, DESIGN §2) is held
/// implemented only in the `[check] features` builds that turn it on: its
/// impl may live behind the same `cfg`, and a build without the feature
/// asks nothing of it. A feature the package does not declare is an error;
/// one no build turns on, a warning (nothing would check it).
#[test]
fn a_capability_behind_a_feature_is_held_implemented_where_the_feature_is_on() {
    let dir = TempDir::new("coverage-feature");
    copy_dir(&fixtures().join("coverage/attribution"), dir.path());
    let manifest = dir.read("Cargo.toml");
    let config = dir.read("capspec.toml");
    let spec = dir.read("specs/memory.yaml").replace("description: Create entities in the graph. }", "description: Create entities in the graph., feature: graph }").replace("description: Read the whole graph. }", "description: Read the whole graph., feature: graph }");
    dir.write("specs/memory.yaml", &spec);
    dir.write("Cargo.toml", format!("{manifest}\n[features]\ngraph = []\n"));
    dir.write("src/capabilities/mod.rs", "#[cfg(feature = \"graph\")]\npub mod memory;\npub mod notes;\n");
    capspec_codegen::sync(dir.path()).unwrap();
    let generated = dir.read("src/generated/memory.rs");
    assert!(generated.contains("#[cfg(feature = \"graph\")]\npub mod read_graph {") && generated.contains("if cfg!(feature = \"graph\")"), "{generated}");
    let found = |dir: &TempDir| -> Vec<(String, String, String)> {
        let report = capspec_codegen::check(dir.path()).unwrap();
        report.findings.iter().filter(|f| f.rule == "coverage/unimplemented" || f.rule == "spec/invalid-value").map(|f| (f.rule.clone(), f.message.split('`').nth(1).unwrap().to_string(), f.message.clone())).collect()
    };

    // Only the default build: the feature's capabilities are asked nothing, and that is said.
    let said = found(&dir);
    assert_eq!(said.iter().map(|f| (f.0.as_str(), f.1.as_str())).collect::<Vec<_>>(), [("spec/invalid-value", "memory.create_entities"), ("spec/invalid-value", "memory.read_graph")], "{said:#?}");
    assert!(said[0].2.contains("which no build `check` holds the project to turns on"), "{}", said[0].2);
    // Both builds: implemented where the feature is on, behind the same cfg.
    dir.write("capspec.toml", format!("{config}\n[check]\nfeatures = [[], [\"graph\"]]\n"));
    assert_eq!(found(&dir), []);
    // An impl the feature's build leaves out is missing there, by name.
    dir.write("src/capabilities/mod.rs", "#[cfg(all(feature = \"graph\", feature = \"off\"))]\npub mod memory;\npub mod notes;\n");
    let said = found(&dir);
    assert_eq!(said.iter().map(|f| (f.0.as_str(), f.1.as_str())).collect::<Vec<_>>(), [("coverage/unimplemented", "memory.create_entities"), ("coverage/unimplemented", "memory.read_graph")], "{said:#?}");
    assert!(said[0].2.contains("with features `graph` on top of its default ones"), "{}", said[0].2);
    // A feature the package does not declare.
    dir.write("src/capabilities/mod.rs", "#[cfg(feature = \"graph\")]\npub mod memory;\npub mod notes;\n");
    dir.write("Cargo.toml", format!("{manifest}\n[features]\ngrpah = []\n"));
    let said = found(&dir);
    assert!(said.iter().any(|f| f.0 == "spec/invalid-value" && f.2.contains("which the package of the generated bindings does not declare")), "{said:#?}");
}

/// A capability is tested only when the coverage record of the last
/// `cargo test` says a test's call reached it (DESIGN §5). The fixture's
/// tests name capabilities in every way a name can be written — a `use`
/// alias of a generated path, the impl fn's path, a macro-made test with
/// the qualified name as a string, methods, fns and fields sharing the
/// short names — and none of it counts. A record the runtime wrote
/// (its format, by hand here; `cli/tests/init.rs` has the runtime write
/// one) counts for exactly what it names: not an earlier run's, not
/// another workspace's, and nothing once a test changed after it. An impl
/// in a file no `mod` item reaches implements nothing.
#[test]
fn only_a_recorded_call_makes_a_capability_tested() {
    let dir = TempDir::new("coverage-record");
    copy_dir(&fixtures().join("coverage/attribution"), dir.path());
    // `memory.rs` is no longer declared: its impls are never compiled.
    dir.write("src/capabilities/mod.rs", "pub mod notes;\n");
    capspec_codegen::sync(dir.path()).unwrap();
    let all = ["memory.create_entities", "memory.read_graph", "notes.close_note", "notes.drop_note", "notes.list_notes", "notes.open_note", "notes.pin_note", "notes.star_note", "notes.tag_note"];
    let verdict = |dir: &std::path::Path| {
        let report = capspec_codegen::check(dir).unwrap();
        let mut by_rule: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for f in &report.findings {
            let what = if f.rule == "coverage/stale" { f.file.clone() } else { f.message.split('`').nth(1).unwrap().to_string() };
            by_rule.entry(f.rule.clone()).or_default().push(what);
        }
        by_rule.values_mut().for_each(|v| v.sort());
        (by_rule, report)
    };

    // No record: nothing is tested, however the tests name things.
    let (found, report) = verdict(dir.path());
    assert_eq!(found["coverage/untested"], all, "{found:#?}");
    assert_eq!(found["coverage/stale"], ["capspec.toml"], "{found:#?}");
    assert_eq!(found["coverage/unimplemented"], ["memory.create_entities", "memory.read_graph"], "{found:#?}");
    let unlinked = report.findings.iter().find(|f| f.rule == "coverage/unimplemented").unwrap();
    assert!(unlinked.message.contains("src/capabilities/memory.rs:4 is in a file no `mod` item reaches from the crate root"), "{}", unlinked.message);

    // The record of a run: two of its observations count.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let manifest = dir.path().canonicalize().unwrap().to_string_lossy().into_owned();
    let record = |run: &str, started: f64, manifest: &str, binary: &str, via: Option<&str>, lines: &[serde_json::Value]| {
        let header = serde_json::json!({"capspec_coverage": 1, "run": run, "started": started, "manifest_dir": manifest, "binary": binary, "via": via});
        let text: String = std::iter::once(&header).chain(lines).map(|l| format!("{l}\n")).collect();
        dir.write(&format!(".capspec/coverage/{run}/{}-1.jsonl", via.unwrap_or(binary)), &text);
    };
    // Each call names the contract it was compiled against, as the catalog
    // says it; a capability of the same name with another contract (in
    // another registry) is not this one.
    let catalog: serde_json::Value = serde_json::from_str(&dir.read("catalog/capabilities.json")).unwrap();
    let fingerprint = |cap: &str| {
        let (module, name) = cap.split_once('.').unwrap();
        let entry = catalog["modules"].as_array().unwrap().iter().find(|m| m["name"] == module).unwrap()["capabilities"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
        entry["fingerprint"].as_str().unwrap().to_string()
    };
    let ran = |cap: &str, test: Option<&str>| serde_json::json!({"capability": cap, "fingerprint": fingerprint(cap), "test": test, "thread": test.is_none().then_some("tokio-runtime-worker")});
    let other_contract = serde_json::json!({"capability": "notes.drop_note", "fingerprint": "0000000000000000", "test": "drops"});
    record("7-700", now + 1.0, &manifest, "counted", None, &[ran("notes.tag_note", Some("tags_through_an_alias")), ran("notes.pin_note", None), other_contract]);
    record("7-700", now + 1.0, &manifest, "counted", Some("notes-server"), &[ran("notes.star_note", None)]);
    // An earlier run, and a run of a project in another directory.
    record("6-600", now - 60.0, &manifest, "counted", None, &[ran("notes.open_note", Some("opens"))]);
    record("8-800", now + 2.0, "/elsewhere/project", "other", None, &[ran("notes.close_note", Some("closes"))]);
    let (found, _) = verdict(dir.path());
    let tested = ["notes.pin_note", "notes.star_note", "notes.tag_note"];
    assert_eq!(found["coverage/untested"], all.iter().filter(|c| !tested.contains(c)).copied().collect::<Vec<_>>(), "{found:#?}");
    assert!(!found.contains_key("coverage/stale"), "{found:#?}");
    let table = capspec_codegen::coverage_table::coverage(dir.path()).unwrap().table;
    for row in &table.capabilities {
        assert_eq!(!row.tests.is_empty(), tested.contains(&row.capability.as_str()), "the table and check disagree on {row:?}");
    }
    insta::assert_snapshot!(table.to_markdown());

    // A test changed after the run: the record counts for nothing.
    let changed = std::fs::File::options().append(true).open(dir.path().join("tests/counted.rs")).unwrap();
    changed.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(now + 30.0)).unwrap();
    let (found, report) = verdict(dir.path());
    assert_eq!(found["coverage/untested"], all, "{found:#?}");
    assert_eq!(found["coverage/stale"], ["tests/counted.rs"], "{found:#?}");
    let tag = report.findings.iter().find(|f| f.message.contains("`notes.tag_note`")).unwrap();
    assert!(tag.message.contains("the last `cargo test` ran it (tags_through_an_alias (counted)), but `tests/counted.rs` changed since"), "{}", tag.message);
}

/// Freshness is decided by content (DESIGN §5, turn 7): the run's first
/// process wrote `inputs.json`, the digest of each project file it saw
/// (written by hand here as the runtime writes it; `cli/tests/init.rs`
/// has the runtime write one). A file touched after the run, or restored
/// to what the run saw, leaves the record fresh; a changed, added or
/// removed input makes it stale, and so does a file changed between the
/// run's start and its look, whose content the run's binaries may not
/// have been built from.
#[test]
fn a_record_is_fresh_while_its_inputs_are_what_the_run_saw() {
    let dir = TempDir::new("coverage-content");
    copy_dir(&fixtures().join("coverage/attribution"), dir.path());
    capspec_codegen::sync(dir.path()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let (started, taken) = (now - 10.0, now - 5.0);
    let manifest = dir.path().canonicalize().unwrap().to_string_lossy().into_owned();
    let header = serde_json::json!({"capspec_coverage": 1, "run": "9-900", "started": started, "manifest_dir": manifest, "binary": "counted", "via": null});
    dir.write(".capspec/coverage/9-900/counted-1.jsonl", format!("{header}\n"));
    // What the run saw: every file but build output and hidden directories.
    fn seen(root: &std::path::Path, dir: &std::path::Path, files: &mut serde_json::Map<String, serde_json::Value>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                if !name.starts_with('.') && name != "target" {
                    seen(root, &entry.path(), files);
                }
                continue;
            }
            let bytes = std::fs::read(entry.path()).unwrap();
            let modified = entry.metadata().unwrap().modified().unwrap().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
            let rel = entry.path().strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            files.insert(rel, serde_json::json!({"digest": capspec_dialects::pin::bytes_digest(&bytes), "size": bytes.len(), "modified_ns": modified}));
        }
    }
    let mut files = serde_json::Map::new();
    seen(dir.path(), dir.path(), &mut files);
    let inputs = serde_json::json!({"capspec_inputs": 1, "taken": taken, "complete": true, "files": files});
    dir.write(".capspec/coverage/9-900/inputs.json", inputs.to_string());
    let stale = |dir: &TempDir| -> Vec<String> {
        let report = capspec_codegen::check(dir.path()).unwrap();
        report.findings.into_iter().filter(|f| f.rule == "coverage/stale").map(|f| f.file).collect()
    };
    let set_modified = |rel: &str, at: f64| {
        let file = std::fs::File::options().append(true).open(dir.path().join(rel)).unwrap();
        file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(at)).unwrap();
    };
    // The files were written just now, after the run's look (by these
    // figures), with the content it saw.
    assert_eq!(stale(&dir), Vec::<String>::new(), "written after the run's look, with the content it saw");
    // Touched after the run: same bytes, fresh.
    set_modified("tests/counted.rs", now + 30.0);
    assert_eq!(stale(&dir), Vec::<String>::new());
    // Changed after the run: stale; restored: fresh again.
    let original = dir.read("tests/counted.rs");
    dir.write("tests/counted.rs", format!("{original}// edited\n"));
    assert_eq!(stale(&dir), ["tests/counted.rs"]);
    dir.write("tests/counted.rs", &original);
    assert_eq!(stale(&dir), Vec::<String>::new(), "restored to what the run saw");
    // Same bytes, but changed between the run's start and its look: the
    // binaries may have been built from an earlier content.
    set_modified("specs/notes.yaml", started + 1.0);
    assert_eq!(stale(&dir), ["specs/notes.yaml"]);
    // Changed just before the run started (as `sync && cargo test` does,
    // back to back): fresh.
    set_modified("specs/notes.yaml", started - 0.01);
    assert_eq!(stale(&dir), Vec::<String>::new());
    // An input the run never saw, and one it saw that is gone.
    dir.write("tests/added.rs", "#[test]\nfn added() {}\n");
    assert_eq!(stale(&dir), ["tests/added.rs"]);
    std::fs::remove_file(dir.path().join("tests/added.rs")).unwrap();
    std::fs::remove_file(dir.path().join("tests/not_counted.rs")).unwrap();
    assert_eq!(stale(&dir), ["tests/not_counted.rs"]);
    // Installed packages and hidden directories under a tests directory are
    // no input (the run's walk leaves them out too).
    dir.write("tests/node_modules/pkg/index.js", "module.exports = 1;\n");
    dir.write("tests/.cache/state", "x\n");
    assert_eq!(stale(&dir), ["tests/not_counted.rs"]);
    // A file outside the inputs changes nothing.
    dir.write("tests/not_counted.rs", files_text(&inputs, "tests/not_counted.rs", &fixtures()));
    dir.write("README.md", "not an input\n");
    assert_eq!(stale(&dir), Vec::<String>::new());
}

/// The fixture's text of `rel` (whose digest `inputs` holds).
fn files_text(inputs: &serde_json::Value, rel: &str, fixtures: &std::path::Path) -> String {
    let text = std::fs::read_to_string(fixtures.join("coverage/attribution").join(rel)).unwrap();
    assert_eq!(inputs["files"][rel]["digest"], capspec_dialects::pin::bytes_digest(text.as_bytes()));
    text
}
