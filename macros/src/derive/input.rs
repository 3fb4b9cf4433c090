//! The item a derive is on, as the derive's steps read it.

use proc_macro2::TokenStream;

/// The item the derive is on, read with syn's `full` feature alone: its
/// `derive` feature on the syn every proc macro of a project shares would
/// rebuild that syn and every proc macro above it at the project's next
/// build.
pub struct Input {
    pub attrs: Vec<syn::Attribute>,
    pub ident: syn::Ident,
    pub generics: syn::Generics,
    pub shape: Shape,
}

/// What kind of item it is: only a struct carries fields.
pub enum Shape {
    Struct(syn::Fields),
    /// The `enum` keyword's span.
    Enum(proc_macro2::Span),
    /// The `union` keyword's span.
    Union(proc_macro2::Span),
}

impl Input {
    pub fn parse(tokens: TokenStream) -> syn::Result<Input> {
        match syn::parse2::<syn::Item>(tokens)? {
            syn::Item::Struct(s) => Ok(Input { attrs: s.attrs, ident: s.ident, generics: s.generics, shape: Shape::Struct(s.fields) }),
            syn::Item::Enum(e) => Ok(Input { attrs: e.attrs, ident: e.ident, generics: e.generics, shape: Shape::Enum(e.enum_token.span) }),
            syn::Item::Union(u) => Ok(Input { attrs: u.attrs, ident: u.ident, generics: u.generics, shape: Shape::Union(u.union_token.span) }),
            other => Err(syn::Error::new_spanned(other, "#[derive(Capability)] goes on a struct with named fields")),
        }
    }
}
