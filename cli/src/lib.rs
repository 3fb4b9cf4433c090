//! The capspec command line, once: `sync`, `check`, `scaffold`, `coverage`,
//! `import` and `init`, as a library a project's `xtask` calls in one line
//! and as the `cargo-capspec` binary (`cargo install --locked capspec-cli`, then
//! `cargo capspec check`).
//!
//! A project's `xtask/src/main.rs`:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     capspec_cli::main()
//! }
//! ```
//!
//! Commands, flags, output and exit codes are the same whichever way it
//! runs: `0` nothing to report, `1` at least one error finding, `2` the
//! command could not run.
//!
//! The default feature `mimalloc` makes mimalloc the global allocator of
//! the binary that links this crate (the generator runs about a quarter
//! faster with it). A binary with its own `#[global_allocator]` turns it off
//! with `default-features = false`.

#![warn(missing_docs)]

/// The crates `cargo capspec init` builds at `opt-level = 3` in a project's
/// dev profile (the one `cargo xtask` runs in): the generator, and the
/// crates it spends its time in — YAML parsing, Rust formatting, JSON,
/// templates, the allocator. This repo's `Cargo.toml` carries the same
/// overrides (a test holds them equal). Not this crate: the command line
/// spends none of a run's time, and optimising it cost every first build
/// two minutes on two cores (BENCHMARKS.md, "CI").
pub const DEV_OPTIMIZED: [&str; 10] = [
    "capspec-codegen",
    "capspec-names",
    "saphyr-parser",
    "syn",
    "proc-macro2",
    "quote",
    "prettyplease",
    "serde_json",
    "minijinja",
    "libmimalloc-sys",
];

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::ffi::OsString;
use std::process::ExitCode;

mod args;
mod audit;
mod auth;
mod commands;
mod init;
mod live;
pub mod reference;
mod root;
#[cfg(feature = "live")]
mod serve;
#[cfg(feature = "live")]
pub use serve::upstream_modules;

/// Run the command line on this process's arguments. Called as the cargo
/// subcommand `cargo capspec …` (argument 1 is then `capspec`) it shows
/// itself as `cargo capspec`; otherwise as `cargo xtask`.
pub fn main() -> ExitCode {
    run(std::env::args_os())
}

/// Run the command line on `args` (the program name first), as [`main`]
/// does with the process's arguments.
///
/// ```
/// use std::process::ExitCode;
/// // `--help` prints the commands and succeeds; a bad flag is exit code 2.
/// assert_eq!(capspec_cli::run(["xtask", "--help"].map(Into::into)), ExitCode::SUCCESS);
/// assert_eq!(capspec_cli::run(["xtask", "check", "--no-such-flag"].map(Into::into)), ExitCode::from(2));
/// ```
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    ExitCode::from(exit_code(args.into_iter().collect()))
}

/// For a project whose `xtask` has tasks of its own: the capspec commands
/// as its `capspec` task. When this process's first argument is `capspec`
/// (`cargo xtask capspec check`), run the command line on the arguments
/// after it and exit the process with its code; otherwise return at once,
/// and the xtask's own tasks run. Call it first in the xtask's `main`:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     capspec_cli::run_subcommand();
///     // … the project's own tasks (`cargo xtask dist`, …)
///     std::process::ExitCode::SUCCESS
/// }
/// ```
pub fn run_subcommand() {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "capspec") {
        std::process::exit(exit_code(args).into());
    }
}

/// The command line on `args`; its exit code. A first argument `capspec`
/// is the subcommand's name: as `cargo capspec …` (the binary
/// `cargo-capspec`) or `cargo xtask capspec …` (an xtask calling
/// [`run_subcommand`]); otherwise the program shows itself as `cargo xtask`.
fn exit_code(mut args: Vec<OsString>) -> u8 {
    let bin_name = if args.get(1).is_some_and(|a| a == "capspec") {
        args.remove(1);
        let installed = args.first().and_then(|p| std::path::Path::new(p).file_stem()).is_some_and(|s| s.to_string_lossy().starts_with("cargo-capspec"));
        if installed { "cargo capspec" } else { "cargo xtask capspec" }
    } else {
        "cargo xtask"
    };
    commands::run(args, bin_name)
}
