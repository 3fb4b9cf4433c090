//! Receipts: one per call, whatever the entrance and the outcome.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What the gate decided for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

/// Why the gate refused a call nobody answered (`denied_gate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Plan mode allows only reads.
    PlanMode,
    /// The call had to be asked and nobody could be: a headless host, a
    /// client that declared no elicitation, a client the ask did not reach.
    CannotAsk,
    /// The answer the request carried was for another call (another
    /// principal, capability or arguments).
    OtherCall,
}

impl Reason {
    /// As in records and receipts: `plan_mode`, `cannot_ask`, `other_call`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::PlanMode => "plan_mode",
            Reason::CannotAsk => "cannot_ask",
            Reason::OtherCall => "other_call",
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
    /// How a call that returned `result` ended.
    pub(crate) fn of(result: &Result<serde_json::Value, crate::error::CallError>) -> Status {
        use crate::error::ErrorCode::*;
        match result {
            Ok(_) => Status::Ok,
            // The implementation (or its server) ran, or was reached, and failed.
            Err(e) if matches!(e.code, Failed | UpstreamError | UpstreamTimeout | UpstreamUnavailable | UpstreamUnauthorized) => Status::Failed,
            Err(_) => Status::Refused,
        }
    }

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
    /// Who called (DESIGN §13): the run's principal.
    #[serde(serialize_with = "shared_str")]
    pub principal: Arc<str>,
    /// `module.name`, or the name as called when it resolved to nothing.
    pub capability: String,
    /// `None` when the call was refused before the gate (unknown name, bad
    /// arguments). Derived from the audit record's decision by the one
    /// mapping between the two vocabularies (`Decided::gate`).
    pub decision: Option<GateDecision>,
    /// Why the gate refused it unasked (`plan_mode`, `cannot_ask`,
    /// `other_call`), as the audit record's `reason`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// How the call ended.
    pub status: Status,
    /// Time from lookup to result, not counting time spent waiting for an approver.
    #[serde(rename = "ms", serialize_with = "millis")]
    pub duration: Duration,
    /// The upstream MCP server that implements the capability (DESIGN §12).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// The policies that decided the call (DESIGN §14; in log mode, those
    /// that would have), by `@id` or `file:line`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policy: Vec<String>,
}

fn shared_str<S: serde::Serializer>(s: &Arc<str>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(s)
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
