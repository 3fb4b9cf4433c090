//! Spans (DESIGN §7): every `invoke` is one `tracing` span named as
//! OpenTelemetry's GenAI conventions name a tool execution, opened and
//! finished by `Mounted::invoke` beside the receipt, so spans and receipts
//! come from one place. A guest action and an MCP request open the span
//! their calls nest under. With no subscriber, a span costs a callsite
//! check and nothing is formatted.

use tracing::Span;
use tracing::field::Empty;

use crate::error::CallError;
use crate::run::Run;
use crate::receipt::{GateDecision, Status};
use crate::spec::Spec;

/// The span of one call, before its capability is known. Its fields are
/// evaluated only when a subscriber wants the span.
pub(crate) fn call(run: &Run) -> Span {
    tracing::info_span!(
        target: "capspec",
        "execute_tool",
        "otel.name" = Empty,
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = Empty,
        "capspec.module" = Empty,
        "capspec.category" = Empty,
        "enduser.id" = run.principal().id(),
        "capspec.mode" = run.mode().as_str(),
        "capspec.decision" = Empty,
        "capspec.reason" = Empty,
        "capspec.status" = Empty,
        "capspec.policy" = Empty,
        "error.type" = Empty,
    )
}

/// The call resolved to `spec`, or (`None`) to nothing: then the name as called.
pub(crate) fn resolved(span: &Span, spec: Option<&Spec>, called: &str) {
    if span.is_disabled() {
        return;
    }
    let tool = spec.map_or(called, |s| s.wire_name);
    span.record("otel.name", format!("execute_tool {tool}"));
    span.record("gen_ai.tool.name", tool);
    if let Some(spec) = spec {
        span.record("capspec.module", spec.module);
        span.record("capspec.category", spec.category.as_str());
    }
}

/// How the call ended: what its receipt says, and the error code.
#[inline]
pub(crate) fn finished(span: &Span, decision: Option<GateDecision>, reason: Option<crate::audit::Reason>, status: Status, error: Option<&CallError>, policy: &[String]) {
    if span.is_disabled() {
        return;
    }
    if !policy.is_empty() {
        span.record("capspec.policy", policy.join(" "));
    }
    if let Some(decision) = decision {
        span.record("capspec.decision", decision.as_str());
    }
    if let Some(reason) = reason {
        span.record("capspec.reason", reason.as_str());
    }
    span.record("capspec.status", status.as_str());
    if let Some(error) = error {
        span.record("error.type", error.code.as_str());
    }
}

/// The span of a guest action: the parent of the calls it makes.
pub fn action(source_bytes: usize) -> Span {
    tracing::info_span!(target: "capspec", "run_action", "capspec.action.bytes" = source_bytes)
}

/// The span of one MCP `tools/call`: the parent of the calls it makes.
pub fn mcp_tools_call(tool: &str) -> Span {
    tracing::info_span!(
        target: "capspec",
        "mcp.request",
        // Formatted only where the span is recorded.
        "otel.name" = %format_args!("tools/call {tool}"),
        "mcp.method.name" = "tools/call",
        "gen_ai.tool.name" = tool,
    )
}
