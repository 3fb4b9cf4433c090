//! Builder options of [`McpHost`] that live beside the server: how failures
//! are answered (`errors.rs`) and what the server says it is
//! (`identity.rs`).

use std::sync::Arc;

use super::identity::ServerIdentity;
use super::server::McpHost;

impl McpHost {
    /// Answer a failed call whose error names a JSON-RPC code
    /// ([`crate::CapError::with_code`], or an upstream server's error) as a
    /// JSON-RPC error with that code, its message and its `data`, as an rmcp
    /// server returning `Err(McpError)` did; every other failure stays an
    /// `isError` result. The call is gated, traced, audited and receipted
    /// alike.
    pub fn with_json_rpc_errors(mut self) -> McpHost {
        self.json_rpc_errors = true;
        self
    }

    /// Say `identity` in `initialize` (and every stateless request): its
    /// name, version and title as `serverInfo`, its instructions first and
    /// capspec's text about the surface after them. Without it, the server
    /// is `capspec` at capspec's version; `capspec::server_identity!()` is
    /// the calling package's name and version.
    pub fn with_identity(mut self, identity: ServerIdentity) -> McpHost {
        self.identity = Some(Arc::new(identity));
        self
    }
}
