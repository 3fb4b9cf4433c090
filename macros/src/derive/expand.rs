//! The `Capability` impl (a `CodeFirst` constant), its `inventory`
//! registration and the hidden export test, naming the runtime only through
//! `::capspec::__private`.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::check::Checked;

pub fn expand(ident: &Ident, checked: Checked, fields: &[String]) -> TokenStream {
    let Checked { module, description, name, variant, title, aliases, hints, open, feature } = checked;
    let feature = match feature {
        Some(f) => quote!(::core::option::Option::Some(#f)),
        None => quote!(::core::option::Option::None),
    };
    let title = match title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let hints = hints.iter().map(|(k, v)| quote!((#k, #v)));
    let variant = format_ident!("{variant}");
    let ident_text = ident.to_string();
    let location = quote_spanned!(ident.span()=> file: ::core::file!(), line: ::core::line!(), column: ::core::column!(),);
    let export_test = format_ident!("__capspec_export_{}", ident);
    let require_deserialize = quote_spanned!(ident.span()=> ::capspec::__private::require_deserialize::<#ident>);
    quote! {
        const _: fn() = #require_deserialize;

        impl ::capspec::__private::Capability for #ident {
            const SPEC: ::capspec::__private::CodeFirst = ::capspec::__private::CodeFirst {
                module: #module,
                name: #name,
                category: ::capspec::__private::Category::#variant,
                description: #description,
                title: #title,
                aliases: &[#(#aliases),*],
                hints: &[#(#hints),*],
                open: #open,
                rust_type: ::core::concat!(::core::module_path!(), "::", #ident_text),
                #location
                input_schema: ::capspec::__private::schema_of::<#ident>,
                fields: &[#(#fields),*],
                feature: #feature,
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
    }
}
