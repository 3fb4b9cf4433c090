//! Property tests (proptest, bounded case counts): for arbitrary valid specs
//! — any Unicode in descriptions, enum values and property names — rendering
//! is deterministic and independent of file order, every generated Rust file
//! parses, facades export exactly the capability names, and no catalog or
//! facade ever shows an alias; a code-first spec renders like the same YAML
//! spec; an MCP export imports back to the same category and hints.

use capspec_codegen::import;
use capspec_codegen::load::{self, SpecFile};
use capspec_codegen::render::{self, Targets};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Findings other than `lint/*`. The generated text is deliberately
/// hostile (any Unicode, invisible characters included), so lint findings
/// about it are expected; they never stop rendering, and nothing else may
/// be found.
fn unlinted(findings: &[capspec_codegen::Finding]) -> Vec<&capspec_codegen::Finding> {
    findings.iter().filter(|f| !f.rule.starts_with("lint/")).collect()
}

fn targets() -> Targets {
    Targets::defaults()
}

/// Capability names: valid identifiers that are not reserved words.
fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,12}".prop_filter("reserved or invalid", |n| capspec_names::name_problem(n).is_none())
}

/// A tool with arbitrary text in every free-text slot.
fn tool() -> impl Strategy<Value = Value> {
    (
        name(),
        "d\\PC{0,40}",
        proptest::collection::vec(("\\PC{1,12}", "\\PC{0,20}"), 0..4),
        proptest::collection::vec("\\PC{0,10}", 1..5),
        any::<u8>(),
    )
        .prop_map(|(name, description, props, values, hints)| {
            let mut properties = serde_json::Map::new();
            for (prop, desc) in props {
                properties.insert(prop, json!({ "type": "string", "description": desc }));
            }
            let mut values = values;
            values.sort();
            values.dedup();
            properties.insert("choice".into(), json!({ "type": "string", "enum": values }));
            json!({
                "name": name,
                "description": description,
                "inputSchema": { "type": "object", "properties": properties },
                "annotations": { "readOnlyHint": hints & 1 == 1, "destructiveHint": hints & 2 == 2, "openWorldHint": hints & 4 == 4 },
            })
        })
}

/// Several modules' spec files, each made by the importer (whose output is
/// checked to load cleanly), with an alias added to every capability.
fn spec_files() -> impl Strategy<Value = Vec<SpecFile>> {
    proptest::collection::vec(proptest::collection::vec(tool(), 1..4), 1..4).prop_map(|modules| {
        let mut used = std::collections::BTreeSet::new();
        let mut files = Vec::new();
        for (m, tools) in modules.into_iter().enumerate() {
            let tools: Vec<(String, Value)> = tools
                .into_iter()
                .filter(|t| used.insert(t["name"].as_str().unwrap().to_string()))
                .map(|t| ("tool.json".to_string(), t))
                .collect();
            if tools.is_empty() {
                continue;
            }
            let module = format!("mod{m}");
            let imported = import::import(&module, &tools).expect("import runs");
            assert!(imported.findings.iter().all(|f| f.severity == capspec_codegen::Severity::Warning || f.rule.starts_with("lint/")), "{:?}", imported.findings);
            let with_aliases: String = imported
                .yaml
                .lines()
                .map(|l| match l.strip_prefix("  - name: ") {
                    Some(n) => format!("{l}\n    aliases: [{n}_alias_zz]\n"),
                    None => format!("{l}\n"),
                })
                .collect();
            files.push(SpecFile { path: format!("specs/{module}.yaml"), bytes: with_aliases.into_bytes() });
        }
        files
    })
}

fn copy(files: &[SpecFile]) -> Vec<SpecFile> {
    files.iter().map(|f| SpecFile { path: f.path.clone(), bytes: f.bytes.clone() }).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn rendering_is_deterministic_and_order_independent(files in spec_files()) {
        let forward = load::load_files(copy(&files));
        prop_assert!(unlinted(&forward.findings).is_empty(), "{:?}", forward.findings);
        let mut reversed = copy(&files);
        reversed.reverse();
        let backward = load::load_files(reversed);
        let a = render::render_all(&forward.set, &targets());
        let b = render::render_all(&backward.set, &targets());
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(a, render::render_all(&forward.set, &targets()));
    }

    #[test]
    fn generated_rust_parses_and_facades_export_exactly_the_names(files in spec_files()) {
        let loaded = load::load_files(copy(&files));
        let artifacts = render::render_all(&loaded.set, &targets());
        for a in artifacts.iter().filter(|a| a.path.ends_with(".rs")) {
            let parsed = syn::parse_file(&a.contents);
            prop_assert!(parsed.is_ok(), "{} does not parse: {:?}", a.path, parsed.err());
        }
        for module in &loaded.set.modules {
            let facade = &artifacts.iter().find(|a| a.path == format!("guest/{}.js", module.name)).unwrap().contents;
            let exported: Vec<&str> = facade.lines().filter_map(|l| l.strip_prefix("export async function ")?.split('(').next()).collect();
            let names: Vec<&str> = module.capabilities.iter().map(|c| c.name.as_str()).collect();
            prop_assert_eq!(exported, names);
        }
    }

    #[test]
    fn no_catalog_or_facade_shows_an_alias(files in spec_files()) {
        let loaded = load::load_files(copy(&files));
        for a in render::render_all(&loaded.set, &targets()) {
            if a.path.ends_with(".md") || a.path.ends_with(".js") || a.path.ends_with(".d.ts") {
                prop_assert!(!a.contents.contains("_alias_zz"), "{} shows an alias", a.path);
            }
        }
    }
}

/// A JSON value of any scalar type, an array of strings, or an object.
fn any_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..300).prop_map(Value::from),
        (-5.0f64..300.0).prop_map(Value::from),
        (-5i64..300).prop_map(|i| json!(i as f64)),
        "[a-z]{0,4}".prop_map(Value::from),
        proptest::collection::vec("[a-z]{0,3}", 0..5).prop_map(|v| json!(v)),
        Just(json!({"k": 1})),
    ]
}

/// Argument objects built from the capability's property names (and one
/// unknown key), each present or absent, each with a value of any type.
fn arguments(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    proptest::collection::vec(proptest::option::of(any_json()), keys.len()).prop_map(move |values| {
        let mut map = serde_json::Map::new();
        for (key, value) in keys.iter().zip(values) {
            if let Some(v) = value {
                map.insert((*key).to_string(), v);
            }
        }
        Value::Object(map)
    })
}

fn validator(spec: &capspec::Spec) -> capspec::__internals::Validator {
    capspec::__internals::Validator::compile(&serde_json::from_str(spec.input_schema).unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Schema ↔ serde agreement for generated `Args`: after coercion, every
    /// value the input schema accepts deserializes, and everything `Args` refuses (a wrong
    /// type, an unknown key, a missing required key) the schema refuses too.
    /// Bounds, lengths, patterns and enums the schema checks beyond that are
    /// enforced by validation, which runs first on every call.
    #[test]
    fn generated_args_agree_with_the_input_schema(
        peek in arguments(&["note_id", "max_lines", "unknown"]),
        poke in arguments(&["title", "body", "tags", "unknown"]),
        delegate in arguments(&["agent", "task_id", "task"]),
    ) {
        use capspec_tests::bindings::canary::canary;
        type Case<'a> = (&'a Value, &'a capspec::Spec, fn(&Value) -> bool);
        let cases: [Case; 3] = [
            (&peek, &canary::peek::SPEC, |v| serde_json::from_value::<canary::peek::Args>(v.clone()).is_ok()),
            (&poke, &canary::poke::SPEC, |v| serde_json::from_value::<canary::poke::Args>(v.clone()).is_ok()),
            (&delegate, &canary::delegate::SPEC, |v| serde_json::from_value::<canary::delegate::Args>(v.clone()).is_ok()),
        ];
        for (value, spec, serde_accepts) in cases {
            // As on every call: coercion first (it also turns `7.0` into `7`).
            let validator = validator(spec);
            let Ok(map) = capspec::__internals::coerce(value.clone(), &validator) else { continue };
            let value = &Value::Object(map);
            let schema_accepts = validator.validate(value).is_empty();
            // Schema accepts ⇒ Args accept (equivalently: Args refuse ⇒ the
            // schema refuses).
            if schema_accepts {
                prop_assert!(serde_accepts(value), "{}: the schema accepts {value} but Args refuse it", spec.name);
            }
            // Args accept ⇒ the schema refuses only what serde cannot
            // express: bounds, lengths, counts, patterns, enums of values —
            // and an explicit `null` for an optional property, which serde
            // reads as absent and validation (which runs first) refuses.
            if serde_accepts(value) {
                const BEYOND_SERDE: [&str; 8] = [
                    "less than the minimum", "greater than the maximum", "shorter than the minimum", "longer than the maximum",
                    "does not match the pattern", "fewer than the minimum", "more than the maximum", "is not one of",
                ];
                for v in validator.validate(value) {
                    prop_assert!(BEYOND_SERDE.iter().any(|m| v.message.contains(m)) || v.message.ends_with("got null"), "{}: Args accept {value} but the schema refuses it for a typing reason: {}: {}", spec.name, v.pointer, v.message);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A capability declared in Rust renders exactly like the same
    /// capability written in YAML: facade, `.d.ts`, catalog,
    /// `capabilities.json` (fingerprint included) and snapshot are
    /// byte-identical (reuse keys aside); only the Rust bindings differ (no
    /// `Args`).
    #[test]
    fn a_code_first_spec_renders_like_the_same_yaml_spec(t in tool()) {
        use capspec_codegen::code_first::{Exported, load_with};
        let imported = import::import("mod0", &[("tool.json".to_string(), t.clone())]).expect("import runs");
        let yaml = load::load_files(vec![SpecFile { path: "specs/mod0.yaml".into(), bytes: imported.yaml.clone().into_bytes() }]);
        prop_assert!(unlinted(&yaml.findings).is_empty(), "{:?}", yaml.findings);
        // The same module file without its capability, which comes from Rust.
        let header = &imported.yaml[..imported.yaml.find("capabilities:\n").unwrap()];
        let module_only = format!("{header}capabilities: []\n");
        let exported = Exported {
            package: "host".into(),
            module: "mod0".into(),
            name: t["name"].as_str().unwrap().into(),
            category: import::category_of(&t).0.as_str().into(),
            description: t["description"].as_str().unwrap().trim().into(),
            title: None,
            aliases: Vec::new(),
            hints: import::category_of(&t).1.set().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            // A tool whose input declares no properties takes any keys: the
            // derive says so with `open`.
            open: t["inputSchema"].get("properties").is_none(),
            rust_type: "host::Args".into(),
            file: "src/lib.rs".into(),
            line: 1,
            column: 1,
            input_schema: t["inputSchema"].clone(),
            output_schema: None,
            // The import writes properties in name order; so does a
            // derive whose fields are not listed.
            fields: Vec::new(),
            feature: None,
        };
        let code = load_with(std::path::Path::new("/nonexistent/capspec-properties"), vec![SpecFile { path: "specs/mod0.yaml".into(), bytes: module_only.into_bytes() }], vec![exported]);
        prop_assert!(unlinted(&code.findings).is_empty(), "{:?}", code.findings);
        // The reuse keys on module files' marker lines hash the module's
        // spec, which records where each capability came from: compared
        // without them.
        let without_keys = |text: String| match (text.find(" [inputs "), text.find('\n')) {
            (Some(open), Some(eol)) if open < eol => format!("{}{}", &text[..open], &text[open + text[open..].find(']').unwrap() + 1..]),
            _ => text,
        };
        let not_rust = |set| render::render_all(set, &targets()).into_iter().filter(|a| !a.path.ends_with(".rs")).map(|a| (a.path, without_keys(a.contents))).collect::<Vec<_>>();
        prop_assert_eq!(not_rust(&yaml.set), not_rust(&code.set));
    }
}

/// A capability spec with any category and any hints that category allows.
fn classified() -> impl Strategy<Value = (capspec_codegen::model::Category, Vec<(&'static str, bool)>, bool)> {
    use capspec_codegen::model::{Category, Hints};
    (0..4usize, any::<u8>(), any::<bool>()).prop_map(|(c, mask, titled)| {
        let category = Category::ALL[c];
        let hints = Hints::allowed(category).iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, h)| *h).collect();
        (category, hints, titled)
    })
}

/// How tight a gate verdict is: allow < ask < block.
fn tightness(v: capspec::Verdict) -> u8 {
    match v {
        capspec::Verdict::Allow => 0,
        capspec::Verdict::Ask => 1,
        capspec::Verdict::Block => 2,
    }
}

fn runtime_category(c: capspec_codegen::model::Category) -> capspec::Category {
    serde_json::from_value(json!(c.as_str())).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// capabilities.json → MCP tool → `import mcp` keeps the category and
    /// the hints; without `_meta`, the imported category's gate decision is
    /// never looser than the original's in any mode.
    #[test]
    fn mcp_export_then_import_keeps_category_and_hints((category, hints, titled) in classified()) {
        let hint_text = hints.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ");
        let spec = format!(
            "module: m\ndescription: M.\ncapabilities:\n  - name: tool_x\n    category: {category}\n    description: D.\n{}{}",
            if hints.is_empty() { String::new() } else { format!("    hints: {{ {hint_text} }}\n") },
            if titled { "    title: A title\n" } else { "" },
        );
        let original = load::load_files(vec![SpecFile { path: "specs/m.yaml".into(), bytes: spec.into_bytes() }]);
        prop_assert!(unlinted(&original.findings).is_empty(), "{:?}", original.findings);
        let cap = &original.set.modules[0].capabilities[0];
        let catalog = render::render_all(&original.set, &targets()).into_iter().find(|a| a.path.ends_with("capabilities.json")).unwrap();
        let entry = serde_json::from_str::<Value>(&catalog.contents).unwrap()["modules"][0]["capabilities"][0].clone();
        let mut tool = json!({
            "name": entry["wire_name"],
            "description": entry["description"],
            "inputSchema": entry["input_schema"],
            "annotations": entry["annotations"],
            "_meta": entry["_meta"],
        });
        if let Some(title) = entry.get("title") {
            tool["title"] = title.clone();
        }
        let reimport = |tool: &Value| {
            let imported = import::import("m", &[("tool.json".to_string(), tool.clone())]).unwrap();
            let loaded = load::load_files(vec![SpecFile { path: "specs/m.yaml".into(), bytes: imported.yaml.into_bytes() }]);
            assert!(unlinted(&loaded.findings).is_empty(), "{:?}", loaded.findings);
            loaded.set.modules[0].capabilities[0].clone()
        };
        let back = reimport(&tool);
        prop_assert_eq!(back.category, cap.category);
        prop_assert_eq!(back.hints.annotations(back.category), cap.hints.annotations(cap.category));
        prop_assert_eq!(&back.title, &cap.title);

        tool.as_object_mut().unwrap().remove("_meta");
        let stripped = reimport(&tool);
        // The one case the four MCP hints cannot tell apart: a sandboxed
        // execute capability (`open_world: false`) carries exactly a write
        // capability's hints, so DESIGN §4's inverse reads it as `write`,
        // which `accept_edits` allows. Only `_meta` keeps it `execute`.
        let sandboxed = cap.category == capspec_codegen::model::Category::Execute && cap.hints.open_world == Some(false);
        if sandboxed {
            prop_assert_eq!(stripped.category, capspec_codegen::model::Category::Write);
            return Ok(());
        }
        for mode in [capspec::Mode::Plan, capspec::Mode::Default, capspec::Mode::AcceptEdits, capspec::Mode::Auto] {
            let was = tightness(capspec::decide(mode, runtime_category(cap.category)));
            let now = tightness(capspec::decide(mode, runtime_category(stripped.category)));
            prop_assert!(now >= was, "{:?}: {} imported as {} loosens the gate", mode, cap.category, stripped.category);
        }
    }
}

/// A schema as real servers write them: the subset plus what zod, Pydantic
/// and hand-written servers add (titles, `$schema`, exclusive bounds, zod's
/// ±2^53−1 integer bounds, nullable `anyOf`, array variants, `propertyNames`,
/// unknown keywords), nested.
fn wild_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "integer", "minimum": -9007199254740991_i64, "maximum": 9007199254740991_i64})),
        Just(json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10})),
        Just(json!({"type": "number", "exclusiveMinimum": 0.5, "title": "Ratio"})),
        Just(json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}], "default": null})),
        Just(json!({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]})),
        Just(json!({"type": ["string", "number", "boolean"]})),
        Just(json!({"type": "string", "enum": ["a", "b"], "default": "a", "examples": ["a"]})),
        Just(json!({"type": "string", "format": "uri", "$comment": "x", "contentMediaType": "text/plain"})),
        Just(json!({"type": "boolean", "deprecated": true})),
        Just(json!({})),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::btree_map("[a-zA-Z][a-zA-Z0-9_-]{0,8}", inner.clone(), 0..4).prop_map(|props| {
                json!({"type": "object", "properties": props, "propertyNames": {"pattern": "^[a-z]"}, "additionalProperties": false})
            }),
            inner.clone().prop_map(|items| json!({"type": "array", "items": items, "minItems": 1})),
            inner.prop_map(|v| json!({"anyOf": [v, {"type": "null"}], "title": "Maybe"})),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever a server emits, the importer writes a spec file the loader
    /// accepts: every keyword is kept, translated or dropped with a warning,
    /// and every tool name becomes a capability name with the tool name kept
    /// as an alias.
    #[test]
    fn the_loader_accepts_whatever_the_importer_writes(
        names in proptest::collection::btree_set("[a-zA-Z][a-zA-Z0-9]{0,6}([-.][a-zA-Z0-9]{1,5}){0,2}", 1..5),
        inputs in proptest::collection::vec(proptest::collection::btree_map("[a-z][a-zA-Z0-9_-]{0,8}", wild_schema(), 0..5), 5),
        output in wild_schema(),
    ) {
        let tools: Vec<(String, Value)> = names
            .iter()
            .zip(&inputs)
            .map(|(name, props)| {
                (format!("{name}.json"), json!({
                    "name": name,
                    "description": "A tool.",
                    "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": props},
                    "outputSchema": {"type": "object", "properties": {"value": output.clone()}},
                    "execution": {"taskSupport": "optional"},
                    "_meta": {"vendor/x": 1},
                }))
            })
            .collect();
        let imported = import::import("wild", &tools).expect("import runs");
        // Two tool names may fold onto one capability name; the second is
        // then skipped with `import/duplicate-name`, never a load error.
        prop_assert!(imported.findings.iter().all(|f| f.severity == capspec_codegen::Severity::Warning || f.rule == "import/duplicate-name" || f.rule.starts_with("lint/")), "{:?}", imported.findings);
        let loaded = load::load_files(vec![SpecFile { path: "specs/wild.yaml".into(), bytes: imported.yaml.clone().into_bytes() }]);
        prop_assert!(unlinted(&loaded.findings).is_empty(), "{:?}\n{}", loaded.findings, imported.yaml);
        prop_assert_eq!(loaded.set.modules[0].capabilities.len(), imported.capabilities.len());
    }
}
