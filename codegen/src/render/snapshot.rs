//! The category snapshot: `<module>.<name> <category>`, one line per
//! capability, sorted. A reclassification is a one-line diff.

use minijinja::context;

use crate::model::SpecSet;
use super::artifact::{Targets, marker_line};
use super::templates::render_template;

pub fn lines(set: &SpecSet) -> Vec<String> {
    let mut lines: Vec<String> = set.capabilities().map(|(m, c)| format!("{}.{} {}", m.name, c.name, c.category)).collect();
    lines.sort();
    lines
}

pub fn render(set: &SpecSet, targets: &Targets) -> String {
    render_template(
        "snapshot/categories.snap.j2",
        context! { marker => marker_line(&targets.specs), lines => lines(set) },
    )
}
