//! Output formats for findings: `human` (rustc-like), `json` (a contract: `{"findings", "summary"}`) and
//! `github` (workflow commands). Rendering returns strings; the front prints.

use std::fmt::Write as _;

use crate::finding::{Finding, Severity, Summary};
use crate::rules;
use crate::source::Sources;

/// A finished check: sorted findings and the sources they point into.
#[derive(Debug, Default)]
pub struct Report {
    /// The findings, sorted by file, position and rule.
    pub findings: Vec<Finding>,
    /// The texts the findings point into, for snippets.
    pub sources: Sources,
}

impl Report {
    /// How many errors and warnings.
    pub fn summary(&self) -> Summary {
        Summary::of(&self.findings)
    }

    /// `0` when there is no error finding, `1` otherwise (the documented exit codes).
    pub fn exit_code(&self) -> i32 {
        if self.summary().errors > 0 { 1 } else { 0 }
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.summary().errors > 0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// An output format of `check`.
pub enum Format {
    /// rustc-like text with the source line and a caret.
    Human,
    /// One JSON object: `{"findings": [...], "summary": {...}}`.
    Json,
    /// GitHub workflow commands (`::error file=…`).
    Github,
    /// A SARIF 2.1.0 log, for code-scanning upload.
    Sarif,
}

/// The report in `format`, ready to print.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Human => human(report),
        Format::Json => json(report),
        Format::Github => github(report),
        Format::Sarif => sarif(report),
    }
}

/// `[[allow]]` entries that would suppress every suppressible finding of
/// the report, as TOML to paste into `capspec.toml`. Each needs a real
/// reason before `check` accepts it.
pub fn suggested_allows(report: &Report) -> String {
    let mut out = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in &report.findings {
        if !rules::find(&f.rule).is_some_and(|r| r.suppressible) {
            continue;
        }
        let target = match &f.capability {
            Some(c) => format!("capability = {}", toml_string(c)),
            None => format!("file = {}", toml_string(&f.file)),
        };
        if seen.insert((f.rule.clone(), target.clone())) {
            out.push_str(&format!("[[allow]]\nrule = {}\n{target}\nreason = \"\"\n\n", toml_string(&f.rule)));
        }
    }
    out
}

fn toml_string(s: &str) -> String {
    // JSON string syntax is valid TOML basic-string syntax.
    serde_json::to_string(s).expect("strings serialize")
}

/// `json` plus `"suggested_allow"`: the TOML of [`suggested_allows`].
pub fn json_with_suggestions(report: &Report) -> String {
    let mut value = serde_json::json!({
        "findings": report.findings,
        "summary": report.summary(),
        "suggested_allow": suggested_allows(report),
    });
    // Sorted keys in every build (with or without serde_json's `preserve_order`).
    value.sort_all_objects();
    let mut out = serde_json::to_string_pretty(&value).expect("findings serialize");
    out.push('\n');
    out
}

/// A SARIF 2.1.0 log with one run: rule metadata for every rule capspec
/// knows, and one result per finding with a stable partial fingerprint.
pub fn sarif(report: &Report) -> String {
    use serde_json::json;
    let rule_objects: Vec<serde_json::Value> = rules::ALL
        .iter()
        .map(|rule| {
            json!({
                "id": rule.id,
                "name": rule.id.replace(['/', '-'], "_"),
                "shortDescription": { "text": rule.summary },
                "help": { "text": format!("`{}` explains it, with a project that reports it and the same project fixed", explain_command(rule.id)) },
                "defaultConfiguration": { "level": rule.severity().as_str() },
            })
        })
        .collect();
    let results: Vec<serde_json::Value> = report
        .findings
        .iter()
        .map(|f| {
            let mut location = json!({ "artifactLocation": { "uri": f.file, "uriBaseId": "%SRCROOT%" } });
            if f.line > 0 {
                let mut region = json!({ "startLine": f.line });
                if f.column > 0 {
                    region["startColumn"] = json!(f.column);
                }
                location["region"] = region;
            }
            let mut text = f.message.clone();
            if let Some(diff) = &f.diff {
                text.push('\n');
                text.push_str(diff);
            }
            let fingerprint = f.fingerprint.clone().unwrap_or_else(|| crate::render::fingerprint(&format!("{}:{}:{}", f.rule, f.file, f.message)));
            let mut result = json!({
                "ruleId": f.rule,
                "level": f.severity.as_str(),
                "message": { "text": text },
                "locations": [ { "physicalLocation": location } ],
                "partialFingerprints": { "capspecFinding/v1": fingerprint },
            });
            if let Some(i) = rules::ALL.iter().position(|r| r.id == f.rule) {
                result["ruleIndex"] = json!(i);
            }
            result
        })
        .collect();
    let mut log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "capspec",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rule_objects,
            }},
            "originalUriBaseIds": { "%SRCROOT%": { "description": { "text": "the project root (the directory holding capspec.toml)" } } },
            "results": results,
        }],
    });
    log.sort_all_objects();
    let mut out = serde_json::to_string_pretty(&log).expect("SARIF serializes");
    out.push('\n');
    out
}

/// rustc-like: a header, the location, the source line and a caret.
pub fn human(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let _ = writeln!(out, "{}[{}]: {}", f.severity.as_str(), f.rule, f.message);
        let location = match (f.line, f.column) {
            (0, _) => f.file.clone(),
            (l, 0) => format!("{}:{l}", f.file),
            (l, c) => format!("{}:{l}:{c}", f.file),
        };
        let source_line = if f.line > 0 { report.sources.line(&f.file, f.line) } else { None };
        let gutter = if source_line.is_some() { f.line.to_string().len() } else { 1 };
        let pad = " ".repeat(gutter);
        let _ = writeln!(out, "{pad}--> {location}");
        if let Some(text) = source_line {
            let col = f.column.max(1) as usize;
            // Invisible and reordering characters are shown escaped, so the
            // snippet shows what the file holds and the terminal cannot
            // hide or reorder it; the caret follows the escapes.
            let shown: Vec<String> = text.chars().map(crate::lint::shown).collect();
            let prefix: String = shown.iter().take(col - 1).map(|s| if s == "\t" { "\t".to_string() } else { " ".repeat(s.chars().count()) }).collect();
            let token = token_width(text.chars().skip(col - 1));
            let width = shown.iter().skip(col - 1).take(token).map(|s| s.chars().count()).sum::<usize>().max(1);
            let _ = writeln!(out, "{pad} |");
            let _ = writeln!(out, "{} | {}", f.line, shown.concat());
            let _ = writeln!(out, "{pad} | {prefix}{}", "^".repeat(width));
        }
        if let Some(diff) = &f.diff {
            let _ = writeln!(out, "{pad} |");
            for line in diff.lines() {
                let _ = writeln!(out, "{pad} | {line}");
            }
        }
        let _ = writeln!(out, "{pad} = help: `{}`", explain_command(&f.rule));
        out.push('\n');
    }
    let s = report.summary();
    if s.errors == 0 && s.warnings == 0 {
        out.push_str("capspec: no findings\n");
    } else {
        let _ = writeln!(out, "capspec: {} error{}, {} warning{}", s.errors, plural(s.errors), s.warnings, plural(s.warnings));
    }
    out
}

/// The command that explains `rule`, which every finding's text ends with.
pub fn explain_command(rule: &str) -> String {
    format!("cargo capspec explain {rule}")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Width of the token starting at the caret: up to a `:`, a space or the
/// end of the line; quoted tokens run to their closing quote.
fn token_width(mut rest: impl Iterator<Item = char>) -> usize {
    let Some(first) = rest.next() else { return 1 };
    if first == '"' || first == '\'' {
        let mut n = 1;
        for c in rest {
            n += 1;
            if c == first {
                break;
            }
        }
        return n;
    }
    if matches!(first, '{' | '[' | '-' | '|' | '>') {
        return 1;
    }
    1 + rest.take_while(|c| !matches!(c, ':' | ' ' | ',' | ']' | '}' | '#')).count()
}

/// `{"findings": [...], "summary": {"errors": N, "warnings": N}}`
pub fn json(report: &Report) -> String {
    let mut value = serde_json::json!({
        "findings": report.findings,
        "summary": report.summary(),
    });
    // Sorted keys in every build (with or without serde_json's `preserve_order`).
    value.sort_all_objects();
    let mut out = serde_json::to_string_pretty(&value).expect("findings serialize");
    out.push('\n');
    out
}

/// `::error file=F,line=L,col=C,title=RULE::MESSAGE`
pub fn github(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let level = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut message = f.message.clone();
        if let Some(diff) = &f.diff {
            message.push('\n');
            message.push_str(diff);
        }
        message.push_str(&format!("\n(`{}`)", explain_command(&f.rule)));
        let _ = writeln!(
            out,
            "::{level} file={},line={},col={},title={}::{}",
            property(&f.file),
            f.line,
            f.column,
            property(&f.rule),
            data(&message)
        );
    }
    out
}

/// Escaping of workflow-command data (the message).
fn data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escaping of workflow-command properties (file, title).
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escapes_separators() {
        assert_eq!(property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        assert_eq!(data("x::y\n"), "x::y%0A");
    }

    #[test]
    fn caret_covers_the_token() {
        assert_eq!(token_width("catgory: read".chars()), 7);
        assert_eq!(token_width("\"a b\": 1".chars()), 5);
    }
}
