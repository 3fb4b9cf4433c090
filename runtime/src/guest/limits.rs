//! The limits of a guest run and the errors that name them.

use std::time::Duration;


use super::outcome::{GuestError, LimitKind};

/// Limits of one guest run. Each has a default and a ceiling; values above
/// the ceiling are clamped to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuestLimits {
    /// Time spent executing JavaScript (not waiting on calls or approvals).
    pub cpu_time: Duration,
    /// Guest heap.
    pub memory_bytes: usize,
    /// Guest call stack.
    pub stack_bytes: usize,
    /// Capability calls per run.
    pub max_calls: u32,
    /// The result's JSON plus every captured log line.
    pub max_output_bytes: usize,
}

impl GuestLimits {
    /// The limits a run gets unless the host says otherwise.
    pub const DEFAULT: GuestLimits = GuestLimits {
        cpu_time: Duration::from_secs(30),
        memory_bytes: 64 * 1024 * 1024,
        stack_bytes: 512 * 1024,
        max_calls: 100,
        max_output_bytes: 100 * 1024,
    };
    /// The most a host may allow.
    pub const CEILING: GuestLimits = GuestLimits {
        cpu_time: Duration::from_secs(300),
        memory_bytes: 512 * 1024 * 1024,
        stack_bytes: 8 * 1024 * 1024,
        max_calls: 10_000,
        max_output_bytes: 10 * 1024 * 1024,
    };

    /// Each limit clamped to its ceiling (and to at least a usable minimum).
    pub fn clamped(self) -> GuestLimits {
        let c = GuestLimits::CEILING;
        GuestLimits {
            cpu_time: self.cpu_time.min(c.cpu_time).max(Duration::from_millis(1)),
            memory_bytes: self.memory_bytes.min(c.memory_bytes).max(1024 * 1024),
            stack_bytes: self.stack_bytes.min(c.stack_bytes).max(64 * 1024),
            max_calls: self.max_calls.min(c.max_calls),
            max_output_bytes: self.max_output_bytes.min(c.max_output_bytes),
        }
    }
}

impl Default for GuestLimits {
    fn default() -> GuestLimits {
        GuestLimits::DEFAULT
    }
}

pub(super) fn limit_error(limit: LimitKind, limits: &GuestLimits) -> GuestError {
    let message = match limit {
        LimitKind::CpuTime => format!("the action ran JavaScript for more than {} ms", limits.cpu_time.as_millis()),
        LimitKind::Memory => format!("the action used more than {} bytes of guest memory", limits.memory_bytes),
        LimitKind::Stack => format!("the action recursed past the {}-byte stack", limits.stack_bytes),
        LimitKind::Calls => format!("the action made more than {} capability calls", limits.max_calls),
        LimitKind::Output => format!("the action's result and logs exceed {} bytes", limits.max_output_bytes),
    };
    GuestError::Limit { limit, message }
}

/// Engine errors that mean a limit, by QuickJS's messages.
pub(super) fn classify(message: String, limits: &GuestLimits) -> GuestError {
    let lower = message.to_lowercase();
    if lower.contains("out of memory") {
        limit_error(LimitKind::Memory, limits)
    } else if lower.contains("stack overflow") || lower.contains("maximum call stack") {
        limit_error(LimitKind::Stack, limits)
    } else if lower.contains("interrupted") {
        limit_error(LimitKind::CpuTime, limits)
    } else if lower.contains("resolving") || lower.contains("import") || lower.contains("syntax") || lower.contains("error loading") {
        GuestError::Load { message }
    } else {
        GuestError::Threw { message, code: None }
    }
}

