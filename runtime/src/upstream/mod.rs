//! Upstream MCP servers, as a client (feature `upstream`, DESIGN §12): the
//! servers a project's upstream modules pin. This is the one MCP client
//! capspec has: the command line lists a server's tools through it (`import
//! mcp --upstream`, `check --upstream`), and hosts mount upstream modules
//! with it (`cargo capspec serve`, `agent-host serve --upstreams`):
//! `child.rs` starts and lists servers, `mount.rs` forwards calls to them,
//! `oauth.rs` logs in to servers behind OAuth and keeps their credentials.
//!
//! A server here is what `[upstream.NAME]` configures, resolved by the
//! caller (paths made absolute, the token read): the runtime does not read
//! `capspec.toml`.

mod child;
mod mount;
pub mod oauth;

pub use child::{Endpoint, Server, UpstreamError, list_tools};
pub use oauth::CredentialVault;
pub use mount::{MAX_BACKOFF, PinnedTool, UpstreamModule, Upstreams, Unmounted};
