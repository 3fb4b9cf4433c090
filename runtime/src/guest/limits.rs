//! The limits of a guest run and the errors that name them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rquickjs::allocator::{Allocator, RustAllocator};

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
        // Bounds of a resumed action, which its MCP server words with its own values.
        LimitKind::Rounds => "the action asked more times than its server allows".into(),
        LimitKind::StateBytes => "the action's journal outgrew its server's requestState bound".into(),
    };
    GuestError::Limit { limit, message }
}

/// What the engine ran into, recorded where it happened — by the allocator
/// that refused memory and the allocation made at the stack guard — never
/// read from an error's text, which the action controls.
#[derive(Debug, Default)]
pub(super) struct Hits {
    /// The allocator refused an allocation over the memory limit.
    memory: AtomicBool,
    /// An allocation happened within the guard band of the stack limit: the
    /// engine was at its stack guard (it allocates its overflow error there).
    stack: AtomicBool,
}

impl Hits {
    /// The limit an engine error means, from what the engine ran into. A
    /// stack hit counts only for the engine's own overflow error (a deep but
    /// legal frame may allocate inside the guard band, too).
    pub(super) fn classify(&self, error: &EngineError, limits: &GuestLimits) -> Option<GuestError> {
        if self.memory.load(Ordering::SeqCst) {
            Some(limit_error(LimitKind::Memory, limits))
        } else if self.stack.load(Ordering::SeqCst) && error.stack_overflow {
            Some(limit_error(LimitKind::Stack, limits))
        } else {
            None
        }
    }
}

/// An error that surfaced from the engine: its message, and whether it is
/// the engine's stack-overflow `RangeError` (by class and message: only
/// meaningful together with [`Hits`]).
pub(super) struct EngineError {
    pub(super) message: String,
    pub(super) stack_overflow: bool,
}

impl EngineError {
    pub(super) fn new(message: String, is_range_error: bool) -> EngineError {
        let stack_overflow = is_range_error && message == "Maximum call stack size exceeded";
        EngineError { message, stack_overflow }
    }
}

/// The guest heap: Rust's allocator, metered. An allocation that would take
/// the heap over `memory_bytes` is refused (QuickJS then throws its
/// out-of-memory error) and recorded in [`Hits`]; an allocation made within
/// the stack guard band is recorded too.
pub(super) struct Metered {
    inner: RustAllocator,
    used: usize,
    limit: usize,
    /// The native stack position QuickJS measures its stack from (taken
    /// where the runtime is created), and how deep counts as the guard band.
    stack_top: usize,
    stack_guard: usize,
    hits: Arc<Hits>,
}

impl Metered {
    pub(super) fn new(limits: &GuestLimits, hits: Arc<Hits>) -> Metered {
        // The band below QuickJS's stack limit where it throws: one frame's
        // locals plus the throw's own frames.
        let band = (limits.stack_bytes / 8).min(32 * 1024);
        Metered { inner: RustAllocator, used: 0, limit: limits.memory_bytes, stack_top: stack_position(), stack_guard: limits.stack_bytes - band, hits }
    }

    fn admit(&mut self, more: usize) -> bool {
        if stack_position() < self.stack_top.saturating_sub(self.stack_guard) {
            self.hits.stack.store(true, Ordering::SeqCst);
        }
        if self.used.saturating_add(more) > self.limit {
            self.hits.memory.store(true, Ordering::SeqCst);
            return false;
        }
        true
    }
}

/// The current native stack position (the stack grows down).
#[inline(never)]
fn stack_position() -> usize {
    let here = 0u8;
    std::hint::black_box(&here) as *const u8 as usize
}

// SAFETY: every pointer comes from `RustAllocator` and goes back to it; the
// metering only refuses (returns null) or counts.
unsafe impl Allocator for Metered {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admit(size) {
            return std::ptr::null_mut();
        }
        let ptr = self.inner.alloc(size);
        if !ptr.is_null() {
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        if !self.admit(count.saturating_mul(size)) {
            return std::ptr::null_mut();
        }
        let ptr = self.inner.calloc(count, size);
        if !ptr.is_null() {
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        self.used -= unsafe { RustAllocator::usable_size(ptr) };
        unsafe { self.inner.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        let old = unsafe { RustAllocator::usable_size(ptr) };
        if new_size > old && !self.admit(new_size - old) {
            return std::ptr::null_mut();
        }
        let moved = unsafe { self.inner.realloc(ptr, new_size) };
        if !moved.is_null() {
            self.used = self.used - old + unsafe { RustAllocator::usable_size(moved) };
        }
        moved
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        unsafe { RustAllocator::usable_size(ptr) }
    }
}
