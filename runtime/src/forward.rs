//! Implementations that are not `#[capability]` fns: what a host hands the
//! registry for an upstream module's capabilities
//! ([`Registry::with_forwards`](crate::Registry::with_forwards)).

use std::sync::Arc;

use serde_json::Value;

use crate::error::CallError;
use crate::gate::BoxFuture;
use crate::run::Run;

/// An implementation that is not a `#[capability]` fn: an upstream MCP
/// server's tool (`capspec::upstream`). It runs at the ladder's last step,
/// after lookup, validation and the gate, like any impl; its errors carry
/// their own codes (`upstream_*`).
pub trait Forward: Send + Sync {
    /// Run with the validated arguments (defaults applied).
    fn call<'a>(&'a self, run: &'a Run, args: Value) -> BoxFuture<'a, Result<Value, CallError>>;
    /// What the receipt names as the implementation: the upstream server.
    fn server(&self) -> &str;
    /// Whether a call may end asking its caller to open a link (a
    /// `per-user` upstream's authorization, DESIGN §12): only then does a
    /// surface keep a place for the link beside the call.
    fn may_ask_link(&self) -> bool {
        false
    }
}

/// A [`Forward`] implementation of one capability, for [`Registry::with_forwards`](crate::Registry::with_forwards).
#[derive(Clone)]
pub struct Forwarded {
    /// The module of the spec it implements.
    pub module: &'static str,
    /// The capability name.
    pub name: &'static str,
    /// The implementation.
    pub forward: Arc<dyn Forward>,
}
