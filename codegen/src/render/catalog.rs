//! The model-facing prompt catalog: `<catalog>/CATALOG.md` and
//! `<catalog>/<module>.md`.
//!
//! Each capability is one entry whose first line is its category, then a
//! compact TypeScript-like signature carrying every fact a model needs —
//! parameter names, types (a name alone is a string), requiredness (`?`),
//! enum values (plain words unquoted), defaults (`= v`), bounds (in
//! parentheses) and each parameter's description as a `/* comment */` after
//! it — then the one-line description; the rest of the description follows
//! on the next line. Deferred capabilities are listed by
//! name only; aliases never appear. A parameter description that several
//! of a module's capabilities share is stated once, under the module's
//! import line, and left out of the entries (which still name the
//! parameter and its type).

use std::collections::BTreeMap;

use minijinja::context;

use crate::model::{Additional, CapabilitySpec, ModuleSpec, Schema, SpecSet, first_sentence};
use super::escape::{code_span, inline_comment as comment, js_string, one_line};
use super::naming::pascal_case;
use super::shape::Shape;
use super::ts::{literal, property_key};
use super::artifact::{Targets, marker_line};
use super::templates::render_template;

/// The module's catalog section (no marker): the text a host embeds.
pub fn module_section(module: &ModuleSpec, targets: &Targets) -> String {
    let shared = shared_parameters(module);
    let entries: Vec<String> = module.capabilities.iter().filter(|c| !c.deferred).map(|c| entry_with(c, &shared)).collect();
    let shared_lines: Vec<String> = shared.iter().map(|(name, text)| format!("{}: {}", code_span(name), one_line(text))).collect();
    let deferred: Vec<String> = module.capabilities.iter().filter(|c| c.deferred).map(|c| code_span(&c.name)).collect();
    let import_line = format!("import {} from {};", module.name, js_string(targets.import_path(&module.name)));
    render_template(
        "catalog/module.md.j2",
        context! {
            module => module.name.clone(),
            description => module.description.clone(),
            import_line => import_line,
            entries => entries,
            shared => shared_lines,
            deferred => deferred,
        },
    )
}

/// `<catalog>/<module>.md`
pub fn module_file(module: &ModuleSpec, section: &str) -> String {
    render_template("catalog/file.md.j2", context! { marker => marker_line(&module.file), section => section.to_string() })
}

/// The section a module's catalog page holds: the page without its marker
/// line and the final newline the page adds (the inverse of
/// `module_file`, tested).
pub fn section_of_file(page: &str) -> &str {
    let section = page.split_once('\n').map_or("", |(_, section)| section);
    section.strip_suffix('\n').unwrap_or(section)
}

/// `<catalog>/CATALOG.md`: every module's section.
pub fn catalog_file(_set: &SpecSet, targets: &Targets, sections: &[String]) -> String {
    render_template(
        "catalog/CATALOG.md.j2",
        context! { marker => marker_line(&targets.specs), sections => sections.to_vec() },
    )
}

/// Parameter descriptions the module states once: a parameter name whose
/// one description is carried by at least two listed capabilities' inputs
/// (and is long enough to be worth it). Entries still name the parameter
/// and its type; its description is in the module's list.
fn shared_parameters(module: &ModuleSpec) -> BTreeMap<String, String> {
    let mut uses: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for cap in module.capabilities.iter().filter(|c| !c.deferred) {
        for (name, prop) in cap.input.iter().flat_map(|s| s.properties.iter()) {
            if let Some(d) = prop.description.as_deref() {
                *uses.entry(name.as_str()).or_default().entry(d).or_default() += 1;
            }
        }
    }
    uses.into_iter()
        .filter_map(|(name, descriptions)| {
            // The description of the name that saves the most text when
            // stated once: uses × length (ties: the first in order).
            let saving = |d: &str, n: usize| n.saturating_sub(1) * d.chars().count();
            let (text, count) = descriptions.into_iter().fold(("", 0), |best, (d, n)| if saving(d, n) > saving(best.0, best.1) { (d, n) } else { best });
            (count >= 2 && text.chars().count() >= MIN_SHARED_DESCRIPTION).then(|| (name.to_string(), text.to_string()))
        })
        .collect()
}

/// The shortest parameter description worth stating once per module.
const MIN_SHARED_DESCRIPTION: usize = 12;

/// One capability entry: signature line, then the rest of the description
/// — leaving out the parameter descriptions the module states once.
fn entry_with(cap: &CapabilitySpec, shared: &BTreeMap<String, String>) -> String {
    let writer = Compact { shared };
    let signature = writer.signature(cap);
    let summary = cap.summary();
    let mut line = format!("- {} {}: {}", cap.category, code_span(&signature), summary);
    if let Some(d) = &cap.deprecated {
        line.push_str(&format!(" Deprecated: {}", one_line(d)));
    }
    let mut lines = vec![line];
    let full = one_line(&cap.description);
    let rest = full[first_sentence(&cap.description).len().min(full.len())..].trim();
    if !rest.is_empty() {
        lines.push(format!("  {rest}"));
    }
    for root in [&cap.input, &cap.output].into_iter().flatten() {
        for (def, schema) in &root.defs {
            lines.push(format!("  - {}", code_span(&format!("type {} = {}", writer.def_name(def), writer.type_of(schema)))));
        }
    }
    lines.join("\n")
}

/// A capability's signature in the catalog's notation:
/// `name({arg: type, opt?: type = default}) → output`. Also in the
/// generated `Spec`, for search results.
pub fn signature(cap: &CapabilitySpec) -> String {
    Compact { shared: &BTreeMap::new() }.signature(cap)
}

/// The compact, TypeScript-like notation of the catalog; descriptions in
/// `shared` (parameter name → description) are stated by the module, not here.
struct Compact<'a> {
    shared: &'a BTreeMap<String, String>,
}

impl Compact<'_> {
    fn signature(&self, cap: &CapabilitySpec) -> String {
        let args = match &cap.input {
            Some(schema) => self.object(schema),
            None => "{}".to_string(),
        };
        let mut signature = format!("{}({args})", cap.name);
        if let Some(output) = &cap.output {
            signature.push_str(" → ");
            signature.push_str(&self.type_of(output));
        }
        signature
    }

    fn def_name(&self, def: &str) -> String {
        pascal_case(def)
    }

    /// `{a: T /* what a is */, b?: U = d}` — the argument object, also for
    /// nested objects. A property's description follows it as a comment, so
    /// the name is written once.
    fn object(&self, schema: &Schema) -> String {
        let mut fields: Vec<String> = schema
            .properties
            .iter()
            .map(|(name, prop)| {
                let optional = if schema.is_required(name) { "" } else { "?" };
                // A plain string is the default type: the name alone.
                let ty = self.type_of(prop);
                let mut field = match ty.as_str() {
                    "string" => format!("{}{optional}", property_key(name)),
                    _ => format!("{}{optional}: {ty}", property_key(name)),
                };
                if let Some(d) = prop.applied_default() {
                    field.push_str(&format!(" = {}", compact_json(d)));
                }
                if let Some(d) = prop.description.as_ref().filter(|d| self.shared.get(name) != Some(*d)) {
                    field.push_str(&comment(d));
                }
                field
            })
            .collect();
        match &schema.additional_properties {
            Some(Additional::Schema(s)) => fields.push(format!("[key]: {}", self.type_of(s))),
            Some(Additional::Allowed(true)) => fields.push("…".into()),
            _ => {}
        }
        format!("{{{}}}", fields.join(", "))
    }

    /// The type's notation; each alternative of a union is written once
    /// (an `enum` with `null` on a nullable type is not `…|null|null`).
    fn type_of(&self, schema: &Schema) -> String {
        self.type_of_parts(schema).join("|")
    }

    /// [`Self::type_of`] as its alternatives, so a union of unions writes
    /// each alternative once.
    fn type_of_parts(&self, schema: &Schema) -> Vec<String> {
        let mut parts = self.base(schema);
        let bounds = bounds(schema);
        if !bounds.is_empty() {
            parts = vec![format!("{}({bounds})", parts.join("|"))];
        }
        if schema.is_nullable() && schema.single_type().is_some() && !parts.iter().any(|p| p == "null") {
            parts.push("null".into());
        }
        parts
    }

    /// The alternatives of a type, each once, in declared order.
    fn base(&self, schema: &Schema) -> Vec<String> {
        let once = |all: Vec<String>| all.into_iter().fold(Vec::new(), |mut kept: Vec<String>, p| {
            if !kept.contains(&p) {
                kept.push(p);
            }
            kept
        });
        let one = match Shape::of(schema) {
            Shape::Ref(r) => self.def_name(r),
            Shape::Const(c) => literal(c),
            Shape::Enum(values) => return once(values.iter().map(enum_value).collect()),
            Shape::Union(variants) => {
                return once(
                    variants
                        .iter()
                        .flat_map(|v| match &v.description {
                            Some(d) => vec![format!("{}{}", self.type_of(v), comment(d))],
                            None => self.type_of_parts(v),
                        })
                        .collect(),
                );
            }
            Shape::Bytes(Some(media)) => format!("bytes({media})"),
            Shape::Bytes(None) => "bytes".into(),
            Shape::String => "string".into(),
            Shape::Integer => "int".into(),
            Shape::Number => "number".into(),
            Shape::Boolean => "boolean".into(),
            Shape::Null => "null".into(),
            Shape::Array(items) => {
                let item = items.map_or_else(|| "any".to_string(), |s| self.type_of(s));
                if item.contains('|') { format!("({item})[]") } else { format!("{item}[]") }
            }
            Shape::Object => self.object_or_map(schema),
            Shape::Any => "any".into(),
        };
        vec![one]
    }


    fn object_or_map(&self, schema: &Schema) -> String {
        if !schema.properties.is_empty() {
            return self.object(schema);
        }
        match &schema.additional_properties {
            Some(Additional::Schema(s)) => format!("{{[key]: {}}}", self.type_of(s)),
            Some(Additional::Allowed(false)) => "{}".into(),
            _ => "object".into(),
        }
    }
}

/// Bounds, format and pattern: `len 1..200`, `≥0`, `1..100`, `≤20 items`, `uri`, `/re/`.
fn bounds(schema: &Schema) -> String {
    let mut parts = Vec::new();
    if let Some(f) = &schema.format {
        parts.push(f.clone());
    }
    let range = |lo: Option<String>, hi: Option<String>| match (lo, hi) {
        (Some(lo), Some(hi)) if lo == hi => Some(lo),
        (Some(lo), Some(hi)) => Some(format!("{lo}..{hi}")),
        (Some(lo), None) => Some(format!("≥{lo}")),
        (None, Some(hi)) => Some(format!("≤{hi}")),
        (None, None) => None,
    };
    // JavaScript's largest safe integer: zod writes ± it as the bounds of
    // every `z.number().int()`; kept in the schema, left out of the notation.
    let said = |n: &&serde_json::Number| n.as_f64().is_none_or(|f| f.abs() != 9_007_199_254_740_991.0);
    if let Some(r) = range(schema.minimum.as_ref().filter(said).map(|n| n.to_string()), schema.maximum.as_ref().filter(said).map(|n| n.to_string())) {
        parts.push(r);
    }
    if let Some(r) = range(schema.min_length.map(|n| n.to_string()), schema.max_length.map(|n| n.to_string())) {
        parts.push(format!("len {r}"));
    }
    if let Some(r) = range(schema.min_items.map(|n| n.to_string()), schema.max_items.map(|n| n.to_string())) {
        parts.push(format!("{r} items"));
    }
    if let Some(p) = &schema.pattern {
        parts.push(format!("/{p}/"));
    }
    parts.join(", ")
}

/// An enum value: a plain word (a letter or `_`, then letters, digits,
/// `_` or `-`) is written bare, unless it reads as a type or a JSON
/// keyword; anything else is a JSON literal.
fn enum_value(value: &serde_json::Value) -> String {
    const TYPE_WORDS: [&str; 13] = ["any", "array", "boolean", "false", "int", "integer", "null", "number", "object", "string", "true", "undefined", "unknown"];
    match value.as_str() {
        Some(word)
            if word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                && !TYPE_WORDS.contains(&word) =>
        {
            word.to_string()
        }
        _ => literal(value),
    }
}

/// Minified JSON for defaults.
fn compact_json(value: &serde_json::Value) -> String {
    serde_json::to_string(value).expect("values serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_of_file_inverts_module_file() {
        let loaded = crate::load::load_files(vec![crate::load::SpecFile {
            path: "specs/m.yaml".into(),
            bytes: b"module: m\ndescription: M.\ncapabilities:\n  - { name: a, category: write, description: A. }\n".to_vec(),
        }]);
        let module = &loaded.set.modules[0];
        for section in ["## m\n\n- write `a()`: A.\n", "## m\n\ntext", "", "\n\n"] {
            assert_eq!(section_of_file(&module_file(module, section)), section, "{section:?}");
        }
    }
}
