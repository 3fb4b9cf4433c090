//! A located YAML tree built from `saphyr-parser` events.
//!
//! We build our own tree (instead of deserializing with serde) because every
//! key and value must keep its `line:column` so findings can point at it, and
//! because building it ourselves lets us enforce the loader's limits while
//! parsing: nesting depth and the alias-expansion budget are checked before any
//! node is copied, so a "billion laughs" document is refused after a few
//! thousand nodes with bounded memory.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// Deepest nesting of mappings and sequences a spec file may use.
pub const MAX_DEPTH: usize = 64;
/// How many nodes alias references may copy into a document, in total.
pub const ALIAS_NODE_BUDGET: usize = 10_000;

/// A 1-based source position (column counted in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    /// 1-based line; 0 when not applicable.
    pub line: u32,
    /// 1-based column, in characters; 0 when not applicable.
    pub column: u32,
}

impl Pos {
    fn from_span(span: &Span) -> Pos {
        Pos {
            line: span.start.line() as u32,
            column: span.start.col() as u32 + 1,
        }
    }
}

/// A YAML node with the position where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub pos: Pos,
}

/// A mapping key: always a string in spec files, with its own position.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub name: String,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// A plain scalar that resolves to a number under the YAML 1.2 core schema.
    /// The original text is kept so integers stay exact.
    Number(serde_json::Number),
    String(String),
    Seq(Vec<Node>),
    Map(Vec<(Key, Node)>),
}

impl Value {
    /// The word used for this kind of value in messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

impl Node {
    /// Number of nodes in this subtree (used for the alias budget).
    fn size(&self) -> usize {
        match &self.value {
            Value::Seq(items) => 1 + items.iter().map(Node::size).sum::<usize>(),
            Value::Map(entries) => 1 + entries.iter().map(|(_, v)| 1 + v.size()).sum::<usize>(),
            _ => 1,
        }
    }

    /// Convert to JSON, every object's keys sorted (whether or not
    /// serde_json's `preserve_order` is on in this build).
    pub fn to_json(&self) -> serde_json::Value {
        match &self.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.clone()),
            Value::Seq(items) => serde_json::Value::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => {
                let mut map: serde_json::Map<String, serde_json::Value> = entries.iter().map(|(k, v)| (k.name.clone(), v.to_json())).collect();
                map.sort_keys();
                serde_json::Value::Object(map)
            }
        }
    }
}

/// Why a document could not be turned into a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub pos: Pos,
    pub message: String,
}

enum Frame {
    Seq {
        pos: Pos,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        anchor: usize,
        entries: Vec<(Key, Node)>,
        /// Keys seen so far and where, so duplicate detection stays linear.
        seen: HashMap<String, Pos>,
        pending_key: Option<Key>,
    },
}

/// Parse one YAML document into a located tree.
///
/// An empty document yields a `Null` node. More than one document, a
/// non-string key, a duplicate key, nesting deeper than [`MAX_DEPTH`] and
/// alias expansion beyond [`ALIAS_NODE_BUDGET`] are errors.
pub fn parse(text: &str) -> Result<Node, ParseError> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut alias_nodes = 0usize;
    let mut root: Option<Node> = None;
    let mut documents = 0usize;

    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| ParseError {
            pos: Pos {
                line: e.marker().line() as u32,
                column: e.marker().col() as u32 + 1,
            },
            // The scanner has its own (deeper) guard against runaway flow
            // nesting; report it in the loader's words.
            message: if e.info().contains("recursion limit") {
                format!("nesting deeper than {MAX_DEPTH} levels; spec files are refused beyond that")
            } else {
                format!("YAML syntax error: {}", e.info())
            },
        })?;
        let pos = Pos::from_span(&span);
        let completed: Option<(Node, usize)> = match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => None,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(ParseError {
                        pos,
                        message: "a spec file holds exactly one YAML document; found a second one (`---`)"
                            .into(),
                    });
                }
                None
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(ParseError {
                        pos,
                        message: format!("nesting deeper than {MAX_DEPTH} levels; spec files are refused beyond that"),
                    });
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq { pos, anchor, items: Vec::new() }
                } else {
                    Frame::Map { pos, anchor, entries: Vec::new(), seen: HashMap::new(), pending_key: None }
                });
                None
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq { pos, anchor, items }) => Some((Node { value: Value::Seq(items), pos }, anchor)),
                _ => unreachable!("the parser balances sequence events"),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map { pos, anchor, entries, .. }) => Some((Node { value: Value::Map(entries), pos }, anchor)),
                _ => unreachable!("the parser balances mapping events"),
            },
            Event::Scalar(text, style, anchor, tag) => {
                let value = resolve_scalar(&text, style, tag.as_deref().map(|t| t.suffix.as_str()));
                Some((Node { value, pos }, anchor))
            }
            Event::Alias(id) => {
                let Some(target) = anchors.get(&id) else {
                    return Err(ParseError { pos, message: "alias refers to an unknown anchor".into() });
                };
                alias_nodes += target.size();
                if alias_nodes > ALIAS_NODE_BUDGET {
                    return Err(ParseError {
                        pos,
                        message: format!(
                            "YAML aliases expand to more than {ALIAS_NODE_BUDGET} nodes; refusing the file (alias bomb?)"
                        ),
                    });
                }
                let mut node = target.clone();
                node.pos = pos;
                Some((node, 0))
            }
        };
        let Some((node, anchor)) = completed else { continue };
        if anchor != 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, seen, pending_key, .. }) => match pending_key.take() {
                None => {
                    // YAML allows scalar keys of any type; spec keys are text,
                    // so `1:` or `true:` become the keys "1" and "true".
                    let name = match &node.value {
                        Value::String(s) => s.clone(),
                        Value::Null => "null".to_string(),
                        Value::Bool(b) => b.to_string(),
                        Value::Number(n) => n.to_string(),
                        Value::Seq(_) | Value::Map(_) => {
                            return Err(ParseError {
                                pos: node.pos,
                                message: "mapping keys must be plain strings, not lists or mappings".into(),
                            });
                        }
                    };
                    if let Some(first) = seen.get(&name) {
                        return Err(ParseError {
                            pos: node.pos,
                            message: format!(
                                "duplicate key `{name}` (first defined at line {}, column {})",
                                first.line, first.column
                            ),
                        });
                    }
                    seen.insert(name.clone(), node.pos);
                    *pending_key = Some(Key { name, pos: node.pos });
                }
                Some(key) => entries.push((key, node)),
            },
        }
    }
    Ok(root.unwrap_or(Node { value: Value::Null, pos: Pos { line: 1, column: 1 } }))
}

/// Resolve a scalar under the YAML 1.2 core schema. Quoted and block scalars
/// are always strings; plain scalars may be null, booleans or numbers.
fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&str>) -> Value {
    match tag {
        Some("str") => return Value::String(text.to_string()),
        Some("null") => return Value::Null,
        _ => {}
    }
    if style != ScalarStyle::Plain {
        return Value::String(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(n) = parse_number(text) {
        return Value::Number(n);
    }
    Value::String(text.to_string())
}

fn parse_number(text: &str) -> Option<serde_json::Number> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        let clean = text.strip_prefix('+').unwrap_or(text);
        if let Ok(i) = clean.parse::<i64>() {
            return Some(i.into());
        }
        if let Ok(u) = clean.parse::<u64>() {
            return Some(u.into());
        }
    }
    let is_float_syntax = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && digits.bytes().any(|b| b.is_ascii_digit());
    if is_float_syntax {
        if let Ok(f) = text.parse::<f64>() {
            return serde_json::Number::from_f64(f);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let node = parse("a: 1\nb:\n  - x\n  - \"y\"\n").unwrap();
        let Value::Map(entries) = node.value else { panic!("expected a mapping") };
        assert_eq!(entries[0].0.pos, Pos { line: 1, column: 1 });
        assert_eq!(entries[1].0.pos, Pos { line: 2, column: 1 });
        let Value::Seq(items) = &entries[1].1.value else { panic!("expected a list") };
        assert_eq!(items[1].pos, Pos { line: 4, column: 5 });
        assert_eq!(items[1].value, Value::String("y".into()));
    }

    #[test]
    fn core_schema_scalars() {
        let node = parse("[1, -2, 1.5, true, null, ~, '1', x, 1e3]").unwrap();
        let json = node.to_json();
        assert_eq!(json, serde_json::json!([1, -2, 1.5, true, null, null, "1", "x", 1000.0]));
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let err = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(err.pos, Pos { line: 2, column: 1 });
        assert!(err.message.contains("duplicate key `a`"), "{}", err.message);
    }

    #[test]
    fn alias_within_budget_is_expanded() {
        let node = parse("base: &b {x: 1}\ncopy: *b\n").unwrap();
        assert_eq!(node.to_json(), serde_json::json!({"base": {"x": 1}, "copy": {"x": 1}}));
    }
}
