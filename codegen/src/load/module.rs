//! Decoding one module's spec (a located YAML tree) into the model: the
//! module's keys, each capability's keys and rules, and the names every
//! declaration adds to the [`NameTable`].

use crate::finding::Finding;
use crate::model::{Annotations, CapabilitySpec, Category, Hints, JsonType, ModuleSpec, Schema};
use crate::rules as rule;
use crate::yaml::{self, Key, Node, Pos, Value};
use capspec_names::{alias_problem, did_you_mean, name_problem};

use super::names::{NameTable, NameUse};
use super::read::{self, SpecFile};
use super::schema;
use super::keys::{CAPABILITY_KEYS, MODULE_KEYS};

/// What decoding one file produced, before names are checked across files.
pub(super) struct FileResult {
    pub(super) path: String,
    pub(super) text: Option<String>,
    pub(super) module: Option<ModuleSpec>,
    pub(super) findings: Vec<Finding>,
    pub(super) names: NameTable,
}

pub(super) fn load_one(file: SpecFile) -> FileResult {
    let mut result = FileResult { path: file.path.clone(), text: None, module: None, findings: Vec::new(), names: NameTable::default() };
    if let Some(finding) = read::too_large(&file.path, file.bytes.len() as u64) {
        result.findings.push(finding);
        return result;
    }
    let text = match read::text(file) {
        Ok(text) => text,
        Err(finding) => {
            result.findings.push(*finding);
            return result;
        }
    };
    let path = result.path.clone();
    let mut decoder = Decoder { file: &path, findings: &mut result.findings, names: &mut result.names, code_first: false, upstream: false };
    result.module = match yaml::parse(&text) {
        Ok(node) => {
            crate::lint::tree(&path, &node, None, decoder.findings);
            decoder.module(&node)
        }
        Err(err) => {
            decoder.error(rule::SPEC_PARSE, err.pos, err.message);
            None
        }
    };
    result.text = Some(text);
    result
}

pub(super) struct Decoder<'a> {
    pub(super) file: &'a str,
    pub(super) findings: &'a mut Vec<Finding>,
    pub(super) names: &'a mut NameTable,
    /// Decoding a code-first spec (named so in duplicate reports).
    pub(super) code_first: bool,
    /// Decoding the capabilities of an upstream module (`tool` and `pin` allowed).
    pub(super) upstream: bool,
}

impl Decoder<'_> {
    pub(super) fn error(&mut self, rule: &str, pos: Pos, message: impl Into<String>) {
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
        let upstream = get(entries, "upstream").and_then(|node| {
            let server = self.string(node, "`upstream`")?;
            match name_problem(&server) {
                Some(problem) => {
                    self.error(rule::SPEC_INVALID_VALUE, node.pos, format!("`upstream: {server}` names an `[upstream.*]` server, and {problem}"));
                    None
                }
                None => Some((server, node.pos)),
            }
        });
        self.upstream = upstream.is_some();
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
        Some(ModuleSpec { name: stem, description: description?, file: self.file.to_string(), capabilities, upstream })
    }

    pub(super) fn capability(&mut self, node: &Node, module: &str) -> Option<CapabilitySpec> {
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
                self.names.capabilities.entry((module.to_string(), n.clone())).or_default().push(NameUse {
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
                let schema = schema::SchemaDecoder::new(self.file, self.findings, !self.code_first && !self.upstream).root(input, "/input");
                if let Some(schema) = &schema {
                    if schema.types != [JsonType::Object] {
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
                let schema = schema::SchemaDecoder::new(self.file, self.findings, !self.code_first && !self.upstream).root(out, "/output");
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
            Some(n) => self.flag(n, "deferred"),
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
                        if let Some(problem) = alias_problem(&alias) {
                            self.error(rule::SPEC_INVALID_NAME, item.pos, format!("invalid alias: {problem}"));
                            continue;
                        }
                        self.names.capabilities.entry((module.to_string(), alias.clone())).or_default().push(NameUse {
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
        let title = match get(entries, "title") {
            None => None,
            Some(n) => self.string(n, "`title`"),
        };
        let direct = match get(entries, "direct") {
            None => false,
            Some(n) => self.flag(n, "direct"),
        };
        let hints = match (get(entries, "hints"), category) {
            (Some(n), Some(category)) => self.hints(n, category, &owner),
            _ => Hints::default(),
        };
        let [tool, pin] = ["tool", "pin"].map(|key| {
            let node = get(entries, key)?;
            if !self.upstream {
                self.error(
                    rule::SPEC_INVALID_VALUE,
                    node.pos,
                    format!("`{key}` of {owner} belongs to upstream modules only (a module with `upstream: <server>`, written by `import mcp --upstream`)"),
                );
                return None;
            }
            let text = self.string(node, &format!("`{key}`"))?;
            if key == "pin" && !capspec_dialects::pin::is_pin(&text) {
                self.error(rule::SPEC_INVALID_VALUE, node.pos, format!("`pin` of {owner} must be `sha256:` and 64 lower-case hex digits, as `import mcp --upstream` writes it"));
                return None;
            }
            if text.is_empty() {
                self.error(rule::SPEC_INVALID_VALUE, node.pos, format!("`tool` of {owner} is empty; it names the tool on the server"));
                return None;
            }
            Some(text)
        });
        let feature = match get(entries, "feature") {
            None => None,
            Some(n) => {
                let text = self.string(n, "`feature`");
                match text {
                    Some(f) if self.upstream => {
                        self.error(rule::SPEC_INVALID_VALUE, n.pos, format!("`feature` of {owner}: an upstream module's capabilities are its server's, behind no cargo feature of this crate"));
                        let _ = f;
                        None
                    }
                    Some(f) if f.is_empty() || !f.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '.')) || f.starts_with(['-', '+', '.']) => {
                        self.error(rule::SPEC_INVALID_VALUE, n.pos, format!("`feature` of {owner} must be a cargo feature name (letters, digits, `_`, `-`), found {f:?}"));
                        None
                    }
                    other => other,
                }
            }
        };
        if !valid {
            return None;
        }
        let tool = tool.filter(|t| Some(t) != name.as_ref());
        Some(CapabilitySpec {
            tool,
            wire_name: String::new(),
            title,
            hints,
            direct,
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
            pin,
            feature,
        })
    }

    fn flag(&mut self, node: &Node, key: &str) -> bool {
        match node.value {
            Value::Bool(b) => b,
            ref other => {
                self.error(rule::SPEC_INVALID_VALUE, node.pos, format!("`{key}` must be true or false, found {}", other.kind()));
                false
            }
        }
    }

    /// `hints: { destructive, idempotent, open_world }`, each only where the
    /// category leaves it open (DESIGN §4's table).
    fn hints(&mut self, node: &Node, category: Category, owner: &str) -> Hints {
        let mut hints = Hints::default();
        let Some(entries) = self.mapping(node, "`hints`") else { return hints };
        self.unknown_keys(entries, &Hints::KEYS, "`hints`");
        let defaults = Annotations::of(category);
        for (key, value) in entries {
            let default = match key.name.as_str() {
                "destructive" => defaults.destructive,
                "idempotent" => defaults.idempotent,
                "open_world" => defaults.open_world,
                _ => continue,
            };
            let Value::Bool(b) = value.value else {
                self.error(rule::SPEC_INVALID_VALUE, value.pos, format!("`hints.{}` must be true or false, found {}", key.name, value.value.kind()));
                continue;
            };
            if b != default && !Hints::allowed(category).contains(&(key.name.as_str(), b)) {
                let allowed = Hints::allowed(category).iter().map(|(k, v)| format!("`{k}: {v}`")).collect::<Vec<_>>().join(", ");
                self.error(
                    rule::SPEC_INVALID_VALUE,
                    value.pos,
                    format!("`hints.{}: {b}` contradicts the category of {owner}: category `{category}` allows only {allowed}", key.name),
                );
                continue;
            }
            // A value equal to the category's default changes nothing.
            if b != default {
                *hints.slot(&key.name).expect("a hint key") = Some(b);
            }
        }
        hints
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

pub(super) fn get<'n>(entries: &'n [(Key, Node)], key: &str) -> Option<&'n Node> {
    entries.iter().find(|(k, _)| k.name == key).map(|(_, v)| v)
}
