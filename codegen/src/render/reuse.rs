//! The reuse cache of module Rust files: a rendered file records a hash of
//! everything it is made from in its marker line, and a later render reuses
//! the file on disk when that hash (and the file's own text hash) match —
//! rendering a module's Rust is the slowest step, and most modules do not
//! change between runs.

use crate::model::{CapabilitySpec, ModuleSpec};
use super::artifact::{Fingerprinter, fingerprint, marker_line};
use super::rust::module_file;

/// Everything a module's Rust file is made from, hashed: the generator (its
/// version, its own sources, and the locked versions of the crates that
/// shape the text — `CAPSPEC_RENDER_DEPS`, from `build.rs`), the module's
/// whole spec (every field; positions aside, which the file does not show),
/// and the facade and catalog texts it embeds. Recorded in the file's
/// marker line so `check` and `sync` can skip re-rendering a module whose
/// inputs did not change.
pub fn module_inputs_key(module: &ModuleSpec, facade: &str, catalog: &str) -> String {
    static GENERATOR: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let generator = GENERATOR.get_or_init(|| {
        fingerprint(
            &[
                env!("CARGO_PKG_VERSION"),
                env!("CAPSPEC_RENDER_DEPS"),
                include_str!("rust.rs"),
                include_str!("reuse.rs"),
                include_str!("artifact.rs"),
                include_str!("ts.rs"),
                include_str!("shape.rs"),
                include_str!("naming.rs"),
                include_str!("escape.rs"),
                // The signature in each `Spec` is the catalog's notation.
                include_str!("catalog.rs"),
            ]
            .concat(),
        )
    });
    // The spec's Debug form holds every field, so a field added to the model
    // is part of the key without anyone remembering to add it here. It is
    // hashed as it is written (no string is built); positions are left out.
    use std::fmt::Write;
    let mut key = Fingerprinter::default();
    let _ = write!(key, "{generator}\n{}\n{}\n{}\n", module.name, module.description, module.file);
    for cap in &module.capabilities {
        let unplaced = CapabilitySpec { pos: Default::default(), ..cap.clone() };
        let _ = writeln!(key, "{unplaced:?}");
    }
    key.add(facade.as_bytes());
    key.add(b"\n");
    key.add(catalog.as_bytes());
    key.finish()
}

/// The body of a generated Rust file (everything after its marker line)
/// and the keys its marker records, when it has them.
fn recorded(text: &str) -> Option<(&str, &str, &str)> {
    let (first, body) = text.split_once('\n')?;
    let keys = first.rsplit_once(" [inputs ")?.1.strip_suffix(']')?;
    let (inputs, text_hash) = keys.split_once(", text ")?;
    Some((inputs, text_hash, body))
}

/// `<rust>/<module>.rs`, reusing `existing` (the file on disk) when its
/// recorded input key matches and its text is untouched.
pub fn module_file_reusing(module: &ModuleSpec, facade: &str, catalog: &str, existing: Option<&str>) -> String {
    let key = module_inputs_key(module, facade, catalog);
    if let Some(text) = existing {
        if let Some((inputs, text_hash, body)) = recorded(text) {
            let expected_first = format!("// {} [inputs {key}, text {text_hash}]", marker_line(&module.file));
            if inputs == key && fingerprint(body) == text_hash && text.starts_with(&format!("{expected_first}\n")) {
                return text.to_string();
            }
        }
    }
    let rendered = module_file(module, facade, catalog);
    let (marker, body) = rendered.split_once('\n').expect("a marker line");
    format!("{marker} [inputs {key}, text {}]\n{body}", fingerprint(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reuse_key_covers_render_dependencies_and_every_spec_field() {
        // The locked versions of the crates that shape the text are known.
        for dep in ["syn ", "quote ", "proc-macro2 ", "prettyplease ", "minijinja "] {
            assert!(env!("CAPSPEC_RENDER_DEPS").contains(dep), "{dep} missing from {}", env!("CAPSPEC_RENDER_DEPS"));
        }
        let loaded = crate::load::load_files(vec![crate::load::SpecFile {
            path: "specs/m.yaml".into(),
            bytes: b"module: m\ndescription: M.\ncapabilities:\n  - { name: a, category: write, description: A. }\n".to_vec(),
        }]);
        let module = &loaded.set.modules[0];
        let key = |m: &ModuleSpec| module_inputs_key(m, "facade", "catalog");
        // Any field of the spec changes the key — even one added after the
        // key was written (title, hints) — while a moved line does not.
        let mut changed = module.clone();
        changed.capabilities[0].title = Some("A".into());
        assert_ne!(key(&changed), key(module));
        let mut changed = module.clone();
        changed.capabilities[0].hints.idempotent = Some(true);
        assert_ne!(key(&changed), key(module));
        let mut moved = module.clone();
        moved.capabilities[0].pos.line += 10;
        assert_eq!(key(&moved), key(module));
    }
}
