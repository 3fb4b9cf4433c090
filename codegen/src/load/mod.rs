//! Loading and validating specs: bytes → located YAML tree → the typed
//! [`SpecSet`], with every problem a located, rule-tagged [`Finding`].
//!
//! One job per file: `read` (the only code that reads spec files),
//! `module` (a module's and its capabilities' keys and rules), `schema`
//! (the JSON Schema subset), `names` (duplicates across files). This file
//! runs them in order.

pub(crate) mod keys;
mod module;
mod names;
pub(crate) mod read;
mod schema;

use std::path::Path;

use crate::finding::Finding;
use crate::model::{CodeOrigin, MAX_WIRE_NAME, ModuleSpec, SpecSet, assign_wire_names};
use crate::rules as rule;
use crate::source::Sources;
use crate::yaml::{Node, Pos};
use capspec_names::{did_you_mean, name_problem};

use module::Decoder;
use names::NameTable;
pub use read::SpecFile;

/// What loading produced: the valid part of the spec set, every finding, and
/// the sources the findings point into.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The valid part of the spec set.
    pub set: SpecSet,
    /// Every finding, sorted.
    pub findings: Vec<Finding>,
    /// The texts the findings point into.
    pub sources: Sources,
}

/// Load spec files already read into memory: parse and validate each file
/// (in parallel), then check names across files in path order. Output order
/// does not depend on input order or on thread scheduling.
pub fn load_files(files: Vec<SpecFile>) -> Loaded {
    load_files_with(files, Vec::new())
}

/// A code-first spec ready to join the YAML specs: the capability as a
/// spec-shaped node (every position is the derive's), and where it is from.
#[derive(Debug, Clone)]
pub(crate) struct CodeFirstEntry {
    /// The module it joins.
    pub module: String,
    /// The capability as a spec-shaped node, every position the derive's.
    pub node: Node,
    /// Where the spec is declared.
    pub origin: CodeOrigin,
    /// The Rust file's text, for snippets in findings.
    pub text: Option<String>,
}

/// [`load_files`], then code-first specs join their modules: they pass the
/// same capability rules, and names are checked across both (a YAML
/// capability and a derive of the same name are `spec/duplicate-name`).
pub(crate) fn load_files_with(files: Vec<SpecFile>, code_first: Vec<CodeFirstEntry>) -> Loaded {
    let mut files = files;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let results = crate::parallel::map(files, module::load_one);
    let mut loaded = Loaded::default();
    let mut names = NameTable::default();
    for result in results {
        names.absorb(result.names);
        loaded.findings.extend(result.findings);
        if let Some(text) = result.text {
            loaded.sources.insert(&result.path, text);
        }
        if let Some(module) = result.module {
            loaded.set.modules.push(module);
        }
    }
    let declared: Vec<String> = loaded.set.modules.iter().map(|m| m.name.clone()).collect();
    for entry in code_first {
        let CodeFirstEntry { module, node, origin, text } = entry;
        if let Some(text) = text {
            loaded.sources.insert(&origin.file, text);
        }
        crate::lint::capability_tree(&origin.file, &node, &mut loaded.findings);
        let mut decoder = Decoder { file: &origin.file, findings: &mut loaded.findings, names: &mut names, code_first: true, upstream: false };
        if let Some(problem) = name_problem(&module) {
            decoder.error(rule::SPEC_INVALID_NAME, node.pos, format!("invalid module name in #[capability(module = …)]: {problem}"));
            continue;
        }
        let Some(mut cap) = decoder.capability(&node, &module) else { continue };
        match loaded.set.modules.iter_mut().find(|m| m.name == module) {
            Some(m) => {
                cap.code_first = Some(origin);
                m.capabilities.push(cap);
            }
            None => {
                let hint = did_you_mean(&module, declared.iter().map(String::as_str));
                decoder.error(
                    rule::CODE_FIRST_UNKNOWN_MODULE,
                    node.pos,
                    format!(
                        "`{}` (#[derive(Capability)] on `{}`) names module `{module}`, which no spec file declares (a spec file declares a module with `module` and `description`; its `capabilities` may be empty){hint}",
                        cap.name, origin.rust_type
                    ),
                );
            }
        }
    }
    for (module, file, pos) in std::mem::take(&mut names.empty_modules) {
        if loaded.set.module(&module).is_some_and(|m| m.capabilities.is_empty()) {
            loaded.findings.push(Finding::error(
                rule::SPEC_MISSING_FIELD,
                &file,
                pos,
                "`capabilities` is empty; a module needs at least one capability, here or declared with #[derive(Capability)] in a [code_first] package",
            ));
        }
    }
    names.report(&mut loaded.findings);
    loaded.set.modules.sort_by(|a, b| a.name.cmp(&b.name));
    for module in &mut loaded.set.modules {
        module.capabilities.sort_by(|a, b| a.name.cmp(&b.name));
    }
    wire_names(&mut loaded);
    loaded.findings.extend(crate::lint::shadowing(&loaded.set));
    Finding::sort(&mut loaded.findings);
    loaded
}

/// Give every capability its wire name; one over [`MAX_WIRE_NAME`]
/// characters, or two equal ones, is a finding at each capability.
fn wire_names(loaded: &mut Loaded) {
    assign_wire_names(&mut loaded.set.modules);
    let mut seen: std::collections::BTreeMap<&str, Vec<(&ModuleSpec, &crate::model::CapabilitySpec)>> = Default::default();
    for (m, c) in loaded.set.capabilities() {
        seen.entry(&c.wire_name).or_default().push((m, c));
        if c.wire_name.len() > MAX_WIRE_NAME {
            loaded.findings.push(Finding::error(
                rule::SPEC_INVALID_NAME,
                c.file(m),
                c.pos,
                format!(
                    "the wire name of `{}.{}` is `{}`, {} characters; flat tool surfaces accept at most {MAX_WIRE_NAME} (shorten the module or capability name)",
                    m.name,
                    c.name,
                    c.wire_name,
                    c.wire_name.len()
                ),
            ));
        }
    }
    // Two capabilities of one qualified name are already a duplicate.
    let distinct = |u: &Vec<(&ModuleSpec, &crate::model::CapabilitySpec)>| u.iter().map(|(m, c)| (&m.name, &c.name)).collect::<std::collections::BTreeSet<_>>().len();
    for (wire, uses) in seen.into_iter().filter(|(_, u)| distinct(u) > 1) {
        let all = uses.iter().map(|(m, c)| format!("`{}.{}`", m.name, c.name)).collect::<Vec<_>>().join(", ");
        for (m, c) in &uses {
            loaded.findings.push(Finding::error(rule::SPEC_DUPLICATE_NAME, c.file(m), c.pos, format!("wire name `{wire}` is shared by {all}; wire names must be unique")));
        }
    }
}

/// Read and load the specs directory of a project, with code-first specs
/// joining (see [`load_files_with`]).
pub(crate) fn load_dir_with(root: &Path, specs_dir: &str, code_first: Vec<CodeFirstEntry>) -> Loaded {
    let (files, mut read_findings) = read::read_spec_dir(root, specs_dir);
    let no_files = files.is_empty() && read_findings.is_empty();
    let mut loaded = load_files_with(files, code_first);
    if no_files {
        loaded.findings.push(Finding::error(
            rule::SPEC_EMPTY,
            specs_dir,
            Pos::default(),
            format!("no spec files (`*.yaml`, `*.yml`) under `{specs_dir}`; add one module spec per file"),
        ));
    }
    loaded.findings.append(&mut read_findings);
    Finding::sort(&mut loaded.findings);
    loaded
}

