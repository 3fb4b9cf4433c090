//! Code-first specs: capabilities declared in Rust with `#[derive(Capability)]`.
//!
//! The flow, and why it does not tie generation to a compiling host:
//!
//! 1. **Export.** For every package under `[code_first] packages`, run
//!    `cargo test -p <package> --lib -- __capspec_export_` with
//!    `CAPSPEC_EXPORT_DIR` set. Each derive emits one hidden test that writes
//!    its spec (module, name, category, description, `schemars` schema, the
//!    Rust type and where the derive is) as JSON into that directory. The
//!    package's own unit-test binary links every derive of the library, so
//!    nothing depends on how a final binary is linked.
//! 2. **Convert.** The `schemars` schema is reduced to the supported subset
//!    (the importer's rule: unsupported keywords dropped, each a warning;
//!    `$schema`, `title` and the root `description` — the struct's doc
//!    comment — silently), then the spec becomes a spec-shaped
//!    node whose every position is the derive's, and joins its module
//!    through the same capability rules as YAML ([`crate::load::load_files_with`]).
//! 3. **Record.** `sync` writes what the packages exported to the record
//!    file (`[code_first] record`, default `<specs>/code-first.json`), a
//!    generated file like the category snapshot. When a package does not
//!    build, its specs come from the record instead, so the YAML-derived
//!    files can still be regenerated — which is often what makes the host
//!    build again. `check` reports the failed export as an error.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::Config;
use crate::finding::{Finding, rule};
use crate::load::CodeFirstEntry;
use crate::model::CodeOrigin;
use crate::render::MARKER;
use crate::yaml::{self, Key, Node, Pos};

/// The libtest filter that selects the derives' export tests.
pub const EXPORT_TEST_PREFIX: &str = "__capspec_export_";
/// The variable naming the directory the export tests write into.
pub const EXPORT_DIR_VAR: &str = "CAPSPEC_EXPORT_DIR";

/// One code-first spec as a package exports it, and as the record keeps it
/// (with the schema already converted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exported {
    #[serde(default)]
    pub package: String,
    pub module: String,
    pub name: String,
    pub category: String,
    pub description: String,
    pub rust_type: String,
    /// Relative to the project root once exported (the derive's `file!()`).
    pub file: String,
    /// Where the derive's struct name is. Not recorded (an edit above the
    /// struct must not make the record stale); a recorded spec is located
    /// by finding `struct <Type>` in `file`.
    #[serde(default, skip_serializing)]
    pub line: u32,
    #[serde(default, skip_serializing)]
    pub column: u32,
    pub input_schema: Value,
}

/// Where the code-first specs of a `check` or `sync` come from.
#[derive(Debug, Clone, Default)]
pub struct CodeFirstInput {
    /// Freshly exported specs (schemas as `schemars` wrote them).
    pub exported: Vec<Exported>,
    /// Packages whose specs are taken from the record file instead (their
    /// export failed, or the build was skipped).
    pub from_record: BTreeSet<String>,
}

impl CodeFirstInput {
    /// Every configured package from the record: no build.
    pub fn recorded(config: &Config) -> CodeFirstInput {
        CodeFirstInput { exported: Vec::new(), from_record: config.code_first.packages.iter().map(|(p, _)| p.clone()).collect() }
    }
}

/// The code-first specs of a project, ready for loading and recording.
#[derive(Debug, Default)]
pub struct Resolved {
    pub entries: Vec<CodeFirstEntry>,
    /// What the record file must hold (converted schemas), sorted.
    pub record: Vec<Exported>,
    pub findings: Vec<Finding>,
}

/// Combine fresh exports and recorded specs, convert their schemas, and
/// turn them into loader entries.
pub fn resolve(root: &Path, config: &Config, input: &CodeFirstInput) -> Resolved {
    if config.code_first.packages.is_empty() {
        return Resolved::default();
    }
    let configured: BTreeSet<&str> = config.code_first.packages.iter().map(|(p, _)| p.as_str()).collect();
    let mut specs: Vec<Exported> = input.exported.iter().filter(|e| configured.contains(e.package.as_str())).cloned().collect();
    let mut record_findings = Vec::new();
    if !input.from_record.is_empty() {
        let (recorded, findings) = read_record(root, &config.code_first.record);
        record_findings = findings;
        specs.extend(recorded.into_iter().filter(|e| input.from_record.contains(&e.package) && configured.contains(e.package.as_str())));
    }
    let mut out = convert(root, specs);
    out.findings.extend(record_findings);
    out
}

/// Convert exported or recorded specs into loader entries and the record.
pub fn convert(root: &Path, mut specs: Vec<Exported>) -> Resolved {
    let mut out = Resolved::default();
    let mut texts: std::collections::BTreeMap<String, Option<String>> = std::collections::BTreeMap::new();
    for spec in &mut specs {
        // Only files inside the project are read (for snippets): a record
        // naming `/etc/…` or `../…` reads nothing.
        let inside = crate::config::path_problem(&spec.file).is_none();
        let text = texts.entry(spec.file.clone()).or_insert_with(|| inside.then(|| std::fs::read_to_string(root.join(&spec.file)).ok()).flatten());
        if spec.line == 0 {
            let type_name = spec.rust_type.rsplit("::").next().unwrap_or_default();
            (spec.line, spec.column) = text.as_deref().and_then(|t| locate_struct(t, type_name)).unwrap_or((1, 1));
        }
        let mut schema = std::mem::take(&mut spec.input_schema);
        // The struct's doc comment (schemars' root `description`) is for
        // Rust readers; the model reads the capability's `description`.
        if let Some(map) = schema.as_object_mut() {
            map.remove("$schema");
            map.remove("title");
            map.remove("description");
        }
        let (file, pos, qualified) = (spec.file.clone(), Pos { line: spec.line, column: spec.column }, format!("{}.{}", spec.module, spec.name));
        crate::import::strip_unsupported(&mut schema, "/input", &mut |key, at| {
            // schemars titles enum variants and structs; a title is only a label.
            if key == "title" {
                return;
            }
            out.findings.push(
                Finding::warning(
                    rule::CODE_FIRST_KEYWORD,
                    &file,
                    pos,
                    format!("`{qualified}`: dropped keyword `{key}` at `{at}`, which the spec format does not support; the generated schema goes without it"),
                )
                .for_capability(&qualified),
            );
        });
        spec.input_schema = schema;
    }
    specs.sort_by(|a, b| (&a.module, &a.name, &a.rust_type, &a.package).cmp(&(&b.module, &b.name, &b.rust_type, &b.package)));
    for spec in &specs {
        let pos = Pos { line: spec.line, column: spec.column };
        let node = Node {
            value: yaml::Value::Map(vec![
                entry("name", Value::String(spec.name.clone()), pos),
                entry("category", Value::String(spec.category.clone()), pos),
                entry("description", Value::String(spec.description.clone()), pos),
                entry("input", spec.input_schema.clone(), pos),
            ]),
            pos,
        };
        out.entries.push(CodeFirstEntry {
            module: spec.module.clone(),
            node,
            origin: CodeOrigin { package: spec.package.clone(), file: spec.file.clone(), rust_type: spec.rust_type.clone() },
            text: texts.get(&spec.file).cloned().flatten(),
        });
    }
    out.record = specs;
    out
}

/// The position of the name in `struct <name>` (1-based line and column).
fn locate_struct(text: &str, name: &str) -> Option<(u32, u32)> {
    let needle = format!("struct {name}");
    text.lines().enumerate().find_map(|(i, line)| {
        let at = line.find(&needle)?;
        let after = line[at + needle.len()..].chars().next();
        if after.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        Some((i as u32 + 1, line[..at + "struct ".len()].chars().count() as u32 + 1))
    })
}

fn entry(key: &str, value: Value, pos: Pos) -> (Key, Node) {
    (Key { name: key.to_string(), pos }, node_of(value, pos))
}

/// A JSON value as a located node, every position `pos` (a code-first spec
/// has one place in the source: its derive).
fn node_of(value: Value, pos: Pos) -> Node {
    let value = match value {
        Value::Null => yaml::Value::Null,
        Value::Bool(b) => yaml::Value::Bool(b),
        Value::Number(n) => yaml::Value::Number(n),
        Value::String(s) => yaml::Value::String(s),
        Value::Array(items) => yaml::Value::Seq(items.into_iter().map(|v| node_of(v, pos)).collect()),
        Value::Object(map) => yaml::Value::Map(map.into_iter().map(|(k, v)| (Key { name: k, pos }, node_of(v, pos))).collect()),
    };
    Node { value, pos }
}

/// The record file's text: one capability per line, so a review diff shows
/// each changed spec. Valid JSON whose first line carries the marker.
pub fn render_record(specs: &[Exported]) -> String {
    let header = format!("{MARKER} from the #[derive(Capability)] specs of the [code_first] packages; `cargo xtask sync` rewrites it");
    let mut out = format!("{{\"generated\": {},\n\"capabilities\": [", Value::String(header));
    for (i, spec) in specs.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        out.push_str(&serde_json::to_string(spec).expect("records serialize"));
    }
    out.push_str("\n]}\n");
    out
}

/// Read the record: its specs, or a finding saying why it cannot be used.
/// A missing record holds nothing (a package that never exported).
fn read_record(root: &Path, path: &str) -> (Vec<Exported>, Vec<Finding>) {
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

/// A package whose specs could not be exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportFailure {
    pub package: String,
    /// Where the package is listed in `capspec.toml`.
    pub pos: Pos,
    /// What went wrong, with the compiler's first errors.
    pub message: String,
}

impl ExportFailure {
    pub fn finding(&self) -> Finding {
        Finding::error(rule::CODE_FIRST_EXPORT, crate::config::CONFIG_FILE, self.pos, self.message.clone())
    }
}

/// Build every `[code_first]` package's library tests and collect what its
/// derives export. Runs `cargo` (`$CARGO` when set) in the project root.
pub fn export(root: &Path, config: &Config) -> (Vec<Exported>, Vec<ExportFailure>) {
    let mut exported = Vec::new();
    let mut failures = Vec::new();
    if config.code_first.packages.is_empty() {
        return (exported, failures);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = workspace_root(root, &cargo);
    for (n, (package, pos)) in config.code_first.packages.iter().enumerate() {
        let fail = |message: String| ExportFailure { package: package.clone(), pos: *pos, message };
        let dir = std::env::temp_dir().join(format!("capspec-export-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            failures.push(fail(format!("cannot create the export directory {}: {e}", dir.display())));
            continue;
        }
        let result = Command::new(&cargo)
            .current_dir(root)
            .args(["test", "--quiet", "--color", "never", "--message-format", "short", "-p", package, "--lib", "--"])
            .arg(EXPORT_TEST_PREFIX)
            .env(EXPORT_DIR_VAR, &dir)
            .output();
        match result {
            Err(e) => failures.push(fail(format!("cannot run cargo to export the code-first specs of `{package}`: {e}"))),
            Ok(out) if !out.status.success() => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let stdout = String::from_utf8_lossy(&out.stdout);
                failures.push(fail(format!(
                    "cannot export the code-first specs of `{package}`: `cargo test -p {package} --lib` failed{}",
                    excerpt(&stderr, &stdout)
                )));
            }
            Ok(_) => match read_exports(&dir, package, root, workspace.as_deref()) {
                Ok(specs) => exported.extend(specs),
                Err(message) => failures.push(fail(message)),
            },
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    (exported, failures)
}

/// The first compiler errors (or the failing test's panic), enough to act on.
fn excerpt(stderr: &str, stdout: &str) -> String {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error") && !l.starts_with("error: could not compile")).take(8).collect();
    let lines: Vec<&str> = if errors.is_empty() {
        let all: Vec<&str> = stdout.lines().chain(stderr.lines()).filter(|l| !l.trim().is_empty()).collect();
        all[all.len().saturating_sub(12)..].to_vec()
    } else {
        errors
    };
    if lines.is_empty() { String::new() } else { format!(":\n    {}", lines.join("\n    ")) }
}

/// `cargo locate-project --workspace`: the directory `file!()` paths are
/// relative to.
fn workspace_root(root: &Path, cargo: &std::ffi::OsStr) -> Option<PathBuf> {
    let out = Command::new(cargo).current_dir(root).args(["locate-project", "--workspace", "--message-format", "plain"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let manifest = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    manifest.parent().map(Path::to_path_buf)
}

fn read_exports(dir: &Path, package: &str, root: &Path, workspace: Option<&Path>) -> Result<Vec<Exported>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the export directory {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let mut spec: Exported = serde_json::from_str(&text).map_err(|e| {
            format!("`{package}` exported a spec this capspec cannot read ({e}); are the capspec runtime and xtask the same version?")
        })?;
        spec.package = package.to_string();
        spec.file = project_relative(&spec.file, root, workspace);
        out.push(spec);
    }
    Ok(out)
}

/// A `file!()` path (relative to the Cargo workspace, or absolute) made
/// relative to the project root, `/`-separated.
fn project_relative(file: &str, root: &Path, workspace: Option<&Path>) -> String {
    let absolute = match workspace {
        Some(ws) if Path::new(file).is_relative() => ws.join(file),
        _ => PathBuf::from(file),
    };
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    match canonical(&absolute).strip_prefix(canonical(root)) {
        Ok(rel) => rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/"),
        Err(_) => file.replace('\\', "/"),
    }
}
