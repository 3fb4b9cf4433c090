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
//! CPU metering), `globals` (`console`, `capabilities()`), `limits`; the
//! JavaScript the host itself runs lives in `js/`.

mod bridge;
mod event_loop;
mod globals;
mod limits;
mod loader;
mod outcome;
mod settings;
mod state;

use crate::registry::Mounted;
use crate::run::Run;

pub use limits::GuestLimits;
pub use outcome::{GuestError, GuestOutcome, LimitKind};

/// What a model needs to know to write an action, before the catalog of
/// what it may import: the MCP tool `execute_code`'s description is this
/// and the mounted catalog, and a host's own prompt may use it the same way.
pub const ACTION_CONTRACT: &str = "Run a JavaScript action against this session's capabilities.\n\n\
`code` is an ES module. Import the modules listed below by their specifiers; \
its default export is the action — a value, or an (async) function whose awaited \
return value is the result. Every capability call returns a promise and passes \
the host's permission gate; a refused call throws an `Error` whose `.code` is one of \
`unknown_capability`, `ambiguous_capability`, `invalid_arguments`, `permission_denied`, \
`blocked_in_plan_mode`, `failed`, `timeout`, `limit_exceeded` (or, for a capability an upstream MCP \
server implements, `upstream_changed`, `upstream_unavailable`, `upstream_timeout`, `upstream_error`, `upstream_unauthorized`), \
which the action may catch. \
While a call waits for approval the action may be run again from its start, each call it already made \
answered as before (so are `Date` and `Math.random`): make the same calls in the same order every time; \
one that differs ends the action with `replay_diverged`. \
`await capabilities.search(query)` finds capabilities the catalog lists by name only, \
with their signatures. Each catalog entry gives the category, then the signature \
(`?` optional, `= default`, bounds in parentheses, `/* … */` what a parameter is; a parameter \
without a type is a string; enum values that are plain words are unquoted; `bytes(…)` is \
base64 text as an argument and `{mimeType, data}` in a result). \
`console.*` lines come back as `logs`. The result is `{result, error, receipts, logs}`; \
it is an error when the action threw or hit a limit (CPU time, memory, stack, calls, output).";
use settings::Settings;

/// Runs guest actions against a session's mounted modules.
#[derive(Clone)]
pub struct Guest {
    settings: Settings,
}

impl Guest {
    /// A guest host for `mounted`, with the default import specifier
    /// (`@capspec/host`) and bridge (`capspec:bridge`) of `capspec.toml`.
    pub fn new(mounted: Mounted) -> Guest {
        Guest { settings: Settings { mounted, specifier: "@capspec/host".into(), bridge: "capspec:bridge".into(), limits: GuestLimits::DEFAULT } }
    }

    /// The `[generate] specifier` the facades were generated with.
    pub fn specifier(mut self, specifier: &str) -> Guest {
        self.settings.specifier = specifier.to_string();
        self
    }

    /// The `[generate] bridge` the facades were generated with.
    pub fn bridge(mut self, bridge: &str) -> Guest {
        self.settings.bridge = bridge.to_string();
        self
    }

    /// The session whose modules actions import.
    pub fn mounted(&self) -> &Mounted {
        &self.settings.mounted
    }

    /// The import specifier prefix: modules are `<specifier>/<module>`.
    pub fn import_specifier(&self) -> &str {
        &self.settings.specifier
    }

    /// Limits, clamped to [`GuestLimits::CEILING`].
    pub fn limits(mut self, limits: GuestLimits) -> Guest {
        self.settings.limits = limits.clamped();
        self
    }

    /// Run an action (ES module source) to completion under `run`.
    ///
    /// With a stack limit up to the default (512 KiB) the JavaScript runs on
    /// the calling thread, which must then have at least Rust's default 2 MiB
    /// of stack (every thread `std` or tokio spawns does; the main thread has
    /// 8 MiB). With a larger limit it runs on a thread of its own sized to
    /// the limit plus headroom, so the engine's stack guard — not the
    /// caller's thread size — is what a deep recursion meets.
    pub fn run(&self, run: &Run, source: &str) -> GuestOutcome {
        const HEADROOM: usize = 2 * 1024 * 1024;
        // The action's span is the parent of its calls' spans, on whichever
        // thread the engine and the calls run.
        let span = crate::trace::action(source.len());
        if self.settings.limits.stack_bytes <= GuestLimits::DEFAULT.stack_bytes {
            let _entered = span.enter();
            return std::thread::scope(|scope| event_loop::run(&self.settings, scope, run, source));
        }
        let test = crate::coverage::inherit();
        std::thread::scope(|scope| {
            let engine = std::thread::Builder::new()
                .name("capspec-guest".into())
                .stack_size(self.settings.limits.stack_bytes + HEADROOM)
                .spawn_scoped(scope, || {
                    test.enter();
                    let _entered = span.enter();
                    event_loop::run(&self.settings, scope, run, source)
                });
            match engine.map(|t| t.join()) {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(e) => GuestOutcome {
                    result: None,
                    error: Some(GuestError::Load { message: format!("cannot start the guest's thread: {e}") }),
                    logs: Vec::new(),
                    cpu_time: std::time::Duration::ZERO,
                },
            }
        })
    }
}
