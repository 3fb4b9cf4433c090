//! The `#[capability(module = "…", category = "…", description = "…", name = "…",
//! title = "…", hints(destructive = false, idempotent = true, open_world = true))]`
//! attribute: one slot per key, duplicates and unknown keys rejected where
//! they are parsed. Whether a hint suits the category is the spec format's
//! rule, checked by `check` like a YAML spec's.

use proc_macro2::Span;
use syn::spanned::Spanned;

use capspec_names::did_you_mean;

use crate::errors::Errors;

pub const KEYS: [&str; 6] = ["module", "category", "description", "name", "title", "hints"];
/// The keys of `hints(…)`, as in a YAML spec.
pub const HINT_KEYS: [&str; 3] = ["destructive", "idempotent", "open_world"];
/// The categories as written in the attribute and as `Category` variants.
pub const CATEGORIES: [(&str, &str); 4] = [("read", "Read"), ("write", "Write"), ("execute", "Execute"), ("external", "External")];
pub const USAGE: &str = "#[capability(module = \"…\", category = \"read | write | execute | external\", description = \"…\")]";

/// The attribute's keys as written (each `None` when absent).
pub struct Attr {
    pub module: Option<syn::LitStr>,
    pub category: Option<syn::LitStr>,
    pub description: Option<syn::LitStr>,
    pub name: Option<syn::LitStr>,
    pub title: Option<syn::LitStr>,
    /// `hints(key = bool, …)`, in the order written.
    pub hints: Vec<(String, bool)>,
    /// The attribute's path, where missing keys are reported.
    pub span: Span,
}

/// The struct's one `#[capability(…)]` attribute, or `None` (an error) when
/// it has none.
pub fn parse(input: &syn::DeriveInput, errors: &mut Errors) -> Option<Attr> {
    let attrs: Vec<&syn::Attribute> = input.attrs.iter().filter(|a| a.path().is_ident("capability")).collect();
    let [attr, rest @ ..] = attrs.as_slice() else {
        errors.push(input.ident.span(), format!("#[derive(Capability)] needs {USAGE} on the struct"));
        return None;
    };
    for extra in rest {
        errors.push(extra.span(), "only one #[capability(…)] attribute is allowed; put every key in one");
    }
    let mut values: [Option<syn::LitStr>; 5] = Default::default();
    let mut hints: Option<Vec<(String, bool)>> = None;
    let parsed = attr.parse_nested_meta(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        let Some(slot) = KEYS.iter().position(|k| *k == key) else {
            let written = meta.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
            let hint = did_you_mean(&written, KEYS);
            let hint = if hint.is_empty() { format!("; the keys are {}", KEYS.join(", ")) } else { hint };
            errors.push(meta.path.span(), format!("unknown key `{written}` in #[capability(…)]{hint}"));
            // Skip the value so the other keys are still checked.
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            return Ok(());
        };
        if key == "hints" {
            if hints.is_some() {
                errors.push(meta.path.span(), "`hints` is given twice");
            }
            let mut list = Vec::new();
            meta.parse_nested_meta(|hint| {
                let name = hint.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                let value: syn::Expr = hint.value()?.parse()?;
                if !HINT_KEYS.contains(&name.as_str()) {
                    let hint_text = did_you_mean(&name, HINT_KEYS);
                    let hint_text = if hint_text.is_empty() { format!("; the hints are {}", HINT_KEYS.join(", ")) } else { hint_text };
                    errors.push(hint.path.span(), format!("unknown hint `{name}`{hint_text}"));
                    return Ok(());
                }
                match value {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. }) => list.push((name, b.value)),
                    other => errors.push(other.span(), format!("hint `{name}` takes true or false")),
                }
                Ok(())
            })?;
            hints = Some(list);
            return Ok(());
        }
        let value: syn::Expr = meta.value()?.parse()?;
        let lit = match value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => s,
            other => {
                errors.push(other.span(), format!("`{key}` takes a string literal, e.g. {key} = \"…\""));
                return Ok(());
            }
        };
        if values[slot].is_some() {
            errors.push(meta.path.span(), format!("`{key}` is given twice"));
        } else {
            values[slot] = Some(lit);
        }
        Ok(())
    });
    if let Err(e) = parsed {
        errors.push(e.span(), format!("{e}; expected {USAGE}"));
    }
    let [module, category, description, name, title] = values;
    Some(Attr { module, category, description, name, title, hints: hints.unwrap_or_default(), span: attr.path().span() })
}
