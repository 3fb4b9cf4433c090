//! Pieces of `invoke`'s ladder that are not the registry's: where a call
//! got to, its arguments coerced and validated, how a refusal describes
//! what was passed, a `user_message` filled in, and a panicking impl
//! contained.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;

use crate::audit::{Decided, Reason};
use crate::coerce;
use crate::error::{CallError, ErrorCode};
use crate::receipt::GateDecision;
use crate::validate::Validator;

/// Where a call got to on the ladder: the name it resolved to, the entry,
/// the gate's decision, the result, and what a replay journals of it. `E`
/// is the registry's entry.
pub(crate) struct Reached<'a, E> {
    pub(crate) capability: &'a str,
    pub(crate) entry: Option<&'a E>,
    /// The decision a replayed call's journal holds (else the receipt's
    /// word comes from `decided`, through [`Decided::gate`]).
    pub(crate) replayed: Option<GateDecision>,
    pub(crate) result: Result<Value, CallError>,
    pub(crate) journal: Journaled,
    /// The policies that decided (DESIGN §14), or would have in log mode.
    pub(crate) policy: Vec<String>,
    /// What was decided, as the audit log names it.
    pub(crate) decided: Decided,
    /// Why the gate refused it unasked (`denied_gate`).
    pub(crate) reason: Option<Reason>,
    /// The id of its stored decision record, when it ran under an audit.
    pub(crate) audited: Option<u64>,
}

impl<'a, E> Reached<'a, E> {
    pub(crate) fn refused(capability: &'a str, entry: Option<&'a E>, err: CallError) -> Reached<'a, E> {
        let decided = match err.code {
            ErrorCode::InvalidArguments => Decided::InvalidArguments,
            ErrorCode::LimitExceeded => Decided::LimitExceeded,
            ErrorCode::ReplayDiverged => Decided::ReplayDiverged,
            _ => Decided::UnknownCapability,
        };
        Reached { capability, entry, replayed: None, result: Err(err), journal: Journaled::Not, policy: Vec::new(), decided, reason: None, audited: None }
    }
}

/// A call of a replayed action, as its journal sees it.
pub(crate) enum Journaled {
    /// Not a replayed action's call, or refused before its journal was consulted.
    Not,
    /// New: journal it (the digest of its validated arguments).
    Record(String),
    /// Answered from the journal (its receipt's duration, in microseconds).
    Replayed(u64),
    /// Suspended on an ask the client answers in a later round.
    Waiting,
}

/// Coerce, apply defaults and validate; the message of a refusal names the capability,
/// what is wrong, and what was passed.
pub(crate) fn arguments(qualified: &str, validator: &Validator, args: Value) -> Result<Value, String> {
    // What was passed is described only when a refusal may need it (the
    // common call already carries every required key as written).
    let complete = args.as_object().is_some_and(|m| validator.required().iter().all(|k| m.contains_key(k)));
    let passed = if complete { String::new() } else { describe(&args) };
    let map = coerce::coerce(args, validator).map_err(|e| format!("`{qualified}`: {}", e.0))?;
    let missing: Vec<&String> = validator.required().iter().filter(|k| !map.contains_key(*k)).collect();
    if !missing.is_empty() {
        let names = missing.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
        let plural = if missing.len() == 1 { "argument" } else { "arguments" };
        return Err(format!("`{}` is missing required {plural} {names}; {passed}", qualified));
    }
    let mut value = Value::Object(map);
    validator.apply_defaults(&mut value);
    let violations = validator.validate(&value);
    if violations.is_empty() {
        Ok(value)
    } else {
        let list = violations.iter().map(|v| format!("{}: {}", v.pointer, v.message)).collect::<Vec<_>>().join("; ");
        Err(format!("`{}` got invalid arguments: {list}", qualified))
    }
}


/// "passed: `a`, `b`" / "no arguments were passed" / "passed the bare value …"
pub(crate) fn describe(args: &Value) -> String {
    match args {
        Value::Null => "no arguments were passed".into(),
        Value::Object(m) if m.is_empty() => "no arguments were passed".into(),
        Value::Object(m) => format!("passed: {}", m.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")),
        other => format!("passed the bare value {other}"),
    }
}

/// `Saving {title}` with the arguments filled in.
pub(crate) fn fill_message(template: &str, args: &Value) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        match args.get(&after[..close]) {
            Some(Value::String(s)) => out.push_str(s),
            Some(v) => out.push_str(&v.to_string()),
            None => out.push_str(&rest[open..open + close + 2]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Polls a future, turning a panic into an `Err`.
pub(crate) struct CatchUnwind<F>(pub(crate) AssertUnwindSafe<F>);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(&mut fut.0).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

pub(crate) fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_else(|| "(no message)".into())
}
