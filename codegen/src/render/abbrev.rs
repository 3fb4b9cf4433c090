//! Attribute abbreviations for the Rust renderer. Every generated type
//! carries the same derive block and most optional fields the same serde
//! attribute; as tokens they are most of a module's token stream, which
//! `syn` then parses and `prettyplease` prints. So the renderer writes each
//! as one short placeholder attribute and expands it after formatting into
//! exactly the lines `prettyplease` prints for the real attribute at that
//! indentation (worked out once, by formatting the real attribute). Each
//! capability's `SPEC` constant is a placeholder item too, replaced by the
//! text `spec_const.rs` writes for it, and the module's long constant
//! strings (its facade and catalog) are placeholder names, replaced by
//! their literals.
//!
//! The output is byte-identical to rendering the real attributes: when the
//! formatted text does not hold exactly the placeholders written (a spec's
//! text could in principle spell one inside a block doc comment) or one sits
//! at an indentation never worked out, [`Abbrev::expand`] declines and the
//! module is rendered with the real attributes.

use std::cell::{Cell, RefCell};
use std::sync::OnceLock;

use proc_macro2::TokenStream;
use quote::quote;

use super::spec_const::SpecConst;

/// The placeholders' text, and the real attributes they stand for.
const DERIVES_MARK: &str = "#[__capspec_derives]";
const OPTIONAL_MARK: &str = "#[__capspec_optional]";
const SPEC_MARK: &str = "const __capspec_spec: () = ();";
const LITERAL_MARK: &str = "__capspec_literal_";

fn real_derives() -> TokenStream {
    quote! {
        #[derive(Debug, Clone, PartialEq, ::capspec::__private::serde::Serialize, ::capspec::__private::serde::Deserialize, ::capspec::__private::schemars::JsonSchema)]
        #[serde(crate = "::capspec::__private::serde")]
        #[schemars(crate = "::capspec::__private::schemars")]
    }
}

fn real_optional() -> TokenStream {
    quote! { #[serde(default, skip_serializing_if = "Option::is_none")] }
}

/// Where generated types sit (inside `pub mod <capability> { … }`) and
/// where their fields sit.
const TYPE_INDENT: usize = 4;
const FIELD_INDENT: usize = 8;

/// The lines `prettyplease` prints for the derive block of a type at
/// [`TYPE_INDENT`], and for the optional-field attribute at
/// [`FIELD_INDENT`], indentation included.
fn expansions() -> &'static (Vec<String>, Vec<String>) {
    static EXPANSIONS: OnceLock<(Vec<String>, Vec<String>)> = OnceLock::new();
    EXPANSIONS.get_or_init(|| {
        let (derives, optional) = (real_derives(), real_optional());
        let file: syn::File = syn::parse2(quote! { mod m { #derives struct X { #optional a: u8 } } }).expect("the real attributes parse");
        let text = prettyplease::unparse(&file);
        let lines: Vec<&str> = text.lines().collect();
        let start = lines.iter().position(|l| l.starts_with("mod m {")).expect("the module line") + 1;
        let strukt = lines.iter().position(|l| l.trim_start().starts_with("struct X")).expect("the struct line");
        let field = lines.iter().position(|l| l.trim_start().starts_with("a: u8")).expect("the field line");
        let owned = |range: std::ops::Range<usize>| lines[range].iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let (derives, optional) = (owned(start..strukt), owned(strukt + 1..field));
        assert!(derives.iter().all(|l| l.starts_with(&" ".repeat(TYPE_INDENT))) && optional.iter().all(|l| l.starts_with(&" ".repeat(FIELD_INDENT))));
        (derives, optional)
    })
}

/// The attributes of one module's rendering: placeholders (counted) or the
/// real attributes.
pub(super) struct Abbrev {
    on: bool,
    derives: Cell<usize>,
    optional: Cell<usize>,
    /// The `SPEC` constants' text, in the order their placeholders were written.
    specs: RefCell<Vec<String>>,
    /// String literals of module constants, by placeholder number.
    literals: RefCell<Vec<String>>,
}

impl Abbrev {
    /// Placeholders when `on`, the real attributes otherwise.
    pub(super) fn new(on: bool) -> Abbrev {
        Abbrev { on, derives: Cell::new(0), optional: Cell::new(0), specs: RefCell::new(Vec::new()), literals: RefCell::new(Vec::new()) }
    }

    /// The derive block every generated type carries: the derives through
    /// the runtime's hidden re-exports, so a host needs only `capspec`.
    pub(super) fn derives(&self) -> TokenStream {
        if !self.on {
            return real_derives();
        }
        self.derives.set(self.derives.get() + 1);
        quote! { #[__capspec_derives] }
    }

    /// `#[serde(default, skip_serializing_if = "Option::is_none")]`
    pub(super) fn optional(&self) -> TokenStream {
        if !self.on {
            return real_optional();
        }
        self.optional.set(self.optional.get() + 1);
        quote! { #[__capspec_optional] }
    }

    /// A capability's `SPEC` constant (see `spec_const.rs`).
    pub(super) fn spec(&self, spec: &SpecConst) -> TokenStream {
        if !self.on {
            return spec.tokens();
        }
        self.specs.borrow_mut().push(spec.text());
        quote! { const __capspec_spec: () = (); }
    }

    /// A string literal that is a module constant's whole value
    /// (`pub const FACADE: &str = …;`), which `prettyplease` prints on the
    /// constant's line whatever its length.
    pub(super) fn const_literal(&self, text: &str) -> TokenStream {
        if !self.on {
            let literal = proc_macro2::Literal::string(text);
            return quote! { #literal };
        }
        let mut literals = self.literals.borrow_mut();
        let id = proc_macro2::Ident::new(&format!("__capspec_literal_{}", literals.len()), proc_macro2::Span::call_site());
        literals.push(super::escape::rust_string(text));
        quote! { #id }
    }

    /// `formatted` with every placeholder expanded, or `None` when it does
    /// not hold exactly the placeholders written, each where expected.
    pub(super) fn expand(&self, formatted: &str) -> Option<String> {
        let (derives, optional) = expansions();
        let mut out = String::with_capacity(formatted.len() + self.derives.get() * 400 + self.optional.get() * 60);
        let (mut seen_derives, mut seen_optional) = (0, 0);
        let specs = self.specs.borrow();
        let mut next_spec = specs.iter();
        let literals = self.literals.borrow();
        let mut seen_literals = std::collections::BTreeSet::new();
        for line in formatted.split_inclusive('\n') {
            let content = line.trim_start_matches(' ');
            let indent = line.len() - content.len();
            let expansion = match content.trim_end_matches('\n') {
                DERIVES_MARK if indent == TYPE_INDENT => {
                    seen_derives += 1;
                    derives
                }
                OPTIONAL_MARK if indent == FIELD_INDENT => {
                    seen_optional += 1;
                    optional
                }
                SPEC_MARK if indent == TYPE_INDENT => {
                    out.push_str(next_spec.next()?);
                    continue;
                }
                DERIVES_MARK | OPTIONAL_MARK | SPEC_MARK => return None,
                // `… = __capspec_literal_<n>;` at the top level.
                _ if indent == 0 && content.contains(LITERAL_MARK) => {
                    let (head, tail) = content.split_once(LITERAL_MARK)?;
                    let (n, rest) = tail.split_once(';')?;
                    let literal = literals.get(n.parse::<usize>().ok()?)?;
                    if !head.ends_with(" = ") || rest != "\n" || seen_literals.replace(n.to_string()).is_some() {
                        return None;
                    }
                    out.push_str(head);
                    out.push_str(literal);
                    out.push_str(";\n");
                    continue;
                }
                _ => {
                    out.push_str(line);
                    continue;
                }
            };
            for l in expansion {
                out.push_str(l);
                out.push('\n');
            }
        }
        (seen_derives == self.derives.get() && seen_optional == self.optional.get() && next_spec.next().is_none() && seen_literals.len() == literals.len()).then_some(out)
    }
}
