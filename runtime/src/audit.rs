//! The audit trail a host attaches to its runs (`Run::with_audit`): for
//! every call, a *decision record* before its impl runs and an *outcome
//! record* after it (DESIGN §15). The decision record is stored first: a
//! call whose record the sink cannot take does not run, and ends
//! `audit_unavailable`. A refused call gets its decision record too (it
//! never runs, so it has no outcome).
//!
//! The runtime only describes the calls; an [`AuditSink`] keeps them. The
//! serve store (`capspec-store`) is the sink `serve` attaches: it seals
//! arguments and results as keyed hashes and chains the records.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;

use crate::gate::{BoxFuture, Mode};
use crate::principal::Principal;

/// What the ladder decided for a call, as the audit log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decided {
    /// The mode × category matrix (and the policies) let it run unasked.
    Allowed,
    /// Asked, and the approver allowed it (now or earlier in the session).
    Approved,
    /// Asked, and the person declined (or dismissed the ask).
    Declined,
    /// A policy denied it.
    DeniedPolicy,
    /// The caller's scopes leave its category out.
    DeniedScope,
    /// The gate refused it without a person's answer: plan mode, a client
    /// that could not be asked, an answer presented for another call (the
    /// [`Reason`] says which).
    DeniedGate,
    /// Its arguments do not match the input schema.
    InvalidArguments,
    /// No capability (or more than one) by that name is mounted.
    UnknownCapability,
    /// The run's call budget was used up.
    LimitExceeded,
    /// A resumed action made another call than its journal holds.
    ReplayDiverged,
    /// A resumed action's call, answered from its journal (it ran before).
    Replayed,
    /// Suspended on an ask a later round answers: nothing is recorded yet.
    Waiting,
}

impl Decided {
    /// As in the records: `allowed`, `denied_policy`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Decided::Allowed => "allowed",
            Decided::Approved => "approved",
            Decided::Declined => "declined",
            Decided::DeniedPolicy => "denied_policy",
            Decided::DeniedScope => "denied_scope",
            Decided::DeniedGate => "denied_gate",
            Decided::InvalidArguments => "invalid_arguments",
            Decided::UnknownCapability => "unknown_capability",
            Decided::LimitExceeded => "limit_exceeded",
            Decided::ReplayDiverged => "replay_diverged",
            Decided::Replayed => "replayed",
            Decided::Waiting => "waiting",
        }
    }

    /// Every decision.
    pub const ALL: [Decided; 12] = [
        Decided::Allowed,
        Decided::Approved,
        Decided::Declined,
        Decided::DeniedPolicy,
        Decided::DeniedScope,
        Decided::DeniedGate,
        Decided::InvalidArguments,
        Decided::UnknownCapability,
        Decided::LimitExceeded,
        Decided::ReplayDiverged,
        Decided::Replayed,
        Decided::Waiting,
    ];

    /// Whether a record can carry it (a call still waiting has none).
    pub fn recorded(self) -> bool {
        self != Decided::Waiting
    }

    /// Whether the impl runs after this decision.
    pub fn runs(self) -> bool {
        matches!(self, Decided::Allowed | Decided::Approved)
    }

    /// The receipt's and the span's word for this decision (DESIGN §7:
    /// `auto`, `approved`, `denied`, `blocked`; `None` for a call refused
    /// before the gate or still waiting). The one mapping between the two
    /// vocabularies: every receipt and span takes its word from here.
    pub fn gate(self, reason: Option<Reason>) -> Option<crate::receipt::GateDecision> {
        use crate::receipt::GateDecision;
        match self {
            Decided::Allowed => Some(GateDecision::Auto),
            Decided::Approved => Some(GateDecision::Approved),
            Decided::DeniedGate if reason == Some(Reason::PlanMode) => Some(GateDecision::Blocked),
            Decided::Declined | Decided::DeniedPolicy | Decided::DeniedScope | Decided::DeniedGate => Some(GateDecision::Denied),
            Decided::InvalidArguments | Decided::UnknownCapability | Decided::LimitExceeded | Decided::ReplayDiverged | Decided::Replayed | Decided::Waiting => None,
        }
    }
}

pub use crate::receipt::Reason;

/// Which record: the decision before the impl, or the outcome after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// Before the impl (or instead of it, for a refused call).
    Decision,
    /// After the impl.
    Outcome,
    /// A person authorized capspec to call a `per-user` upstream as them
    /// (the browser step finished; DESIGN §12).
    Authorization,
    /// A person's credential for a `per-user` upstream was forgotten
    /// (`auth revoke`).
    Revocation,
}

impl RecordKind {
    /// As in the records: `decision`, `outcome`, `authorization`,
    /// `revocation`.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Decision => "decision",
            RecordKind::Outcome => "outcome",
            RecordKind::Authorization => "authorization",
            RecordKind::Revocation => "revocation",
        }
    }
}

/// The record of an authorization or a revocation: who (`principal`),
/// which upstream, through what (`surface`: `browser`, `cli`).
pub fn event(kind: RecordKind, principal: &str, upstream: &str, surface: &str) -> AuditRecord {
    AuditRecord {
        kind,
        time_ms: now_ms(),
        call: NEXT_CALL.fetch_add(1, Ordering::Relaxed),
        principal: principal.to_string(),
        groups: Vec::new(),
        surface: surface.to_string(),
        request: None,
        trace_id: None,
        capability: format!("upstream:{upstream}"),
        category: None,
        mode: String::new(),
        decision: None,
        reason: None,
        policies: Vec::new(),
        answered_by: None,
        upstream: Some(upstream.to_string()),
        args: None,
        sent_args: None,
        status: Some("ok".to_string()),
        duration_ms: None,
        result: None,
    }
}

/// One audit record, as the runtime describes it. A sink stores it; the
/// serve store replaces `args` and `result` by keyed hashes unless told to
/// keep argument values.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord {
    /// Decision or outcome.
    pub kind: RecordKind,
    /// Milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The call this record is about; a decision and its outcome share it.
    pub call: u64,
    /// Who called (`Principal::id`).
    pub principal: String,
    /// Their groups.
    pub groups: Vec<String>,
    /// The surface the call came through (`tools`, `code`, `in_process`, …).
    pub surface: String,
    /// The MCP request the call belongs to, if any: its JSON-RPC id, as
    /// `SESSION/ID` within a 2025-11-25 HTTP session.
    pub request: Option<String>,
    /// The call's trace id (W3C, hex), when a trace carries it.
    pub trace_id: Option<String>,
    /// The capability as resolved (`module.name`), or the name as called.
    pub capability: String,
    /// Its safety category, when it resolved.
    pub category: Option<String>,
    /// The permission mode the call was decided in.
    pub mode: String,
    /// What the ladder decided (decision records).
    pub decision: Option<Decided>,
    /// Why the gate refused it, for `denied_gate`.
    pub reason: Option<Reason>,
    /// The policies that decided, by `@id`.
    pub policies: Vec<String>,
    /// Who answered an ask: the principal whose client answered
    /// (`approved` and `declined` only: a person was asked and answered).
    pub answered_by: Option<String>,
    /// The upstream server that serves the capability, if any.
    pub upstream: Option<String>,
    /// The validated arguments (decision records of resolved calls).
    pub args: Option<Value>,
    /// The arguments as the client sent them, where they differ from
    /// `args` (defaults applied, values coerced) or the call was refused
    /// before validation: `audit query --arguments` finds a call by what
    /// its caller typed too.
    pub sent_args: Option<Value>,
    /// How it ended (outcome records): `ok` or the error code.
    pub status: Option<String>,
    /// Its duration in milliseconds (outcome records).
    pub duration_ms: Option<f64>,
    /// Its result (outcome records of calls that succeeded).
    pub result: Option<Value>,
}

/// Where a run's audit records go.
pub trait AuditSink: Send + Sync {
    /// Store a decision record durably before the call goes on. `Err` (why
    /// not) means the call must not run.
    fn decision(&self, record: AuditRecord) -> BoxFuture<'_, Result<(), String>>;
    /// Store an outcome record. It is not waited for by anyone but the
    /// call that made it; a failure is logged by the sink.
    fn outcome(&self, record: AuditRecord) -> BoxFuture<'_, ()>;
}

/// A run's audit: the sink and what the host knows of the request.
#[derive(Clone)]
pub struct Audit {
    sink: Arc<dyn AuditSink>,
    surface: String,
    request: Option<String>,
    trace: Option<String>,
}

impl Audit {
    /// Records of this run go to `sink`, labelled with `surface`.
    pub fn new(sink: Arc<dyn AuditSink>, surface: &str) -> Audit {
        Audit { sink, surface: surface.to_string(), request: None, trace: None }
    }

    /// Label the records with the MCP session or request id.
    pub fn with_request(mut self, request: impl Into<String>) -> Audit {
        self.request = Some(request.into());
        self
    }

    /// Label the records with the W3C trace id (32 hex digits) their
    /// calls' spans are exported under, if any.
    pub fn with_trace(mut self, trace_id: Option<String>) -> Audit {
        self.trace = trace_id;
        self
    }
}

static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// What the ladder knows of a call when it records it.
pub(crate) struct Call<'a> {
    pub(crate) capability: &'a str,
    pub(crate) category: Option<&'static str>,
    pub(crate) upstream: Option<&'a str>,
    pub(crate) decided: Decided,
    pub(crate) reason: Option<Reason>,
    pub(crate) policies: &'a [String],
    pub(crate) args: Option<&'a Value>,
    /// The arguments as sent.
    pub(crate) sent: Option<&'a Value>,
}

/// Who calls and in which mode: what a run adds to its calls' records.
pub(crate) struct Caller<'a> {
    pub(crate) audit: &'a Audit,
    pub(crate) principal: &'a Principal,
    pub(crate) mode: Mode,
}

fn record(caller: &Caller<'_>, kind: RecordKind, call: u64, c: &Call<'_>) -> AuditRecord {
    let (audit, principal) = (caller.audit, caller.principal);
    AuditRecord {
        kind,
        time_ms: now_ms(),
        call,
        principal: principal.id().to_string(),
        groups: principal.groups().to_vec(),
        surface: audit.surface.clone(),
        request: audit.request.clone(),
        // The W3C trace id of the exported spans; a `tracing` span id is
        // no trace id, so without an export none is claimed.
        trace_id: audit.trace.clone(),
        capability: c.capability.to_string(),
        category: c.category.map(str::to_string),
        mode: caller.mode.as_str().to_string(),
        decision: (kind == RecordKind::Decision).then_some(c.decided),
        reason: if kind == RecordKind::Decision { c.reason } else { None },
        policies: c.policies.to_vec(),
        answered_by: matches!(c.decided, Decided::Approved | Decided::Declined).then(|| principal.id().to_string()),
        upstream: c.upstream.map(str::to_string),
        args: if kind == RecordKind::Decision { c.args.cloned() } else { None },
        sent_args: if kind == RecordKind::Decision { c.sent.filter(|sent| Some(*sent) != c.args).cloned() } else { None },
        status: None,
        duration_ms: None,
        result: None,
    }
}

/// The decision record of a call about to run: stored before it runs.
/// `Ok(Some(id))` to pass to [`outcome`]; `Ok(None)` without an audit;
/// `Err` (why) when the record could not be stored.
pub(crate) async fn before(caller: Option<Caller<'_>>, call: &Call<'_>) -> Result<Option<u64>, String> {
    let Some(caller) = caller else { return Ok(None) };
    let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
    caller.audit.sink.decision(record(&caller, RecordKind::Decision, id, call)).await?;
    Ok(Some(id))
}

/// The decision record of a refused call (it never runs). A record the
/// sink cannot take is logged; the call is refused either way.
pub(crate) async fn refused(caller: Caller<'_>, call: &Call<'_>) {
    if call.decided == Decided::Waiting {
        return;
    }
    let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
    if let Err(why) = caller.audit.sink.decision(record(&caller, RecordKind::Decision, id, call)).await {
        tracing::warn!(capability = call.capability, "the audit log did not take a refused call's decision record: {why}");
    }
}

/// The outcome record of call `id`: its status, duration and result.
pub(crate) async fn outcome(caller: Caller<'_>, id: u64, call: &Call<'_>, result: &Result<Value, crate::CallError>, duration: Duration) {
    let mut rec = record(&caller, RecordKind::Outcome, id, call);
    rec.status = Some(match result {
        Ok(_) => "ok".to_string(),
        Err(e) => e.code.as_str().to_string(),
    });
    rec.duration_ms = Some(duration.as_secs_f64() * 1000.0);
    rec.result = result.as_ref().ok().cloned();
    caller.audit.sink.outcome(rec).await;
}
