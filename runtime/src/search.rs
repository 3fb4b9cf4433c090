//! Capability search: rank capabilities by how well they match a
//! natural-language query, so a model can find a deferred capability by
//! what it does. BM25 over a capability's words — its name split into words
//! (weighted), its description, and its parameters' names and descriptions.

use std::collections::HashMap;

use crate::spec::Spec;

/// One ranked match.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchHit {
    /// The module.
    pub module: &'static str,
    /// The capability name.
    pub name: &'static str,
    /// Relevance: higher is better; only the order means anything.
    pub score: f64,
}

/// How much a word in each field counts.
const NAME_WEIGHT: f64 = 3.0;
const DESCRIPTION_WEIGHT: f64 = 1.0;
const PARAMETER_WEIGHT: f64 = 0.5;
/// BM25's usual constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// A search index over specs, built once.
#[derive(Debug, Default)]
pub struct Index {
    docs: Vec<Doc>,
}

#[derive(Debug)]
struct Doc {
    spec: &'static Spec,
    /// Term → weighted frequency.
    terms: HashMap<String, f64>,
    length: f64,
}

impl Index {
    /// Index `specs`.
    ///
    /// ```
    /// static SPECS: [capspec::Spec; 0] = [];
    /// let index = capspec::search::Index::new(SPECS.iter());
    /// assert!(index.search("delete a file", 5, |_| true).is_empty());
    /// ```
    pub fn new(specs: impl IntoIterator<Item = &'static Spec>) -> Index {
        let parsed: Vec<(&'static Spec, serde_json::Value)> =
            specs.into_iter().map(|spec| (spec, serde_json::from_str(spec.input_schema).unwrap_or_default())).collect();
        Index::with_schemas(parsed.iter().map(|(spec, schema)| (*spec, schema)))
    }

    /// [`Index::new`] with each input schema already parsed (the registry
    /// has parsed it for the validator).
    pub(crate) fn with_schemas<'a>(specs: impl IntoIterator<Item = (&'static Spec, &'a serde_json::Value)>) -> Index {
        let docs = specs
            .into_iter()
            .map(|(spec, schema)| {
                let mut terms: HashMap<String, f64> = HashMap::new();
                let mut add = |text: &str, weight: f64| {
                    for word in words(text) {
                        *terms.entry(word).or_default() += weight;
                    }
                };
                add(spec.name, NAME_WEIGHT);
                add(spec.module, DESCRIPTION_WEIGHT);
                add(spec.description, DESCRIPTION_WEIGHT);
                parameters(schema, &mut add);
                let length = terms.values().sum();
                Doc { spec, terms, length }
            })
            .collect();
        Index { docs }
    }

    /// The best `limit` matches for `query` among the specs `include`
    /// accepts, best first (ties by module, then name). Nothing when no word
    /// of the query occurs.
    pub fn search(&self, query: &str, limit: usize, include: impl Fn(&Spec) -> bool) -> Vec<SearchHit> {
        let docs: Vec<&Doc> = self.docs.iter().filter(|d| include(d.spec)).collect();
        if docs.is_empty() {
            return Vec::new();
        }
        let n = docs.len() as f64;
        let average = docs.iter().map(|d| d.length).sum::<f64>() / n;
        // The query's words count fully; their synonyms (a user's "folder"
        // for a description's "directory") at SYNONYM_WEIGHT, unless the
        // query says them itself.
        let mut query_words = words(query);
        query_words.sort();
        query_words.dedup();
        let mut weighted: Vec<(String, f64)> = query_words.iter().map(|w| (w.clone(), 1.0)).collect();
        for w in &query_words {
            for synonym in synonyms(w) {
                if !weighted.iter().any(|(s, _)| *s == synonym) {
                    weighted.push((synonym, SYNONYM_WEIGHT));
                }
            }
        }
        let idf: Vec<(String, f64)> = weighted
            .into_iter()
            .map(|(w, weight)| {
                let df = docs.iter().filter(|d| d.terms.contains_key(&w)).count() as f64;
                let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                (w, idf * weight)
            })
            .collect();
        let mut hits: Vec<SearchHit> = docs
            .iter()
            .filter_map(|d| {
                let score: f64 = idf
                    .iter()
                    .filter_map(|(w, idf)| {
                        let tf = *d.terms.get(w)?;
                        Some(idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * d.length / average.max(f64::EPSILON))))
                    })
                    .sum();
                (score > 0.0).then_some(SearchHit { module: d.spec.module, name: d.spec.name, score })
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.module.cmp(b.module)).then(a.name.cmp(b.name)));
        hits.truncate(limit);
        hits
    }
}

/// Parameter names and descriptions, at any depth.
fn parameters(schema: &serde_json::Value, add: &mut impl FnMut(&str, f64)) {
    let Some(map) = schema.as_object() else { return };
    if let Some(props) = map.get("properties").and_then(serde_json::Value::as_object) {
        for (name, prop) in props {
            add(name, PARAMETER_WEIGHT);
            if let Some(d) = prop.get("description").and_then(serde_json::Value::as_str) {
                add(d, PARAMETER_WEIGHT);
            }
            parameters(prop, add);
        }
    }
    if let Some(items) = map.get("items") {
        parameters(items, add);
    }
}

/// How much a synonym of a query word counts.
const SYNONYM_WEIGHT: f64 = 0.5;

/// Groups of words a user and a description use for one thing; each query
/// word brings the others of its group (compared in folded form).
const SYNONYMS: &[&str] = &[
    "create make new open add",
    "delete remove erase",
    "directory folder",
    "update edit change modify",
    "get fetch retrieve read show",
    "list enumerate",
    "search find query look",
    "send post",
    "run execute launch",
    "comment reply",
];

/// The other words of `word`'s synonym groups (folded).
fn synonyms(word: &str) -> Vec<String> {
    static GROUPS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    let groups = GROUPS.get_or_init(|| SYNONYMS.iter().map(|g| words(g)).collect());
    groups.iter().filter(|g| g.iter().any(|w| w == word)).flat_map(|g| g.iter()).filter(|w| *w != word).cloned().collect()
}

/// Words of `text`: split on anything but letters and digits and at
/// camelCase humps, lowercased, a few stop words dropped, plurals and
/// common suffixes folded (`files` → `file`, `listing` → `list`).
pub(crate) fn words(text: &str) -> Vec<String> {
    const STOP: &[&str] = &["a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "by", "with", "is", "it", "be", "as", "at", "from", "this", "that", "me", "my", "i"];
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out.into_iter().filter(|w| !STOP.contains(&w.as_str())).map(|w| stem(&w)).collect()
}

/// A light suffix folding, enough to match `files`/`file`, `listing`/`list`,
/// `deleted`/`delete`, `searches`/`search`: plural and `-ing`/`-ed` endings
/// go, then a final `e` of a longer word.
fn stem(word: &str) -> String {
    let mut w = word.to_string();
    for (suffix, keep) in [("ies", "y"), ("sses", "ss"), ("ches", "ch"), ("shes", "sh"), ("xes", "x"), ("ing", ""), ("ed", ""), ("s", "")] {
        if let Some(base) = word.strip_suffix(suffix) {
            if base.chars().count() >= 3 && !(suffix == "s" && (base.ends_with('s') || base.ends_with('u'))) {
                w = format!("{base}{keep}");
                break;
            }
        }
    }
    if w.chars().count() > 4 && w.ends_with('e') {
        w.pop();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_fold_and_drop() {
        assert_eq!(words("listWorkflows in the get-annotated_message"), ["list", "workflow", "get", "annotat", "messag"]);
        assert_eq!(words("created"), words("create"));
        assert_eq!(words("listing"), words("list"));
        assert_eq!(words("Deleted files"), words("delete file"));
        assert_eq!(words("searches"), words("search"));
    }

    #[test]
    fn a_query_word_brings_its_synonyms_folded() {
        assert_eq!(synonyms(&words("folder")[0]), words("directory"));
        assert!(synonyms(&words("removing")[0]).contains(&words("delete")[0]));
        assert!(synonyms("zebra").is_empty());
        // Every group word survives folding (none is a stop word).
        for group in SYNONYMS {
            assert_eq!(words(group).len(), group.split(' ').count(), "{group}");
        }
    }
}
