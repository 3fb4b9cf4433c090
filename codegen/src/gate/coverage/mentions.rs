//! What a test names: the string literals and the paths in its body, each
//! path read through the `use` items in scope (DESIGN §5, `coverage/untested`).
//!
//! A path is a run of identifiers joined by `::` that is not a method call,
//! a field access or a macro's name: `store.open_note()` and
//! `x.open_note` name nothing, `notes::open_note::Args` names
//! `[notes, open_note, Args]`, and after `use crate::generated::notes as n;`
//! the path `n::open_note` names `[crate, generated, notes, open_note]`.
//! Comments are not tokens, so they never count.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The names `use` items bring into scope: each name ↦ the path it stands
/// for, and the prefixes of glob imports.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    names: HashMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
}

impl Scope {
    /// This scope with the `use` items among `items` added (an inner
    /// module's or a block's own imports shadow the outer ones).
    pub(crate) fn with_items<'a>(&self, items: impl IntoIterator<Item = &'a syn::Item>) -> Scope {
        let mut scope = self.clone();
        for item in items {
            if let syn::Item::Use(u) = item {
                scope.add(&u.tree, Vec::new());
            }
        }
        scope
    }

    fn add(&mut self, tree: &syn::UseTree, mut prefix: Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.add(&p.tree, prefix);
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                // `use a::b::{self}` brings `b` itself.
                if name == "self" {
                    if let Some(last) = prefix.last().cloned() {
                        self.names.insert(last, prefix);
                    }
                } else {
                    prefix.push(name.clone());
                    self.names.insert(name, prefix);
                }
            }
            syn::UseTree::Rename(r) => {
                let original = r.ident.to_string();
                if original != "self" {
                    prefix.push(original);
                }
                self.names.insert(r.rename.to_string(), prefix);
            }
            syn::UseTree::Glob(_) => self.globs.push(prefix),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.add(t, prefix.clone())),
        }
    }

    /// The paths `path` may stand for: through the name its first segment
    /// was imported as, else as written; a one-segment path not imported by
    /// name may also come through each glob import.
    fn resolve(&self, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        if let Some(full) = self.names.get(&path[0]) {
            let mut resolved = full.clone();
            resolved.extend(path.into_iter().skip(1));
            out.push(resolved);
            return;
        }
        if path.len() == 1 {
            for glob in &self.globs {
                let mut candidate = glob.clone();
                candidate.push(path[0].clone());
                out.push(candidate);
            }
        }
        out.push(path);
    }
}

/// What one test (or one macro call that generates tests) names.
#[derive(Debug, Clone, Default)]
pub struct Mentions {
    /// The values of its string literals.
    pub strings: HashSet<String>,
    /// Its paths, resolved through the `use` items in scope.
    pub paths: Vec<Vec<String>>,
}

impl Mentions {
    /// Read `tokens` (a test's body, or a macro call's input) under `scope`.
    pub(crate) fn read(&mut self, tokens: TokenStream, scope: &Scope) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => {
                    self.read(g.stream(), scope);
                    i += 1;
                }
                TokenTree::Literal(lit) => {
                    if let Ok(s) = syn::parse_str::<syn::LitStr>(&lit.to_string()) {
                        self.strings.insert(s.value());
                    }
                    i += 1;
                }
                TokenTree::Ident(_) => {
                    let after_dot = i > 0 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
                    let (segments, end) = path_at(&tokens, i);
                    let next = tokens.get(end);
                    let is_macro = matches!(next, Some(TokenTree::Punct(p)) if p.as_char() == '!');
                    // `name: value` in a struct literal or `let x: T`: a label, not a path.
                    let is_label = segments.len() == 1
                        && matches!(next, Some(TokenTree::Punct(p)) if p.as_char() == ':')
                        && !is_path_sep(&tokens, end);
                    if !after_dot && !is_macro && !is_label {
                        scope.resolve(segments, &mut self.paths);
                    }
                    i = end;
                }
                TokenTree::Punct(_) => i += 1,
            }
        }
    }
}

/// Whether `tokens[i..]` begins with `::`.
fn is_path_sep(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':'
    )
}

/// The path that starts at the identifier `tokens[start]`, and the index
/// just after it. A turbofish (`::<…>`) ends it.
fn path_at(tokens: &[TokenTree], start: usize) -> (Vec<String>, usize) {
    let mut segments = Vec::new();
    let mut i = start;
    while let Some(TokenTree::Ident(id)) = tokens.get(i) {
        segments.push(id.to_string());
        i += 1;
        if is_path_sep(tokens, i) && matches!(tokens.get(i + 2), Some(TokenTree::Ident(_))) {
            i += 2;
        } else {
            break;
        }
    }
    (segments, i)
}

/// Whether `tokens` hold a test attribute (`#[test]`, `#[tokio::test]`, any
/// attribute whose last segment is `test`) at any depth: a `macro_rules!`
/// body or a macro call that generates tests.
pub(crate) fn has_test_attr(tokens: TokenStream) -> bool {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    tokens.iter().enumerate().any(|(i, tt)| match tt {
        TokenTree::Punct(p) if p.as_char() == '#' => match tokens.get(i + 1) {
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                let (path, end) = match inner.first() {
                    Some(TokenTree::Ident(_)) => path_at(&inner, 0),
                    _ => (Vec::new(), 0),
                };
                // `#[test]`, or `#[tokio::test(flavor = "multi_thread")]` with its arguments.
                let rest = &inner[end.min(inner.len())..];
                path.last().is_some_and(|s| s == "test")
                    && matches!(rest, [] | [TokenTree::Group(_)])
            }
            _ => false,
        },
        TokenTree::Group(g) => has_test_attr(g.stream()),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(scope_src: &str, body: &str) -> Mentions {
        let file: syn::File = syn::parse_str(scope_src).unwrap();
        let scope = Scope::default().with_items(&file.items);
        let mut m = Mentions::default();
        m.read(body.parse().unwrap(), &scope);
        m
    }

    fn has(m: &Mentions, path: &str) -> bool {
        m.paths.iter().any(|p| p.join("::") == path)
    }

    #[test]
    fn method_calls_fields_labels_and_macro_names_are_not_paths() {
        let m = read("", "{ store.open_note(); x.read_note; S { tag_note: 1 }; delete_note!(); let y: T = 1; }");
        assert!(!has(&m, "open_note") && !has(&m, "read_note") && !has(&m, "tag_note") && !has(&m, "delete_note"), "{:?}", m.paths);
        assert!(has(&m, "T"), "{:?}", m.paths);
    }

    #[test]
    fn comments_do_not_count_and_strings_do() {
        let m = read("", "{ // read_note\n call(\"notes.write_note\"); json!({\"x\": 1}) }");
        assert!(m.strings.contains("notes.write_note") && m.strings.contains("x"));
        assert!(!m.strings.contains("read_note") && !has(&m, "read_note"));
    }

    #[test]
    fn paths_read_through_renames_groups_and_globs() {
        let m = read(
            "use crate::generated::notes as n; use crate::gen::{self as g, plan::{make_plan}}; use other::*;",
            "{ n::open_note::Args::default(); g::x; make_plan(); helper(); Vec::<u8>::new(); }",
        );
        assert!(has(&m, "crate::generated::notes::open_note::Args::default"), "{:?}", m.paths);
        assert!(has(&m, "crate::gen::x") && has(&m, "crate::gen::plan::make_plan"), "{:?}", m.paths);
        assert!(has(&m, "other::helper") && has(&m, "helper"), "a glob adds a candidate: {:?}", m.paths);
        assert!(has(&m, "Vec"), "a turbofish ends a path: {:?}", m.paths);
    }

    #[test]
    fn test_attributes_are_found_at_any_depth() {
        assert!(has_test_attr("($n:ident) => { #[test] fn $n() {} }".parse().unwrap()));
        assert!(has_test_attr("{ #[tokio::test] async fn t() {} }".parse().unwrap()));
        assert!(has_test_attr("{ #[tokio::test(flavor = \"multi_thread\")] async fn t() {} }".parse().unwrap()));
        assert!(!has_test_attr("{ #[test_case] fn t() {} #[derive(Debug)] struct S; }".parse().unwrap()));
    }
}
