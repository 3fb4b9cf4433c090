//! Times the phases of a render on a generated spec set — load, a full
//! render, a render that reuses every module's Rust file — and the bytes
//! per kind of artifact: `cargo run --release -p capspec-benches --example
//! profile_render -- 10000`.

use std::collections::BTreeMap;
use std::time::Instant;

use capspec_codegen::render::{self, Reuse};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let root = std::env::temp_dir().join(format!("capspec-profile-{n}"));
    let _ = std::fs::remove_dir_all(&root);
    capspec_benches::specs::write_project(&root, n);
    let t = Instant::now();
    let project = capspec_codegen::open(&root).unwrap();
    println!("load: {:?}", t.elapsed());
    let t = Instant::now();
    let rendered = project.render().expect("the generated project is valid");
    println!("render (nothing to reuse): {:?} ({} artifacts)", t.elapsed(), rendered.artifacts.len());
    let reuse: Reuse = rendered.artifacts.iter().map(|a| (a.path.clone(), a.contents.clone())).collect();
    let t = Instant::now();
    render::render_all_reusing(&project.loaded.set, &rendered.targets, reuse);
    println!("render (every module file reused): {:?}", t.elapsed());
    let mut bytes: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &rendered.artifacts {
        let kind = a.path.rsplit_once('.').map_or("", |(_, ext)| ext);
        *bytes.entry(kind).or_default() += a.contents.len();
    }
    for (kind, n) in bytes {
        println!("  .{kind}: {n} bytes");
    }
    let _ = std::fs::remove_dir_all(&root);
}
