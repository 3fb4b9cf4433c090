//! JSON in the one order generated files use (DESIGN §4): a schema's
//! `properties` as the spec declares them, every other object's keys
//! sorted, whatever serde_json's `preserve_order` is in this build (any
//! crate of a host's build may turn it on, and `cargo capspec` and a
//! project's `cargo xtask` must write the same bytes).
//!
//! `serde_json::Value` cannot hold that order in a build without
//! `preserve_order` (its objects are then sorted maps), so artifacts are
//! written from this tree; what is hashed or validated is
//! [`Ordered::to_value`], sorted in every build as before.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use crate::yaml::{self, Node};

/// A JSON value whose objects list their members in the order they hold.
#[derive(Debug, Clone, PartialEq)]
pub enum Ordered {
    /// `null`, a boolean, a number or a string.
    Scalar(Value),
    /// An array.
    Array(Vec<Ordered>),
    /// An object's members, in the order written.
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    /// A value whose objects all keep their keys sorted (an annotation's
    /// value, an enum member: no schema position inside).
    pub fn sorted(value: &Value) -> Ordered {
        match value {
            Value::Array(items) => Ordered::Array(items.iter().map(Ordered::sorted).collect()),
            Value::Object(map) => {
                let mut members: Vec<(String, Ordered)> = map.iter().map(|(k, v)| (k.clone(), Ordered::sorted(v))).collect();
                members.sort_by(|a, b| a.0.cmp(&b.0));
                Ordered::Object(members)
            }
            scalar => Ordered::Scalar(scalar.clone()),
        }
    }

    /// A schema as a document wrote it: the members of every `properties`
    /// at a schema position in the order written, every other object
    /// sorted (so a property named `properties` is a name, not a keyword).
    pub fn schema_from_node(node: &Node) -> Ordered {
        Ordered::from_node(node, Position::Schema)
    }

    fn from_node(node: &Node, at: Position) -> Ordered {
        match &node.value {
            yaml::Value::Seq(items) => {
                // `anyOf: [..]` and the like list schemas; data lists data.
                let child = if at == Position::Schema { Position::Schema } else { Position::Data };
                Ordered::Array(items.iter().map(|item| Ordered::from_node(item, child)).collect())
            }
            yaml::Value::Map(entries) => {
                let mut members: Vec<(String, Ordered)> =
                    entries.iter().map(|(key, value)| (key.name.clone(), Ordered::from_node(value, at.child(&key.name)))).collect();
                if at != Position::Properties {
                    members.sort_by(|a, b| a.0.cmp(&b.0));
                }
                Ordered::Object(members)
            }
            _ => Ordered::sorted(&node.to_json()),
        }
    }

    /// The value as `serde_json::Value`, every object's keys sorted in
    /// every build (for hashing, comparing and validating).
    pub fn to_value(&self) -> Value {
        match self {
            Ordered::Scalar(v) => v.clone(),
            Ordered::Array(items) => Value::Array(items.iter().map(Ordered::to_value).collect()),
            Ordered::Object(members) => {
                let mut map: serde_json::Map<String, Value> = members.iter().map(|(k, v)| (k.clone(), v.to_value())).collect();
                map.sort_keys();
                Value::Object(map)
            }
        }
    }

    /// Insert `key` in key order (an object that holds it keeps its value).
    pub fn insert_sorted(members: &mut Vec<(String, Ordered)>, key: &str, value: Ordered) {
        if members.iter().any(|(k, _)| k == key) {
            return;
        }
        let at = members.iter().position(|(k, _)| k.as_str() > key).unwrap_or(members.len());
        members.insert(at, (key.to_string(), value));
    }
}

/// Where a value sits in a schema document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    /// A schema: keywords sorted.
    Schema,
    /// The object of a `properties` keyword: names as declared.
    Properties,
    /// Another map of named schemas (`$defs`, `patternProperties`…): sorted.
    Named,
    /// Data (`default`, `enum`, `examples`…): sorted.
    Data,
}

impl Position {
    /// The position of the value under `key` in an object at `self`.
    fn child(self, key: &str) -> Position {
        match self {
            Position::Properties | Position::Named => Position::Schema,
            Position::Data => Position::Data,
            Position::Schema => match key {
                "properties" => Position::Properties,
                "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => Position::Named,
                "items" | "additionalProperties" | "not" | "if" | "then" | "else" | "contains" | "propertyNames" | "unevaluatedProperties" | "unevaluatedItems" | "prefixItems" | "anyOf" | "oneOf" | "allOf" => Position::Schema,
                _ => Position::Data,
            },
        }
    }
}

impl Serialize for Ordered {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Ordered::Scalar(v) => v.serialize(serializer),
            Ordered::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Ordered::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}
