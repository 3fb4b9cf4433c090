//! `capspec.toml`: the project config. Every optional key has a default
//! (documented in `--help` and the README); every problem is a located
//! `config/*` finding.

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use crate::error::FatalError;
use crate::finding::Finding;
use crate::render::Targets;
use crate::rules as rule;
use crate::source::Sources;
use crate::yaml::Pos;
use capspec_names::did_you_mean;

pub mod keys;
mod reader;
mod surface;
mod upstream;
pub use reader::CONFIG_FILE;
pub(crate) use reader::path_problem;
use reader::{Entry, Reader};
pub use surface::NamedSurface;
pub use upstream::{Credentials, OAuthClient, Start, Transport, Upstream};


/// Defaults of every optional key, documented in `--help` and the README.
pub mod defaults {
    pub const RUST: &str = "src/generated";
    pub const JS: &str = "guest";
    pub const CATALOG: &str = "catalog";
    pub const SPECIFIER: &str = "@capspec/host";
    pub const BRIDGE: &str = "capspec:bridge";
    pub const SOURCES: &[&str] = &["src"];
    pub const TESTS: &[&str] = &["tests"];
    /// The snapshot defaults to this file inside the specs directory.
    pub const SNAPSHOT_NAME: &str = "categories.snap";
    /// The code-first record defaults to this file inside the specs directory.
    pub const RECORD_NAME: &str = "code-first.json";
    /// `[policy] dir`.
    pub const POLICY_DIR: &str = "policies";
}

/// `[serve]`'s identity keys: what `serve` says it is (DESIGN §10).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServeIdentity {
    /// `name`: serverInfo's name.
    pub name: Option<String>,
    /// `version`: serverInfo's version.
    pub version: Option<String>,
    /// `title`: serverInfo's human title.
    pub title: Option<String>,
    /// `instructions`: what `initialize` tells clients.
    pub instructions: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The project root: the directory holding `capspec.toml`.
    pub root: PathBuf,
    pub specs: String,
    pub snapshot: String,
    pub generate: Generate,
    pub coverage: Coverage,
    pub code_first: CodeFirstConfig,
    pub allow: Vec<Allow>,
    /// `[upstream.NAME]`: the MCP servers whose tools upstream modules pin, by name.
    pub upstreams: std::collections::BTreeMap<String, Upstream>,
    /// `[policy] dir = "policies"`: the project's Cedar policies (DESIGN
    /// §14), present when the section is or the default directory exists;
    /// with it, `sync` writes `<catalog>/capspec.cedarschema` and `check`
    /// checks the policies.
    pub policy: Option<PolicyConfig>,
    /// `[serve] name`, `version`, `title`, `instructions`: the served
    /// server's identity (DESIGN §10); each absent key keeps its default.
    pub identity: ServeIdentity,
    /// `[serve] store = "sqlite:…" | "postgres://…"`: the serve store
    /// (DESIGN §15); `None`: the default, SQLite under `.capspec/`.
    pub store: Option<String>,
    /// `[surface.NAME]`: the named surfaces `serve` offers beside `/mcp`, by name.
    pub surfaces: std::collections::BTreeMap<String, NamedSurface>,
    /// `[check] features = [[], ["vector"]]`: the cargo feature sets, each
    /// on top of a package's default features, that an impl must be
    /// compiled in to count (DESIGN §5, `coverage/unimplemented`). Default:
    /// one set, the default features.
    pub check_features: Vec<Vec<String>>,
}

/// `[policy]`: where the project's Cedar policies and their tests live.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyConfig {
    /// The policy directory (`*.cedar`, `tests.yaml`), relative to the root.
    pub dir: String,
}

/// `[code_first]`: the crates whose `#[derive(Capability)]` specs join the
/// YAML specs, and the generated file that records what they last exported.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeFirstConfig {
    /// Cargo package names, with where each is written in `capspec.toml`.
    pub packages: Vec<(String, Pos)>,
    pub record: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Generate {
    pub rust: String,
    pub js: String,
    pub catalog: String,
    pub specifier: String,
    pub bridge: String,
    /// Where `sync` writes the spec format's editor schema (JSON Schema for
    /// yaml-language-server); `None`: not written.
    pub editor_schema: Option<String>,
    /// The providers whose tool files `sync` writes
    /// (`<catalog>/tools.<provider>.json`); default none.
    pub providers: Vec<capspec_dialects::Provider>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    pub sources: Vec<String>,
    pub tests: Vec<String>,
}

/// A suppression: a rule, a target (capability or file) and a reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Allow {
    pub rule: String,
    pub capability: Option<String>,
    pub file: Option<String>,
    pub reason: String,
    /// Where the `[[allow]]` entry is written in `capspec.toml`.
    pub pos: Pos,
}

/// The result of reading `capspec.toml`: the config (when it is usable) and
/// every finding about it.
#[derive(Debug)]
pub struct ConfigLoad {
    pub config: Option<Config>,
    pub findings: Vec<Finding>,
}

/// Read `root/capspec.toml`. Exits early (as an `Err`) only when the root or
/// the file cannot be read; everything else is a finding.
pub fn load_config(root: &Path, sources: &mut Sources) -> Result<ConfigLoad, FatalError> {
    let meta = std::fs::metadata(root).map_err(|source| FatalError::UnreadableRoot { path: root.to_path_buf(), source })?;
    if !meta.is_dir() {
        return Err(FatalError::UnreadableRoot {
            path: root.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
        });
    }
    let path = root.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FatalError::NoConfig { path: root.to_path_buf() }),
        Err(source) => return Err(FatalError::UnreadableConfig { path, source }),
    };
    sources.insert(CONFIG_FILE, text.clone());
    Ok(parse_config(root, &text))
}

/// Parse config text. Paths are checked against `root`.
pub fn parse_config(root: &Path, text: &str) -> ConfigLoad {
    let mut reader = Reader { text, findings: Vec::new() };
    let table = match DeTable::parse(text) {
        Ok(t) => t,
        Err(err) => {
            let pos = err.span().map_or(Pos::default(), |s| reader.pos(s.start));
            reader.error(rule::CONFIG_PARSE, pos, format!("capspec.toml is not valid TOML: {}", err.message().trim()));
            return ConfigLoad { config: None, findings: reader.findings };
        }
    };
    let config = reader.config(root, table.get_ref());
    ConfigLoad { config, findings: reader.findings }
}


impl Reader<'_> {
    /// `providers = ["openai", "anthropic", "gemini"]`: each known, none twice.
    fn providers(&mut self, entry: Option<Entry<'_>>) -> Vec<capspec_dialects::Provider> {
        let Some((_, value)) = entry else { return Vec::new() };
        let known = capspec_dialects::Provider::ALL.map(|p| format!("\"{}\"", p.as_str())).join(", ");
        let DeValue::Array(items) = value.get_ref() else {
            let pos = self.pos(value.span().start);
            self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`providers` must be a list, e.g. [{known}]"));
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items.iter() {
            let pos = self.pos(item.span().start);
            match item.get_ref() {
                DeValue::String(s) => match capspec_dialects::Provider::parse(s) {
                    Some(p) if out.contains(&p) => self.error(rule::CONFIG_INVALID_VALUE, pos, format!("provider `{s}` is listed twice")),
                    Some(p) => out.push(p),
                    None => self.error(rule::CONFIG_INVALID_VALUE, pos, format!("unknown provider `{s}`; the providers are {known}")),
                },
                _ => self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`providers` entries are strings: {known}")),
            }
        }
        out.sort();
        out
    }

    fn config(&mut self, root: &Path, table: &DeTable<'_>) -> Option<Config> {
        self.unknown_keys(table, &keys::of(""), "capspec.toml");
        let specs = match table.get_key_value("specs") {
            None => {
                self.error(
                    rule::CONFIG_INVALID_VALUE,
                    Pos { line: 1, column: 1 },
                    "capspec.toml is missing required key `specs`; add `specs = \"specs\"` (the spec directory)".into(),
                );
                None
            }
            Some(entry) => {
                let specs = self.path(Some(entry), "specs");
                let pos = self.pos(entry.1.span().start);
                if path_problem(&specs).is_none() && !root.join(&specs).is_dir() {
                    self.error(
                        rule::CONFIG_BAD_PATH,
                        pos,
                        format!("the specs directory `{specs}` does not exist; create it or fix `specs`"),
                    );
                }
                Some(specs)
            }
        };
        let snapshot_default = format!("{}/{}", specs.as_deref().unwrap_or("specs"), defaults::SNAPSHOT_NAME);
        let snapshot = self.path(table.get_key_value("snapshot"), &snapshot_default);

        let empty = DeTable::new();
        let gen_table = self.section(table, "generate").unwrap_or(&empty);
        self.unknown_keys(gen_table, &keys::of("generate"), "[generate]");
        let generate = Generate {
            rust: self.path(gen_table.get_key_value("rust"), defaults::RUST),
            js: self.path(gen_table.get_key_value("js"), defaults::JS),
            catalog: self.path(gen_table.get_key_value("catalog"), defaults::CATALOG),
            specifier: self.string(gen_table.get_key_value("specifier"), defaults::SPECIFIER),
            bridge: self.string(gen_table.get_key_value("bridge"), defaults::BRIDGE),
            editor_schema: gen_table.get_key_value("editor_schema").map(|entry| self.path(Some(entry), "")),
            providers: self.providers(gen_table.get_key_value("providers")),
        };
        for (key, value) in [("specifier", &generate.specifier), ("bridge", &generate.bridge)] {
            if value.is_empty() || value.chars().any(|c| c.is_whitespace() || c == '"' || c == '\'' || c == '\\' || c.is_control()) {
                let pos = gen_table.get_key_value(key).map_or(Pos::default(), |(_, v)| self.pos(v.span().start));
                self.error(
                    rule::CONFIG_INVALID_VALUE,
                    pos,
                    format!("`{key} = {value:?}` must be a non-empty module specifier without spaces, quotes or backslashes"),
                );
            }
        }

        let cov_table = self.section(table, "coverage").unwrap_or(&empty);
        self.unknown_keys(cov_table, &keys::of("coverage"), "[coverage]");
        let coverage = Coverage {
            sources: self.paths(cov_table.get_key_value("sources"), defaults::SOURCES),
            tests: self.paths(cov_table.get_key_value("tests"), defaults::TESTS),
        };

        let cf_table = self.section(table, "code_first").unwrap_or(&empty);
        self.unknown_keys(cf_table, &keys::of("code_first"), "[code_first]");
        let record_default = format!("{}/{}", specs.as_deref().unwrap_or("specs"), defaults::RECORD_NAME);
        let code_first = CodeFirstConfig {
            packages: self.packages(cf_table.get_key_value("packages")),
            record: self.path(cf_table.get_key_value("record"), &record_default),
        };

        let allow = match table.get_key_value("allow") {
            None => Vec::new(),
            Some((key, value)) => match value.get_ref() {
                DeValue::Array(items) => items.iter().filter_map(|item| self.allow(item)).collect(),
                _ => {
                    let pos = self.pos(key.span().start);
                    self.error(rule::CONFIG_INVALID_VALUE, pos, "`allow` must be an array of tables (`[[allow]]`)".into());
                    Vec::new()
                }
            },
        };
        let upstreams = self.upstreams(table);
        let surfaces = self.surfaces(table);
        let policy = match self.section(table, "policy") {
            Some(policy_table) => {
                self.unknown_keys(policy_table, &keys::of("policy"), "[policy]");
                Some(PolicyConfig { dir: self.path(policy_table.get_key_value("dir"), defaults::POLICY_DIR) })
            }
            // The default directory, when it exists: no directory, no policies.
            None => root.join(defaults::POLICY_DIR).is_dir().then(|| PolicyConfig { dir: defaults::POLICY_DIR.into() }),
        };
        let mut identity = ServeIdentity::default();
        if let Some(serve) = self.section(table, "serve") {
            for (key, slot) in [("name", &mut identity.name), ("version", &mut identity.version), ("title", &mut identity.title), ("instructions", &mut identity.instructions)] {
                if let Some(entry) = serve.get_key_value(key) {
                    *slot = Some(self.string(Some(entry), ""));
                }
            }
        }
        let store = self.section(table, "serve").and_then(|serve| {
            self.unknown_keys(serve, &keys::of("serve"), "[serve]");
            let entry = serve.get_key_value("store")?;
            let url = self.string(Some(entry), "");
            if url.starts_with("sqlite:") || url.starts_with("postgres://") || url.starts_with("postgresql://") {
                Some(url)
            } else {
                let pos = self.pos(entry.1.span().start);
                self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`store = {url:?}` is neither `sqlite:PATH` nor `postgres://…`"));
                None
            }
        });
        let check_features = match self.section(table, "check") {
            Some(check) => {
                self.unknown_keys(check, &keys::of("check"), "[check]");
                self.feature_sets(check.get_key_value("features"))
            }
            None => vec![Vec::new()],
        };
        Some(Config { root: root.to_path_buf(), specs: specs?, snapshot, generate, coverage, code_first, allow, upstreams, policy, identity, store, surfaces, check_features })
    }

    /// `features = [[], ["vector"]]`: a list of cargo feature sets, each a
    /// list of feature names; none twice.
    fn feature_sets(&mut self, entry: Option<Entry<'_>>) -> Vec<Vec<String>> {
        let Some((_, value)) = entry else { return vec![Vec::new()] };
        const SHAPE: &str = "`features` must be a list of cargo feature sets, each a list of feature names, e.g. [[], [\"vector\"]]";
        let DeValue::Array(sets) = value.get_ref() else {
            let pos = self.pos(value.span().start);
            self.error(rule::CONFIG_INVALID_VALUE, pos, SHAPE.into());
            return vec![Vec::new()];
        };
        let mut out: Vec<Vec<String>> = Vec::new();
        for set in sets.iter() {
            let pos = self.pos(set.span().start);
            let DeValue::Array(names) = set.get_ref() else {
                self.error(rule::CONFIG_INVALID_VALUE, pos, SHAPE.into());
                continue;
            };
            let mut features: Vec<String> = Vec::new();
            for name in names.iter() {
                match name.get_ref() {
                    DeValue::String(s) if !s.is_empty() && !s.contains(['/', ' ', '"']) => features.push(s.to_string()),
                    _ => {
                        let pos = self.pos(name.span().start);
                        self.error(rule::CONFIG_INVALID_VALUE, pos, "a feature set's entries are the package's own feature names (no `dep:` or `crate/feature`)".into());
                    }
                }
            }
            features.sort();
            features.dedup();
            if out.contains(&features) {
                self.error(rule::CONFIG_INVALID_VALUE, pos, format!("the feature set {features:?} is listed twice in `features`"));
            } else {
                out.push(features);
            }
        }
        if out.is_empty() {
            out.push(Vec::new());
        }
        out
    }

    /// `packages = ["agent-host"]`: Cargo package names.
    fn packages(&mut self, entry: Option<Entry<'_>>) -> Vec<(String, Pos)> {
        let Some((_, value)) = entry else { return Vec::new() };
        let DeValue::Array(items) = value.get_ref() else {
            let pos = self.pos(value.span().start);
            self.error(rule::CONFIG_INVALID_VALUE, pos, "`packages` must be a list of Cargo package names".into());
            return Vec::new();
        };
        let mut out: Vec<(String, Pos)> = Vec::new();
        for item in items.iter() {
            let pos = self.pos(item.span().start);
            match item.get_ref() {
                DeValue::String(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') => {
                    if out.iter().any(|(p, _)| p == s.as_ref()) {
                        self.error(rule::CONFIG_INVALID_VALUE, pos, format!("package `{s}` is listed twice in `packages`"));
                    } else {
                        out.push((s.to_string(), pos));
                    }
                }
                _ => self.error(
                    rule::CONFIG_INVALID_VALUE,
                    pos,
                    "`packages` entries are Cargo package names (letters, digits, `-`, `_`), as `cargo test -p` takes them".into(),
                ),
            }
        }
        out
    }

    fn allow(&mut self, item: &toml::Spanned<DeValue<'_>>) -> Option<Allow> {
        let pos = self.pos(item.span().start);
        let DeValue::Table(table) = item.get_ref() else {
            self.error(rule::CONFIG_INVALID_VALUE, pos, "each `[[allow]]` entry must be a table".into());
            return None;
        };
        self.unknown_keys(table, &keys::of("allow"), "[[allow]]");
        let rule_name = self.string(table.get_key_value("rule"), "");
        let capability = table.get_key_value("capability").map(|e| self.string(Some(e), ""));
        let file = table.get_key_value("file").map(|e| self.string(Some(e), ""));
        let reason = self.string(table.get_key_value("reason"), "");
        let mut ok = true;
        if rule_name.is_empty() {
            self.error(rule::CONFIG_ALLOW_INVALID, pos, "`[[allow]]` entry has no `rule`; name the rule it suppresses".into());
            ok = false;
        } else if !rule::find(&rule_name).is_some_and(|r| r.suppressible) {
            let hint = did_you_mean(&rule_name, rule::suppressible());
            self.error(
                rule::CONFIG_ALLOW_INVALID,
                pos,
                format!("`[[allow]]` cannot suppress `{rule_name}`{hint}; only `coverage/*`, `breaking/*`, `lint/*` and `upstream/added` findings can be allowed — fix the others"),
            );
            ok = false;
        }
        if capability.is_none() && file.is_none() {
            self.error(rule::CONFIG_ALLOW_INVALID, pos, "`[[allow]]` entry has no target; add `capability = \"…\"` or `file = \"…\"`".into());
            ok = false;
        }
        if reason.trim().is_empty() {
            self.error(
                rule::CONFIG_ALLOW_MISSING_REASON,
                pos,
                format!("`[[allow]]` for `{rule_name}` has no `reason`; say why the finding does not apply"),
            );
            ok = false;
        } else if reason.to_ascii_uppercase().contains("TODO") {
            self.error(
                rule::CONFIG_ALLOW_TODO_REASON,
                pos,
                format!("`[[allow]]` for `{rule_name}` has a reason containing TODO; a suppression needs a real reason, or fix the finding"),
            );
            ok = false;
        }
        ok.then_some(Allow { rule: rule_name, capability, file, reason, pos })
    }
}

impl Targets {
    /// The targets of a `capspec.toml` that sets only `specs = "specs"`.
    pub fn defaults() -> Targets {
        Targets {
            specs: "specs".into(),
            snapshot: format!("specs/{}", defaults::SNAPSHOT_NAME),
            rust: defaults::RUST.into(),
            js: defaults::JS.into(),
            catalog: defaults::CATALOG.into(),
            specifier: defaults::SPECIFIER.into(),
            bridge: defaults::BRIDGE.into(),
            editor_schema: None,
            providers: Vec::new(),
            cedar_schema: false,
        }
    }

    /// Where a project's config puts the generated files.
    pub fn from_config(config: &Config) -> Targets {
        Targets {
            specs: config.specs.clone(),
            snapshot: config.snapshot.clone(),
            rust: config.generate.rust.clone(),
            js: config.generate.js.clone(),
            catalog: config.generate.catalog.clone(),
            specifier: config.generate.specifier.clone(),
            bridge: config.generate.bridge.clone(),
            editor_schema: config.generate.editor_schema.clone(),
            providers: config.generate.providers.clone(),
            cedar_schema: config.policy.is_some(),
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_when_only_specs_is_given() {
        let dir = std::env::temp_dir().join(format!("capspec-config-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("specs")).unwrap();
        let load = parse_config(&dir, "specs = \"specs\"\n");
        assert_eq!(load.findings, vec![]);
        let config = load.config.unwrap();
        assert_eq!(config.snapshot, "specs/categories.snap");
        assert_eq!(config.generate.rust, defaults::RUST);
        assert_eq!(config.coverage.tests, vec!["tests".to_string()]);
        assert_eq!(config.code_first.packages, vec![]);
        assert_eq!(config.code_first.record, "specs/code-first.json");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn code_first_section_is_checked() {
        let dir = std::env::temp_dir().join(format!("capspec-config-cf-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("specs")).unwrap();
        let load = parse_config(&dir, "specs = \"specs\"\n[code_first]\npackages = [\"host\", \"bad name\", \"host\", 3]\nrecord = \"../x.json\"\npackges = []\n");
        let found: Vec<(&str, u32, &str)> = load.findings.iter().map(|f| (f.rule.as_str(), f.line, f.message.as_str())).collect();
        assert_eq!(
            found,
            [
                ("config/unknown-key", 5, "unknown key `packges` in [code_first]; did you mean `packages`?"),
                ("config/invalid-value", 3, "`packages` entries are Cargo package names (letters, digits, `-`, `_`), as `cargo test -p` takes them"),
                ("config/invalid-value", 3, "package `host` is listed twice in `packages`"),
                ("config/invalid-value", 3, "`packages` entries are Cargo package names (letters, digits, `-`, `_`), as `cargo test -p` takes them"),
                ("config/bad-path", 4, "`record = \"../x.json\"` leaves the project root (`..`); paths must stay inside it"),
            ]
        );
        assert_eq!(load.config.unwrap().code_first.packages.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["host"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn path_rules() {
        assert_eq!(path_problem("a/b"), None);
        assert_eq!(path_problem("a/../b"), None);
        assert!(path_problem("../x").is_some());
        assert!(path_problem("a/../../x").is_some());
        assert!(path_problem("/etc").is_some());
    }
}
