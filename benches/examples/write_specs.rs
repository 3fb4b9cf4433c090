//! Writes a generated project of N capabilities into DIR (the same specs as
//! the scale benchmarks): `cargo run --release -p capspec-benches --example
//! write_specs -- DIR N`. Used by `benches/compile-time.sh`.

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(n)) = (args.next(), args.next().and_then(|n| n.parse::<usize>().ok())) else {
        eprintln!("usage: write_specs DIR N");
        std::process::exit(2);
    };
    capspec_benches::specs::write_project(std::path::Path::new(&dir), n);
}
