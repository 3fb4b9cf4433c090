//! What generated bindings declare: a capability's [`Spec`], its
//! [`Category`], and a [`Module`] of them.


/// The safety category of a capability: a closed enum with no default
/// (the same type the generator checks specs with).
pub use capspec_policy::Category;

/// One capability's spec, as generated into a host's bindings
/// (`pub const SPEC: capspec::Spec`). Everything is `'static` so the whole
/// table lives in the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The module it belongs to.
    pub module: &'static str,
    /// The capability name, unique in its module.
    pub name: &'static str,
    /// The one name it has on flat surfaces (MCP tools, provider tool
    /// lists): the bare name when no other module of the project uses it,
    /// else `<module>__<name>`.
    pub wire_name: &'static str,
    /// A short human title (the MCP `title`), when the spec gives one.
    pub title: Option<&'static str>,
    /// The MCP tool annotations: the category's, refined by the spec's `hints`.
    pub annotations: Annotations,
    /// The safety category; there is no default.
    pub category: Category,
    /// The full description from the spec.
    pub description: &'static str,
    /// The catalog one-liner (the description's first sentence).
    pub summary: &'static str,
    /// The catalog signature: `name({arg: type, opt?: type = default}) → output`.
    pub signature: &'static str,
    /// The input schema as minified JSON (`{}`-free object schema when the
    /// spec gives none).
    pub input_schema: &'static str,
    /// The output schema as minified JSON, when the spec gives one.
    pub output_schema: Option<&'static str>,
    /// A message for people, with `{placeholders}` naming input properties.
    pub user_message: Option<&'static str>,
    /// Listed by name only in the prompt catalog.
    pub deferred: bool,
    /// Also a tool of its own on the MCP code surface, beside `execute_code`.
    pub direct: bool,
    /// Hidden compatibility names; resolve at invoke.
    pub aliases: &'static [&'static str],
    /// Why it is deprecated and what to use instead; still callable.
    pub deprecated: Option<&'static str>,
    /// Hash of description, schemas and category: changes when the contract does.
    pub fingerprint: &'static str,
}

/// The four MCP tool annotations of a capability, all explicit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Annotations {
    /// `readOnlyHint`: mutates nothing.
    pub read_only: bool,
    /// `destructiveHint`: may destroy or overwrite data.
    pub destructive: bool,
    /// `idempotentHint`: repeating a call with the same arguments has no further effect.
    pub idempotent: bool,
    /// `openWorldHint`: reaches entities outside the host.
    pub open_world: bool,
}

/// One module of capabilities as generated into a host's bindings
/// (`pub const MODULE: capspec::Module`): its specs, the guest facade source
/// and its prompt-catalog section, so a host embeds everything from one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module {
    /// The module name.
    pub name: &'static str,
    /// One line describing the module.
    pub description: &'static str,
    /// Its capabilities' specs, sorted by name.
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
