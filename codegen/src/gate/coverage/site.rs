//! What the coverage scan finds: impls, derives and tests, each where it is.

use super::mentions::Mentions;
use crate::finding::Finding;
use crate::yaml::Pos;

/// One `#[capability(path)]` fn found in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImplSite {
    /// The path as written, e.g. `workspace::read_file`; for a path-less
    /// `#[capability]` (a code-first impl), the module and name of the
    /// derive on its args type once resolved, else empty.
    pub path: Vec<String>,
    /// For a path-less `#[capability]`: the args type's last path segment.
    pub args_type: Option<String>,
    pub fn_name: String,
    /// The names the fn's own module goes by in a path: its module's name,
    /// or `crate` and the package's name for a fn at a crate's root.
    pub parent: Vec<String>,
    pub file: String,
    pub pos: Pos,
    /// The body is only `todo!(…)` or `unimplemented!(…)`.
    pub stub: bool,
    /// Its crate compiles it: its file is reachable from a crate root
    /// through `mod` items, and no `#[cfg(…)]` leaves it out in any feature
    /// set `check` holds the project to.
    pub linked: bool,
    /// The `#[cfg(…)]`s of its inline modules and of the fn itself.
    pub cfgs: Vec<super::cfg::Cfg>,
    /// The `#[cfg(…)]` that leaves it out, when one does.
    pub left_out: Option<LeftOut>,
    /// Whether each `[check] features` set's build compiles it, in order.
    pub builds: Vec<Build>,
}

/// Whether one build compiles an impl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Build {
    Linked,
    /// No `mod` item reaches its file from a crate root.
    Unreached,
    /// A `#[cfg(…)]` leaves it out.
    LeftOut(LeftOut),
}

/// A `#[cfg(…)]` that leaves an impl out of its crate's build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// Where the attribute is: on a `mod` item, an inline module or the fn.
    pub file: String,
    pub pos: Pos,
    /// The attribute as written.
    pub cfg: String,
    /// The build it leaves the impl out of, in words.
    pub features: String,
}

/// One `#[derive(Capability)]` struct found in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeriveSite {
    pub type_name: String,
    pub module: String,
    pub name: String,
    pub file: String,
    pub pos: Pos,
}

/// One test fn found in the test directories.
#[derive(Debug, Clone)]
pub struct TestSite {
    /// The file, relative to the project root.
    pub file: String,
    /// The fn's path inside the file (`tests::reads_a_note`, or just the fn name).
    pub name: String,
    /// First and last line of the fn.
    pub lines: (u32, u32),
    /// What it names.
    pub mentions: Mentions,
}

impl TestSite {
    /// `file::name`, as the coverage table shows it.
    pub fn label(&self) -> String {
        format!("{}::{}", self.file, self.name)
    }
}

/// What the scan found.
#[derive(Debug, Default)]
pub struct Scan {
    pub impls: Vec<ImplSite>,
    pub derives: Vec<DeriveSite>,
    /// Every test fn, in file then source order.
    pub tests: Vec<TestSite>,
    pub findings: Vec<Finding>,
    /// Texts of the scanned source files, for rendering findings.
    pub sources: Vec<(String, String)>,
    /// The features on in each `[check] features` set's build of the
    /// package that compiles the generated bindings, in order.
    pub binding_features: Vec<std::collections::BTreeSet<String>>,
    /// The features that package declares (`None`: none could be read).
    pub declared_features: Option<std::collections::BTreeSet<String>>,
}
