//! The bounds of an `execute_code` action resumed by replay on 2026-07-28
//! (`resume.rs`, code mode), set with [`McpHost::with_replay_bounds`](super::McpHost::with_replay_bounds).

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
