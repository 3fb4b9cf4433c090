//! The template environment: templates are files under
//! `codegen/templates/`, undefined variables are errors, and escaping is
//! done only by the filters registered here, from `escape.rs`.

use std::sync::OnceLock;

use minijinja::Environment;

use super::escape;

/// The template environment, built once: templates are files under
/// `codegen/templates/`, undefined variables are errors, and escaping is done
/// only by the filters registered here.
fn templates() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("static syntax config");
        env.set_syntax(syntax);
        env.add_filter("js_string", escape::js_string);
        env.add_filter("block_comment", escape::block_comment);
        // Inline Markdown code whose delimiters the text cannot close.
        env.add_filter("md_code", |value: String| escape::code_span(&value));
        // Plain Markdown text on one line (line breaks folded).
        env.add_filter("md_text", |value: String| escape::one_line(&value));
        for (name, source) in [
            ("js/facade.js.j2", include_str!("../../templates/js/facade.js.j2")),
            ("js/facade.d.ts.j2", include_str!("../../templates/js/facade.d.ts.j2")),
            ("catalog/module.md.j2", include_str!("../../templates/catalog/module.md.j2")),
            ("catalog/CATALOG.md.j2", include_str!("../../templates/catalog/CATALOG.md.j2")),
            ("catalog/file.md.j2", include_str!("../../templates/catalog/file.md.j2")),
            ("snapshot/categories.snap.j2", include_str!("../../templates/snapshot/categories.snap.j2")),
        ] {
            env.add_template(name, source).expect("templates parse");
        }
        env
    })
}

/// Render a named template; templates are static and their inputs are built
/// by this crate, so a failure is a bug in capspec, not in a spec.
pub(super) fn render_template(name: &str, ctx: minijinja::Value) -> String {
    templates()
        .get_template(name)
        .and_then(|t| t.render(ctx))
        .unwrap_or_else(|e| panic!("template {name} failed: {e:#}"))
}

