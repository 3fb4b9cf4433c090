//! `coverage/contract-unchecked`: with `--base REF`, a capability whose
//! contract changed since REF (or that is new) must come with a change to a
//! test that exercises it — the diff names the check that covers the new
//! contract — or an `[[allow]]` that says why there is none.
//!
//! "Touched" is read from `git diff REF` over the `[coverage] tests`
//! directories (work tree against REF, line ranges of every hunk) plus their
//! untracked files: a test fn is touched when a changed line falls inside it.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::BaseError;
use crate::finding::Finding;
use crate::model::{CapabilitySpec, ModuleSpec, SpecSet};
use crate::render::input_schema_json;
use crate::rules as rule;
use super::breaking::git;
use super::coverage::Scan;

/// What about a contract changed: `description`, `input schema`, `output
/// schema`, `category`, `hints`; `["new"]` for a capability REF did not have.
fn changes(base: &SpecSet, module: &ModuleSpec, cap: &CapabilitySpec) -> Vec<&'static str> {
    // The same capability at REF: by name, or by an alias it keeps (a rename).
    let before = base.module(&module.name).and_then(|m| {
        m.capabilities.iter().find(|b| b.name == cap.name).or_else(|| m.capabilities.iter().find(|b| cap.aliases.contains(&b.name)))
    });
    let Some(before) = before else { return vec!["new"] };
    let mut what = Vec::new();
    if before.description != cap.description {
        what.push("description");
    }
    if input_schema_json(before) != input_schema_json(cap) {
        what.push("input schema");
    }
    if before.output.as_ref().map(|s| s.to_json()) != cap.output.as_ref().map(|s| s.to_json()) {
        what.push("output schema");
    }
    if before.category != cap.category {
        what.push("category");
    }
    if before.hints.annotations(before.category) != cap.hints.annotations(cap.category) {
        what.push("hints");
    }
    what
}

/// Test files the diff touches: file → changed line ranges (new side,
/// 1-based, inclusive); `None` for a whole new (untracked) file.
type Touched = BTreeMap<String, Option<Vec<(u32, u32)>>>;

/// The test files the diff from `git_ref` touches.
fn touched(root: &Path, git_ref: &str, test_dirs: &[String]) -> Result<Touched, BaseError> {
    let fail = |message: String| BaseError::Git { git_ref: git_ref.to_string(), message };
    let mut args = vec!["diff", "--relative", "--unified=0", "--no-color", "--no-ext-diff", git_ref, "--"];
    args.extend(test_dirs.iter().map(String::as_str));
    let diff = String::from_utf8_lossy(&git(root, &args).map_err(fail)?).into_owned();
    let mut out = Touched::new();
    let mut file: Option<String> = None;
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            file = path.strip_prefix("b/").map(String::from);
        } else if let (Some(hunk), Some(f)) = (line.strip_prefix("@@ "), &file) {
            // `@@ -a,b +c,d @@`: lines c..c+d-1 are new; d = 0 (a deletion)
            // touches the line after which it happened.
            let new = hunk.split_whitespace().find_map(|w| w.strip_prefix('+')).unwrap_or("0");
            let (start, count) = new.split_once(',').map_or((new, "1"), |(s, c)| (s, c));
            let start: u32 = start.parse().unwrap_or(0);
            let count: u32 = count.parse().unwrap_or(1);
            let range = (start.max(1), (start + count.max(1) - 1).max(1));
            if let Some(ranges) = out.entry(f.clone()).or_insert_with(|| Some(Vec::new())) {
                ranges.push(range);
            }
        }
    }
    let mut args = vec!["ls-files", "--others", "--exclude-standard", "--"];
    args.extend(test_dirs.iter().map(String::as_str));
    for path in String::from_utf8_lossy(&git(root, &args).map_err(fail)?).lines() {
        out.insert(path.to_string(), None);
    }
    Ok(out)
}

/// The `coverage/contract-unchecked` findings of `head` against `base`.
pub(crate) fn unchecked(root: &Path, git_ref: &str, test_dirs: &[String], base: &SpecSet, head: &SpecSet, scan: &Scan) -> Result<Vec<Finding>, BaseError> {
    let changed: Vec<_> = head.capabilities().map(|(m, c)| (m, c, changes(base, m, c))).filter(|(_, _, what)| !what.is_empty()).collect();
    if changed.is_empty() {
        return Ok(Vec::new());
    }
    let touched = touched(root, git_ref, test_dirs)?;
    let mut out = Vec::new();
    for (m, c, what) in changed {
        let tests: Vec<_> = scan.exercising(&m.name, c).collect();
        let checked = tests.iter().any(|t| match touched.get(&t.file) {
            Some(None) => true,
            Some(Some(ranges)) => ranges.iter().any(|(a, b)| *a <= t.lines.1 && *b >= t.lines.0),
            None => false,
        });
        if checked {
            continue;
        }
        let qualified = format!("{}.{}", m.name, c.name);
        let change = if what == ["new"] { format!("is new since `{git_ref}`") } else { format!("changed its {} since `{git_ref}`", what.join(", ")) };
        let today = if tests.is_empty() {
            "no test exercises it yet; add one".to_string()
        } else {
            let mut labels: Vec<String> = tests.iter().map(|t| format!("`{}`", t.label())).collect();
            labels.sort();
            labels.dedup();
            format!("tests that exercise it: {}; update one to check the new contract", labels.join(", "))
        };
        out.push(
            Finding::error(
                rule::COVERAGE_CONTRACT_UNCHECKED,
                c.file(m),
                c.pos,
                format!("`{qualified}` {change}, and the diff touches no test that exercises it ({today}), or add an `[[allow]]` with the reason"),
            )
            .for_capability(&c.name),
        );
    }
    Ok(out)
}
