//! Times each renderer on a generated spec set: `cargo run --release -p
//! capspec-benches --example profile_render -- 10000`.

use std::time::Instant;

use capspec_codegen::render::{self, Targets};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let root = std::env::temp_dir().join(format!("capspec-profile-{n}"));
    let _ = std::fs::remove_dir_all(&root);
    capspec_benches::specs::write_project(&root, n);
    let t = Instant::now();
    let project = capspec_codegen::check::open(&root).unwrap();
    println!("load: {:?}", t.elapsed());
    let targets = Targets::from_config(project.config.as_ref().unwrap());
    let set = &project.loaded.set;
    let t = Instant::now();
    let catalogs: Vec<String> = set.modules.iter().map(|m| render::catalog::module_section(m, &targets)).collect();
    println!("catalog sections: {:?}", t.elapsed());
    let t = Instant::now();
    let facades: Vec<String> = set.modules.iter().map(|m| render::js::facade(m, &targets)).collect();
    println!("facades: {:?}", t.elapsed());
    let t = Instant::now();
    for m in &set.modules {
        render::js::declarations(m, &targets);
    }
    println!("d.ts: {:?}", t.elapsed());
    let t = Instant::now();
    for (i, m) in set.modules.iter().enumerate() {
        render::rust::module_file_reusing(m, &facades[i], &catalogs[i], None);
    }
    println!("rust: {:?}", t.elapsed());
    let t = Instant::now();
    render::json::capabilities(set, &targets);
    println!("capabilities.json: {:?}", t.elapsed());
    let t = Instant::now();
    let all = render::render_all(set, &targets);
    println!("render_all: {:?} ({} artifacts)", t.elapsed(), all.len());
    let _ = std::fs::remove_dir_all(&root);
}
