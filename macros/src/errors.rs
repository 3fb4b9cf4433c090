//! Errors are gathered, not returned at the first one, so one build shows
//! every mistake at once, each spanned on the user's tokens.

use proc_macro2::Span;

/// Accumulated `syn::Error`s, combined into one.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push_error(syn::Error::new(span, message));
    }

    pub fn push_error(&mut self, err: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(err),
            None => self.0 = Some(err),
        }
    }

    /// `Err` with every error gathered, or `Ok` when there is none.
    pub fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }
}
