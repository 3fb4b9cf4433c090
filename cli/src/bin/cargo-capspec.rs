//! `cargo capspec …`: the capspec command line as a cargo subcommand.

fn main() -> std::process::ExitCode {
    capspec_cli::main()
}
