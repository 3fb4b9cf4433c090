//! JSON objects in key order in every build. serde_json's `preserve_order`
//! (which any crate in a build may turn on, Cedar's among them) makes a
//! `Map` keep insertion order; what the runtime reports from walking one
//! (violations, binary parts) must not depend on it.

use serde_json::{Map, Value};

/// `map`'s entries by key; without `preserve_order` they already are, and
/// nothing is allocated.
pub(crate) fn sorted_entries(map: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let mut entries: Option<Vec<(&String, &Value)>> = None;
    if !map.keys().is_sorted() {
        let mut list: Vec<_> = map.iter().collect();
        list.sort_unstable_by(|a, b| a.0.cmp(b.0));
        entries = Some(list);
    }
    let (sorted, as_is) = match entries {
        Some(list) => (Some(list.into_iter()), None),
        None => (None, Some(map.iter())),
    };
    sorted.into_iter().flatten().chain(as_is.into_iter().flatten())
}

/// [`sorted_entries`], owning.
pub(crate) fn sorted_owned(mut map: Map<String, Value>) -> impl Iterator<Item = (String, Value)> {
    map.sort_keys();
    map.into_iter()
}
