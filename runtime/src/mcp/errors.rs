//! A failed call on the wire (DESIGN §10, "errors on the wire"): an
//! `isError` result whose error object (`_meta["io.capspec/error"]`, and its
//! structured content where the tool declares no output schema) carries the
//! implementation's or the upstream's `data` and JSON-RPC code; or, for a
//! host whose clients expect what a migrated rmcp server answered, the
//! JSON-RPC error itself (`McpHost::with_json_rpc_errors`, in `options.rs`).

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CallToolResult};

use super::server::McpSession;
use super::tools::META_ERROR;

impl McpSession {
    /// A call's answer: its result, or the JSON-RPC error it names where the
    /// host answers failures so.
    pub(super) fn answer(&self, result: CallToolResult) -> Result<CallToolResponse, ErrorData> {
        match self.host.json_rpc_errors.then(|| json_rpc_error(&result)).flatten() {
            Some(error) => Err(error),
            None => Ok(result.into()),
        }
    }
}

/// The JSON-RPC error a failed result names (its error object's
/// `jsonrpcCode`, `message` and `data`); `None` for any other result.
fn json_rpc_error(result: &CallToolResult) -> Option<ErrorData> {
    if result.is_error != Some(true) {
        return None;
    }
    let error = result.meta.as_ref()?.0.get(META_ERROR)?;
    let code = i32::try_from(error.get("jsonrpcCode")?.as_i64()?).ok()?;
    let message = error.get("message")?.as_str()?.to_string();
    Some(ErrorData::new(rmcp::model::ErrorCode(code), message, error.get("data").cloned()))
}
