//! `#[capability]` on an impl fn: [`parse`] the attribute and the fn →
//! [`check`] the signature → [`expand`] to the fn plus its registration.

mod check;
mod expand;
mod parse;

use proc_macro2::TokenStream;

pub fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let input = parse::parse(attr, item.clone())?;
    let args_ty = check::check(&input.func)?;
    Ok(expand::expand(&input, &args_ty, item))
}
