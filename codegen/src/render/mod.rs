//! Renderers: `SpecSet` → artifacts (path + bytes). One module per target;
//! `sync` and `check` call the same [`render_all`] — the only difference is
//! write versus compare. Rendering works on values: it depends on the model
//! and its own [`Targets`], never on the config, and never touches the file
//! system (the reuse cache arrives as data, [`Reuse`]).

use std::collections::BTreeMap;

use crate::model::SpecSet;

mod abbrev;
mod artifact;
mod catalog;
mod editor_schema;
pub(crate) mod escape;
mod js;
mod json;
mod naming;
mod providers;
mod reuse;
mod rust;
mod shape;
mod snapshot;
mod spec_const;
mod templates;
mod ts;

pub(crate) use artifact::join;
pub use artifact::{Artifact, MARKER, Targets, contract_fingerprint, fingerprint, input_schema_json, is_generated, marker_line};

/// Generated files as they are on disk, by path: the module Rust files a
/// render may reuse (see [`render_all_reusing`]). Read by the caller;
/// rendering never reads the disk.
pub type Reuse = BTreeMap<String, String>;

/// Render every artifact of a valid spec set, sorted by path. The category
/// snapshot is included (its drift is reported as `drift/snapshot`).
pub fn render_all(set: &SpecSet, targets: &Targets) -> Vec<Artifact> {
    render_all_reusing(set, targets, Reuse::new())
}

/// The paths [`render_all_reusing`] may reuse: the module Rust files.
pub fn reusable_paths(set: &SpecSet, targets: &Targets) -> Vec<String> {
    set.modules.iter().map(|m| join(&targets.rust, &format!("{}.rs", m.name))).collect()
}

/// [`render_all`], reusing a module's Rust file from `reuse` when the
/// inputs recorded in its marker match and its text is untouched — the
/// bytes are then exactly what rendering would produce.
pub fn render_all_reusing(set: &SpecSet, targets: &Targets, mut reuse: Reuse) -> Vec<Artifact> {
    // Modules render independently, in parallel; the aggregates follow. A
    // reused file's text moves into its artifact (no copy).
    let work: Vec<_> = set.modules.iter().map(|m| (m, reuse.remove(&join(&targets.rust, &format!("{}.rs", m.name))))).collect();
    let per_module = crate::parallel::map(work, |(module, existing)| {
        let catalog = catalog::module_section(module, targets);
        let facade = js::facade(module, targets);
        let files = vec![
            Artifact { path: join(&targets.js, &format!("{}.js", module.name)), contents: facade.clone() },
            Artifact { path: join(&targets.js, &format!("{}.d.ts", module.name)), contents: js::declarations(module, targets) },
            Artifact { path: join(&targets.catalog, &format!("{}.md", module.name)), contents: catalog::module_file(module, &catalog) },
            {
                let path = join(&targets.rust, &format!("{}.rs", module.name));
                let contents = reuse::module_file_reusing(module, &facade, &catalog, existing);
                Artifact { path, contents }
            },
        ];
        (catalog, files)
    });
    let mut artifacts = Vec::new();
    let mut catalogs = Vec::new();
    for (catalog, files) in per_module {
        catalogs.push(catalog);
        artifacts.extend(files);
    }
    artifacts.push(Artifact { path: join(&targets.rust, "mod.rs"), contents: rust::mod_file(set, targets) });
    artifacts.push(Artifact { path: join(&targets.catalog, "CATALOG.md"), contents: catalog::catalog_file(set, targets, &catalogs) });
    artifacts.push(Artifact { path: join(&targets.catalog, "capabilities.json"), contents: json::capabilities(set, targets) });
    artifacts.push(Artifact { path: targets.snapshot.clone(), contents: snapshot::render(set, targets) });
    for &provider in &targets.providers {
        artifacts.push(Artifact { path: join(&targets.catalog, &provider.file_name()), contents: providers::tools_file(set, provider) });
    }
    if let Some(path) = &targets.editor_schema {
        artifacts.push(Artifact { path: path.clone(), contents: editor_schema::editor_schema() });
    }
    artifacts.sort();
    artifacts
}

