//! Which tests exercise which capability (DESIGN §5, `coverage/untested`):
//! the test fns and test-generating macro calls of the test directories,
//! what each names ([`Mentions`]), and the rule that attributes them.

use std::collections::HashSet;

use syn::spanned::Spanned;

use super::mentions::{self, Mentions, Scope};
use super::site::{ImplSite, Scan, TestSite};
use crate::model::CapabilitySpec;

impl Scan {
    /// The tests that exercise `cap` of `module`: they name it in a way no
    /// other item shares — its qualified or wire name (or an alias) as a
    /// string, a path through its generated module, its code-first args
    /// type, or the path of its `#[capability]` fn. The wire name is the
    /// bare name only when no other module has that name, so a shared bare
    /// name says nothing.
    pub fn exercising<'a>(&'a self, module: &'a str, cap: &'a CapabilitySpec) -> impl Iterator<Item = &'a TestSite> + 'a {
        // Built once, not once per test.
        let mut strings = vec![format!("{module}.{}", cap.name), cap.wire_name.clone()];
        strings.extend(cap.aliases.iter().map(|a| format!("{module}.{a}")));
        let generated = [module.to_string(), cap.name.clone()];
        let types: Vec<&str> = self.derives.iter().filter(|d| d.module == module && d.name == cap.name).map(|d| d.type_name.as_str()).collect();
        let impls: Vec<&ImplSite> = self
            .impls
            .iter()
            .filter(|s| match s.path.as_slice() {
                [.., m, n] => m == module && n == &cap.name,
                [n] => n == &cap.name,
                [] => false,
            })
            .collect();
        let names_impl = move |test: &TestSite, path: &[String]| {
            impls.iter().any(|site| match path {
                [.., parent, f] if f == &site.fn_name && site.parent.contains(parent) => true,
                // A unit test beside the impl: `open_note(…)`, `super::open_note(…)`.
                [before @ .., f] if f == &site.fn_name && test.file == site.file => {
                    before.iter().all(|s| matches!(s.as_str(), "self" | "super" | "crate"))
                }
                _ => false,
            })
        };
        self.tests.iter().filter(move |t| {
            strings.iter().any(|s| t.mentions.strings.contains(s))
                || t.mentions.paths.iter().any(|p| {
                    p.windows(2).any(|w| w == generated)
                        || p.iter().any(|seg| types.contains(&seg.as_str()))
                        || names_impl(t, p)
                })
        })
    }
}

pub(super) fn is_test_attr(attr: &syn::Attribute) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == "test")
}

/// The names of `macro_rules!` macros whose expansion holds a test fn.
pub(super) fn collect_test_macros(items: &[syn::Item], out: &mut HashSet<String>) {
    for item in items {
        match item {
            syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                if let Some(name) = &m.ident {
                    if mentions::has_test_attr(m.mac.tokens.clone()) {
                        out.insert(name.to_string());
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect_test_macros(items, out);
                }
            }
            _ => {}
        }
    }
}

pub(super) fn collect_tests(
    items: &[syn::Item],
    file: &str,
    prefix: &str,
    outer: &Scope,
    test_macros: &HashSet<String>,
    out: &mut Vec<TestSite>,
) {
    let scope = outer.with_items(items);
    for item in items {
        match item {
            syn::Item::Fn(f) if f.attrs.iter().any(is_test_attr) => {
                // A `use` inside the test's body is in scope for the whole body.
                let inner = scope.with_items(f.block.stmts.iter().filter_map(|s| match s {
                    syn::Stmt::Item(item) => Some(item),
                    _ => None,
                }));
                let mut site = TestSite {
                    file: file.to_string(),
                    name: format!("{prefix}{}", f.sig.ident),
                    lines: (f.span().start().line as u32, f.span().end().line as u32),
                    mentions: Mentions::default(),
                };
                site.mentions.read(quote::ToTokens::to_token_stream(&f.block), &inner);
                out.push(site);
            }
            // `cases! { … }` where `cases` is a `macro_rules!` that writes
            // tests, or any macro call whose input holds test fns: what the
            // call passes is what its tests name.
            syn::Item::Macro(m) if !m.mac.path.is_ident("macro_rules") => {
                let name = m.mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                if test_macros.contains(&name) || mentions::has_test_attr(m.mac.tokens.clone()) {
                    let mut site = TestSite {
                        file: file.to_string(),
                        name: format!("{prefix}{name}!"),
                        lines: (m.span().start().line as u32, m.span().end().line as u32),
                        mentions: Mentions::default(),
                    };
                    site.mentions.read(m.mac.tokens.clone(), &scope);
                    out.push(site);
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect_tests(items, file, &format!("{prefix}{}::", m.ident), &scope, test_macros, out);
                }
            }
            _ => {}
        }
    }
}
