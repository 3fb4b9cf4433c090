//! Rust bindings: `<rust>/mod.rs` and `<rust>/<module>.rs`.
//!
//! Built as token streams with `quote` (spec text only ever becomes a string
//! literal token), parsed with `syn`, formatted with `prettyplease`; the
//! marker line is added after formatting.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

use crate::model::{Additional, CapabilitySpec, JsonType, ModuleSpec, Schema, SpecSet};
use super::abbrev::Abbrev;
use super::spec_const::SpecConst;
use super::naming::{field_name, pascal_case, unique, variant_name};
use super::shape::Shape;
use super::artifact::{Targets, marker_line};

fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

fn lit(text: &str) -> Literal {
    Literal::string(text)
}

fn doc(text: Option<&str>) -> TokenStream {
    match text {
        Some(t) => {
            let t = lit(&format!(" {}", t.trim()));
            quote! { #[doc = #t] }
        }
        None => quote! {},
    }
}

/// Generates the types of one capability module.
struct TypeGen<'a> {
    abbrev: &'a Abbrev,
    items: Vec<TokenStream>,
    used: BTreeSet<String>,
    /// `$defs` name → type name, for the root being generated.
    defs: BTreeMap<String, String>,
}

impl TypeGen<'_> {
    /// `Args` from the input schema (an empty closed struct without one)
    /// and `Output` from the output schema.
    fn args_and_output(&mut self, cap: &CapabilitySpec) {
        match &cap.input {
            Some(input) => {
                self.root_defs(input);
                self.structure("Args", input, Some(&format!("Arguments of `{}`.", cap.name)));
            }
            None => {
                let empty = Schema { types: vec![JsonType::Object], additional_properties: Some(Additional::Allowed(false)), ..Schema::default() };
                self.structure("Args", &empty, Some(&format!("Arguments of `{}` (it takes none).", cap.name)));
            }
        }
        if let Some(output) = &cap.output {
            self.root_defs(output);
            let plain_object = output.single_type() == Some(JsonType::Object)
                && !output.is_nullable()
                && !output.properties.is_empty()
                && output.reference.is_none()
                && output.enum_values.is_none()
                && output.one_of.is_none()
                && output.any_of.is_none();
            if plain_object {
                self.structure("Output", output, Some(&format!("The result of `{}`.", cap.name)));
            } else {
                let ty = self.named(output, "OutputValue");
                self.items.push(quote! {
                    /// The result of the capability.
                    pub type Output = #ty;
                });
            }
        }
    }

    /// Declare the `$defs` of a root schema as named types. Names are
    /// allocated first so definitions may refer to each other in any order.
    fn root_defs(&mut self, root: &Schema) {
        let names: Vec<(String, String)> =
            root.defs.iter().map(|(d, _)| (d.clone(), unique(variant_name(d), &mut self.used))).collect();
        self.defs = names.iter().cloned().collect();
        for ((_, schema), (_, name)) in root.defs.iter().zip(names) {
            // Free the allocated name so the struct or enum takes it exactly.
            self.used.remove(&name);
            let ty = self.base(schema, &name);
            self.used.insert(name.clone());
            // A def that is not itself a struct or enum becomes an alias.
            if ty.to_string() != name {
                let id = ident(&name);
                let d = doc(schema.description.as_deref());
                self.items.push(quote! { #d pub type #id = #ty; });
            }
        }
    }

    /// The type for `schema`, declaring a struct or enum named `hint` when
    /// one is needed.
    fn named(&mut self, schema: &Schema, hint: &str) -> TokenStream {
        let base = self.base(schema, hint);
        if schema.is_nullable() && schema.single_type().is_some() { quote! { Option<#base> } } else { base }
    }

    fn base(&mut self, schema: &Schema, hint: &str) -> TokenStream {
        match Shape::of(schema) {
            Shape::Ref(r) => {
                let name = ident(self.defs.get(r).map(String::as_str).unwrap_or("Value"));
                quote! { #name }
            }
            Shape::Const(c) => scalar_of(c),
            Shape::Enum(values) if values.iter().all(|v| v.is_string()) => {
                let values: Vec<(&str, Option<&str>)> = values.iter().filter_map(|v| Some((v.as_str()?, None))).collect();
                self.string_enum(&values, hint, schema.description.as_deref())
            }
            Shape::Enum(_) => value_type(),
            // One string constant per alternative, each with its own doc:
            // how schemars writes a unit enum whose variants are documented.
            Shape::Union(variants) if let Some(values) = documented_strings(variants) => self.string_enum(&values, hint, schema.description.as_deref()),
            Shape::Union(variants) => self.untagged(variants, hint, schema.description.as_deref()),
            Shape::Bytes(_) => quote! { ::capspec::content::Base64 },
            Shape::String => quote! { String },
            Shape::Integer => quote! { i64 },
            Shape::Number => quote! { f64 },
            Shape::Boolean => quote! { bool },
            Shape::Null => quote! { () },
            Shape::Array(items) => {
                let item = match items {
                    Some(items) => self.named(items, &format!("{hint}Item")),
                    None => value_type(),
                };
                quote! { Vec<#item> }
            }
            Shape::Object => self.object(schema, hint),
            Shape::Any => value_type(),
        }
    }

    fn object(&mut self, schema: &Schema, hint: &str) -> TokenStream {
        if schema.properties.is_empty() {
            return match &schema.additional_properties {
                Some(Additional::Schema(s)) => {
                    let v = self.named(s, &format!("{hint}Value"));
                    quote! { ::std::collections::BTreeMap<String, #v> }
                }
                Some(Additional::Allowed(false)) => {
                    let name = unique(hint.to_string(), &mut self.used);
                    self.structure(&name, schema, None);
                    let id = ident(&name);
                    quote! { #id }
                }
                _ => quote! { ::capspec::__private::serde_json::Map<String, ::capspec::__private::serde_json::Value> },
            };
        }
        let name = unique(hint.to_string(), &mut self.used);
        self.structure(&name, schema, None);
        let id = ident(&name);
        quote! { #id }
    }

    /// A struct with one field per property. Closed objects (no
    /// `additionalProperties`, or `false`) deny unknown fields; open ones
    /// collect extra keys in a flattened map.
    fn structure(&mut self, name: &str, schema: &Schema, description: Option<&str>) {
        let mut field_names = BTreeSet::new();
        let mut fields = Vec::new();
        for (key, prop) in &schema.properties {
            let fname = unique(field_name(key), &mut field_names);
            let fid = ident(&fname);
            let hint = if matches!(name, "Args" | "Output") { variant_name(key) } else { format!("{name}{}", variant_name(key)) };
            let mut ty = self.named(prop, &hint);
            // A field that is directly a `$defs` type is boxed, so recursive
            // definitions have a finite size.
            if prop.reference.is_some() {
                ty = if prop.is_nullable() { quote! { Option<Box<#ty>> } } else { quote! { Box<#ty> } };
            }
            let rename = if fname != *key {
                let k = lit(key);
                quote! { #[serde(rename = #k)] }
            } else {
                quote! {}
            };
            let d = doc(prop.description.as_deref());
            let required = schema.is_required(key);
            let already_optional = ty.to_string().starts_with("Option <");
            let default = prop.applied_default();
            let field = if required {
                quote! { #d #rename pub #fid: #ty }
            } else if let Some(value) = default {
                // The spec's default, applied structurally: a plain field
                // filled with exactly that value (`invoke` applies the same
                // default before validation).
                let fn_name = unique(format!("default_{}_{fname}", name.to_lowercase()), &mut self.used);
                let fn_id = ident(&fn_name);
                let path = lit(&fn_name);
                let json = lit(&value.to_string());
                let fn_doc = lit(&format!(" The spec's default of `{key}`: `{value}`."));
                self.items.push(quote! {
                    #[doc = #fn_doc]
                    fn #fn_id() -> #ty {
                        ::capspec::__private::default_value(#json)
                    }
                });
                quote! { #d #rename #[serde(default = #path)] pub #fid: #ty }
            } else if already_optional {
                {
                let optional = self.abbrev.optional();
                quote! { #d #rename #optional pub #fid: #ty }
            }
            } else {
                {
                let optional = self.abbrev.optional();
                quote! { #d #rename #optional pub #fid: Option<#ty> }
            }
            };
            fields.push(field);
        }
        let open = match &schema.additional_properties {
            Some(Additional::Schema(s)) => Some(self.named(s, &format!("{name}Extra"))),
            Some(Additional::Allowed(true)) => Some(value_type()),
            _ => None,
        };
        let deny = match &open {
            Some(v) => {
                let fid = ident(&unique("additional_properties".into(), &mut field_names));
                fields.push(quote! {
                    /// Keys beyond the declared properties.
                    #[serde(flatten)]
                    pub #fid: ::std::collections::BTreeMap<String, #v>
                });
                quote! {}
            }
            None => quote! { #[serde(deny_unknown_fields)] },
        };
        let derives = self.abbrev.derives();
        let id = ident(name);
        let d = doc(description.or(schema.description.as_deref()));
        self.items.push(quote! {
            #d
            #derives
            #deny
            pub struct #id { #(#fields,)* }
        });
    }

    /// A unit enum of `values`, each with its doc when it has one.
    fn string_enum(&mut self, values: &[(&str, Option<&str>)], hint: &str, description: Option<&str>) -> TokenStream {
        let name = unique(hint.to_string(), &mut self.used);
        let mut variant_names = BTreeSet::new();
        let variants: Vec<TokenStream> = values
            .iter()
            .map(|(v, variant_doc)| {
                let vid = ident(&unique(variant_name(v), &mut variant_names));
                let value = lit(v);
                let d = doc(*variant_doc);
                quote! { #d #[serde(rename = #value)] #vid }
            })
            .collect();
        let derives = self.abbrev.derives();
        let id = ident(&name);
        let d = doc(description);
        self.items.push(quote! {
            #d
            #derives
            #[derive(Copy, Eq, Hash, PartialOrd, Ord)]
            pub enum #id { #(#variants,)* }
        });
        quote! { #id }
    }

    fn untagged(&mut self, variants: &[Schema], hint: &str, description: Option<&str>) -> TokenStream {
        let name = unique(hint.to_string(), &mut self.used);
        let mut variant_names = BTreeSet::new();
        let mut out = Vec::new();
        for (i, v) in variants.iter().enumerate() {
            let label = match (&v.reference, v.single_type()) {
                (Some(r), _) => pascal_case(r),
                (None, Some(t)) => pascal_case(t.as_str()),
                (None, None) => format!("Variant{}", i + 1),
            };
            let vname = unique(label, &mut variant_names);
            let ty = self.named(v, &format!("{name}{vname}"));
            let vid = ident(&vname);
            out.push(quote! { #vid(#ty) });
        }
        let derives = self.abbrev.derives();
        let id = ident(&name);
        let d = doc(description);
        self.items.push(quote! {
            #d
            #derives
            #[serde(untagged)]
            pub enum #id { #(#out,)* }
        });
        quote! { #id }
    }
}

/// The string constants of a union whose every alternative is exactly one
/// (`{const: "x"}`, with `type: string` and a `description` at most), with
/// each one's description; `None` for any other union.
fn documented_strings(variants: &[Schema]) -> Option<Vec<(&str, Option<&str>)>> {
    variants
        .iter()
        .map(|v| {
            let value = v.const_value.as_ref()?.as_str()?;
            let bare = Schema { const_value: v.const_value.clone(), types: v.types.clone(), description: v.description.clone(), annotations: v.annotations.clone(), ..Schema::default() };
            (*v == bare && (v.types.is_empty() || v.types == [JsonType::String])).then_some((value, v.description.as_deref()))
        })
        .collect()
}

fn value_type() -> TokenStream {
    quote! { ::capspec::__private::serde_json::Value }
}

fn scalar_of(value: &serde_json::Value) -> TokenStream {
    match value {
        serde_json::Value::String(_) => quote! { String },
        serde_json::Value::Bool(_) => quote! { bool },
        serde_json::Value::Number(n) if n.is_f64() => quote! { f64 },
        serde_json::Value::Number(_) => quote! { i64 },
        _ => value_type(),
    }
}

/// The `pub mod <name> { … }` of one capability.
fn capability(module: &ModuleSpec, cap: &CapabilitySpec, abbrev: &Abbrev) -> TokenStream {
    let mut types = TypeGen { abbrev, items: Vec::new(), used: ["Args", "Output", "SPEC"].map(String::from).into(), defs: BTreeMap::new() };
    // A code-first capability's arguments are its own Rust type: only its
    // spec is generated.
    match &cap.code_first {
        Some(origin) => {
            let doc = lit(&format!(
                " Declared in Rust: `#[derive(Capability)]` on `{}` ({}); implement it with a `#[capability]` fn taking that type.",
                origin.rust_type, origin.file
            ));
            types.items.push(quote! { #![doc = #doc] });
        }
        None => types.args_and_output(cap),
    }
    let cap_id = ident(&cap.name);
    let spec = abbrev.spec(&SpecConst::of(module, cap));
    let doc_text = lit(&format!(" `{}.{}` ({}): {}", module.name, cap.name, cap.category, cap.summary()));
    let items = types.items;
    let gate = feature_gate(cap);
    quote! {
        #[doc = #doc_text]
        #gate
        pub mod #cap_id {
            #(#items)*

            #spec
        }
    }
}

fn format_file(tokens: TokenStream, marker: &str) -> String {
    let file: syn::File = syn::parse2(tokens).unwrap_or_else(|e| panic!("generated Rust does not parse: {e}"));
    format!("// {marker}\n{}", prettyplease::unparse(&file))
}

/// `<rust>/<module>.rs`, rendered (without the input keys): with the
/// attribute abbreviations, or — when they cannot be expanded exactly —
/// without.
pub(super) fn module_file(module: &ModuleSpec, facade: &str, catalog: &str, variants: &[Variant]) -> String {
    let abbrev = Abbrev::new(true);
    let text = module_file_with(module, facade, catalog, variants, &abbrev);
    abbrev.expand(&text).unwrap_or_else(|| module_file_with(module, facade, catalog, variants, &Abbrev::new(false)))
}

/// What a build with exactly the features `on` (of those the module's
/// capabilities name) has of a module: its guest facade and catalog section.
pub struct Variant {
    pub on: Vec<String>,
    pub facade: String,
    pub section: String,
}

/// `#[cfg(feature = "…")]` for a capability behind a cargo feature.
fn feature_gate(cap: &CapabilitySpec) -> TokenStream {
    match &cap.feature {
        Some(feature) => {
            let feature = lit(feature);
            quote! { #[cfg(feature = #feature)] }
        }
        None => quote! {},
    }
}

/// A `&str` constant's value that `cfg!` picks among `variants` (`pick`
/// reads the text of one): `if cfg!(feature = "a") { … } else { … }`,
/// feature by feature.
fn picked(variants: &[Variant], features: &[String], on: &mut Vec<String>, pick: &dyn Fn(&Variant) -> TokenStream) -> TokenStream {
    let Some((first, rest)) = features.split_first() else {
        let chosen = variants.iter().find(|v| v.on == *on).expect("a variant for every combination");
        return pick(chosen);
    };
    on.push(first.clone());
    on.sort();
    let with = picked(variants, rest, on, pick);
    on.retain(|f| f != first);
    let without = picked(variants, rest, on, pick);
    let feature = lit(first);
    quote! { if cfg!(feature = #feature) { #with } else { #without } }
}

fn module_file_with(module: &ModuleSpec, facade: &str, catalog: &str, variants: &[Variant], abbrev: &Abbrev) -> String {
    let caps: Vec<TokenStream> = module.capabilities.iter().map(|c| capability(module, c, abbrev)).collect();
    let spec_refs: Vec<TokenStream> = module
        .capabilities
        .iter()
        .map(|c| {
            let id = ident(&c.name);
            let gate = feature_gate(c);
            quote! { #gate #id::SPEC }
        })
        .collect();
    let name = lit(&module.name);
    let description = lit(&module.description);
    let (facade, catalog) = match variants.last() {
        // Every feature on is the last combination.
        Some(all) => {
            let features = all.on.clone();
            (picked(variants, &features, &mut Vec::new(), &|v| abbrev.const_literal(&v.facade)), picked(variants, &features, &mut Vec::new(), &|v| abbrev.const_literal(&v.section)))
        }
        None => (abbrev.const_literal(facade), abbrev.const_literal(catalog)),
    };
    let module_doc = lit(&format!(" The `{}` capability module: {}", module.name, module.description.trim()));
    let tokens = quote! {
        #![doc = #module_doc]
        #![allow(dead_code, clippy::all)]

        /// The module's name.
        pub const NAME: &str = #name;
        /// Every capability spec of the module, sorted by name.
        pub const SPECS: &[::capspec::Spec] = &[#(#spec_refs),*];
        /// The guest facade (ES module source) for this module.
        pub const FACADE: &str = #facade;
        /// This module's section of the prompt catalog.
        pub const CATALOG: &str = #catalog;
        /// Everything a host embeds for this module.
        pub const MODULE: ::capspec::Module = ::capspec::Module {
            name: NAME,
            description: #description,
            specs: SPECS,
            facade: FACADE,
            catalog: CATALOG,
        };

        #(#caps)*
    };
    format_file(tokens, &marker_line(&module.file))
}

/// `<rust>/mod.rs`
pub fn mod_file(set: &SpecSet, targets: &Targets) -> String {
    let mods: Vec<Ident> = set.modules.iter().map(|m| ident(&m.name)).collect();
    // Upstream modules are implemented by their servers (`capspec::upstream`
    // mounts them from their pinned specs), not by this crate's fns.
    let implemented: Vec<Ident> = set.modules.iter().filter(|m| m.upstream.is_none()).map(|m| ident(&m.name)).collect();
    let tokens = quote! {
        //! Generated capability bindings. Mount them with the runtime's registry.
        #(pub mod #mods;)*

        /// Every module this crate implements, sorted by name (upstream
        /// modules are mounted from their servers).
        pub const MODULES: &[::capspec::Module] = &[#(#implemented::MODULE),*];
    };
    format_file(tokens, &marker_line(&targets.specs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(path: &str, yaml: &str) -> ModuleSpec {
        let loaded = crate::load::load_files(vec![crate::load::SpecFile { path: path.into(), bytes: yaml.as_bytes().to_vec() }]);
        assert!(loaded.findings.iter().all(|f| f.severity != crate::Severity::Error), "{:?}", loaded.findings);
        loaded.set.modules[0].clone()
    }

    /// The abbreviated rendering (placeholders expanded after formatting)
    /// is byte for byte the plain one: for the repo's hostile and canary
    /// fixtures, for facade and catalog texts of every length around the
    /// line width, and for a description that spells the placeholders in a
    /// block doc comment (which falls back to the plain rendering).
    #[test]
    fn abbreviated_rendering_is_the_plain_rendering() {
        let mut modules = vec![
            load("specs/hostile.yaml", include_str!("../../../tests/fixtures/render/hostile/specs/hostile.yaml")),
            load("specs/canary.yaml", include_str!("../../../tests/fixtures/render/canary/specs/canary.yaml")),
            load("specs/subset.yaml", include_str!("../../../tests/fixtures/render/subset/specs/subset.yaml")),
        ];
        modules.push(load(
            "specs/m.yaml",
            "module: m\ndescription: M.\ncapabilities:\n  - name: a\n    category: read\n    description: \"A.\\n#[__capspec_derives]\\nconst __capspec_spec: () = ();\\n#[__capspec_optional]\"\n    input:\n      type: object\n      properties:\n        x: { type: string, description: \"X\\n    #[__capspec_optional]\" }\n",
        ));
        for module in &modules {
            for n in (0..120).step_by(7) {
                let (facade, catalog) = ("f".repeat(n), format!("c\"{}", "→".repeat(n)));
                let plain = module_file_with(module, &facade, &catalog, &[], &Abbrev::new(false));
                assert_eq!(module_file(module, &facade, &catalog, &[]), plain, "{} at {n}", module.name);
            }
        }
    }

}
