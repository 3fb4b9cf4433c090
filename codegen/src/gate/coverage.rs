//! The coverage scan: which capabilities have an implementation and a test.
//! Sources are parsed with `syn`; nothing is compiled.
//!
//! - an impl is a fn carrying `#[capability(path)]` (or
//!   `#[capspec::capability(path)]`) in a `[coverage] sources` directory;
//! - a test exercises a capability when a test fn (`#[test]`,
//!   `#[tokio::test]`, any attribute whose last segment is `test`), or a
//!   macro call that generates tests, in a `[coverage] tests` directory
//!   names it in a way no other item shares (DESIGN §5): its qualified or
//!   wire name (or an alias) as a string literal, a path through its
//!   generated module (`notes::open_note`, `notes::open_note::Args`), its
//!   code-first args type, or the path of its `#[capability]` fn, each read
//!   through the `use` items in scope ([`mentions`]). A method call, a field
//!   or an unrelated fn that merely shares the short name names nothing.

mod exercised;
mod cfg;
mod linked;
mod mentions;
pub mod record;
mod site;

use std::collections::BTreeMap;
use std::path::Path;

use syn::spanned::Spanned;

pub use site::{Build, DeriveSite, ImplSite, Scan};
use exercised::{collect_test_macros, collect_tests};
use record::{Freshness, REFRESH, RECORD_DIR, Record};
use mentions::Scope;

use crate::config::Config;
use crate::finding::Finding;
use crate::rules as rule;
use crate::model::SpecSet;
use crate::render::is_generated;
use crate::yaml::Pos;

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
            let rel = crate::source::relative(root, entry.path());
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
    let mut crates = CrateNames::default();
    for (file, text) in rust_files(root, &config.coverage.sources, &mut scan.findings) {
        let ast = parse(&file, &text, &mut scan.findings);
        scan.sources.push((file.clone(), text));
        if let Some(ast) = ast {
            let mut renames = BTreeMap::new();
            collect_renames(&ast.items, &mut renames);
            let start = scan.impls.len();
            collect_impls(&ast.items, &file, file_module(root, &file, &mut crates), &[], &mut scan.impls);
            collect_derives(&ast.items, &file, &mut scan.derives);
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
    // An impl counts only where its crate compiles it, in every feature
    // set its capability is on in.
    linked::link(root, &mut scan.impls, &config.check_features);
    (scan.binding_features, scan.declared_features) = linked::binding_features(root, &root.join(&config.generate.rust), &config.check_features);
    // A path-less impl names its capability through its args type's derive.
    for site in &mut scan.impls {
        if let Some(ty) = &site.args_type {
            if let Some(d) = scan.derives.iter().find(|d| &d.type_name == ty) {
                site.path = vec![d.module.clone(), d.name.clone()];
            }
        }
    }
    let files: Vec<(String, syn::File)> = rust_files(root, &config.coverage.tests, &mut scan.findings)
        .into_iter()
        .filter_map(|(file, text)| parse(&file, &text, &mut scan.findings).map(|ast| (file, ast)))
        .collect();
    // Macros that generate tests, by name, from every test file (a helper
    // module may define one that another file calls).
    let mut test_macros = std::collections::HashSet::new();
    for (_, ast) in &files {
        collect_test_macros(&ast.items, &mut test_macros);
    }
    for (file, ast) in &files {
        collect_tests(&ast.items, file, "", &Scope::default(), &test_macros, &mut scan.tests);
    }
    scan
}

/// Package names by the directory of their `Cargo.toml`, read once each.
#[derive(Default)]
struct CrateNames(BTreeMap<std::path::PathBuf, Option<String>>);

impl CrateNames {
    /// The name (as Rust code writes it) of the package whose sources hold
    /// `file`: the nearest `Cargo.toml` with a `[package] name` at or above
    /// its directory, up to `root`.
    fn of(&mut self, root: &Path, file: &Path) -> Option<String> {
        let mut dir = file.parent();
        while let Some(d) = dir {
            let name = self.0.entry(d.to_path_buf()).or_insert_with(|| {
                let text = std::fs::read_to_string(d.join("Cargo.toml")).ok()?;
                let table: toml::Table = toml::from_str(&text).ok()?;
                Some(table.get("package")?.get("name")?.as_str()?.replace('-', "_"))
            });
            if name.is_some() {
                return name.clone();
            }
            if d == root {
                break;
            }
            dir = d.parent();
        }
        None
    }
}

/// The names a source file's own module goes by in a path: `notes` for
/// `src/notes.rs` or `src/notes/mod.rs`; `crate` and the package's name for
/// a crate root (`lib.rs`, `main.rs`).
fn file_module(root: &Path, file: &str, crates: &mut CrateNames) -> Vec<String> {
    let path = Path::new(file);
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let parent = path.parent().and_then(|p| p.file_name()).and_then(|s| s.to_str()).unwrap_or_default();
    match stem {
        "lib" | "main" => {
            let mut names = vec!["crate".to_string()];
            names.extend(crates.of(root, &root.join(file)));
            names
        }
        "mod" => vec![parent.to_string()],
        _ => vec![stem.to_string()],
    }
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

fn collect_impls(items: &[syn::Item], file: &str, parent: Vec<String>, cfgs: &[cfg::Cfg], out: &mut Vec<ImplSite>) {
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                for attr in f.attrs.iter().filter(|a| is_capability_attr(a)) {
                    let code_first = matches!(attr.meta, syn::Meta::Path(_));
                    let path = attr.parse_args::<syn::Path>().map(|p| p.segments.iter().map(|s| s.ident.to_string()).collect()).unwrap_or_default();
                    let args_type = code_first.then(|| args_type_name(&f.sig)).flatten();
                    out.push(ImplSite {
                        path,
                        args_type,
                        fn_name: f.sig.ident.to_string(),
                        parent: parent.clone(),
                        file: file.to_string(),
                        pos: pos_of(attr.span()),
                        stub: is_stub(&f.block),
                        linked: true,
                        cfgs: cfgs.iter().cloned().chain(cfg::cfgs(&f.attrs)).collect(),
                        left_out: None,
                        builds: Vec::new(),
                    });
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    let inner: Vec<cfg::Cfg> = cfgs.iter().cloned().chain(cfg::cfgs(&m.attrs)).collect();
                    collect_impls(items, file, vec![m.ident.to_string()], &inner, out);
                }
            }
            _ => {}
        }
    }
}

/// The last path segment of a fn's second parameter's type (`args: TagNote`).
fn args_type_name(sig: &syn::Signature) -> Option<String> {
    let syn::FnArg::Typed(arg) = sig.inputs.iter().nth(1)? else { return None };
    match &*arg.ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn derives_capability(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
            .is_ok_and(|paths| paths.iter().any(|p| p.segments.last().is_some_and(|s| s.ident == "Capability")))
    })
}

/// `#[derive(Capability)]` structs with their `#[capability(module = …, name = …)]`.
fn collect_derives(items: &[syn::Item], file: &str, out: &mut Vec<DeriveSite>) {
    for item in items {
        match item {
            syn::Item::Struct(st) if derives_capability(&st.attrs) => {
                let mut module = None;
                let mut name = None;
                for attr in st.attrs.iter().filter(|a| a.path().is_ident("capability")) {
                    let _ = attr.parse_nested_meta(|meta| {
                        let value = meta.value().and_then(|v| v.parse::<syn::Expr>()).ok();
                        let text = match value {
                            Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })) => Some(s.value()),
                            _ => None,
                        };
                        if meta.path.is_ident("module") {
                            module = text;
                        } else if meta.path.is_ident("name") {
                            name = text;
                        }
                        Ok(())
                    });
                }
                let type_name = st.ident.to_string();
                if let Some(module) = module {
                    let name = name.unwrap_or_else(|| capspec_names::default_capability_name(&type_name));
                    out.push(DeriveSite { type_name, module, name, file: file.to_string(), pos: pos_of(st.ident.span()) });
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect_derives(items, file, out);
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

/// Impl sites by the capability they implement, `(module, name)`.
pub type ImplsByCapability<'a> = BTreeMap<(&'a str, &'a str), Vec<&'a ImplSite>>;

/// Every impl site by the capability it implements (`(module, name)`), and
/// the sites that name no capability.
pub fn implementations<'a>(set: &'a SpecSet, scan: &'a Scan) -> (ImplsByCapability<'a>, Vec<&'a ImplSite>) {
    // name → every (module, capability) of that name (two modules may share one)
    let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (m, c) in set.capabilities() {
        by_name.entry(c.name.as_str()).or_default().push(m.name.as_str());
    }
    let mut impls = ImplsByCapability::new();
    let mut unresolved = Vec::new();
    // A site counts where some build compiles it; for its capability, only
    // if every build that has the capability compiles it.
    for site in scan.impls.iter().filter(|s| s.builds.is_empty() || s.builds.contains(&Build::Linked)) {
        let resolved = match site.path.as_slice() {
            [] => None,
            [.., module, name] => by_name.get_key_value(name.as_str()).and_then(|(n, ms)| ms.iter().find(|m| **m == module.as_str()).map(|m| (*m, *n))),
            [name] => by_name.get_key_value(name.as_str()).and_then(|(n, ms)| if let [m] = ms.as_slice() { Some((*m, *n)) } else { None }),
        };
        match resolved {
            Some(key) if compiled_where_on(set, scan, key, site) => impls.entry(key).or_default().push(site),
            Some(_) => {}
            None => unresolved.push(site),
        }
    }
    (impls, unresolved)
}

/// Which of the `[check] features` sets' builds have `(module, name)`:
/// all, unless it names a cargo feature (then those that turn it on).
fn on_in(set: &SpecSet, scan: &Scan, (module, name): (&str, &str)) -> Vec<bool> {
    let feature = set.module(module).and_then(|m| m.capabilities.iter().find(|c| c.name == name)).and_then(|c| c.feature.as_deref());
    scan.binding_features.iter().map(|on| feature.is_none_or(|f| on.contains(f))).collect()
}

/// Whether every build that has the capability `key` compiles `site`.
fn compiled_where_on(set: &SpecSet, scan: &Scan, key: (&str, &str), site: &ImplSite) -> bool {
    site.builds.is_empty() || on_in(set, scan, key).iter().zip(&site.builds).all(|(on, build)| !on || *build == Build::Linked)
}

/// Coverage findings for a valid spec set. `record`: what the last `cargo
/// test` ran; `None` leaves `coverage/untested` out (a check made inside
/// that run, which cannot know the rest of it).
pub fn findings(set: &SpecSet, scan: &Scan, record: Option<&Record>) -> Vec<Finding> {
    let mut out = scan.findings.clone();
    let (impls, unresolved) = implementations(set, scan);
    let names: Vec<&str> = set.capabilities().map(|(_, c)| c.name.as_str()).collect();
    for site in unresolved {
        if site.args_type.is_some() && site.path.is_empty() {
            out.push(Finding::error(
                rule::COVERAGE_UNKNOWN,
                &site.file,
                site.pos,
                format!(
                    "`#[capability]` on `{}` takes `{}`, which has no #[derive(Capability)] in the coverage sources",
                    site.fn_name,
                    site.args_type.as_deref().unwrap_or("?")
                ),
            ));
        } else {
            let written = site.path.join("::");
            let hint = site
                .path
                .last()
                .and_then(|n| capspec_names::suggest(n, names.iter().copied()))
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
    // A derive whose spec is not in the set was never exported.
    for d in &scan.derives {
        if !set.module(&d.module).is_some_and(|m| m.capabilities.iter().any(|c| c.name == d.name && c.code_first.is_some())) {
            out.push(Finding::error(
                rule::COVERAGE_UNKNOWN,
                &d.file,
                d.pos,
                format!(
                    "#[derive(Capability)] on `{}` declares `{}.{}`, which is not among the code-first specs; list its package under `[code_first] packages` in capspec.toml and run `cargo xtask sync`",
                    d.type_name, d.module, d.name
                ),
            ));
        }
    }
    // A capability behind a cargo feature: the feature must be the
    // bindings' package's, and some build `check` holds the project to must
    // turn it on, or nothing holds the capability to anything.
    for (m, c) in set.capabilities() {
        let Some(feature) = &c.feature else { continue };
        let qualified = format!("{}.{}", m.name, c.name);
        if scan.declared_features.as_ref().is_some_and(|declared| !declared.contains(feature)) {
            out.push(
                Finding::error(rule::SPEC_INVALID_VALUE, c.file(m), c.pos, format!("`{qualified}` lives behind cargo feature `{feature}`, which the package of the generated bindings does not declare; add `{feature} = []` to its `[features]`"))
                    .for_capability(&c.name),
            );
        } else if !scan.binding_features.iter().any(|on| on.contains(feature)) {
            out.push(
                Finding::warning(
                    rule::SPEC_INVALID_VALUE,
                    c.file(m),
                    c.pos,
                    format!("`{qualified}` lives behind cargo feature `{feature}`, which no build `check` holds the project to turns on, so nothing checks its implementation; add a set with it to `[check] features` in capspec.toml (e.g. `features = [[], [\"{feature}\"]]`)"),
                )
                .for_capability(&c.name),
            );
        }
    }
    // An upstream module's server implements it; its pins and `check
    // --upstream` take the place of impls and tests (DESIGN §12).
    for (m, c) in set.capabilities().filter(|(m, _)| m.upstream.is_none()) {
        let qualified = format!("{}.{}", m.name, c.name);
        let file = c.file(m);
        match impls.get(&(m.name.as_str(), c.name.as_str())).map(Vec::as_slice) {
            None | Some([]) => {
                // In no build that has it: nothing to implement (the
                // feature's findings below say so).
                let on = on_in(set, scan, (&m.name, &c.name));
                if !on.is_empty() && !on.contains(&true) {
                    continue;
                }
                // A `#[capability]` fn for it that a build having it never compiles.
                let uncompiled = scan.impls.iter().find(|s| matches!(s.path.as_slice(), [.., mm, n] if *mm == m.name && *n == c.name) && !compiled_where_on(set, scan, (&m.name, &c.name), s));
                let left_out = uncompiled.and_then(|s| on.iter().zip(&s.builds).find_map(|(on, b)| match b {
                    Build::LeftOut(why) if *on => Some(why),
                    _ => None,
                }));
                // Left out by a `cfg`: located at that attribute, its `mod`
                // line (DESIGN §5).
                if let Some(why) = uncompiled.and_then(|site| left_out.map(|why| (site, why))).map(|(site, why)| {
                    Finding::error(
                        rule::COVERAGE_UNIMPLEMENTED,
                        &why.file,
                        why.pos,
                        format!(
                            "`{qualified}` has no implementation its crate compiles with {}: `{}` at {}:{} is left out by `{}` here (the builds `check` holds the project to are `[check] features` in capspec.toml)",
                            why.features, site.fn_name, site.file, site.pos.line, why.cfg
                        ),
                    )
                    .for_capability(&c.name)
                }) {
                    out.push(why);
                    continue;
                }
                let message = match (uncompiled, &c.code_first) {
                    (Some(site), _) => format!(
                        "`{qualified}` has no implementation its crate compiles: `{}` at {}:{} is in a file no `mod` item reaches from the crate root (or in a `#[cfg(test)]` module); declare its module (e.g. `mod capabilities;` in `src/lib.rs`)",
                        site.fn_name, site.file, site.pos.line
                    ),
                    (None, Some(origin)) => format!("`{qualified}` has no implementation; add a `#[capability]` fn taking `{}`", origin.rust_type.rsplit("::").next().unwrap_or_default()),
                    (None, None) => format!("`{qualified}` has no implementation; add a `#[capability({}::{})]` fn (or run `cargo xtask scaffold`)", m.name, c.name),
                };
                out.push(Finding::error(rule::COVERAGE_UNIMPLEMENTED, file, c.pos, message).for_capability(&c.name));
            }
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
        if let Some(record) = record {
            if record.tests(&qualified, &crate::render::contract_fingerprint(m, c)).is_empty() {
                out.push(Finding::error(rule::COVERAGE_UNTESTED, file, c.pos, untested_message(&qualified, record)).for_capability(&c.name));
            }
        }
    }
    if let Some(record) = record {
        let needs_tests = set.capabilities().any(|(m, _)| m.upstream.is_none());
        match &record.freshness {
            Freshness::Fresh => {}
            _ if !needs_tests => {}
            Freshness::Missing => out.push(Finding::error(
                rule::COVERAGE_STALE,
                crate::config::CONFIG_FILE,
                Pos::default(),
                format!(
                    "no coverage record: no `{REFRESH}` of this project has run a capability with the recording on (`{RECORD_DIR}/`, set by `CAPSPEC_COVERAGE_DIR` in `.cargo/config.toml`); run `{REFRESH}`, then check again"
                ),
            )),
            Freshness::Stale { changed } => out.push(Finding::error(
                rule::COVERAGE_STALE,
                changed,
                Pos::default(),
                format!("this file changed after the last `{REFRESH}` started, so its coverage record counts for nothing; run `{REFRESH}`, then check again"),
            )),
        }
    }
    out
}

/// Why `qualified` counts as untested.
fn untested_message(qualified: &str, record: &Record) -> String {
    match (&record.freshness, record.last_run(qualified).as_slice()) {
        (Freshness::Fresh, _) => format!(
            "no test ran `{qualified}`: the last `{REFRESH}` never called it through `invoke`, a generated binding, a guest facade or a served MCP surface; add a test that calls it"
        ),
        (Freshness::Missing, _) => format!("`{qualified}` is not known to be tested: there is no coverage record; run `{REFRESH}`"),
        (Freshness::Stale { changed }, []) => {
            format!("`{qualified}` is not known to be tested: `{changed}` changed after the last `{REFRESH}`, which did not run it either; run `{REFRESH}`")
        }
        (Freshness::Stale { changed }, ran) => format!(
            "`{qualified}` is not known to be tested: the last `{REFRESH}` ran it ({}), but `{changed}` changed since; run `{REFRESH}`",
            ran.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stubs_are_bodies_of_only_todo() {
        let f: syn::ItemFn = syn::parse_str("async fn f() { todo!(\"later\") }").unwrap();
        assert!(is_stub(&f.block));
        let f: syn::ItemFn = syn::parse_str("async fn f() { let x = 1; todo!() }").unwrap();
        assert!(!is_stub(&f.block));
    }
}
