//! What a capability's safety category decides, written once for the
//! generator (`capspec-codegen`) and the runtime (`capspec`):
//!
//! - the four [`Category`]s and the permission [`Mode`]s;
//! - the mode × category matrix ([`floor`]) and how a policy's [`Effect`]
//!   refines it ([`ruling`]);
//! - the Cedar names a spec becomes ([`NAMESPACE`], [`category_group`],
//!   [`module_group`]) and the Cedar type of a capability's input
//!   ([`types::input_type`]);
//! - with the feature `cedar`, a project's policies: loaded, located,
//!   indexed by action and evaluated failing closed ([`Policies`]).
//!
//! ```
//! use capspec_policy::{Category, Effect, Mode, Ruling, Verdict, floor, ruling};
//!
//! // The default mode runs reads and asks for everything else.
//! assert_eq!(floor(Mode::Default, Category::Read), Verdict::Allow);
//! assert_eq!(floor(Mode::Default, Category::Write), Verdict::Ask);
//! // A satisfied `forbid` denies whatever the mode would do.
//! assert_eq!(ruling(Some(Effect::Forbid), Mode::Auto, Category::Read), Ruling::Deny);
//! ```

use std::fmt;

pub mod types;

#[cfg(feature = "cedar")]
mod engine;
#[cfg(feature = "cedar")]
mod statements;
#[cfg(feature = "cedar")]
mod value;

#[cfg(feature = "cedar")]
pub use cedar_policy;
#[cfg(feature = "cedar")]
pub use miette;
#[cfg(feature = "cedar")]
pub use engine::{Evaluation, Listed, LoadError, Plan, ParseError, Policies, PolicyInfo, Request, Source, Who};

/// The safety category of a capability. Closed and required: there is no
/// default, so an unclassified capability cannot load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Inspects state and mutates nothing anywhere.
    Read,
    /// Edits persisted state, local or remote.
    Write,
    /// Runs code, ships a deliverable, triggers automation.
    Execute,
    /// Acts through a third party or runs many actions at once.
    External,
}

impl Category {
    /// Every category, from the loosest gate to the tightest.
    pub const ALL: [Category; 4] = [Category::Read, Category::Write, Category::Execute, Category::External];

    /// The category as written in specs: `read`, `write`, `execute`, `external`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Read => "read",
            Category::Write => "write",
            Category::Execute => "execute",
            Category::External => "external",
        }
    }

    /// The category written as `text`, if it is one.
    pub fn parse(text: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// The OAuth scope a token needs to call a capability of this category
    /// (DESIGN §13): `capspec:read`, `capspec:write`, `capspec:execute`,
    /// `capspec:external`.
    pub fn scope(self) -> &'static str {
        match self {
            Category::Read => "capspec:read",
            Category::Write => "capspec:write",
            Category::Execute => "capspec:execute",
            Category::External => "capspec:external",
        }
    }

    /// The category whose scope is `scope`, if it is one.
    pub fn of_scope(scope: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.scope() == scope)
    }

    /// What reclassifying `from` → `to` does to the gate: `write → read`
    /// loosens it, `read → write` tightens it; `None` when equal.
    pub fn direction(from: Category, to: Category) -> Option<&'static str> {
        match to.cmp(&from) {
            std::cmp::Ordering::Less => Some("loosens the gate"),
            std::cmp::Ordering::Greater => Some("tightens the gate"),
            std::cmp::Ordering::Equal => None,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The permission mode of a run. It may change between calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Read only: everything else is blocked.
    Plan,
    /// Read runs; everything else asks.
    Default,
    /// Read and write run; execute and external ask.
    AcceptEdits,
    /// Everything runs.
    Auto,
}

impl Mode {
    /// Every mode, from the strictest to the most permissive.
    pub const ALL: [Mode; 4] = [Mode::Plan, Mode::Default, Mode::AcceptEdits, Mode::Auto];

    /// The mode as written on the command line and in receipts.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Plan => "plan",
            Mode::Default => "default",
            Mode::AcceptEdits => "accept_edits",
            Mode::Auto => "auto",
        }
    }

    /// Parses `plan`, `default`, `accept_edits` (or `accept-edits`), `auto`.
    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "plan" => Some(Mode::Plan),
            "default" => Some(Mode::Default),
            "accept_edits" | "accept-edits" => Some(Mode::AcceptEdits),
            "auto" => Some(Mode::Auto),
            _ => None,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the matrix says before anyone is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Ask the run's approver.
    Ask,
    /// Refuse it (`blocked_in_plan_mode`).
    Block,
}

/// The mode × category matrix (DESIGN §7): allow, ask or block.
pub fn floor(mode: Mode, category: Category) -> Verdict {
    use Category::*;
    match (mode, category) {
        (_, Read) => Verdict::Allow,
        (Mode::Plan, _) => Verdict::Block,
        (Mode::Default, _) => Verdict::Ask,
        (Mode::AcceptEdits, Write) => Verdict::Allow,
        (Mode::AcceptEdits, _) => Verdict::Ask,
        (Mode::Auto, _) => Verdict::Allow,
    }
}

/// What a project's policies decided for one call (DESIGN §14), strongest
/// first; no effect at all means no policy applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// A satisfied `forbid`, a policy that failed to evaluate, or a number
    /// a policy reads that Cedar's `decimal` cannot hold: deny.
    Forbid,
    /// A satisfied `permit` annotated `@ask`: ask.
    Ask,
    /// A satisfied `permit`: allow (but `plan` still blocks non-reads).
    Permit,
}

/// The decision for one call: the matrix refined by the policies' effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ruling {
    /// Run it.
    Allow,
    /// Ask the run's approver.
    Ask,
    /// `plan` mode blocks it (`blocked_in_plan_mode`).
    Block,
    /// A policy denies it (`permission_denied`); nothing overrides this.
    Deny,
}

impl Ruling {
    /// `allow`, `ask`, or `deny` (blocked or denied), as `policies/tests.yaml` writes it.
    pub fn expectation(self) -> &'static str {
        match self {
            Ruling::Allow => "allow",
            Ruling::Ask => "ask",
            Ruling::Block | Ruling::Deny => "deny",
        }
    }
}

/// DESIGN §14's decision: a forbid denies; else an `@ask` permit asks; else
/// a permit allows (except that `plan` blocks every non-read); else the
/// mode × category matrix decides.
pub fn ruling(effect: Option<Effect>, mode: Mode, category: Category) -> Ruling {
    match (effect, floor(mode, category)) {
        (Some(Effect::Forbid), _) => Ruling::Deny,
        (_, Verdict::Block) => Ruling::Block,
        (Some(Effect::Ask), _) => Ruling::Ask,
        (Some(Effect::Permit), _) => Ruling::Allow,
        (None, Verdict::Allow) => Ruling::Allow,
        (None, Verdict::Ask) => Ruling::Ask,
    }
}

/// The sources that shape the schema text the generator writes (names,
/// groups and input types): part of the key under which `sync` and
/// `check` reuse a schema file already on disk.
pub const SCHEMA_SOURCES: [&str; 2] = [include_str!("lib.rs"), include_str!("types.rs")];

/// The Cedar namespace every entity type and action is declared in.
pub const NAMESPACE: &str = "Capspec";

/// The action group of every capability of `category`: `category:write`.
pub fn category_group(category: Category) -> String {
    format!("category:{}", category.as_str())
}

/// The action group of every capability of module `module`: `module:notes`.
pub fn module_group(module: &str) -> String {
    format!("module:{module}")
}

/// A capability's action id: its qualified name, `notes.write_note`.
pub fn action_id(module: &str, capability: &str) -> String {
    format!("{module}.{capability}")
}

/// The 1-based line and column (in characters) of byte `offset` of `text`:
/// where a Cedar diagnostic's label points, as findings locate it.
pub fn line_col(text: &str, offset: usize) -> (u32, u32) {
    Lines::new(text).line_col(offset)
}

/// Where each line of a text starts, found once: locating many offsets in
/// one text (every policy of a file) costs a search each, not a scan.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    /// The line starts of `text`.
    pub fn new(text: &'a str) -> Lines<'a> {
        Lines { text, starts: std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect() }
    }

    /// [`line_col`] of `offset`.
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let column = self.text[self.starts[line]..offset].chars().count() + 1;
        (line as u32 + 1, column as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_is_designs_table() {
        use Verdict::*;
        let row = |mode| Category::ALL.map(|c| floor(mode, c));
        assert_eq!(row(Mode::Plan), [Allow, Block, Block, Block]);
        assert_eq!(row(Mode::Default), [Allow, Ask, Ask, Ask]);
        assert_eq!(row(Mode::AcceptEdits), [Allow, Allow, Ask, Ask]);
        assert_eq!(row(Mode::Auto), [Allow, Allow, Allow, Allow]);
    }

    #[test]
    fn a_forbid_beats_every_mode_a_permit_never_beats_plan_and_no_policy_is_the_matrix() {
        for mode in Mode::ALL {
            for category in Category::ALL {
                assert_eq!(ruling(Some(Effect::Forbid), mode, category), Ruling::Deny);
                let permitted = ruling(Some(Effect::Permit), mode, category);
                let asked = ruling(Some(Effect::Ask), mode, category);
                if mode == Mode::Plan && category != Category::Read {
                    assert_eq!((permitted, asked), (Ruling::Block, Ruling::Block));
                } else {
                    assert_eq!((permitted, asked), (Ruling::Allow, Ruling::Ask));
                }
                let expected = match floor(mode, category) {
                    Verdict::Allow => Ruling::Allow,
                    Verdict::Ask => Ruling::Ask,
                    Verdict::Block => Ruling::Block,
                };
                assert_eq!(ruling(None, mode, category), expected);
            }
        }
    }
}
