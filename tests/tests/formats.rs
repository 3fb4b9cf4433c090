//! Output formats: SARIF 2.1.0 validated against the official schema, and
//! stable fingerprints.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use capspec_codegen::report::{self, Format};
use capspec_tests::fixtures;

fn node_tools() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ts");
    let present = dir.join("node_modules/ajv").is_dir() && Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !present {
        assert!(std::env::var_os("CAPSPEC_REQUIRE_NODE_TOOLS").is_none(), "CAPSPEC_REQUIRE_NODE_TOOLS is set but node or tests/ts/node_modules is missing");
        capspec_testkit::skip(None, "node or the tools in tests/ts are not installed (run `npm ci --prefix tests/ts`); skipping SARIF schema validation");
        return None;
    }
    Some(dir)
}

fn validate_sarif(dir: &Path, sarif: &str) {
    let mut child = Command::new("node").arg(dir.join("validate-sarif.js")).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(sarif.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "SARIF does not validate:\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn sarif_validates_against_the_schema() {
    let cases = ["invalid-schema", "duplicate-name", "config-errors", "parse-not-utf8", "config-empty-specs"];
    let reports: Vec<String> = cases.iter().map(|c| report::render(&capspec_codegen::check(&fixtures().join("check").join(c)).unwrap(), Format::Sarif)).collect();
    for (case, sarif) in cases.iter().zip(&reports) {
        let value: serde_json::Value = serde_json::from_str(sarif).unwrap();
        let results = value["runs"][0]["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{case}");
        for r in results {
            let index = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(value["runs"][0]["tool"]["driver"]["rules"][index]["id"], r["ruleId"], "ruleIndex points at the rule");
        }
    }
    if let Some(dir) = node_tools() {
        for sarif in &reports {
            validate_sarif(&dir, sarif);
        }
    }
    insta::assert_snapshot!(reports[0].lines().take(60).collect::<Vec<_>>().join("\n"));
}

/// The SARIF log of a fixture, as one process renders it. Run on its own by
/// [`fingerprints_are_stable_across_processes`], which compares two runs.
#[test]
fn sarif_of_one_process() {
    let sarif = report::render(&capspec_codegen::check(&fixtures().join("check/unknown-field")).unwrap(), Format::Sarif);
    let log: serde_json::Value = serde_json::from_str(&sarif).expect("SARIF is JSON");
    let fingerprints = log["runs"][0]["results"].as_array().expect("results").len();
    assert!(fingerprints > 0, "the fixture has findings");
    if std::env::var_os("CAPSPEC_PRINT_SARIF").is_some() {
        println!("<<<{sarif}>>>");
    }
}

/// Fingerprints (and the whole log) are the same in two separate processes:
/// nothing depends on a per-process seed, address or clock.
#[test]
fn fingerprints_are_stable_across_processes() {
    let run = || {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "sarif_of_one_process", "--nocapture", "--test-threads=1"])
            .env("CAPSPEC_PRINT_SARIF", "1")
            .output()
            .expect("run this test binary again");
        assert!(out.status.success(), "{}", capspec_testkit::text(&out));
        let stdout = String::from_utf8(out.stdout).unwrap();
        let start = stdout.find("<<<").expect("the child printed its SARIF") + 3;
        let end = stdout.rfind(">>>").unwrap();
        stdout[start..end].to_string()
    };
    let (a, b) = (run(), run());
    assert!(a.contains("partialFingerprints"), "{a}");
    assert_eq!(a, b);
}
