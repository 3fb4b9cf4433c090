//! capspec's procedural macros: `#[capability]` and `#[derive(Capability)]`
//! (DESIGN §6).
//!
//! Not built yet: this crate exports nothing until the macros exist, so no
//! host can depend on a macro that only pretends to work.
