//! Names the renderers derive from spec text: PascalCase type names and
//! the one allocator that keeps generated names unique.

use std::collections::BTreeSet;

use capspec_names::RUST_KEYWORDS;

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

/// A snake_case field name for an arbitrary JSON key: `maxResults` →
/// `max_results`, `content-type` → `content_type`, `3d` → `_3d`, `type` →
/// `type_`. Non-ASCII characters become `uXXXX`.
pub fn field_name(key: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else if c.is_ascii() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        } else {
            out.push_str(&format!("u{:04x}", c as u32));
            prev_lower = true;
        }
    }
    let trimmed = out.trim_end_matches('_');
    let mut out = if trimmed.is_empty() { "field".to_string() } else { trimmed.to_string() };
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if RUST_KEYWORDS.contains(&out.as_str()) || out == "_" {
        out.push('_');
    }
    out
}

/// A PascalCase type or variant name for arbitrary text: `16:9` → `V16_9`,
/// `""` → `Empty`, `g h` → `GH`, non-ASCII → `UXXXX`.
pub fn variant_name(value: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    let mut prev_digit = false;
    for c in value.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_digit() && prev_digit && upper {
                out.push('_');
            }
            out.push(if upper { c.to_ascii_uppercase() } else { c });
            prev_digit = c.is_ascii_digit();
            upper = false;
        } else if c.is_ascii() {
            upper = true;
        } else {
            out.push_str(&format!("U{:04X}", c as u32));
            prev_digit = false;
            upper = true;
        }
    }
    if out.is_empty() {
        out = "Empty".into();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'V');
    }
    if RUST_KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
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

    #[test]
    fn field_names_for_awkward_keys() {
        assert_eq!(field_name("maxResults"), "max_results");
        assert_eq!(field_name("content-type"), "content_type");
        assert_eq!(field_name("3d"), "_3d");
        assert_eq!(field_name("type"), "type_");
        assert_eq!(field_name("self"), "self_");
        assert_eq!(field_name("Self"), "self_");
        assert_eq!(field_name("*/"), "field");
        assert_eq!(field_name("ünï"), "u00fcnu00ef");
    }

    #[test]
    fn variant_names_for_awkward_values() {
        assert_eq!(variant_name("16:9"), "V16_9");
        assert_eq!(variant_name(""), "Empty");
        assert_eq!(variant_name("a\"b"), "AB");
        assert_eq!(variant_name("g h"), "GH");
        assert_eq!(variant_name("read_only"), "ReadOnly");
        assert_eq!(variant_name("Self"), "Self_");
    }
}
