//! `cargo xtask coverage`: the coverage table — one row per capability with
//! its category, the fn that implements it, the tests that exercise it, and
//! the written reason where no test does. Computed from the same scan as
//! `check`, so it cannot rot and needs no `sync` when a test changes; the
//! gap reasons stay where they are, in `capspec.toml`'s `[[allow]]` entries.

use std::path::Path;

use serde::Serialize;

use crate::config::Allow;
use crate::gate::coverage::record::{Freshness, Record};
use crate::gate::coverage::{self, Scan};
use crate::error::FatalError;
use crate::finding::Finding;
use crate::model::SpecSet;
use crate::rules as rule;
use crate::source::Sources;

/// Where a capability is implemented.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Site {
    /// Relative to the project root.
    pub file: String,
    /// 1-based line of its `#[capability]` attribute.
    pub line: u32,
}

/// One capability's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// `module.name`.
    pub capability: String,
    /// `read`, `write`, `execute` or `external`.
    pub category: &'static str,
    /// The `#[capability]` fns implementing it (more than one is a
    /// `coverage/duplicate-impl` finding).
    pub implemented_by: Vec<Site>,
    /// The test fns that exercise it, as `file::test_fn`, sorted.
    pub tests: Vec<String>,
    /// Why no test exercises it: the reason of the matching
    /// `[[allow]] rule = "coverage/untested"` entry, when there is one.
    pub gap: Option<String>,
    /// The `[upstream.*]` server that implements it, in an upstream module
    /// (its pin and `check --upstream` stand for impl and tests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
}

/// The state of the coverage record the `tests` column comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordState {
    /// `fresh`, `missing` or `stale`: only a fresh record names tests.
    pub state: &'static str,
    /// For a stale record: the file that changed after the last `cargo test`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<String>,
}

impl From<Freshness> for RecordState {
    fn from(f: Freshness) -> RecordState {
        match f {
            Freshness::Fresh => RecordState { state: "fresh", changed: None },
            Freshness::Missing => RecordState { state: "missing", changed: None },
            Freshness::Stale { changed } => RecordState { state: "stale", changed: Some(changed) },
        }
    }
}

/// The coverage table, one row per capability, sorted by module then name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoverageTable {
    /// The coverage record the `tests` column comes from (what the last
    /// `cargo test` ran).
    pub record: RecordState,
    /// The rows.
    pub capabilities: Vec<Row>,
}

/// What `coverage` produced: the table of every capability that loads, and
/// the findings that make it partial (spec or config errors), with the
/// texts they point into.
#[derive(Debug)]
pub struct Coverage {
    /// The table.
    pub table: CoverageTable,
    /// Errors in the specs or config: the table leaves out what they hide.
    pub findings: Vec<Finding>,
    /// The texts the findings point into.
    pub sources: Sources,
}

/// Open the project at `root`, scan its sources and tests, and build the table.
pub fn coverage(root: &Path) -> Result<Coverage, FatalError> {
    let project = crate::project::open(root)?;
    let blocked = project.is_blocked();
    let Some(config) = project.config.clone() else {
        let (findings, sources) = project.into_findings();
        return Ok(Coverage { table: CoverageTable { record: Freshness::Missing.into(), capabilities: Vec::new() }, findings, sources });
    };
    let scan = coverage::scan(root, &config);
    let record = coverage::record::read(root, &config);
    let table = table(&project.loaded.set, &scan, &record, &config.allow);
    let (findings, sources) = if blocked { project.into_findings() } else { (Vec::new(), Sources::default()) };
    Ok(Coverage { table, findings, sources })
}

/// The table of `set` from `scan`, gap reasons from `allows`.
pub(crate) fn table(set: &SpecSet, scan: &Scan, record: &Record, allows: &[Allow]) -> CoverageTable {
    let (impls, _) = coverage::implementations(set, scan);
    let capabilities = set
        .capabilities()
        .map(|(m, c)| {
            let mut implemented_by: Vec<Site> = impls
                .get(&(m.name.as_str(), c.name.as_str()))
                .map(|sites| sites.iter().map(|s| Site { file: s.file.clone(), line: s.pos.line }).collect())
                .unwrap_or_default();
            implemented_by.sort();
            let tests = record.tests(&format!("{}.{}", m.name, c.name), &crate::render::contract_fingerprint(m, c));
            let file = c.file(m);
            let gap = if tests.is_empty() {
                allows
                    .iter()
                    .find(|a| {
                        a.rule == rule::COVERAGE_UNTESTED
                            && (a.capability.as_deref() == Some(c.name.as_str()) || a.file.as_deref() == Some(file))
                    })
                    .map(|a| a.reason.clone())
            } else {
                None
            };
            let upstream = m.upstream.as_ref().map(|(server, _)| server.clone());
            Row { capability: format!("{}.{}", m.name, c.name), category: c.category.as_str(), implemented_by, tests, gap, upstream }
        })
        .collect();
    CoverageTable { record: record.freshness.clone().into(), capabilities }
}

impl CoverageTable {
    /// The table as Markdown: one row per capability.
    pub fn to_markdown(&self) -> String {
        // Cell text cannot break the table: `|` is escaped, line breaks folded.
        let cell = |text: &str| text.replace('\\', "\\\\").replace('|', "\\|").split_whitespace().collect::<Vec<_>>().join(" ");
        let mut out = match (self.record.state, &self.record.changed) {
            ("fresh", _) => String::from("Tests: what the last `cargo test` ran (its coverage record).\n\n"),
            ("stale", Some(changed)) => format!("Tests: none counted: `{}` changed after the last `cargo test`; run `cargo test` to refresh the coverage record.\n\n", cell(changed)),
            _ => String::from("Tests: none counted: no coverage record; run `cargo test` to record which tests run each capability.\n\n"),
        };
        out.push_str("| capability | category | implemented by | tests | gap |\n|---|---|---|---|---|\n");
        for row in &self.capabilities {
            let sites = row.implemented_by.iter().map(|s| format!("`{}:{}`", s.file, s.line)).collect::<Vec<_>>().join("<br>");
            let tests = row.tests.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join("<br>");
            let gap = match (&row.gap, row.tests.is_empty(), &row.upstream) {
                (Some(reason), _, _) => cell(reason),
                (None, true, None) => "**untested**".to_string(),
                (None, _, _) => String::new(),
            };
            let sites = match &row.upstream {
                Some(server) => format!("upstream `{}`", cell(server)),
                None if sites.is_empty() => "**unimplemented**".to_string(),
                None => sites,
            };
            out.push_str(&format!("| `{}` | {} | {sites} | {tests} | {gap} |\n", row.capability, row.category));
        }
        out
    }

    /// The table as JSON (what a CI job or a dashboard reads).
    pub fn to_json(&self) -> String {
        let mut out = serde_json::to_string_pretty(self).expect("the table serializes");
        out.push('\n');
        out
    }
}
