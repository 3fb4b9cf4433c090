//! The argument validator against the official JSON-Schema-Test-Suite
//! (draft 2020-12, vendored in `tests/fixtures/json-schema-test-suite/` with
//! its licence). Every group whose schema uses only the supported keywords
//! must pass every case, with objects open for the comparison (closed by
//! default is capspec's deliberate choice, not the suite's). A group the
//! validator cannot compile for another reason is refused — never run with
//! a constraint silently dropped — and the refusals are pinned below.

use capspec::__internals::{Objects, Validator};
use capspec_tests::fixtures;
use serde_json::Value;

#[test]
fn every_applicable_case_of_the_official_suite_passes() {
    let dir = fixtures().join("json-schema-test-suite/draft2020-12");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let (mut groups, mut passed, mut not_applicable) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut refused = Vec::new();
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let suite: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for group in suite {
            let mut schema = group["schema"].clone();
            // Every group declares the draft; that is not a constraint.
            if let Some(map) = schema.as_object_mut() {
                map.remove("$schema");
            }
            let validator = match Validator::compile_with(&schema, Objects::Open) {
                Ok(v) => v,
                Err(e) if e.0.starts_with("unsupported keyword") => {
                    not_applicable += 1;
                    continue;
                }
                Err(e) => {
                    refused.push(format!("{name}: {}: {}", group["description"].as_str().unwrap(), e.0));
                    continue;
                }
            };
            groups += 1;
            for case in group["tests"].as_array().unwrap() {
                let valid = case["valid"].as_bool().unwrap();
                let violations = validator.validate(&case["data"]);
                if violations.is_empty() == valid {
                    passed += 1;
                } else {
                    failures.push(format!(
                        "{name}: {} / {}: expected {}, got {violations:?}",
                        group["description"].as_str().unwrap(),
                        case["description"].as_str().unwrap(),
                        if valid { "valid" } else { "invalid" }
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases fail:\n{}", failures.len(), passed + failures.len(), failures.join("\n"));
    // Not vacuous: most of the vendored groups apply.
    assert!(groups >= 90 && passed >= 300, "only {groups} groups / {passed} cases ran");
    insta::assert_snapshot!(
        format!("{groups} groups ran, {passed} cases passed, {not_applicable} groups use unsupported keywords\nrefused:\n{}", refused.join("\n"))
    );
}
