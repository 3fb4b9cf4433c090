//! Receipts: one per call, whatever the entrance and the outcome.

use std::time::Duration;

use serde::Serialize;

/// What the gate decided for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateDecision {
    /// Allowed by the mode × category matrix without asking.
    Auto,
    /// Allowed by the approver, now or earlier in the session.
    Approved,
    /// Refused by the approver (or nobody could be asked).
    Denied,
    /// Refused by plan mode.
    Blocked,
}

impl GateDecision {
    /// As in receipts: `auto`, `approved`, `denied`, `blocked`.
    pub fn as_str(self) -> &'static str {
        match self {
            GateDecision::Auto => "auto",
            GateDecision::Approved => "approved",
            GateDecision::Denied => "denied",
            GateDecision::Blocked => "blocked",
        }
    }
}

/// How the call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The implementation ran and returned a result.
    Ok,
    /// The implementation ran and returned an error.
    Failed,
    /// The call never reached the implementation.
    Refused,
}

impl Status {
    /// As in receipts: `ok`, `failed`, `refused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Refused => "refused",
        }
    }
}

/// What one call did: the capability, the gate's decision, how it ended and how long it took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// `module.name`, or the name as called when it resolved to nothing.
    pub capability: String,
    /// `None` when the call was refused before the gate (unknown name, bad arguments).
    pub decision: Option<GateDecision>,
    /// How the call ended.
    pub status: Status,
    /// Time from lookup to result, not counting time spent waiting for an approver.
    #[serde(rename = "ms", serialize_with = "millis")]
    pub duration: Duration,
    /// The upstream MCP server that implements the capability (DESIGN §12).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0)
}

impl Receipt {
    /// The receipt without its duration, for comparing entrances.
    pub fn outcome(&self) -> (&str, Option<GateDecision>, Status) {
        (&self.capability, self.decision, self.status)
    }
}
