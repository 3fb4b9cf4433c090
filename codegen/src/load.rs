//! Loading and validating spec files. This is the only module that reads spec
//! files from disk; everything after it works on the [`SpecSet`].

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value as Json;

use crate::finding::{Finding, rule};
use crate::model::{Additional, CapabilitySpec, Category, CodeOrigin, JsonType, ModuleSpec, Schema, SpecSet};
use crate::names::{did_you_mean, name_problem};
use crate::yaml::{self, Key, Node, Pos, Value};

/// Spec files larger than this are refused unread.
pub const MAX_SPEC_BYTES: u64 = 1024 * 1024;

/// Keys of a spec file's top level.
pub const MODULE_KEYS: &[&str] = &["module", "description", "capabilities"];
/// Keys of one capability entry.
pub const CAPABILITY_KEYS: &[&str] = &[
    "name",
    "category",
    "description",
    "input",
    "output",
    "user_message",
    "deferred",
    "aliases",
    "deprecated",
];
/// The supported JSON Schema keywords (DESIGN §2).
pub const SCHEMA_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "description",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "oneOf",
    "anyOf",
    "$defs",
    "$ref",
];

/// Source texts of the files findings point into, for rendering snippets.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    files: BTreeMap<String, String>,
}

impl Sources {
    pub fn insert(&mut self, file: &str, text: String) {
        self.files.insert(file.to_string(), text);
    }

    pub fn into_files(self) -> impl Iterator<Item = (String, String)> {
        self.files.into_iter()
    }

    /// The text of a 1-based line of a file, when known.
    pub fn line(&self, file: &str, line: u32) -> Option<&str> {
        let text = self.files.get(file)?;
        text.lines().nth((line as usize).checked_sub(1)?)
    }
}

/// What loading produced: the valid part of the spec set, every finding, and
/// the sources the findings point into.
#[derive(Debug, Default)]
pub struct Loaded {
    pub set: SpecSet,
    pub findings: Vec<Finding>,
    pub sources: Sources,
}

/// One spec file's contents, already read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecFile {
    /// Path relative to the project root, `/`-separated.
    pub path: String,
    pub bytes: Vec<u8>,
}

/// Walk `root/specs_dir` recursively for `.yaml`/`.yml` files, in a stable
/// order. Files over [`MAX_SPEC_BYTES`] are not read; their findings are
/// returned instead.
pub fn read_spec_dir(root: &Path, specs_dir: &str) -> (Vec<SpecFile>, Vec<Finding>) {
    let mut files = Vec::new();
    let mut findings = Vec::new();
    let dir = root.join(specs_dir);
    let walker = walkdir::WalkDir::new(&dir).follow_links(false).sort_by_file_name();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                let where_ = err.path().map(|p| relative(root, p)).unwrap_or_else(|| specs_dir.to_string());
                findings.push(Finding::error(rule::SPEC_PARSE, &where_, Pos::default(), format!("cannot read: {err}")));
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path();
        let is_yaml = matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"));
        if !is_yaml {
            continue;
        }
        let rel = relative(root, path);
        let too_big = entry.metadata().map(|m| m.len() > MAX_SPEC_BYTES).unwrap_or(false);
        if too_big {
            findings.push(Finding::error(
                rule::SPEC_PARSE,
                &rel,
                Pos::default(),
                format!("spec file is larger than {} KiB; split it into several modules", MAX_SPEC_BYTES / 1024),
            ));
            continue;
        }
        match std::fs::read(path) {
            Ok(bytes) => files.push(SpecFile { path: rel, bytes }),
            Err(err) => findings.push(Finding::error(rule::SPEC_PARSE, &rel, Pos::default(), format!("cannot read: {err}"))),
        }
    }
    (files, findings)
}

/// Path of `path` relative to `root`, `/`-separated.
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// What decoding one file produced, before names are checked across files.
struct FileResult {
    path: String,
    text: Option<String>,
    module: Option<ModuleSpec>,
    findings: Vec<Finding>,
    names: NameTable,
}

fn load_one(file: SpecFile) -> FileResult {
    let mut result = FileResult { path: file.path.clone(), text: None, module: None, findings: Vec::new(), names: NameTable::default() };
    if file.bytes.len() as u64 > MAX_SPEC_BYTES {
        result.findings.push(Finding::error(
            rule::SPEC_PARSE,
            &file.path,
            Pos::default(),
            format!("spec file is larger than {} KiB; split it into several modules", MAX_SPEC_BYTES / 1024),
        ));
        return result;
    }
    let text = match String::from_utf8(file.bytes) {
        Ok(text) => text,
        Err(err) => {
            let valid = &err.as_bytes()[..err.utf8_error().valid_up_to()];
            let valid = std::str::from_utf8(valid).expect("prefix is valid");
            let line = valid.matches('\n').count() as u32 + 1;
            let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
            result.findings.push(Finding::error(rule::SPEC_PARSE, &file.path, Pos { line, column }, "spec file is not valid UTF-8; save it as UTF-8"));
            return result;
        }
    };
    let mut decoder = Decoder { file: &file.path, findings: &mut result.findings, names: &mut result.names, code_first: false };
    result.module = match yaml::parse(&text) {
        Ok(node) => decoder.module(&node),
        Err(err) => {
            decoder.error(rule::SPEC_PARSE, err.pos, err.message);
            None
        }
    };
    result.text = Some(text);
    result
}

/// Load spec files already read into memory: parse and validate each file
/// (in parallel), then check names across files in path order. Output order
/// does not depend on input order or on thread scheduling.
pub fn load_files(files: Vec<SpecFile>) -> Loaded {
    load_files_with(files, Vec::new())
}

/// A code-first spec ready to join the YAML specs: the capability as a
/// spec-shaped node (every position is the derive's), and where it is from.
#[derive(Debug, Clone)]
pub struct CodeFirstEntry {
    pub module: String,
    pub node: Node,
    pub origin: CodeOrigin,
    /// The Rust file's text, for snippets in findings.
    pub text: Option<String>,
}

/// [`load_files`], then code-first specs join their modules: they pass the
/// same capability rules, and names are checked across both (a YAML
/// capability and a derive of the same name are `spec/duplicate-name`).
pub fn load_files_with(files: Vec<SpecFile>, code_first: Vec<CodeFirstEntry>) -> Loaded {
    let mut files = files;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let results = crate::parallel::map(files, load_one);
    let mut loaded = Loaded::default();
    let mut names = NameTable::default();
    for result in results {
        names.absorb(result.names);
        loaded.findings.extend(result.findings);
        if let Some(text) = result.text {
            loaded.sources.insert(&result.path, text);
        }
        if let Some(module) = result.module {
            loaded.set.modules.push(module);
        }
    }
    let declared: Vec<String> = loaded.set.modules.iter().map(|m| m.name.clone()).collect();
    for entry in code_first {
        let CodeFirstEntry { module, node, origin, text } = entry;
        if let Some(text) = text {
            loaded.sources.insert(&origin.file, text);
        }
        let mut decoder = Decoder { file: &origin.file, findings: &mut loaded.findings, names: &mut names, code_first: true };
        if let Some(problem) = name_problem(&module) {
            decoder.error(rule::SPEC_INVALID_NAME, node.pos, format!("invalid module name in #[capability(module = …)]: {problem}"));
            continue;
        }
        let Some(mut cap) = decoder.capability(&node, &module) else { continue };
        match loaded.set.modules.iter_mut().find(|m| m.name == module) {
            Some(m) => {
                cap.code_first = Some(origin);
                m.capabilities.push(cap);
            }
            None => {
                let hint = did_you_mean(&module, declared.iter().map(String::as_str));
                decoder.error(
                    rule::CODE_FIRST_UNKNOWN_MODULE,
                    node.pos,
                    format!(
                        "`{}` (#[derive(Capability)] on `{}`) names module `{module}`, which no spec file declares (a spec file declares a module with `module` and `description`; its `capabilities` may be empty){hint}",
                        cap.name, origin.rust_type
                    ),
                );
            }
        }
    }
    for (module, file, pos) in std::mem::take(&mut names.empty_modules) {
        if loaded.set.module(&module).is_some_and(|m| m.capabilities.is_empty()) {
            loaded.findings.push(Finding::error(
                rule::SPEC_MISSING_FIELD,
                &file,
                pos,
                "`capabilities` is empty; a module needs at least one capability, here or declared with #[derive(Capability)] in a [code_first] package",
            ));
        }
    }
    names.report(&mut loaded.findings);
    loaded.set.modules.sort_by(|a, b| a.name.cmp(&b.name));
    for module in &mut loaded.set.modules {
        module.capabilities.sort_by(|a, b| a.name.cmp(&b.name));
    }
    Finding::sort(&mut loaded.findings);
    loaded
}

/// Read and load the specs directory of a project.
pub fn load_dir(root: &Path, specs_dir: &str) -> Loaded {
    load_dir_with(root, specs_dir, Vec::new())
}

/// [`load_dir`] with code-first specs joining (see [`load_files_with`]).
pub fn load_dir_with(root: &Path, specs_dir: &str, code_first: Vec<CodeFirstEntry>) -> Loaded {
    let (files, mut read_findings) = read_spec_dir(root, specs_dir);
    let no_files = files.is_empty() && read_findings.is_empty();
    let mut loaded = load_files_with(files, code_first);
    if no_files {
        loaded.findings.push(Finding::error(
            rule::SPEC_EMPTY,
            specs_dir,
            Pos::default(),
            format!("no spec files (`*.yaml`, `*.yml`) under `{specs_dir}`; add one module spec per file"),
        ));
    }
    loaded.findings.append(&mut read_findings);
    Finding::sort(&mut loaded.findings);
    loaded
}

/// Every place a module name, capability name or alias is declared, to find
/// duplicates across files in one pass.
#[derive(Default)]
struct NameTable {
    modules: HashMap<String, Vec<(String, Pos)>>,
    capabilities: HashMap<String, Vec<NameUse>>,
    /// Modules written with `capabilities: []`: (module, file, position).
    empty_modules: Vec<(String, String, Pos)>,
}

struct NameUse {
    file: String,
    pos: Pos,
    /// "capability `m.x`" or "alias of `m.x`"
    what: String,
}

impl NameTable {
    /// Add another file's names after this table's (file order is kept).
    fn absorb(&mut self, other: NameTable) {
        let mut modules: Vec<_> = other.modules.into_iter().collect();
        modules.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, uses) in modules {
            self.modules.entry(name).or_default().extend(uses);
        }
        let mut caps: Vec<_> = other.capabilities.into_iter().collect();
        caps.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, uses) in caps {
            self.capabilities.entry(name).or_default().extend(uses);
        }
        self.empty_modules.extend(other.empty_modules);
    }

    fn report(self, findings: &mut Vec<Finding>) {
        for (name, uses) in self.modules {
            if uses.len() < 2 {
                continue;
            }
            for (i, (file, pos)) in uses.iter().enumerate() {
                let others = places(uses.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, u)| (&u.0, u.1)));
                findings.push(Finding::error(
                    rule::SPEC_DUPLICATE_NAME,
                    file,
                    *pos,
                    format!("module `{name}` is also defined at {others}; module names must be unique"),
                ));
            }
        }
        for (name, uses) in self.capabilities {
            if uses.len() < 2 {
                continue;
            }
            for (i, u) in uses.iter().enumerate() {
                let others = uses
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, o)| format!("{} ({}:{}:{})", o.what, o.file, o.pos.line, o.pos.column))
                    .collect::<Vec<_>>()
                    .join(", ");
                findings.push(Finding::error(
                    rule::SPEC_DUPLICATE_NAME,
                    &u.file,
                    u.pos,
                    format!(
                        "`{name}` ({}) is also used by {others}; capability names and aliases must be unique across all modules",
                        u.what
                    ),
                ));
            }
        }
    }
}

fn places<'a>(uses: impl Iterator<Item = (&'a String, Pos)>) -> String {
    uses.map(|(f, p)| format!("{f}:{}:{}", p.line, p.column)).collect::<Vec<_>>().join(", ")
}

struct Decoder<'a> {
    file: &'a str,
    findings: &'a mut Vec<Finding>,
    names: &'a mut NameTable,
    /// Decoding a code-first spec (named so in duplicate reports).
    code_first: bool,
}

impl Decoder<'_> {
    fn error(&mut self, rule: &str, pos: Pos, message: impl Into<String>) {
        self.findings.push(Finding::error(rule, self.file, pos, message));
    }

    /// The entries of a mapping, or a finding saying what was expected.
    fn mapping<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [(Key, Node)]> {
        match &node.value {
            Value::Map(entries) => Some(entries),
            other => {
                self.error(rule::SPEC_INVALID_VALUE, node.pos, format!("{what} must be a mapping, found {}", other.kind()));
                None
            }
        }
    }

    /// Report keys that are not in `allowed`.
    fn unknown_keys(&mut self, entries: &[(Key, Node)], allowed: &[&str], what: &str) {
        for (key, _) in entries {
            if !allowed.contains(&key.name.as_str()) {
                let hint = did_you_mean(&key.name, allowed.iter().copied());
                let allowed_list = allowed.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                let message = if hint.is_empty() {
                    format!("unknown key `{}` in {what}; allowed keys: {allowed_list}", key.name)
                } else {
                    format!("unknown key `{}` in {what}{hint}", key.name)
                };
                self.error(rule::SPEC_UNKNOWN_FIELD, key.pos, message);
            }
        }
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<String> {
        match &node.value {
            Value::String(s) => Some(s.clone()),
            other => {
                self.error(rule::SPEC_INVALID_VALUE, node.pos, format!("{what} must be a string, found {}", other.kind()));
                None
            }
        }
    }

    /// A required, non-empty string key.
    fn required_text(&mut self, entries: &[(Key, Node)], key: &str, owner: &str, owner_pos: Pos, hint: &str) -> Option<String> {
        let Some(node) = get(entries, key) else {
            self.error(rule::SPEC_MISSING_FIELD, owner_pos, format!("{owner} is missing required key `{key}`; {hint}"));
            return None;
        };
        let text = self.string(node, &format!("`{key}`"))?;
        if text.trim().is_empty() {
            self.error(rule::SPEC_MISSING_FIELD, node.pos, format!("`{key}` of {owner} is empty; {hint}"));
            return None;
        }
        Some(text)
    }

    fn module(&mut self, root: &Node) -> Option<ModuleSpec> {
        let stem = self.file.rsplit('/').next().unwrap_or(self.file);
        let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s).to_string();
        let stem_ok = match name_problem(&stem) {
            Some(problem) => {
                self.error(
                    rule::SPEC_INVALID_NAME,
                    Pos { line: 1, column: 1 },
                    format!("the module name comes from the file stem, and {problem}; rename the file"),
                );
                false
            }
            None => true,
        };
        if matches!(root.value, Value::Null) {
            self.error(
                rule::SPEC_MISSING_FIELD,
                root.pos,
                "spec file is empty; it needs `module`, `description` and `capabilities`",
            );
            return None;
        }
        let entries = self.mapping(root, "a spec file")?;
        self.unknown_keys(entries, MODULE_KEYS, "the module");
        let module_name = self.required_text(entries, "module", "the spec file", root.pos, &format!("add `module: {stem}`"));
        if let (Some(name), Some(node)) = (&module_name, get(entries, "module")) {
            if name != &stem {
                self.error(
                    rule::SPEC_MODULE_MISMATCH,
                    node.pos,
                    format!("`module: {name}` differs from the file stem `{stem}`; the module name must equal the file name"),
                );
            }
        }
        if stem_ok {
            let pos = get(entries, "module").map_or(Pos { line: 1, column: 1 }, |n| n.pos);
            self.names.modules.entry(stem.clone()).or_default().push((self.file.to_string(), pos));
        }
        let description = self.required_text(entries, "description", "the module", root.pos, "add a one-line `description`");
        let mut capabilities = Vec::new();
        match get(entries, "capabilities") {
            None => self.error(
                rule::SPEC_MISSING_FIELD,
                root.pos,
                "the module is missing required key `capabilities`; add a list with at least one capability",
            ),
            Some(node) => match &node.value {
                // Code-first specs may fill it; checked once they have joined.
                Value::Seq(items) if items.is_empty() => self.names.empty_modules.push((stem.clone(), self.file.to_string(), node.pos)),
                Value::Seq(items) => {
                    for item in items {
                        if let Some(cap) = self.capability(item, &stem) {
                            capabilities.push(cap);
                        }
                    }
                }
                other => self.error(
                    rule::SPEC_INVALID_VALUE,
                    node.pos,
                    format!("`capabilities` must be a list, found {}", other.kind()),
                ),
            },
        }
        Some(ModuleSpec { name: stem, description: description?, file: self.file.to_string(), capabilities })
    }

    fn capability(&mut self, node: &Node, module: &str) -> Option<CapabilitySpec> {
        let entries = self.mapping(node, "a capability")?;
        self.unknown_keys(entries, CAPABILITY_KEYS, "a capability");
        let name_node = get(entries, "name");
        let name = self.required_text(entries, "name", "a capability", node.pos, "add `name: <snake_case_name>`");
        let owner = match &name {
            Some(n) => format!("capability `{n}`"),
            None => "a capability".to_string(),
        };
        let mut valid = name.is_some();
        if let (Some(n), Some(name_node)) = (&name, name_node) {
            if let Some(problem) = name_problem(n) {
                self.error(rule::SPEC_INVALID_NAME, name_node.pos, format!("invalid capability name: {problem}"));
                valid = false;
            } else {
                self.names.capabilities.entry(n.clone()).or_default().push(NameUse {
                    file: self.file.to_string(),
                    pos: name_node.pos,
                    what: format!("{}capability `{module}.{n}`", if self.code_first { "code-first " } else { "" }),
                });
            }
        }
        let category = match get(entries, "category") {
            None => {
                self.error(
                    rule::SPEC_MISSING_FIELD,
                    node.pos,
                    format!("{owner} is missing required key `category`; add `category: read | write | execute | external`"),
                );
                None
            }
            Some(c) => match &c.value {
                Value::String(text) => match Category::parse(text) {
                    Some(cat) => Some(cat),
                    None => {
                        let hint = did_you_mean(text, Category::ALL.iter().map(|c| c.as_str()));
                        self.error(
                            rule::SPEC_UNKNOWN_CATEGORY,
                            c.pos,
                            format!(
                                "unknown category `{text}` for {owner}; allowed values: `read`, `write`, `execute`, `external`{hint}"
                            ),
                        );
                        None
                    }
                },
                other => {
                    self.error(
                        rule::SPEC_UNKNOWN_CATEGORY,
                        c.pos,
                        format!(
                            "category of {owner} must be one of `read`, `write`, `execute`, `external`, found {}",
                            other.kind()
                        ),
                    );
                    None
                }
            },
        };
        let description = self.required_text(entries, "description", &owner, node.pos, "describe it in one sentence first");
        let input = match get(entries, "input") {
            None => None,
            Some(input) => {
                let schema = SchemaDecoder::new(self).root(input, "/input");
                if let Some(schema) = &schema {
                    if !(schema.types == [JsonType::Object]) {
                        self.error(
                            rule::SPEC_INVALID_SCHEMA,
                            input.pos,
                            format!("`input` of {owner} must be an object schema: `type: object` with `properties` (at `/input`)"),
                        );
                    }
                }
                schema
            }
        };
        if get(entries, "input").is_some() && input.is_none() {
            valid = false;
        }
        let output = match get(entries, "output") {
            None => None,
            Some(out) => {
                let schema = SchemaDecoder::new(self).root(out, "/output");
                if schema.is_none() {
                    valid = false;
                }
                schema
            }
        };
        let user_message = match get(entries, "user_message") {
            None => None,
            Some(n) => {
                let text = self.string(n, "`user_message`");
                if let Some(text) = &text {
                    self.user_message(text, n.pos, input.as_ref(), &owner);
                }
                text
            }
        };
        let deferred = match get(entries, "deferred") {
            None => false,
            Some(n) => match n.value {
                Value::Bool(b) => b,
                ref other => {
                    self.error(rule::SPEC_INVALID_VALUE, n.pos, format!("`deferred` must be true or false, found {}", other.kind()));
                    false
                }
            },
        };
        let deprecated = match get(entries, "deprecated") {
            None => None,
            Some(n) => self.string(n, "`deprecated`"),
        };
        let mut aliases = Vec::new();
        if let Some(n) = get(entries, "aliases") {
            match &n.value {
                Value::Seq(items) => {
                    for item in items {
                        let Some(alias) = self.string(item, "an alias") else { continue };
                        if let Some(problem) = name_problem(&alias) {
                            self.error(rule::SPEC_INVALID_NAME, item.pos, format!("invalid alias: {problem}"));
                            continue;
                        }
                        self.names.capabilities.entry(alias.clone()).or_default().push(NameUse {
                            file: self.file.to_string(),
                            pos: item.pos,
                            what: format!("alias of `{module}.{}`", name.as_deref().unwrap_or("?")),
                        });
                        aliases.push(alias);
                    }
                }
                other => self.error(rule::SPEC_INVALID_VALUE, n.pos, format!("`aliases` must be a list of names, found {}", other.kind())),
            }
        }
        if !valid {
            return None;
        }
        Some(CapabilitySpec {
            name: name?,
            category: category?,
            description: description?,
            input,
            output,
            user_message,
            deferred,
            aliases,
            deprecated,
            pos: name_node.map_or(node.pos, |n| n.pos),
            code_first: None,
        })
    }

    /// `{placeholder}`s in a user message must name input properties.
    fn user_message(&mut self, text: &str, pos: Pos, input: Option<&Schema>, owner: &str) {
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                self.error(rule::SPEC_USER_MESSAGE, pos, format!("`user_message` of {owner} has a `{{` without a closing `}}`"));
                return;
            };
            let placeholder = &after[..close];
            let known = input.is_some_and(|s| s.properties.iter().any(|(p, _)| p == placeholder));
            if !known {
                let props: Vec<&str> = input.map(|s| s.properties.iter().map(|(p, _)| p.as_str()).collect()).unwrap_or_default();
                let hint = did_you_mean(placeholder, props.iter().copied());
                let message = if props.is_empty() {
                    format!("placeholder `{{{placeholder}}}` in `user_message` of {owner} names no input property ({owner} has no input properties)")
                } else {
                    let list = props.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ");
                    format!("placeholder `{{{placeholder}}}` in `user_message` of {owner} names no input property; input properties: {list}{hint}")
                };
                self.error(rule::SPEC_USER_MESSAGE, pos, message);
            }
            rest = &after[close + 1..];
        }
    }
}

fn get<'n>(entries: &'n [(Key, Node)], key: &str) -> Option<&'n Node> {
    entries.iter().find(|(k, _)| k.name == key).map(|(_, v)| v)
}

/// RFC 6901 escaping of one pointer segment.
fn pointer_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Decodes one `input`/`output` schema into the typed model, reporting every
/// unsupported keyword with its JSON pointer.
struct SchemaDecoder<'d, 'a> {
    decoder: &'d mut Decoder<'a>,
    /// `$ref`s seen, checked against `$defs` at the end of the root.
    refs: Vec<(String, Pos, String)>,
    ok: bool,
}

impl<'d, 'a> SchemaDecoder<'d, 'a> {
    fn new(decoder: &'d mut Decoder<'a>) -> Self {
        SchemaDecoder { decoder, refs: Vec::new(), ok: true }
    }

    fn error(&mut self, pos: Pos, message: String) {
        self.ok = false;
        self.decoder.error(rule::SPEC_INVALID_SCHEMA, pos, message);
    }

    fn root(mut self, node: &Node, pointer: &str) -> Option<Schema> {
        let schema = self.schema(node, pointer, true);
        let def_names: Vec<String> = schema.as_ref().map(|s| s.defs.iter().map(|(n, _)| n.clone()).collect()).unwrap_or_default();
        for (name, pos, at) in std::mem::take(&mut self.refs) {
            if !def_names.contains(&name) {
                let hint = did_you_mean(&name, def_names.iter().map(String::as_str));
                self.error(pos, format!("`$ref` at `{at}` names `#/$defs/{name}`, which is not defined{hint}"));
            }
        }
        if self.ok { schema } else { None }
    }

    fn schema(&mut self, node: &Node, pointer: &str, is_root: bool) -> Option<Schema> {
        let Value::Map(entries) = &node.value else {
            self.error(node.pos, format!("a schema must be a mapping (at `{pointer}`), found {}", node.value.kind()));
            return None;
        };
        let mut schema = Schema::default();
        for (key, value) in entries {
            let at = format!("{pointer}/{}", pointer_segment(&key.name));
            match key.name.as_str() {
                "type" => schema.types = self.types(value, &at),
                "description" => {
                    if let Value::String(s) = &value.value {
                        schema.description = Some(s.clone());
                    } else {
                        self.error(value.pos, format!("`{}` must be a string (at `{at}`)", key.name));
                    }
                }
                "properties" => {
                    if let Value::Map(props) = &value.value {
                        for (prop, prop_schema) in props {
                            let prop_at = format!("{at}/{}", pointer_segment(&prop.name));
                            if let Some(s) = self.schema(prop_schema, &prop_at, false) {
                                schema.properties.push((prop.name.clone(), s));
                            }
                        }
                    } else {
                        self.error(value.pos, format!("`properties` must be a mapping of schemas (at `{at}`)"));
                    }
                }
                "required" => schema.required = self.required(value, &at),
                "additionalProperties" => {
                    schema.additional_properties = match &value.value {
                        Value::Bool(b) => Some(Additional::Allowed(*b)),
                        Value::Map(_) => self.schema(value, &at, false).map(|s| Additional::Schema(Box::new(s))),
                        other => {
                            self.error(value.pos, format!("`additionalProperties` must be a boolean or a schema (at `{at}`), found {}", other.kind()));
                            None
                        }
                    }
                }
                "items" => {
                    if let Value::Seq(_) = value.value {
                        self.error(value.pos, format!("tuple `items` (a list of schemas) is not supported (at `{at}`); use one schema"));
                    } else {
                        schema.items = self.schema(value, &at, false).map(Box::new);
                    }
                }
                "enum" => match &value.value {
                    Value::Seq(items) if !items.is_empty() => {
                        let mut values: Vec<Json> = Vec::new();
                        for item in items {
                            let v = item.to_json();
                            if v.is_array() || v.is_object() {
                                self.error(item.pos, format!("`enum` values must be strings, numbers, booleans or null (at `{at}`)"));
                            } else if values.contains(&v) {
                                self.error(item.pos, format!("`enum` lists {v} twice (at `{at}`)"));
                            } else {
                                values.push(v);
                            }
                        }
                        schema.enum_values = Some(values);
                    }
                    _ => self.error(value.pos, format!("`enum` must be a non-empty list (at `{at}`)")),
                },
                "const" => schema.const_value = Some(value.to_json()),
                "default" => schema.default = Some(value.to_json()),
                "minimum" | "maximum" => match &value.value {
                    Value::Number(n) => {
                        if key.name == "minimum" {
                            schema.minimum = Some(n.clone());
                        } else {
                            schema.maximum = Some(n.clone());
                        }
                    }
                    _ => self.error(value.pos, format!("`{}` must be a number (at `{at}`)", key.name)),
                },
                "minLength" | "maxLength" | "minItems" | "maxItems" => {
                    let n = match &value.value {
                        Value::Number(n) => n.as_u64(),
                        _ => None,
                    };
                    match n {
                        None => self.error(value.pos, format!("`{}` must be a non-negative integer (at `{at}`)", key.name)),
                        Some(n) => match key.name.as_str() {
                            "minLength" => schema.min_length = Some(n),
                            "maxLength" => schema.max_length = Some(n),
                            "minItems" => schema.min_items = Some(n),
                            _ => schema.max_items = Some(n),
                        },
                    }
                }
                "pattern" | "format" => match &value.value {
                    Value::String(s) => {
                        if key.name == "pattern" {
                            schema.pattern = Some(s.clone());
                        } else {
                            schema.format = Some(s.clone());
                        }
                    }
                    _ => self.error(value.pos, format!("`{}` must be a string (at `{at}`)", key.name)),
                },
                "oneOf" | "anyOf" => {
                    let variants = self.variants(value, &at);
                    if key.name == "oneOf" {
                        schema.one_of = variants;
                    } else {
                        schema.any_of = variants;
                    }
                }
                "$defs" => {
                    if !is_root {
                        self.error(key.pos, format!("`$defs` is supported only at the root of `input` or `output` (found at `{at}`)"));
                    } else if let Value::Map(defs) = &value.value {
                        for (def, def_schema) in defs {
                            let def_at = format!("{at}/{}", pointer_segment(&def.name));
                            if !is_type_name(&def.name) {
                                self.error(def.pos, format!("`$defs` name `{}` must be an identifier such as `Label` (at `{def_at}`)", def.name));
                                continue;
                            }
                            if let Some(s) = self.schema(def_schema, &def_at, false) {
                                schema.defs.push((def.name.clone(), s));
                            }
                        }
                    } else {
                        self.error(value.pos, format!("`$defs` must be a mapping of schemas (at `{at}`)"));
                    }
                }
                "$ref" => match &value.value {
                    Value::String(r) => match r.strip_prefix("#/$defs/") {
                        Some(name) if !name.contains('/') => {
                            self.refs.push((name.to_string(), value.pos, at.clone()));
                            schema.reference = Some(name.to_string());
                        }
                        _ => self.error(value.pos, format!("`$ref` must point into this schema's `$defs` as `#/$defs/<Name>` (at `{at}`), found `{r}`")),
                    },
                    _ => self.error(value.pos, format!("`$ref` must be a string (at `{at}`)")),
                },
                other => {
                    let hint = did_you_mean(other, SCHEMA_KEYWORDS.iter().copied());
                    self.error(key.pos, format!("unsupported JSON Schema keyword `{other}` at `{at}`{hint}"));
                }
            }
        }
        self.consistency(&schema, node.pos, pointer, entries);
        Some(schema)
    }

    fn types(&mut self, node: &Node, at: &str) -> Vec<JsonType> {
        let one = |s: &mut Self, n: &Node| -> Option<JsonType> {
            match &n.value {
                Value::String(t) => match JsonType::parse(t) {
                    Some(ty) => Some(ty),
                    None => {
                        let hint = did_you_mean(t, JsonType::ALL.iter().map(|t| t.as_str()));
                        s.error(n.pos, format!("unknown type `{t}` (at `{at}`); allowed: string, number, integer, boolean, object, array, null{hint}"));
                        None
                    }
                },
                Value::Null => Some(JsonType::Null),
                _ => {
                    s.error(n.pos, format!("`type` must be a type name or `[T, \"null\"]` (at `{at}`)"));
                    None
                }
            }
        };
        match &node.value {
            Value::Seq(items) => {
                let types: Vec<JsonType> = items.iter().filter_map(|n| one(self, n)).collect();
                let non_null = types.iter().filter(|t| **t != JsonType::Null).count();
                let nulls = types.len() - non_null;
                if types.len() != items.len() {
                    return Vec::new();
                }
                if !(non_null == 1 && nulls == 1) {
                    self.error(node.pos, format!("a list of types must be `[T, \"null\"]` (at `{at}`); use `oneOf` for other unions"));
                    return Vec::new();
                }
                types
            }
            _ => one(self, node).into_iter().collect(),
        }
    }

    fn required(&mut self, node: &Node, at: &str) -> Vec<String> {
        let Value::Seq(items) = &node.value else {
            self.error(node.pos, format!("`required` must be a list of property names (at `{at}`)"));
            return Vec::new();
        };
        let mut names: Vec<String> = Vec::new();
        for item in items {
            match &item.value {
                Value::String(s) if names.contains(s) => self.error(item.pos, format!("`required` lists `{s}` twice (at `{at}`)")),
                Value::String(s) => names.push(s.clone()),
                _ => self.error(item.pos, format!("`required` entries must be property names (at `{at}`)")),
            }
        }
        names
    }

    fn variants(&mut self, node: &Node, at: &str) -> Option<Vec<Schema>> {
        let Value::Seq(items) = &node.value else {
            self.error(node.pos, format!("`oneOf`/`anyOf` must be a non-empty list of schemas (at `{at}`)"));
            return None;
        };
        if items.is_empty() {
            self.error(node.pos, format!("`oneOf`/`anyOf` must be a non-empty list of schemas (at `{at}`)"));
            return None;
        }
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let item_at = format!("{at}/{i}");
            if let Some(s) = self.schema(item, &item_at, false) {
                if s.single_type() == Some(JsonType::Array) {
                    self.error(item.pos, format!("`oneOf`/`anyOf` variants must be object or scalar schemas, not arrays (at `{item_at}`)"));
                }
                out.push(s);
            }
        }
        Some(out)
    }

    /// Keyword/type agreement and cross-keyword rules.
    fn consistency(&mut self, schema: &Schema, pos: Pos, pointer: &str, entries: &[(Key, Node)]) {
        let key_pos = |name: &str| entries.iter().find(|(k, _)| k.name == name).map_or(pos, |(k, _)| k.pos);
        for name in &schema.required {
            if !schema.properties.iter().any(|(p, _)| p == name) {
                let hint = did_you_mean(name, schema.properties.iter().map(|(p, _)| p.as_str()));
                self.error(key_pos("required"), format!("`required` names `{name}`, which is not a declared property (at `{pointer}/required`){hint}"));
            }
        }
        if let Some(ty) = schema.single_type() {
            let applies: &[(&str, &[JsonType])] = &[
                ("properties", &[JsonType::Object]),
                ("required", &[JsonType::Object]),
                ("additionalProperties", &[JsonType::Object]),
                ("items", &[JsonType::Array]),
                ("minItems", &[JsonType::Array]),
                ("maxItems", &[JsonType::Array]),
                ("minLength", &[JsonType::String]),
                ("maxLength", &[JsonType::String]),
                ("pattern", &[JsonType::String]),
                ("minimum", &[JsonType::Number, JsonType::Integer]),
                ("maximum", &[JsonType::Number, JsonType::Integer]),
            ];
            for (keyword, types) in applies {
                if entries.iter().any(|(k, _)| k.name == *keyword) && !types.contains(&ty) {
                    let want = types.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(" or ");
                    self.error(
                        key_pos(keyword),
                        format!("`{keyword}` applies to `type: {want}`, but the schema at `{pointer}` has `type: {}`", ty.as_str()),
                    );
                }
            }
        }
        if !schema.types.is_empty() {
            let fits = |v: &Json| schema.types.iter().any(|t| t.accepts(v));
            if let Some(values) = &schema.enum_values {
                for v in values {
                    if !fits(v) {
                        self.error(key_pos("enum"), format!("`enum` value {v} does not match the schema's type (at `{pointer}/enum`)"));
                    }
                }
            }
            if let Some(d) = &schema.default {
                if !fits(d) {
                    self.error(key_pos("default"), format!("`default` {d} does not match the schema's type (at `{pointer}/default`)"));
                }
            }
        }
        if let (Some(values), Some(d)) = (&schema.enum_values, &schema.default) {
            if !values.contains(d) {
                self.error(key_pos("default"), format!("`default` {d} is not one of the `enum` values (at `{pointer}/default`)"));
            }
        }
        let pairs = [
            ("minimum", "maximum", schema.minimum.as_ref().and_then(|n| n.as_f64()), schema.maximum.as_ref().and_then(|n| n.as_f64())),
            ("minLength", "maxLength", schema.min_length.map(|n| n as f64), schema.max_length.map(|n| n as f64)),
            ("minItems", "maxItems", schema.min_items.map(|n| n as f64), schema.max_items.map(|n| n as f64)),
        ];
        for (lo_name, hi_name, lo, hi) in pairs {
            if let (Some(lo), Some(hi)) = (lo, hi) {
                if lo > hi {
                    self.error(key_pos(lo_name), format!("`{lo_name}` ({lo}) is greater than `{hi_name}` ({hi}) at `{pointer}`"));
                }
            }
        }
    }
}

/// `$defs` names become Rust and TypeScript type names.
fn is_type_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && name.len() <= 64
}
