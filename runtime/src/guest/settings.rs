//! What a guest host was configured with: the mounted session, the
//! specifier and bridge the facades were generated with, and the limits.

use super::limits::GuestLimits;
use crate::registry::Mounted;

/// A guest host's configuration, shared by the event loop and the globals.
#[derive(Clone)]
pub(super) struct Settings {
    pub(super) mounted: Mounted,
    pub(super) specifier: String,
    pub(super) bridge: String,
    pub(super) limits: GuestLimits,
}
