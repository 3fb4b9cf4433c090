//! The derive's rules: the struct's shape, and the attribute's values
//! checked with the spec format's own name rules (`capspec-names`).

use proc_macro2::Ident;
use syn::spanned::Spanned;

use capspec_names::{alias_problem, default_capability_name, did_you_mean, name_problem};

use super::attr::{Attr, CATEGORIES};
use super::input::{Input, Shape};
use crate::errors::Errors;

/// A struct with named fields and no generics: its schema is one fixed object.
pub fn shape(input: &Input, errors: &mut Errors) {
    match &input.shape {
        Shape::Struct(syn::Fields::Named(_)) => {}
        Shape::Struct(fields) => errors.push(
            fields.span(),
            "a code-first capability's args are a struct with named fields (its input schema is an object); use `struct X { … }`",
        ),
        Shape::Enum(span) => errors.push(*span, "#[derive(Capability)] goes on a struct with named fields, not an enum"),
        Shape::Union(span) => errors.push(*span, "#[derive(Capability)] goes on a struct with named fields, not a union"),
    }
    if !input.generics.params.is_empty() {
        errors.push(input.generics.span(), "a code-first capability's args struct cannot be generic: its schema must be one fixed object");
    }
}

/// Every key present and valid, as a YAML spec would have to be.
pub fn values(ident: &Ident, attr: &Attr, errors: &mut Errors) {
    match &attr.module {
        None if attr.written.contains(&"module") => {}
        None => errors.push(attr.span, "missing `module = \"…\"`: the module this capability belongs to"),
        Some(m) => {
            if let Some(problem) = name_problem(&m.value()) {
                errors.push(m.span(), format!("invalid module name: {problem}"));
            }
        }
    }
    match &attr.category {
        None if attr.written.contains(&"category") => {}
        None => errors.push(attr.span, "missing `category`: add category = \"read\" | \"write\" | \"execute\" | \"external\"; there is no default"),
        Some(c) if !CATEGORIES.iter().any(|(k, _)| *k == c.value()) => {
            let hint = did_you_mean(&c.value(), CATEGORIES.iter().map(|(k, _)| *k));
            let hint = if hint.is_empty() { "; the categories are read, write, execute, external".to_string() } else { hint };
            errors.push(c.span(), format!("unknown category `{}`{hint}", c.value()));
        }
        Some(_) => {}
    }
    match &attr.description {
        None if attr.written.contains(&"description") => {}
        None => errors.push(attr.span, "missing `description = \"…\"` (or a doc comment on the struct): the model reads it to choose the capability"),
        Some(d) if d.value().trim().is_empty() => errors.push(d.span(), "the description is empty; say what the capability does"),
        Some(_) => {}
    }
    if let Some(f) = &attr.feature {
        if let Some(problem) = feature_problem(&f.value()) {
            errors.push(f.span(), format!("invalid feature name `{}`: {problem}", f.value()));
        }
    }
    if let Some(t) = &attr.title {
        if t.value().trim().is_empty() {
            errors.push(t.span(), "the title is empty; give a short human title or leave `title` out");
        }
    }
    for alias in &attr.aliases {
        if let Some(problem) = alias_problem(&alias.value()) {
            errors.push(alias.span(), format!("invalid alias: {problem}"));
        }
    }
    match &attr.name {
        Some(n) => {
            if let Some(problem) = name_problem(&n.value()) {
                errors.push(n.span(), format!("invalid capability name: {problem}"));
            }
        }
        None => {
            let default = default_capability_name(&ident.to_string());
            if let Some(problem) = name_problem(&default) {
                errors.push(ident.span(), format!("the capability name taken from the struct name is invalid: {problem}; give one with name = \"…\""));
            }
        }
    }
}

/// Why `name` is not a cargo feature name (cargo's rule: a letter, digit
/// or `_` first, then letters, digits, `_`, `-`, `+` and `.`).
fn feature_problem(name: &str) -> Option<&'static str> {
    let mut chars = name.chars();
    match chars.next() {
        None => Some("it is empty"),
        Some(c) if !(c.is_alphanumeric() || c == '_') => Some("a feature name starts with a letter, a digit or `_`"),
        _ if chars.any(|c| !(c.is_alphanumeric() || "_-+.".contains(c))) => Some("a feature name holds only letters, digits, `_`, `-`, `+` and `.`"),
        _ => None,
    }
}

/// A checked attribute: what expansion needs.
pub struct Checked {
    pub module: syn::LitStr,
    pub description: syn::LitStr,
    pub name: String,
    /// The `Category` variant.
    pub variant: &'static str,
    pub title: Option<syn::LitStr>,
    pub aliases: Vec<syn::LitStr>,
    pub hints: Vec<(String, bool)>,
    pub open: bool,
    pub feature: Option<syn::LitStr>,
}

impl Checked {
    /// `None` when a required key is missing (reported by [`values`]).
    pub fn from(ident: &Ident, attr: Attr) -> Option<Checked> {
        let category = attr.category?.value();
        let variant = CATEGORIES.iter().find(|(k, _)| *k == category).map(|(_, v)| *v)?;
        let name = attr.name.map_or_else(|| default_capability_name(&ident.to_string()), |n| n.value());
        Some(Checked { module: attr.module?, description: attr.description?, name, variant, title: attr.title, aliases: attr.aliases, hints: attr.hints, open: attr.open, feature: attr.feature })
    }
}
