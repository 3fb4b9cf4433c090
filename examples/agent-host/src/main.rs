//! agent-host: the reference host for the repo's `specs/`.
//!
//! Today it embeds the generated bindings and prints the prompt catalog for
//! the modules a session mounts. Running guest actions through the gate
//! arrives with the runtime and the guest host.

mod generated;

use std::process::ExitCode;

const USAGE: &str = "usage: agent-host catalog [--modules a,b]

  catalog   print the prompt catalog for the mounted modules (default: all)

Modules: memory, notes, plan, shell, web, workspace";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("catalog") => catalog(&args[1..]),
        Some("--help" | "-h") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn catalog(args: &[String]) -> ExitCode {
    let wanted: Option<Vec<&str>> = match args {
        [] => None,
        [flag, list] if flag == "--modules" => Some(list.split(',').map(str::trim).collect()),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(names) = &wanted {
        for name in names {
            if !generated::MODULES.iter().any(|m| m.name == *name) {
                let known: Vec<&str> = generated::MODULES.iter().map(|m| m.name).collect();
                eprintln!("agent-host: unknown module `{name}`; known modules: {}", known.join(", "));
                return ExitCode::from(2);
            }
        }
    }
    let sections: Vec<&str> = generated::MODULES
        .iter()
        .filter(|m| wanted.as_ref().is_none_or(|w| w.contains(&m.name)))
        .map(|m| m.catalog)
        .collect();
    print!("{}", sections.join("\n"));
    ExitCode::SUCCESS
}
