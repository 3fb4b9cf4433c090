//! `execute_code` (code mode, feature `code-mode`): an action run in the
//! guest host on a thread of its own, inside its request's span; on
//! 2026-07-28, one round of an action resumed by replay (`resume.rs`).

use std::sync::Arc;

use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::Value;

use crate::error::ErrorCode;
use crate::gate::Approver;
use crate::run::Run;

use super::approve;
use super::resume;
use super::server::{McpSession, can_ask, can_open_links};
use super::tools::{self, EXECUTE_CODE};

impl McpSession {
    /// `execute_code` on 2025-11-25 (and over stdio): the action runs once;
    /// an ask goes to the session's client. An action's call that needs a
    /// link ends with it in its message.
    pub(super) async fn execute_code(&self, arguments: &Value, context: &RequestContext<RoleServer>, stateless: Option<Arc<dyn Approver>>) -> rmcp::model::CallToolResult {
        let Some(code) = action_code(arguments) else { return code_refused() };
        let run = self.run(context, stateless, None);
        match self.run_action(run, code).await {
            Ok((outcome, run)) => tools::action_result(&outcome, &run, self.host.result_receipts),
            Err(refused) => refused,
        }
    }
}

impl McpSession {
    /// Run an action on the engine's own thread, inside the request's span.
    async fn run_action(&self, run: Run, code: String) -> Result<(crate::guest::GuestOutcome, Run), rmcp::model::CallToolResult> {
        let guest = self.host.guest();
        on_action_thread(move || {
            let outcome = guest.run(&run, &code);
            (outcome, run)
        })
        .await
    }

    /// `execute_code` on 2026-07-28: one round of an action resumed by
    /// replay (DESIGN §10). It runs from the start, its earlier calls
    /// answered from the state's journal, until it ends or a call asks.
    pub(super) async fn action_round(
        &self,
        arguments: &Value,
        request_state: Option<&str>,
        responses: Option<&rmcp::model::InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let Some(code) = action_code(arguments) else { return code_refused().into() };
        let (key, bounds) = (self.host.state_key.clone(), self.host.bounds);
        let guest = self.host.guest();
        let (state, responses, can_ask) = (request_state.map(str::to_string), responses.cloned(), can_ask(context));
        // Asks go to the replay, never to this approver.
        let nobody: Arc<dyn Approver> = Arc::new(crate::gate::HeadlessApprover::new("this MCP request"));
        // A call whose caller must open a link suspends the action on it
        // (the replay keeps the link) where the request declared URL elicitation.
        let links = Arc::new(approve::Links::default());
        let run = self.run(context, Some(nobody), can_open_links(context).then_some(&links));
        let run = run.with(links);
        let done = on_action_thread(move || {
            let request = resume::Request { code: &code, state: state.as_deref(), responses: responses.as_ref(), can_ask };
            resume::round(&guest, run, &key, bounds, request)
        })
        .await;
        match done {
            Ok(Ok((_, _, Some(input_required)))) => input_required.into(),
            Ok(Ok((outcome, run, None))) => tools::action_result(&outcome, &run, self.host.result_receipts).into(),
            Ok(Err(reason)) => tools::refused(ErrorCode::PermissionDenied, EXECUTE_CODE, &reason).into(),
            Err(failed) => failed.into(),
        }
    }
}

/// Run `action` on a blocking thread (the engine's), inside the request's span.
async fn on_action_thread<T: Send + 'static>(action: impl FnOnce() -> T + Send + 'static) -> Result<T, rmcp::model::CallToolResult> {
    let request = tracing::Span::current();
    tokio::task::spawn_blocking(move || {
        let _entered = request.enter();
        action()
    })
    .await
    .map_err(|e| tools::refused(ErrorCode::Failed, EXECUTE_CODE, &format!("the action's thread ended abnormally: {e}")))
}

/// `execute_code`'s one argument.
fn action_code(arguments: &Value) -> Option<String> {
    arguments.get("code").and_then(Value::as_str).map(str::to_string)
}

fn code_refused() -> rmcp::model::CallToolResult {
    tools::refused(ErrorCode::InvalidArguments, EXECUTE_CODE, "`execute_code` takes {\"code\": string}: an ES module whose default export is the action")
}
