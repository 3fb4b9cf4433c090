//! `[[allow]]`: remove the findings an entry explains, and report entries
//! that explain nothing, so suppressions cannot rot.

use crate::config::{Allow, CONFIG_FILE};
use crate::finding::Finding;
use crate::rules as rule;

/// Remove findings an `[[allow]]` entry explains; report entries that explain
/// nothing, so suppressions cannot rot.
pub(crate) fn apply(findings: &mut Vec<Finding>, allows: &[Allow]) {
    let mut used = vec![false; allows.len()];
    findings.retain(|f| {
        let hit = allows.iter().position(|a| {
            a.rule == f.rule
                && (a.capability.as_deref().is_some_and(|c| f.capability.as_deref() == Some(c))
                    || a.file.as_deref().is_some_and(|file| file == f.file))
        });
        match hit {
            Some(i) => {
                used[i] = true;
                false
            }
            None => true,
        }
    });
    for (allow, used) in allows.iter().zip(used) {
        if !used {
            let target = match (&allow.capability, &allow.file) {
                (Some(c), _) => format!("capability `{c}`"),
                (None, Some(f)) => format!("file `{f}`"),
                (None, None) => "nothing".to_string(),
            };
            findings.push(Finding::error(
                rule::CONFIG_ALLOW_UNMATCHED,
                CONFIG_FILE,
                allow.pos,
                format!("`[[allow]]` for `{}` on {target} suppresses nothing; remove it", allow.rule),
            ));
        }
    }
}
