//! The user's fn, unchanged, plus a type-erased wrapper and its `inventory`
//! registration, naming the runtime only through `::capspec::__private`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::Input;

pub fn expand(input: &Input, args_ty: &syn::Type, item: TokenStream) -> TokenStream {
    let sig = &input.func.sig;
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
    // What the registration names: the generated spec (module, name and
    // the fingerprint the fn was compiled against), or the code-first spec
    // of the args type — a type without the derive is one error, on it.
    let (prelude, decode_ty, target) = match &input.path {
        Some(path) => (
            quote!(use #path as __capspec_capability;),
            quote!(__capspec_capability::Args),
            quote! {
                module: __capspec_capability::SPEC.module,
                name: __capspec_capability::SPEC.name,
                fingerprint: ::core::option::Option::Some(__capspec_capability::SPEC.fingerprint),
            },
        ),
        None => {
            let spec = quote_spanned!(args_ty.span()=> <#args_ty as ::capspec::__private::Capability>::SPEC);
            (
                quote!(),
                quote!(#args_ty),
                quote! {
                    module: #spec.module,
                    name: #spec.name,
                    fingerprint: ::core::option::Option::None,
                },
            )
        }
    };
    quote! {
        #item

        const _: () = {
            #prelude

            fn __capspec_call<'a>(
                run: &'a ::capspec::__private::Run,
                args: ::capspec::__private::serde_json::Value,
            ) -> ::capspec::__private::BoxFuture<
                'a,
                ::core::result::Result<::capspec::__private::serde_json::Value, ::capspec::__private::CapError>,
            > {
                ::std::boxed::Box::pin(async move {
                    let args: #decode_ty = ::capspec::__private::decode_args(args)?;
                    let output = #call.await?;
                    #encode
                })
            }

            ::capspec::__private::inventory::submit! {
                ::capspec::__private::Registration {
                    #target
                    call: __capspec_call,
                    file: ::core::file!(),
                    line: ::core::line!(),
                }
            }
        };
    }
}
