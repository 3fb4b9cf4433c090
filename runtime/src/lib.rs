//! capspec runtime: what an agent host links.
//!
//! Today this crate holds the types generated bindings refer to — [`Spec`]
//! and [`Category`]. The registry, `invoke`, the permission gate and the
//! guest host are built on top of them (see the project's issues).

use std::fmt;

/// What generated bindings name. Not a public API: only generated code and
/// the macros use these paths, so a host depends on `capspec` alone.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;
}

/// The safety category of a capability: a closed enum with no default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Inspects state and mutates nothing anywhere.
    Read,
    /// Edits persisted state, local or remote.
    Write,
    /// Runs code, ships a deliverable, triggers automation.
    Execute,
    /// Acts through a third party or runs many actions at once.
    External,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Read => "read",
            Category::Write => "write",
            Category::Execute => "execute",
            Category::External => "external",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One capability's spec, as generated into a host's bindings
/// (`pub const SPEC: capspec::Spec`). Everything is `'static` so the whole
/// table lives in the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub module: &'static str,
    pub name: &'static str,
    pub category: Category,
    /// The full description from the spec.
    pub description: &'static str,
    /// The catalog one-liner (the description's first sentence).
    pub summary: &'static str,
    /// The input schema as minified JSON (`{}`-free object schema when the
    /// spec gives none).
    pub input_schema: &'static str,
    /// The output schema as minified JSON, when the spec gives one.
    pub output_schema: Option<&'static str>,
    pub user_message: Option<&'static str>,
    pub deferred: bool,
    pub aliases: &'static [&'static str],
    pub deprecated: Option<&'static str>,
    /// Hash of description, schemas and category: changes when the contract does.
    pub fingerprint: &'static str,
}

/// One module of capabilities as generated into a host's bindings
/// (`pub const MODULE: capspec::Module`): its specs, the guest facade source
/// and its prompt-catalog section, so a host embeds everything from one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module {
    pub name: &'static str,
    pub description: &'static str,
    pub specs: &'static [Spec],
    /// The ES module source served to guests for `<specifier>/<name>`.
    pub facade: &'static str,
    /// This module's section of the prompt catalog (Markdown).
    pub catalog: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_text_matches_its_serde_form() {
        for c in [Category::Read, Category::Write, Category::Execute, Category::External] {
            assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{c}\""));
        }
    }
}
