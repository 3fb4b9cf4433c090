//! `#[derive(Capability)]`: parse the `#[capability(…)]` attribute, check it
//! with the spec rules, and emit the `Capability` impl, its registration and
//! the hidden export test `cargo xtask sync` runs.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::names::{default_capability_name, did_you_mean, name_problem};

const KEYS: [&str; 4] = ["module", "category", "description", "name"];
const CATEGORIES: [(&str, &str); 4] = [("read", "Read"), ("write", "Write"), ("execute", "Execute"), ("external", "External")];
const USAGE: &str = "#[capability(module = \"…\", category = \"read | write | execute | external\", description = \"…\")]";

/// Errors are gathered, not returned at the first one, so one build shows
/// every mistake of the attribute.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        let err = syn::Error::new(span, message);
        match &mut self.0 {
            Some(all) => all.combine(err),
            None => self.0 = Some(err),
        }
    }
}

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let input: syn::DeriveInput = syn::parse2(input)?;
    let ident = &input.ident;
    let mut errors = Errors::default();
    match &input.data {
        syn::Data::Struct(s) if matches!(s.fields, syn::Fields::Named(_)) => {}
        syn::Data::Struct(s) => errors.push(
            s.fields.span(),
            "a code-first capability's args are a struct with named fields (its input schema is an object); use `struct X { … }`",
        ),
        syn::Data::Enum(e) => errors.push(e.enum_token.span, "#[derive(Capability)] goes on a struct with named fields, not an enum"),
        syn::Data::Union(u) => errors.push(u.union_token.span, "#[derive(Capability)] goes on a struct with named fields, not a union"),
    }
    if !input.generics.params.is_empty() {
        errors.push(input.generics.span(), "a code-first capability's args struct cannot be generic: its schema must be one fixed object");
    }

    let attrs: Vec<&syn::Attribute> = input.attrs.iter().filter(|a| a.path().is_ident("capability")).collect();
    let mut values: [Option<syn::LitStr>; 4] = Default::default();
    match attrs.as_slice() {
        [] => errors.push(ident.span(), format!("#[derive(Capability)] needs {USAGE} on the struct")),
        [attr, rest @ ..] => {
            for extra in rest {
                errors.push(extra.span(), "only one #[capability(…)] attribute is allowed; put every key in one");
            }
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
            let [module, category, description, name] = &values;
            let attr_span = attr.path().span();
            match module {
                None => errors.push(attr_span, "missing `module = \"…\"`: the module this capability belongs to"),
                Some(m) => {
                    if let Some(problem) = name_problem(&m.value()) {
                        errors.push(m.span(), format!("invalid module name: {problem}"));
                    }
                }
            }
            match category {
                None => errors.push(attr_span, "missing `category`: add category = \"read\" | \"write\" | \"execute\" | \"external\"; there is no default"),
                Some(c) if !CATEGORIES.iter().any(|(k, _)| *k == c.value()) => {
                    let hint = did_you_mean(&c.value(), CATEGORIES.iter().map(|(k, _)| *k));
                    let hint = if hint.is_empty() { "; the categories are read, write, execute, external".to_string() } else { hint };
                    errors.push(c.span(), format!("unknown category `{}`{hint}", c.value()));
                }
                Some(_) => {}
            }
            match description {
                None => errors.push(attr_span, "missing `description = \"…\"`: the model reads it to choose the capability"),
                Some(d) if d.value().trim().is_empty() => errors.push(d.span(), "the description is empty; say what the capability does"),
                Some(_) => {}
            }
            match name {
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
    }
    if let Some(err) = errors.0 {
        return Err(err);
    }

    let [Some(module), Some(category), Some(description), name] = values else { unreachable!("checked above") };
    let name = name.map_or_else(|| default_capability_name(&ident.to_string()), |n| n.value());
    let variant = CATEGORIES.iter().find(|(k, _)| *k == category.value()).map(|(_, v)| format_ident!("{v}")).expect("checked above");
    let ident_text = ident.to_string();
    let location = quote_spanned!(ident.span()=> file: ::core::file!(), line: ::core::line!(), column: ::core::column!(),);
    let export_test = format_ident!("__capspec_export_{}", ident);
    let require_deserialize = quote_spanned!(ident.span()=> ::capspec::__private::require_deserialize::<#ident>);
    Ok(quote! {
        const _: fn() = #require_deserialize;

        impl ::capspec::__private::Capability for #ident {
            const SPEC: ::capspec::__private::CodeFirst = ::capspec::__private::CodeFirst {
                module: #module,
                name: #name,
                category: ::capspec::__private::Category::#variant,
                description: #description,
                rust_type: ::core::concat!(::core::module_path!(), "::", #ident_text),
                #location
                input_schema: ::capspec::__private::schema_of::<#ident>,
            };
        }

        ::capspec::__private::inventory::submit! {
            <#ident as ::capspec::__private::Capability>::SPEC
        }

        /// Exports this code-first spec for `cargo xtask sync` (and checks
        /// that its schema can be produced).
        #[cfg(test)]
        #[::core::prelude::v1::test]
        #[allow(non_snake_case)]
        fn #export_test() {
            <#ident as ::capspec::__private::Capability>::SPEC.export_to_env_dir();
        }
    })
}
