//! Which impls their crate compiles (DESIGN §5, `coverage/unimplemented`):
//! those in a file reachable from a crate root through `mod` items
//! (`#[path]` honoured), under no `#[cfg(…)]` the feature set leaves out —
//! on the `mod` item, an inline module or the fn — for every feature set
//! of `[check] features`. `#[cfg(test)]` modules are left out too: they
//! are not in the build a host links. An impl anywhere else is never
//! compiled, so it implements nothing.
//!
//! A file in no Cargo package (a bare directory of sources) has no module
//! tree to read; its impls count as written (their own `cfg` read with the
//! set alone), and the registry check of `cargo test` stays the judge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::cfg::{self, Cfg};
use super::site::{Build, ImplSite, LeftOut};

/// One package's build with one feature set: the features on, how a
/// finding names the build, and what its module tree reaches.
type OneBuild = (BTreeSet<String>, String, BTreeMap<PathBuf, Option<LeftOut>>);

/// Decide, for every site, whether each of the feature `sets`' builds
/// compiles it (`builds`), `linked` (every one does) and `left_out` (the
/// first `cfg` that leaves it out of one).
pub(super) fn link(root: &Path, sites: &mut [ImplSite], sets: &[Vec<String>]) {
    // Read once per file (its package, its canonical path) and once per
    // package and set (its features, its module tree), whatever the number
    // of impls: a project at scale has thousands in a few files.
    let mut files: BTreeMap<String, (Option<PathBuf>, PathBuf)> = BTreeMap::new();
    let mut builds: BTreeMap<(Option<PathBuf>, usize), OneBuild> = BTreeMap::new();
    for site in sites.iter_mut() {
        let (package, canonical) = files.entry(site.file.clone()).or_insert_with(|| {
            let path = root.join(&site.file);
            (package_of(root, &path), path.canonicalize().unwrap_or(path))
        });
        site.builds = (0..sets.len())
            .map(|i| {
                let (features, label, tree) = builds.entry((package.clone(), i)).or_insert_with(|| {
                    let label = set_label(sets, &sets[i]);
                    match package {
                        Some(dir) => {
                            let features = cfg::active_features(dir, &sets[i]);
                            let tree = reachable(root, dir, &features, &label);
                            (features, label, tree)
                        }
                        None => (sets[i].iter().cloned().collect(), label, BTreeMap::new()),
                    }
                });
                let reach = match package {
                    Some(_) => match tree.get(canonical.as_path()) {
                        None => return Build::Unreached,
                        Some(left_out) => left_out.clone(),
                    },
                    None => None,
                };
                match reach.or_else(|| cfg::leaves_out(&site.cfgs, features).map(|c| left_out(&site.file, c, label))) {
                    Some(why) => Build::LeftOut(why),
                    None => Build::Linked,
                }
            })
            .collect();
        site.linked = site.builds.iter().all(|b| *b == Build::Linked);
        site.left_out = site.builds.iter().find_map(|b| match b {
            Build::LeftOut(why) => Some(why.clone()),
            _ => None,
        });
    }
}

/// The features on in each of `sets`' builds of the package that holds
/// `dir` (the generated bindings' directory), and the features it declares
/// (`None`: no package, or no `[features]` table to read).
pub(super) fn binding_features(root: &Path, dir: &Path, sets: &[Vec<String>]) -> (Vec<std::collections::BTreeSet<String>>, Option<std::collections::BTreeSet<String>>) {
    let package = package_of(root, &dir.join("mod.rs"));
    let active = sets
        .iter()
        .map(|set| match &package {
            Some(p) => cfg::active_features(p, set),
            None => set.iter().cloned().collect(),
        })
        .collect();
    (active, package.and_then(|p| crate::source::declared_features(&p)))
}

/// How a finding names a feature set: "its default features" when `check`
/// holds the project to that set alone.
fn set_label(sets: &[Vec<String>], set: &[String]) -> String {
    match (sets.len(), set) {
        (1, []) => "its default features".into(),
        (_, []) => "its default features (`[check] features` set `[]`)".into(),
        (_, set) => format!("features {} on top of its default ones", set.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")),
    }
}

fn left_out(file: &str, cfg: &Cfg, features: &str) -> LeftOut {
    LeftOut { file: file.to_string(), pos: crate::yaml::Pos { line: cfg.line, column: cfg.column }, cfg: cfg.text.clone(), features: features.to_string() }
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

/// A file the walk is to read: whether it is a crate root, and the `cfg`
/// that leaves it out (`None`: compiled).
type Visit = (PathBuf, bool, Option<LeftOut>);

/// Every file reachable from the package's crate roots, canonical: `None`
/// when the build with `features` compiles it, else the `cfg` of the `mod`
/// item that leaves it out. A file the build compiles through one path is
/// compiled, whatever another path says.
fn reachable(root: &Path, package: &Path, features: &BTreeSet<String>, label: &str) -> BTreeMap<PathBuf, Option<LeftOut>> {
    let mut out: BTreeMap<PathBuf, Option<LeftOut>> = BTreeMap::new();
    let mut live: Vec<Visit> = crate_roots(package).into_iter().map(|r| (r, true, None)).collect();
    let mut left: Vec<Visit> = Vec::new();
    // Everything compiled first, then what `cfg`s leave out.
    while let Some((file, is_root, why)) = live.pop().or_else(|| left.pop()) {
        let Ok(canonical) = file.canonicalize() else { continue };
        if out.contains_key(&canonical) {
            continue;
        }
        out.insert(canonical, why.clone());
        let Some(ast) = std::fs::read_to_string(&file).ok().and_then(|t| syn::parse_file(&t).ok()) else { continue };
        let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
        // `mod x;` in `lib.rs`, `main.rs`, `mod.rs` or a crate root is
        // `x.rs` beside it; in `a.rs`, it is `a/x.rs`.
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let children = if is_root || matches!(stem, "lib" | "main" | "mod") { dir.clone() } else { dir.join(stem) };
        let rel = file.strip_prefix(root).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        let mut found = Vec::new();
        modules(&ast.items, &dir, &children, why, &Context { file: &rel, features, label }, &mut found);
        for visit in found {
            if visit.2.is_some() { left.push(visit) } else { live.push(visit) }
        }
    }
    out
}

struct Context<'a> {
    file: &'a str,
    features: &'a BTreeSet<String>,
    label: &'a str,
}

fn modules(items: &[syn::Item], file_dir: &Path, children: &Path, why: Option<LeftOut>, cx: &Context<'_>, out: &mut Vec<Visit>) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let cfgs = cfg::cfgs(&m.attrs);
        let why = why.clone().or_else(|| cfg::leaves_out(&cfgs, cx.features).map(|c| left_out(cx.file, c, cx.label)));
        let name = m.ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name);
        match &m.content {
            Some((_, inner)) => modules(inner, &children.join(name), &children.join(name), why, cx, out),
            None => match path_attr(&m.attrs) {
                Some(path) => out.push((file_dir.join(path), false, why)),
                None => {
                    let flat = children.join(format!("{name}.rs"));
                    out.push((if flat.is_file() { flat } else { children.join(name).join("mod.rs") }, false, why));
                }
            },
        }
    }
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
