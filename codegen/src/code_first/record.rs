//! The record file: what the `[code_first]` packages last exported, one
//! capability per line, so a broken host never blocks regeneration.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::finding::Finding;
use crate::ordered::Ordered;
use crate::render::MARKER;
use crate::rules as rule;
use crate::yaml::Pos;

/// One code-first spec as a package exports it, and as the record keeps it
/// (with the schema already converted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exported {
    #[serde(default)]
    /// The `[code_first]` package that exported it.
    pub package: String,
    /// The module it joins.
    pub module: String,
    /// The capability name.
    pub name: String,
    /// The category, as written in the derive.
    pub category: String,
    /// The description.
    pub description: String,
    /// The optional short human title (`title = "…"` in the derive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Hidden names it is also called by (`aliases = [...]` in the derive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// The optional MCP hint refinements (`hints(destructive = false, …)`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub hints: std::collections::BTreeMap<String, bool>,
    /// `#[capability(open)]`: the input accepts unknown keys.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
    /// The args struct's path (`crate_name::module::Type`).
    pub rust_type: String,
    /// Relative to the project root once exported (the derive's `file!()`).
    pub file: String,
    /// Where the derive's struct name is. Not recorded (an edit above the
    /// struct must not make the record stale); a recorded spec is located
    /// by finding `struct <Type>` in `file`.
    #[serde(default, skip_serializing)]
    pub line: u32,
    #[serde(default, skip_serializing)]
    /// 1-based column of the struct name (not recorded).
    pub column: u32,
    /// The input schema: as `schemars` wrote it once exported, converted to the subset in the record.
    pub input_schema: Value,
    /// The output schema of the `#[capability]` fn's return type (when it
    /// is `JsonSchema` and not `()`), converted like the input's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The struct's fields as serde names them, in declared order: the
    /// input's properties are written in this order (a JSON map keeps no
    /// order in a build without serde_json's `preserve_order`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// The cargo feature it lives behind (`feature = "…"` in the derive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature: Option<String>,
}

impl Exported {
    /// Where the struct declares the field serde names `name`: properties
    /// the fields do not name (a flattened field's) rank last.
    pub(crate) fn field_rank(&self, name: &str) -> usize {
        self.fields.iter().position(|f| f == name).unwrap_or(usize::MAX)
    }

    /// The input schema as the record and the spec list it: its properties
    /// in the order the struct declares its fields (those it does not name
    /// after, by name), every other object's keys sorted.
    pub(crate) fn ordered_input(&self) -> Ordered {
        let mut schema = Ordered::sorted(&self.input_schema);
        if let Ordered::Object(members) = &mut schema {
            if let Some((_, Ordered::Object(properties))) = members.iter_mut().find(|(k, _)| k == "properties") {
                // Stable: properties the list does not name keep name order.
                properties.sort_by_key(|(name, _)| self.field_rank(name));
            }
        }
        schema
    }
}

/// A record line: an [`Exported`] with its schemas in the one order every
/// artifact uses (the input's properties as the struct declares them,
/// every other key sorted), whatever serde_json's `preserve_order`.
#[derive(Serialize)]
struct Written<'a> {
    package: &'a str,
    module: &'a str,
    name: &'a str,
    category: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    aliases: &'a [String],
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    hints: &'a std::collections::BTreeMap<String, bool>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    open: bool,
    rust_type: &'a str,
    file: &'a str,
    input_schema: Ordered,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<Ordered>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    fields: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    feature: Option<&'a str>,
}

impl<'a> Written<'a> {
    fn of(spec: &'a Exported) -> Written<'a> {
        Written {
            package: &spec.package,
            module: &spec.module,
            name: &spec.name,
            category: &spec.category,
            description: &spec.description,
            title: spec.title.as_deref(),
            aliases: &spec.aliases,
            hints: &spec.hints,
            open: spec.open,
            rust_type: &spec.rust_type,
            file: &spec.file,
            input_schema: spec.ordered_input(),
            output_schema: spec.output_schema.as_ref().map(Ordered::sorted),
            fields: &spec.fields,
            feature: spec.feature.as_deref(),
        }
    }
}

/// The record file's text: one capability per line, so a review diff shows
/// each changed spec. Valid JSON whose first line carries the marker.
pub(crate) fn render_record(specs: &[Exported]) -> String {
    let header = format!("{MARKER} from the #[derive(Capability)] specs of the [code_first] packages; `cargo xtask sync` rewrites it");
    let mut out = format!("{{\"generated\": {},\n\"capabilities\": [", Value::String(header));
    for (i, spec) in specs.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        // The schemas' keys sorted in every build (serde_json's
        // `preserve_order`, which any crate of a project's build may turn
        // on, keeps the order the conversion inserted them): both of them,
        // so `cargo capspec sync` and a project's `cargo xtask sync` write
        // the same bytes.
        out.push_str(&serde_json::to_string(&Written::of(spec)).expect("records serialize"));
    }
    out.push_str("\n]}\n");
    out
}

/// Read the record: its specs, or a finding saying why it cannot be used.
/// A missing record holds nothing (a package that never exported).
pub(super) fn read_record(root: &Path, path: &str) -> (Vec<Exported>, Vec<Finding>) {
    let text = match std::fs::read_to_string(root.join(path)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), Vec::new()),
        Err(e) => return (Vec::new(), vec![Finding::error(rule::CODE_FIRST_RECORD, path, Pos::default(), format!("cannot read the code-first record: {e}"))]),
    };
    parse_record(path, &text)
}

/// Parse a record file's text (`path` names it in findings).
pub fn parse_record(path: &str, text: &str) -> (Vec<Exported>, Vec<Finding>) {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Record {
        #[allow(dead_code)]
        generated: String,
        capabilities: Vec<Exported>,
    }
    match serde_json::from_str::<Record>(text) {
        Ok(r) => (r.capabilities, Vec::new()),
        Err(e) => {
            let pos = Pos { line: e.line() as u32, column: e.column() as u32 };
            let message = format!("the code-first record is not what `cargo xtask sync` writes ({e}); run `cargo xtask sync` with the packages building to rewrite it");
            (Vec::new(), vec![Finding::error(rule::CODE_FIRST_RECORD, path, pos, message)])
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    /// The record's bytes do not depend on the order a schema's keys were
    /// inserted in: with serde_json's `preserve_order` (which `.ci/run`
    /// turns on for this crate's unit tests) a map iterates in insertion
    /// order, and the installed binary and a project's xtask, built with
    /// and without it, must write one record.
    #[test]
    fn both_schemas_are_written_in_one_key_order_whatever_the_insertion_order() {
        let reversed = |keys: &[(&str, Value)]| Value::Object(keys.iter().rev().map(|(k, v)| (k.to_string(), v.clone())).collect());
        let envelope = reversed(&[
            ("properties", reversed(&[("data", serde_json::json!({"type": "string"})), ("ok", serde_json::json!({"type": "boolean"}))])),
            ("required", serde_json::json!(["ok", "data"])),
            ("type", serde_json::json!("object")),
        ]);
        let spec = Exported {
            package: "app".into(),
            module: "db".into(),
            name: "sql_query".into(),
            category: "read".into(),
            description: "Run a query.".into(),
            title: None,
            aliases: Vec::new(),
            hints: Default::default(),
            open: false,
            rust_type: "app::Query".into(),
            file: "src/lib.rs".into(),
            line: 0,
            column: 0,
            input_schema: reversed(&[("properties", reversed(&[("sql", serde_json::json!({"type": "string"})), ("limit", serde_json::json!({"type": "integer"}))])), ("type", serde_json::json!("object"))]),
            output_schema: Some(envelope),
            // The struct declares `sql`, then `limit`: not name order.
            fields: vec!["sql".into(), "limit".into()],
            feature: None,
        };
        let text = render_record(&[spec]);
        let line = text.lines().nth(2).unwrap();
        assert_eq!(
            line,
            r#"{"package":"app","module":"db","name":"sql_query","category":"read","description":"Run a query.","rust_type":"app::Query","file":"src/lib.rs","input_schema":{"properties":{"sql":{"type":"string"},"limit":{"type":"integer"}},"type":"object"},"output_schema":{"properties":{"data":{"type":"string"},"ok":{"type":"boolean"}},"required":["ok","data"],"type":"object"},"fields":["sql","limit"]}"#
        );
    }
}
