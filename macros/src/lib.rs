//! capspec's procedural macros. Use them through the `capspec` crate, which
//! re-exports them and pins this crate to its exact version.
//!
//! Pipeline: parse (`syn`) → check → expand. On any error the user's item is
//! re-emitted unchanged next to the `compile_error!`, so the IDE keeps
//! working and no secondary errors cascade.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// Register an async fn as the implementation of a generated capability.
///
/// ```ignore
/// #[capability(workspace::read_file)]
/// async fn read_file(run: &Run, args: workspace::read_file::Args) -> CapResult<Output> { … }
/// ```
///
/// The argument is the path of the generated capability module; the fn must
/// be `async`, take `(&Run, <path>::Args)` and return `CapResult<T>` with
/// `T: Serialize`. The fn stays an ordinary fn; the runtime calls it only
/// through `invoke`.
#[proc_macro_attribute]
pub fn capability(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item: TokenStream2 = item.into();
    match expand(attr.into(), item.clone()) {
        Ok(tokens) => tokens.into(),
        Err(err) => {
            let error = err.to_compile_error();
            quote!(#item #error).into()
        }
    }
}

fn expand(attr: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    if attr.is_empty() {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "#[capability] needs the path of a generated capability module, e.g. #[capability(workspace::read_file)]",
        ));
    }
    let path: syn::Path = syn::parse2(attr.clone()).map_err(|e| {
        syn::Error::new(e.span(), "expected the path of a generated capability module, e.g. #[capability(workspace::read_file)]")
    })?;
    let func: syn::ItemFn = syn::parse2(item.clone())
        .map_err(|e| syn::Error::new(e.span(), "#[capability] goes on an `async fn(run: &Run, args: <path>::Args) -> CapResult<T>`"))?;
    let sig = &func.sig;
    let mut errors: Vec<syn::Error> = Vec::new();
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(sig.fn_token.span, "a capability impl must be an `async fn`"));
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new(sig.generics.span(), "a capability impl cannot be generic"));
    }
    let args_ty = match sig.inputs.iter().collect::<Vec<_>>().as_slice() {
        [syn::FnArg::Typed(_run), syn::FnArg::Typed(args)] => Some(args.ty.clone()),
        [syn::FnArg::Receiver(r), ..] | [_, syn::FnArg::Receiver(r)] => {
            errors.push(syn::Error::new(r.span(), "a capability impl is a free fn, not a method"));
            None
        }
        _ => {
            errors.push(syn::Error::new(
                sig.inputs.span(),
                "a capability impl takes exactly two arguments: `(run: &Run, args: <path>::Args)`",
            ));
            None
        }
    };
    if let syn::ReturnType::Default = sig.output {
        errors.push(syn::Error::new(sig.ident.span(), "a capability impl returns `CapResult<T>` with `T: Serialize`"));
    }
    if let Some(combined) = errors.into_iter().reduce(|mut a, b| {
        a.combine(b);
        a
    }) {
        return Err(combined);
    }
    let args_ty = args_ty.expect("checked above");
    let name = &sig.ident;
    // A return type that is not `CapResult<impl Serialize>` is reported on
    // the return type.
    let ret_span = match &sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => sig.ident.span(),
    };
    let encode = quote_spanned! {ret_span=>
        ::capspec::__private::encode_output(&output)
    };
    // The user's argument type and the capability's `Args` must be one
    // type: the generic `call_impl` makes a mismatch one error, placed on
    // the user's argument type.
    let call = quote_spanned! {args_ty.span()=>
        ::capspec::__private::call_impl(#name, run, args)
    };
    Ok(quote! {
        #item

        const _: () = {
            use #path as __capspec_capability;

            fn __capspec_call<'a>(
                run: &'a ::capspec::__private::Run,
                args: ::capspec::__private::serde_json::Value,
            ) -> ::capspec::__private::BoxFuture<
                'a,
                ::core::result::Result<::capspec::__private::serde_json::Value, ::capspec::__private::CapError>,
            > {
                ::std::boxed::Box::pin(async move {
                    let args: __capspec_capability::Args = ::capspec::__private::decode_args(args)?;
                    let output = #call.await?;
                    #encode
                })
            }

            ::capspec::__private::inventory::submit! {
                ::capspec::__private::Registration {
                    spec: &__capspec_capability::SPEC,
                    call: __capspec_call,
                    file: ::core::file!(),
                    line: ::core::line!(),
                }
            }
        };
    })
}
