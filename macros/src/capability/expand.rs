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
    // A code-first capability's output schema: its return type's, exported
    // by a hidden test beside the derive's (none when the type is not
    // `JsonSchema`).
    let output_export = match (&input.path, returned_type(&sig.output)) {
        (None, Some(ty)) => {
            let test = quote::format_ident!("__capspec_export_output_{}", name);
            quote! {
                #[cfg(test)]
                #[::core::prelude::v1::test]
                #[allow(non_snake_case, clippy::all)]
                fn #test() {
                    #[allow(unused_imports)]
                    use ::capspec::__private::{NoOutputSchema as _, OutputSchema as _};
                    let schema = (&::capspec::__private::OutputProbe::<#ty>::new()).output_schema();
                    <#args_ty as ::capspec::__private::Capability>::SPEC.export_output_to_env_dir(schema);
                }
            }
        }
        _ => quote!(),
    };
    quote! {
        #item

        #output_export

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

/// `T` of a `CapResult<T>` (or any `Name<T, …>`) return type.
fn returned_type(output: &syn::ReturnType) -> Option<&syn::Type> {
    let syn::ReturnType::Type(_, ty) = output else { return None };
    let syn::Type::Path(path) = ty.as_ref() else { return None };
    let syn::PathArguments::AngleBracketed(args) = &path.path.segments.last()?.arguments else { return None };
    match args.args.first()? {
        syn::GenericArgument::Type(ty) => Some(ty),
        _ => None,
    }
}
