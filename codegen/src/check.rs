//! The check engine: config → specs → (drift, coverage) → suppressions.
//! `check` never writes.

use std::path::Path;

use crate::code_first::{CodeFirstInput, ExportFailure, Exported};
use crate::config::{self, Allow, Config, FatalError};
use crate::finding::{Finding, rule};
use crate::load::{self, Loaded, Sources};
use crate::report::Report;

/// A project's config and validated specs, ready for rendering.
#[derive(Debug)]
pub struct Project {
    pub config: Option<Config>,
    pub loaded: Loaded,
    /// Findings about `capspec.toml`.
    pub config_findings: Vec<Finding>,
    /// What the code-first record must hold; `None` when `[code_first]`
    /// lists no package (then there is no record file).
    pub code_first_record: Option<Vec<Exported>>,
}

/// Read `capspec.toml` and the specs it names; code-first specs come from
/// the record file (nothing is built).
pub fn open(root: &Path) -> Result<Project, FatalError> {
    open_with(root, None)
}

/// [`open`] with code-first specs from `code_first` (fresh exports and the
/// packages to take from the record); `None` takes every package from the
/// record.
pub fn open_with(root: &Path, code_first: Option<&CodeFirstInput>) -> Result<Project, FatalError> {
    let mut sources = Sources::default();
    let config_load = config::load_config(root, &mut sources)?;
    let mut code_first_record = None;
    let mut loaded = match &config_load.config {
        Some(config) if root.join(&config.specs).is_dir() => {
            let input = code_first.cloned().unwrap_or_else(|| CodeFirstInput::recorded(config));
            let resolved = crate::code_first::resolve(root, config, &input);
            if !config.code_first.packages.is_empty() {
                code_first_record = Some(resolved.record);
            }
            let mut loaded = load::load_dir_with(root, &config.specs, resolved.entries);
            loaded.findings.extend(resolved.findings);
            Finding::sort(&mut loaded.findings);
            loaded
        }
        _ => Loaded::default(),
    };
    for (file, text) in sources.into_files() {
        loaded.sources.insert(&file, text);
    }
    Ok(Project { config: config_load.config, loaded, config_findings: config_load.findings, code_first_record })
}

/// Options of one check run.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Compare the specs with those at this git ref (`breaking/*` findings).
    pub base: Option<String>,
    /// Where code-first specs come from; `None`: the record file.
    pub code_first: Option<CodeFirstInput>,
    /// Packages whose export failed: each is an error finding.
    pub export_failures: Vec<ExportFailure>,
}

/// Run every check on the project at `root`. `Err` means the check could not
/// run at all (exit code 2); findings are in the report.
pub fn check(root: &Path) -> Result<Report, FatalError> {
    check_with(root, &CheckOptions::default())
}

/// [`check`] with options (`--base`).
pub fn check_with(root: &Path, options: &CheckOptions) -> Result<Report, FatalError> {
    let project = open_with(root, options.code_first.as_ref())?;
    let rendered = crate::sync::render_project(&project);
    let mut sources = project.loaded.sources;
    let mut findings = project.config_findings;
    findings.extend(options.export_failures.iter().map(ExportFailure::finding));
    findings.extend(project.loaded.findings);
    if let Some((targets, artifacts)) = rendered {
        findings.extend(crate::sync::drift(root, &targets, &artifacts));
        if let Some(config) = &project.config {
            let scan = crate::coverage::scan(root, config);
            findings.extend(crate::coverage::findings(&project.loaded.set, &scan));
            for (file, text) in scan.sources {
                sources.insert(&file, text);
            }
        }
    }
    if let (Some(git_ref), Some(config)) = (&options.base, &project.config) {
        let record = (!config.code_first.packages.is_empty()).then_some(config.code_first.record.as_str());
        let base = crate::breaking::base_specs(root, &config.specs, record, git_ref)?;
        findings.extend(crate::breaking::compare(&base, &project.loaded.set));
    }
    if let Some(config) = &project.config {
        apply_suppressions(&mut findings, &config.allow);
    }
    Finding::sort(&mut findings);
    Ok(Report { findings, sources })
}

/// For a `#[test]`: panic with the rendered findings unless `check` is clean
/// on the project at `root`, so plain `cargo test` fails on drift.
pub fn assert_fresh(root: impl AsRef<Path>) {
    let root = root.as_ref();
    match check(root) {
        Ok(report) if report.findings.is_empty() => {}
        Ok(report) => panic!(
            "capspec check failed for {}:\n{}",
            root.display(),
            crate::report::render(&report, crate::report::Format::Human)
        ),
        Err(err) => panic!("capspec check could not run: {err}"),
    }
}

/// Remove findings an `[[allow]]` entry explains; report entries that explain
/// nothing, so suppressions cannot rot.
pub fn apply_suppressions(findings: &mut Vec<Finding>, allows: &[Allow]) {
    let mut used = vec![false; allows.len()];
    findings.retain(|f| {
        let hit = allows.iter().position(|a| {
            a.rule == f.rule
                && (a.capability.as_deref().is_some_and(|c| f.capability.as_deref() == Some(c))
                    || a.file.as_deref().is_some_and(|file| file == f.file))
        });
        match hit {
            Some(i) => {
                used[i] = true;
                false
            }
            None => true,
        }
    });
    for (allow, used) in allows.iter().zip(used) {
        if !used {
            let target = match (&allow.capability, &allow.file) {
                (Some(c), _) => format!("capability `{c}`"),
                (None, Some(f)) => format!("file `{f}`"),
                (None, None) => "nothing".to_string(),
            };
            findings.push(Finding::error(
                rule::CONFIG_ALLOW_UNMATCHED,
                config::CONFIG_FILE,
                allow.pos,
                format!("`[[allow]]` for `{}` on {target} suppresses nothing; remove it", allow.rule),
            ));
        }
    }
}
