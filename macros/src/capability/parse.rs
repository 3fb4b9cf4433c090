//! The attribute's argument (a generated capability module's path, or
//! nothing for a code-first capability) and the fn it sits on.

use proc_macro2::TokenStream;

/// What `#[capability(…)]` was written on.
pub struct Input {
    /// `None`: a code-first capability, named by its args type's derive.
    pub path: Option<syn::Path>,
    pub func: syn::ItemFn,
}

pub fn parse(attr: TokenStream, item: TokenStream) -> syn::Result<Input> {
    // The attribute on a struct is the derive's helper written without
    // the derive.
    if syn::parse2::<syn::ItemStruct>(item.clone()).is_ok() || syn::parse2::<syn::ItemEnum>(item.clone()).is_ok() {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "`#[capability(module = …, category = …, description = …)]` on a type declares a code-first capability and needs `#[derive(Capability)]` before it",
        ));
    }
    let path: Option<syn::Path> = if attr.is_empty() {
        None
    } else {
        Some(syn::parse2(attr).map_err(|e| {
            syn::Error::new(e.span(), "expected the path of a generated capability module, e.g. #[capability(workspace::read_file)], or nothing for a code-first capability")
        })?)
    };
    let func: syn::ItemFn = syn::parse2(item)
        .map_err(|e| syn::Error::new(e.span(), "#[capability] goes on an `async fn(run: &Run, args: <path>::Args) -> CapResult<T>`"))?;
    Ok(Input { path, func })
}
