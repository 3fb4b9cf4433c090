//! `cargo xtask import mcp`: MCP `tools/list` entries → one capspec module
//! spec file.
//!
//! Input: files holding one tool object each, or a `{"tools": [...]}`
//! document (a directory is read in file-name order). The category is the
//! exact inverse of the export (DESIGN §4), first match wins:
//!
//! 1. `_meta["io.capspec/category"]`, when it names a category;
//! 2. `readOnlyHint: true` → `read`;
//! 3. `openWorldHint` true or absent (MCP's default is true) → `external`;
//! 4. otherwise → `write`.
//!
//! So a tool without annotations imports as `external`, never looser. Hints
//! that differ from the chosen category's defaults (absent ones taking MCP's
//! defaults) are kept in `hints` where the category allows them; the tool's
//! `title` (or `annotations.title`) becomes `title`.
//!
//! Unsupported schema keywords are dropped with a warning naming the tool and
//! the JSON pointer; invalid names and name collisions skip the tool with an
//! error. Nothing panics on bad input.

use std::collections::BTreeMap;
use std::path::Path;

mod subset;
mod write;
pub(crate) use subset::strip_unsupported;

use serde_json::{Map, Value};

use crate::finding::Finding;
use crate::model::{Annotations, Category, Hints, META_CATEGORY, ModuleSpec};
use crate::load::{self, SpecFile};
use crate::rules::{IMPORT_COLLISION, IMPORT_INVALID, IMPORT_KEYWORD, IMPORT_NAME};
use capspec_names::{alias_problem, capability_name, name_problem};
use crate::yaml::Pos;
pub use write::{written_digest, written_digests};
use write::{Edits, edited_entry, render_yaml};


/// What an import produced.
#[derive(Debug, Default)]
pub struct Imported {
    /// The spec file's text.
    pub yaml: String,
    /// Problems met while importing: invalid tools are skipped, dropped keywords are warnings.
    pub findings: Vec<Finding>,
    /// Names of the imported capabilities, in file order.
    pub capabilities: Vec<String>,
    /// Tools whose names are not capability names: (tool name, capability
    /// name). The tool name is kept as an alias, so calls by it resolve.
    pub renamed: Vec<(String, String)>,
    /// `--update`: capabilities whose description or schemas the project
    /// edited after import, kept as edited (the server's tool is unchanged).
    pub kept_edits: Vec<String>,
    /// `--update` would have overwritten an edit (the server changed the
    /// tool): nothing may be written; the findings name each one.
    pub refused: bool,
}

impl Imported {
    /// One line per renamed tool, as the import commands print them.
    pub fn rename_lines(&self) -> impl Iterator<Item = String> + '_ {
        self.renamed.iter().map(|(tool, name)| format!("renamed  `{tool}` → `{name}` (the tool name stays an alias: calls by it resolve)"))
    }
}

/// Why an import could not run at all (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read or is not JSON.
    #[error("cannot read `{path}`: {message}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// `--module` is not a valid module name (the name, the problem).
    #[error("`{0}` is not a valid module name: {1}")]
    Module(String, String),
    /// The inputs hold no tool (what was read).
    #[error("no MCP tools found in {0}")]
    Empty(String),
}

/// Read tools from files and directories.
pub fn read_tools(paths: &[&Path]) -> Result<Vec<(String, Value)>, ImportError> {
    let mut tools = Vec::new();
    for path in paths {
        let mut files = Vec::new();
        if path.is_dir() {
            for entry in walkdir::WalkDir::new(path).max_depth(1).sort_by_file_name() {
                let entry = entry.map_err(|e| ImportError::Read { path: path.display().to_string(), message: e.to_string() })?;
                if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "json") {
                    files.push(entry.path().to_path_buf());
                }
            }
        } else {
            files.push(path.to_path_buf());
        }
        for file in files {
            let label = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let text = std::fs::read_to_string(&file).map_err(|e| ImportError::Read { path: file.display().to_string(), message: e.to_string() })?;
            let value: Value = serde_json::from_str(&text).map_err(|e| ImportError::Read { path: file.display().to_string(), message: format!("not JSON: {e}") })?;
            match value.get("tools").and_then(Value::as_array) {
                Some(list) => tools.extend(list.iter().enumerate().map(|(i, t)| (format!("{label}#/tools/{i}"), t.clone()))),
                None => tools.push((label, value)),
            }
        }
    }
    Ok(tools)
}

/// The category of an MCP tool and the hints to keep, by the rule in the
/// module docs. Hints the category cannot express are returned as dropped.
pub fn category_of(tool: &Value) -> (Category, Hints, Vec<&'static str>) {
    let annotations = tool.get("annotations");
    let hint = |k: &str, mcp_default: bool| annotations.and_then(|a| a.get(k)).and_then(Value::as_bool).unwrap_or(mcp_default);
    let declared = tool.get("_meta").and_then(|m| m.get(META_CATEGORY)).and_then(Value::as_str).and_then(Category::parse);
    let category = declared.unwrap_or(if hint("readOnlyHint", false) {
        Category::Read
    } else if hint("openWorldHint", true) {
        Category::External
    } else {
        Category::Write
    });
    let defaults = Annotations::of(category);
    // MCP: destructive and idempotent hints mean something only for a tool
    // that is not read-only.
    let (destructive, idempotent) =
        if category == Category::Read { (defaults.destructive, defaults.idempotent) } else { (hint("destructiveHint", true), hint("idempotentHint", false)) };
    let seen = Annotations { read_only: defaults.read_only, destructive, idempotent, open_world: hint("openWorldHint", true) };
    let wanted = Hints::between(category, seen);
    let mut kept = Hints::default();
    let mut dropped = Vec::new();
    for (key, value) in wanted.set() {
        if Hints::allowed(category).contains(&(key, value)) {
            *kept.slot(key).expect("set() yields hint keys") = Some(value);
        } else {
            dropped.push(key);
        }
    }
    (category, kept, dropped)
}

/// How [`import_with`] writes a module beyond the plain import.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions<'a> {
    /// Write an upstream module of this `[upstream.*]` server (DESIGN §12):
    /// `upstream:`, each capability's `pin` (and `tool` where its name is
    /// not the tool's), `deferred: true` when the server lists more than
    /// [`DEFER_ABOVE`] tools.
    pub upstream: Option<&'a str>,
    /// The module as the project has it (`--update`): its description, and
    /// for each tool it already pins, the capability's name, category,
    /// hints, `deferred`, `direct`, `title` and aliases — the project's
    /// decisions — are kept; descriptions, schemas and pins are the server's.
    pub keep: Option<&'a ModuleSpec>,
    /// `--update`: what import wrote for each capability of the module,
    /// from its `# as written by import:` lines ([`written_digests`]); a
    /// capability whose content no longer has that digest was edited.
    pub written: Option<&'a BTreeMap<String, String>>,
}

/// Convert tools into one module spec.
pub fn import(module: &str, tools: &[(String, Value)]) -> Result<Imported, ImportError> {
    import_with(module, tools, ImportOptions::default())
}

/// [`import`] with options: an upstream module, and the project's decisions kept.
pub fn import_with(module: &str, tools: &[(String, Value)], options: ImportOptions<'_>) -> Result<Imported, ImportError> {
    if let Some(problem) = name_problem(module) {
        return Err(ImportError::Module(module.to_string(), problem));
    }
    if tools.is_empty() {
        return Err(ImportError::Empty("the given paths".into()));
    }
    let mut out = Imported::default();
    let mut entries = Vec::new();
    // Edited capabilities kept as edited carry their digest as import wrote it.
    let mut edits = Edits::default();
    for (source, tool) in tools {
        // Keys sorted whatever order the server or file wrote them in.
        let tool = &{
            let mut tool = tool.clone();
            tool.sort_all_objects();
            tool
        };
        let file = format!("{module}.yaml ← {source}");
        let error = |rule: &str, message: String| Finding::error(rule, &file, Pos::default(), message);
        let Some(obj) = tool.as_object() else {
            out.findings.push(error(IMPORT_INVALID, "a tool must be a JSON object".into()));
            continue;
        };
        let Some(name) = obj.get("name").and_then(Value::as_str) else {
            out.findings.push(error(IMPORT_INVALID, "the tool has no `name`".into()));
            continue;
        };
        let (tool_name, name) = match name_problem(name) {
            None => (name, name.to_string()),
            Some(problem) => match capability_name(name).filter(|n| name_problem(n).is_none()) {
                Some(renamed) if alias_problem(name).is_none() => (name, renamed),
                _ => {
                    out.findings.push(error(IMPORT_NAME, format!("tool `{name}` is skipped: {problem}, and it cannot be kept as an alias")));
                    continue;
                }
            },
        };
        let name = name.as_str();
        if out.capabilities.iter().any(|c| c == name) {
            out.findings.push(error(IMPORT_COLLISION, format!("tool `{tool_name}` is a second tool named `{name}`; it is skipped")));
            continue;
        }
        let description = obj.get("description").and_then(Value::as_str).map(str::trim).filter(|d| !d.is_empty());
        let title = obj.get("title").or_else(|| obj.get("annotations").and_then(|a| a.get("title"))).and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty());
        let Some(description) = description.or(title) else {
            out.findings.push(error(IMPORT_INVALID, format!("tool `{name}` has no description (nor title); capspec requires one")));
            continue;
        };
        let mut entry = Map::new();
        entry.insert("name".into(), Value::String(name.into()));
        if tool_name != name {
            out.renamed.push((tool_name.to_string(), name.to_string()));
            entry.insert("aliases".into(), Value::Array(vec![Value::String(tool_name.into())]));
        }
        let (category, hints, dropped) = category_of(tool);
        for key in dropped {
            out.findings.push(Finding::warning(
                IMPORT_KEYWORD,
                &file,
                Pos::default(),
                format!("tool `{name}`: its {key} hint cannot be expressed by category `{category}` and is dropped"),
            ).for_capability(name));
        }
        entry.insert("category".into(), Value::String(category.as_str().into()));
        entry.insert("description".into(), Value::String(description.into()));
        if let Some(title) = title {
            entry.insert("title".into(), Value::String(title.into()));
        }
        if !hints.set().is_empty() {
            entry.insert("hints".into(), hints.set().into_iter().map(|(k, v)| (k.to_string(), Value::Bool(v))).collect::<Map<_, _>>().into());
        }
        for (from, to) in [("inputSchema", "input"), ("outputSchema", "output")] {
            if let Some(schema) = obj.get(from) {
                let mut schema = schema.clone();
                strip_unsupported(&mut schema, "", &mut |key, at| {
                    out.findings.push(
                        Finding::warning(IMPORT_KEYWORD, &file, Pos::default(), format!("tool `{name}`: dropped unsupported keyword `{key}` at `{at}` of its {from}")).for_capability(name),
                    );
                });
                if to == "input" && schema.get("type").is_none() {
                    schema.as_object_mut().map(|m| m.insert("type".into(), Value::String("object".into())));
                }
                entry.insert(to.into(), schema);
            }
        }
        if options.upstream.is_some() {
            upstream_entry(&mut entry, tool, tool_name, options.keep, tools.len() > DEFER_ABOVE);
            edited_entry(&mut entry, tool_name, (options.keep, options.written, options.upstream), &mut edits);
        }
        out.capabilities.push(entry["name"].as_str().unwrap_or(name).to_string());
        entries.push(Value::Object(entry));
    }
    let description = match options.keep {
        Some(kept) => kept.description.clone(),
        None => format!("Tools imported from an MCP server ({} tools).", entries.len()),
    };
    out.kept_edits = std::mem::take(&mut edits.kept);
    out.refused = edits.refused;
    out.findings.append(&mut edits.findings);
    out.yaml = render_yaml(module, &description, options.upstream, &entries, &BTreeMap::new());
    if options.upstream.is_some() {
        // Each capability's content as written, digested as `--update`
        // will read it back; an edit kept as edited keeps its first digest.
        let written = load::load_files(vec![SpecFile { path: format!("{module}.yaml"), bytes: out.yaml.clone().into_bytes() }]);
        let mut digests: BTreeMap<String, String> = written.set.modules.iter().flat_map(|m| &m.capabilities).map(|c| (c.name.clone(), written_digest(c))).collect();
        digests.extend(std::mem::take(&mut edits.carried));
        out.yaml = render_yaml(module, &description, options.upstream, &entries, &digests);
    }
    // What was dropped is shown where its capability is in the written file.
    for f in out.findings.iter_mut().filter(|f| f.rule == IMPORT_KEYWORD) {
        let at = f.capability.as_deref().and_then(|c| capability_line(&out.yaml, c));
        if let Some(line) = at {
            f.file = format!("{module}.yaml");
            f.line = line;
            f.column = 5;
        }
    }
    // The result must load cleanly; anything else is reported, not hidden.
    let loaded = load::load_files(vec![SpecFile { path: format!("{module}.yaml"), bytes: out.yaml.clone().into_bytes() }]);
    // A server's `default` that does not fit its own schema is copied as
    // declared (DESIGN §2): that is the server's contract, not a finding
    // of the import.
    let declared = |f: &Finding| f.rule == crate::rules::SPEC_INVALID_SCHEMA && f.severity == crate::finding::Severity::Warning;
    out.findings.extend(loaded.findings.into_iter().filter(|f| !declared(f)));
    Ok(out)
}

/// The 1-based line of `- name: <name>` in a written module file.
fn capability_line(yaml: &str, name: &str) -> Option<u32> {
    let quoted = format!("\"{name}\"");
    yaml.lines()
        .position(|l| l.trim_start().strip_prefix("- name: ").is_some_and(|n| n == name || n == quoted))
        .map(|i| i as u32 + 1)
}

impl Imported {
    /// Point the findings located in the written module file at `path`
    /// (where it was written, relative to the root), and the report's
    /// source for them.
    pub fn written_to(&mut self, module: &str, path: &str) -> crate::source::Sources {
        let name = format!("{module}.yaml");
        for f in self.findings.iter_mut().filter(|f| f.file == name) {
            f.file = path.to_string();
        }
        let mut sources = crate::source::Sources::default();
        sources.insert(path, self.yaml.clone());
        sources
    }
}

/// The spec file: YAML whose scalars are JSON (JSON is YAML 1.2), so every
/// string is escaped by a JSON encoder, never by hand; schemas in block
/// style, one key per line (`write.rs`).
/// For an upstream module: the tool's name where the capability's differs,
/// its pin, and the project's decisions from `keep` (else `deferred` when
/// the server lists more than [`DEFER_ABOVE`] tools).
/// An upstream server listing more tools than this has them pinned
/// `deferred` (found by `tool_search`, listed by name only in the catalog);
/// a smaller one's tools are listed in full (DESIGN §12).
pub const DEFER_ABOVE: usize = 20;

fn upstream_entry(entry: &mut Map<String, Value>, tool: &Value, tool_name: &str, keep: Option<&ModuleSpec>, defer: bool) {
    let kept = keep.and_then(|m| m.capabilities.iter().find(|c| c.tool.as_deref().unwrap_or(&c.name) == tool_name));
    match kept {
        Some(c) => {
            entry.insert("name".into(), Value::String(c.name.clone()));
            entry.insert("category".into(), Value::String(c.category.as_str().into()));
            let hints: Map<String, Value> = c.hints.set().into_iter().map(|(k, v)| (k.to_string(), Value::Bool(v))).collect();
            if hints.is_empty() { entry.remove("hints") } else { entry.insert("hints".into(), hints.into()) };
            match &c.title {
                Some(title) => entry.insert("title".into(), Value::String(title.clone())),
                None => entry.remove("title"),
            };
            if c.aliases.is_empty() {
                entry.remove("aliases");
            } else {
                entry.insert("aliases".into(), c.aliases.iter().cloned().map(Value::String).collect());
            }
            if c.deferred {
                entry.insert("deferred".into(), Value::Bool(true));
            }
            if c.direct {
                entry.insert("direct".into(), Value::Bool(true));
            }
        }
        None if defer => {
            entry.insert("deferred".into(), Value::Bool(true));
        }
        None => {}
    }
    if entry["name"].as_str() != Some(tool_name) {
        entry.insert("tool".into(), Value::String(tool_name.into()));
    }
    entry.insert("pin".into(), Value::String(capspec_dialects::pin::pin(tool)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn category(tool: Value) -> (&'static str, Vec<(&'static str, bool)>) {
        let (c, h, _) = category_of(&tool);
        (c.as_str(), h.set())
    }

    #[test]
    fn category_rule_is_the_inverse_of_the_export() {
        // No annotations: MCP's defaults (open world, destructive) → external, never looser.
        assert_eq!(category(json!({})), ("external", vec![]));
        // Absent, `openWorldHint` takes MCP's default (true); a read tool keeps it.
        assert_eq!(category(json!({"annotations": {"readOnlyHint": true, "destructiveHint": true}})), ("read", vec![("open_world", true)]));
        assert_eq!(category(json!({"annotations": {"readOnlyHint": true, "openWorldHint": false}})), ("read", vec![]));
        assert_eq!(category(json!({"annotations": {"readOnlyHint": true, "openWorldHint": true}})), ("read", vec![("open_world", true)]));
        assert_eq!(category(json!({"annotations": {"destructiveHint": true, "openWorldHint": true}})), ("external", vec![]));
        assert_eq!(category(json!({"annotations": {"openWorldHint": false}})), ("write", vec![]));
        assert_eq!(category(json!({"annotations": {"openWorldHint": false, "destructiveHint": false}})), ("write", vec![("destructive", false)]));
        // `_meta` wins over the hints.
        assert_eq!(category(json!({"annotations": {"readOnlyHint": true}, "_meta": {"io.capspec/category": "execute"}})), ("execute", vec![]));
        assert_eq!(
            category(json!({"annotations": {"openWorldHint": false, "idempotentHint": true}, "_meta": {"io.capspec/category": "execute"}})),
            ("execute", vec![("idempotent", true), ("open_world", false)])
        );
    }

    #[test]
    fn hostile_text_and_bad_tools_are_reported_not_fatal() {
        let tools = vec![
            ("a.json".into(), json!({"name": "ok_tool", "description": "Quote \" and */ and \u{2028} and `${x}`\nsecond line", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}, "tags": {"type": "object", "propertyNames": {"pattern": "^a"}}}}})),
            ("b.json".into(), json!({"name": "Bad-Name", "description": "x"})),
            ("c.json".into(), json!({"name": "ok_tool", "description": "again"})),
            ("d.json".into(), json!([1, 2])),
            ("e.json".into(), json!({"name": "no_desc"})),
        ];
        let out = import("mcp", &tools).unwrap();
        assert_eq!(out.capabilities, ["ok_tool", "bad_name"]);
        assert_eq!(out.renamed, [("Bad-Name".to_string(), "bad_name".to_string())]);
        let rules: Vec<&str> = out.findings.iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(rules, [IMPORT_KEYWORD, IMPORT_COLLISION, IMPORT_INVALID, IMPORT_INVALID]);
        // A dropped keyword is shown at its capability in the written file.
        let dropped = &out.findings[0];
        assert_eq!((dropped.file.as_str(), dropped.line), ("mcp.yaml", capability_line(&out.yaml, "ok_tool").unwrap()));
        assert!(out.yaml.lines().nth(dropped.line as usize - 1).unwrap().ends_with("- name: ok_tool"), "{}", out.yaml);
        assert_eq!(dropped.message, "tool `ok_tool`: dropped unsupported keyword `propertyNames` at `/properties/tags/propertyNames` of its inputSchema");
        let loaded = load::load_files(vec![SpecFile { path: "mcp.yaml".into(), bytes: out.yaml.into_bytes() }]);
        assert!(loaded.findings.is_empty(), "{:?}", loaded.findings);
        let cap = loaded.set.modules[0].capabilities.iter().find(|c| c.name == "ok_tool").unwrap();
        assert_eq!(cap.description, "Quote \" and */ and \u{2028} and `${x}`\nsecond line");
    }

    #[test]
    fn nullable_true_is_a_union_with_null() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "nullable": true},
                "order": {"type": "string", "enum": ["asc", "desc"], "nullable": true},
                "entity": {"$ref": "#/$defs/Entity", "nullable": true, "description": "D."},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true},
                "any": {"nullable": true},
                "plain": {"type": "integer", "nullable": false}
            }
        });
        let mut dropped = Vec::new();
        strip_unsupported(&mut schema, "", &mut |k, at| dropped.push(format!("{k} at {at}")));
        assert_eq!(dropped, Vec::<String>::new());
        assert_eq!(
            schema["properties"],
            json!({
                "kind": {"type": ["string", "null"]},
                // A Rust server's `Option<Order>` takes `null` whatever the enum lists.
                "order": {"type": ["string", "null"], "enum": ["asc", "desc", null]},
                "entity": {"anyOf": [{"$ref": "#/$defs/Entity"}, {"type": "null"}], "description": "D."},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                "any": {},
                "plain": {"type": "integer"}
            })
        );
    }

    #[test]
    fn real_server_keywords_are_kept_translated_or_dropped_with_a_warning() {
        let mut schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "title": "Args",
            "properties": {
                "limit": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 101, "maximum": 50},
                "ratio": {"type": "number", "exclusiveMinimum": 0},
                "count": {"type": "integer", "minimum": -9007199254740991_i64, "maximum": 9007199254740991_i64},
                "cursor": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}], "description": "Where to go on."},
                "paths": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
                "env": {"type": "object", "propertyNames": {"pattern": "^[A-Z_]+$"}, "additionalProperties": {"type": "string"}}
            }
        });
        // As `import_with` sees it: keys sorted.
        schema.sort_all_objects();
        let mut dropped = Vec::new();
        strip_unsupported(&mut schema, "", &mut |k, at| dropped.push(format!("{k} at {at}")));
        assert_eq!(dropped, ["propertyNames at /properties/env/propertyNames", "exclusiveMinimum at /properties/ratio/exclusiveMinimum"]);
        // Kept as declared (DESIGN §2): the annotations, zod's integer
        // bounds and `anyOf [T, {type: null}]`.
        assert_eq!(
            schema,
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "title": "Args",
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                    "ratio": {"type": "number"},
                    "count": {"type": "integer", "minimum": -9007199254740991_i64, "maximum": 9007199254740991_i64},
                    "cursor": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}], "description": "Where to go on."},
                    "paths": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}}
                }
            })
        );
        // And the result loads.
        let tools = vec![("t.json".into(), json!({"name": "get-env", "description": "D.", "inputSchema": schema}))];
        let out = import("srv", &tools).unwrap();
        assert!(out.findings.is_empty(), "{:?}", out.findings);
        assert_eq!(out.renamed, [("get-env".to_string(), "get_env".to_string())]);
        assert!(out.yaml.contains("    aliases: [\"get-env\"]\n"), "{}", out.yaml);
    }
}
