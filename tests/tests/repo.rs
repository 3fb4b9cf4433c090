//! The repository checks itself: `cargo test` fails when the repo's own
//! specs, config or committed editor schema are out of date, like
//! rust-analyzer's codegen freshness tests.

use capspec_codegen::report::{self, Format};
use capspec_testkit::repo_root as workspace_root;

/// The freshness entry point a project calls from its own tests: plain
/// `cargo test` fails when a generated file drifted from the specs.
#[test]
fn repo_artifacts_are_fresh() {
    capspec_codegen::assert_fresh(workspace_root());
}

#[test]
fn assert_fresh_names_the_stale_file() {
    let dir = capspec_testkit::TempDir::new("assert-fresh");
    dir.write("capspec.toml", "specs = \"specs\"\n");
    dir.write("specs/x.yaml", "module: x\ndescription: X.\ncapabilities:\n  - { name: y, category: read, description: Y. }\n");
    capspec_codegen::sync(dir.path()).unwrap();
    std::fs::write(dir.path().join("guest/x.js"), "// edited\n").unwrap();
    let panic = std::panic::catch_unwind(|| capspec_codegen::assert_fresh(dir.path())).expect_err("stale file must fail");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("drift/stale") && message.contains("guest/x.js"), "{message}");
    let report = capspec_codegen::check(dir.path()).unwrap();
    assert_eq!(report.exit_code(), 1, "{}", report::render(&report, Format::Human));
}

#[test]
fn reference_catalog_is_broad() {
    // The reference catalog must exercise what later stages implement:
    // at least 5 modules, 25 capabilities and every category.
    let project = capspec_codegen::open(&workspace_root()).unwrap();
    let set = &project.loaded.set;
    assert!(set.modules.len() >= 5, "{} modules", set.modules.len());
    assert!(set.capabilities().count() >= 25, "{} capabilities", set.capabilities().count());
    for category in capspec_codegen::Category::ALL {
        assert!(set.capabilities().any(|(_, c)| c.category == category), "no {category} capability");
    }
}

#[test]
fn repo_specs_reference_the_editor_schema() {
    let specs = workspace_root().join("specs");
    for entry in std::fs::read_dir(specs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with("# yaml-language-server: $schema=../schema/capspec-spec.schema.json\n"),
                "{} lacks the editor schema line",
                path.display()
            );
        }
    }
}
