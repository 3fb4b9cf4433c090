//! `cargo xtask`: this repo's capspec command line — the `capspec-cli`
//! library, exactly as `cargo capspec init` writes it for any project.

fn main() -> std::process::ExitCode {
    capspec_cli::main()
}
