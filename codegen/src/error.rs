//! Why a command could not run at all (exit code 2). This module imports
//! nothing from the pipeline: every step may return these errors, none of
//! them depends on another step to do so.

use std::path::PathBuf;

/// Why a command could not run at all (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum FatalError {
    /// `--root` names nothing readable, or not a directory.
    #[error("cannot read the project root `{path}`: {source}; pass an existing directory with `--root DIR`")]
    UnreadableRoot {
        /// The root as given.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// The root holds no `capspec.toml`.
    #[error(
        "no `capspec.toml` in `{path}`; create one with at least `specs = \"specs\"`, or point `--root` at the directory that holds it"
    )]
    NoConfig {
        /// The root as given.
        path: PathBuf,
    },
    /// `capspec.toml` exists but cannot be read.
    #[error("cannot read `{path}`: {source}")]
    UnreadableConfig {
        /// The config file.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// `--base` could not be read from git.
    #[error(transparent)]
    Base(#[from] BaseError),
}

/// Why the specs at `--base GIT_REF` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BaseError {
    /// git refused, or the ref is not there.
    #[error("`--base {git_ref}`: {message}")]
    Git {
        /// The ref as given.
        git_ref: String,
        /// What went wrong and how to fix it.
        message: String,
    },
}
