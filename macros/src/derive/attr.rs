//! The `#[capability(module = "…", category = "…", description = "…", name = "…",
//! title = "…", aliases = ["…", …], hints(destructive = false, idempotent = true, open_world = true), open)]`
//! attribute: one slot per key, duplicates and unknown keys rejected where
//! they are parsed. Without `description`, the struct's doc comment is the
//! description. Whether a hint suits the category is the spec format's
//! rule, checked by `check` like a YAML spec's.

use proc_macro2::Span;
use syn::spanned::Spanned;

use capspec_names::did_you_mean;

use crate::errors::Errors;

use super::input::Input;

pub const KEYS: [&str; 9] = ["module", "category", "description", "name", "title", "aliases", "hints", "open", "feature"];
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
    /// `feature = "…"`: the cargo feature the capability lives behind.
    pub feature: Option<syn::LitStr>,
    /// `aliases = ["…", …]`: hidden names the capability is also called by.
    pub aliases: Vec<syn::LitStr>,
    /// `hints(key = bool, …)`, in the order written.
    pub hints: Vec<(String, bool)>,
    /// `open`: unknown keys in the arguments are accepted.
    pub open: bool,
    /// The keys written, valid or not: a key written with a bad value has
    /// its one error there, never a second "missing" one.
    pub written: Vec<&'static str>,
    /// The attribute's path, where missing keys are reported.
    pub span: Span,
}

/// The struct's one `#[capability(…)]` attribute, or `None` (an error) when
/// it has none.
pub fn parse(input: &Input, errors: &mut Errors) -> Option<Attr> {
    let attrs: Vec<&syn::Attribute> = input.attrs.iter().filter(|a| a.path().is_ident("capability")).collect();
    let [attr, rest @ ..] = attrs.as_slice() else {
        errors.push(input.ident.span(), format!("#[derive(Capability)] needs {USAGE} on the struct"));
        return None;
    };
    for extra in rest {
        errors.push(extra.span(), "only one #[capability(…)] attribute is allowed; put every key in one");
    }
    let mut values: [Option<syn::LitStr>; 6] = Default::default();
    // The string keys' slots in `values`.
    let slot_of = |key: &str| ["module", "category", "description", "name", "title", "feature"].iter().position(|k| *k == key);
    let mut hints: Option<Vec<(String, bool)>> = None;
    let mut aliases: Option<Vec<syn::LitStr>> = None;
    let mut open = false;
    let mut written = Vec::new();
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
        if !written.contains(&KEYS[slot]) {
            written.push(KEYS[slot]);
        }
        if key == "open" {
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
                errors.push(meta.path.span(), "`open` takes no value: write #[capability(open)] to accept unknown keys in the arguments");
            } else if open {
                errors.push(meta.path.span(), "`open` is given twice");
            }
            open = true;
            return Ok(());
        }
        if key == "aliases" {
            let value: syn::Expr = meta.value()?.parse()?;
            if aliases.is_some() {
                errors.push(meta.path.span(), "`aliases` is given twice");
            }
            let mut list = Vec::new();
            match value {
                syn::Expr::Array(array) => {
                    for item in array.elems {
                        match item {
                            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => list.push(s),
                            other => errors.push(other.span(), "an alias is a string literal, e.g. aliases = [\"read-note\"]"),
                        }
                    }
                }
                other => errors.push(other.span(), "`aliases` takes a list of string literals, e.g. aliases = [\"read-note\"]"),
            }
            aliases = Some(list);
            return Ok(());
        }
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
        let Some(slot) = slot_of(&key) else { unreachable!("every key but open, aliases and hints is a string") };
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
    let [module, category, description, name, title, feature] = values;
    let description = if written.contains(&"description") { description } else { doc_comment(&input.attrs) };
    Some(Attr { module, category, description, name, title, feature, aliases: aliases.unwrap_or_default(), hints: hints.unwrap_or_default(), open, written, span: attr.path().span() })
}

/// The struct's doc comment as one text (each line's one leading space
/// dropped, as rustdoc reads it), spanned at its first line; `None` when it
/// has none or it is blank.
fn doc_comment(attrs: &[syn::Attribute]) -> Option<syn::LitStr> {
    let mut lines = Vec::new();
    let mut span = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(syn::MetaNameValue { value: syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }), .. }) = &attr.meta {
            span.get_or_insert(attr.span());
            let text = s.value();
            lines.extend(text.split('\n').map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end().to_string()));
        }
    }
    let text = lines.join("\n").trim().to_string();
    (!text.is_empty()).then(|| syn::LitStr::new(&text, span.unwrap_or_else(Span::call_site)))
}
