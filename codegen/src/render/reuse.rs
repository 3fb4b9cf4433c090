//! The reuse cache of module Rust files: a rendered file records a hash of
//! everything it is made from in its marker line, and a later render reuses
//! the file on disk when that hash (and the file's own text hash) match —
//! rendering a module's Rust is the slowest step, and most modules do not
//! change between runs.

use crate::model::{CapabilitySpec, ModuleSpec};
use super::artifact::marker_line;
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
        text_hash(
            &[
                env!("CARGO_PKG_VERSION"),
                env!("CAPSPEC_RENDER_DEPS"),
                include_str!("rust.rs"),
                include_str!("abbrev.rs"),
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
    // written into one buffer and hashed once; positions are left out.
    use std::fmt::Write;
    let mut text = String::with_capacity(64 * 1024);
    let _ = write!(text, "{generator}\n{}\n{}\n{}\n", module.name, module.description, module.file);
    for cap in &module.capabilities {
        let unplaced = CapabilitySpec { pos: Default::default(), ..cap.clone() };
        let _ = writeln!(text, "{unplaced:?}");
    }
    text.push_str(facade);
    text.push('\n');
    text.push_str(catalog);
    text_hash(&text)
}

/// A 128-bit hash of `text` for reuse keys and text hashes: two
/// multiply-mix lanes over 8-byte words, then the length, each lane
/// finished with an avalanche step. Not the contract fingerprint (that one
/// is part of capabilities.json and stays FNV); this one only has to tell
/// a changed input from an unchanged one, quickly, the same way on every
/// machine (words are read little-endian).
pub(crate) fn text_hash(text: &str) -> String {
    const P1: u64 = 0x9e37_79b9_7f4a_7c15;
    const P2: u64 = 0xc2b2_ae3d_27d4_eb4f;
    let bytes = text.as_bytes();
    let (mut a, mut b) = (0x243f_6a88_85a3_08d3_u64, 0x1319_8a2e_0370_7344_u64);
    let mut words = bytes.chunks_exact(8);
    for word in words.by_ref() {
        let w = u64::from_le_bytes(word.try_into().expect("chunks of 8"));
        a = (a ^ w).wrapping_mul(P1).rotate_left(31);
        b = (b ^ w.rotate_left(29)).wrapping_mul(P2).rotate_left(27);
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    let w = u64::from_le_bytes(tail) ^ (bytes.len() as u64).rotate_left(56);
    a = (a ^ w).wrapping_mul(P1);
    b = (b ^ w.rotate_left(29) ^ bytes.len() as u64).wrapping_mul(P2);
    let fmix = |mut h: u64| {
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    };
    format!("{:016x}{:016x}", fmix(a ^ b.rotate_left(17)), fmix(b ^ a))
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
pub fn module_file_reusing(module: &ModuleSpec, facade: &str, catalog: &str, existing: Option<String>) -> String {
    let key = module_inputs_key(module, facade, catalog);
    if let Some(text) = existing {
        let reusable = recorded(&text).is_some_and(|(inputs, text_hash, body)| {
            let expected_first = format!("// {} [inputs {key}, text {text_hash}]", marker_line(&module.file));
            inputs == key && self::text_hash(body) == text_hash && text.starts_with(&format!("{expected_first}\n"))
        });
        if reusable {
            return text;
        }
    }
    let rendered = module_file(module, facade, catalog);
    let (marker, body) = rendered.split_once('\n').expect("a marker line");
    format!("{marker} [inputs {key}, text {}]\n{body}", text_hash(body))
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

    #[test]
    fn the_text_hash_sees_every_byte_and_the_length() {
        let base = "abcdefgh".repeat(5) + "xyz";
        let mut seen = std::collections::BTreeSet::from([text_hash(&base)]);
        for i in 0..base.len() {
            let mut bytes = base.clone().into_bytes();
            bytes[i] ^= 1;
            assert!(seen.insert(text_hash(&String::from_utf8(bytes).unwrap())), "byte {i}");
        }
        // Trailing zero bytes and a shorter text differ from the original.
        assert!(seen.insert(text_hash(&format!("{base}\0"))));
        assert!(seen.insert(text_hash(&base[..base.len() - 1])));
        assert!(seen.insert(text_hash("")));
        // Stable across runs and machines: a pinned value.
        assert_eq!(text_hash("capspec"), "c019e56947a514effb0d2fe12bd886ea");
    }
}
