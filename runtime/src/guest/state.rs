//! The state of one guest run, shared (single-threaded) by the event loop,
//! the globals, the loader and the dispatcher.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::{Function, JsLifetime, Persistent};

use std::sync::Arc;

use super::limits::Hits;
use super::outcome::LimitKind;
use crate::registry::Mounted;

/// Releases the saved promise and resolve functions when a run ends.
pub(super) struct Release(pub(super) Rc<RefCell<State>>);

impl Drop for Release {
    fn drop(&mut self) {
        let mut s = self.0.borrow_mut();
        s.pending.clear();
        s.entry = None;
    }
}

/// A call the guest made, waiting to be started.
pub(super) struct PendingCall {
    pub(super) id: usize,
    pub(super) name: String,
    pub(super) args: serde_json::Value,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) logs: Vec<String>,
    pub(super) output: usize,
    pub(super) result: Option<serde_json::Value>,
    pub(super) limit: Option<LimitKind>,
    /// What the engine ran into (memory refused, stack guard reached).
    pub(super) hits: Arc<Hits>,
    /// JavaScript execution time so far, and the start of the current slice.
    pub(super) cpu: Duration,
    pub(super) slice_start: Option<Instant>,
    /// True only while the entry module links: static imports resolve then,
    /// dynamic `import()` (which always runs later, as a job) never does.
    pub(super) linking: bool,
    pub(super) calls: u32,
    pub(super) max_calls: u32,
    pub(super) mounted: Option<Mounted>,
    pub(super) next_id: usize,
    pub(super) to_start: Vec<PendingCall>,
    pub(super) pending: BTreeMap<usize, Persistent<Function<'static>>>,
    pub(super) entry: Option<Persistent<rquickjs::Promise<'static>>>,
}

/// The state, reachable from native module definitions through the context.
#[derive(Clone)]
pub(super) struct Shared(pub(super) Rc<RefCell<State>>);

unsafe impl<'js> JsLifetime<'js> for Shared {
    type Changed<'to> = Shared;
}

