//! Every escaping rule for generated text outside Rust (Rust literals are
//! built by `quote`). Templates reach these as the filters registered in
//! `templates.rs`; renderers call them directly. Nothing else
//! escapes spec text.

/// A JSON string literal, safe inside JavaScript source: besides JSON's
/// own escapes, U+2028/U+2029 and `<`, `>` and `` ` `` are written as
/// `\uXXXX`, so the literal is inert anywhere a script can appear.
pub fn js_string(value: String) -> String {
    let json = serde_json::to_string(&value).expect("strings serialize");
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '\u{2028}' | '\u{2029}' | '<' | '>' | '`' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Text inside a `/* … */` or `/** … */` comment: `*/` cannot close it
/// and line separators are folded, so no text can end the comment.
pub fn block_comment(value: String) -> String {
    value
        .replace("*/", "*\\/")
        .replace(['\u{2028}', '\u{2029}', '\r'], " ")
        .lines()
        .collect::<Vec<_>>()
        .join("\n * ")
}

/// ` /* text */` on one line (the catalog's parameter notes); `*/` in the
/// text cannot close it.
pub fn inline_comment(text: &str) -> String {
    format!(" /* {} */", one_line(text).replace("*/", "*\\/"))
}

/// Inline Markdown code that no backtick in `text` can close.
pub fn code_span(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || longest > 0 { " " } else { "" };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Plain text on one line: whitespace runs (including line breaks) folded.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A spec path as it appears in a marker comment: whatever characters it
/// holds, it cannot end the comment the marker sits in (`*/`, `-->`, a
/// line break).
pub fn marker_source(source: &str) -> String {
    source.escape_debug().collect::<String>().replace("*/", "*\\/").replace("-->", "--\\>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_string_is_inert() {
        assert_eq!(js_string("a\"b</script>${x}`\u{2028}".into()), r#""a\"b\u003c/script\u003e${x}\u0060\u2028""#);
    }

    #[test]
    fn block_comment_cannot_close() {
        assert_eq!(block_comment("x */ y\nz".into()), "x *\\/ y\n * z");
    }

    #[test]
    fn code_spans_survive_backticks() {
        assert_eq!(code_span("a"), "`a`");
        assert_eq!(code_span("a`b"), "`` a`b ``");
        assert_eq!(code_span("``x"), "``` ``x ```");
    }
}
