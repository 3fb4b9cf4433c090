//! Running each command: call the library, print, and choose the exit code.

use std::path::PathBuf;

use capspec_codegen::report::{self, Format};
use clap::{CommandFactory, FromArgMatches};

use crate::args::{Cli, Command, CoverageArgs, FormatArg, ImportSource, PolicyCommand, TableFormat};

/// `root` relative to the current directory (`/`-separated) when it lies
/// below it; `None` when it is the current directory or elsewhere.
fn below_current_dir(root: &std::path::Path) -> Option<String> {
    let cwd = std::env::current_dir().ok()?.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let rel = root.strip_prefix(&cwd).ok()?;
    let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Print why the command could not run and choose exit code 2.
fn fatal(err: String) -> u8 {
    eprintln!("error: {err}");
    2
}

/// Parse `args` (the program name first) and run the command; the exit code.
pub(crate) fn run(args: Vec<std::ffi::OsString>, bin_name: &'static str) -> u8 {
    let cli = match Cli::command().bin_name(bin_name).name(bin_name).try_get_matches_from(args).and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() { 2 } else { 0 };
        }
    };
    match cli.command {
        Command::Import(ImportSource::Mcp { upstream: Some(name), update, root, .. }) => {
            let root = match root.resolve() {
                Ok(root) => root,
                Err(err) => return fatal(err),
            };
            crate::live::import_upstream(&root, &name, update, bin_name)
        }
        Command::Import(ImportSource::Mcp { paths, module, out, .. }) => {
            let module = module.unwrap_or_default();
            let refs: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
            let imported = capspec_codegen::import::read_tools(&refs).and_then(|tools| capspec_codegen::import::import(&module, &tools));
            match imported {
                Ok(mut imported) => {
                    let target = out.join(format!("{module}.yaml"));
                    if let Err(e) = std::fs::create_dir_all(&out).and_then(|()| std::fs::write(&target, &imported.yaml)) {
                        eprintln!("error: cannot write `{}`: {e}", target.display());
                        return 2;
                    }
                    let sources = imported.written_to(&module, &target.to_string_lossy());
                    let mut report = report::Report { findings: std::mem::take(&mut imported.findings), sources };
                    name_the_command(&mut report.findings, bin_name);
                    if !report.findings.is_empty() {
                        print!("{}", report::render(&report, Format::Human));
                    }
                    for line in imported.rename_lines() {
                        println!("{line}");
                    }
                    println!("imported {} tools into {}", imported.capabilities.len(), target.display());
                    report.exit_code() as u8
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    2
                }
            }
        }
        Command::Sync { root, build } => {
            let root = match root.resolve() {
                Ok(root) => root,
                Err(err) => return fatal(err),
            };
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
                    let mut report = report::Report { findings: outcome.findings, sources: outcome.sources };
                    name_the_command(&mut report.findings, bin_name);
                    print!("{}", report::render(&report, Format::Human));
                    eprintln!("sync: the specs have errors; nothing was written");
                    1
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
                        0
                    } else {
                        eprintln!("sync: {} code-first package(s) could not be exported (see above)", failures.len());
                        1
                    }
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    2
                }
            }
        }
        Command::Auth(command) => crate::auth::run(command),
        Command::Audit(command) => crate::audit::run(command),
        Command::Explain { rule: Some(rule) } => match capspec_codegen::explain::find(&rule) {
            Some(explanation) => {
                print!("{}", capspec_codegen::explain::render(&explanation));
                0
            }
            None => {
                let ids = capspec_codegen::rules::ALL.iter().map(|r| r.id);
                fatal(format!("no rule `{rule}`{}; `{bin_name} explain` lists them", capspec_codegen::rules::did_you_mean(&rule, ids)))
            }
        },
        Command::Explain { rule: None } => {
            println!("{}", capspec_codegen::rules::help());
            println!("\n`{bin_name} explain RULE` explains one, with a project that reports it and the same project fixed.");
            0
        }
        Command::Policy(PolicyCommand::Test { root }) => {
            let root = match root.resolve() {
                Ok(root) => root,
                Err(err) => return fatal(err),
            };
            match capspec_codegen::check::policy_test(&root) {
                Err(err) => {
                    eprintln!("error: {err}");
                    2
                }
                Ok((lines, report)) => {
                    for line in &lines {
                        println!("{line}");
                    }
                    if !report.findings.is_empty() {
                        print!("{}", report::render(&report, Format::Human));
                    }
                    let summary = report.summary();
                    if lines.is_empty() && report.findings.is_empty() {
                        println!("policy test: no policy tests (the policy directory has no tests.yaml)");
                    } else {
                        println!("policy test: {} run, {} error(s)", lines.len(), summary.errors);
                    }
                    u8::from(summary.errors > 0)
                }
            }
        }
        Command::Scaffold { root } => {
            let root = match root.resolve() {
                Ok(root) => root,
                Err(err) => return fatal(err),
            };
            match capspec_codegen::scaffold::scaffold(&root) {
                Ok(outcome) if !outcome.findings.is_empty() => {
                    let mut report = report::Report { findings: outcome.findings, sources: outcome.sources };
                    name_the_command(&mut report.findings, bin_name);
                    print!("{}", report::render(&report, Format::Human));
                    eprintln!("scaffold: the specs have errors; nothing was written");
                    1
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
                    0
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    2
                }
            }
        }
        Command::Init { root, capspec_path, capspec_git, rev } => {
            let root = root.or_else(|| std::env::current_dir().ok()).unwrap_or_else(|| PathBuf::from("."));
            let source = match (capspec_path, capspec_git) {
                (Some(dir), _) => crate::init::SourceArg::Path(dir),
                (None, Some(url)) => crate::init::SourceArg::Git { url, rev },
                (None, None) => crate::init::SourceArg::Default,
            };
            match crate::init::init(&root, source) {
                Ok(outcome) => {
                    for path in &outcome.written {
                        println!("wrote    {path}");
                    }
                    for edit in &outcome.edited {
                        println!("edited   {edit}");
                    }
                    for kept in &outcome.kept {
                        println!("kept     {kept}");
                    }
                    for note in &outcome.notes {
                        println!("note:    {note}");
                    }
                    for warning in &outcome.warnings {
                        println!("warning: {warning}");
                    }
                    if let Some(failure) = &outcome.unresolved {
                        eprintln!("error: {failure}");
                        eprintln!("init: not done; the files above are written, and running init again with the flag named above rewrites capspec's dependency entries");
                        return 1;
                    }
                    let xtask = outcome.xtask.command();
                    if outcome.xtask == crate::init::Xtask::NeedsLine {
                        println!("init: done; next add that line to the xtask's main, then `cargo test` and `{xtask} check`");
                    } else {
                        println!("init: done; next `cargo test` and `{xtask} check`");
                    }
                    0
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    2
                }
            }
        }
        Command::Coverage(CoverageArgs { root, format }) => match root.resolve().map_err(fatal).map(|root| capspec_codegen::coverage_table::coverage(&root)) {
            Err(code) => code,
            Ok(Err(err)) => {
                eprintln!("error: {err}");
                2
            }
            Ok(Ok(coverage)) => {
                print!("{}", match format {
                    TableFormat::Md => coverage.table.to_markdown(),
                    TableFormat::Json => coverage.table.to_json(),
                });
                if coverage.findings.is_empty() {
                    0
                } else {
                    let mut report = report::Report { findings: coverage.findings, sources: coverage.sources };
                    name_the_command(&mut report.findings, bin_name);
                    eprint!("{}", report::render(&report, Format::Human));
                    eprintln!("coverage: the specs or config have errors; the table leaves out what they hide");
                    1
                }
            }
        },
        Command::Serve(args) => {
            let root = match args.root.resolve() {
                Ok(root) => root,
                Err(err) => return fatal(err),
            };
            crate::live::serve(&root, &args)
        }
        Command::Check { root, build, format, base, suggest_allow, upstream } => {
            if suggest_allow && !matches!(format, FormatArg::Json) {
                eprintln!("error: --suggest-allow needs --format json");
                return 2;
            }
            let root = match root.resolve() {
                Ok(root) => root,
                Err(err) => return fatal(err),
            };
            // The servers first: without the MCP client this fails before any build.
            let upstream = if upstream {
                match crate::live::upstream_findings(&root) {
                    Ok(findings) => findings,
                    Err(err) => return fatal(err),
                }
            } else {
                Vec::new()
            };
            let (code_first, export_failures) = build.export(&root);
            let options = capspec_codegen::CheckOptions { base, code_first, export_failures, upstream, without_test_record: false };
            match capspec_codegen::check_with(&root, &options) {
                Ok(mut report) => {
                    name_the_command(&mut report.findings, bin_name);
                    // GitHub annotations and code scanning resolve paths from the
                    // repository root, where CI runs: a root below the current
                    // directory (a workspace member's project) is named in them.
                    if matches!(format, FormatArg::Github | FormatArg::Sarif) {
                        if let Some(prefix) = below_current_dir(&root) {
                            for finding in report.findings.iter_mut().filter(|f| !f.file.is_empty()) {
                                finding.file = format!("{prefix}/{}", finding.file);
                            }
                        }
                    }
                    let format = match format {
                        FormatArg::Human => Format::Human,
                        FormatArg::Json => Format::Json,
                        FormatArg::Github => Format::Github,
                        FormatArg::Sarif => Format::Sarif,
                    };
                    let text = if suggest_allow { report::json_with_suggestions(&report) } else { report::render(&report, format) };
                    print!("{text}");
                    report.exit_code() as u8
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    2
                }
            }
        }
    }
}

/// A finding's advice names `cargo xtask …` (the command `init` sets up);
/// run as another command (`cargo capspec`, or an xtask's `capspec`
/// subcommand), it names that one instead, which exists: it is running.
fn name_the_command(findings: &mut [capspec_codegen::Finding], bin_name: &str) {
    if bin_name == "cargo xtask" {
        return;
    }
    for finding in findings {
        finding.message = finding.message.replace("`cargo xtask ", &format!("`{bin_name} "));
    }
}
