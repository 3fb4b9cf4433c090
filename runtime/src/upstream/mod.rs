//! Upstream MCP servers, as a client (feature `upstream`, DESIGN §12): the
//! servers a project's upstream modules pin. This is the one MCP client
//! capspec has: the command line lists a server's tools through it (`import
//! mcp --upstream`, `check --upstream`), and hosts mount upstream modules
//! with it (`cargo capspec serve`, `agent-host serve --upstreams`):
//! `child.rs` starts and lists servers, `mount.rs` forwards calls to them,
//! `oauth.rs` logs in to servers behind OAuth and keeps their credentials,
//! `authorize.rs` (feature `oauth`) is a `per-user` server's browser step,
//! `per_user.rs` its upstream leg, completed on any instance.
//!
//! A server here is what `[upstream.NAME]` configures, resolved by the
//! caller (paths made absolute, the token read): the runtime does not read
//! `capspec.toml`.

#[cfg(feature = "oauth")]
pub mod authorize;
mod child;
mod loopback;
mod mount;
pub mod oauth;
#[cfg(feature = "oauth")]
mod per_user;

pub use child::{Endpoint, Server, UpstreamError, list_tools};
pub use oauth::CredentialVault;
#[cfg(feature = "oauth")]
pub use authorize::{AuthorizeOptions, Authorizer};
pub use mount::{MAX_BACKOFF, PinnedTool, UpstreamModule, Upstreams, Unmounted};
