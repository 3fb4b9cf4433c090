//! Generated artifacts: pinned by snapshots, compiled (see `build.rs`),
//! executed under Node with a fake bridge, type-checked by `tsc`, and
//! byte-identical whatever the file order or root path.

use std::path::{Path, PathBuf};
use std::process::Command;

use capspec_codegen::load::{self, SpecFile};
use capspec_codegen::render::{self, Artifact, Targets};
use capspec_testkit::{TempDir, copy_dir};
use capspec_tests::fixtures;

fn render_case(case: &Path) -> (Targets, Vec<Artifact>) {
    let project = capspec_codegen::open(case).expect("fixture opens");
    let rendered = project.render().unwrap_or_else(|| panic!("{} has spec errors", case.display()));
    (rendered.targets, rendered.artifacts)
}

fn render_cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(fixtures().join("render")).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    cases
}

#[test]
fn every_artifact_is_pinned() {
    for case in render_cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let (_, artifacts) = render_case(&case);
        // Four files per module (.rs, .js, .d.ts, .md) and four aggregates.
        let modules = artifacts.iter().filter(|a| a.path.ends_with(".js")).count();
        assert!(modules >= 1 && artifacts.len() == 4 * modules + 4, "{name}: {} artifacts", artifacts.len());
        for artifact in artifacts {
            assert!(render::is_generated(&artifact.contents), "{} lacks the marker", artifact.path);
            assert!(artifact.contents.ends_with('\n'), "{} lacks a final newline", artifact.path);
            insta::assert_snapshot!(format!("{name}__{}", artifact.path.replace('/', "__")), artifact.contents);
        }
    }
}

/// A render that reuses every module's files (as `check` does after a
/// `sync`) produces exactly what a render from nothing produces — the
/// catalog sections read back from the pages included — and a file edited
/// by hand is rendered again, not reused.
#[test]
fn reusing_module_files_renders_the_same_bytes() {
    for case in render_cases() {
        let project = capspec_codegen::open(&case).unwrap();
        let (targets, fresh) = render_case(&case);
        let reuse: render::Reuse = fresh.iter().map(|a| (a.path.clone(), a.contents.clone())).collect();
        assert_eq!(render::render_all_reusing(&project.loaded.set, &targets, reuse.clone()), fresh, "{}", case.display());
        let mut edited = reuse;
        for (_, text) in edited.iter_mut().filter(|(p, _)| p.ends_with(".md") && !p.ends_with("CATALOG.md")) {
            text.push_str("edited by hand\n");
        }
        assert_eq!(render::render_all_reusing(&project.loaded.set, &targets, edited), fresh, "{}", case.display());
    }
}

#[test]
fn generated_types_carry_awkward_names_and_hostile_text_as_data() {
    use capspec_tests::bindings::hostile::hostile::{breakout, hostile_text};
    // Enum values that are not identifiers keep their exact JSON text.
    for value in ["16:9", "", "a\"b", "g h", "ünï", "G-H"] {
        let json = serde_json::json!({ "mode": value });
        let args: breakout::Args = serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{value:?}: {e}"));
        assert_eq!(serde_json::to_value(&args).unwrap(), json);
    }
    // Unknown keys are refused (deny_unknown_fields).
    assert!(serde_json::from_value::<breakout::Args>(serde_json::json!({"mode": "", "extra": 1})).is_err());
    // Property names that are not Rust identifiers keep their JSON names.
    let json = serde_json::json!({ "*/": "x", "content-type": "text/plain", "${x}": "\u{2028}" });
    let args: hostile_text::Args = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(serde_json::to_value(&args).unwrap(), json);
    // The description is carried verbatim, not interpreted.
    assert!(breakout::SPEC.description.contains("globalThis.pwned = true; //\u{2028}"));
    assert_eq!(hostile_text::SPEC.aliases, ["hostile_alias"]);
}

#[test]
fn subset_bindings_cover_every_keyword() {
    use capspec_tests::bindings::subset::subset::everything;
    let json = serde_json::json!({
        "s": "abc", "n": 1.5, "i": 4, "b": true, "e": "b", "c": "fixed",
        "arr": [1, 2], "map": {"k": 2.0}, "free": {"any": ["thing"]},
        "obj": {"inner": {"label": "x"}},
        "one": {"x": 1}, "any": 7,
        "type": "t", "self": "s", "Self": "S", "maxResults": 3, "content-type": "c", "3d": false
    });
    let args: everything::Args = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(serde_json::to_value(&args).unwrap(), json);
    let minimal = serde_json::json!({ "s": "a", "obj": {"inner": {}} });
    let args: everything::Args = serde_json::from_value(minimal.clone()).unwrap();
    // Optional fields without a default stay absent; those with one are
    // plain fields holding exactly the spec's value (`b: true`, `e: a`).
    assert_eq!((args.b, args.e), (true, everything::E::A));
    assert_eq!(
        serde_json::to_value(&args).unwrap(),
        serde_json::json!({ "s": "a", "obj": {"inner": {}}, "b": true, "e": "a" }),
        "optional fields without a default stay absent"
    );
    // A nullable optional field accepts null (and reads it as absent).
    let with_null = serde_json::json!({ "s": "a", "obj": {"inner": {}}, "i": null });
    assert!(serde_json::from_value::<everything::Args>(with_null).unwrap().i.is_none());
    assert_eq!((everything::SPEC.category, everything::SPEC.deferred), (capspec::Category::Execute, true));
}

/// Spec files fed in another order, and the project at another root path,
/// give the same bytes.
#[test]
fn rendering_is_deterministic() {
    let case = fixtures().join("render/subset");
    let (targets, expected) = render_case(&case);
    let mut files: Vec<SpecFile> = Vec::new();
    for dir in ["render/subset/specs", "render/hostile/specs"] {
        for entry in std::fs::read_dir(fixtures().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            files.push(SpecFile { path: format!("specs/{}", path.file_name().unwrap().to_string_lossy()), bytes: std::fs::read(&path).unwrap() });
        }
    }
    let forward = load::load_files(files.iter().map(|f| SpecFile { path: f.path.clone(), bytes: f.bytes.clone() }).collect());
    files.reverse();
    let backward = load::load_files(files);
    assert!(forward.findings.is_empty(), "{:?}", forward.findings);
    assert_eq!(render::render_all(&forward.set, &targets), render::render_all(&backward.set, &targets));

    let a = TempDir::new("det-a");
    let b = TempDir::new("det-b-elsewhere");
    for dir in [&a, &b] {
        copy_dir(&case, dir.path());
        capspec_codegen::sync(dir.path()).unwrap();
    }
    for artifact in &expected {
        let in_a = std::fs::read(a.path().join(&artifact.path)).unwrap();
        let in_b = std::fs::read(b.path().join(&artifact.path)).unwrap();
        assert_eq!(in_a, in_b, "{} differs between roots", artifact.path);
        assert_eq!(in_a, artifact.contents.as_bytes());
        assert!(!artifact.contents.contains(&*a.path().to_string_lossy()));
    }
}


fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The facades import and run under Node with a fake bridge that records
/// each forwarded call; nothing in a description executes.
#[test]
fn facades_run_under_node_and_forward_exactly() {
    if !have("node") {
        capspec_testkit::skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), "node is not installed; skipping the facade execution test");
        return;
    }
    let dir = TempDir::new("node-facades");
    copy_dir(&fixtures().join("render/hostile"), dir.path());
    capspec_codegen::sync(dir.path()).unwrap();
    dir.write(
        "guest/bridge.mjs",
        "export const calls = [];\nexport async function call(module, name, args) { calls.push([module, name, args]); return { ok: name }; }\n",
    );
    dir.write(
        "guest/driver.mjs",
        r#"import * as facade from "./hostile.js";
import defaultExport from "./hostile.js";
import { calls } from "./bridge.mjs";
const names = Object.keys(facade).filter((k) => k !== "default").sort();
const results = [];
for (const name of names) results.push(await facade[name]({ probe: name, text: "*/ ${x} </script>" }));
results.push(await defaultExport.breakout());
console.log(JSON.stringify({ names, defaults: Object.keys(defaultExport).sort(), calls, results, pwned: globalThis.pwned ?? null }));
"#,
    );
    let out = Command::new("node").arg(dir.path().join("guest/driver.mjs")).output().unwrap();
    assert!(out.status.success(), "node failed: {}", String::from_utf8_lossy(&out.stderr));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        value,
        serde_json::json!({
            "names": ["breakout", "hostile_text"],
            "defaults": ["breakout", "hostile_text"],
            "calls": [
                ["hostile", "breakout", {"probe": "breakout", "text": "*/ ${x} </script>"}],
                ["hostile", "hostile_text", {"probe": "hostile_text", "text": "*/ ${x} </script>"}],
                ["hostile", "breakout", {}]
            ],
            "results": [{"ok": "breakout"}, {"ok": "hostile_text"}, {"ok": "breakout"}],
            "pwned": null
        })
    );
}

/// The `.d.ts` files of the repo and of every render fixture pass
/// `tsc --strict --noEmit`. `.ci/run` installs TypeScript from the lockfile
/// in `tests/ts/` and sets CAPSPEC_REQUIRE_NODE_TOOLS=1, so CI cannot skip this.
#[test]
fn declarations_pass_tsc_strict() {
    let tsc = Path::new(env!("CARGO_MANIFEST_DIR")).join("ts/node_modules/typescript/bin/tsc");
    let required = std::env::var_os("CAPSPEC_REQUIRE_NODE_TOOLS").is_some();
    if !have("node") || !tsc.is_file() {
        assert!(!required, "CAPSPEC_REQUIRE_NODE_TOOLS is set but node or {} is missing", tsc.display());
        capspec_testkit::skip(None, "node or TypeScript is not installed (run `npm ci --prefix tests/ts`); skipping tsc");
        return;
    }
    let dir = TempDir::new("tsc");
    let mut files = Vec::new();
    for case in render_cases() {
        let (_, artifacts) = render_case(&case);
        for a in artifacts.iter().filter(|a| a.path.ends_with(".d.ts")) {
            let rel = format!("{}/{}", case.file_name().unwrap().to_string_lossy(), a.path);
            dir.write(&rel, &a.contents);
            files.push(dir.path().join(rel));
        }
    }
    let repo_guest = capspec_testkit::repo_root().join("examples/agent-host/guest");
    for entry in std::fs::read_dir(repo_guest).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".d.ts") {
            files.push(path);
        }
    }
    assert!(files.len() >= 8, "{files:?}");
    let out = Command::new("node").arg(&tsc).args(["--strict", "--noEmit", "--skipLibCheck", "false"]).args(&files).output().unwrap();
    assert!(out.status.success(), "tsc failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// Aliases resolve at invoke time only: no catalog, facade or declaration
/// file names them. Deferred capabilities are listed by name only.
#[test]
fn catalogs_and_facades_never_show_aliases() {
    let root = capspec_testkit::repo_root();
    let (_, artifacts) = render_case(&root);
    let project = capspec_codegen::open(&root).unwrap();
    let aliases: Vec<&str> = project.loaded.set.capabilities().flat_map(|(_, c)| c.aliases.iter().map(String::as_str)).collect();
    assert!(aliases.len() >= 3, "the reference catalog should exercise aliases");
    for a in artifacts.iter().filter(|a| a.path.ends_with(".md") || a.path.ends_with(".js") || a.path.ends_with(".d.ts")) {
        for alias in &aliases {
            for needle in [format!("{alias}("), format!("`{alias}`"), format!("function {alias}"), format!(" {alias},")] {
                assert!(!a.contents.contains(&needle), "{} mentions alias {alias}", a.path);
            }
        }
    }
    let catalog = &artifacts.iter().find(|a| a.path == "catalog/CATALOG.md").unwrap().contents;
    assert!(catalog.contains("Deferred (listed by name only; ask for the signature before calling): `get_environment`"));
    assert!(!catalog.contains("get_environment("), "a deferred capability has no signature in the catalog");
}
