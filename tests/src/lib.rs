//! End-to-end tests for capspec live in `tests/`; fixtures in `fixtures/`.
//! This library holds what only they and the benchmarks share: the
//! fixtures' compiled bindings and the canary impls. Helpers every test
//! target uses are in `capspec-testkit`.

use std::path::{Path, PathBuf};

pub mod canary;
pub mod shapes;

/// The generated Rust bindings of every fixture under `fixtures/render/`,
/// rendered by `build.rs`: if capspec generated Rust that does not compile,
/// this crate would not build. The `hostile` fixture's descriptions hold
/// markup on purpose (they must stay data), which rustdoc reads as HTML.
#[allow(rustdoc::invalid_html_tags)]
pub mod bindings {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}

/// The fixtures directory of this crate.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}
