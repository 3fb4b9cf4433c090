//! The reuse cache of module files: each of a module's rendered files (its
//! Rust bindings, facade, declarations and catalog page) records in its
//! marker line a key of everything the module's files are made from and a
//! hash of its own text, and a later render reuses the module's files on
//! disk when all of them record the current key and are untouched —
//! rendering is most of `check`'s work, and most modules do not change
//! between runs.

use crate::model::{CapabilitySpec, ModuleSpec};
use super::artifact::{MARKER, Targets};

/// Everything a module's files are made from, hashed: the generator (its
/// version, its own sources and templates, and the locked versions of the
/// crates that shape the text — `CAPSPEC_RENDER_DEPS`, from `build.rs`),
/// where the files go and how guests import them ([`Targets`]), and the
/// module's whole spec (every field; positions aside, which no file shows).
/// Recorded in the files' marker lines so `check` and `sync` can skip
/// rendering a module whose inputs did not change.
pub fn module_key(module: &ModuleSpec, targets: &Targets) -> String {
    static GENERATOR: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let generator = GENERATOR.get_or_init(|| {
        text_hash(
            &[
                env!("CARGO_PKG_VERSION"),
                env!("CAPSPEC_RENDER_DEPS"),
                include_str!("mod.rs"),
                include_str!("rust.rs"),
                include_str!("abbrev.rs"),
                include_str!("spec_const.rs"),
                include_str!("reuse.rs"),
                include_str!("artifact.rs"),
                include_str!("js.rs"),
                include_str!("ts.rs"),
                include_str!("shape.rs"),
                include_str!("naming.rs"),
                include_str!("escape.rs"),
                include_str!("catalog.rs"),
                include_str!("templates.rs"),
                include_str!("../../templates/js/facade.js.j2"),
                include_str!("../../templates/js/facade.d.ts.j2"),
                include_str!("../../templates/catalog/module.md.j2"),
                include_str!("../../templates/catalog/file.md.j2"),
            ]
            .concat(),
        )
    });
    // The spec's Debug form holds every field, so a field added to the model
    // is part of the key without anyone remembering to add it here. It is
    // written into one buffer and hashed once; positions are left out.
    use std::fmt::Write;
    let mut text = String::with_capacity(64 * 1024);
    let _ = write!(text, "{generator}\n{targets:?}\n{}\n{}\n{}\n", module.name, module.description, module.file);
    for cap in &module.capabilities {
        let unplaced = CapabilitySpec { pos: Default::default(), ..cap.clone() };
        let _ = writeln!(text, "{unplaced:?}");
    }
    text_hash(&text)
}

/// The key of an aggregate made from every module (`capabilities.json`,
/// the Cedar schema): its renderer's `sources` and every module's key, in
/// order.
pub fn aggregate_key(sources: &[&str], module_keys: &[String]) -> String {
    let mut text = [env!("CARGO_PKG_VERSION"), env!("CAPSPEC_RENDER_DEPS"), include_str!("artifact.rs"), include_str!("reuse.rs")].concat();
    text.extend(sources.iter().copied());
    for key in module_keys {
        text.push_str(key);
        text.push('\n');
    }
    text_hash(&text)
}

/// Where the keys go on a generated file's first line: right after the
/// marker sentence.
const SENTENCE_END: &str = "; do not edit, run `cargo xtask sync`";

/// The hash a file records of its own text: its first line without the
/// keys, then its body.
fn own_hash(first_line: &str, body: &str) -> String {
    text_hash(&format!("{first_line}\n{}", text_hash(body)))
}

/// `text` (a rendered file, its marker sentence on the first line) with
/// `[inputs <key>, text <hash>]` after the marker sentence.
pub fn keyed(text: String, key: &str) -> String {
    let (first, body) = text.split_once('\n').unwrap_or((&text, ""));
    let at = first.find(MARKER).and_then(|m| first[m..].find(SENTENCE_END).map(|e| m + e + SENTENCE_END.len())).expect("a generated file's first line holds the marker sentence");
    let hash = own_hash(first, body);
    format!("{} [inputs {key}, text {hash}]{}\n{body}", &first[..at], &first[at..])
}

/// Whether `existing` (a file on disk) records `key` and is untouched since
/// it was written, so it is exactly what rendering would produce now.
pub fn reusable(existing: &str, key: &str) -> bool {
    let Some((first, body)) = existing.split_once('\n') else { return false };
    let Some(open) = first.find(" [inputs ") else { return false };
    let Some(close) = first[open..].find(']').map(|c| open + c) else { return false };
    let Some((inputs, hash)) = first[open + " [inputs ".len()..close].split_once(", text ") else { return false };
    inputs == key && first[..open].ends_with(SENTENCE_END) && own_hash(&format!("{}{}", &first[..open], &first[close + 1..]), body) == hash
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
        let targets = Targets {
            specs: "specs".into(),
            snapshot: "capspec.snap".into(),
            rust: "src/generated".into(),
            js: "guest".into(),
            catalog: "catalog".into(),
            specifier: "@capspec/host".into(),
            bridge: "capspec:bridge".into(),
            editor_schema: None,
            providers: vec![],
            cedar_schema: false,
        };
        let key = |m: &ModuleSpec| module_key(m, &targets);
        // Where the files go is part of the key.
        let moved_out = Targets { js: "web".into(), ..targets.clone() };
        assert_ne!(module_key(module, &moved_out), key(module));
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

    /// A keyed file is reusable under its key only, and not after any edit
    /// — of its body, of its first line, or of the keys themselves.
    #[test]
    fn a_keyed_file_is_reusable_until_anything_in_it_changes() {
        let rendered = "<!-- @generated by capspec from specs/m.yaml; do not edit, run `cargo xtask sync` -->\n## m\n\ntext\n".to_string();
        let keyed = keyed(rendered.clone(), "k1");
        assert!(keyed.starts_with("<!-- @generated by capspec from specs/m.yaml; do not edit, run `cargo xtask sync` [inputs k1, text "));
        assert!(keyed.ends_with(" -->\n## m\n\ntext\n"));
        assert!(reusable(&keyed, "k1"));
        assert!(!reusable(&keyed, "k2"));
        assert!(!reusable(&rendered, "k1"), "a file without keys is rendered");
        for (from, to) in [("text\n", "text!\n"), ("specs/m.yaml", "specs/n.yaml"), (" -->", " --> "), ("[inputs k1", "[inputs k2")] {
            assert!(!reusable(&keyed.replacen(from, to, 1), "k1"), "{from:?} → {to:?}");
        }
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
