//! The name table: every place a module name, capability name or alias is
//! declared, gathered per file and merged in path order, so duplicates
//! across files are found in one pass with every place reported.

use std::collections::HashMap;

use crate::finding::Finding;
use crate::rules as rule;
use crate::yaml::Pos;

/// Every place a module name, capability name or alias is declared, to find
/// duplicates across files in one pass.
#[derive(Default)]
pub(super) struct NameTable {
    pub(super) modules: HashMap<String, Vec<(String, Pos)>>,
    /// (module, name or alias) → where it is declared.
    pub(super) capabilities: HashMap<(String, String), Vec<NameUse>>,
    /// Modules written with `capabilities: []`: (module, file, position).
    pub(super) empty_modules: Vec<(String, String, Pos)>,
}

pub(super) struct NameUse {
    pub(super) file: String,
    pub(super) pos: Pos,
    /// "capability `m.x`" or "alias of `m.x`"
    pub(super) what: String,
}

impl NameTable {
    /// Add another file's names after this table's (file order is kept).
    pub(super) fn absorb(&mut self, other: NameTable) {
        let mut modules: Vec<_> = other.modules.into_iter().collect();
        modules.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, uses) in modules {
            self.modules.entry(name).or_default().extend(uses);
        }
        let mut caps: Vec<_> = other.capabilities.into_iter().collect();
        caps.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, uses) in caps {
            self.capabilities.entry(name).or_default().extend(uses);
        }
        self.empty_modules.extend(other.empty_modules);
    }

    pub(super) fn report(self, findings: &mut Vec<Finding>) {
        for (name, uses) in self.modules {
            if uses.len() < 2 {
                continue;
            }
            for (i, (file, pos)) in uses.iter().enumerate() {
                let others = places(uses.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, u)| (&u.0, u.1)));
                findings.push(Finding::error(
                    rule::SPEC_DUPLICATE_NAME,
                    file,
                    *pos,
                    format!("module `{name}` is also defined at {others}; module names must be unique"),
                ));
            }
        }
        for ((module, name), uses) in self.capabilities {
            if uses.len() < 2 {
                continue;
            }
            for (i, u) in uses.iter().enumerate() {
                let others = uses
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, o)| format!("{} ({}:{}:{})", o.what, o.file, o.pos.line, o.pos.column))
                    .collect::<Vec<_>>()
                    .join(", ");
                findings.push(Finding::error(
                    rule::SPEC_DUPLICATE_NAME,
                    &u.file,
                    u.pos,
                    format!(
                        "`{name}` ({}) is also used by {others}; capability names and aliases must be unique within module `{module}`",
                        u.what
                    ),
                ));
            }
        }
    }
}

fn places<'a>(uses: impl Iterator<Item = (&'a String, Pos)>) -> String {
    uses.map(|(f, p)| format!("{f}:{}:{}", p.line, p.column)).collect::<Vec<_>>().join(", ")
}

