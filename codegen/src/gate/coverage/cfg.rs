//! `#[cfg(…)]` on the items that decide whether an impl is compiled: a
//! `mod` item, an inline module and the `#[capability]` fn itself (DESIGN
//! §5, `coverage/unimplemented`). A predicate is read against one feature
//! set of its package. Only what a feature set decides is decided here:
//! `feature = "…"`, `test` (never in the build a host links), `any()`,
//! `all()`, `not()`; any other predicate (`unix`, `target_os = …`,
//! `debug_assertions`) is unknown, and an unknown predicate leaves the item
//! in — the registry check of the project's `cargo test` stays the judge
//! of those.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use syn::punctuated::Punctuated;

/// A `cfg` predicate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pred {
    Feature(String),
    Test,
    Any(Vec<Pred>),
    All(Vec<Pred>),
    Not(Box<Pred>),
    /// A predicate no feature set decides.
    Other,
}

impl Pred {
    /// Whether the predicate holds with `features` on: `None` when a
    /// predicate it depends on is unknown.
    pub(crate) fn holds(&self, features: &BTreeSet<String>) -> Option<bool> {
        match self {
            Pred::Feature(f) => Some(features.contains(f)),
            Pred::Test => Some(false),
            Pred::Other => None,
            Pred::Not(p) => p.holds(features).map(|b| !b),
            // Kleene logic: one false decides `all`, one true decides `any`;
            // otherwise an unknown leaves the answer unknown.
            Pred::All(ps) => decide(ps, features, false),
            Pred::Any(ps) => decide(ps, features, true),
        }
    }
}

/// `all` (`decisive` false) or `any` (`decisive` true) of `preds`.
fn decide(preds: &[Pred], features: &BTreeSet<String>, decisive: bool) -> Option<bool> {
    let held: Vec<Option<bool>> = preds.iter().map(|p| p.holds(features)).collect();
    if held.contains(&Some(decisive)) {
        Some(decisive)
    } else if held.contains(&None) {
        None
    } else {
        Some(!decisive)
    }
}

/// One `#[cfg(…)]` attribute: its predicate, as written, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cfg {
    pub pred: Pred,
    pub text: String,
    /// 1-based line and column of the attribute.
    pub line: u32,
    pub column: u32,
}

/// The `#[cfg(…)]` attributes of an item (an unreadable one is unknown).
pub(crate) fn cfgs(attrs: &[syn::Attribute]) -> Vec<Cfg> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .map(|a| {
            let pred = a.parse_args::<syn::Meta>().map_or(Pred::Other, |m| pred(&m));
            let text = match &a.meta {
                syn::Meta::List(list) => format!("#[cfg({})]", tidy(&list.tokens.to_string())),
                _ => "#[cfg]".to_string(),
            };
            let start = syn::spanned::Spanned::span(a).start();
            Cfg { pred, text, line: start.line as u32, column: start.column as u32 + 1 }
        })
        .collect()
}

/// `feature = "x"` as written, not `feature = \"x\"` spaced by tokens.
fn tidy(tokens: &str) -> String {
    tokens.replace(" (", "(").replace("( ", "(").replace(" )", ")").replace(" ,", ",")
}

fn pred(meta: &syn::Meta) -> Pred {
    match meta {
        syn::Meta::Path(p) if p.is_ident("test") => Pred::Test,
        syn::Meta::NameValue(nv) if nv.path.is_ident("feature") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Pred::Feature(s.value()),
            _ => Pred::Other,
        },
        syn::Meta::List(list) => {
            let Ok(items) = list.parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated) else { return Pred::Other };
            let items: Vec<Pred> = items.iter().map(pred).collect();
            if list.path.is_ident("any") {
                Pred::Any(items)
            } else if list.path.is_ident("all") {
                Pred::All(items)
            } else if list.path.is_ident("not") && items.len() == 1 {
                Pred::Not(Box::new(items.into_iter().next().expect("one item")))
            } else {
                Pred::Other
            }
        }
        _ => Pred::Other,
    }
}

/// The first of `cfgs` that leaves its item out with `features` on.
pub(crate) fn leaves_out<'c>(cfgs: &'c [Cfg], features: &BTreeSet<String>) -> Option<&'c Cfg> {
    cfgs.iter().find(|c| c.pred.holds(features) == Some(false))
}

/// The features on in the package at `dir` when it is built with `set` on
/// top of its default features: `default` and `set`, and every feature
/// they enable, transitively (`dep:` and `crate/feature` entries name
/// dependencies, not the package's features).
pub(crate) fn active_features(dir: &Path, set: &[String]) -> BTreeSet<String> {
    let table: BTreeMap<String, Vec<String>> = std::fs::read_to_string(dir.join("Cargo.toml"))
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("features").and_then(|f| f.as_table()).cloned())
        .map(|f| f.into_iter().map(|(k, v)| (k, v.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(str::to_owned)).collect())).collect())
        .unwrap_or_default();
    let mut on = BTreeSet::new();
    let mut todo: Vec<String> = set.to_vec();
    todo.push("default".into());
    while let Some(feature) = todo.pop() {
        if feature.contains(['/', ':']) || !on.insert(feature.clone()) {
            continue;
        }
        todo.extend(table.get(&feature).into_iter().flatten().cloned());
    }
    on.remove("default");
    on
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(cfg: &str) -> Pred {
        let item: syn::ItemMod = syn::parse_str(&format!("{cfg} mod m;")).unwrap();
        cfgs(&item.attrs)[0].pred.clone()
    }

    #[test]
    fn predicates_hold_as_cargo_decides_them_and_unknown_ones_stay_unknown() {
        let on: BTreeSet<String> = ["vector".to_string()].into();
        let cases = [
            ("#[cfg(any())]", Some(false)),
            ("#[cfg(all())]", Some(true)),
            ("#[cfg(test)]", Some(false)),
            ("#[cfg(feature = \"vector\")]", Some(true)),
            ("#[cfg(feature = \"off\")]", Some(false)),
            ("#[cfg(not(feature = \"off\"))]", Some(true)),
            ("#[cfg(unix)]", None),
            ("#[cfg(all(unix, feature = \"off\"))]", Some(false)),
            ("#[cfg(all(unix, feature = \"vector\"))]", None),
            ("#[cfg(any(unix, feature = \"vector\"))]", Some(true)),
            ("#[cfg(any(unix, feature = \"off\"))]", None),
            ("#[cfg(not(test))]", Some(true)),
        ];
        for (cfg, expected) in cases {
            assert_eq!(read(cfg).holds(&on), expected, "{cfg}");
        }
    }

    #[test]
    fn the_text_is_the_attribute_as_written() {
        let item: syn::ItemMod = syn::parse_str("#[cfg(any(feature = \"a\", not(test)))] mod m;").unwrap();
        assert_eq!(cfgs(&item.attrs)[0].text, "#[cfg(any(feature = \"a\", not(test)))]");
    }

    #[test]
    fn a_feature_set_turns_on_the_defaults_and_what_they_enable() {
        let dir = std::env::temp_dir().join(format!("capspec-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"a\"\n\n[features]\ndefault = [\"sql\"]\nsql = [\"dep:rusqlite\", \"json\"]\njson = []\nvector = [\"serde/std\", \"index\"]\nindex = []\n").unwrap();
        let on = |set: &[&str]| active_features(&dir, &set.iter().map(|s| s.to_string()).collect::<Vec<_>>()).into_iter().collect::<Vec<_>>();
        assert_eq!(on(&[]), ["json", "sql"]);
        assert_eq!(on(&["vector"]), ["index", "json", "sql", "vector"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
