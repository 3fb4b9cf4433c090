//! Which source files their crate compiles (DESIGN §5,
//! `coverage/unimplemented`): those reachable from a crate root through
//! `mod` items, `#[path]` honoured, `#[cfg(test)]` modules left out (they
//! are not in the build a host links). An impl in any other file is never
//! compiled, so it implements nothing.
//!
//! A file in no Cargo package (a bare directory of sources) has no module
//! tree to read; its impls count as written, and the registry check of
//! `cargo test` stays the judge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// For each of `files` (relative to `root`): whether its package compiles it.
pub(super) fn linked(root: &Path, files: &BTreeSet<String>) -> BTreeMap<String, bool> {
    let mut packages: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for file in files {
        let path = root.join(file);
        let Some(package) = package_of(root, &path) else {
            out.insert(file.clone(), true);
            continue;
        };
        let reachable = packages.entry(package.clone()).or_insert_with(|| reachable(&package));
        let canonical = path.canonicalize().unwrap_or(path);
        out.insert(file.clone(), reachable.contains(&canonical));
    }
    out
}

/// The directory of the nearest `Cargo.toml` with a `[package]` at or above
/// `file`, up to `root`.
fn package_of(root: &Path, file: &Path) -> Option<PathBuf> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if let Ok(text) = std::fs::read_to_string(d.join("Cargo.toml")) {
            if text.parse::<toml::Table>().is_ok_and(|t| t.contains_key("package")) {
                return Some(d.to_path_buf());
            }
        }
        if d == root {
            return None;
        }
        dir = d.parent();
    }
    None
}

/// The crate roots of the package in `dir`: `src/lib.rs`, `src/main.rs`,
/// `src/bin/*.rs`, `src/bin/*/main.rs`, and the `[lib]` and `[[bin]]` paths.
fn crate_roots(dir: &Path) -> Vec<PathBuf> {
    let mut roots = vec![dir.join("src/lib.rs"), dir.join("src/main.rs")];
    for entry in std::fs::read_dir(dir.join("src/bin")).into_iter().flatten().flatten() {
        let path = entry.path();
        roots.push(if path.is_dir() { path.join("main.rs") } else { path });
    }
    if let Some(table) = std::fs::read_to_string(dir.join("Cargo.toml")).ok().and_then(|t| t.parse::<toml::Table>().ok()) {
        let path_of = |v: &toml::Value| v.get("path").and_then(|p| p.as_str()).map(|p| dir.join(p));
        roots.extend(table.get("lib").and_then(path_of));
        roots.extend(table.get("bin").and_then(|b| b.as_array()).into_iter().flatten().filter_map(path_of));
    }
    roots.retain(|r| r.is_file());
    roots
}

/// Every file reachable from the package's crate roots, canonical.
fn reachable(package: &Path) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<(PathBuf, bool)> = crate_roots(package).into_iter().map(|r| (r, true)).collect();
    while let Some((file, is_root)) = stack.pop() {
        let Ok(canonical) = file.canonicalize() else { continue };
        if !seen.insert(canonical) {
            continue;
        }
        let Some(ast) = std::fs::read_to_string(&file).ok().and_then(|t| syn::parse_file(&t).ok()) else { continue };
        let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
        // `mod x;` in `lib.rs`, `main.rs`, `mod.rs` or a crate root is
        // `x.rs` beside it; in `a.rs`, it is `a/x.rs`.
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let children = if is_root || matches!(stem, "lib" | "main" | "mod") { dir.clone() } else { dir.join(stem) };
        modules(&ast.items, &dir, &children, &mut stack);
    }
    seen
}

fn modules(items: &[syn::Item], file_dir: &Path, children: &Path, stack: &mut Vec<(PathBuf, bool)>) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if is_cfg_test(&m.attrs) {
            continue;
        }
        let name = m.ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name);
        match &m.content {
            Some((_, inner)) => modules(inner, &children.join(name), &children.join(name), stack),
            None => match path_attr(&m.attrs) {
                Some(path) => {
                    let file = file_dir.join(path);
                    stack.push((file, false));
                }
                None => {
                    let flat = children.join(format!("{name}.rs"));
                    stack.push((if flat.is_file() { flat } else { children.join(name).join("mod.rs") }, false));
                }
            },
        }
    }
}

/// `#[cfg(test)]` exactly: the module exists only in the crate's tests.
pub(super) fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}
