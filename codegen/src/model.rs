//! The spec model: what a validated spec set is. Every renderer takes a
//! [`SpecSet`] and nothing else.


use serde_json::Value as Json;

use crate::ordered::Ordered;
use crate::yaml::Pos;

/// The safety category of a capability, shared with the runtime.
pub use capspec_policy::Category;

/// All validated modules, sorted by name; capabilities sorted by name inside
/// each module. Built only by the loader.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecSet {
    /// The modules, sorted by name.
    pub modules: Vec<ModuleSpec>,
}

impl SpecSet {
    /// Every capability with its module, in module then name order.
    pub fn capabilities(&self) -> impl Iterator<Item = (&ModuleSpec, &CapabilitySpec)> {
        self.modules.iter().flat_map(|m| m.capabilities.iter().map(move |c| (m, c)))
    }

    /// The module named `name`.
    pub fn module(&self, name: &str) -> Option<&ModuleSpec> {
        self.modules.iter().find(|m| m.name == name)
    }
}

#[derive(Debug, Clone, PartialEq)]
/// One module: one spec file (plus any code-first specs joining it).
pub struct ModuleSpec {
    /// The module name (the spec file's stem).
    pub name: String,
    /// One line describing the module.
    pub description: String,
    /// The spec file, relative to the project root, `/`-separated.
    pub file: String,
    /// Its capabilities, sorted by name.
    pub capabilities: Vec<CapabilitySpec>,
    /// `upstream: <server>`: an MCP server implements every capability
    /// (DESIGN §12); where the key is written.
    pub upstream: Option<(String, Pos)>,
}

#[derive(Debug, Clone, PartialEq)]
/// One capability: a tool a model can call.
pub struct CapabilitySpec {
    /// The name, unique within its module (aliases included). The same name
    /// in two modules is legal: identity is `module.name`.
    pub name: String,
    /// The one name it has on flat surfaces (MCP tools, provider tool
    /// lists): the bare name when no other module uses it, else
    /// `<module>__<name>`. Set by the loader once every module is known.
    pub wire_name: String,
    /// A short human title (the MCP `title`).
    pub title: Option<String>,
    /// Refinements of the category's MCP hints, within what it allows.
    pub hints: Hints,
    /// Also a direct tool on the MCP code surface.
    pub direct: bool,
    /// The safety category; there is no default.
    pub category: Category,
    /// What it does; the first sentence is the catalog one-liner.
    pub description: String,
    /// The input schema; always an object schema. `None` when the spec gives none
    /// (the capability then takes an empty object).
    pub input: Option<Schema>,
    /// The output schema, when the spec gives one.
    pub output: Option<Schema>,
    /// A message for people, with `{placeholders}` naming input properties.
    pub user_message: Option<String>,
    /// Listed by name only in the prompt catalog.
    pub deferred: bool,
    /// Hidden compatibility names: resolve at invoke, never shown in catalogs.
    pub aliases: Vec<String>,
    /// Why it is deprecated and what to use instead; still callable.
    pub deprecated: Option<String>,
    /// Where `name:` is written (for a code-first spec: where the derive is,
    /// in [`CodeOrigin::file`]).
    pub pos: Pos,
    /// Set when the spec is declared in Rust with `#[derive(Capability)]`.
    pub code_first: Option<CodeOrigin>,
    /// In an upstream module: the tool's name on the server, when it is not
    /// the capability's name.
    pub tool: Option<String>,
    /// In an upstream module: the pin of the tool as it was listed.
    pub pin: Option<String>,
    /// `feature: vector`: the cargo feature of the host crate the capability
    /// lives behind (DESIGN §2). Its bindings are compiled, mounted and
    /// served only with the feature on, and `check` holds it implemented
    /// only in the `[check] features` sets that turn the feature on.
    pub feature: Option<String>,
}

/// The spec's `hints`: each refines one MCP hint the category leaves open
/// (see [`Hints::allowed`]); `None` keeps the category's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    /// `destructive`: may destroy or overwrite data (MCP `destructiveHint`).
    pub destructive: Option<bool>,
    /// `idempotent`: a repeated call with the same arguments has no further
    /// effect (MCP `idempotentHint`).
    pub idempotent: Option<bool>,
    /// `open_world`: reaches entities outside the host (MCP `openWorldHint`).
    pub open_world: Option<bool>,
}

/// The four MCP tool annotations of a capability, all explicit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    /// `readOnlyHint`
    pub read_only: bool,
    /// `destructiveHint`
    pub destructive: bool,
    /// `idempotentHint`
    pub idempotent: bool,
    /// `openWorldHint`
    pub open_world: bool,
}

impl Hints {
    /// The spec keys of `hints`, in order.
    pub const KEYS: [&'static str; 3] = ["destructive", "idempotent", "open_world"];

    /// Which values of each hint a category allows a spec to set (DESIGN §4):
    /// `(key, value)` pairs. A value equal to the category's default is
    /// always allowed (it changes nothing).
    pub fn allowed(category: Category) -> &'static [(&'static str, bool)] {
        match category {
            Category::Read => &[("open_world", true)],
            Category::Write => &[("destructive", false), ("idempotent", true), ("open_world", true)],
            Category::Execute => &[("idempotent", true), ("open_world", false)],
            Category::External => &[("destructive", false), ("idempotent", true)],
        }
    }

    /// The category's MCP annotations, refined by these hints.
    pub fn annotations(&self, category: Category) -> Annotations {
        let mut a = Annotations::of(category);
        if let Some(v) = self.destructive {
            a.destructive = v;
        }
        if let Some(v) = self.idempotent {
            a.idempotent = v;
        }
        if let Some(v) = self.open_world {
            a.open_world = v;
        }
        a
    }

    /// The hints that make `category`'s defaults into `annotations`: only
    /// those that differ (the importer keeps these).
    pub fn between(category: Category, annotations: Annotations) -> Hints {
        let d = Annotations::of(category);
        let differ = |a: bool, b: bool| (a != b).then_some(a);
        Hints {
            destructive: differ(annotations.destructive, d.destructive),
            idempotent: differ(annotations.idempotent, d.idempotent),
            open_world: differ(annotations.open_world, d.open_world),
        }
    }

    /// The slot of the hint written as `key` in a spec, if it is one.
    pub fn slot(&mut self, key: &str) -> Option<&mut Option<bool>> {
        match key {
            "destructive" => Some(&mut self.destructive),
            "idempotent" => Some(&mut self.idempotent),
            "open_world" => Some(&mut self.open_world),
            _ => None,
        }
    }

    /// `(key, value)` of every hint that is set, in key order.
    pub fn set(&self) -> Vec<(&'static str, bool)> {
        [self.destructive, self.idempotent, self.open_world].into_iter().zip(Hints::KEYS).filter_map(|(v, k)| v.map(|v| (k, v))).collect()
    }
}

impl Annotations {
    /// A category's default annotations (the table in DESIGN §4).
    pub fn of(category: Category) -> Annotations {
        match category {
            Category::Read => Annotations { read_only: true, destructive: false, idempotent: true, open_world: false },
            Category::Write => Annotations { read_only: false, destructive: true, idempotent: false, open_world: false },
            Category::Execute => Annotations { read_only: false, destructive: true, idempotent: false, open_world: true },
            Category::External => Annotations { read_only: false, destructive: true, idempotent: false, open_world: true },
        }
    }
}

/// The key of a capability's category in MCP `_meta`; the importer reads it
/// back first.
pub const META_CATEGORY: &str = "io.capspec/category";

/// The longest wire name a flat surface accepts (provider tool names).
pub const MAX_WIRE_NAME: usize = 64;

/// Wire names for every capability of `modules`: the bare name when no
/// other module uses it, else `<module>__<name>`.
pub(crate) fn assign_wire_names(modules: &mut [ModuleSpec]) {
    // name → the modules that have it (a name twice in one module is a
    // duplicate reported on its own, not a reason to qualify).
    let mut uses: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = std::collections::BTreeMap::new();
    for m in modules.iter() {
        for c in &m.capabilities {
            uses.entry(c.name.clone()).or_default().insert(m.name.clone());
        }
    }
    for m in modules.iter_mut() {
        for c in &mut m.capabilities {
            c.wire_name = if uses[&c.name].len() > 1 { format!("{}__{}", m.name, c.name) } else { c.name.clone() };
        }
    }
}

/// Where a code-first spec comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeOrigin {
    /// The Cargo package that exported it.
    pub package: String,
    /// The Rust file holding the derive, relative to the project root.
    pub file: String,
    /// The args struct's path (`crate_name::module::Type`).
    pub rust_type: String,
}

impl CapabilitySpec {
    /// The file this spec is written in: the module's spec file, or the Rust
    /// file of a code-first spec.
    pub fn file<'a>(&'a self, module: &'a ModuleSpec) -> &'a str {
        self.code_first.as_ref().map_or(&module.file, |o| &o.file)
    }

    /// The catalog one-liner: the description's first sentence, on one line.
    pub fn summary(&self) -> String {
        first_sentence(&self.description)
    }
}

/// The first sentence of `text` (up to and including the first `.`, `!` or
/// `?` followed by whitespace or the end), with line breaks folded to spaces.
pub fn first_sentence(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let bytes = flat.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && (i + 1 == bytes.len() || bytes[i + 1] == b' ') {
            return flat[..=i].to_string();
        }
    }
    flat
}

/// JSON types of the supported subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JsonType {
    /// `string`
    String,
    /// `number`
    Number,
    /// `integer`
    Integer,
    /// `boolean`
    Boolean,
    /// `object`
    Object,
    /// `array`
    Array,
    /// `null`
    Null,
}

impl JsonType {
    /// Every type.
    pub const ALL: [JsonType; 7] = [
        JsonType::String,
        JsonType::Number,
        JsonType::Integer,
        JsonType::Boolean,
        JsonType::Object,
        JsonType::Array,
        JsonType::Null,
    ];

    /// The type's name in JSON Schema.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Number => "number",
            JsonType::Integer => "integer",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::Null => "null",
        }
    }

    /// The type named `text`, if it is one.
    pub fn parse(text: &str) -> Option<JsonType> {
        JsonType::ALL.into_iter().find(|t| t.as_str() == text)
    }

    /// Whether a JSON value is an instance of this type.
    pub fn accepts(self, value: &Json) -> bool {
        match self {
            JsonType::String => value.is_string(),
            JsonType::Number => value.is_number(),
            JsonType::Integer => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
            JsonType::Boolean => value.is_boolean(),
            JsonType::Object => value.is_object(),
            JsonType::Array => value.is_array(),
            JsonType::Null => value.is_null(),
        }
    }
}

/// `additionalProperties`: a boolean or a schema for the extra values (a map).
#[derive(Debug, Clone, PartialEq)]
pub enum Additional {
    /// `true`: any extra key; `false`: none.
    Allowed(bool),
    /// Extra keys' values match this schema.
    Schema(Box<Schema>),
}

/// One schema of the supported JSON Schema subset. Every keyword
/// the subset supports has a typed slot; anything else is refused at load.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schema {
    /// `type`: empty = any type; `[T, "null"]` gives two entries.
    pub types: Vec<JsonType>,
    /// `description`
    pub description: Option<String>,
    /// `default`: the value an omitted property takes.
    pub default: Option<Json>,
    /// `enum`
    pub enum_values: Option<Vec<Json>>,
    /// `const`
    pub const_value: Option<Json>,
    /// Properties in document order.
    pub properties: Vec<(String, Schema)>,
    /// `required`: property names.
    pub required: Vec<String>,
    /// `additionalProperties`
    pub additional_properties: Option<Additional>,
    /// `items`
    pub items: Option<Box<Schema>>,
    /// `minimum`
    pub minimum: Option<serde_json::Number>,
    /// `maximum`
    pub maximum: Option<serde_json::Number>,
    /// `minLength`
    pub min_length: Option<u64>,
    /// `maxLength`
    pub max_length: Option<u64>,
    /// `pattern`
    pub pattern: Option<String>,
    /// `format`
    pub format: Option<String>,
    /// `minItems`
    pub min_items: Option<u64>,
    /// `maxItems`
    pub max_items: Option<u64>,
    /// `oneOf`
    pub one_of: Option<Vec<Schema>>,
    /// `anyOf`
    pub any_of: Option<Vec<Schema>>,
    /// `$defs` in document order (only at the root of `input`/`output`).
    pub defs: Vec<(String, Schema)>,
    /// `$ref`: the name of a `$defs` entry (`#/$defs/<name>`).
    pub reference: Option<String>,
    /// `contentMediaType`: the media type (or range, `image/*`) of binary content.
    pub content_media_type: Option<String>,
    /// `contentEncoding: base64`: the string carries bytes (DESIGN §10).
    pub base64: bool,
    /// Annotation keywords (`title`, `$schema`, `$comment`, `examples`,
    /// `deprecated`, `readOnly`, `writeOnly`) in document order: nothing is
    /// checked against them, and they are served as written.
    pub annotations: Vec<(String, Json)>,
    /// The schema as written, when the fields above read it another way:
    /// `anyOf [T, {type: null}]` is read as T's keywords with `type: [T,
    /// "null"]` (so a binding is `Option<T>`), and served as written.
    pub declared: Option<Ordered>,
}

impl Schema {
    /// The non-null type, when the schema has exactly one.
    pub fn single_type(&self) -> Option<JsonType> {
        let mut non_null = self.types.iter().copied().filter(|t| *t != JsonType::Null);
        let first = non_null.next()?;
        non_null.next().is_none().then_some(first)
    }

    /// `type: [T, "null"]` or `type: null`.
    pub fn is_nullable(&self) -> bool {
        self.types.contains(&JsonType::Null)
    }

    /// The value an omitted property takes (DESIGN §7): `default` when it is
    /// not `null` and fits this schema. `default` is an annotation in JSON
    /// Schema: one that does not fit (schemars writes `default: null` on a
    /// `schema_with` helper's non-null type) is served as declared and
    /// never applied, here as in `invoke`; a `null` default means absent.
    pub fn applied_default(&self) -> Option<&Json> {
        self.default.as_ref().filter(|d| !d.is_null() && self.default_problem().is_none())
    }

    /// Why `default` does not fit this schema's own keywords (type, `enum`,
    /// `const`, bounds and lengths), or `None` when it fits. A union or a
    /// `$ref` is not followed here (the runtime's validator follows it).
    pub fn default_problem(&self) -> Option<String> {
        let d = self.default.as_ref()?;
        if !self.types.is_empty() && !self.types.iter().any(|t| t.accepts(d)) {
            return Some(format!("`default` {d} does not match the schema's type"));
        }
        if self.enum_values.as_ref().is_some_and(|values| !values.contains(d)) {
            return Some(format!("`default` {d} is not one of the `enum` values"));
        }
        if self.const_value.as_ref().is_some_and(|c| c != d) {
            return Some(format!("`default` {d} is not the `const` value"));
        }
        let number = d.as_f64();
        let below = number.zip(self.minimum.as_ref().and_then(|n| n.as_f64())).is_some_and(|(v, min)| v < min);
        let above = number.zip(self.maximum.as_ref().and_then(|n| n.as_f64())).is_some_and(|(v, max)| v > max);
        if below || above {
            return Some(format!("`default` {d} is outside the schema's `minimum`/`maximum`"));
        }
        let chars = d.as_str().map(|t| t.chars().count() as u64);
        if chars.is_some_and(|n| self.min_length.is_some_and(|m| n < m) || self.max_length.is_some_and(|m| n > m)) {
            return Some(format!("`default` {d} is outside the schema's `minLength`/`maxLength`"));
        }
        let items = d.as_array().map(|a| a.len() as u64);
        if items.is_some_and(|n| self.min_items.is_some_and(|m| n < m) || self.max_items.is_some_and(|m| n > m)) {
            return Some(format!("`default` {d} is outside the schema's `minItems`/`maxItems`"));
        }
        None
    }

    /// Whether `property` is listed in `required`.
    pub fn is_required(&self, property: &str) -> bool {
        self.required.iter().any(|r| r == property)
    }

    /// The schema back as JSON, every object's keys sorted (for hashing,
    /// comparing and validating; artifacts are written from
    /// [`Schema::to_ordered`]).
    pub fn to_json(&self) -> Json {
        self.to_ordered().to_value()
    }

    /// The schema back as JSON in the order generated files use: its
    /// properties as declared, every other object's keys sorted.
    pub fn to_ordered(&self) -> Ordered {
        if let Some(declared) = &self.declared {
            return declared.clone();
        }
        let mut map: Vec<(String, Ordered)> = Vec::new();
        let mut put = |key: &str, value: Ordered| map.push((key.to_string(), value));
        for (key, value) in &self.annotations {
            put(key, Ordered::sorted(value));
        }
        if let Some(r) = &self.reference {
            put("$ref", Ordered::Scalar(Json::String(format!("#/$defs/{r}"))));
        }
        let string = |s: &str| Ordered::Scalar(Json::String(s.to_string()));
        match self.types.as_slice() {
            [] => {}
            [one] => put("type", string(one.as_str())),
            many => put("type", Ordered::Array(many.iter().map(|t| string(t.as_str())).collect())),
        }
        if let Some(d) = &self.description {
            put("description", string(d));
        }
        if let Some(v) = &self.enum_values {
            put("enum", Ordered::Array(v.iter().map(Ordered::sorted).collect()));
        }
        if let Some(v) = &self.const_value {
            put("const", Ordered::sorted(v));
        }
        if let Some(v) = &self.default {
            put("default", Ordered::sorted(v));
        }
        if !self.properties.is_empty() {
            put("properties", Ordered::Object(self.properties.iter().map(|(k, s)| (k.clone(), s.to_ordered())).collect()));
        }
        if !self.required.is_empty() {
            put("required", Ordered::Array(self.required.iter().map(|r| string(r)).collect()));
        }
        match &self.additional_properties {
            None => {}
            Some(Additional::Allowed(b)) => put("additionalProperties", Ordered::Scalar(Json::Bool(*b))),
            Some(Additional::Schema(s)) => put("additionalProperties", s.to_ordered()),
        }
        if let Some(items) = &self.items {
            put("items", items.to_ordered());
        }
        for (key, value) in [("minimum", &self.minimum), ("maximum", &self.maximum)] {
            if let Some(n) = value {
                put(key, Ordered::Scalar(Json::Number(n.clone())));
            }
        }
        let counts = [
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
            ("minItems", self.min_items),
            ("maxItems", self.max_items),
        ];
        for (key, value) in counts {
            if let Some(n) = value {
                put(key, Ordered::Scalar(Json::from(n)));
            }
        }
        if let Some(p) = &self.pattern {
            put("pattern", string(p));
        }
        if let Some(f) = &self.format {
            put("format", string(f));
        }
        if let Some(m) = &self.content_media_type {
            put("contentMediaType", string(m));
        }
        if self.base64 {
            put("contentEncoding", string("base64"));
        }
        for (key, variants) in [("oneOf", &self.one_of), ("anyOf", &self.any_of)] {
            if let Some(v) = variants {
                put(key, Ordered::Array(v.iter().map(Schema::to_ordered).collect()));
            }
        }
        if !self.defs.is_empty() {
            let mut defs: Vec<(String, Ordered)> = self.defs.iter().map(|(k, s)| (k.clone(), s.to_ordered())).collect();
            defs.sort_by(|a, b| a.0.cmp(&b.0));
            put("$defs", Ordered::Object(defs));
        }
        map.sort_by(|a, b| a.0.cmp(&b.0));
        Ordered::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentence_stops_at_sentence_end_not_at_dots_inside_words() {
        assert_eq!(first_sentence("Read a file.\nReturns bytes."), "Read a file.");
        assert_eq!(first_sentence("Open v1.2 of the\n  file. More."), "Open v1.2 of the file.");
        assert_eq!(first_sentence("No full stop"), "No full stop");
    }
}
