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
  agent-host catalog [--modules a,b]
  agent-host call NAME [ARGS_JSON] [--mode plan|default|accept-edits|auto] [--workspace DIR] [--modules a,b]

  catalog   print the prompt catalog for the mounted modules (default: all)
  call      call one capability by name or alias through the gate and print
            {\"result\": …} or {\"error\", \"message\", \"capability\"}, then the receipt.
            In `ask` cases it prompts y / n / a (allow for session) on stderr when
            stdin is a terminal, and denies with a named reason when it is not.
            Defaults: --mode default, --workspace . (the current directory).

Exit codes: 0 the call succeeded, 1 it was refused or failed, 2 usage error.";

struct Options {
    positional: Vec<String>,
    mode: Mode,
    workspace: String,
    modules: Option<Vec<String>>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options { positional: Vec::new(), mode: Mode::Default, workspace: ".".into(), modules: None };
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
        ("call", [name, rest @ ..]) if rest.len() <= 1 => {
            let args_json = rest.first().map(String::as_str).unwrap_or("{}");
            let Ok(arguments) = serde_json::from_str::<serde_json::Value>(args_json) else {
                eprintln!("agent-host: ARGS_JSON is not JSON: {args_json}");
                return ExitCode::from(2);
            };
            let workspace = match Workspace::new(&options.workspace) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("agent-host: cannot use workspace `{}`: {e}", options.workspace);
                    return ExitCode::from(2);
                }
            };
            let approver: Arc<dyn Approver> = if std::io::stdin().is_terminal() {
                Arc::new(TerminalApprover)
            } else {
                Arc::new(HeadlessApprover::new("agent-host (stdin is not a terminal)"))
            };
            let run = Run::new(Gate::new(options.mode, approver, SessionAllow::new()))
                .with(workspace)
                .with(SessionMemory::default())
                .with(mounted.clone());
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
