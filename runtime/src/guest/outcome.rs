//! What a guest run produced: its value, or how it ended instead.

use std::time::Duration;

use serde::Serialize;

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
    /// A resumed action made another call at a journaled position than it
    /// made the first time (`replay_diverged`, DESIGN §10); nothing ran after it.
    #[serde(rename = "replay_diverged")]
    Diverged {
        /// The position and both calls.
        message: String,
    },
    /// A replayed action's call must ask, and the client answers in the next
    /// round: the round ends here (the MCP server answers `input_required`).
    Suspended {
        /// The capability that asks.
        capability: String,
    },
}

impl std::fmt::Display for GuestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuestError::Threw { message, code: Some(code) } => write!(f, "the action threw ({code}): {message}"),
            GuestError::Threw { message, code: None } => write!(f, "the action threw: {message}"),
            GuestError::Limit { limit, message } => write!(f, "limit `{}` reached: {message}", limit.as_str()),
            GuestError::Load { message } => write!(f, "the action could not be loaded: {message}"),
            GuestError::Diverged { message } => write!(f, "replay_diverged: {message}"),
            GuestError::Suspended { capability } => write!(f, "the action waits for the client to approve `{capability}`"),
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

impl GuestOutcome {
    /// The run's report, as `agent-host run --json` prints it and the MCP
    /// `execute_code` tool returns it: `{"result", "error", "receipts", "logs"}`.
    pub fn report(&self, run: &crate::Run) -> serde_json::Value {
        serde_json::json!({
            "result": self.result,
            "error": self.error,
            "receipts": run.receipts(),
            "logs": self.logs,
        })
    }
}

/// Which limit ended a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// Time spent executing JavaScript.
    CpuTime,
    /// Guest heap.
    Memory,
    /// Guest call stack.
    Stack,
    /// Capability calls per run.
    Calls,
    /// Result plus captured logs.
    Output,
    /// Asks of one action resumed by replay (`--max-rounds`, DESIGN §10).
    Rounds,
    /// The sealed state of an action resumed by replay (`--max-state-bytes`).
    StateBytes,
}

impl LimitKind {
    /// The limit's name, as in `--json` output.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::CpuTime => "cpu_time",
            LimitKind::Memory => "memory",
            LimitKind::Stack => "stack",
            LimitKind::Calls => "calls",
            LimitKind::Output => "output",
            LimitKind::Rounds => "rounds",
            LimitKind::StateBytes => "state_bytes",
        }
    }
}

