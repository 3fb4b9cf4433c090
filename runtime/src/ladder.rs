//! Pieces of `invoke`'s ladder that are not the registry's: how a refusal
//! describes what was passed, a `user_message` filled in, and a panicking
//! impl contained.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;

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
