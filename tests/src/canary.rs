//! The canary impls: one per capability of the `canary` fixture, shared by
//! every test target and the benchmarks so their behaviour is written once.
//!
//! Each impl answers with a small value derived from its arguments and, when
//! the run carries an `Arc<Counters>` extension, counts that it ran: tests that
//! run concurrently (and guest calls on other threads) keep their counts apart.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use capspec::{CapError, CapResult, Registry, Run, capability};
use serde_json::{Value, json};

pub use crate::bindings::canary::canary::*;
use crate::bindings::canary::canary;

/// How often each counted canary impl ran in one run, in the order peek,
/// poke, launch, delegate. Attach with `Run::with(Arc::new(Counters::default()))`.
#[derive(Debug, Default)]
pub struct Counters(pub [AtomicUsize; 4]);

impl Counters {
    /// Impl runs counted so far, over every capability.
    pub fn total(&self) -> usize {
        self.0.iter().map(|c| c.load(Ordering::SeqCst)).sum()
    }
}

fn count(run: &Run, i: usize) {
    if let Some(c) = run.get::<Arc<Counters>>() {
        c.0[i].fetch_add(1, Ordering::SeqCst);
    }
}

/// `canary.peek` (read): the note id, and `"<id> (<n> lines)"` when
/// `max_lines` is given — a string, like the same tool in the rmcp
/// comparison (`benches/rmcp`). Public so a benchmark can call it directly,
/// without `invoke`.
pub async fn peek_impl(run: &Run, args: peek::Args) -> CapResult<Value> {
    count(run, 0);
    Ok(Value::String(match args.max_lines {
        None => args.note_id,
        Some(n) => format!("{} ({n} lines)", args.note_id),
    }))
}

#[capability(canary::peek)]
async fn peek(run: &Run, args: peek::Args) -> CapResult<Value> {
    peek_impl(run, args).await
}

/// `canary.poke` (write): `{"saved": title}`.
#[capability(canary::poke)]
async fn poke(run: &Run, args: poke::Args) -> CapResult<Value> {
    count(run, 1);
    Ok(json!({ "saved": args.title }))
}

/// `canary.launch` (execute): `"ran <program>"`.
#[capability(canary::launch)]
async fn launch(run: &Run, args: launch::Args) -> CapResult<String> {
    count(run, 2);
    Ok(format!("ran {}", args.program))
}

/// `canary.delegate` (external): `{"task": task_id}`.
#[capability(canary::delegate)]
async fn delegate(run: &Run, args: delegate::Args) -> CapResult<Value> {
    count(run, 3);
    Ok(json!({ "task": args.task_id }))
}

/// The message `canary.fail_always` fails with.
pub const FAILURE: &str = "the disk is on fire";

/// The data `canary.fail_always` fails with (DESIGN §7, errors with data).
pub fn failure_data() -> Value {
    json!({"code": "on_fire", "retryable": false})
}

#[capability(canary::fail_always)]
async fn fail_always(_run: &Run, _args: fail_always::Args) -> CapResult<()> {
    Err(CapError::new(FAILURE).with_data(failure_data()).with_code(-32603))
}

/// The message `canary.panic_always` panics with.
pub const PANIC: &str = "impl bug";

#[capability(canary::panic_always)]
async fn panic_always(_run: &Run, _args: panic_always::Args) -> CapResult<()> {
    panic!("{PANIC}")
}

/// A registry over the canary module alone.
pub fn registry() -> Arc<Registry> {
    Registry::new(&[MODULE]).expect("every canary capability has an impl")
}

/// Ten reads, then a write that asks: the action the state-size goal and the
/// replay benchmark (`benches/benches/guest.rs`) use (`tests/tests/replay.rs`).
pub const TEN_READS_THEN_A_WRITE: &str = r#"import { peek, poke } from "@capspec/host/canary";
export default async () => {
  const seen = [];
  for (let i = 0; i < 10; i++) seen.push(await peek({ note_id: "note-" + i }));
  return [seen.length, (await poke({ title: seen.join(",") })).saved.length];
};"#;

