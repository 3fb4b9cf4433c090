//! The coverage scan: which capabilities have an implementation and a test.
//! Sources are parsed with `syn`; nothing is compiled.
//!
//! - an impl is a fn carrying `#[capability(path)]` (or
//!   `#[capspec::capability(path)]`) in a `[coverage] sources` directory;
//! - a test exercises a capability when a test fn (`#[test]`,
//!   `#[tokio::test]`, any attribute whose last segment is `test`) in a
//!   `[coverage] tests` directory contains the capability's name as a string
//!   literal or as the last segment of a path. Comments are not tokens, so
//!   they never count.

use std::collections::BTreeMap;
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;

use crate::config::Config;
use crate::finding::{Finding, rule};
use crate::model::SpecSet;
use crate::render::is_generated;
use crate::yaml::Pos;

/// One `#[capability(path)]` fn found in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImplSite {
    /// The path as written, e.g. `workspace::read_file`.
    pub path: Vec<String>,
    pub fn_name: String,
    pub file: String,
    pub pos: Pos,
    /// The body is only `todo!(…)` or `unimplemented!(…)`.
    pub stub: bool,
}

/// What the scan found.
#[derive(Debug, Default)]
pub struct Scan {
    pub impls: Vec<ImplSite>,
    /// Identifiers and string literals used inside test fns.
    pub test_words: std::collections::HashSet<String>,
    pub findings: Vec<Finding>,
    /// Texts of the scanned source files, for rendering findings.
    pub sources: Vec<(String, String)>,
}

fn rust_files(root: &Path, dirs: &[String], findings: &mut Vec<Finding>) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for dir in dirs {
        let base = root.join(dir);
        if !base.exists() {
            continue;
        }
        for entry in walkdir::WalkDir::new(&base).follow_links(false).sort_by_file_name() {
            let entry = match entry {
                Ok(e) => e,
                Err(err) => {
                    findings.push(Finding::error(rule::COVERAGE_PARSE, dir, Pos::default(), format!("cannot read: {err}")));
                    continue;
                }
            };
            if !entry.file_type().is_file() || entry.path().extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = crate::load::relative(root, entry.path());
            match std::fs::read_to_string(entry.path()) {
                Ok(text) if is_generated(&text) => {}
                Ok(text) => files.push((rel, text)),
                Err(err) => findings.push(Finding::error(rule::COVERAGE_PARSE, &rel, Pos::default(), format!("cannot read: {err}"))),
            }
        }
    }
    files
}

fn pos_of(span: proc_macro2::Span) -> Pos {
    let start = span.start();
    Pos { line: start.line as u32, column: start.column as u32 + 1 }
}

fn parse(file: &str, text: &str, findings: &mut Vec<Finding>) -> Option<syn::File> {
    match syn::parse_file(text) {
        Ok(f) => Some(f),
        Err(err) => {
            findings.push(Finding::error(
                rule::COVERAGE_PARSE,
                file,
                pos_of(err.span()),
                format!("cannot parse this Rust file ({err}); its capabilities and tests are not counted"),
            ));
            None
        }
    }
}

/// Scan the configured sources and tests.
pub fn scan(root: &Path, config: &Config) -> Scan {
    let mut scan = Scan::default();
    for (file, text) in rust_files(root, &config.coverage.sources, &mut scan.findings) {
        let ast = parse(&file, &text, &mut scan.findings);
        scan.sources.push((file.clone(), text));
        if let Some(ast) = ast {
            let mut renames = BTreeMap::new();
            collect_renames(&ast.items, &mut renames);
            let start = scan.impls.len();
            collect_impls(&ast.items, &file, &mut scan.impls);
            // `use crate::generated::notes as spec;` then `#[capability(spec::x)]`:
            // read the path through the file's `use … as …` renames.
            for site in &mut scan.impls[start..] {
                for seg in &mut site.path {
                    if let Some(original) = renames.get(seg.as_str()) {
                        *seg = original.clone();
                    }
                }
            }
        }
    }
    for (file, text) in rust_files(root, &config.coverage.tests, &mut scan.findings) {
        if let Some(ast) = parse(&file, &text, &mut scan.findings) {
            collect_test_words(&ast.items, &mut scan.test_words);
        }
    }
    scan
}

/// `use a::b as c;` → `c` ↦ `b`, for every rename in the file's `use` items.
fn collect_renames(items: &[syn::Item], out: &mut BTreeMap<String, String>) {
    fn walk(tree: &syn::UseTree, out: &mut BTreeMap<String, String>) {
        match tree {
            syn::UseTree::Path(p) => walk(&p.tree, out),
            syn::UseTree::Rename(r) => {
                out.insert(r.rename.to_string(), r.ident.to_string());
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| walk(t, out)),
            syn::UseTree::Name(_) | syn::UseTree::Glob(_) => {}
        }
    }
    for item in items {
        match item {
            syn::Item::Use(u) => walk(&u.tree, out),
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect_renames(items, out);
                }
            }
            _ => {}
        }
    }
}

fn is_capability_attr(attr: &syn::Attribute) -> bool {
    let segs: Vec<String> = attr.path().segments.iter().map(|s| s.ident.to_string()).collect();
    matches!(segs.iter().map(String::as_str).collect::<Vec<_>>().as_slice(), ["capability"] | ["capspec", "capability"])
}

fn collect_impls(items: &[syn::Item], file: &str, out: &mut Vec<ImplSite>) {
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                for attr in f.attrs.iter().filter(|a| is_capability_attr(a)) {
                    let path = attr.parse_args::<syn::Path>().map(|p| p.segments.iter().map(|s| s.ident.to_string()).collect()).unwrap_or_default();
                    out.push(ImplSite { path, fn_name: f.sig.ident.to_string(), file: file.to_string(), pos: pos_of(attr.span()), stub: is_stub(&f.block) });
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect_impls(items, file, out);
                }
            }
            _ => {}
        }
    }
}

/// A body that is nothing but `todo!(…)` or `unimplemented!(…)`.
fn is_stub(block: &syn::Block) -> bool {
    let [stmt] = block.stmts.as_slice() else { return false };
    let mac = match stmt {
        syn::Stmt::Macro(m) => &m.mac,
        syn::Stmt::Expr(syn::Expr::Macro(m), _) => &m.mac,
        _ => return false,
    };
    mac.path.segments.last().is_some_and(|s| s.ident == "todo" || s.ident == "unimplemented")
}

fn is_test_attr(attr: &syn::Attribute) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == "test")
}

fn collect_test_words(items: &[syn::Item], out: &mut std::collections::HashSet<String>) {
    for item in items {
        match item {
            syn::Item::Fn(f) if f.attrs.iter().any(is_test_attr) => {
                let tokens: TokenStream = quote::ToTokens::to_token_stream(&f.block);
                words(tokens, out);
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect_test_words(items, out);
                }
            }
            _ => {}
        }
    }
}

/// String literal values and identifiers that end a path (not followed by `::`).
fn words(tokens: TokenStream, out: &mut std::collections::HashSet<String>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tt) in tokens.iter().enumerate() {
        match tt {
            TokenTree::Group(g) => words(g.stream(), out),
            TokenTree::Ident(id) => {
                let followed_by_path = matches!(
                    (tokens.get(i + 1), tokens.get(i + 2)),
                    (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':'
                );
                if !followed_by_path {
                    out.insert(id.to_string());
                }
            }
            TokenTree::Literal(lit) => {
                if let Ok(s) = syn::parse_str::<syn::LitStr>(&lit.to_string()) {
                    out.insert(s.value());
                }
            }
            TokenTree::Punct(_) => {}
        }
    }
}

/// Coverage findings for a valid spec set.
pub fn findings(set: &SpecSet, scan: &Scan) -> Vec<Finding> {
    let mut out = scan.findings.clone();
    // name → (module, capability)
    let mut by_name = BTreeMap::new();
    for (m, c) in set.capabilities() {
        by_name.insert(c.name.as_str(), (m, c));
    }
    let mut impls: BTreeMap<(&str, &str), Vec<&ImplSite>> = BTreeMap::new();
    for site in &scan.impls {
        let resolved = match site.path.as_slice() {
            [] => None,
            [.., module, name] => by_name.get(name.as_str()).filter(|(m, _)| m.name == *module).copied(),
            [name] => by_name.get(name.as_str()).copied(),
        };
        match resolved {
            Some((m, c)) => impls.entry((m.name.as_str(), c.name.as_str())).or_default().push(site),
            None => {
                let written = site.path.join("::");
                let hint = site
                    .path
                    .last()
                    .and_then(|n| crate::names::suggest(n, by_name.keys().copied()))
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                out.push(Finding::error(
                    rule::COVERAGE_UNKNOWN,
                    &site.file,
                    site.pos,
                    format!("`#[capability({written})]` on `{}` names no capability in the specs{hint}", site.fn_name),
                ));
            }
        }
    }
    for (m, c) in set.capabilities() {
        let qualified = format!("{}.{}", m.name, c.name);
        match impls.get(&(m.name.as_str(), c.name.as_str())).map(Vec::as_slice) {
            None | Some([]) => out.push(
                Finding::error(
                    rule::COVERAGE_UNIMPLEMENTED,
                    &m.file,
                    c.pos,
                    format!("`{qualified}` has no implementation; add a `#[capability({}::{})]` fn (or run `cargo xtask scaffold`)", m.name, c.name),
                )
                .for_capability(&c.name),
            ),
            Some(sites) => {
                if sites.len() > 1 {
                    for site in sites {
                        let others = sites
                            .iter()
                            .filter(|o| !std::ptr::eq(*o, site))
                            .map(|o| format!("{}:{}", o.file, o.pos.line))
                            .collect::<Vec<_>>()
                            .join(", ");
                        out.push(
                            Finding::error(rule::COVERAGE_DUPLICATE_IMPL, &site.file, site.pos, format!("`{qualified}` is also implemented at {others}; keep one impl"))
                                .for_capability(&c.name),
                        );
                    }
                }
                for site in sites.iter().filter(|s| s.stub) {
                    out.push(
                        Finding::error(
                            rule::COVERAGE_STUB,
                            &site.file,
                            site.pos,
                            format!("`{qualified}` is still a stub (`{}` only calls `todo!`/`unimplemented!`); implement it", site.fn_name),
                        )
                        .for_capability(&c.name),
                    );
                }
            }
        }
        if !scan.test_words.contains(&c.name) && !scan.test_words.contains(&qualified) {
            out.push(
                Finding::error(
                    rule::COVERAGE_UNTESTED,
                    &m.file,
                    c.pos,
                    format!("no test exercises `{qualified}`: no test fn mentions `{}` as a string or a path; add one, or an `[[allow]]` with the reason", c.name),
                )
                .for_capability(&c.name),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_skip_comments_and_path_prefixes() {
        let mut out = std::collections::HashSet::new();
        let tokens: TokenStream = "{ // read_file\n call(\"write_file\"); spec::list_files::SPEC; json!({\"x\": delete_file}) }".parse().unwrap();
        words(tokens, &mut out);
        assert!(!out.contains("read_file"));
        assert!(out.contains("write_file") && out.contains("SPEC") && out.contains("delete_file"));
        assert!(!out.contains("list_files"), "a path segment followed by `::` is not its last segment");
    }

    #[test]
    fn stubs_are_bodies_of_only_todo() {
        let f: syn::ItemFn = syn::parse_str("async fn f() { todo!(\"later\") }").unwrap();
        assert!(is_stub(&f.block));
        let f: syn::ItemFn = syn::parse_str("async fn f() { let x = 1; todo!() }").unwrap();
        assert!(!is_stub(&f.block));
    }
}
