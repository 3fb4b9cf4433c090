//! The check engine: project → (drift, coverage, breaking and unchecked
//! contracts) → suppressions.
//! `check` never writes.

use std::path::Path;

use crate::code_first::{CodeFirstInput, ExportFailure};
use crate::error::FatalError;
use crate::finding::Finding;
use crate::project::{self, Rendered};
use super::report::Report;

/// Options of one check run.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Compare the specs with those at this git ref (`breaking/*` findings).
    pub base: Option<String>,
    /// Where code-first specs come from; `None`: the record file.
    pub code_first: Option<CodeFirstInput>,
    /// Packages whose export failed: each is an error finding.
    pub export_failures: Vec<ExportFailure>,
    /// The `upstream/*` findings of `check --upstream` (the caller lists the
    /// servers; see [`super::upstream::compare`]), suppressed like the rest.
    pub upstream: Vec<Finding>,
    /// Leave out the run-time coverage verdict (`coverage/untested`,
    /// `coverage/stale`): for a check made inside `cargo test`, whose own
    /// record is not finished ([`assert_fresh`]).
    pub without_test_record: bool,
}

/// Run every check on the project at `root`. `Err` means the check could not
/// run at all (exit code 2); findings are in the report.
pub fn check(root: &Path) -> Result<Report, FatalError> {
    check_with(root, &CheckOptions::default())
}

/// [`check`] with options (`--base`).
pub fn check_with(root: &Path, options: &CheckOptions) -> Result<Report, FatalError> {
    let project = project::open_with(root, options.code_first.as_ref())?;
    let rendered = project.render();
    let mut sources = project.loaded.sources;
    let mut findings = project.config_findings;
    findings.extend(options.export_failures.iter().map(ExportFailure::finding));
    findings.extend(options.upstream.iter().cloned());
    findings.extend(project.loaded.findings);
    let mut scan = None;
    if let Some(Rendered { targets, artifacts }) = rendered {
        findings.extend(super::drift::drift(root, &targets, &artifacts, &project.loaded.set));
        if let Some(policy) = project.config.as_ref().and_then(|c| c.policy.as_ref()) {
            findings.extend(super::policy::findings(root, &policy.dir, &project.loaded.set, &mut sources));
        }
        if let Some(config) = &project.config {
            findings.extend(super::surface::findings(root, config, &project.loaded.set));
            let mut scanned = super::coverage::scan(root, config);
            let record = (!options.without_test_record).then(|| super::coverage::record::read(root, config));
            findings.extend(super::coverage::findings(&project.loaded.set, &scanned, record.as_ref()));
            for (file, text) in std::mem::take(&mut scanned.sources) {
                sources.insert(&file, text);
            }
            scan = Some(scanned);
        }
    }
    if let (Some(git_ref), Some(config)) = (&options.base, &project.config) {
        let record = (!config.code_first.packages.is_empty()).then_some(config.code_first.record.as_str());
        let base = super::breaking::base_specs(root, &config.specs, record, git_ref)?;
        findings.extend(super::breaking::compare(&base, &project.loaded.set));
        if let Some(scan) = &scan {
            findings.extend(super::contract::unchecked(root, git_ref, &config.coverage.tests, &base, &project.loaded.set, scan)?);
        }
    }
    if let Some(config) = &project.config {
        super::suppress::apply(&mut findings, &config.allow);
    }
    // A stale or missing record matters only while a test verdict rests on
    // it: where `[[allow]]` explains every untested capability, none does.
    if !findings.iter().any(|f| f.rule == crate::rules::COVERAGE_UNTESTED) {
        findings.retain(|f| f.rule != crate::rules::COVERAGE_STALE);
    }
    Finding::sort(&mut findings);
    Ok(Report { findings, sources })
}

/// `policy test` (DESIGN §14): run the project's policy tests alone. The
/// lines say each test's decision and the policies that made it; the
/// report holds the `policy/*` findings. Spec errors stop it (they are in
/// the report, with no lines).
pub fn policy_test(root: &Path) -> Result<(Vec<String>, Report), FatalError> {
    let project = project::open_with(root, None)?;
    let mut sources = project.loaded.sources;
    let mut findings: Vec<Finding> = project.config_findings;
    findings.extend(project.loaded.findings.iter().filter(|f| f.severity == crate::finding::Severity::Error).cloned());
    let policy = project.config.as_ref().and_then(|c| c.policy.as_ref());
    let lines = match policy {
        Some(policy) if findings.is_empty() => {
            let (lines, found) = super::policy::test_report(root, &policy.dir, &project.loaded.set, &mut sources);
            findings.extend(found);
            lines
        }
        _ => Vec::new(),
    };
    Finding::sort(&mut findings);
    Ok((lines, Report { findings, sources }))
}

/// For a `#[test]`: panic with the rendered findings unless `check` is clean
/// on the project at `root`, so plain `cargo test` fails on drift. Which
/// capabilities the tests ran is left to `check` after `cargo test`: the
/// run this test is part of has not finished recording it.
pub fn assert_fresh(root: impl AsRef<Path>) {
    let root = root.as_ref();
    match check_with(root, &CheckOptions { without_test_record: true, ..CheckOptions::default() }) {
        Ok(report) if report.findings.is_empty() => {}
        Ok(report) => panic!(
            "capspec check failed for {}:\n{}",
            root.display(),
            super::report::render(&report, super::report::Format::Human)
        ),
        Err(err) => panic!("capspec check could not run: {err}"),
    }
}
