//! `lint/*`: text in a spec that speaks to the model instead of describing
//! the capability — the tool-poisoning patterns published against MCP
//! servers. Every description and schema text is linted at load (YAML and
//! code-first alike, on the same located tree) and at import.
//!
//! - `lint/hidden-text` (error): characters a reviewer cannot see and the
//!   model reads — Unicode tags (which spell ASCII invisibly), bidi
//!   controls, zero-width characters, control characters.
//! - `lint/instructions` (warning): prose addressed to the model —
//!   `<IMPORTANT>` blocks, "ignore previous instructions", "do not tell the
//!   user", secret files to read "before using this tool".
//! - `lint/shadowing` (warning): a description naming another module's
//!   capability, one tool's text steering another's use.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex_lite::Regex;

use crate::finding::Finding;
use crate::model::{Schema, SpecSet};
use crate::rules as rule;
use crate::yaml::{Node, Value};

/// Keys whose string value is prose a model reads (instructions are
/// looked for there; hidden text is looked for in every string and key).
const PROSE_KEYS: [&str; 5] = ["description", "title", "user_message", "deprecated", "summary"];

/// Lint a spec-shaped tree: a module file's root (findings under
/// `capabilities` name their capability, for `[[allow]]`). Findings are
/// located at the text's node.
pub(crate) fn tree(file: &str, node: &Node, capability: Option<&str>, findings: &mut Vec<Finding>) {
    walk(file, node, None, capability, findings);
}

/// Lint one capability's spec-shaped node (a code-first spec).
pub(crate) fn capability_tree(file: &str, node: &Node, findings: &mut Vec<Finding>) {
    walk(file, node, None, name_of(node), findings);
}

fn walk(file: &str, node: &Node, key: Option<&str>, capability: Option<&str>, findings: &mut Vec<Finding>) {
    match &node.value {
        Value::String(text) => {
            let what = key.unwrap_or("a value");
            if let Some(message) = hidden_text(text) {
                findings.push(tag(Finding::error(rule::LINT_HIDDEN_TEXT, file, node.pos, format!("`{what}` {message}")), capability));
            }
            if key.is_some_and(|k| PROSE_KEYS.contains(&k)) {
                if let Some(message) = instructions(text) {
                    findings.push(tag(Finding::warning(rule::LINT_INSTRUCTIONS, file, node.pos, format!("`{what}` {message}")), capability));
                }
            }
        }
        Value::Seq(items) => {
            for item in items {
                // The items of `capabilities` are capabilities: name them.
                let name = (key == Some("capabilities")).then(|| name_of(item)).flatten();
                walk(file, item, key.filter(|k| *k != "capabilities"), name.or(capability), findings);
            }
        }
        Value::Map(entries) => {
            for (k, value) in entries {
                if let Some(message) = hidden_text(&k.name) {
                    findings.push(tag(Finding::error(rule::LINT_HIDDEN_TEXT, file, k.pos, format!("the key `{}` {message}", visible(&k.name))), capability));
                }
                walk(file, value, Some(&k.name), capability, findings);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn name_of(node: &Node) -> Option<&str> {
    let Value::Map(entries) = &node.value else { return None };
    entries.iter().find(|(k, _)| k.name == "name").and_then(|(_, v)| match &v.value {
        Value::String(name) => Some(name.as_str()),
        _ => None,
    })
}

fn tag(finding: Finding, capability: Option<&str>) -> Finding {
    match capability {
        Some(name) => finding.for_capability(name),
        None => finding,
    }
}

/// What kind of invisible character `c` is, if it is one a description
/// has no use for.
fn invisible(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{E0000}'..='\u{E007F}' => "Unicode tag characters (invisible ASCII)",
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}' => "bidi controls (they reorder what is shown)",
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{180E}' | '\u{2061}'..='\u{2064}' | '\u{034F}' | '\u{00AD}' => {
            "zero-width characters"
        }
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' => "blank filler characters",
        '\u{E0100}'..='\u{E01EF}' => "variation selectors that carry no glyph (invisible data)",
        c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => "control characters (terminal escapes hide text)",
        _ => return None,
    })
}

/// Emoji and symbols a zero-width joiner or variation selector may join.
fn pictographic(c: char) -> bool {
    matches!(c, '\u{2190}'..='\u{2BFF}' | '\u{1F000}'..='\u{1FAFF}' | '\u{FE0F}' | '\u{20E3}')
}

/// Why `text` hides text, or `None`. A zero-width joiner between two
/// pictographs (an emoji sequence) is not hiding anything.
fn hidden_text(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut kinds = BTreeSet::new();
    let mut first = None;
    let mut tags = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let Some(kind) = invisible(c) else { continue };
        if c == '\u{200D}' && i > 0 && i + 1 < chars.len() && pictographic(chars[i - 1]) && pictographic(chars[i + 1]) {
            continue;
        }
        if let '\u{E0020}'..='\u{E007E}' = c {
            tags.push(char::from_u32(c as u32 - 0xE0000).unwrap_or('?'));
        }
        first.get_or_insert((i, c));
        kinds.insert(kind);
    }
    let (at, c) = first?;
    let mut message = format!(
        "holds {} (the first, U+{:04X}, at character {}): a reviewer does not see them, the model reads them; remove them",
        kinds.into_iter().collect::<Vec<_>>().join(", "),
        c as u32,
        at + 1
    );
    if !tags.is_empty() {
        let shown: String = tags.chars().take(80).collect();
        message.push_str(&format!(". The tag characters spell: \"{}{}\"", shown.escape_default(), if tags.chars().count() > 80 { "…" } else { "" }));
    }
    Some(message)
}

/// `text` with every invisible character written as `\u{…}`, for messages.
fn visible(text: &str) -> String {
    text.chars().map(shown).collect()
}

/// How a character is shown in a message or a snippet: an invisible or
/// reordering one (tab aside) as `\u{…}`, any other as itself.
pub(crate) fn shown(c: char) -> String {
    if c != '\t' && invisible(c).is_some() { format!("\\u{{{:X}}}", c as u32) } else { c.to_string() }
}

/// The published patterns of text addressed to the model, on text folded
/// to lower case with invisible characters removed and whitespace collapsed.
static PATTERNS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (r"<\s*/?\s*(important|system|instructions?|secret|hidden|admin|critical|note to (the )?(ai|assistant|model))\s*>", "holds an `<IMPORTANT>`-style block addressed to the model"),
        (
            r"\b(ignore|disregard|forget|override|bypass)\b[^.]{0,40}\b(previous|prior|above|earlier|all|any|other|system|your|safety)\b[^.]{0,25}\b(instructions?|prompts?|rules|messages|guidelines|directions|policies)\b",
            "tells the model to set aside its instructions",
        ),
        (
            r"\b(do not|don't|dont|never|must not|should not)\s+(tell|inform|notify|alert|mention|reveal|show|disclose|explain)\b[^.]{0,40}\b(user|human|anyone|them)\b",
            "asks the model to keep something from the user",
        ),
        (r"\bwithout (telling|informing|notifying|alerting|asking|showing) (the )?(user|human)\b", "asks the model to act without the user knowing"),
        (r"\b(hide|conceal|keep)\b[^.]{0,30}\bfrom the (user|human)\b", "asks the model to keep something from the user"),
        (
            r"(~/\.ssh|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\bmcp\.json\b|/etc/(passwd|shadow)|\.netrc\b|\.git-credentials|\.pypirc|\.docker/config\.json|\.kube/config|\.env\b file)",
            "names a secret file for the model to read",
        ),
        (
            r"\b(before|prior to)\b[^.]{0,20}\b(using|calling|invoking|running|executing)\b[^.]{0,10}\b(this|the|any|other)\s+tools?\b[^.]{0,60}\b(read|send|pass|include|upload|cat|provide)\b",
            "tells the model to do something else before the tool is used",
        ),
        (r"\bwhen this tool is (available|present|loaded|enabled|installed)\b", "steers the model's use of other tools"),
        (
            r"\b(the )?(assistant|ai|model|llm|agent)\s+(must|should|has to|needs to|is required to)\s+(always|first|also|never|secretly|silently)\b",
            "gives the model orders",
        ),
    ]
    .into_iter()
    .map(|(pattern, why)| (Regex::new(pattern).expect("lint patterns compile"), why))
    .collect()
});

/// Why `text` reads as instructions to the model, or `None`.
fn instructions(text: &str) -> Option<String> {
    let folded: String = text.chars().filter(|&c| invisible(c).is_none() || c.is_whitespace()).collect::<String>().to_lowercase();
    let folded = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    let (found, why) = PATTERNS.iter().find_map(|(re, why)| re.find(&folded).map(|m| (m.as_str().to_string(), *why)))?;
    let quoted: String = found.chars().take(60).collect();
    Some(format!(
        "{why} (\"{quoted}\"): a description says what the capability does; text that instructs the model is how a poisoned tool steers it. Reword it, or explain it in an `[[allow]]`"
    ))
}

/// `lint/shadowing` over the whole set: a capability whose description
/// (or a schema description) names a capability of another module — by
/// `module.name`, by wire name, or by a bare name with an underscore that
/// its own module does not have. One finding per capability and target.
pub(crate) fn shadowing(set: &SpecSet) -> Vec<Finding> {
    static WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?").expect("compiles"));
    let mut findings = Vec::new();
    for (m, c) in set.capabilities() {
        let own: BTreeSet<&str> = m.capabilities.iter().map(|c| c.name.as_str()).collect();
        let mut texts = vec![c.description.as_str()];
        texts.extend(c.title.as_deref());
        for schema in c.input.iter().chain(&c.output) {
            schema_texts(schema, &mut texts);
        }
        let mut named = BTreeSet::new();
        for word in texts.iter().flat_map(|t| WORD.find_iter(t)).map(|w| w.as_str()) {
            for (other, target) in set.capabilities().filter(|(o, _)| o.name != m.name) {
                let qualified = format!("{}.{}", other.name, target.name);
                let hit = word == qualified
                    || (word == target.wire_name && target.wire_name != target.name)
                    || (word == target.name && target.name.contains('_') && !own.contains(word));
                if hit {
                    named.insert(qualified);
                }
            }
        }
        for target in named {
            findings.push(
                Finding::warning(
                    rule::LINT_SHADOWING,
                    c.file(m),
                    c.pos,
                    format!(
                        "`{}.{}` names `{target}`, a capability of another module: one tool's text steering another's use. Describe this capability alone (modules that belong together can be one module), or explain it in an `[[allow]]`",
                        m.name, c.name
                    ),
                )
                .for_capability(&c.name),
            );
        }
    }
    findings
}

/// Every description and title in a schema.
fn schema_texts<'s>(schema: &'s Schema, out: &mut Vec<&'s str>) {
    out.extend(schema.description.as_deref());
    for (_, s) in schema.properties.iter().chain(&schema.defs) {
        schema_texts(s, out);
    }
    for s in schema.items.iter().map(|b| &**b).chain(schema.one_of.iter().flatten()).chain(schema.any_of.iter().flatten()) {
        schema_texts(s, out);
    }
}

#[cfg(test)]
mod tests {
    use super::{hidden_text, instructions};

    #[test]
    fn emoji_sequences_are_not_hidden_text() {
        assert_eq!(hidden_text("Family 👨\u{200D}👩\u{200D}👧 and ⚠\u{FE0F} warnings"), None);
        assert!(hidden_text("ig\u{200B}nore").is_some());
        let tags: String = "hi".chars().map(|c| char::from_u32(0xE0000 + c as u32).unwrap()).collect();
        assert!(hidden_text(&format!("Add numbers.{tags}")).unwrap().contains("spell: \"hi\""));
    }

    #[test]
    fn plain_descriptions_are_not_instructions() {
        for text in [
            "Read the complete contents of a file from the file system. Only works within allowed directories.",
            "Do not use this for binary files; use read_media_file instead.",
            "Before using this tool, make sure the repository exists.",
            "Important: returns at most 100 results.",
        ] {
            assert_eq!(instructions(text), None, "{text}");
        }
    }
}
