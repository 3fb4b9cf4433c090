//! Findings: what `check` reports. Every step of the pipeline returns them as
//! values; only the front (xtask) prints.

use serde::Serialize;

use crate::yaml::Pos;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One diagnostic: a rule id, a location relative to the project root, and a
/// message that says what to do. The JSON form is a contract (DESIGN §5).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    pub rule: String,
    pub severity: Severity,
    /// Path relative to the project root, with `/` separators.
    pub file: String,
    /// 1-based; 0 when not applicable.
    pub line: u32,
    /// 1-based, in characters; 0 when not applicable.
    pub column: u32,
    pub message: String,
    /// A unified diff, for drift findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// A stable id (rule and target), for findings that compare contracts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A hash of `id`, stable across runs and machines (SARIF `partialFingerprints`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The capability the finding is about, for matching `[[allow]]` entries.
    #[serde(skip)]
    pub capability: Option<String>,
}

impl Finding {
    pub fn error(rule: &str, file: &str, pos: Pos, message: impl Into<String>) -> Finding {
        Finding {
            rule: rule.to_string(),
            severity: Severity::Error,
            file: file.to_string(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
            diff: None,
            id: None,
            fingerprint: None,
            capability: None,
        }
    }

    pub fn warning(rule: &str, file: &str, pos: Pos, message: impl Into<String>) -> Finding {
        Finding { severity: Severity::Warning, ..Finding::error(rule, file, pos, message) }
    }

    pub fn with_diff(mut self, diff: String) -> Finding {
        self.diff = Some(diff);
        self
    }

    pub fn for_capability(mut self, name: &str) -> Finding {
        self.capability = Some(name.to_string());
        self
    }

    /// Report order: by file, then position, then rule.
    pub fn sort(findings: &mut [Finding]) {
        findings.sort_by(|a, b| {
            (&a.file, a.line, a.column, &a.rule, &a.message).cmp(&(&b.file, b.line, b.column, &b.rule, &b.message))
        });
    }

    pub fn pos(&self) -> Pos {
        Pos { line: self.line, column: self.column }
    }
}

/// Rule ids (DESIGN §5). Kept as constants so a typo is a compile error.
pub mod rule {
    pub const SPEC_PARSE: &str = "spec/parse";
    pub const SPEC_MISSING_FIELD: &str = "spec/missing-field";
    pub const SPEC_UNKNOWN_FIELD: &str = "spec/unknown-field";
    pub const SPEC_UNKNOWN_CATEGORY: &str = "spec/unknown-category";
    pub const SPEC_INVALID_NAME: &str = "spec/invalid-name";
    pub const SPEC_DUPLICATE_NAME: &str = "spec/duplicate-name";
    pub const SPEC_MODULE_MISMATCH: &str = "spec/module-mismatch";
    pub const SPEC_INVALID_SCHEMA: &str = "spec/invalid-schema";
    pub const SPEC_USER_MESSAGE: &str = "spec/user-message";
    /// A value of the wrong YAML kind for a spec key (e.g. a list where a string belongs).
    pub const SPEC_INVALID_VALUE: &str = "spec/invalid-value";
    /// The specs directory holds no spec file.
    pub const SPEC_EMPTY: &str = "spec/empty";

    pub const DRIFT_STALE: &str = "drift/stale";
    pub const DRIFT_MISSING: &str = "drift/missing";
    pub const DRIFT_ORPHAN: &str = "drift/orphan";
    pub const DRIFT_SNAPSHOT: &str = "drift/snapshot";

    pub const COVERAGE_UNIMPLEMENTED: &str = "coverage/unimplemented";
    pub const COVERAGE_UNKNOWN: &str = "coverage/unknown";
    pub const COVERAGE_DUPLICATE_IMPL: &str = "coverage/duplicate-impl";
    pub const COVERAGE_STUB: &str = "coverage/stub";
    pub const COVERAGE_UNTESTED: &str = "coverage/untested";
    /// A source or test file that cannot be read or parsed.
    pub const COVERAGE_PARSE: &str = "coverage/parse";

    /// A code-first spec names a module no spec file declares.
    pub const CODE_FIRST_UNKNOWN_MODULE: &str = "code-first/unknown-module";
    /// A `[code_first]` package could not be built or exported.
    pub const CODE_FIRST_EXPORT: &str = "code-first/export";
    /// The code-first record file cannot be read.
    pub const CODE_FIRST_RECORD: &str = "code-first/record";
    /// A schemars keyword outside the supported subset was dropped (warning).
    pub const CODE_FIRST_KEYWORD: &str = "code-first/unsupported-keyword";

    pub const CONFIG_PARSE: &str = "config/parse";
    pub const CONFIG_UNKNOWN_KEY: &str = "config/unknown-key";
    pub const CONFIG_INVALID_VALUE: &str = "config/invalid-value";
    pub const CONFIG_BAD_PATH: &str = "config/bad-path";
    pub const CONFIG_ALLOW_MISSING_REASON: &str = "config/allow-missing-reason";
    pub const CONFIG_ALLOW_TODO_REASON: &str = "config/allow-todo-reason";
    pub const CONFIG_ALLOW_INVALID: &str = "config/allow-invalid";
    pub const CONFIG_ALLOW_UNMATCHED: &str = "config/allow-unmatched";

    /// Every rule id with a one-line description, for `--help`, the README
    /// and machine-readable formats.
    pub const ALL: &[(&str, &str)] = &[
        (SPEC_PARSE, "YAML syntax error, non-UTF-8 text, file too large, alias bomb, nesting too deep"),
        (SPEC_MISSING_FIELD, "a required key is absent"),
        (SPEC_UNKNOWN_FIELD, "a key the spec format does not define"),
        (SPEC_UNKNOWN_CATEGORY, "category is not one of read/write/execute/external"),
        (SPEC_INVALID_NAME, "bad module or capability name, or a reserved word"),
        (SPEC_DUPLICATE_NAME, "a name or alias used twice (every place is reported)"),
        (SPEC_MODULE_MISMATCH, "`module:` differs from the file stem"),
        (SPEC_INVALID_SCHEMA, "malformed or unsupported JSON Schema (keyword and pointer named)"),
        (SPEC_USER_MESSAGE, "a user_message placeholder that names no input property"),
        (SPEC_INVALID_VALUE, "a spec key holds the wrong kind of value"),
        (SPEC_EMPTY, "the specs directory holds no spec file"),
        (DRIFT_STALE, "a generated file differs from what the specs produce"),
        (DRIFT_MISSING, "a generated file is absent"),
        (DRIFT_ORPHAN, "a generated file that no spec produces any more"),
        (DRIFT_SNAPSHOT, "the category snapshot differs from the specs"),
        (COVERAGE_UNIMPLEMENTED, "a capability with no #[capability] fn"),
        (COVERAGE_UNKNOWN, "a #[capability] fn naming no capability"),
        (COVERAGE_DUPLICATE_IMPL, "two fns implement one capability"),
        (COVERAGE_STUB, "an impl whose body is still only todo!/unimplemented!"),
        (COVERAGE_UNTESTED, "no test exercises the capability"),
        (COVERAGE_PARSE, "a source or test file that cannot be parsed"),
        (CODE_FIRST_UNKNOWN_MODULE, "a #[derive(Capability)] spec names a module no spec file declares"),
        (CODE_FIRST_EXPORT, "a [code_first] package does not build, or its export fails"),
        (CODE_FIRST_RECORD, "the code-first record file is not what sync writes"),
        (CODE_FIRST_KEYWORD, "warning: a schemars keyword outside the subset was dropped"),
        (CONFIG_PARSE, "capspec.toml is not valid TOML"),
        (CONFIG_UNKNOWN_KEY, "a key capspec.toml does not define"),
        (CONFIG_INVALID_VALUE, "a capspec.toml key holds the wrong kind of value"),
        (CONFIG_BAD_PATH, "a configured path is absolute, leaves the project root, or does not exist"),
        (CONFIG_ALLOW_MISSING_REASON, "an [[allow]] entry without a reason"),
        (CONFIG_ALLOW_TODO_REASON, "an [[allow]] entry whose reason contains TODO"),
        (CONFIG_ALLOW_INVALID, "an [[allow]] entry with an unknown rule or no target"),
        (CONFIG_ALLOW_UNMATCHED, "an [[allow]] entry that suppresses nothing"),
        ("breaking/removed-capability", "with --base: a capability was removed (a rename kept in `aliases` is not a removal)"),
        ("breaking/removed-module", "with --base: a module was removed"),
        ("breaking/category-changed", "with --base: a capability changed category"),
        ("breaking/required-added", "with --base: an input became required"),
        ("breaking/property-removed", "with --base: an input property was removed"),
        ("breaking/property-retyped", "with --base: an input property changed type"),
        ("breaking/enum-value-removed", "with --base: an enum value was removed"),
    ];
}

/// Counts for the summary line and the JSON `summary` object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
}

impl Summary {
    pub fn of(findings: &[Finding]) -> Summary {
        let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
        Summary { errors, warnings: findings.len() - errors }
    }
}
