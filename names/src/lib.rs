//! capspec's name rules, shared by the generator (`capspec-codegen`) and the
//! macros (`capspec-macros`): what a module or capability may be called,
//! which words the generated JavaScript, TypeScript and Rust reserve, the
//! name `#[derive(Capability)]` gives a struct, and "did you mean" hints.
//!
//! ```
//! assert_eq!(capspec_names::name_problem("list_workflows"), None);
//! assert!(capspec_names::name_problem("delete").is_some());
//! assert_eq!(capspec_names::did_you_mean("catgory", ["category"]), "; did you mean `category`?");
//! ```

#![warn(missing_docs)]

/// JavaScript and TypeScript words no module or capability may be named: they become JavaScript
/// function names (strict mode, ES modules), TypeScript declarations and Rust
/// module names in generated code.
const RESERVED: &[(&str, &str)] = &[
    // JavaScript reserved words, including strict-mode and module restrictions.
    ("break", "JavaScript"), ("case", "JavaScript"), ("catch", "JavaScript"), ("class", "JavaScript"),
    ("const", "JavaScript"), ("continue", "JavaScript"), ("debugger", "JavaScript"), ("default", "JavaScript"),
    ("delete", "JavaScript"), ("do", "JavaScript"), ("else", "JavaScript"), ("enum", "JavaScript"),
    ("export", "JavaScript"), ("extends", "JavaScript"), ("false", "JavaScript"), ("finally", "JavaScript"),
    ("for", "JavaScript"), ("function", "JavaScript"), ("if", "JavaScript"), ("import", "JavaScript"),
    ("in", "JavaScript"), ("instanceof", "JavaScript"), ("new", "JavaScript"), ("null", "JavaScript"),
    ("return", "JavaScript"), ("super", "JavaScript"), ("switch", "JavaScript"), ("this", "JavaScript"),
    ("throw", "JavaScript"), ("true", "JavaScript"), ("try", "JavaScript"), ("typeof", "JavaScript"),
    ("var", "JavaScript"), ("void", "JavaScript"), ("while", "JavaScript"), ("with", "JavaScript"),
    ("yield", "JavaScript"), ("let", "JavaScript"), ("static", "JavaScript"), ("implements", "JavaScript"),
    ("interface", "JavaScript"), ("package", "JavaScript"), ("private", "JavaScript"),
    ("protected", "JavaScript"), ("public", "JavaScript"), ("await", "JavaScript"),
    ("eval", "JavaScript strict mode"), ("arguments", "JavaScript strict mode"),
    ("undefined", "JavaScript"), ("nan", "JavaScript"), ("infinity", "JavaScript"),
    // TypeScript keywords and built-in type names.
    ("any", "TypeScript"), ("as", "TypeScript"), ("asserts", "TypeScript"), ("bigint", "TypeScript"),
    ("boolean", "TypeScript"), ("constructor", "TypeScript"), ("declare", "TypeScript"),
    ("infer", "TypeScript"), ("is", "TypeScript"), ("keyof", "TypeScript"), ("module", "TypeScript"),
    ("namespace", "TypeScript"), ("never", "TypeScript"), ("number", "TypeScript"), ("object", "TypeScript"),
    ("readonly", "TypeScript"), ("require", "TypeScript"), ("string", "TypeScript"), ("symbol", "TypeScript"),
    ("type", "TypeScript"), ("unique", "TypeScript"), ("unknown", "TypeScript"), ("satisfies", "TypeScript"),
    ("abstract", "TypeScript"), ("override", "TypeScript"), ("accessor", "TypeScript"), ("global", "TypeScript"),
    ("async", "TypeScript"),
];

/// Rust keywords (strict, reserved and edition-dependent) that cannot be
/// identifiers; `self`, `Self`, `super` and `crate` cannot even be raw.
pub const RUST_KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in",
    "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super",
    "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box",
    "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen", "union",
];

/// Words the generated Rust needs for itself, besides [`RUST_KEYWORDS`].
const RUST_RESERVED: &[(&str, &str)] = &[
    ("raw", "Rust"),
    ("std", "Rust (shadows the standard library in generated code)"),
    ("core", "Rust (shadows the core library in generated code)"),
    ("alloc", "Rust (shadows the alloc library in generated code)"),
    ("capspec", "capspec (shadows the runtime crate in generated code)"),
    ("serde", "capspec (shadows a crate the generated code uses)"),
    ("schemars", "capspec (shadows a crate the generated code uses)"),
];

/// The language that reserves `name`, if any.
pub fn reserved_by(name: &str) -> Option<&'static str> {
    RESERVED
        .iter()
        .find(|(word, _)| *word == name)
        .map(|(_, lang)| *lang)
        .or_else(|| RUST_KEYWORDS.contains(&name).then_some("Rust"))
        .or_else(|| RUST_RESERVED.iter().find(|(word, _)| *word == name).map(|(_, lang)| *lang))
}

/// Why `name` is not a valid module or capability name, if it is not.
/// Names match `^[a-z][a-z0-9_]{0,63}$` and are not reserved words.
///
/// ```
/// use capspec_names::name_problem;
/// assert_eq!(name_problem("list_workflows"), None);
/// assert!(name_problem("listWorkflows").unwrap().contains("contains 'W'"));
/// assert!(name_problem("delete").unwrap().contains("reserved word in JavaScript"));
/// ```
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a name cannot be empty".into());
    }
    if name.len() > 64 {
        return Some(format!("`{name}` is longer than 64 characters"));
    }
    let mut chars = name.chars();
    let first = chars.next().expect("non-empty");
    if !first.is_ascii_lowercase() {
        return Some(format!(
            "`{name}` must start with a lowercase ASCII letter (names match `^[a-z][a-z0-9_]{{0,63}}$`)"
        ));
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')) {
        return Some(format!(
            "`{name}` contains {bad:?}; names use only lowercase ASCII letters, digits and `_` (`^[a-z][a-z0-9_]{{0,63}}$`)"
        ));
    }
    if let Some(lang) = reserved_by(name) {
        return Some(format!("`{name}` is a reserved word in {lang}; generated code could not use it"));
    }
    None
}

/// A valid capability name for an arbitrary tool name, as the MCP importer
/// needs it: `get-annotated-message` → `get_annotated_message`,
/// `listWorkflows` → `list_workflows`, `HTTPGet` → `http_get`, `v1.list` →
/// `v1_list`; a name that would start with a digit gets `tool_` in front, a
/// reserved word `_tool` behind, and the result is cut to 64 characters.
/// `None` when nothing of the name survives (no letter or digit at all).
pub fn capability_name(tool_name: &str) -> Option<String> {
    let chars: Vec<char> = tool_name.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().copied().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let boundary = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase()) && next.is_some_and(|n| n.is_ascii_lowercase()));
            if boundary {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    let mut name = out.split('_').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("_");
    if name.is_empty() {
        return None;
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name = format!("tool_{name}");
    }
    if reserved_by(&name).is_some() {
        name.push_str("_tool");
    }
    name.truncate(64);
    Some(name.trim_end_matches('_').to_string())
}

/// Why `alias` is not a valid alias, if it is not. Aliases are hidden names
/// clients have called (`listWorkflows`, `File`, `get-annotated-message`);
/// they never become code or catalog text, so they only match
/// `^[A-Za-z_][A-Za-z0-9_.-]{0,127}$`.
pub fn alias_problem(alias: &str) -> Option<String> {
    const SHAPE: &str = "aliases match `^[A-Za-z_][A-Za-z0-9_.-]{0,127}$`";
    let Some(first) = alias.chars().next() else {
        return Some("an alias cannot be empty".into());
    };
    if alias.len() > 128 {
        return Some(format!("`{alias}` is longer than 128 characters ({SHAPE})"));
    }
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Some(format!("`{alias}` must start with an ASCII letter or `_` ({SHAPE})"));
    }
    if let Some(bad) = alias.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))) {
        return Some(format!("`{alias}` contains {bad:?} ({SHAPE})"));
    }
    None
}

/// The capability name `#[derive(Capability)]` gives a struct without
/// `name = "…"`: the struct name in snake_case, without a trailing `Args`
/// (`AppendNoteArgs` → `append_note`, `HTTPGet` → `http_get`).
pub fn default_capability_name(type_name: &str) -> String {
    let stem = type_name.strip_suffix("Args").filter(|s| !s.is_empty()).unwrap_or(type_name);
    let chars: Vec<char> = stem.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev_lower = i > 0 && (chars[i - 1].is_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_uppercase();
            if i > 0 && !out.ends_with('_') && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Edit distance, for "did you mean" hints.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest candidate to `word`, if it is close enough to be a typo.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (levenshtein(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// ` (did you mean `x`?)`, or nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    suggest(word, candidates).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default()
}

/// Whether the qualified capability name `name` matches `pattern`, a glob
/// whose `*` stands for any run of characters, none included (`notes.*`,
/// `*.read_*`, `kg.search`): how a named surface picks its capabilities,
/// read alike by `check` and by the server.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_qualified_names() {
        for (pattern, name, matches) in [
            ("notes.*", "notes.read_note", true),
            ("notes.*", "notesx.read_note", false),
            ("*.read_*", "workspace.read_file", true),
            ("*.read_*", "workspace.list_files", false),
            ("kg.search", "kg.search", true),
            ("kg.search", "kg.searches", false),
            ("*", "a.b", true),
            ("a.*b*c", "a.xbyc", true),
            ("a.*b*c", "a.xcyb", false),
            ("*ab", "a.b", false),
            ("a*a", "a", false),
        ] {
            assert_eq!(glob_matches(pattern, name), matches, "{pattern} {name}");
        }
    }

    #[test]
    fn valid_and_invalid_names() {
        assert_eq!(name_problem("list_workflows"), None);
        assert_eq!(name_problem("a1"), None);
        assert!(name_problem("List").is_some());
        assert!(name_problem("1abc").is_some());
        assert!(name_problem("a-b").is_some());
        assert!(name_problem("../x").is_some());
        assert!(name_problem(&"a".repeat(65)).is_some());
        assert!(name_problem("eval").unwrap().contains("strict mode"));
        assert!(name_problem("fn").unwrap().contains("Rust"));
        assert!(name_problem("type").is_some());
    }

    #[test]
    fn tool_names_become_capability_names() {
        for (tool, name) in [
            ("get-annotated-message", "get_annotated_message"),
            ("listWorkflows", "list_workflows"),
            ("HTTPGet", "http_get"),
            ("v1.list", "v1_list"),
            ("File", "file"),
            ("Bash", "bash"),
            ("3d-print", "tool_3d_print"),
            ("delete", "delete_tool"),
            ("__x__", "x"),
            ("read_file", "read_file"),
        ] {
            assert_eq!(capability_name(tool).as_deref(), Some(name), "{tool}");
            assert_eq!(name_problem(name), None, "{name}");
        }
        assert_eq!(capability_name("---"), None);
        assert!(capability_name(&"a-".repeat(60)).is_some_and(|n| n.len() <= 64 && name_problem(&n).is_none()));
    }

    #[test]
    fn legacy_names_are_valid_aliases() {
        for alias in ["listWorkflows", "File", "Bash", "get-annotated-message", "v1.list", "_x", &"a".repeat(128)] {
            assert_eq!(alias_problem(alias), None, "{alias}");
        }
        for alias in ["", "1x", "-x", ".x", "a b", "a/b", "é", &"a".repeat(129)] {
            assert!(alias_problem(alias).is_some(), "{alias:?} must be refused");
        }
    }

    #[test]
    fn default_names_of_code_first_structs() {
        for (ty, name) in [("AppendNoteArgs", "append_note"), ("HTTPGet", "http_get"), ("Ping", "ping"), ("Args", "args"), ("Note2Args", "note2"), ("tag_note", "tag_note")] {
            assert_eq!(default_capability_name(ty), name, "{ty}");
        }
    }

    #[test]
    fn suggestions_find_typos_only() {
        assert_eq!(suggest("catgory", ["category", "description"]), Some("category"));
        assert_eq!(suggest("zzzz", ["category", "description"]), None);
    }
}
