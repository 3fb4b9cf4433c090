//! Errors cross every entrance as data: `{ "error": code, "message", "capability" }`.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! error_codes {
    ($($variant:ident = $code:literal, $doc:literal;)*) => {
        /// Why a call did not produce a result: the `error` code every entrance reports.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ErrorCode {
            $(#[doc = $doc] $variant,)*
        }

        impl ErrorCode {
            /// Every code, in the order the reference lists them.
            pub const ALL: &[ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The code as it crosses to callers (`unknown_capability`, …).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $code,)*
                }
            }

            /// What the code means, in a sentence.
            pub fn description(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $doc,)*
                }
            }
        }
    };
}

error_codes! {
    UnknownCapability = "unknown_capability", "No capability (or alias) by that name is mounted.";
    AmbiguousCapability = "ambiguous_capability", "A bare name or alias that more than one mounted module has; call it as `module.name` (the message lists the candidates).";
    InvalidArguments = "invalid_arguments", "The arguments do not match the input schema.";
    PermissionDenied = "permission_denied", "The gate asked and the approver said no (or there was nobody to ask).";
    BlockedInPlanMode = "blocked_in_plan_mode", "Plan mode refuses every non-read capability.";
    Failed = "failed", "The implementation returned an error.";
    Timeout = "timeout", "The call ran past its time limit.";
    LimitExceeded = "limit_exceeded", "The run used up a limit (e.g. its call budget).";
    ReplayDiverged = "replay_diverged", "A resumed action made another call at a journaled position than it made the first time; the action ends there.";
    UpstreamChanged = "upstream_changed", "An upstream tool no longer matches its pin; it was not called.";
    UpstreamUnavailable = "upstream_unavailable", "The upstream server is not running (it did not start, or it exited).";
    UpstreamTimeout = "upstream_timeout", "The upstream server did not answer within its timeout; the call was cancelled.";
    UpstreamError = "upstream_error", "The upstream server answered with an error result.";
    AuditUnavailable = "audit_unavailable", "The audit log could not store the call's decision record, so the call did not run (nothing unrecorded runs).";
    UpstreamUnauthorized = "upstream_unauthorized", "The upstream server is behind OAuth and has no usable log-in: none stored, or its token refused after one refresh (the message names the log-in command).";
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused or failed call, as the caller (Rust, JSON or guest) sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallError {
    #[serde(rename = "error")]
    /// What kind of refusal or failure.
    pub code: ErrorCode,
    /// What happened, for the caller (and the model) to act on.
    pub message: String,
    /// `module.name` of the capability, or the name as called when unknown.
    pub capability: String,
    /// Structured data the implementation attached ([`CapError::with_data`])
    /// or an upstream server's error carried: absent when there is none.
    /// (Boxed: every call's `Result` carries a `CallError`'s size.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<serde_json::Value>>,
    /// The JSON-RPC error code the implementation named
    /// ([`CapError::with_code`]) or an upstream server answered with.
    #[serde(default, rename = "jsonrpcCode", skip_serializing_if = "Option::is_none")]
    pub jsonrpc_code: Option<i32>,
}

impl CallError {
    /// A refusal or failure with no data.
    pub fn new(code: ErrorCode, message: impl Into<String>, capability: impl Into<String>) -> CallError {
        CallError { code, message: message.into(), capability: capability.into(), data: None, jsonrpc_code: None }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.capability, self.code, self.message)
    }
}

impl std::error::Error for CallError {}

/// What an implementation returns when it fails: a message for the caller.
/// The runtime turns it into a `failed` [`CallError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapError {
    /// What went wrong.
    pub message: String,
    /// Structured data for the caller (DESIGN §7): a server's error object
    /// (`{"code": "not_found", "retryable": false, "request_id": …}`), served
    /// beside the message.
    pub data: Option<serde_json::Value>,
    /// The JSON-RPC error code a migrated server answered this failure with
    /// (rmcp's `McpError`): on MCP, a host that serves errors as JSON-RPC
    /// errors (`McpHost::with_json_rpc_errors`, feature `mcp`) answers with it.
    pub jsonrpc_code: Option<i32>,
}

impl CapError {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> CapError {
        CapError { message: message.into(), data: None, jsonrpc_code: None }
    }

    /// The failure with structured data the caller receives beside the
    /// message (in the error object a guest, a JSON caller and an MCP client
    /// read).
    ///
    /// ```
    /// let e = capspec::CapError::new("no such table: notes").with_data(serde_json::json!({"retryable": false}));
    /// assert_eq!(e.data.unwrap()["retryable"], false);
    /// ```
    pub fn with_data(self, data: serde_json::Value) -> CapError {
        CapError { data: Some(data), ..self }
    }

    /// The failure with a JSON-RPC error code, as an rmcp server answered it
    /// (`ErrorData::invalid_params` is −32602, `internal_error` −32603).
    pub fn with_code(self, code: i32) -> CapError {
        CapError { jsonrpc_code: Some(code), ..self }
    }
}

impl fmt::Display for CapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error> From<E> for CapError {
    fn from(err: E) -> CapError {
        CapError::new(err.to_string())
    }
}

/// The return type of a capability implementation.
pub type CapResult<T> = Result<T, CapError>;
