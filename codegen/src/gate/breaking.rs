//! `check --base GIT_REF`: the specs as they were at a git ref, compared
//! with the working tree's, as `breaking/*` findings. The old specs are read
//! with `git cat-file`; nothing is checked out or cloned.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::error::BaseError;
use crate::finding::Finding;
use crate::load::{self, SpecFile};
use crate::model::{CapabilitySpec, Category, ModuleSpec, Schema, SpecSet};
use crate::render::fingerprint;
use crate::rules::{
    BREAKING_CATEGORY_CHANGED as CATEGORY_CHANGED, BREAKING_ENUM_VALUE_REMOVED as ENUM_VALUE_REMOVED,
    BREAKING_PROPERTY_REMOVED as PROPERTY_REMOVED, BREAKING_PROPERTY_RETYPED as PROPERTY_RETYPED,
    BREAKING_REMOVED_CAPABILITY as REMOVED_CAPABILITY, BREAKING_REMOVED_MODULE as REMOVED_MODULE,
    BREAKING_REQUIRED_ADDED as REQUIRED_ADDED,
};
use crate::yaml::Pos;

/// Run git in `root`: its stdout, or its stderr as the error.
pub(crate) fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim_end_matches('\n').to_string()
}

/// The spec set at `git_ref` (specs that fail to load there are skipped:
/// only contracts that existed are compared).
/// The specs at `git_ref`: the spec files under `specs_dir`, and the
/// code-first specs in the record file `record` (when given and present).
pub(crate) fn base_specs(root: &Path, specs_dir: &str, record: Option<&str>, git_ref: &str) -> Result<SpecSet, BaseError> {
    let fail = |message: String| BaseError::Git { git_ref: git_ref.to_string(), message };
    git(root, &["rev-parse", "--show-toplevel"]).map_err(|_| fail(format!("`{}` is not inside a git repository", root.display())))?;
    let commit = git(root, &["rev-parse", "--verify", "--quiet", &format!("{git_ref}^{{commit}}")]).map(text);
    let commit = match commit {
        Ok(c) if !c.is_empty() => c,
        _ => {
            let shallow = git(root, &["rev-parse", "--is-shallow-repository"]).map(text).unwrap_or_default() == "true";
            let message = if shallow {
                format!(
                    "this is a shallow clone and `{git_ref}` is not in it; fetch it first (e.g. `git fetch --deepen=50 origin` or `git fetch origin {git_ref}`), or check out with full history (`fetch-depth: 0` in actions/checkout)"
                )
            } else {
                format!("no commit named `{git_ref}` in this repository; pass a branch, tag or commit that exists (e.g. `origin/main`)")
            };
            return Err(fail(message));
        }
    };
    let prefix = git(root, &["rev-parse", "--show-prefix"]).map(text).map_err(fail)?;
    let listing = git(root, &["ls-tree", "-r", "-z", "--full-name", "--name-only", &commit, "--", specs_dir]).map_err(fail)?;
    let mut files = Vec::new();
    for full in listing.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let full = String::from_utf8_lossy(full).into_owned();
        if !(full.ends_with(".yaml") || full.ends_with(".yml")) {
            continue;
        }
        let bytes = git(root, &["cat-file", "blob", &format!("{commit}:{full}")]).map_err(fail)?;
        let rel = full.strip_prefix(&prefix).unwrap_or(&full).to_string();
        files.push(SpecFile { path: rel, bytes });
    }
    let mut code_first = Vec::new();
    if let Some(record) = record {
        let full = format!("{prefix}{record}");
        if let Ok(bytes) = git(root, &["cat-file", "blob", &format!("{commit}:{full}")]) {
            let (specs, _) = crate::code_first::parse_record(record, &String::from_utf8_lossy(&bytes));
            code_first = crate::code_first::convert(root, specs).entries;
        }
    }
    Ok(load::load_files_with(files, code_first).set)
}

fn finding(rule: &str, file: &str, pos: Pos, capability: Option<&str>, target: &str, message: String) -> Finding {
    let id = format!("{rule}:{target}");
    let mut f = Finding::error(rule, file, pos, message);
    f.fingerprint = Some(fingerprint(&id));
    f.id = Some(id);
    if let Some(c) = capability {
        f = f.for_capability(c);
    }
    f
}


/// Compare two spec sets' contracts.
pub(crate) fn compare(base: &SpecSet, current: &SpecSet) -> Vec<Finding> {
    let mut out = Vec::new();
    for old_module in &base.modules {
        let Some(new_module) = current.module(&old_module.name) else {
            out.push(finding(
                REMOVED_MODULE,
                &old_module.file,
                Pos::default(),
                None,
                &old_module.name,
                format!(
                    "module `{}` was removed, and with it {} capabilit{} guests import from it",
                    old_module.name,
                    old_module.capabilities.len(),
                    if old_module.capabilities.len() == 1 { "y" } else { "ies" }
                ),
            ));
            continue;
        };
        for old in &old_module.capabilities {
            match find(current, &old.name) {
                None => out.push(finding(
                    REMOVED_CAPABILITY,
                    &new_module.file,
                    Pos::default(),
                    Some(&old.name),
                    &format!("{}.{}", old_module.name, old.name),
                    format!(
                        "capability `{}.{}` was removed; callers break. Keep its name in the new capability's `aliases` if it was renamed",
                        old_module.name, old.name
                    ),
                )),
                Some((m, new)) => compare_capability(old_module, old, m, new, &mut out),
            }
        }
    }
    out
}

/// A capability by name, or the capability that keeps `name` as an alias.
fn find<'a>(set: &'a SpecSet, name: &str) -> Option<(&'a ModuleSpec, &'a CapabilitySpec)> {
    set.capabilities().find(|(_, c)| c.name == name).or_else(|| set.capabilities().find(|(_, c)| c.aliases.iter().any(|a| a == name)))
}

fn compare_capability(_old_module: &ModuleSpec, old: &CapabilitySpec, module: &ModuleSpec, new: &CapabilitySpec, out: &mut Vec<Finding>) {
    let qualified = format!("{}.{}", module.name, new.name);
    if old.category != new.category {
        out.push(finding(
            CATEGORY_CHANGED,
            new.file(module),
            new.pos,
            Some(&new.name),
            &qualified,
            format!("`{qualified}` changed category: {} → {} ({})", old.category, new.category, Category::direction(old.category, new.category).unwrap_or_default()),
        ));
    }
    let empty = Schema::default();
    compare_object(old.input.as_ref().unwrap_or(&empty), new.input.as_ref().unwrap_or(&empty), "", &qualified, new.file(module), new, out);
}

fn type_signature(s: &Schema) -> String {
    let mut types: Vec<&str> = s.types.iter().map(|t| t.as_str()).collect();
    types.sort();
    match &s.reference {
        Some(r) => format!("$ref {r}"),
        None if types.is_empty() => "any".into(),
        None => types.join("|"),
    }
}

fn compare_object(old: &Schema, new: &Schema, pointer: &str, qualified: &str, file: &str, cap: &CapabilitySpec, out: &mut Vec<Finding>) {
    let old_required: BTreeSet<&String> = old.required.iter().collect();
    for name in &new.required {
        if !old_required.contains(name) {
            let at = format!("{pointer}/{name}");
            out.push(finding(
                REQUIRED_ADDED,
                file,
                cap.pos,
                Some(&cap.name),
                &format!("{qualified}:{at}"),
                format!("`{qualified}` now requires `{}`; calls that omit it break", &at[1..]),
            ));
        }
    }
    for (name, old_prop) in &old.properties {
        let at = format!("{pointer}/{name}");
        let Some((_, new_prop)) = new.properties.iter().find(|(n, _)| n == name) else {
            out.push(finding(
                PROPERTY_REMOVED,
                file,
                cap.pos,
                Some(&cap.name),
                &format!("{qualified}:{at}"),
                format!("`{qualified}` no longer accepts `{}`; calls that pass it break", &at[1..]),
            ));
            continue;
        };
        let (a, b) = (type_signature(old_prop), type_signature(new_prop));
        if a != b {
            out.push(finding(
                PROPERTY_RETYPED,
                file,
                cap.pos,
                Some(&cap.name),
                &format!("{qualified}:{at}"),
                format!("`{qualified}` argument `{}` changed type: {a} → {b}", &at[1..]),
            ));
            continue;
        }
        if let (Some(old_values), Some(new_values)) = (&old_prop.enum_values, &new_prop.enum_values) {
            for v in old_values.iter().filter(|v| !new_values.contains(v)) {
                out.push(finding(
                    ENUM_VALUE_REMOVED,
                    file,
                    cap.pos,
                    Some(&cap.name),
                    &format!("{qualified}:{at}:{v}"),
                    format!("`{qualified}` argument `{}` no longer accepts {v}", &at[1..]),
                ));
            }
        }
        if !old_prop.properties.is_empty() || !new_prop.properties.is_empty() {
            compare_object(old_prop, new_prop, &at, qualified, file, cap, out);
        }
        if let (Some(oi), Some(ni)) = (&old_prop.items, &new_prop.items) {
            compare_object(oi, ni, &format!("{at}[]"), qualified, file, cap, out);
        }
    }
}
