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

/// The name rules of spec files, shared with the code generator so a
/// code-first name is valid exactly when a YAML name would be.
#[allow(dead_code)]
#[path = "../../codegen/src/names.rs"]
mod names;

mod derive;

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
///
/// Without a path, the fn implements a code-first capability: its args type
/// must `#[derive(Capability)]`, and that derive names the capability.
///
/// ```ignore
/// #[capability]
/// async fn tag_note(run: &Run, args: TagNote) -> CapResult<Tagged> { … }
/// ```
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

/// Declare a code-first capability on its args struct.
///
/// ```ignore
/// #[derive(Deserialize, JsonSchema, Capability)]
/// #[capability(module = "notes", category = "write", description = "Tag a note.")]
/// struct TagNote { title: String, tag: String }
/// ```
///
/// `module`, `category` (`read | write | execute | external`) and a
/// non-empty `description` are required; `name` defaults to the struct name
/// in snake_case without a trailing `Args`. The input schema comes from
/// `schemars`. `cargo xtask sync` exports the spec from the compiled crate
/// (listed under `[code_first]` in `capspec.toml`) into the generated files.
#[proc_macro_derive(Capability, attributes(capability))]
pub fn derive_capability(input: TokenStream) -> TokenStream {
    match derive::expand(input.into()) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

fn expand(attr: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    // The attribute on a struct is the derive's helper written without
    // the derive.
    if syn::parse2::<syn::ItemStruct>(item.clone()).is_ok() || syn::parse2::<syn::ItemEnum>(item.clone()).is_ok() {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "`#[capability(module = …, category = …, description = …)]` on a type declares a code-first capability and needs `#[derive(Capability)]` before it",
        ));
    }
    // No path: a code-first capability, named by its args type's derive.
    let path: Option<syn::Path> = if attr.is_empty() {
        None
    } else {
        Some(syn::parse2(attr.clone()).map_err(|e| {
            syn::Error::new(e.span(), "expected the path of a generated capability module, e.g. #[capability(workspace::read_file)], or nothing for a code-first capability")
        })?)
    };
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
    // What the registration names: the generated spec (module, name and
    // the fingerprint the fn was compiled against), or the code-first spec
    // of the args type — a type without the derive is one error, on it.
    let (prelude, decode_ty, target) = match &path {
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
    Ok(quote! {
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
    })
}
