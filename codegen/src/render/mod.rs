//! Renderers: `SpecSet` → artifacts (path + bytes). One module per target;
//! `sync` and `check` call the same [`render_all`] — the only difference is
//! write versus compare. Rendering works on values: it depends on the model
//! and its own [`Targets`], never on the config, and never touches the file
//! system (the reuse cache arrives as data, [`Reuse`]).

use std::collections::BTreeMap;

use crate::model::{ModuleSpec, SpecSet};

mod abbrev;
mod artifact;
mod catalog;
pub mod cedar;
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
pub use catalog::section_of_file;
pub use spec_const::SpecConst;

/// What the generated `MODULE` of `module` holds, for a host that mounts a
/// module with no generated Rust (`cargo capspec serve`): every
/// capability's `SPEC` values, the guest facade and the catalog section.
pub struct RuntimeModule {
    /// Per capability, in the module's order.
    pub specs: Vec<SpecConst>,
    /// The ES module guests import.
    pub facade: String,
    /// The module's section of the prompt catalog.
    pub catalog: String,
}

/// [`RuntimeModule`] of `module`: the same text `sync` writes.
pub fn runtime_module(module: &ModuleSpec, targets: &Targets) -> RuntimeModule {
    RuntimeModule {
        specs: module.capabilities.iter().map(|cap| SpecConst::of(module, cap)).collect(),
        facade: js::facade(module, targets),
        catalog: catalog::module_section(module, targets),
    }
}
pub use artifact::{Artifact, MARKER, Targets, contract_fingerprint, fingerprint, input_schema_json, input_schema_ordered, is_generated, marker_line};

/// Generated files as they are on disk, by path: the module Rust files a
/// render may reuse (see [`render_all_reusing`]). Read by the caller;
/// rendering never reads the disk.
pub type Reuse = BTreeMap<String, String>;

/// Render every artifact of a valid spec set, sorted by path. The category
/// snapshot is included (its drift is reported as `drift/snapshot`).
pub fn render_all(set: &SpecSet, targets: &Targets) -> Vec<Artifact> {
    render_all_reusing(set, targets, Reuse::new())
}

/// An aggregate's text: the file at `path` taken from `reuse` when it
/// records `key` and is untouched, else `render`ed and keyed.
fn aggregate(reuse: &mut Reuse, path: &str, key: &str, render: impl FnOnce() -> String) -> String {
    match reuse.remove(path) {
        Some(text) if reuse::reusable(&text, key) => text,
        _ => reuse::keyed(render(), key),
    }
}

/// The files of `module`, in the order its render produces them: facade,
/// declarations, catalog page, Rust bindings.
fn module_paths(module: &ModuleSpec, targets: &Targets) -> [String; 4] {
    [
        join(&targets.js, &format!("{}.js", module.name)),
        join(&targets.js, &format!("{}.d.ts", module.name)),
        join(&targets.catalog, &format!("{}.md", module.name)),
        join(&targets.rust, &format!("{}.rs", module.name)),
    ]
}

/// The paths [`render_all_reusing`] may reuse: every module's files,
/// `capabilities.json` and the Cedar schema.
pub fn reusable_paths(set: &SpecSet, targets: &Targets) -> Vec<String> {
    let mut paths: Vec<String> = set.modules.iter().flat_map(|m| module_paths(m, targets)).collect();
    paths.push(join(&targets.catalog, "capabilities.json"));
    if targets.cedar_schema {
        paths.push(join(&targets.catalog, cedar::FILE));
    }
    paths
}

/// For a module whose capabilities name cargo features (DESIGN §2): each
/// combination of those features, with the guest facade and the catalog
/// section of the capabilities a build with exactly those on has — the
/// Rust bindings pick one with `cfg!`. Empty for a module without features.
pub(crate) fn feature_variants(module: &ModuleSpec, targets: &Targets, key: &str) -> Vec<rust::Variant> {
    let features: std::collections::BTreeSet<&str> = module.capabilities.iter().filter_map(|c| c.feature.as_deref()).collect();
    let features: Vec<&str> = features.into_iter().collect();
    if features.is_empty() {
        return Vec::new();
    }
    (0..1usize << features.len())
        .map(|mask| {
            let on: Vec<String> = features.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, f)| f.to_string()).collect();
            let mut built = module.clone();
            built.capabilities.retain(|c| c.feature.as_ref().is_none_or(|f| on.contains(f)));
            rust::Variant { facade: reuse::keyed(js::facade(&built, targets), key), section: catalog::module_section(&built, targets), on }
        })
        .collect()
}

/// [`render_all`], reusing a module's files from `reuse` when every one of
/// them records the module's current key and is untouched — the bytes are
/// then exactly what rendering would produce.
pub fn render_all_reusing(set: &SpecSet, targets: &Targets, mut reuse: Reuse) -> Vec<Artifact> {
    // Modules render independently, in parallel; the aggregates follow. A
    // reused file's text moves into its artifact (no copy).
    let work: Vec<_> = set.modules.iter().map(|m| (m, module_paths(m, targets).map(|path| { let text = reuse.remove(&path); (path, text) }))).collect();
    let per_module = crate::parallel::map(work, |(module, files)| {
        let key = reuse::module_key(module, targets);
        if files.iter().all(|(_, text)| text.as_deref().is_some_and(|t| reuse::reusable(t, &key))) {
            let files = files.map(|(path, text)| Artifact { path, contents: text.expect("checked above") });
            let section = catalog::section_of_file(&files[2].contents).to_string();
            return (section, Vec::from(files), key);
        }
        let [js, dts, md, rs] = files.map(|(path, _)| path);
        let section = catalog::module_section(module, targets);
        let facade = reuse::keyed(js::facade(module, targets), &key);
        let variants = feature_variants(module, targets, &key);
        let files = vec![
            Artifact { path: dts, contents: reuse::keyed(js::declarations(module, targets), &key) },
            Artifact { path: md, contents: reuse::keyed(catalog::module_file(module, &section), &key) },
            Artifact { path: rs, contents: reuse::keyed(rust::module_file(module, &facade, &section, &variants), &key) },
            Artifact { path: js, contents: facade },
        ];
        (section, files, key)
    });
    let mut artifacts = Vec::new();
    let mut catalogs = Vec::new();
    let mut keys = Vec::new();
    for (catalog, files, key) in per_module {
        catalogs.push(catalog);
        artifacts.extend(files);
        keys.push(key);
    }
    // `capabilities.json`, the costliest aggregate, is reused the same way,
    // under a key of every module's key.
    let json_path = join(&targets.catalog, "capabilities.json");
    let json_key = reuse::aggregate_key(&[include_str!("json.rs")], &keys);
    let json = aggregate(&mut reuse, &json_path, &json_key, || json::capabilities(set, targets));
    artifacts.push(Artifact { path: join(&targets.rust, "mod.rs"), contents: rust::mod_file(set, targets) });
    artifacts.push(Artifact { path: join(&targets.catalog, "CATALOG.md"), contents: catalog::catalog_file(set, targets, &catalogs) });
    artifacts.push(Artifact { path: json_path, contents: json });
    artifacts.push(Artifact { path: targets.snapshot.clone(), contents: snapshot::render(set, targets) });
    for &provider in &targets.providers {
        artifacts.push(Artifact { path: join(&targets.catalog, &provider.file_name()), contents: providers::tools_file(set, provider) });
    }
    if targets.cedar_schema {
        // Every capability's input typed: reused like `capabilities.json`.
        let path = join(&targets.catalog, cedar::FILE);
        let key = reuse::aggregate_key(&[&[include_str!("cedar.rs")][..], &capspec_policy::SCHEMA_SOURCES].concat(), &keys);
        let contents = aggregate(&mut reuse, &path, &key, || cedar::schema(set, targets));
        artifacts.push(Artifact { path, contents });
    }
    if let Some(path) = &targets.editor_schema {
        artifacts.push(Artifact { path: path.clone(), contents: editor_schema::editor_schema() });
    }
    artifacts.sort();
    artifacts
}

