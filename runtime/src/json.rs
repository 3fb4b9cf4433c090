//! JSON objects in key order in every build. serde_json's `preserve_order`
//! (which any crate in a build may turn on, Cedar's among them) makes a
//! `Map` keep insertion order; what the runtime reports from walking one
//! (violations, binary parts) must not depend on it.

use serde_json::{Map, Value};

/// `map`'s entries by key; without `preserve_order` they already are, and
/// the map is walked as it is, with nothing allocated.
pub(crate) fn sorted_entries(map: &Map<String, Value>) -> Entries<'_> {
    if map.keys().is_sorted() {
        Entries::AsIs(map.iter())
    } else {
        let mut list: Vec<_> = map.iter().collect();
        list.sort_unstable_by(|a, b| a.0.cmp(b.0));
        Entries::Sorted(list.into_iter())
    }
}

/// The iterator [`sorted_entries`] returns: one branch per item, so the
/// validator's walk of every argument object stays as cheap as the map's.
pub(crate) enum Entries<'a> {
    AsIs(serde_json::map::Iter<'a>),
    Sorted(std::vec::IntoIter<(&'a String, &'a Value)>),
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a String, &'a Value);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Entries::AsIs(iter) => iter.next(),
            Entries::Sorted(iter) => iter.next(),
        }
    }
}

/// [`sorted_entries`], owning.
pub(crate) fn sorted_owned(mut map: Map<String, Value>) -> impl Iterator<Item = (String, Value)> {
    map.sort_keys();
    map.into_iter()
}
