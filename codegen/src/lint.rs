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

use std::collections::{BTreeSet, HashMap};
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
    // Most text is printable ASCII, where only control characters hide anything.
    if text.bytes().all(|b| (0x20..0x7f).contains(&b) || matches!(b, b'\n' | b'\t' | b'\r')) {
        return None;
    }
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
/// to lower case with invisible characters removed and whitespace
/// collapsed; each with the literals every match contains, so the regex
/// runs only on text that has one (it is the costly part of a check).
static PATTERNS: LazyLock<Vec<(&'static [&'static str], Regex, &'static str)>> = LazyLock::new(|| {
    let patterns: [(&'static [&'static str], &str, &'static str); 9] = [
        (&["<"], r"<\s*/?\s*(important|system|instructions?|secret|hidden|admin|critical|note to (the )?(ai|assistant|model))\s*>", "holds an `<IMPORTANT>`-style block addressed to the model"),
        (&["ignore", "disregard", "forget", "override", "bypass"], r"\b(ignore|disregard|forget|override|bypass)\b[^.]{0,40}\b(previous|prior|above|earlier|all|any|other|system|your|safety)\b[^.]{0,25}\b(instructions?|prompts?|rules|messages|guidelines|directions|policies)\b", "tells the model to set aside its instructions"),
        (&["do not", "don't", "dont", "never", "must not", "should not"], r"\b(do not|don't|dont|never|must not|should not)\s+(tell|inform|notify|alert|mention|reveal|show|disclose|explain)\b[^.]{0,40}\b(user|human|anyone|them)\b", "asks the model to keep something from the user"),
        (&["without"], r"\bwithout (telling|informing|notifying|alerting|asking|showing) (the )?(user|human)\b", "asks the model to act without the user knowing"),
        (&["from the user", "from the human"], r"\b(hide|conceal|keep)\b[^.]{0,30}\bfrom the (user|human)\b", "asks the model to keep something from the user"),
        (&["~/.ssh", "id_", "aws/credentials", "mcp.json", "/etc/", ".netrc", ".git-credentials", ".pypirc", ".docker/config.json", ".kube/config", ".env"], r"(~/\.ssh|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\bmcp\.json\b|/etc/(passwd|shadow)|\.netrc\b|\.git-credentials|\.pypirc|\.docker/config\.json|\.kube/config|\.env\b file)", "names a secret file for the model to read"),
        (&["before", "prior to"], r"\b(before|prior to)\b[^.]{0,20}\b(using|calling|invoking|running|executing)\b[^.]{0,10}\b(this|the|any|other)\s+tools?\b[^.]{0,60}\b(read|send|pass|include|upload|cat|provide)\b", "tells the model to do something else before the tool is used"),
        (&["when this tool is"], r"\bwhen this tool is (available|present|loaded|enabled|installed)\b", "steers the model's use of other tools"),
        (&["must", "should", "has to", "needs to", "required to"], r"\b(the )?(assistant|ai|model|llm|agent)\s+(must|should|has to|needs to|is required to)\s+(always|first|also|never|secretly|silently)\b", "gives the model orders"),
    ];
    patterns.into_iter().map(|(needles, pattern, why)| (needles, Regex::new(pattern).expect("lint patterns compile"), why)).collect()
});

/// Why `text` reads as instructions to the model, or `None`.
fn instructions(text: &str) -> Option<String> {
    let folded: String = text.chars().filter(|&c| invisible(c).is_none() || c.is_whitespace()).collect::<String>().to_lowercase();
    let folded = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    let (found, why) = PATTERNS
        .iter()
        .filter(|(needles, _, _)| needles.iter().any(|n| folded.contains(n)))
        .find_map(|(_, re, why)| re.find(&folded).map(|m| (m.as_str().to_string(), *why)))?;
    let quoted: String = found.chars().take(60).collect();
    Some(format!(
        "{why} (\"{quoted}\"): a description says what the capability does; text that instructs the model is how a poisoned tool steers it. Reword it, or explain it in an `[[allow]]`"
    ))
}

/// `lint/shadowing` over the whole set: a capability whose description
/// (or a schema description) names a capability of another module — by
/// `module.name`, by wire name, or by a bare name with an underscore that
/// its own module does not have. One finding per capability and target.
/// Every name is indexed once, so each word costs one lookup.
pub(crate) fn shadowing(set: &SpecSet) -> Vec<Finding> {
    // A word → the capabilities it names: (module, `module.name`, named by its bare name).
    let mut names: HashMap<String, Vec<(&str, String, bool)>> = HashMap::new();
    for (m, c) in set.capabilities() {
        let qualified = format!("{}.{}", m.name, c.name);
        if c.wire_name != c.name {
            names.entry(c.wire_name.clone()).or_default().push((&m.name, qualified.clone(), false));
        }
        if c.name.contains('_') {
            names.entry(c.name.clone()).or_default().push((&m.name, qualified.clone(), true));
        }
        names.entry(qualified.clone()).or_default().push((&m.name, qualified, false));
    }
    let mut findings = Vec::new();
    for m in &set.modules {
        let own: BTreeSet<&str> = m.capabilities.iter().map(|c| c.name.as_str()).collect();
        for c in &m.capabilities {
            let mut texts = vec![c.description.as_str()];
            texts.extend(c.title.as_deref());
            for schema in c.input.iter().chain(&c.output) {
                schema_texts(schema, &mut texts);
            }
            let mut named = BTreeSet::new();
            for word in texts.iter().flat_map(|t| words(t)) {
                for (module, qualified, bare) in names.get(word).into_iter().flatten() {
                    if *module != m.name && !(*bare && own.contains(word)) {
                        named.insert(qualified.as_str());
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
    }
    findings
}

/// The words of `text` that may name a capability: each run of letters,
/// digits, `_` and `.` (`mail.send_email`, `a__b__c`) without its outer
/// dots, and its dot-separated parts.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map(|run| run.trim_matches('.'))
        .filter(|run| !run.is_empty())
        .flat_map(|run| std::iter::once(run).chain(run.contains('.').then(|| run.split('.')).into_iter().flatten()))
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
