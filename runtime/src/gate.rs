//! The permission gate: a mode × category matrix, an approver for the cases
//! that ask, and a session allow-set shared by reference between the runs of
//! a session.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use crate::spec::Category;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub use capspec_policy::{Mode, Verdict};

/// The mode × category matrix: allow, ask or block (written once, in
/// `capspec-policy`, which the generator's policy tests use too).
pub fn decide(mode: Mode, category: Category) -> Verdict {
    capspec_policy::floor(mode, category)
}

fn mode_to_u8(mode: Mode) -> u8 {
    match mode {
        Mode::Plan => 0,
        Mode::Default => 1,
        Mode::AcceptEdits => 2,
        Mode::Auto => 3,
    }
}

fn mode_from_u8(v: u8) -> Mode {
    match v {
        0 => Mode::Plan,
        1 => Mode::Default,
        2 => Mode::AcceptEdits,
        _ => Mode::Auto,
    }
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Allow this one call.
    AllowOnce,
    /// Allow this capability for the rest of the session.
    AllowForSession,
    /// A person was asked and said no; the reason the caller sees.
    Deny(String),
    /// Nobody could be asked (a headless host, a client that declared no
    /// elicitation, an ask that did not reach the client): the gate refuses
    /// it (`denied_gate`, reason `cannot_ask`), and no person is recorded as
    /// having answered.
    CannotAsk(String),
    /// The answer presented was for another call (another principal,
    /// capability or arguments): refused by the gate (`other_call`).
    OtherCall(String),
    /// The ask goes to the client in a later round (2026-07-28's
    /// `input_required`): nothing is decided yet, so nothing is recorded;
    /// the retry's answer is the decision.
    Pending(String),
}

/// What the approver is asked about.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// Who asks for the call (DESIGN §13); every prompt names it.
    pub principal: crate::principal::Principal,
    /// `module.name`
    pub capability: String,
    /// The capability's category.
    pub category: Category,
    /// The mode the gate is in.
    pub mode: Mode,
    /// The spec's `user_message` with `{placeholders}` filled from the arguments.
    pub message: Option<String>,
    /// The (validated) arguments of the call.
    pub args: serde_json::Value,
}

/// Who answers when the gate asks: a person at a terminal, a client UI, a
/// script in tests, or nobody ([`HeadlessApprover`]).
pub trait Approver: Send + Sync {
    /// Answer one request; may wait on a person.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval>;
}

/// Asks the person behind a call to visit a URL (MCP's URL-mode
/// elicitation): where a `per-user` upstream's caller authorizes it
/// (DESIGN §12). A host whose client can follow one puts an
/// `Arc<dyn AskUrl>` into each call's [`crate::Run`].
pub trait AskUrl: Send + Sync {
    /// Ask to visit `url` (`message` says why), as the elicitation `id`:
    /// `Ok` once the person accepted, else why not, in words.
    fn ask<'a>(&'a self, id: &'a str, message: &'a str, url: &'a str) -> BoxFuture<'a, Result<(), String>>;
    /// Tell the client the elicitation `id` completed (`notifications/elicitation/complete`).
    fn complete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()>;
}

/// A link a call needed its caller to open, kept for the reply when the
/// client cannot be asked in the middle of the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The elicitation's id.
    pub id: String,
    /// Why, for the person.
    pub message: String,
    /// Where.
    pub url: String,
}

/// The [`AskUrl`] of a request whose client is not asked during the call:
/// it keeps the link (the reply carries it), and the call ends refused.
/// A run holds it as `Arc<Links>` too, so that an action resumed by replay
/// suspends on the call that needed it.
#[derive(Debug, Default)]
pub struct Links(std::sync::Mutex<Option<Link>>);

impl Links {
    /// The link kept, taken.
    pub fn take(&self) -> Option<Link> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl AskUrl for Links {
    fn ask<'a>(&'a self, id: &'a str, message: &'a str, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Link { id: id.to_string(), message: message.to_string(), url: url.to_string() });
        Box::pin(std::future::ready(Err("the client was given the link in its reply".to_string())))
    }

    fn complete<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// Why a call ends when its caller declined the link that would have let
/// capspec call a `per-user` upstream as them: the words every surface and
/// revision uses.
pub fn declined_link(principal: &str, what: &str) -> String {
    format!("`{principal}` declined to authorize capspec to call `{what}` as them, so the call did not run; call again to be asked again")
}

/// The approver of a host with nobody to ask: it denies, naming the host.
#[derive(Debug, Clone)]
pub struct HeadlessApprover {
    host: String,
}

impl HeadlessApprover {
    /// An approver that denies every ask, naming `host` in the reason.
    pub fn new(host: impl Into<String>) -> HeadlessApprover {
        HeadlessApprover { host: host.into() }
    }

    /// The sentence every denial carries.
    pub fn reason(&self) -> String {
        format!(
            "{} runs headless: there is nobody to approve this call; run in a mode that allows it (accept_edits or auto) or from an interactive host",
            self.host
        )
    }
}

impl Approver for HeadlessApprover {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        let reason = self.reason();
        Box::pin(async move { Approval::CannotAsk(reason) })
    }
}

/// Capabilities allowed for the rest of a session. Clones share one set, so
/// every run of a session sees an "allow for session" answer.
#[derive(Debug, Clone, Default)]
pub struct SessionAllow {
    inner: Arc<Mutex<HashSet<String>>>,
}

impl SessionAllow {
    /// An empty allow-set.
    pub fn new() -> SessionAllow {
        SessionAllow::default()
    }

    /// Whether `capability` was allowed for the session.
    pub fn contains(&self, capability: &str) -> bool {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).contains(capability)
    }

    /// Allow `capability` for the rest of the session.
    pub fn insert(&self, capability: &str) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).insert(capability.to_string());
    }

    /// Whether two handles share one set (the same session).
    pub fn same_session(&self, other: &SessionAllow) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// The gate of a run: its mode (changeable between calls, and shared with
/// whoever holds a [`ModeHandle`]), its approver and its session allow-set.
#[derive(Clone)]
pub struct Gate {
    mode: Arc<AtomicU8>,
    approver: Arc<dyn Approver>,
    session: SessionAllow,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate").field("mode", &self.mode()).finish_non_exhaustive()
    }
}

/// A handle that changes a gate's mode; the next call sees the new mode.
#[derive(Debug, Clone)]
pub struct ModeHandle(Arc<AtomicU8>);

impl ModeHandle {
    /// Switch the mode; the next call sees it.
    pub fn set(&self, mode: Mode) {
        self.0.store(mode_to_u8(mode), Ordering::SeqCst);
    }

    /// The current mode.
    pub fn get(&self) -> Mode {
        mode_from_u8(self.0.load(Ordering::SeqCst))
    }
}

impl Gate {
    /// A gate in `mode` that asks `approver` and remembers session allows in `session`.
    pub fn new(mode: Mode, approver: Arc<dyn Approver>, session: SessionAllow) -> Gate {
        Gate { mode: Arc::new(AtomicU8::new(mode_to_u8(mode))), approver, session }
    }

    /// A gate with nobody to ask: `ask` cases are denied, naming `host`.
    pub fn headless(mode: Mode, host: &str) -> Gate {
        Gate::new(mode, Arc::new(HeadlessApprover::new(host)), SessionAllow::new())
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        mode_from_u8(self.mode.load(Ordering::SeqCst))
    }

    /// Switch the mode; the next call sees it.
    pub fn set_mode(&self, mode: Mode) {
        self.mode.store(mode_to_u8(mode), Ordering::SeqCst);
    }

    /// A handle that changes this gate's mode from elsewhere.
    pub fn mode_handle(&self) -> ModeHandle {
        ModeHandle(self.mode.clone())
    }

    /// The session's allow-set.
    pub fn session(&self) -> &SessionAllow {
        &self.session
    }

    /// The approver asks go to.
    pub fn approver(&self) -> &dyn Approver {
        &*self.approver
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_matches_the_design() {
        use Category::*;
        let row = |m| [Read, Write, Execute, External].map(|c| decide(m, c));
        use Verdict::*;
        assert_eq!(row(Mode::Plan), [Allow, Block, Block, Block]);
        assert_eq!(row(Mode::Default), [Allow, Ask, Ask, Ask]);
        assert_eq!(row(Mode::AcceptEdits), [Allow, Allow, Ask, Ask]);
        assert_eq!(row(Mode::Auto), [Allow, Allow, Allow, Allow]);
    }
}
