//! The MCP server (feature `mcp`, on `rmcp`): one [`Mounted`](crate::Mounted) session served
//! over stdio or Streamable HTTP (DESIGN §10). The tools surface
//! ([`McpHost::tools_surface`]) needs nothing more; code mode (`execute_code`,
//! [`McpHost::new`] with a guest) is the feature `code-mode`, which adds the
//! QuickJS guest host.
//!
//! - [`McpHost`] holds what every session shares: the mount, the surface,
//!   the mode, and how a host prepares each call's [`Run`](crate::Run) (its extensions).
//! - [`McpSession`] is one MCP session: an rmcp `ServerHandler` with its own
//!   allow-set, so one session's "allow for this session" never reaches
//!   another. `tools/call` builds a [`Run`](crate::Run) per call and goes through
//!   [`Mounted::invoke`](crate::Mounted::invoke) (direct tools, the tools surface) or the guest host
//!   (`execute_code`), whose calls go through `invoke` too.
//!
//! `server.rs` holds both; `tools.rs` turns specs into MCP tools, results
//! and the capabilities resource; `approve.rs` turns the gate's `ask` into
//! an elicitation (2025-11-25 sessions); `mrtr.rs` into an `input_required`
//! round with a sealed `requestState` (2026-07-28, stateless), and
//! `resume.rs` an action's ask into one whose encrypted state carries the
//! action's journal (resumed by replay); `state_key.rs` derives both keys;
//! `transport.rs`
//! serves stdio and HTTP (Origin/Host, bearer token, body limit, JSON-RPC
//! shape); `oauth.rs` (feature `oauth`) makes HTTP an OAuth 2.1 resource
//! server (DESIGN §13), its tokens checked with ring (`jwt_ring.rs`).

#[cfg(feature = "quickjs")]
mod actions;
mod approve;
mod bounds;
mod envelope;
mod errors;
mod identity;
mod options;
mod mrtr;
mod origin;
#[cfg(feature = "oauth")]
mod jwt_ring;
#[cfg(feature = "oauth")]
pub mod oauth;
#[cfg(feature = "quickjs")]
pub mod resume;
mod server;
mod state_key;
mod tools;
mod transport;
mod view;

pub use mrtr::APPROVAL_INPUT;
pub use bounds::{MAX_ROUNDS, MAX_STATE_BYTES, ReplayBounds};
pub use state_key::{STATE_TTL, StateKey, TICKET_TTL, Ticket, TicketRefused};
pub use identity::ServerIdentity;
pub use server::{McpHost, McpSession, PrepareRun};
pub use view::Surface;
pub use tools::{CAPABILITIES_URI, CATALOG_URI, EXECUTE_CODE, META_ERROR};
pub use transport::{Auth, HttpAuth, HttpOptions, Listen, MCP_PATH, McpEndpoint, Named, serve, serve_endpoints, serve_http, serve_stdio, serve_with};
#[cfg(feature = "axum")]
pub use transport::router;
