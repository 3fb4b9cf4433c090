//! The gate's `ask` over MCP: an elicitation (allow once / allow for this
//! session / decline) when the client declared it can answer one, else a
//! denial that names why.

use std::sync::{Arc, OnceLock};

use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{ElicitationMode, Peer};
use rmcp::RoleServer;
use serde_json::json;

use crate::gate::{Approval, ApprovalRequest, Approver, BoxFuture, HeadlessApprover};

/// The answer the form asks for: how long the approval lasts.
pub(super) const SCOPE: &str = "scope";
const ONCE: &str = "once";
const SESSION: &str = "session";

/// What every approval prompt says: who asks, for what, and why the gate
/// asks (the category, and the mode the `holder` — session or server — is in).
pub(super) fn prompt(request: &ApprovalRequest, holder: &str) -> String {
    let what = request.message.clone().unwrap_or_else(|| format!("call `{}` with {}", request.capability, request.args));
    format!(
        "`{}` asks: allow {what}? `{}` is a {} capability and the {holder} is in {} mode.",
        request.principal,
        request.capability,
        request.category,
        request.mode.as_str()
    )
}

/// A form elicitation's params: `message`, and one optional answer, how
/// long the approval lasts (`choices[0]`, the default, or `choices[1]`).
pub(super) fn scope_form(message: String, choices: [&str; 2], description: String) -> serde_json::Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                SCOPE: { "type": "string", "title": "Allow", "enum": choices, "description": description, "default": choices[0] }
            },
        },
    })
}

/// How a session's calls ask its client: the gate's approver, and where a
/// link is opened when the client declared URL elicitation.
#[derive(Clone)]
pub(super) struct Askers {
    pub approver: Arc<dyn Approver>,
    pub url: Option<Arc<dyn crate::gate::AskUrl>>,
}

impl Askers {
    /// `peer`'s askers, worked out once the client has said what it can
    /// answer (`initialize`) and kept in `kept`: a later call takes a share
    /// of them and reads no capability of the client's. Before that, afresh.
    /// (Boxed: a session that never asks its client, as a 2026-07-28
    /// request's, stays small.)
    pub(super) fn of(peer: &Peer<RoleServer>, kept: &OnceLock<Box<Askers>>) -> Askers {
        if let Some(askers) = kept.get() {
            return Askers::clone(askers);
        }
        let askers = Askers { approver: approver(peer), url: url_asker(peer) };
        if peer.peer_info().is_some() {
            let _ = kept.set(Box::new(askers.clone()));
        }
        askers
    }
}

/// The approver of one call from `peer`.
fn approver(peer: &Peer<RoleServer>) -> Arc<dyn Approver> {
    if peer.supported_elicitation_modes().contains(&ElicitationMode::Form) {
        // The elicitation runs on the server's runtime, whichever thread
        // (an action's engine thread, say) awaits the answer.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => return Arc::new(Elicit { peer: peer.clone(), runtime }),
            Err(_) => return Arc::new(HeadlessApprover::new("this MCP server (no async runtime to ask the client on)")),
        }
    }
    Arc::new(HeadlessApprover::new("this MCP session (the client did not declare elicitation)"))
}

struct Elicit {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
}

impl Approver for Elicit {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        let params: ElicitRequestParams = serde_json::from_value(scope_form(
            prompt(request, "session"),
            [ONCE, SESSION],
            "`once`: this call only; `session`: every call to it in this session.".into(),
        ))
        .expect("the approval form is a valid elicitation");
        let peer = self.peer.clone();
        let asked = self.runtime.spawn(async move { peer.create_elicitation(params).await });
        let capability = request.capability.clone();
        Box::pin(async move {
            match asked.await {
                Ok(Ok(answer)) => match answer.action {
                    ElicitationAction::Accept => match answer.content.as_ref().and_then(|c| c.get(SCOPE)).and_then(|s| s.as_str()) {
                        Some(SESSION) => Approval::AllowForSession,
                        _ => Approval::AllowOnce,
                    },
                    ElicitationAction::Decline => Approval::Deny(format!("the user declined `{capability}` in the client")),
                    // Cancel, or an answer this version does not know.
                    _ => Approval::Deny(format!("the user dismissed the approval of `{capability}` in the client")),
                },
                Ok(Err(e)) => Approval::CannotAsk(format!("the client could not be asked to approve `{capability}`: {e}")),
                Err(e) => Approval::CannotAsk(format!("asking the client to approve `{capability}` ended abnormally: {e}")),
            }
        })
    }
}

/// The URL asker of one call from `peer`, when the client declared URL
/// elicitation (2025-11-25): `elicitation/create` in `url` mode, then
/// `notifications/elicitation/complete` once the person finished there.
fn url_asker(peer: &Peer<RoleServer>) -> Option<Arc<dyn crate::gate::AskUrl>> {
    if !peer.supported_elicitation_modes().contains(&ElicitationMode::Url) {
        return None;
    }
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    Some(Arc::new(ElicitUrl { peer: peer.clone(), runtime }))
}

struct ElicitUrl {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
}

impl crate::gate::AskUrl for ElicitUrl {
    fn ask<'a>(&'a self, id: &'a str, message: &'a str, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        let params = ElicitRequestParams::UrlElicitationParams { meta: None, message: message.to_string(), url: url.to_string(), elicitation_id: id.to_string() };
        let peer = self.peer.clone();
        // On the server's runtime, whichever thread (an action's) awaits it.
        let asked = self.runtime.spawn(async move { peer.create_elicitation(params).await });
        Box::pin(async move {
            match asked.await {
                Ok(Ok(answer)) => match answer.action {
                    ElicitationAction::Accept => Ok(()),
                    ElicitationAction::Decline => Err("the person declined to open the link".into()),
                    _ => Err("the person dismissed the link".into()),
                },
                Ok(Err(e)) => Err(format!("the client could not be given the link: {e}")),
                Err(e) => Err(format!("giving the client the link ended abnormally: {e}")),
            }
        })
    }

    fn complete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ()> {
        let notification = rmcp::model::ServerNotification::CustomNotification(rmcp::model::CustomNotification::new(
            "notifications/elicitation/complete",
            Some(json!({ "elicitationId": id })),
        ));
        let peer = self.peer.clone();
        let sent = self.runtime.spawn(async move { peer.send_notification(notification).await });
        Box::pin(async move {
            // A client gone since has nothing to be told.
            let _ = sent.await;
        })
    }
}

pub(super) use crate::gate::{Link, Links};

/// MCP's URLElicitationRequiredError (−32042, 2025-11-25): the call needs
/// its caller to open `link` first; calling again afterwards succeeds.
pub(super) fn url_elicitation_required(link: &Link) -> rmcp::ErrorData {
    rmcp::ErrorData::new(
        rmcp::model::ErrorCode(-32042),
        format!("{} Open the link, then call again.", link.message),
        Some(json!({ "elicitations": [{ "mode": "url", "elicitationId": link.id, "url": link.url, "message": link.message }] })),
    )
}
