//! The always-loaded catalog of a tiered session: what a model reads up
//! front when most capabilities are deferred. It names the modules, lists
//! the non-deferred capabilities in full and says how to find the rest
//! (`tool_search`, or `capabilities.search` in an action), so its size does
//! not grow with the number of deferred capabilities — only with the ones a
//! host chose to keep loaded. Every capability stays reachable by search.

use std::fmt::Write;

use crate::builtin::TOOL_SEARCH;
use crate::spec::Module;

/// Most module names written out; the rest are counted.
const MAX_MODULE_NAMES: usize = 40;

/// The always-loaded catalog of `modules`: a header with the counts and
/// module names, `tool_search`'s entry, then every non-deferred
/// capability's entry (`- category \`signature\`: summary`, as in the
/// generated catalog).
pub fn tiered_catalog<'a>(modules: impl IntoIterator<Item = &'a Module>) -> String {
    let modules: Vec<&Module> = modules.into_iter().collect();
    let specs = || modules.iter().flat_map(|m| m.specs.iter());
    let total = specs().count();
    let deferred = specs().filter(|s| s.deferred).count();
    let mut names: Vec<&str> = modules.iter().map(|m| m.name).collect();
    let more = names.len().saturating_sub(MAX_MODULE_NAMES);
    names.truncate(MAX_MODULE_NAMES);
    let mut out = String::from("# Capabilities\n\n");
    let _ = write!(out, "{total} capabilities in {} modules: {}", modules.len(), names.join(", "));
    if more > 0 {
        let _ = write!(out, " and {more} more");
    }
    let _ = write!(
        out,
        ".\n{deferred} of them are not listed here: find one by what it does with `tool_search` (in an action: `await capabilities.search(query)`), which returns its wire name, module, signature and input schema. Each entry below gives the category, then the signature (`?` optional; a parameter without a type is a string) and what it does.\n\n"
    );
    let entry = |out: &mut String, s: &crate::Spec| {
        let _ = writeln!(out, "- {} `{}`: {}", s.category, s.signature.replace('`', "'"), s.summary);
    };
    entry(&mut out, &TOOL_SEARCH);
    for spec in specs().filter(|s| !s.deferred) {
        entry(&mut out, spec);
    }
    out
}
