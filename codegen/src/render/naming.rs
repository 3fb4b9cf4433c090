//! Names the renderers derive from spec text: PascalCase type names and
//! the one allocator that keeps generated names unique.

use std::collections::BTreeSet;

/// PascalCase of a snake_case or arbitrary name, ASCII only.
pub fn pascal_case(name: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if upper {
                out.push(c.to_ascii_uppercase());
            } else {
                out.push(c);
            }
            upper = false;
        } else {
            upper = true;
        }
    }
    out
}

/// Pick `base`, or `base2`, `base3`, … whichever is not in `used`, and
/// record it there.
pub fn unique(base: String, used: &mut BTreeSet<String>) -> String {
    let mut name = base.clone();
    let mut n = 2;
    while used.contains(&name) {
        name = format!("{base}{n}");
        n += 1;
    }
    used.insert(name.clone());
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(pascal_case("list_workflows"), "ListWorkflows");
        let mut used = BTreeSet::new();
        assert_eq!(unique("A".into(), &mut used), "A");
        assert_eq!(unique("A".into(), &mut used), "A2");
    }
}
