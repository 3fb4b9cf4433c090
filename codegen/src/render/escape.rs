//! Every escaping rule for generated text (Rust literals in token streams
//! are built by `proc_macro2`; text written around `prettyplease` uses
//! [`rust_string`], which is the same). Templates reach these as the
//! filters registered in `templates.rs`; renderers call them directly.
//! Nothing else escapes spec text.

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

/// A Rust string literal for `text`, exactly as
/// `proc_macro2::Literal::string(text).to_string()` writes it (outside a
/// procedural macro), but copying runs of plain ASCII whole instead of
/// escaping character by character: `"`, `\\`, control and non-printable
/// characters are escaped as `char::escape_debug` does, NUL as `\0` (or
/// `\x00` before a digit 0–7), `'` is left as it is.
pub fn rust_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let b = bytes[i];
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(&text[start..i]);
        let ch = text[i..].chars().next().expect("a char starts here");
        i += ch.len_utf8();
        match ch {
            '\0' if text[i..].starts_with(|next: char| ('0'..='7').contains(&next)) => out.push_str("\\x00"),
            '\0' => out.push_str("\\0"),
            '\'' => out.push('\''),
            _ => out.extend(ch.escape_debug()),
        }
        start = i;
    }
    out.push_str(&text[start..]);
    out.push('"');
    out
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

    /// `rust_string` is what `proc_macro2` writes, for every character
    /// class it treats differently (quotes, backslash, NUL before and not
    /// before an octal digit, controls, line and paragraph separators,
    /// combining marks, unassigned and private-use code points, emoji).
    #[test]
    fn rust_string_is_proc_macro2s_literal() {
        let mut samples: Vec<String> = vec![
            String::new(),
            "plain".into(),
            "\"quoted\" \\ 'single' \0 \x007 \x009 \x00a \u{7f} \t\r\n".into(),
            "\u{2028}\u{2029} \u{301}a\u{301} \u{e000} \u{10ffff} 🦀 ünï → ≥ \u{200b}".into(),
            "*/ ${x} </script> \"# r#\"raw\"#".into(),
        ];
        samples.extend((0u32..0x3100).step_by(3).filter_map(char::from_u32).collect::<Vec<_>>().chunks(40).map(|c| c.iter().collect()));
        for text in &samples {
            assert_eq!(super::rust_string(text), proc_macro2::Literal::string(text).to_string(), "{text:?}");
        }
    }
}
