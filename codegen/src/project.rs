//! A project: `capspec.toml`, the specs it names and the code-first specs,
//! opened into one value; and its artifacts, rendered. `check`, `sync` and
//! `scaffold` all start here, and never from each other.

use std::path::Path;

use crate::code_first::{CodeFirstInput, Exported};
use crate::config::{self, Config};
use crate::error::FatalError;
use crate::finding::{Finding, Severity};
use crate::load::{self, Loaded};
use crate::render::{self, Artifact, Reuse, Targets};
use crate::source::Sources;

/// A project's config and validated specs, ready for rendering.
#[derive(Debug)]
pub struct Project {
    /// The config, when `capspec.toml` is usable.
    pub config: Option<Config>,
    /// The specs: the valid set, its findings and the texts they point into.
    pub loaded: Loaded,
    /// Findings about `capspec.toml`.
    pub config_findings: Vec<Finding>,
    /// What the code-first record must hold; `None` when `[code_first]`
    /// lists no package (then there is no record file).
    pub code_first_record: Option<Vec<Exported>>,
}

/// A project's artifacts and where they go.
#[derive(Debug)]
pub struct Rendered {
    /// Where the generated files go.
    pub targets: Targets,
    /// Every generated file, sorted by path.
    pub artifacts: Vec<Artifact>,
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
            loaded.findings.extend(crate::provider::findings(&loaded.set, &config.generate.providers, &config.specs));
            for module in &loaded.set.modules {
                if let Some((server, pos)) = module.upstream.as_ref().filter(|(server, _)| !config.upstreams.contains_key(server)) {
                    loaded.findings.push(Finding::error(
                        crate::rules::SPEC_INVALID_VALUE,
                        &module.file,
                        *pos,
                        format!("`upstream: {server}` names no `[upstream.{server}]` in capspec.toml; configure the server there (`command = [...]` or `url = \"…\"`)"),
                    ));
                }
            }
            Finding::sort(&mut loaded.findings);
            loaded
        }
        _ => Loaded::default(),
    };
    loaded.sources.extend(sources);
    Ok(Project { config: config_load.config, loaded, config_findings: config_load.findings, code_first_record })
}

impl Project {
    /// Whether config or spec errors stop rendering (and so `sync`). Lint
    /// findings do not: the specs are well-formed, and `check` (where an
    /// `[[allow]]` may explain them) fails on them.
    pub fn is_blocked(&self) -> bool {
        self.config.is_none()
            || self.config_findings.iter().chain(&self.loaded.findings).any(|f| f.severity == Severity::Error && !f.rule.starts_with("lint/"))
    }

    /// The config and spec findings, sorted: what a blocked `sync` or
    /// `scaffold` reports.
    pub fn into_findings(self) -> (Vec<Finding>, Sources) {
        let mut findings = self.config_findings;
        findings.extend(self.loaded.findings);
        Finding::sort(&mut findings);
        (findings, self.loaded.sources)
    }

    /// Render the project's artifacts, or `None` when specs or config have
    /// errors. The module files on disk are read here (not by the
    /// renderer) so an untouched, up-to-date module can be reused.
    pub fn render(&self) -> Option<Rendered> {
        if self.is_blocked() {
            return None;
        }
        let config = self.config.as_ref()?;
        let targets = Targets::from_config(config);
        let read = |path: String| std::fs::read_to_string(config.root.join(&path)).ok().map(|text| (path, text));
        let reuse: Reuse = crate::parallel::map(render::reusable_paths(&self.loaded.set, &targets), read).into_iter().flatten().collect();
        let mut artifacts = render::render_all_reusing(&self.loaded.set, &targets, reuse);
        if let Some(record) = &self.code_first_record {
            artifacts.push(Artifact { path: config.code_first.record.clone(), contents: crate::code_first::render_record(record) });
            artifacts.sort();
        }
        Some(Rendered { targets, artifacts })
    }
}
