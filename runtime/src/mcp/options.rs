//! Builder options of [`McpHost`] that live beside the server: how failures
//! are answered (`errors.rs`), what the server says it is (`identity.rs`),
//! and the bounds of an action resumed by replay (`resume.rs`, code mode).

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

/// Asks one action may make (`--max-rounds`) unless bounded otherwise.
pub const MAX_ROUNDS: u32 = 32;
/// Bytes a sealed action state may have (`--max-state-bytes`) unless bounded otherwise.
pub const MAX_STATE_BYTES: usize = 256 * 1024;

/// Bounds of an action resumed by replay; past either it ends with
/// `limit_exceeded` naming the bound, never with a truncated journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayBounds {
    /// Most asks (so rounds after the first) one action may make.
    pub max_rounds: u32,
    /// Most bytes of one sealed `requestState`.
    pub max_state_bytes: usize,
}

impl Default for ReplayBounds {
    fn default() -> ReplayBounds {
        ReplayBounds { max_rounds: MAX_ROUNDS, max_state_bytes: MAX_STATE_BYTES }
    }
}
