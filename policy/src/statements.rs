//! Where each policy of a `.cedar` file begins. Cedar's public API keeps a
//! policy's source location to itself, and a policy without `@id` is named
//! `file:line`; Cedar parses a file's policies in order, so the n-th
//! statement found here is the n-th policy it returns.

/// The byte offset of each top-level statement's first character
/// (an annotation or the effect), skipping whitespace, `//` comments and
/// `;` inside string literals.
pub(crate) fn starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_statement = false;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' => {
                if !in_statement {
                    out.push(i);
                    in_statement = true;
                }
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b';' => in_statement = false,
            c if c.is_ascii_whitespace() => {}
            _ if !in_statement => {
                out.push(i);
                in_statement = true;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line_col;

    #[test]
    fn statements_start_at_their_annotation_or_effect_past_comments_and_strings() {
        let text = "// a comment; with a semicolon\n@id(\"one;\")\nforbid(principal, action, resource)\n  when { context.input.path like \"*;\" };\n\n  permit(principal, action, resource);";
        let found: Vec<(u32, u32)> = starts(text).into_iter().map(|o| line_col(text, o)).collect();
        assert_eq!(found, [(2, 1), (6, 3)]);
    }
}
