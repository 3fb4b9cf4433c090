//! Replay of a resumed guest action (DESIGN §10, "An action that asks, on
//! 2026-07-28"). A stateless request has no session to wait in while the
//! client answers an ask, so the action runs again from the start on the
//! retry, and this journal makes that safe:
//!
//! - every call the action made before, at the same position (the order
//!   the guest issued its calls), is answered from the journal — reads
//!   included, so the action sees the world as it first saw it — and no
//!   call is performed twice;
//! - the call that asked takes the client's answer;
//! - a call at a journaled position with another capability or other
//!   arguments ends the action (`replay_diverged`), and no call runs after it;
//! - a call that must ask while nobody can answer now suspends the action:
//!   its promise never settles, nothing new starts, and the round ends with
//!   the ask (the lowest position asks first; others ask in later rounds).
//!
//! The journal is data ([`Journal`]); sealing it into a `requestState` is
//! the MCP server's (`mcp::resume`). The ladder consults a [`Replay`] held by
//! the run ([`Run::with_replay`](crate::Run)) after validation and before
//! the gate, and journals every call it lets through.
//!
//! # What makes a replay deterministic
//!
//! A call is identified by its position, so a replay is safe only if the
//! action, given the same answers, issues the same calls in the same
//! order:
//!
//! - every call that reached the gate before is answered from the journal,
//!   reads included, so nothing of the world's later state (the action's
//!   own writes included) reaches it; a call refused before the gate (an
//!   unknown name, bad arguments) is decided again the same way;
//! - `Date` reads the state's clock and `Math.random` is seeded from it
//!   (`guest/globals.rs`, only on a replayed run);
//! - the event loop resolves a replayed action's calls in the order it
//!   issued them, not the order they finished (`event_loop.rs`'s `Order`);
//! - journaled positions and the asked one are answered inline, in order,
//!   before any new call starts, so a divergence stops the action before a
//!   new call runs; after an ask suspends the round nothing new starts, and
//!   the calls in flight finish and are journaled.
//!
//! What would break it is refused as `replay_diverged`, never run: another
//! catalog or spec version between rounds (another instance mounting other
//! modules), a capability whose validated arguments the host computes from
//! outside state, or a QuickJS upgrade that changes iteration or job order.
//! The code's digest and the principal are in the state, so another action
//! or another caller never replays this journal.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{CallError, ErrorCode};
use crate::gate::{Approval, ApprovalRequest};
use crate::receipt::GateDecision;

/// The digest of a call's validated arguments (RFC 8785 canonical JSON, SHA-256).
pub(crate) fn args_digest(args: &Value) -> String {
    capspec_dialects::pin::digest(args)
}

/// One journaled call: what was called, what the gate decided and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// `module.name`.
    #[serde(rename = "c")]
    pub capability: String,
    /// `args_digest` of the validated arguments.
    #[serde(rename = "a")]
    pub args: String,
    /// The gate's decision.
    #[serde(rename = "d")]
    pub decision: GateDecision,
    /// The value, or the error, the call returned.
    #[serde(rename = "r")]
    pub result: Result<Value, CallError>,
    /// The call's duration in microseconds, for its receipt.
    #[serde(rename = "us")]
    pub micros: u64,
    /// The upstream server that implements the capability, if one does.
    #[serde(rename = "u", default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
}

/// The call a round ended on: it asked, and the client is asked to answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskedCall {
    /// Its position among the action's calls.
    #[serde(rename = "p")]
    pub position: u32,
    /// `module.name`.
    #[serde(rename = "c")]
    pub capability: String,
    /// `args_digest` of its validated arguments.
    #[serde(rename = "a")]
    pub args: String,
}

/// What an action has done so far, carried from round to round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    /// Position → the call made there.
    #[serde(rename = "j", default)]
    pub entries: BTreeMap<u32, JournalEntry>,
    /// The call the last round asked about.
    #[serde(rename = "q", default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<AskedCall>,
    /// Capabilities approved for the rest of the action.
    #[serde(rename = "ok", default, skip_serializing_if = "BTreeSet::is_empty")]
    pub allowed: BTreeSet<String>,
}

/// The client's answer to the call a round asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Allowed: this call, or (`for_action`) every call to the capability
    /// for the rest of the action.
    Accept {
        /// "Allow for the rest of this action".
        for_action: bool,
    },
    /// Refused: the call gets `permission_denied`, and the action goes on.
    Decline,
}

/// What the journal says of a call about to pass the gate.
pub(crate) enum Check {
    /// Not journaled: run it (and journal it).
    Fresh,
    /// Made before: answer with what it returned then.
    Replayed(JournalEntry),
    /// Another call than the journal's at this position.
    Diverged(CallError),
}

/// What the journal says of a call that must ask.
pub(crate) enum Ask {
    /// The answer: from the client, or an approval for the rest of the action.
    Answer(Approval),
    /// Nobody can answer now: the action is suspended on this call.
    Suspend,
}

/// The replay of one round of an action: the journal it started with, the
/// calls it adds, and whether it diverged or suspended.
pub struct Replay {
    clock_ms: f64,
    seed: u64,
    can_ask: bool,
    progress: Mutex<Progress>,
}

#[derive(Default)]
struct Progress {
    journal: Journal,
    answer: Option<Answer>,
    /// The lowest position that asked this round, with what it asked.
    suspended: Option<(u32, ApprovalRequest)>,
    /// Every position that asked this round (their promises never settle).
    waiting: BTreeSet<u32>,
    /// The lowest position whose caller must first open a link (a
    /// `per-user` upstream's authorization), with the call and the link.
    linked: Option<(u32, String, String, crate::gate::Link)>,
    /// The person declined the link this round answers: a call that needs
    /// one ends refused instead of asking again.
    link_declined: bool,
    diverged: Option<CallError>,
}

impl Replay {
    /// A round starting from `journal`, with `answer` to the call it asked
    /// about; the guest's clock reads `clock_ms` and `Math.random` is seeded
    /// with `seed`. `can_ask`: the client can answer an elicitation.
    pub fn new(journal: Journal, answer: Option<Answer>, clock_ms: f64, seed: u64, can_ask: bool) -> Replay {
        Replay { clock_ms, seed, can_ask, progress: Mutex::new(Progress { journal, answer, ..Progress::default() }) }
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The guest's clock, in milliseconds since the epoch.
    pub fn clock_ms(&self) -> f64 {
        self.clock_ms
    }

    /// The guest's random seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    // The guest's event loop is the one reader (feature `quickjs`).
    #[cfg(feature = "quickjs")]
    /// Whether the call at `position` was made before: journaled, or the
    /// one the last round asked about.
    pub(crate) fn is_replayed(&self, position: u32) -> bool {
        let p = self.progress();
        p.journal.entries.contains_key(&position) || p.journal.asked.as_ref().is_some_and(|a| a.position == position)
    }

    /// Check the call at `position` against the journal.
    pub(crate) fn check(&self, position: u32, capability: &str, args: &Value) -> Check {
        let mut p = self.progress();
        if let Some(earlier) = &p.diverged {
            let message = format!("no call runs after the action diverged from its journal ({})", earlier.message);
            return Check::Diverged(CallError::new(ErrorCode::ReplayDiverged, message, capability));
        }
        let expected = match (p.journal.entries.get(&position), &p.journal.asked) {
            (Some(entry), _) => Some((entry.capability.clone(), entry.args.clone(), Some(entry.clone()))),
            (None, Some(asked)) if asked.position == position => Some((asked.capability.clone(), asked.args.clone(), None)),
            _ => None,
        };
        let Some((journaled, journaled_args, entry)) = expected else { return Check::Fresh };
        let digest = args_digest(args);
        if journaled == capability && journaled_args == digest {
            return match entry {
                Some(entry) => Check::Replayed(entry),
                None => Check::Fresh,
            };
        }
        let now = if journaled == capability { format!("`{capability}` with other arguments ({digest})") } else { format!("`{capability}` ({digest})") };
        let message = format!(
            "the resumed action diverged at call position {position}: it made `{journaled}` ({journaled_args}) there the first time and now makes {now}; \
             an action must make the same calls in the same order each time it runs (no Date, Math.random or other outside input decides which calls it makes)"
        );
        let error = CallError::new(ErrorCode::ReplayDiverged, message, capability);
        p.diverged = Some(error.clone());
        Check::Diverged(error)
    }

    /// The call at `position` must ask (the gate said so).
    pub(crate) fn ask(&self, position: u32, request: &ApprovalRequest) -> Ask {
        let mut p = self.progress();
        if p.journal.allowed.contains(&request.capability) {
            return Ask::Answer(Approval::AllowOnce);
        }
        if p.journal.asked.as_ref().is_some_and(|a| a.position == position) {
            if let Some(answer) = p.answer.take() {
                return Ask::Answer(match answer {
                    Answer::Accept { for_action } => {
                        if for_action {
                            p.journal.allowed.insert(request.capability.clone());
                        }
                        Approval::AllowOnce
                    }
                    Answer::Decline => Approval::Deny(format!("the user declined `{}` in the client", request.capability)),
                });
            }
        }
        if !self.can_ask {
            return Ask::Answer(Approval::CannotAsk("this MCP request (the client did not declare elicitation in its request's capabilities)".into()));
        }
        p.waiting.insert(position);
        if p.suspended.as_ref().is_none_or(|(at, _)| position < *at) {
            p.suspended = Some((position, request.clone()));
        }
        Ask::Suspend
    }

    /// The call at `position` (of `capability`, its arguments' digest `args_digest`) needs its caller
    /// to open `link` first: the action is suspended on it, and the retry
    /// makes the call again.
    pub(crate) fn suspend_for_link(&self, position: u32, capability: &str, args_digest: &str, link: crate::gate::Link) {
        let mut p = self.progress();
        p.waiting.insert(position);
        if p.linked.as_ref().is_none_or(|(at, ..)| position < *at) {
            p.linked = Some((position, capability.to_string(), args_digest.to_string(), link));
        }
    }

    /// The person declined the link the last round asked them to open: the
    /// call that needed it ends refused this round (a decline ends the call).
    pub fn decline_link(&self) {
        self.progress().link_declined = true;
    }

    /// Whether this round answers a declined link.
    pub(crate) fn link_declined(&self) -> bool {
        self.progress().link_declined
    }

    /// The link the round ended on, if a call needed one: its position, the
    /// call's capability and the digest of its arguments, and the link.
    pub fn linked(&self) -> Option<(u32, String, String, crate::gate::Link)> {
        self.progress().linked.clone()
    }

    /// Journal what the call at `position` did, and how long it took.
    pub(crate) fn record(&self, position: u32, entry: JournalEntry, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.progress().journal.entries.insert(position, JournalEntry { micros, ..entry });
    }

    // The guest's event loop is the one reader (feature `quickjs`).
    #[cfg(feature = "quickjs")]
    /// Whether the call at `position` is waiting on an ask (its promise stays pending).
    pub(crate) fn is_waiting(&self, position: u32) -> bool {
        self.progress().waiting.contains(&position)
    }

    // The guest's event loop is the one reader (feature `quickjs`).
    #[cfg(feature = "quickjs")]
    /// Whether a call of this round asked: nothing new starts.
    pub(crate) fn is_suspended(&self) -> bool {
        let p = self.progress();
        p.suspended.is_some() || p.linked.is_some()
    }

    /// The divergence that ended the action, if it diverged.
    pub fn diverged(&self) -> Option<CallError> {
        self.progress().diverged.clone()
    }

    /// The ask the round ended on, with its position, if one did.
    pub fn suspended(&self) -> Option<(u32, ApprovalRequest)> {
        self.progress().suspended.clone()
    }

    /// The journal as it is now: to seal into the next round's state (with
    /// [`Journal::asked`] set by the caller).
    pub fn journal(&self) -> Journal {
        self.progress().journal.clone()
    }
}
