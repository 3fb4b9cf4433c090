//! The MCP importer on GitHub's real tool surface
//! (`tests/fixtures/import/corpus/github-mcp-server`, MIT, with its
//! licence), and the prompt catalog against
//! the same tools as MCP JSON: smaller, and keeping every fact.

use std::path::PathBuf;

use capspec_codegen::import;
use capspec_codegen::model::{JsonType, Schema};
use capspec_testkit::TempDir;
use capspec_tests::fixtures;
use serde_json::Value;

fn corpus() -> PathBuf {
    fixtures().join("import/corpus/github-mcp-server")
}

fn tools() -> Vec<(String, Value)> {
    import::read_tools(&[corpus().as_path()]).expect("the corpus is readable")
}

/// Importing the corpus reproduces the committed fixture byte for byte, and
/// the fixture passes `check` (with its two documented suppressions).
#[test]
fn importing_github_reproduces_the_fixture() {
    let tools = tools();
    assert_eq!(tools.len(), 117);
    let imported = import::import("github", &tools).unwrap();
    assert_eq!(imported.findings, vec![], "every GitHub tool imports cleanly");
    assert_eq!(imported.capabilities.len(), 117);
    let committed = std::fs::read_to_string(fixtures().join("import/github/specs/github.yaml")).unwrap();
    assert_eq!(imported.yaml, committed, "re-run the import command in tests/fixtures/import/github/capspec.toml");

    let dir = TempDir::new("github");
    dir.write("capspec.toml", std::fs::read(fixtures().join("import/github/capspec.toml")).unwrap());
    dir.write("specs/github.yaml", &committed);
    capspec_codegen::sync(dir.path()).unwrap();
    let report = capspec_codegen::check(dir.path()).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert!(dir.path().join("catalog/CATALOG.md").is_file());
}

/// The catalog entry of a tool: from its signature line to the next entry.
fn entries(catalog: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in catalog.lines() {
        // `- category `signature`: summary`
        let signature = line.strip_prefix("- ").and_then(|l| l.split_once(' ')).filter(|(category, rest)| ["read", "write", "execute", "external"].contains(category) && rest.starts_with('`'));
        if let Some((_, rest)) = signature {
            if let Some((name, text)) = current.take() {
                out.insert(name, text);
            }
            // A signature holding backticks is fenced with more of them.
            let name = rest.trim_start_matches(['`', ' ']).split('(').next().unwrap().to_string();
            current = Some((name, String::new()));
        }
        if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    if let Some((name, text)) = current {
        out.insert(name, text);
    }
    out
}

fn catalog() -> String {
    let project = capspec_codegen::open(&fixtures().join("import/github")).unwrap();
    let artifacts = project.render().unwrap().artifacts;
    artifacts.into_iter().find(|a| a.path == "catalog/CATALOG.md").unwrap().contents
}

fn facts(schema: &Schema, path: &str, required: bool, out: &mut Vec<(String, String)>) {
    let fact = |kind: &str, text: String| (kind.to_string(), text);
    let name = path.rsplit('.').next().unwrap_or(path).to_string();
    out.push(fact("name", name.clone()));
    if !required {
        out.push(fact("optional", format!("{name}?")));
    }
    // A plain string is written as the name alone (the catalog's preamble
    // says so): the name, not followed by a type.
    let plain_string = schema.types == [JsonType::String] && schema.enum_values.is_none() && bounds(schema).next().is_none() && schema.format.is_none() && schema.pattern.is_none();
    if plain_string {
        let written = format!("{name}{}", if required { "" } else { "?" });
        out.push(fact(BARE_STRING, written));
    }
    for t in schema.types.iter().filter(|_| !plain_string) {
        let word = match t {
            JsonType::Integer => "int",
            // Objects are written `{…}` and arrays `T[]`.
            JsonType::Object => "{",
            JsonType::Array => "[]",
            // A string enum is written as its values.
            JsonType::String if schema.enum_values.is_some() => continue,
            other => other.as_str(),
        };
        out.push(fact("type", word.to_string()));
    }
    for v in schema.enum_values.iter().flatten() {
        // Plain words are written unquoted (the preamble says so).
        let word = v.as_str().filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        out.push(fact("enum", word.map_or_else(|| v.to_string(), str::to_string)));
    }
    if let Some(d) = &schema.default {
        out.push(fact("default", format!("= {d}")));
    }
    for n in bounds(schema) {
        out.push(fact("bound", n));
    }
    if let Some(d) = &schema.description {
        // Stated in the entry, or once for the module: `name`: text.
        let text = d.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(fact(&format!("description of `{name}`"), text.replace("*/", "*\\/")));
    }
    for (p, s) in &schema.properties {
        facts(s, &format!("{path}.{p}"), schema.is_required(p), out);
    }
    if let Some(items) = &schema.items {
        for (p, s) in &items.properties {
            facts(s, &format!("{path}[].{p}"), items.is_required(p), out);
        }
    }
}

/// The fact "a plain string", which the catalog writes as the name alone.
const BARE_STRING: &str = "type string (the name alone)";

fn bounds(schema: &Schema) -> impl Iterator<Item = String> + '_ {
    let numbers = [&schema.minimum, &schema.maximum].into_iter().flatten().map(|n| n.to_string());
    let counts = [schema.min_length, schema.max_length, schema.min_items, schema.max_items].into_iter().flatten().map(|n| n.to_string());
    numbers.chain(counts)
}

/// Every parameter name, type, requiredness, enum value, default, bound and
/// parameter description of every tool appears in that tool's entry.
#[test]
fn the_catalog_keeps_every_fact() {
    let project = capspec_codegen::open(&fixtures().join("import/github")).unwrap();
    let catalog = catalog();
    let entries = entries(&catalog);
    let mut checked = 0;
    for (_, cap) in project.loaded.set.capabilities() {
        let entry = entries.get(&cap.name).unwrap_or_else(|| panic!("no entry for {}", cap.name));
        assert!(entry.contains(&cap.summary()), "{}: summary", cap.name);
        let input = cap.input.as_ref().unwrap();
        let mut all = Vec::new();
        for (p, s) in &input.properties {
            facts(s, p, input.is_required(p), &mut all);
        }
        for (kind, text) in all {
            checked += 1;
            // A description several tools share is stated once for the
            // module (the entry still names the parameter).
            let shared = kind.strip_prefix("description of ").is_some_and(|name| catalog.contains(&format!("\n- {name}: {text}\n")));
            let found = match kind.as_str() {
                // The name alone: followed by a separator, never by `: type`.
                BARE_STRING => [",", "}", " /*", " ="].iter().any(|end| entry.contains(&format!("{text}{end}"))),
                _ => entry.contains(&text),
            };
            assert!(found || shared, "{}: {kind} `{text}` missing from\n{entry}", cap.name);
        }
    }
    assert!(checked > 1000, "{checked} facts checked");
}

/// The same tools as minified MCP `tools/list` JSON (name, description,
/// inputSchema, annotations), computed from the corpus: one text per tool.
fn mcp_json() -> Vec<String> {
    tools()
        .iter()
        .map(|(_, t)| {
            let mut tool = serde_json::Map::new();
            for key in ["name", "description", "inputSchema", "annotations"] {
                if let Some(v) = t.get(key) {
                    tool.insert(key.into(), v.clone());
                }
            }
            let mut tool = Value::Object(tool);
            // Keys sorted, whatever order this build's serde_json keeps.
            tool.sort_all_objects();
            serde_json::to_string(&tool).unwrap()
        })
        .collect()
}

/// The catalog against the MCP JSON, in characters and in o200k_base
/// tokens (the tokenizer of current OpenAI models). The goal is ≤ 0.60 in
/// tokens with every fact kept (`the_catalog_keeps_every_fact`).
#[test]
fn the_catalog_is_smaller_than_the_json() {
    let json = mcp_json();
    let catalog = catalog();
    let chars = catalog.chars().count() as f64 / json.iter().map(|t| t.chars().count()).sum::<usize>() as f64;
    let bpe = tiktoken_rs::o200k_base().expect("the o200k_base table is built in");
    let json_tokens: usize = json.iter().map(|t| bpe.encode_ordinary(t).len()).sum();
    let catalog_tokens = bpe.encode_ordinary(&catalog).len();
    let ratio = catalog_tokens as f64 / json_tokens as f64;
    eprintln!("catalog {catalog_tokens} tokens, MCP JSON {json_tokens} tokens, ratio {ratio:.3} (characters: {chars:.3})");
    assert!(ratio <= 0.60, "catalog {catalog_tokens} / JSON {json_tokens} tokens = {ratio:.3}");
}

/// The reference MCP servers' real `tools/list` (collected over stdio with
/// the official TypeScript SDK; `tests/fixtures/import/corpus/
/// mcp-reference-servers`, with its licence) import as they are: every
/// tool, names with `-` renamed with the tool name kept as an alias, and the
/// result passes `check` after `sync`. The figures are pinned.
#[test]
fn reference_mcp_servers_import_as_they_are() {
    let dir = fixtures().join("import/corpus/mcp-reference-servers");
    let mut report = String::from("server | tools | imported | renamed | warnings | catalog bytes / tools JSON bytes\n");
    for server in ["server-everything", "server-filesystem", "server-memory", "server-sequential-thinking"] {
        let file = dir.join(format!("{server}.json"));
        let tools = import::read_tools(&[file.as_path()]).unwrap();
        let module = capspec_names::capability_name(server).unwrap();
        let imported = import::import(&module, &tools).unwrap();
        assert!(imported.findings.iter().all(|f| f.severity == capspec_codegen::Severity::Warning), "{server}: {:?}", imported.findings);
        assert_eq!(imported.capabilities.len(), tools.len(), "{server}: every tool imports");
        for (tool, name) in &imported.renamed {
            let entry = &imported.yaml[imported.yaml.find(&format!("  - name: {name}\n")).unwrap()..];
            assert!(entry.lines().take(5).any(|l| l == format!("    aliases: [\"{tool}\"]")), "{server}: `{tool}` stays an alias of `{name}`");
        }
        // The result is a project `sync` writes and `check` passes.
        let project = TempDir::new("import-reference");
        let allow = |rule: &str| format!("\n[[allow]]\nrule = \"{rule}\"\nfile = \"specs/{module}.yaml\"\nreason = \"an imported MCP surface: the server implements and tests these tools\"\n");
        project.write("capspec.toml", format!("specs = \"specs\"\n{}{}", allow("coverage/unimplemented"), allow("coverage/untested")));
        project.write(&format!("specs/{module}.yaml"), &imported.yaml);
        capspec_codegen::sync(project.path()).unwrap();
        let checked = capspec_codegen::check(project.path()).unwrap();
        assert!(checked.findings.is_empty(), "{server}: {:?}", checked.findings);
        let catalog = project.read(&format!("catalog/{module}.md"));
        let json = serde_json::to_string(&serde_json::json!({"tools": tools.iter().map(|(_, t)| t).collect::<Vec<_>>()})).unwrap();
        report.push_str(&format!(
            "{server} | {} | {} | {} | {} | {:.2}\n",
            tools.len(),
            imported.capabilities.len(),
            imported.renamed.len(),
            imported.findings.len(),
            catalog.len() as f64 / json.len() as f64
        ));
    }
    insta::assert_snapshot!(report);
}

/// What the server accepts, capspec accepts; what it refuses, capspec
/// refuses: each input schema shape real servers' libraries emit (rmcp 0.x
/// with schemars 0.8 in both its settings, rmcp with schemars 1.x, zod,
/// pydantic), imported as a tool and validated as `invoke` validates, over
/// values whose verdicts JSON Schema gives. `nullable: true` (which the
/// import used to drop, refusing the `null` the server's own description
/// asks for) is a union with `null`, as `anyOf [T, null]` is.
#[test]
fn imports_keep_the_input_contract_of_real_schema_shapes() {
    use capspec::__internals::{Objects, Validator};
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(fixtures().join("import/shapes/shapes.json")).unwrap()).unwrap();
    let mut checked = 0;
    for shape in doc["shapes"].as_array().unwrap() {
        let emitter = shape["emitter"].as_str().unwrap();
        let tool = serde_json::json!({"name": "probe", "description": "A probe.", "inputSchema": shape["schema"]});
        let imported = import::import("shapes", &[("probe.json".to_string(), tool)]).unwrap();
        assert_eq!(imported.findings, vec![], "{emitter}: nothing dropped");
        let loaded = capspec_codegen::load::load_files(vec![capspec_codegen::load::SpecFile { path: "specs/shapes.yaml".into(), bytes: imported.yaml.into_bytes() }]);
        // Loaded as a spec of the project's own, a `default` that does not
        // fit its schema is a warning (it is never applied), nothing more.
        assert!(loaded.findings.iter().all(|f| f.rule == "spec/invalid-schema" && f.severity == capspec_codegen::Severity::Warning), "{emitter}: {:?}", loaded.findings);
        let schema = capspec_codegen::render::input_schema_json(&loaded.set.modules[0].capabilities[0]);
        let validator = Validator::compile_with(&schema, Objects::Closed).unwrap_or_else(|e| panic!("{emitter}: {e:?}"));
        for case in shape["cases"].as_array().unwrap() {
            // As `invoke` does: defaults first (only those valid against
            // their own property's schema), then validation.
            let mut data = case["data"].clone();
            validator.apply_defaults(&mut data);
            let violations = validator.validate(&data);
            assert_eq!(violations.is_empty(), case["valid"].as_bool().unwrap(), "{emitter}: {} → {violations:?}\nimported as {schema}", case["data"]);
            checked += 1;
        }
    }
    assert!(checked >= 41, "{checked}");
}

/// The shapes' tools as one module, in the order of `shapes.json`; their
/// import is the committed `shapes/specs/shapes.yaml`, whose Rust bindings
/// `build.rs` renders (`capspec_tests::bindings::shapes`).
fn shape_tools(doc: &Value) -> Vec<(String, Value)> {
    let shapes = doc["shapes"].as_array().unwrap();
    assert_eq!(shapes.len(), capspec_tests::shapes::TOOLS.len(), "a tool name for each shape");
    shapes.iter().zip(capspec_tests::shapes::TOOLS).map(|(shape, name)| (format!("{name}.json"), serde_json::json!({"name": name, "description": shape["emitter"], "inputSchema": shape["schema"]}))).collect()
}

/// What each original server accepted, capspec accepts, and what it
/// refused, capspec refuses — through `invoke` and the Rust binding
/// generated from the imported spec: an accepted call reaches its impl with
/// the arguments the binding parsed (an omitted `default: null` property is
/// `None`, never a refused `null`); a refused one never does.
#[test]
fn an_imported_spec_and_its_generated_binding_take_what_the_server_took() {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(fixtures().join("import/shapes/shapes.json")).unwrap()).unwrap();
    let imported = import::import("shapes", &shape_tools(&doc)).unwrap();
    assert_eq!(imported.findings, vec![], "nothing dropped");
    let committed = fixtures().join("import/shapes/specs/shapes.yaml");
    if std::env::var_os("CAPSPEC_UPDATE_FIXTURES").is_some() {
        std::fs::write(&committed, &imported.yaml).unwrap();
    }
    assert_eq!(imported.yaml, std::fs::read_to_string(&committed).unwrap(), "the committed import is stale: run with CAPSPEC_UPDATE_FIXTURES=1");

    use capspec_tests::shapes::numbers_as_floats;
    let registry = capspec::Registry::new(capspec_tests::bindings::shapes::MODULES).unwrap();
    let mounted = registry.mount_all();
    let mut checked = 0;
    for (shape, name) in doc["shapes"].as_array().unwrap().iter().zip(capspec_tests::shapes::TOOLS) {
        for case in shape["cases"].as_array().unwrap() {
            let run = capspec::Run::new(capspec::Gate::headless(capspec::Mode::Auto, "shapes test"));
            let said = capspec::testing::block_on(mounted.invoke(&run, &format!("shapes.{name}"), case["data"].clone()));
            match (case["valid"].as_bool().unwrap(), said) {
                (true, Ok(parsed)) => {
                    let expected = capspec_tests::shapes::expected(name, &case["data"]);
                    assert_eq!(numbers_as_floats(&parsed), numbers_as_floats(&expected), "{name}: {}", case["data"]);
                }
                (false, Err(e)) => assert_eq!(e.code, capspec::ErrorCode::InvalidArguments, "{name}: {}: {e}", case["data"]),
                (valid, said) => panic!("{name}: {} (valid: {valid}) → {said:?}", case["data"]),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 41);

    // schemars' documented unit enum (`oneOf` of string constants, each
    // with its doc) is bound as a Rust enum, not as strings.
    use capspec_tests::bindings::shapes::shapes::search_notes::Matching;
    assert_eq!(serde_json::from_value::<Matching>(serde_json::json!("prefix")).unwrap(), Matching::Prefix);
    assert!(serde_json::from_value::<Matching>(serde_json::json!("fuzzy")).is_err());
}

/// The verdicts the round trip above holds capspec to are JSON Schema's:
/// ajv (with OpenAPI's `nullable`) gives every one of them.
#[test]
fn the_shapes_verdicts_are_json_schemas() {
    let shapes = fixtures().join("import/shapes/shapes.json");
    let Some(said) = capspec_testkit::node_script("shapes.mjs", "ajv", &[shapes.as_os_str()]) else { return };
    assert_eq!(said, "ajv agrees with all 41 verdicts");
}
