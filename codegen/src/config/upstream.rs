//! `[upstream.NAME]` (DESIGN §3): an MCP server whose tools are the
//! capabilities of the upstream module that names it. Read here; started
//! only by the commands that say so (`import mcp --upstream`, `check
//! --upstream`, `serve`) — a plain `check` never starts a server.

use std::collections::BTreeMap;

use toml::de::{DeTable, DeValue};

use super::reader::Reader;
use crate::rules as rule;
use crate::yaml::Pos;

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct Upstream {
    /// The key of `[upstream.NAME]`, which an upstream module's `upstream:` names.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// When the runtime starts it.
    pub start: Start,
    /// Per call (and for connecting and listing), in milliseconds.
    pub timeout_ms: u64,
    /// Where its table is written in `capspec.toml`.
    pub pos: Pos,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        /// Its argv: the program, then its arguments.
        command: Vec<String>,
        /// Added to the child's environment.
        env: BTreeMap<String, String>,
        /// Its working directory, relative to the project root.
        cwd: Option<String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// The environment variable holding the bearer token, read at start.
        token_env: Option<String>,
        /// `auth = "oauth"`: OAuth 2.1 with a stored log-in (DESIGN §12).
        oauth: Option<OAuthClient>,
    },
}

/// How an `auth = "oauth"` server's client is identified.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthClient {
    /// `client_id`: a client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// `client_metadata_url`: a Client ID Metadata Document the project publishes.
    pub client_metadata_url: Option<String>,
    /// `scopes`: what to ask for; empty, what the server's metadata names.
    pub scopes: Vec<String>,
    /// `credentials`: whose log-in a call sends.
    pub credentials: Credentials,
}

/// Whose log-in an `auth = "oauth"` server's calls send (DESIGN §12).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Credentials {
    /// `"operator"`: the one `auth login`, for every call.
    #[default]
    Operator,
    /// `"per-user"`: each principal's own, authorized once in the browser
    /// and kept sealed in the serve store; the operator's log-in only pins
    /// and serves `local`.
    PerUser,
}

impl Credentials {
    /// As `capspec.toml` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Credentials::Operator => "operator",
            Credentials::PerUser => "per-user",
        }
    }
}

/// When the runtime starts a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// At mount, concurrently with the others.
    Eager,
    /// On its first call; its catalog comes from its pins.
    Lazy,
}

/// `timeout_ms` unless set.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;

/// The keys only an `auth = "oauth"` server takes.
const OAUTH_KEYS: [&str; 4] = ["client_id", "client_metadata_url", "scopes", "credentials"];

impl Reader<'_> {
    /// Every `[upstream.NAME]` table; a broken one is reported and left out.
    pub(super) fn upstreams(&mut self, table: &DeTable<'_>) -> BTreeMap<String, Upstream> {
        let mut out = BTreeMap::new();
        let Some(section) = self.section(table, "upstream") else { return out };
        for (key, value) in section.iter() {
            let name = key.get_ref().to_string();
            let pos = self.pos(key.span().start);
            let DeValue::Table(server) = value.get_ref() else {
                self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`upstream.{name}` must be a table (`[upstream.{name}]`)"));
                continue;
            };
            if let Some(problem) = capspec_names::name_problem(&name) {
                self.error(rule::CONFIG_INVALID_VALUE, pos, format!("`[upstream.{name}]`: an upstream's name is what its module's `upstream:` names, and {problem}"));
                continue;
            }
            if let Some(upstream) = self.upstream(&name, server, pos) {
                out.insert(name, upstream);
            }
        }
        out
    }

    fn upstream(&mut self, name: &str, server: &DeTable<'_>, pos: Pos) -> Option<Upstream> {
        let section = format!("[upstream.{name}]");
        self.unknown_keys(server, &super::keys::of("upstream"), &section);
        let transport = match (server.get_key_value("command"), server.get_key_value("url")) {
            (Some(_), Some((key, _))) => {
                let at = self.pos(key.span().start);
                self.error(rule::CONFIG_INVALID_VALUE, at, format!("{section} has both `command` (stdio) and `url` (HTTP); keep one"));
                return None;
            }
            (None, None) => {
                self.error(rule::CONFIG_INVALID_VALUE, pos, format!("{section} needs `command = [\"program\", \"arg\", …]` (stdio) or `url = \"https://…/mcp\"` (HTTP)"));
                return None;
            }
            (Some((_, command)), None) => {
                let at = self.pos(command.span().start);
                let argv: Option<Vec<String>> = match command.get_ref() {
                    DeValue::Array(items) => items.iter().map(|i| if let DeValue::String(s) = i.get_ref() { Some(s.to_string()) } else { None }).collect(),
                    _ => None,
                };
                let Some(argv) = argv.filter(|a| a.first().is_some_and(|p| !p.is_empty())) else {
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`command` of {section} must be a non-empty list of strings: the program, then its arguments"));
                    return None;
                };
                if let Some((key, _)) = ["auth"].iter().chain(&OAUTH_KEYS).find_map(|k| server.get_key_value(*k)) {
                    let at = self.pos(key.span().start);
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`{}` of {section}: OAuth is for servers reached over HTTP (`url = \"https://…/mcp\"`), not a child process", key.get_ref()));
                    return None;
                }
                let env = self.env(server, &section)?;
                let cwd = server.get_key_value("cwd").map(|e| self.path(Some(e), "."));
                Transport::Stdio { command: argv, env, cwd }
            }
            (None, Some(entry)) => {
                let url = self.string(Some(entry), "");
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    let at = self.pos(entry.1.span().start);
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`url` of {section} must be an http:// or https:// URL"));
                    return None;
                }
                let token_env = server.get_key_value("token_env").map(|e| self.string(Some(e), ""));
                let oauth = self.oauth(server, &section, token_env.is_some())?;
                Transport::Http { url, token_env, oauth }
            }
        };
        let start = match server.get_key_value("start") {
            None => Start::Eager,
            Some(entry) => match self.string(Some(entry), "eager").as_str() {
                "eager" => Start::Eager,
                "lazy" => Start::Lazy,
                other => {
                    let at = self.pos(entry.1.span().start);
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`start = {other:?}` in {section}: it is \"eager\" or \"lazy\""));
                    Start::Eager
                }
            },
        };
        let timeout_ms = match server.get_key_value("timeout_ms") {
            None => DEFAULT_TIMEOUT_MS,
            Some((_, value)) => match value.get_ref() {
                DeValue::Integer(i) if i.as_str().parse::<u64>().is_ok_and(|n| n > 0) => i.as_str().parse().unwrap_or(DEFAULT_TIMEOUT_MS),
                _ => {
                    let at = self.pos(value.span().start);
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`timeout_ms` of {section} must be a positive integer (milliseconds)"));
                    DEFAULT_TIMEOUT_MS
                }
            },
        };
        Some(Upstream { name: name.to_string(), transport, start, timeout_ms, pos })
    }

    /// `auth = "oauth"` and the keys that go with it.
    fn oauth(&mut self, server: &DeTable<'_>, section: &str, has_token_env: bool) -> Option<Option<OAuthClient>> {
        let Some(entry) = server.get_key_value("auth") else {
            if let Some((key, _)) = OAUTH_KEYS.iter().find_map(|k| server.get_key_value(*k)) {
                let at = self.pos(key.span().start);
                self.error(rule::CONFIG_INVALID_VALUE, at, format!("`{}` of {section} is for OAuth: add `auth = \"oauth\"`", key.get_ref()));
                return None;
            }
            return Some(None);
        };
        let at = self.pos(entry.1.span().start);
        let auth = self.string(Some(entry), "");
        if auth != "oauth" {
            self.error(rule::CONFIG_INVALID_VALUE, at, format!("`auth = {auth:?}` in {section}: the one value is \"oauth\" (a static bearer token is `token_env`)"));
            return None;
        }
        if has_token_env {
            self.error(rule::CONFIG_INVALID_VALUE, at, format!("{section} has both `token_env` and `auth = \"oauth\"`; keep one"));
            return None;
        }
        let client_id = server.get_key_value("client_id").map(|e| self.string(Some(e), "")).filter(|s| !s.is_empty());
        let client_metadata_url = match server.get_key_value("client_metadata_url") {
            None => None,
            Some(entry) => {
                let url = self.string(Some(entry), "");
                if !url.starts_with("https://") || url.trim_start_matches("https://").trim_end_matches('/').find('/').is_none() {
                    let at = self.pos(entry.1.span().start);
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`client_metadata_url` of {section} must be an https:// URL with a path (the client's metadata document)"));
                    return None;
                }
                Some(url)
            }
        };
        let scopes = match server.get_key_value("scopes") {
            None => Vec::new(),
            Some((_, value)) => {
                let list: Option<Vec<String>> = match value.get_ref() {
                    DeValue::Array(items) => items.iter().map(|i| if let DeValue::String(s) = i.get_ref() { Some(s.to_string()).filter(|s| !s.is_empty() && !s.contains(' ')) } else { None }).collect(),
                    _ => None,
                };
                let Some(list) = list else {
                    let at = self.pos(value.span().start);
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`scopes` of {section} must be a list of scope names without spaces"));
                    return None;
                };
                list
            }
        };
        let credentials = match server.get_key_value("credentials") {
            None => Credentials::Operator,
            Some(entry) => match self.string(Some(entry), "").as_str() {
                "operator" => Credentials::Operator,
                "per-user" => Credentials::PerUser,
                other => {
                    let at = self.pos(entry.1.span().start);
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`credentials = {other:?}` in {section}: it is \"operator\" (the one `auth login`, for every call) or \"per-user\" (each person's own)"));
                    return None;
                }
            },
        };
        Some(Some(OAuthClient { client_id, client_metadata_url, scopes, credentials }))
    }

    fn env(&mut self, server: &DeTable<'_>, section: &str) -> Option<BTreeMap<String, String>> {
        let Some((_, value)) = server.get_key_value("env") else { return Some(BTreeMap::new()) };
        let at = self.pos(value.span().start);
        let DeValue::Table(table) = value.get_ref() else {
            self.error(rule::CONFIG_INVALID_VALUE, at, format!("`env` of {section} must be a table of strings (`env = {{ LOG_LEVEL = \"warn\" }}`)"));
            return None;
        };
        let mut out = BTreeMap::new();
        for (k, v) in table.iter() {
            match v.get_ref() {
                DeValue::String(s) => {
                    out.insert(k.get_ref().to_string(), s.to_string());
                }
                _ => {
                    let at = self.pos(v.span().start);
                    self.error(rule::CONFIG_INVALID_VALUE, at, format!("`env.{}` of {section} must be a string", k.get_ref()));
                    return None;
                }
            }
        }
        Some(out)
    }
}
