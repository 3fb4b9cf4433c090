//! An `execute_code` action that asks, on 2026-07-28: resumed by replay
//! (DESIGN §10). The revision is stateless — the client's answer comes back
//! as a new request, perhaps to another instance — so the action runs until
//! a call must ask, and the round ends with `input_required`: that call's
//! elicitation and a `requestState` sealed with the state key's action key
//! (XChaCha20-Poly1305: it carries results). The state holds the digest of
//! the action's code, the principal, the guest's clock and random seed, the
//! number of rounds so far, an expiry, and the journal ([`Journal`]). The
//! retry runs the action again from the start through a
//! [`Replay`] of that journal.
//!
//! A state that does not open (forged, altered, another key), has expired,
//! or was issued for other code or another principal is refused by name.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{InputRequest, InputRequests};
/// The MCP types a round takes and gives (rmcp's).
pub use rmcp::model::{InputRequiredResult, InputResponses};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::approve::{SCOPE, prompt, scope_form};
use super::mrtr::{APPROVAL_INPUT, AUTHORIZE_INPUT, approval_response, link_request};
use super::state_key::StateKey;
use crate::gate::ApprovalRequest;
use crate::guest::{Guest, GuestError, GuestOutcome, LimitKind};
use crate::run::Run;
use crate::principal::Principal;
use crate::replay::{Answer, AskedCall, Journal, Replay, args_digest};

use super::bounds::ReplayBounds;

/// Bound into every sealed action state, beside the key's own purpose.
const PURPOSE: &[u8] = b"capspec action state v1";
/// How long an action's approval lasts (the form's `scope`).
const ONCE: &str = "once";
const ACTION: &str = "action";

/// What a sealed action state says.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ActionState {
    /// The digest of the action's code.
    code: String,
    /// The principal the state was issued to.
    sub: String,
    /// The guest's clock (ms since the epoch) and random seed.
    clock: f64,
    seed: u64,
    /// Asks so far.
    rounds: u32,
    /// Expiry, seconds since the epoch.
    exp: u64,
    /// What the action did so far, and the call it asked about.
    j: Journal,
}

/// One round of an action: the replay its run goes through, and what the
/// next round's state carries over.
struct Round {
    replay: Arc<Replay>,
    state: ActionState,
}

/// What a 2026-07-28 `execute_code` request brought: the code, and on a
/// retry the state and the client's answers.
pub struct Request<'a> {
    /// The action's source.
    pub code: &'a str,
    /// The `requestState` of a retry.
    pub state: Option<&'a str>,
    /// The retry's `inputResponses`.
    pub responses: Option<&'a InputResponses>,
    /// The client declared form elicitation on this request.
    pub can_ask: bool,
}

/// One round of an action, as the server runs it on the action's thread:
/// open and check the state (`Err`: why it is refused), run the action
/// from the start through its replay under `run` (whose principal the state
/// is bound to), and end the round. The outcome is the action's, with a
/// bound it hit as its error; the run holds the receipts.
pub fn round(guest: &Guest, run: Run, key: &StateKey, bounds: ReplayBounds, request: Request<'_>) -> Result<(GuestOutcome, Run, Option<InputRequiredResult>), String> {
    let round = begin(key, request.code, run.principal(), request.state, request.responses, request.can_ask)?;
    let run = run.with_replay(round.replay.clone());
    let outcome = guest.run(&run, request.code);
    Ok(match end(key, bounds, round) {
        Ending::Final => (outcome, run, None),
        Ending::Ask(input_required) => (outcome, run, Some(input_required)),
        Ending::Limit(error) => (GuestOutcome { result: None, error: Some(error), ..outcome }, run, None),
    })
}

fn now() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Start a round: the first (no `requestState`), or a retry whose state is
/// checked and whose answer is read. `Err` says why a state is refused.
fn begin(
    key: &StateKey,
    code: &str,
    principal: &Principal,
    request_state: Option<&str>,
    responses: Option<&InputResponses>,
    can_ask: bool,
) -> Result<Round, String> {
    let digest = args_digest(&Value::String(code.to_string()));
    let Some(sealed) = request_state else {
        let mut seed = [0u8; 8];
        getrandom::fill(&mut seed).expect("the system has a random source");
        let state = ActionState {
            code: digest,
            sub: principal.id().to_string(),
            clock: now().as_millis() as f64,
            seed: u64::from_le_bytes(seed),
            rounds: 0,
            exp: 0,
            j: Journal::default(),
        };
        let replay = Replay::new(Journal::default(), None, state.clock, state.seed, can_ask);
        return Ok(Round { replay: Arc::new(replay), state });
    };
    let state: ActionState = key
        .open_action(sealed, PURPOSE)
        .and_then(|plain| serde_json::from_slice(&plain).ok())
        .ok_or("the requestState is forged or altered (it does not open with this server's key); run the action again to be asked again")?;
    if state.exp < now().as_secs() {
        return Err("the action's requestState has expired; run the action again to be asked again".into());
    }
    if state.code != digest {
        return Err("the requestState was issued for another action (its code differs from this call's); run the action again to be asked again".into());
    }
    if state.sub != principal.id() {
        return Err(format!("the requestState was issued to `{}`, not to `{principal}`; run the action again to be asked", state.sub));
    }
    // A link opened (a `per-user` upstream's authorization) needs no answer:
    // the call is made again, and finds the caller's credential.
    let linked = responses.and_then(|r| r.get(AUTHORIZE_INPUT).filter(|_| !r.contains_key(APPROVAL_INPUT)));
    let declined = linked.is_some_and(|response| response.get("action").and_then(Value::as_str) != Some("accept"));
    let answer = if linked.is_some() {
        None
    } else {
        let response = approval_response(responses)?;
        Some(match response.get("action").and_then(Value::as_str) {
            Some("accept") => Answer::Accept { for_action: response.pointer(&format!("/content/{SCOPE}")).and_then(Value::as_str) == Some(ACTION) },
            _ => Answer::Decline,
        })
    };
    let replay = Replay::new(state.j.clone(), answer, state.clock, state.seed, can_ask);
    if declined {
        replay.decline_link();
    }
    Ok(Round { replay: Arc::new(replay), state })
}

/// How a round ended.
enum Ending {
    /// The action ended (with a value, an error, a limit or a divergence).
    Final,
    /// A call asks: the client answers and retries with the state.
    Ask(InputRequiredResult),
    /// A bound of the replay ended the action.
    Limit(GuestError),
}

/// End a round: ask when a call of it waits on an approval or on a link its
/// caller must open, within the bounds.
fn end(key: &StateKey, bounds: ReplayBounds, round: Round) -> Ending {
    let replay = &round.replay;
    if replay.diverged().is_some() {
        return Ending::Final;
    }
    // The lowest call waiting: on an approval, or on its caller opening a link.
    let approval = replay.suspended().map(|(at, request)| (at, request.capability.clone(), args_digest(&request.args), (APPROVAL_INPUT, elicitation(&request))));
    let link = replay.linked().map(|(at, capability, digest, link)| (at, capability, digest, (AUTHORIZE_INPUT, link_request(&link))));
    let Some((position, capability, args, (input, asked))) = [approval, link].into_iter().flatten().min_by_key(|waiting| waiting.0) else { return Ending::Final };
    let rounds = round.state.rounds + 1;
    if rounds > bounds.max_rounds {
        let message = format!("the action asked for approval more often than --max-rounds {} allows", bounds.max_rounds);
        return Ending::Limit(GuestError::Limit { limit: LimitKind::Rounds, message });
    }
    let mut journal = replay.journal();
    journal.asked = Some(AskedCall { position, capability, args });
    let state = ActionState { rounds, exp: (now() + key.ttl()).as_secs(), j: journal, ..round.state };
    let plain = serde_json::to_vec(&state).expect("the action state serializes");
    let sealed = key.seal_action(&plain, PURPOSE);
    if sealed.len() > bounds.max_state_bytes {
        let message = format!(
            "the action's requestState would be {} bytes, more than --max-state-bytes {}: it carries every result the action has read, and is never truncated (read less per action, or raise the bound)",
            sealed.len(),
            bounds.max_state_bytes
        );
        return Ending::Limit(GuestError::Limit { limit: LimitKind::StateBytes, message });
    }
    Ending::Ask(InputRequiredResult::new(Some(InputRequests::from_iter([(input.to_string(), asked)])), Some(sealed)))
}

/// The form that asks the client to approve an action's call: once, or for
/// the rest of the action.
fn elicitation(request: &ApprovalRequest) -> InputRequest {
    let description = format!("`{ONCE}`: this call only; `{ACTION}`: every call to `{}` for the rest of this action.", request.capability);
    let params = scope_form(prompt(request, "server"), [ONCE, ACTION], description);
    serde_json::from_value(json!({ "method": "elicitation/create", "params": params })).expect("the approval form is a valid elicitation")
}
