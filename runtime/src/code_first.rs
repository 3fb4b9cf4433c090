//! Code-first specs: `#[derive(Capability)]` on an args struct declares a
//! capability in Rust instead of YAML.
//!
//! The derive implements [`Capability`] and registers the spec's identity
//! (module, name, category, description, where it is written) with the
//! runtime. It does not make the spec callable by itself: `cargo xtask sync`
//! exports the spec from the compiled host (through a hidden test the derive
//! emits), converts its `schemars` schema, and writes it into the generated
//! bindings beside the YAML specs. The registry serves the generated table
//! and, when it is built, refuses a code-first spec whose generated entry is
//! missing or disagrees on category or description — so a stale build can
//! never run a write capability under a read classification.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::spec::Category;

/// Implemented by `#[derive(Capability)]`: the args struct of a code-first
/// capability. Implement it with the derive, not by hand; the derive also
/// requires the struct to be `Deserialize` and `JsonSchema` (one error
/// each, on the struct, when it is not).
pub trait Capability: 'static {
    /// The code-first spec the derive declared.
    const SPEC: CodeFirst;
}

/// A code-first spec as the derive declares it.
#[derive(Debug, Clone, Copy)]
pub struct CodeFirst {
    /// The module it joins.
    pub module: &'static str,
    /// The capability name.
    pub name: &'static str,
    /// The safety category.
    pub category: Category,
    /// What it does.
    pub description: &'static str,
    /// A short human title (the MCP `title`), when given.
    pub title: Option<&'static str>,
    /// Hidden names it is also called by (`aliases = [...]`): resolved by
    /// `invoke` and `tools/call`, never listed.
    pub aliases: &'static [&'static str],
    /// MCP hint refinements as written: `("idempotent", true)`, ….
    pub hints: &'static [(&'static str, bool)],
    /// `#[capability(open)]`: unknown keys in the arguments are accepted
    /// (else they are refused, as in a YAML spec).
    pub open: bool,
    /// `module_path!()::Type` of the args struct.
    pub rust_type: &'static str,
    /// Where the derive is written.
    pub file: &'static str,
    /// Line of the derive's struct name.
    pub line: u32,
    /// Column of the derive's struct name.
    pub column: u32,
    /// The args struct's JSON Schema, from `schemars`.
    pub input_schema: fn() -> Value,
    /// The struct's fields as serde names them, in declared order: the
    /// order its properties are written in, whatever the build's
    /// `serde_json` keeps.
    pub fields: &'static [&'static str],
    /// The cargo feature the capability lives behind (`feature = "…"`),
    /// as a YAML spec's `feature` (DESIGN §2).
    pub feature: Option<&'static str>,
}

inventory::collect!(CodeFirst);

/// Every code-first spec linked into this binary.
pub fn code_first_specs() -> impl Iterator<Item = &'static CodeFirst> {
    inventory::iter::<CodeFirst>.into_iter()
}

/// The environment variable naming the directory an export writes into.
pub const EXPORT_DIR_VAR: &str = "CAPSPEC_EXPORT_DIR";

impl CodeFirst {
    /// The export record of this spec: what `cargo xtask sync` reads.
    pub fn export(&self) -> Value {
        let mut record = json!({
            "module": self.module,
            "name": self.name,
            "category": self.category,
            "description": self.description,
            "rust_type": self.rust_type,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "input_schema": (self.input_schema)(),
        });
        if let Some(title) = self.title {
            record["title"] = json!(title);
        }
        if self.open {
            record["open"] = json!(true);
        }
        if !self.aliases.is_empty() {
            record["aliases"] = json!(self.aliases);
        }
        if let Some(feature) = self.feature {
            record["feature"] = json!(feature);
        }
        if !self.fields.is_empty() {
            record["fields"] = json!(self.fields);
        }
        if !self.hints.is_empty() {
            record["hints"] = self.hints.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>().into();
        }
        record
    }

    /// What the hidden export test does: compute the schema (so a schema
    /// that cannot be produced fails the host's own `cargo test`), and
    /// write the export record when `CAPSPEC_EXPORT_DIR` is set.
    pub fn export_to_env_dir(&self) {
        let record = self.export();
        let schema = &record["input_schema"];
        assert!(
            schema.get("type").and_then(Value::as_str) == Some("object"),
            "{}:{}: the input schema of `{}.{}` ({}) is not an object schema: {schema}",
            self.file,
            self.line,
            self.module,
            self.name,
            self.rust_type
        );
        let Some(dir) = std::env::var_os(EXPORT_DIR_VAR) else { return };
        let file = PathBuf::from(dir).join(format!("{}.json", self.rust_type.replace("::", ".")));
        let text = serde_json::to_string(&record).expect("export records serialize");
        if let Err(e) = std::fs::write(&file, text) {
            panic!("cannot write the code-first export {}: {e}", file.display());
        }
    }
}

/// The output export's file beside `<rust_type>.json`: the schema of the
/// `#[capability]` fn's return type, when it has one.
pub const OUTPUT_EXPORT_EXTENSION: &str = "output";

impl CodeFirst {
    /// What the `#[capability]` fn's hidden export test does for a
    /// code-first capability: write the output schema of its return type
    /// (`None` when the type is not `JsonSchema`, or is `()`) beside the
    /// spec's export record.
    pub fn export_output_to_env_dir(&self, schema: Option<Value>) {
        let Some(dir) = std::env::var_os(EXPORT_DIR_VAR) else { return };
        let schema = schema.filter(|s| s.get("type").and_then(Value::as_str) != Some("null"));
        let file = PathBuf::from(dir).join(format!("{}.{OUTPUT_EXPORT_EXTENSION}", self.rust_type.replace("::", ".")));
        let text = serde_json::to_string(&json!({ "output_schema": schema })).expect("export records serialize");
        if let Err(e) = std::fs::write(&file, text) {
            panic!("cannot write the code-first output export {}: {e}", file.display());
        }
    }
}

/// The return type of a `#[capability]` fn, probed for `JsonSchema` by
/// autoref: `(&OutputProbe::<T>::new()).output_schema()` is the schema when
/// `T: JsonSchema` ([`OutputSchema`]) and `None` otherwise
/// ([`NoOutputSchema`]), so a return type need not implement it.
pub struct OutputProbe<T: ?Sized>(std::marker::PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> OutputProbe<T> {
    /// The probe for `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        OutputProbe(std::marker::PhantomData)
    }
}

impl<T: ?Sized> Clone for OutputProbe<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: ?Sized> Copy for OutputProbe<T> {}

/// The probe's answer for a `JsonSchema` type: its schema.
pub trait OutputSchema {
    /// `T`'s schema.
    fn output_schema(self) -> Option<Value>;
}
impl<T: schemars::JsonSchema> OutputSchema for &OutputProbe<T> {
    fn output_schema(self) -> Option<Value> {
        // What the value serializes to, as rmcp's `Json<T>` describes it:
        // an `Option` field is always written (as `null`), so required.
        let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
        Some(serde_json::to_value(generator.into_root_schema_for::<T>()).expect("schemas serialize"))
    }
}

/// The probe's answer for any other type: none.
pub trait NoOutputSchema {
    /// None.
    fn output_schema(self) -> Option<Value>;
}
impl<T: ?Sized> NoOutputSchema for OutputProbe<T> {
    fn output_schema(self) -> Option<Value> {
        None
    }
}

/// Names `T` where it must decode from the validated arguments.
pub fn require_deserialize<T: serde::de::DeserializeOwned>() {}

/// The JSON Schema of `T`, as `schemars` produces it by default.
pub fn schema_of<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::SchemaGenerator::default().into_root_schema_for::<T>()).expect("schemas serialize")
}

/// Code-first specs of served modules that the generated tables do not
/// carry as declared.
pub(crate) fn problems<'a>(modules: &[crate::spec::Module], code_first: impl IntoIterator<Item = &'a CodeFirst>) -> Vec<String> {
    let mut specs: Vec<&CodeFirst> = code_first.into_iter().filter(|c| modules.iter().any(|m| m.name == c.module)).collect();
    specs.sort_by_key(|c| (c.module, c.name, c.file, c.line));
    let mut problems = Vec::new();
    for cf in specs {
        let at = format!("{}:{}", cf.file, cf.line);
        let generated = modules.iter().flat_map(|m| m.specs.iter()).find(|s| s.module == cf.module && s.name == cf.name);
        match generated {
            None => problems.push(format!(
                "{at}: `{}.{}` is declared by #[derive(Capability)] on `{}` but is not in the generated bindings; list its package under [code_first] in capspec.toml and run `cargo xtask sync`",
                cf.module, cf.name, cf.rust_type
            )),
            Some(spec) if spec.category != cf.category => problems.push(format!(
                "{at}: `{}.{}` is `{}` in the code but `{}` in the generated bindings; run `cargo xtask sync`",
                cf.module, cf.name, cf.category, spec.category
            )),
            Some(spec) if spec.description != cf.description => problems.push(format!(
                "{at}: the description of `{}.{}` differs between the code and the generated bindings; run `cargo xtask sync`",
                cf.module, cf.name
            )),
            Some(_) => {}
        }
    }
    problems
}
