//! `#[derive(Capability)]`: parse the `#[capability(…)]` [`attr`]ibute,
//! [`check`] it with the spec rules, and [`expand`] to the `Capability` impl,
//! its registration and the hidden export test `cargo xtask sync` runs.

mod attr;
mod check;
mod expand;
mod fields;
mod input;

use input::Input;

use proc_macro2::TokenStream;

use crate::errors::Errors;

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let input = Input::parse(input)?;
    let mut errors = Errors::default();
    check::shape(&input, &mut errors);
    let attr = attr::parse(&input, &mut errors);
    if let Some(attr) = &attr {
        check::values(&input.ident, attr, &mut errors);
    }
    errors.finish()?;
    let attr = attr.expect("a missing attribute is an error above");
    let checked = check::Checked::from(&input.ident, attr).expect("missing keys are errors above");
    Ok(expand::expand(&input.ident, checked, &fields::wire_names(&input)))
}
