//! TypeScript types from schemas, for `.d.ts` declarations.

use crate::model::{Additional, Schema};
use super::escape::{block_comment, js_string};
use super::naming::{pascal_case, unique};
use super::shape::Shape;

/// Whether `name` can be written unquoted as a TypeScript property key.
pub fn is_js_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// A property key: bare when it is an identifier, a string literal otherwise.
pub fn property_key(name: &str) -> String {
    if is_js_identifier(name) { name.to_string() } else { js_string(name.to_string()) }
}

/// A JSON value as a TypeScript literal type.
pub fn literal(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => js_string(s.clone()),
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::Bool(b) => b.to_string(),
        serde_json::Value::Null => "null".into(),
        // Not reachable for enum/const values the loader accepts, but never
        // emit raw text: `unknown` is always a valid type.
        _ => "unknown".into(),
    }
}

/// Renders schemas as TypeScript types. `$ref`s name type aliases declared
/// next to the capability; each root schema (input, output) has its own
/// `$defs`, so each gets its own alias names, unique within the module.
pub struct TsTypes {
    defs: std::collections::BTreeMap<String, String>,
    /// Types of an output: binary content reaches guests as `{mimeType, data}`.
    output: bool,
}

impl TsTypes {
    /// Allocate alias names `<prefix><Def>` for the `$defs` of `root`,
    /// avoiding every name in `used` (and recording the new ones there).
    /// `output`: the root is an output schema (binary content is presented
    /// to guests as `{mimeType, data}`; an argument is base64 text).
    pub fn for_root(root: Option<&Schema>, prefix: &str, output: bool, used: &mut std::collections::BTreeSet<String>) -> TsTypes {
        let mut defs = std::collections::BTreeMap::new();
        for (def, _) in root.map(|r| r.defs.as_slice()).unwrap_or_default() {
            let name = unique(format!("{prefix}{}", pascal_case(def)), used);
            defs.insert(def.clone(), name);
        }
        TsTypes { defs, output }
    }

    pub fn def_name(&self, def: &str) -> String {
        self.defs.get(def).cloned().unwrap_or_else(|| "unknown".into())
    }

    /// The type of a schema, on one line.
    pub fn type_of(&self, schema: &Schema) -> String {
        let base = self.base(schema);
        if schema.is_nullable() && schema.single_type().is_some() && !base.ends_with("| null") {
            format!("{base} | null")
        } else {
            base
        }
    }

    fn base(&self, schema: &Schema) -> String {
        match Shape::of(schema) {
            Shape::Ref(r) => self.def_name(r),
            Shape::Const(c) => literal(c),
            Shape::Enum(values) => values.iter().map(literal).collect::<Vec<_>>().join(" | "),
            Shape::Union(variants) => {
                let parts: Vec<String> = variants.iter().map(|v| self.type_of(v)).collect();
                format!("({})", parts.join(" | "))
            }
            Shape::Bytes(_) if self.output => "{ mimeType: string; data: string }".into(),
            Shape::Bytes(_) | Shape::String => "string".into(),
            Shape::Number | Shape::Integer => "number".into(),
            Shape::Boolean => "boolean".into(),
            Shape::Null => "null".into(),
            Shape::Array(items) => {
                let item = items.map_or_else(|| "unknown".to_string(), |s| self.type_of(s));
                if item.contains(' ') { format!("Array<{item}>") } else { format!("{item}[]") }
            }
            Shape::Object => self.object(schema),
            Shape::Any => "unknown".into(),
        }
    }

    fn object(&self, schema: &Schema) -> String {
        let extra = match &schema.additional_properties {
            Some(Additional::Schema(s)) => Some(self.type_of(s)),
            Some(Additional::Allowed(true)) => Some("unknown".to_string()),
            Some(Additional::Allowed(false)) => None,
            None if schema.properties.is_empty() => Some("unknown".to_string()),
            None => None,
        };
        if schema.properties.is_empty() {
            return match extra {
                Some(t) => format!("Record<string, {t}>"),
                None => "Record<string, never>".into(),
            };
        }
        let mut fields: Vec<String> = schema
            .properties
            .iter()
            .map(|(name, prop)| {
                let optional = if schema.is_required(name) { "" } else { "?" };
                format!("{}{optional}: {}", property_key(name), self.type_of(prop))
            })
            .collect();
        if extra.is_some() {
            // An index signature must admit every declared property's type.
            fields.push("[key: string]: unknown".into());
        }
        format!("{{ {} }}", fields.join("; "))
    }

    /// An interface body with JSDoc per property, for top-level `Args`/`Output`.
    pub fn interface_body(&self, schema: &Schema) -> Vec<String> {
        let mut lines = Vec::new();
        for (name, prop) in &schema.properties {
            let mut doc = Vec::new();
            if let Some(d) = &prop.description {
                doc.push(block_comment(d.clone()));
            }
            if prop.base64 && !self.output {
                let media = prop.content_media_type.as_deref().map(|m| format!(" ({})", block_comment(m.to_string()))).unwrap_or_default();
                doc.push(format!("Base64 text of the bytes{media}."));
            }
            if let Some(d) = prop.applied_default() {
                doc.push(format!("@default {}", block_comment(d.to_string())));
            }
            if !doc.is_empty() {
                lines.push(format!("/** {} */", doc.join("\n * ")));
            }
            let optional = if schema.is_required(name) { "" } else { "?" };
            lines.push(format!("{}{optional}: {};", property_key(name), self.type_of(prop)));
        }
        match &schema.additional_properties {
            Some(Additional::Schema(_)) | Some(Additional::Allowed(true)) => lines.push("[key: string]: unknown;".into()),
            _ => {}
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_js_identifier("maxResults"));
        assert!(!is_js_identifier("content-type"));
        assert!(!is_js_identifier("3d"));
        assert_eq!(property_key("content-type"), "\"content-type\"");
    }
}
