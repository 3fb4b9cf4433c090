//! Per-run state, supplied at call time. Nothing per-run is captured when
//! capabilities are registered, so one registry serves every host.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::audit::Audit;
use crate::gate::{BoxFuture, Gate, Mode};
use crate::principal::Principal;
use crate::receipt::Receipt;
use crate::replay::Replay;

/// Typed host extensions: a workspace root, an HTTP client, a database
/// handle — whatever the host's capability impls need, looked up by type.
#[derive(Default)]
pub struct Extensions {
    map: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl Extensions {
    /// Store a value of type `T`, replacing any earlier one.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.map.insert(TypeId::of::<T>(), Box::new(value));
    }

    /// The value of type `T`, if one was stored.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.map.get(&TypeId::of::<T>()).and_then(|b| b.downcast_ref())
    }
}

/// Routes a call to a connected client (e.g. a browser editor) when the
/// capability's work happens there.
pub trait ClientRouter: Send + Sync {
    /// Run `capability` on the client with `args`.
    fn route<'a>(&'a self, capability: &'a str, args: serde_json::Value) -> BoxFuture<'a, Result<serde_json::Value, String>>;
}

/// Limits of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most calls the run may make; further calls are refused with `limit_exceeded`.
    pub max_calls: u32,
}

impl Limits {
    /// Capability calls a run may make unless limited otherwise.
    pub const DEFAULT_MAX_CALLS: u32 = 1000;
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_calls: Limits::DEFAULT_MAX_CALLS }
    }
}

/// One run: who calls, the gate, the host extensions, an optional client
/// router, limits, and the receipts of every call made through it.
pub struct Run {
    principal: Principal,
    gate: Gate,
    extensions: Extensions,
    router: Option<Arc<dyn ClientRouter>>,
    limits: Limits,
    replay: Option<Arc<Replay>>,
    audit: Option<Audit>,
    #[cfg(feature = "policy")]
    policies: Option<Arc<crate::policy_gate::PolicyGate>>,
    calls: AtomicU32,
    receipts: Mutex<Vec<Receipt>>,
    approval_wait: Mutex<Duration>,
}

impl Run {
    /// A run of the principal `local` gated by `gate`, with no extensions,
    /// no router and default limits.
    pub fn new(gate: Gate) -> Run {
        Run {
            principal: Principal::local(),
            gate,
            extensions: Extensions::default(),
            router: None,
            limits: Limits::default(),
            replay: None,
            audit: None,
            #[cfg(feature = "policy")]
            policies: None,
            calls: AtomicU32::new(0),
            receipts: Mutex::new(Vec::new()),
            approval_wait: Mutex::new(Duration::ZERO),
        }
    }

    /// Who calls (DESIGN §13): `local` unless set here. Receipts, spans,
    /// approval prompts and sealed states name it.
    pub fn with_principal(mut self, principal: Principal) -> Run {
        self.principal = principal;
        self
    }

    /// Who calls.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// Add a typed extension.
    pub fn with<T: Any + Send + Sync>(mut self, value: T) -> Run {
        self.extensions.insert(value);
        self
    }

    /// Route client-side capabilities through `router`.
    pub fn with_router(mut self, router: Arc<dyn ClientRouter>) -> Run {
        self.router = Some(router);
        self
    }

    /// Replace the run's limits.
    pub fn with_limits(mut self, limits: Limits) -> Run {
        self.limits = limits;
        self
    }

    /// Replay a resumed action's journal (DESIGN §10): the guest's calls
    /// are answered from it, checked against it, and journaled into it.
    pub fn with_replay(mut self, replay: Arc<Replay>) -> Run {
        self.replay = Some(replay);
        self
    }

    /// Record every call of this run in an audit log (DESIGN §15): its
    /// decision before the impl runs (a call whose record cannot be stored
    /// ends `audit_unavailable` and does not run), its outcome after.
    pub fn with_audit(mut self, audit: Audit) -> Run {
        self.audit = Some(audit);
        self
    }

    /// The audit this run's calls are recorded in, if any.
    pub fn audit(&self) -> Option<&Audit> {
        self.audit.as_ref()
    }

    /// The run's audit with who calls and the mode, for its records.
    pub(crate) fn caller(&self) -> Option<crate::audit::Caller<'_>> {
        self.audit.as_ref().map(|audit| crate::audit::Caller { audit, principal: &self.principal, mode: self.mode() })
    }

    /// The replay this run's guest calls go through, if any.
    pub fn replay(&self) -> Option<&Replay> {
        self.replay.as_deref()
    }

    /// Decide calls by the project's policies too (DESIGN §14), after
    /// validation and before the mode × category gate.
    #[cfg(feature = "policy")]
    pub fn with_policies(mut self, policies: Arc<crate::policy_gate::PolicyGate>) -> Run {
        self.policies = Some(policies);
        self
    }

    /// The policies this run's calls are decided by, if any.
    #[cfg(feature = "policy")]
    pub fn policies(&self) -> Option<&crate::policy_gate::PolicyGate> {
        self.policies.as_deref()
    }

    /// What this run's caller is not shown (DESIGN §10): nothing unless a
    /// surface gave the run its caller's view.
    pub(crate) fn hidden(&self) -> Option<&crate::hidden::Hidden> {
        self.get::<Arc<crate::hidden::Hidden>>().map(|hidden| &**hidden)
    }

    /// The policies, shared: what a surface derives its views from.
    #[cfg(all(feature = "policy", feature = "mcp"))]
    pub(crate) fn policy_gate(&self) -> Option<&Arc<crate::policy_gate::PolicyGate>> {
        self.policies.as_ref()
    }

    /// The run's gate.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The current mode (it may change between calls).
    pub fn mode(&self) -> Mode {
        self.gate.mode()
    }

    /// A host extension by type.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }

    /// The client router, when there is one.
    pub fn router(&self) -> Option<&dyn ClientRouter> {
        self.router.as_deref()
    }

    /// The run's limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Every receipt so far, in call order.
    pub fn receipts(&self) -> Vec<Receipt> {
        self.receipts.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `f` of this run's receipts, in place (no copy).
    #[cfg(feature = "mcp")]
    pub(crate) fn with_receipts<R>(&self, f: impl FnOnce(&[Receipt]) -> R) -> R {
        f(&self.receipts.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Total time calls of this run spent waiting for an approver; a time
    /// limit does not count it.
    pub fn approval_wait(&self) -> Duration {
        *self.approval_wait.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn record(&self, receipt: Receipt) {
        self.receipts.lock().unwrap_or_else(|e| e.into_inner()).push(receipt);
    }

    pub(crate) fn add_approval_wait(&self, waited: Duration) {
        *self.approval_wait.lock().unwrap_or_else(|e| e.into_inner()) += waited;
    }

    /// Count a call against the budget; `false` when the budget is spent.
    pub(crate) fn take_call(&self) -> bool {
        self.calls.fetch_add(1, Ordering::SeqCst) < self.limits.max_calls
    }
}
