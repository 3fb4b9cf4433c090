//! `<catalog>/capabilities.json`: the machine-readable catalog a host serves
//! as its capabilities resource.

use serde::Serialize;

use crate::model::{Annotations, META_CATEGORY, SpecSet};
use crate::ordered::Ordered;
use super::artifact::{MARKER, Targets, contract_fingerprint_with, input_schema_ordered, marker_line};

/// MCP tool annotations: all four hints, always explicit (DESIGN §4).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct McpAnnotations {
    read_only_hint: bool,
    destructive_hint: bool,
    idempotent_hint: bool,
    open_world_hint: bool,
}

impl From<Annotations> for McpAnnotations {
    fn from(a: Annotations) -> McpAnnotations {
        McpAnnotations { read_only_hint: a.read_only, destructive_hint: a.destructive, idempotent_hint: a.idempotent, open_world_hint: a.open_world }
    }
}

#[derive(Serialize)]
struct CapabilityEntry<'a> {
    name: &'a str,
    wire_name: &'a str,
    module: &'a str,
    category: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    description: String,
    input_schema: Ordered,
    output_schema: Option<Ordered>,
    deferred: bool,
    deprecated: Option<&'a str>,
    /// The cargo feature it lives behind (DESIGN §2); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    feature: Option<&'a str>,
    fingerprint: String,
    annotations: McpAnnotations,
    #[serde(rename = "_meta")]
    meta: std::collections::BTreeMap<&'static str, &'static str>,
}

#[derive(Serialize)]
struct ModuleEntry<'a> {
    name: &'a str,
    description: &'a str,
    import: String,
    capabilities: Vec<CapabilityEntry<'a>>,
}

pub fn capabilities(set: &SpecSet, targets: &Targets) -> String {
    // Each module's entry is built and serialized in parallel, already at
    // the indentation it has inside the document; the document around them
    // is written by hand. The bytes are those of one `to_string_pretty`.
    let modules = crate::parallel::map(set.modules.iter().collect(), |module| {
        let entry = ModuleEntry {
            name: &module.name,
            description: &module.description,
            import: targets.import_path(&module.name),
            capabilities: module
                .capabilities
                .iter()
                .map(|cap| {
                    let input_schema = input_schema_ordered(cap);
                    let output_schema = cap.output.as_ref().map(|s| s.to_ordered());
                    CapabilityEntry {
                        fingerprint: contract_fingerprint_with(module, cap, &input_schema.to_value(), output_schema.as_ref().map(Ordered::to_value).as_ref()),
                        name: &cap.name,
                        wire_name: &cap.wire_name,
                        module: &module.name,
                        category: cap.category.as_str(),
                        title: cap.title.as_deref(),
                        description: cap.summary(),
                        input_schema,
                        output_schema,
                        deferred: cap.deferred,
                        deprecated: cap.deprecated.as_deref(),
                        feature: cap.feature.as_deref(),
                        annotations: cap.hints.annotations(cap.category).into(),
                        meta: [(META_CATEGORY, cap.category.as_str())].into(),
                    }
                })
                .collect(),
        };
        let mut out = Indented { out: Vec::with_capacity(64 * 1024), indent: b"    " };
        out.out.extend_from_slice(b"    ");
        serde_json::to_writer_pretty(&mut out, &entry).expect("catalog serializes");
        out.out
    });
    // JSON has no comments: the marker is the first member, on the first line.
    let generated = marker_line(&targets.specs);
    debug_assert!(generated.contains(MARKER));
    let mut doc = format!("{{\"@generated\": {},\n  \"modules\": [", serde_json::to_string(&generated).expect("strings serialize")).into_bytes();
    for (i, module) in modules.iter().enumerate() {
        doc.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
        doc.extend_from_slice(module);
    }
    doc.extend_from_slice(if modules.is_empty() { b"]\n}\n" } else { b"\n  ]\n}\n" });
    String::from_utf8(doc).expect("serde_json writes UTF-8")
}

/// A writer that indents every line after the first by `indent` (JSON
/// strings escape their line breaks, so every `\n` it sees is layout).
struct Indented {
    out: Vec<u8>,
    indent: &'static [u8],
}

impl std::io::Write for Indented {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = rest.iter().position(|b| *b == b'\n') {
            self.out.extend_from_slice(&rest[..=at]);
            self.out.extend_from_slice(self.indent);
            rest = &rest[at + 1..];
        }
        self.out.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
