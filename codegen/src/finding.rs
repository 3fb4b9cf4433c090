//! Findings: what `check` reports. Every step of the pipeline returns them as
//! values; only the front (xtask) prints.

use serde::Serialize;

use crate::yaml::Pos;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
/// How bad a finding is: errors fail `check` (exit 1), warnings do not.
pub enum Severity {
    /// Fails the check.
    Error,
    /// Reported; does not fail the check.
    Warning,
}

impl Severity {
    /// `error` or `warning`, as in the JSON format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One diagnostic: a rule id, a location relative to the project root, and a
/// message that says what to do. The JSON form is a contract: `--format json`
/// prints these fields as they are.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    /// The rule id (see [`crate::rules`]).
    pub rule: String,
    /// Error or warning.
    pub severity: Severity,
    /// Path relative to the project root, with `/` separators.
    pub file: String,
    /// 1-based; 0 when not applicable.
    pub line: u32,
    /// 1-based, in characters; 0 when not applicable.
    pub column: u32,
    /// What is wrong and what to do about it.
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
    /// An error finding of `rule` at `file:pos`.
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

    /// A warning finding of `rule` at `file:pos`.
    pub fn warning(rule: &str, file: &str, pos: Pos, message: impl Into<String>) -> Finding {
        Finding { severity: Severity::Warning, ..Finding::error(rule, file, pos, message) }
    }

    /// Attach a unified diff (drift findings).
    pub fn with_diff(mut self, diff: String) -> Finding {
        self.diff = Some(diff);
        self
    }

    /// Name the capability the finding is about, so `[[allow]] capability = …` can match it.
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

    /// Where the finding points (line and column).
    pub fn pos(&self) -> Pos {
        Pos { line: self.line, column: self.column }
    }
}

/// Counts for the summary line and the JSON `summary` object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Error findings.
    pub errors: usize,
    /// Warning findings.
    pub warnings: usize,
}

impl Summary {
    /// Count the errors and warnings among `findings`.
    pub fn of(findings: &[Finding]) -> Summary {
        let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
        Summary { errors, warnings: findings.len() - errors }
    }
}
