//! The guest host (feature `quickjs`): a model-written JavaScript action runs
//! in QuickJS against the generated facades of the session's mounted modules.
//!
//! - The action is an ES module. It imports capability modules as
//!   `<specifier>/<module>`; the loader serves the generated facade of a
//!   mounted module and refuses everything else, naming what is mounted.
//! - Facades import `call` from the private bridge; the bridge is served only
//!   to facades, and the native dispatcher behind it only to the bridge.
//!   Dynamic `import()` is never resolved.
//! - Each bridge call is checked (module, export, argument shape) and then
//!   goes through [`Mounted::invoke`] — the one ladder. Host functions never
//!   reject: failures come back as data, and the bridge rethrows them as a
//!   JS `Error` with `.code`.
//! - Calls started together run together: each runs on its own thread while
//!   the engine waits; only time spent executing JavaScript counts against
//!   the CPU limit, so waiting on a person to approve costs nothing.
//! - Limits (CPU time, memory, stack, calls, output) each end the run with a
//!   named reason.
//!
//! One job per file: `loader` (what an import may resolve to), `bridge`
//! (the native dispatcher behind the facades), `event_loop` (jobs, calls,
//! CPU metering), `globals` (`console`, `capabilities()`), [`limits`]; the
//! JavaScript the host itself runs lives in `js/`.

mod bridge;
mod event_loop;
mod globals;
mod limits;
mod loader;

use std::time::Duration;

use serde::Serialize;

use crate::registry::Mounted;
use crate::run::Run;

pub use limits::{GuestLimits, LimitKind};

/// How a guest run ended when it did not complete.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GuestError {
    /// The action threw (or its promise rejected) and did not catch it.
    Threw {
        /// The error's message.
        message: String,
        /// Its `.code`, when it has one (a refused capability call).
        code: Option<String>,
    },
    /// A limit ended the run.
    Limit {
        /// Which limit.
        limit: LimitKind,
        /// The limit and its value, in words.
        message: String,
    },
    /// The action could not be loaded (syntax error, refused import).
    Load {
        /// What could not be loaded, and why.
        message: String,
    },
}

impl std::fmt::Display for GuestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuestError::Threw { message, code: Some(code) } => write!(f, "the action threw ({code}): {message}"),
            GuestError::Threw { message, code: None } => write!(f, "the action threw: {message}"),
            GuestError::Limit { limit, message } => write!(f, "limit `{}` reached: {message}", limit.as_str()),
            GuestError::Load { message } => write!(f, "the action could not be loaded: {message}"),
        }
    }
}

/// What a guest run produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuestOutcome {
    /// The action's value as JSON, when it completed.
    pub result: Option<serde_json::Value>,
    /// How the run failed, when it did not complete.
    pub error: Option<GuestError>,
    /// Captured `console.*` lines.
    pub logs: Vec<String>,
    /// Time spent executing JavaScript.
    #[serde(skip)]
    pub cpu_time: Duration,
}

/// Runs guest actions against a session's mounted modules.
#[derive(Clone)]
pub struct Guest {
    mounted: Mounted,
    specifier: String,
    bridge: String,
    limits: GuestLimits,
}

impl Guest {
    /// A guest host for `mounted`, with the default import specifier
    /// (`@capspec/host`) and bridge (`capspec:bridge`) of `capspec.toml`.
    pub fn new(mounted: Mounted) -> Guest {
        Guest { mounted, specifier: "@capspec/host".into(), bridge: "capspec:bridge".into(), limits: GuestLimits::DEFAULT }
    }

    /// The `[generate] specifier` the facades were generated with.
    pub fn specifier(mut self, specifier: &str) -> Guest {
        self.specifier = specifier.to_string();
        self
    }

    /// The `[generate] bridge` the facades were generated with.
    pub fn bridge(mut self, bridge: &str) -> Guest {
        self.bridge = bridge.to_string();
        self
    }

    /// Limits, clamped to [`GuestLimits::CEILING`].
    pub fn limits(mut self, limits: GuestLimits) -> Guest {
        self.limits = limits.clamped();
        self
    }

    /// Run an action (ES module source) to completion under `run`.
    pub fn run(&self, run: &Run, source: &str) -> GuestOutcome {
        std::thread::scope(|scope| event_loop::run(self, scope, run, source))
    }
}
