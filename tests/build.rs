//! Renders the Rust bindings of every fixture under `fixtures/render/` and
//! `fixtures/import/` into
//! `OUT_DIR`, so `cargo test` compiles what capspec generates for hostile
//! text and the whole schema subset (see `src/lib.rs`, `bindings`).

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut cases: Vec<PathBuf> = Vec::new();
    for dir in ["fixtures/render", "fixtures/import"] {
        let fixtures = manifest.join(dir);
        println!("cargo:rerun-if-changed={}", fixtures.display());
        cases.extend(
            std::fs::read_dir(&fixtures)
                .expect("fixture directory exists")
                .map(|e| e.expect("readable entry").path())
                .filter(|p| p.join("capspec.toml").is_file()),
        );
    }
    cases.sort();
    let mut index = String::new();
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().replace('-', "_");
        let project = capspec_codegen::open(&case).expect("fixture opens");
        let capspec_codegen::project::Rendered { targets, artifacts } = project
            .render()
            .unwrap_or_else(|| panic!("render fixture {} has spec errors", case.display()));
        let dir = out.join(&name);
        std::fs::create_dir_all(&dir).expect("create out dir");
        let prefix = format!("{}/", targets.rust);
        for artifact in artifacts.iter().filter(|a| a.path.starts_with(&prefix)) {
            let file = Path::new(&artifact.path).file_name().unwrap();
            std::fs::write(dir.join(file), &artifact.contents).expect("write binding");
        }
        index.push_str(&format!("#[path = {:?}]\npub mod {name};\n", dir.join("mod.rs").display().to_string()));
    }
    std::fs::write(out.join("bindings.rs"), index).expect("write index");
}
