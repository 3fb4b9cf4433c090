//! `cargo xtask scaffold`: a ready-to-fill `#[capability]` fn for every
//! capability without one, appended to `<first coverage source>/capabilities/<module>.rs`.
//! Existing code is never modified; `check` reports the new bodies as
//! `coverage/stub` until they are filled in.

use std::collections::BTreeMap;
use std::path::Path;

use crate::gate::coverage;
use crate::finding::Finding;
use crate::project;
use crate::source::Sources;
use crate::sync::SyncError;

/// What `scaffold` wrote, or why it wrote nothing.
#[derive(Debug, Default)]
pub struct ScaffoldOutcome {
    /// Spec or config errors: nothing was written.
    pub findings: Vec<Finding>,
    /// The texts the findings point into.
    pub sources: Sources,
    /// File → capabilities appended to it.
    pub written: BTreeMap<String, Vec<String>>,
    /// Files that did not exist before.
    pub created: Vec<String>,
    /// The Rust path of the generated bindings used in the stubs.
    pub bindings_path: String,
}

/// The Rust path of the generated bindings as seen from the crate whose
/// source directory is `source` (e.g. `crate::generated`).
fn bindings_path(source: &str, rust: &str) -> Result<String, String> {
    let source = source.trim_end_matches('/');
    let rest = rust.strip_prefix(&format!("{source}/")).ok_or_else(|| {
        format!("the Rust bindings (`{rust}`) are not inside the first coverage source (`{source}`), so a stub cannot name them")
    })?;
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    for s in &segments {
        let ok = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(format!("`{s}` in `{rust}` is not a Rust module name"));
        }
    }
    Ok(format!("crate::{}", segments.join("::")))
}

/// Append a stub for every capability without an impl. With spec or config
/// errors nothing is written and the findings are returned.
pub fn scaffold(root: &Path) -> Result<ScaffoldOutcome, SyncError> {
    let project = project::open(root)?;
    if project.is_blocked() {
        let (findings, sources) = project.into_findings();
        return Ok(ScaffoldOutcome { findings, sources, ..ScaffoldOutcome::default() });
    }
    let config = project.config.as_ref().expect("rendered projects have a config");
    let source = config.coverage.sources.first().cloned().unwrap_or_else(|| "src".into());
    let bindings = bindings_path(&source, &config.generate.rust).map_err(|reason| SyncError::Unsafe { path: config.generate.rust.clone(), reason })?;
    let scan = coverage::scan(root, config);
    let implemented: std::collections::BTreeSet<(String, String)> = scan
        .impls
        .iter()
        .filter_map(|s| match s.path.as_slice() {
            [.., m, n] => Some((m.clone(), n.clone())),
            _ => None,
        })
        .collect();
    let mut outcome = ScaffoldOutcome { bindings_path: bindings.clone(), ..ScaffoldOutcome::default() };
    let mut plans: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for (m, c) in project.loaded.set.capabilities() {
        if implemented.contains(&(m.name.clone(), c.name.clone())) {
            continue;
        }
        let rel = format!("{source}/capabilities/{}.rs", m.name);
        let entry = plans.entry(rel.clone()).or_insert_with(|| {
            let existing = std::fs::read_to_string(root.join(&rel)).unwrap_or_default();
            (existing, Vec::new())
        });
        let path = format!("{bindings}::{}::{}", m.name, c.name);
        let output = if c.output.is_some() { format!("{path}::Output") } else { "()".to_string() };
        let mut fn_name = c.name.clone();
        while entry.0.contains(&format!("fn {fn_name}(")) {
            fn_name.push_str("_impl");
        }
        // A code-first spec's args are its own type (`my_crate::a::T` is
        // `crate::a::T` inside the crate).
        let (attr, args) = match &c.code_first {
            Some(origin) => {
                let in_crate = origin.rust_type.split_once("::").map_or(origin.rust_type.clone(), |(_, rest)| format!("crate::{rest}"));
                ("#[capspec::capability]".to_string(), in_crate)
            }
            None => (format!("#[capspec::capability({path})]"), format!("{path}::Args")),
        };
        entry.0.push_str(&format!(
            "\n{attr}\nasync fn {fn_name}(_run: &capspec::Run, _args: {args}) -> capspec::CapResult<{output}> {{\n    todo!(\"implement {}.{}\")\n}}\n",
            m.name, c.name
        ));
        entry.1.push(c.name.clone());
    }
    for (rel, (text, caps)) in plans {
        let target = root.join(&rel);
        let is_new = !target.exists();
        let text = if is_new {
            let module = rel.rsplit('/').next().unwrap_or_default().trim_end_matches(".rs");
            format!("//! Implementations of the `{module}` capability module.\n{text}")
        } else {
            text
        };
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(|source| SyncError::Write { path: rel.clone(), source })?;
        }
        let temp = target.with_extension("rs.capspec-tmp");
        std::fs::write(&temp, &text)
            .and_then(|()| std::fs::rename(&temp, &target))
            .map_err(|source| {
                let _ = std::fs::remove_file(&temp);
                SyncError::Write { path: rel.clone(), source }
            })?;
        if is_new {
            outcome.created.push(rel.clone());
        }
        outcome.written.insert(rel, caps);
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    #[test]
    fn bindings_path_is_relative_to_the_source_dir() {
        assert_eq!(super::bindings_path("src", "src/generated"), Ok("crate::generated".into()));
        assert_eq!(super::bindings_path("examples/h/src/", "examples/h/src/gen/caps"), Ok("crate::gen::caps".into()));
        assert!(super::bindings_path("src", "other/generated").is_err());
        assert!(super::bindings_path("src", "src/gen-code").is_err());
    }
}
