//! `cargo xtask`: the capspec command line. A thin clap front over
//! `capspec-codegen`; it parses flags, calls the library and prints.

use std::path::PathBuf;
use std::process::ExitCode;

use capspec_codegen::code_first::{CodeFirstInput, ExportFailure};
use capspec_codegen::report::{self, Format};
use clap::{Parser, Subcommand, ValueEnum};

const CONFIG_HELP: &str = "\
PROJECT CONFIG (capspec.toml, in the root; paths relative to it):
  specs = \"specs\"                      spec directory, searched recursively for *.yaml/*.yml (required)
  snapshot = \"<specs>/categories.snap\" category snapshot file
  [generate]
  rust = \"src/generated\"               Rust bindings
  js = \"guest\"                         guest JS facades and .d.ts
  catalog = \"catalog\"                  prompt catalog and capabilities.json
  specifier = \"@capspec/host\"          guest import prefix: \"@capspec/host/<module>\"
  bridge = \"capspec:bridge\"            private bridge module the facades import
  editor_schema = \"…\"                  where to write the spec format's JSON Schema for editors
                                       (not written unless set)
  [coverage]
  sources = [\"src\"]                    scanned for #[capability] fns and #[derive(Capability)] structs
  tests = [\"tests\"]                    scanned for tests that exercise capabilities
  [code_first]
  packages = []                        Cargo packages whose #[derive(Capability)] specs join the YAML
                                       specs (sync/check build their lib tests to export them)
  record = \"<specs>/code-first.json\"   generated record of what they last exported
  [[allow]]                            suppress one coverage/* or breaking/* finding:
  rule = \"…\"  capability = \"…\" (or file = \"…\")  reason = \"a real reason\"

EXIT CODES:
  0  nothing to report (warnings allowed)
  1  at least one error finding
  2  the command could not run (no config, unreadable root, bad flag)";

/// `check --help`: the rule table, then the config keys and exit codes.
fn check_help() -> String {
    format!("{}\n\n{CONFIG_HELP}", capspec_codegen::rules::help())
}

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "capspec: keep capabilities in one declarative place and fail CI when anything drifts from it",
    after_help = CONFIG_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum ImportSource {
    /// MCP `tools/list` entries: files holding one tool object each, a `{"tools": [...]}`
    /// document, or directories of such files. Category: readOnlyHint → read;
    /// destructiveHint → execute; openWorldHint → external; otherwise write.
    Mcp {
        /// Files or directories to import.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The module name (and file stem) of the spec to write.
        #[arg(long)]
        module: String,
        /// Directory to write `<module>.yaml` into.
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum Command {
    /// Turn another tool surface into a capspec spec file.
    #[command(subcommand)]
    Import(ImportSource),
    /// Regenerate every artifact from the specs; write only what changed, remove orphaned
    /// generated files. With spec errors nothing is written.
    #[command(after_help = CONFIG_HELP)]
    ///
    /// Code-first specs are exported by building the [code_first] packages' lib tests; a
    /// package that does not build keeps its recorded specs, the rest is still regenerated,
    /// and sync exits 1.
    Sync {
        #[command(flatten)]
        root: RootArg,
        #[command(flatten)]
        build: BuildArg,
    },
    /// Append a ready-to-fill #[capability] fn for every capability without an impl to
    /// <first coverage source>/capabilities/<module>.rs (never touching existing code).
    #[command(after_help = CONFIG_HELP)]
    Scaffold {
        #[command(flatten)]
        root: RootArg,
    },
    /// Print the coverage table: one row per capability with its category, the fn that
    /// implements it (file:line), the tests that exercise it (file::test_fn), and the reason of
    /// its `coverage/untested` [[allow]] entry where no test does. Computed from the same scan
    /// as check (the [coverage] sources and tests), so it needs no sync; never writes.
    #[command(after_help = CONFIG_HELP)]
    Coverage(CoverageArgs),
    /// Validate specs and config, compare every generated file with what the specs produce,
    /// and report every finding (never writes).
    #[command(after_help = check_help())]
    Check {
        #[command(flatten)]
        root: RootArg,
        #[command(flatten)]
        build: BuildArg,
        /// Output format: rustc-like text, one JSON object, GitHub workflow commands, or SARIF 2.1.0.
        #[arg(long, value_enum, default_value_t = FormatArg::Human)]
        format: FormatArg,
        /// Also compare the specs with those at this git ref (branch, tag, commit, `origin/main`):
        /// report breaking changes (`breaking/*`), and every capability whose contract changed
        /// (or that is new) while the diff touches no test that exercises it
        /// (`coverage/contract-unchecked`). Read from git; nothing is checked out.
        #[arg(long, value_name = "GIT_REF")]
        base: Option<String>,
        /// With --format json: add "suggested_allow", the [[allow]] entries (TOML) that would
        /// suppress every coverage/* and breaking/* finding — to adopt capspec on an existing
        /// surface. Each entry needs a real reason before check accepts it.
        #[arg(long, requires = "format")]
        suggest_allow: bool,
    },
}

#[derive(clap::Args)]
struct CoverageArgs {
    #[command(flatten)]
    root: RootArg,
    /// Output format: a Markdown table, or JSON (for a CI job or a dashboard).
    #[arg(long, value_enum, default_value_t = TableFormat::Md)]
    format: TableFormat,
}

#[derive(Clone, Copy, ValueEnum)]
enum TableFormat {
    Md,
    Json,
}

#[derive(clap::Args)]
struct RootArg {
    /// The project root: a directory holding capspec.toml (need not be a Cargo project, unless
    /// [code_first] lists packages: cargo builds them from here). Defaults to the workspace root.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

impl RootArg {
    fn resolve(&self) -> PathBuf {
        self.root.clone().unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
        })
    }
}

#[derive(clap::Args)]
struct BuildArg {
    /// Take code-first specs from the record file instead of building the [code_first]
    /// packages (their specs are then not compared with the code).
    #[arg(long)]
    no_build: bool,
}

impl BuildArg {
    /// Export the code-first specs unless `--no-build`: the input for
    /// `open_with` and the packages that failed. Without a readable config
    /// or packages there is nothing to build (the library reports the rest).
    fn export(&self, root: &std::path::Path) -> (Option<CodeFirstInput>, Vec<ExportFailure>) {
        let plan = if self.no_build { None } else { capspec_codegen::code_first::ExportPlan::of(root) };
        let Some(plan) = plan else { return (None, Vec::new()) };
        eprintln!("exporting code-first specs: cargo test --lib -p {}", plan.packages().join(" -p "));
        let (input, failures) = plan.run();
        (Some(input), failures)
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Human,
    Json,
    Github,
    Sarif,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::Import(ImportSource::Mcp { paths, module, out }) => {
            let refs: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
            let imported = capspec_codegen::import::read_tools(&refs).and_then(|tools| capspec_codegen::import::import(&module, &tools));
            match imported {
                Ok(imported) => {
                    let target = out.join(format!("{module}.yaml"));
                    if let Err(e) = std::fs::create_dir_all(&out).and_then(|()| std::fs::write(&target, &imported.yaml)) {
                        eprintln!("error: cannot write `{}`: {e}", target.display());
                        return ExitCode::from(2);
                    }
                    let report = report::Report { findings: imported.findings, sources: Default::default() };
                    if !report.findings.is_empty() {
                        print!("{}", report::render(&report, Format::Human));
                    }
                    println!("imported {} tools into {}", imported.capabilities.len(), target.display());
                    ExitCode::from(report.exit_code() as u8)
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Sync { root, build } => {
            let root = root.resolve();
            let (input, failures) = build.export(&root);
            for failure in &failures {
                eprintln!("warning: {}", failure.message);
                eprintln!(
                    "  `{}` keeps the code-first specs recorded at its last export; everything else is regenerated (run `cargo xtask sync` again once it builds)",
                    failure.package
                );
            }
            match capspec_codegen::sync_with(&root, input.as_ref()) {
                Ok(outcome) if !outcome.findings.is_empty() => {
                    let report = report::Report { findings: outcome.findings, sources: outcome.sources };
                    print!("{}", report::render(&report, Format::Human));
                    eprintln!("sync: the specs have errors; nothing was written");
                    ExitCode::from(1)
                }
                Ok(outcome) => {
                    for path in &outcome.written {
                        println!("wrote    {path}");
                    }
                    for path in &outcome.removed {
                        println!("removed  {path}");
                    }
                    println!(
                        "sync: {} written, {} removed, {} unchanged",
                        outcome.written.len(),
                        outcome.removed.len(),
                        outcome.unchanged
                    );
                    if failures.is_empty() {
                        ExitCode::SUCCESS
                    } else {
                        eprintln!("sync: {} code-first package(s) could not be exported (see above)", failures.len());
                        ExitCode::from(1)
                    }
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Scaffold { root } => {
            let root = root.resolve();
            match capspec_codegen::scaffold::scaffold(&root) {
                Ok(outcome) if !outcome.findings.is_empty() => {
                    let report = report::Report { findings: outcome.findings, sources: outcome.sources };
                    print!("{}", report::render(&report, Format::Human));
                    eprintln!("scaffold: the specs have errors; nothing was written");
                    ExitCode::from(1)
                }
                Ok(outcome) => {
                    for (file, caps) in &outcome.written {
                        println!("stubbed  {file}: {}", caps.join(", "));
                    }
                    if !outcome.created.is_empty() {
                        println!(
                            "new files: {} — declare them as modules (`mod capabilities;` with `mod <module>;`) so they compile; \
                             `cargo xtask check` reports each stub as coverage/stub until it is filled in",
                            outcome.created.join(", ")
                        );
                    }
                    if outcome.written.is_empty() {
                        println!("scaffold: every capability has an impl; nothing to do");
                    }
                    ExitCode::SUCCESS
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Coverage(CoverageArgs { root, format }) => match capspec_codegen::coverage_table::coverage(&root.resolve()) {
            Ok(coverage) => {
                print!("{}", match format {
                    TableFormat::Md => coverage.table.to_markdown(),
                    TableFormat::Json => coverage.table.to_json(),
                });
                if coverage.findings.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    let report = report::Report { findings: coverage.findings, sources: coverage.sources };
                    eprint!("{}", report::render(&report, Format::Human));
                    eprintln!("coverage: the specs or config have errors; the table leaves out what they hide");
                    ExitCode::from(1)
                }
            }
            Err(err) => {
                eprintln!("error: {err}");
                ExitCode::from(2)
            }
        },
        Command::Check { root, build, format, base, suggest_allow } => {
            if suggest_allow && !matches!(format, FormatArg::Json) {
                eprintln!("error: --suggest-allow needs --format json");
                return ExitCode::from(2);
            }
            let root = root.resolve();
            let (code_first, export_failures) = build.export(&root);
            let options = capspec_codegen::CheckOptions { base, code_first, export_failures };
            match capspec_codegen::check_with(&root, &options) {
                Ok(report) => {
                    let format = match format {
                        FormatArg::Human => Format::Human,
                        FormatArg::Json => Format::Json,
                        FormatArg::Github => Format::Github,
                        FormatArg::Sarif => Format::Sarif,
                    };
                    let text = if suggest_allow { report::json_with_suggestions(&report) } else { report::render(&report, format) };
                    print!("{text}");
                    ExitCode::from(report.exit_code() as u8)
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
