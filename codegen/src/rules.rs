//! The one rule table: every rule id capspec reports, with its one-line
//! summary and whether an `[[allow]]` entry may suppress it. Findings, the
//! SARIF rule metadata, `check --help` and the suppression check all read
//! this table, and so do `explain` and the book's rules reference.

// The summaries are plain text shown in `--help` and SARIF as well: their
// brackets (`[[allow]]`, `[code_first]`) are not doc links.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

/// One rule: its id (`family/name`), what it reports, and whether
/// `[[allow]]` can suppress it (only `coverage/*`, `breaking/*`, `upstream/added`, `policy/unreachable` and
/// `lint/*` can: spec, config and drift findings are fixed, not explained).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The id findings carry, e.g. `spec/parse`.
    pub id: &'static str,
    /// One line saying when the rule fires.
    pub summary: &'static str,
    /// Whether an `[[allow]]` entry may suppress its findings.
    pub suppressible: bool,
}

macro_rules! rules {
    ($($name:ident = $id:literal, $suppressible:literal, $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub const $name: &str = $id;
        )*

        /// Every rule, in report-family order.
        pub const ALL: &[Rule] = &[$(Rule { id: $id, summary: $summary, suppressible: $suppressible },)*];
    };
}

rules! {
    SPEC_PARSE = "spec/parse", false, "YAML syntax error, non-UTF-8 text, file too large, alias bomb, nesting too deep";
    SPEC_MISSING_FIELD = "spec/missing-field", false, "a required key is absent";
    SPEC_UNKNOWN_FIELD = "spec/unknown-field", false, "a key the spec format does not define";
    SPEC_UNKNOWN_CATEGORY = "spec/unknown-category", false, "category is not one of read/write/execute/external";
    SPEC_INVALID_NAME = "spec/invalid-name", false, "bad module or capability name, a reserved word, a bad alias, or a wire name over 64 characters";
    SPEC_DUPLICATE_NAME = "spec/duplicate-name", false, "a module name, a name or alias within one module, or a wire name used twice (every place is reported)";
    SPEC_MODULE_MISMATCH = "spec/module-mismatch", false, "`module:` differs from the file stem";
    SPEC_INVALID_SCHEMA = "spec/invalid-schema", false, "malformed or unsupported JSON Schema (keyword and pointer named)";
    SPEC_USER_MESSAGE = "spec/user-message", false, "a user_message placeholder that names no input property";
    SPEC_INVALID_VALUE = "spec/invalid-value", false, "a spec key holds the wrong kind of value, or a hint its category does not allow";
    SPEC_EMPTY = "spec/empty", false, "the specs directory holds no spec file";
    DRIFT_STALE = "drift/stale", false, "a generated file differs from what the specs produce";
    DRIFT_MISSING = "drift/missing", false, "a generated file is absent";
    DRIFT_ORPHAN = "drift/orphan", false, "a generated file that no spec produces any more";
    DRIFT_SNAPSHOT = "drift/snapshot", false, "the category snapshot differs from the specs";
    COVERAGE_UNIMPLEMENTED = "coverage/unimplemented", true, "a capability with no #[capability] fn";
    COVERAGE_UNKNOWN = "coverage/unknown", true, "a #[capability] fn naming no capability";
    COVERAGE_DUPLICATE_IMPL = "coverage/duplicate-impl", true, "two fns implement one capability";
    COVERAGE_STUB = "coverage/stub", true, "an impl whose body is still only todo!/unimplemented!";
    COVERAGE_UNTESTED = "coverage/untested", true, "no test ran the capability in the last `cargo test` (observed at run time, never inferred from names)";
    COVERAGE_STALE = "coverage/stale", true, "the coverage record is missing, or older than a spec, source or test: run `cargo test`";
    COVERAGE_CONTRACT_UNCHECKED = "coverage/contract-unchecked", true, "with `--base`: a capability whose contract changed (or that is new) while the diff touches no test that exercises it";
    COVERAGE_PARSE = "coverage/parse", false, "a source or test file that cannot be parsed";
    BREAKING_REMOVED_CAPABILITY = "breaking/removed-capability", true, "with --base: a capability was removed (a rename kept in `aliases` is not a removal)";
    BREAKING_REMOVED_MODULE = "breaking/removed-module", true, "with --base: a module was removed";
    BREAKING_CATEGORY_CHANGED = "breaking/category-changed", true, "with --base: a capability changed category";
    BREAKING_REQUIRED_ADDED = "breaking/required-added", true, "with --base: an input became required";
    BREAKING_PROPERTY_REMOVED = "breaking/property-removed", true, "with --base: an input property was removed";
    BREAKING_PROPERTY_RETYPED = "breaking/property-retyped", true, "with --base: an input property changed type";
    BREAKING_ENUM_VALUE_REMOVED = "breaking/enum-value-removed", true, "with --base: an enum value was removed";
    CODE_FIRST_UNKNOWN_MODULE = "code-first/unknown-module", false, "a #[derive(Capability)] spec names a module no spec file declares";
    CODE_FIRST_EXPORT = "code-first/export", false, "a [code_first] package does not build, or its export fails";
    CODE_FIRST_RECORD = "code-first/record", false, "the code-first record file is not what sync writes";
    CODE_FIRST_KEYWORD = "code-first/unsupported-keyword", false, "warning: a schemars keyword outside the subset was dropped";
    PROVIDER_LOSSY = "provider/lossy", false, "warning: a constraint a provider cannot express moved into the description of its tool";
    PROVIDER_UNSUPPORTED = "provider/unsupported", false, "a capability's schema cannot be projected for a provider in [generate] providers";
    PROVIDER_LIMIT = "provider/limit", false, "a tool name or tool count a provider in [generate] providers refuses";
    CONFIG_PARSE = "config/parse", false, "capspec.toml is not valid TOML";
    CONFIG_UNKNOWN_KEY = "config/unknown-key", false, "a key capspec.toml does not define";
    CONFIG_INVALID_VALUE = "config/invalid-value", false, "a capspec.toml key holds the wrong kind of value";
    CONFIG_BAD_PATH = "config/bad-path", false, "a configured path is absolute, leaves the project root, or does not exist";
    CONFIG_ALLOW_MISSING_REASON = "config/allow-missing-reason", false, "an [[allow]] entry without a reason";
    CONFIG_ALLOW_TODO_REASON = "config/allow-todo-reason", false, "an [[allow]] entry whose reason contains TODO";
    CONFIG_ALLOW_INVALID = "config/allow-invalid", false, "an [[allow]] entry with an unknown rule or no target";
    CONFIG_ALLOW_UNMATCHED = "config/allow-unmatched", false, "an [[allow]] entry that suppresses nothing";
    LINT_HIDDEN_TEXT = "lint/hidden-text", true, "a description, title, enum value or schema text holds invisible or reordering characters (Unicode tags, bidi controls, zero-width characters)";
    LINT_INSTRUCTIONS = "lint/instructions", true, "warning: text addressed to the model instead of describing the capability (\"ignore previous instructions\", <IMPORTANT>, \"do not tell the user\", secrets to read first)";
    LINT_SHADOWING = "lint/shadowing", true, "warning: a description that names another module's capability (one tool's text steering another's use)";
    UPSTREAM_CHANGED = "upstream/changed", false, "with --upstream: a tool's live definition no longer matches its pin (names which of description, input schema, output schema, title or annotations changed, with a diff)";
    UPSTREAM_REMOVED = "upstream/removed", false, "with --upstream: a pinned tool the server no longer lists";
    UPSTREAM_ADDED = "upstream/added", true, "with --upstream, warning: a tool the server lists that no capability pins (not mounted until imported)";
    UPSTREAM_UNREACHABLE = "upstream/unreachable", false, "with --upstream: the server did not start, connect or list its tools within its timeout";
    UPSTREAM_UNAUTHORIZED = "upstream/unauthorized", false, "with --upstream: an `auth = \"oauth\"` server with no stored log-in, or one it refused (the message names `cargo capspec auth login NAME`)";
    POLICY_PARSE = "policy/parse", false, "a .cedar file or the policy tests file does not parse, or a policy id is used twice (located)";
    POLICY_INVALID = "policy/invalid", false, "a policy fails Cedar's strict validation against the schema the specs produce: an unknown capability, module, category or principal attribute, an argument the capability does not take, a type error, an optional argument read without `has` (located; says what the spec has instead)";
    POLICY_TEST = "policy/test", false, "a policy test's expected decision differs from the decision (located at the test; names the policies that decided)";
    POLICY_UNREACHABLE = "policy/unreachable", true, "warning: a permit that a forbid covers for every request, or an @ask permit shadowed the same way";
    POLICY_FEATURE = "policy/feature", false, "the project has policies, but this capspec was built without its `policy` feature (the message says how to turn it on)";
    SURFACE_UNKNOWN_MODULE = "surface/unknown-module", false, "a [surface.NAME] names a module no spec declares (located in capspec.toml)";
    SURFACE_NO_MATCH = "surface/no-match", false, "a [surface.NAME] capability glob matches no capability of its modules";
    SURFACE_PATH_TAKEN = "surface/path-taken", false, "two named surfaces on one path, or one on /mcp itself";
    SURFACE_UNKNOWN_GROUP = "surface/unknown-group", false, "warning: a [surface.NAME] group that no policy names (only a token's groups can then admit anyone)";
    IMPORT_INVALID = "import/invalid-tool", false, "import mcp: a tool entry that is not a usable MCP tool object";
    IMPORT_NAME = "import/invalid-name", false, "import mcp: a tool name that is not a valid capability name";
    IMPORT_COLLISION = "import/duplicate-name", false, "import mcp: two tools with the same name";
    IMPORT_KEYWORD = "import/unsupported-keyword", false, "warning: import mcp dropped a schema keyword outside the subset";
}

impl Rule {
    /// The severity of its findings: a warning when its summary says so
    /// (`warning: …`, or `with --upstream, warning: …`), else an error.
    pub fn severity(&self) -> crate::Severity {
        if self.summary.starts_with("warning:") || self.summary.contains(", warning:") { crate::Severity::Warning } else { crate::Severity::Error }
    }

    /// The summary without its severity prefix.
    pub fn what(&self) -> &'static str {
        match self.summary.split_once("warning: ") {
            Some(("", after)) => after,
            _ => self.summary,
        }
    }
}

/// The rule with this id.
pub fn find(id: &str) -> Option<&'static Rule> {
    ALL.iter().find(|r| r.id == id)
}

/// `; did you mean `…`?` for a misspelt rule id (or any word), else empty.
pub use capspec_names::did_you_mean;

/// Ids an `[[allow]]` entry may name.
pub fn suppressible() -> impl Iterator<Item = &'static str> {
    ALL.iter().filter(|r| r.suppressible).map(|r| r.id)
}

/// The rule list for `check --help`: one `id  summary` line per rule.
pub fn help() -> String {
    let width = ALL.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::from("RULES (`[[allow]]` can suppress those marked *):\n");
    for r in ALL {
        let mark = if r.suppressible { '*' } else { ' ' };
        out.push_str(&format!("  {mark} {:width$}  {}\n", r.id, r.summary));
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_only_coverage_breaking_lint_upstream_added_and_policy_unreachable_are_suppressible() {
        let mut ids: Vec<&str> = ALL.iter().map(|r| r.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), ALL.len());
        for r in ALL {
            let family = r.id.split('/').next().unwrap();
            let may = family == "breaking" || family == "lint" || r.id == UPSTREAM_ADDED || r.id == POLICY_UNREACHABLE || (family == "coverage" && r.id != COVERAGE_PARSE);
            assert_eq!(r.suppressible, may, "{}", r.id);
        }
    }
}
