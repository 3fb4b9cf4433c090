//! agent-host: the reference host for the repo's `specs/`.
//!
//! `catalog` prints the prompt catalog of the mounted modules; `call` runs
//! one capability through the gate, the way a provider tool loop would.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use agent_host::capabilities::memory::SessionMemory;
use agent_host::workspace::Workspace;
use capspec::{Approval, ApprovalRequest, Approver, BoxFuture, Gate, HeadlessApprover, Mode, Run, SessionAllow};

const USAGE: &str = "usage:
  agent-host run FILE.js [--mode plan|default|accept-edits|auto] [--workspace DIR] [--modules a,b] [--json]
  agent-host catalog [--modules a,b]
  agent-host call NAME [ARGS_JSON] [--mode plan|default|accept-edits|auto] [--workspace DIR] [--modules a,b]

  run       run a guest JavaScript action (an ES module whose default export is the
            action, usually an async function) in QuickJS against the mounted modules.
            Prints the result and a receipts table, or with --json one object
            {\"result\", \"error\", \"receipts\": [{capability, decision, status, ms}], \"logs\"}.
  catalog   print the prompt catalog for the mounted modules (default: all)
  call      call one capability by name or alias through the gate and print
            {\"result\": …} or {\"error\", \"message\", \"capability\"}, then the receipt.
            In `ask` cases it prompts y / n / a (allow for session) on stderr when
            stdin is a terminal, and denies with a named reason when it is not.
            Defaults: --mode default, --workspace <temp dir>/agent-host-workspace.

Exit codes: run: 0 the action completed (even if it caught denied calls), 1 it threw
or hit a limit; call: 0 the call succeeded, 1 it was refused or failed; 2 usage error.";

struct Options {
    positional: Vec<String>,
    mode: Mode,
    workspace: String,
    modules: Option<Vec<String>>,
    json: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let default_workspace = std::env::temp_dir().join("agent-host-workspace").to_string_lossy().into_owned();
    let mut o = Options { positional: Vec::new(), mode: Mode::Default, workspace: default_workspace, modules: None, json: false };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--mode" => {
                let v = value("--mode")?;
                o.mode = Mode::parse(&v).ok_or_else(|| format!("unknown mode `{v}`; use plan, default, accept-edits or auto"))?;
            }
            "--workspace" => o.workspace = value("--workspace")?,
            "--modules" => o.modules = Some(value("--modules")?.split(',').map(|s| s.trim().to_string()).collect()),
            "--json" => o.json = true,
            flag if flag.starts_with("--") => return Err(format!("unknown flag `{flag}`")),
            _ => o.positional.push(arg.clone()),
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if command == "--help" || command == "-h" {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match parse(&args[1..]) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("agent-host: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let registry = match agent_host::registry() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("agent-host: {e}");
            return ExitCode::from(2);
        }
    };
    let names: Vec<String> = options.modules.clone().unwrap_or_else(|| registry.modules().iter().map(|m| m.name.to_string()).collect());
    let mounted = match registry.mount(&names.iter().map(String::as_str).collect::<Vec<_>>()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("agent-host: {e}");
            return ExitCode::from(2);
        }
    };
    match (command.as_str(), options.positional.as_slice()) {
        ("catalog", []) => {
            print!("{}", mounted.catalog());
            ExitCode::SUCCESS
        }
        ("run", [file]) => {
            let source = match std::fs::read_to_string(file) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("agent-host: cannot read `{file}`: {e}");
                    return ExitCode::from(2);
                }
            };
            let Some(run) = session_run(&options, &mounted) else { return ExitCode::from(2) };
            let outcome = capspec::guest::Guest::new(mounted.clone()).run(&run, &source);
            let receipts = run.receipts();
            if options.json {
                let value = serde_json::json!({
                    "result": outcome.result,
                    "error": outcome.error,
                    "receipts": receipts,
                    "logs": outcome.logs,
                });
                println!("{value}");
            } else {
                for line in &outcome.logs {
                    println!("{line}");
                }
                match (&outcome.result, &outcome.error) {
                    (Some(result), _) => println!("result: {}", serde_json::to_string_pretty(result).unwrap_or_default()),
                    (None, Some(error)) => println!("error: {error}"),
                    (None, None) => {}
                }
                println!("\n{:<28} {:<9} {:<8} {:>9}", "capability", "decision", "status", "ms");
                for r in &receipts {
                    let decision = r.decision.map(|d| format!("{d:?}").to_lowercase()).unwrap_or_else(|| "-".into());
                    let status = format!("{:?}", r.status).to_lowercase();
                    println!("{:<28} {:<9} {:<8} {:>9.3}", r.capability, decision, status, r.duration.as_secs_f64() * 1000.0);
                }
            }
            if outcome.error.is_none() { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        ("call", [name, rest @ ..]) if rest.len() <= 1 => {
            let args_json = rest.first().map(String::as_str).unwrap_or("{}");
            let Ok(arguments) = serde_json::from_str::<serde_json::Value>(args_json) else {
                eprintln!("agent-host: ARGS_JSON is not JSON: {args_json}");
                return ExitCode::from(2);
            };
            let Some(run) = session_run(&options, &mounted) else { return ExitCode::from(2) };
            let request = serde_json::json!({ "name": name, "arguments": arguments }).to_string();
            let reply = capspec::testing::block_on(mounted.invoke_json(&run, &request));
            println!("{reply}");
            for receipt in run.receipts() {
                eprintln!("receipt: {}", serde_json::to_string(&receipt).expect("receipts serialize"));
            }
            let ok = serde_json::from_str::<serde_json::Value>(&reply).is_ok_and(|v| v.get("result").is_some());
            if ok { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// A run for this invocation: the workspace, session memory, the mounted
/// modules (for `run_plan`), and an approver that asks on the terminal when
/// there is one and denies with a named reason when there is not.
fn session_run(options: &Options, mounted: &capspec::Mounted) -> Option<Run> {
    let workspace = match Workspace::new(&options.workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("agent-host: cannot use workspace `{}`: {e}", options.workspace);
            return None;
        }
    };
    let approver: Arc<dyn Approver> = if std::io::stdin().is_terminal() {
        Arc::new(TerminalApprover)
    } else {
        Arc::new(HeadlessApprover::new("agent-host (stdin is not a terminal)"))
    };
    Some(Run::new(Gate::new(options.mode, approver, SessionAllow::new())).with(workspace).with(SessionMemory::default()).with(mounted.clone()))
}

/// Asks on the terminal: y (once) / n / a (allow for the session).
struct TerminalApprover;

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            let what = request.message.clone().unwrap_or_else(|| format!("call {}", request.capability));
            let mut stderr = std::io::stderr();
            let _ = write!(stderr, "{what} — allow {} ({})? [y]es / [n]o / [a]lways this session: ", request.capability, request.category);
            let _ = stderr.flush();
            let mut line = String::new();
            let _ = std::io::stdin().lock().read_line(&mut line);
            match line.trim() {
                "y" | "yes" => Approval::AllowOnce,
                "a" | "always" => Approval::AllowForSession,
                _ => Approval::Deny("the user declined".into()),
            }
        })
    }
}
