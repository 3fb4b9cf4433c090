//! The gate's `ask` on a 2026-07-28 request: that revision is stateless, so
//! an ask is answered through a multi round-trip request. The call returns
//! an `input_required` result carrying a form elicitation and a
//! `requestState` sealed with the host's key (HMAC, rmcp's
//! `RequestStateCodec`) that binds the capability, a digest of its
//! validated arguments and an expiry; the client retries with the answer
//! and the state. Nothing is kept between requests, so any instance
//! sharing the key can answer the retry. An approval covers that one call.
//!
//! A retry whose state is forged or altered, expired, or sealed for another
//! capability or other arguments is refused with a named reason.

use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{InputRequest, InputRequests, InputRequiredResult, InputResponses, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::state_key::StateKey;
use crate::gate::{Approval, ApprovalRequest, Approver, BoxFuture};

/// The key of the approval in `inputRequests` / `inputResponses`.
pub const APPROVAL_INPUT: &str = "io.capspec/approval";
/// Bound into every sealed state, so no other sealed value of the same key passes.
const PURPOSE: &[u8] = b"capspec approval v1";

/// What a sealed state says: this principal may call this capability with these arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Sealed {
    principal: String,
    capability: String,
    args: String,
}

fn sealed_for(request: &ApprovalRequest) -> Sealed {
    Sealed { principal: request.principal.id().to_string(), capability: request.capability.clone(), args: capspec_dialects::pin::digest(&request.args) }
}

/// A retry's answer, once its state is verified.
#[derive(Debug, Clone)]
pub(super) struct Answer {
    sealed: Sealed,
    accepted: bool,
}

/// Check a retry's `requestState` and answer: `Ok(None)` for a first
/// round, `Err` with why a state is refused.
pub(super) fn verify(key: &StateKey, state: Option<&str>, responses: Option<&InputResponses>) -> Result<Option<Answer>, String> {
    let Some(state) = state else { return Ok(None) };
    let sealed: Sealed = key.approval().open_json_with(state, PURPOSE).map_err(|e| match e {
        RequestStateError::Expired => "the approval's requestState has expired; call again to be asked again".to_string(),
        _ => "the requestState is forged or altered (it does not verify with this server's key); call again to be asked again".to_string(),
    })?;
    let response = approval_response(responses)?;
    let accepted = response.get("action").and_then(Value::as_str) == Some("accept");
    Ok(Some(Answer { sealed, accepted }))
}

/// The client's answer to the approval, in a retry's `inputResponses`.
pub(super) fn approval_response(responses: Option<&InputResponses>) -> Result<&Value, String> {
    responses.and_then(|r| r.get(APPROVAL_INPUT)).ok_or_else(|| format!("the retry carries no `{APPROVAL_INPUT}` input response"))
}

/// The approver of one 2026-07-28 call: answers from a verified retry, or
/// records what must be asked (the call then returns `input_required`).
pub(super) struct Mrtr {
    answer: Option<Answer>,
    /// The client declared form elicitation on this request.
    can_ask: bool,
    pub(super) asked: Mutex<Option<ApprovalRequest>>,
}

impl Mrtr {
    pub(super) fn new(answer: Option<Answer>, can_ask: bool) -> Mrtr {
        Mrtr { answer, can_ask, asked: Mutex::new(None) }
    }
}

/// The denial that stands for "ask the client": the call returns
/// `input_required` instead of this refusal.
const ASKING: &str = "asking the client (input_required)";

impl Approver for Mrtr {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        let verdict = match &self.answer {
            Some(answer) if answer.sealed == sealed_for(request) => {
                if answer.accepted {
                    Approval::AllowOnce
                } else {
                    Approval::Deny(format!("the user declined `{}` in the client", request.capability))
                }
            }
            Some(answer) if answer.sealed.principal != request.principal.id() => Approval::OtherCall(format!(
                "the requestState was issued to `{}`, not to `{}`; call again to be asked",
                answer.sealed.principal, request.principal
            )),
            Some(answer) if answer.sealed.capability != request.capability => {
                Approval::OtherCall(format!("the requestState approves `{}`, not `{}`; call again to be asked", answer.sealed.capability, request.capability))
            }
            Some(_) => Approval::OtherCall(format!("the requestState approves `{}` with other arguments than this call's; call again to be asked", request.capability)),
            None if self.can_ask => {
                *self.asked.lock().unwrap_or_else(|e| e.into_inner()) = Some(request.clone());
                Approval::Pending(ASKING.to_string())
            }
            None => Approval::CannotAsk("this MCP request (the client did not declare elicitation in its request's capabilities)".to_string()),
        };
        Box::pin(std::future::ready(verdict))
    }
}

/// The `input_required` result that asks the client to approve `request`.
pub(super) fn input_required(key: &StateKey, request: &ApprovalRequest) -> InputRequiredResult {
    let message = format!("{} This approves this one call.", super::approve::prompt(request, "server"));
    let elicitation: InputRequest = serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": { "mode": "form", "message": message, "requestedSchema": { "type": "object", "properties": {} } },
    }))
    .expect("the approval form is a valid elicitation");
    InputRequiredResult::new(Some(InputRequests::from_iter([(APPROVAL_INPUT.to_string(), elicitation)])), Some(seal(key, request, key.ttl())))
}

/// The key of a link to open in `inputRequests` (a `per-user` upstream's
/// authorization, DESIGN §12).
pub const AUTHORIZE_INPUT: &str = "io.capspec/authorize";

/// The `input_required` result that asks the client to open `link`; the
/// retry needs no state: once the person authorized, the call finds their
/// credential.
pub(super) fn open_link(link: &super::approve::Link) -> InputRequiredResult {
    InputRequiredResult::new(Some(InputRequests::from_iter([(AUTHORIZE_INPUT.to_string(), link_request(link))])), None)
}

/// The URL elicitation that asks the client to open `link`.
pub(super) fn link_request(link: &super::approve::Link) -> InputRequest {
    serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": { "mode": "url", "message": link.message, "url": link.url },
    }))
    .expect("a URL elicitation is a valid input request")
}

/// The `requestState` approving `request`, valid for `ttl`.
fn seal(key: &StateKey, request: &ApprovalRequest, ttl: Duration) -> String {
    key.approval().seal_json_with(&sealed_for(request), &SealOptions::new().associated_data(PURPOSE).ttl(ttl)).expect("the sealed state serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::STATE_TTL;
    use crate::spec::Category;

    fn request(args: Value) -> ApprovalRequest {
        ApprovalRequest {
            principal: crate::Principal::local(),
            capability: "notes.create_note".into(),
            category: Category::Write,
            mode: crate::Mode::Default,
            message: None,
            args,
        }
    }

    fn accepted() -> InputResponses {
        InputResponses::from_iter([(APPROVAL_INPUT.to_string(), json!({"action": "accept", "content": {}}))])
    }

    #[test]
    fn states_verify_only_intact_unexpired_and_under_the_same_key() {
        let key = StateKey::random();
        let state = seal(&key, &request(json!({"title": "t"})), STATE_TTL);
        let answer = verify(&key, Some(&state), Some(&accepted())).unwrap().unwrap();
        assert!(answer.accepted && answer.sealed == sealed_for(&request(json!({"title": "t"}))));
        // The digest does not depend on member order, and does on any value.
        assert_eq!(answer.sealed, sealed_for(&request(json!({"title": "t"}))));
        assert_ne!(answer.sealed, sealed_for(&request(json!({"title": "u"}))));
        let other = StateKey::random();
        assert!(verify(&other, Some(&state), Some(&accepted())).unwrap_err().contains("forged or altered"));
        let expired = seal(&key, &request(json!({})), Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(20));
        assert!(verify(&key, Some(&expired), Some(&accepted())).unwrap_err().contains("expired"));
        assert!(verify(&key, Some(&state), None).unwrap_err().contains("no `io.capspec/approval` input response"));
        assert!(verify(&key, None, None).unwrap().is_none(), "a first round carries no state");
        assert!(StateKey::new(b"short").is_err(), "a key needs 32 bytes");
        // A state issued to one principal approves nothing for another.
        let mut alice = request(json!({"title": "t"}));
        alice.principal = crate::Principal::new("alice");
        let state = seal(&key, &alice, STATE_TTL);
        let answer = verify(&key, Some(&state), Some(&accepted())).unwrap();
        let mrtr = Mrtr::new(answer, true);
        let mut bob = alice.clone();
        bob.principal = crate::Principal::new("bob");
        match crate::testing::block_on(mrtr.approve(&bob)) {
            Approval::OtherCall(reason) => assert!(reason.contains("issued to `alice`, not to `bob`"), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(crate::testing::block_on(mrtr.approve(&alice)), Approval::AllowOnce);
    }
}
