//! The capspec book's examples, run: every Rust block of `docs/src/*.md` is
//! a doctest of this crate, over the small notes host below (its specs in
//! `specs/`, its bindings generated into `src/generated` by `sync`).

#![warn(missing_docs)]

mod capabilities;
#[allow(missing_docs)]
pub mod generated;

use std::sync::{Arc, Mutex};

/// The notes a host keeps, attached to each run with `Run::with` (a clone
/// shares them).
#[derive(Default, Clone)]
pub struct Notes {
    titles: Arc<Mutex<Vec<(String, String)>>>,
}

impl Notes {
    /// A store holding these (title, body) notes.
    pub fn with(notes: &[(&str, &str)]) -> Notes {
        Notes { titles: Arc::new(Mutex::new(notes.iter().map(|(t, b)| (t.to_string(), b.to_string())).collect())) }
    }
}

macro_rules! chapters {
    ($($name:ident = $file:literal;)*) => {
        $(
            #[cfg(doctest)]
            #[doc = include_str!(concat!("../../src/", $file))]
            pub struct $name;
        )*
    };
}

chapters! {
    GettingStarted = "getting-started.md";
    Specs = "specs.md";
    Gate = "gate.md";
    Runtime = "runtime.md";
    CodeMode = "code-mode.md";
    Serving = "serving.md";
    Upstreams = "upstreams.md";
    Migrating = "migrating-from-rmcp.md";
    IdentityAndPolicies = "identity-and-policies.md";
    Operating = "operating.md";
}
