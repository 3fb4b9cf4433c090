//! The `SPEC` constant of a capability's Rust module, in two forms: as
//! tokens (formatted by `prettyplease` like the rest of the file), and as
//! the text `prettyplease` prints for those tokens, written directly. The
//! constant is mostly long string literals — schemas, descriptions — that
//! cost far more to tokenize, parse and print than to write; the renderer
//! writes the text and keeps the tokens for the fallback (see `abbrev.rs`).
//! A test holds the two forms equal over literal lengths on both sides of
//! every line-break decision.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

use crate::model::{Annotations, Category, CapabilitySpec, ModuleSpec};
use super::artifact::{contract_fingerprint, input_schema_ordered};
use super::escape::rust_string;

/// The longest line `prettyplease` keeps whole (its margin).
const MARGIN: usize = 89;
/// The indentation of `SPEC`'s fields (inside `pub mod <capability>`).
const FIELD_INDENT: usize = 8;

/// Everything `SPEC` holds, as the text of its values: what the generated
/// `capspec::Spec` says, for hosts that build one at run time
/// ([`runtime_module`](super::runtime_module)).
#[allow(missing_docs)]
pub struct SpecConst {
    pub module: String,
    pub name: String,
    pub wire_name: String,
    pub title: Option<String>,
    pub annotations: Annotations,
    /// The `capspec::Category` variant: `Read`, `Write`, `Execute`, `External`.
    pub category: &'static str,
    pub description: String,
    pub summary: String,
    pub signature: String,
    pub input_schema: String,
    pub output_schema: Option<String>,
    pub user_message: Option<String>,
    pub deferred: bool,
    pub direct: bool,
    pub aliases: Vec<String>,
    pub deprecated: Option<String>,
    pub fingerprint: String,
}

impl SpecConst {
    /// The values of `cap`'s `SPEC`.
    pub fn of(module: &ModuleSpec, cap: &CapabilitySpec) -> SpecConst {
        SpecConst {
            module: module.name.clone(),
            name: cap.name.clone(),
            wire_name: cap.wire_name.clone(),
            title: cap.title.clone(),
            annotations: cap.hints.annotations(cap.category),
            category: match cap.category {
                Category::Read => "Read",
                Category::Write => "Write",
                Category::Execute => "Execute",
                Category::External => "External",
            },
            description: cap.description.clone(),
            summary: cap.summary(),
            signature: super::catalog::signature(cap),
            // Properties as declared: a host whose build keeps JSON key
            // order serves them so; one that does not serves them sorted.
            input_schema: serde_json::to_string(&input_schema_ordered(cap)).expect("schemas serialize"),
            output_schema: cap.output.as_ref().map(|s| serde_json::to_string(&s.to_ordered()).expect("schemas serialize")),
            user_message: cap.user_message.clone(),
            deferred: cap.deferred,
            direct: cap.direct,
            aliases: cap.aliases.clone(),
            deprecated: cap.deprecated.clone(),
            fingerprint: contract_fingerprint(module, cap),
        }
    }

    /// The constant as tokens.
    pub(super) fn tokens(&self) -> TokenStream {
        let lit = |s: &str| Literal::string(s);
        let opt = |v: &Option<String>| match v {
            Some(v) => {
                let l = lit(v);
                quote! { Some(#l) }
            }
            None => quote! { None },
        };
        let (module, name, wire_name) = (lit(&self.module), lit(&self.name), lit(&self.wire_name));
        let (description, summary, signature) = (lit(&self.description), lit(&self.summary), lit(&self.signature));
        let (input_schema, fingerprint) = (lit(&self.input_schema), lit(&self.fingerprint));
        let (title, output_schema, user_message, deprecated) = (opt(&self.title), opt(&self.output_schema), opt(&self.user_message), opt(&self.deprecated));
        let Annotations { read_only, destructive, idempotent, open_world } = self.annotations;
        let category = Ident::new(self.category, Span::call_site());
        let (deferred, direct) = (self.deferred, self.direct);
        let aliases: Vec<Literal> = self.aliases.iter().map(|a| lit(a)).collect();
        quote! {
            /// The spec of this capability.
            pub const SPEC: ::capspec::Spec = ::capspec::Spec {
                module: #module,
                name: #name,
                wire_name: #wire_name,
                title: #title,
                annotations: ::capspec::Annotations {
                    read_only: #read_only,
                    destructive: #destructive,
                    idempotent: #idempotent,
                    open_world: #open_world,
                },
                category: ::capspec::Category::#category,
                description: #description,
                summary: #summary,
                signature: #signature,
                input_schema: #input_schema,
                output_schema: #output_schema,
                user_message: #user_message,
                deferred: #deferred,
                direct: #direct,
                aliases: &[#(#aliases),*],
                deprecated: #deprecated,
                fingerprint: #fingerprint,
            };
        }
    }

    /// The constant as `prettyplease` prints [`tokens`](Self::tokens) at
    /// the indentation of a capability module's items, ending in a newline.
    pub(super) fn text(&self) -> String {
        let mut out = String::with_capacity(512 + self.description.len() * 2 + self.input_schema.len() * 2);
        let lit = rust_string;
        out.push_str("    /// The spec of this capability.\n    pub const SPEC: ::capspec::Spec = ::capspec::Spec {\n");
        let mut field = |key: &str, value: &str| {
            for _ in 0..FIELD_INDENT {
                out.push(' ');
            }
            out.push_str(key);
            out.push_str(": ");
            out.push_str(value);
            out.push_str(",\n");
        };
        field("module", &lit(&self.module));
        field("name", &lit(&self.name));
        field("wire_name", &lit(&self.wire_name));
        field("title", &option("title", self.title.as_deref().map(lit)));
        let a = self.annotations;
        field(
            "annotations",
            &format!(
                "::capspec::Annotations {{\n{i}    read_only: {},\n{i}    destructive: {},\n{i}    idempotent: {},\n{i}    open_world: {},\n{i}}}",
                a.read_only,
                a.destructive,
                a.idempotent,
                a.open_world,
                i = " ".repeat(FIELD_INDENT)
            ),
        );
        field("category", &format!("::capspec::Category::{}", self.category));
        field("description", &lit(&self.description));
        field("summary", &lit(&self.summary));
        field("signature", &lit(&self.signature));
        field("input_schema", &lit(&self.input_schema));
        field("output_schema", &option("output_schema", self.output_schema.as_deref().map(lit)));
        field("user_message", &option("user_message", self.user_message.as_deref().map(lit)));
        field("deferred", if self.deferred { "true" } else { "false" });
        field("direct", if self.direct { "true" } else { "false" });
        field("aliases", &list("aliases", self.aliases.iter().map(|a| lit(a)).collect()));
        field("deprecated", &option("deprecated", self.deprecated.as_deref().map(lit)));
        field("fingerprint", &lit(&self.fingerprint));
        out.push_str("    };\n");
        out
    }
}

/// Whether `key: <value>,` fits on one line at the fields' indentation.
fn fits(key: &str, value_len: usize) -> bool {
    let line = FIELD_INDENT + key.len() + ": ".len() + value_len + ",".len();
    line <= MARGIN
}

/// `None`, `Some(lit)`, or `Some(` / the literal on its own line / `)`.
fn option(key: &str, literal: Option<String>) -> String {
    match literal {
        None => "None".into(),
        Some(l) if fits(key, l.len() + 6) => format!("Some({l})"),
        Some(l) => format!("Some(\n{}{l},\n{})", " ".repeat(FIELD_INDENT + 4), " ".repeat(FIELD_INDENT)),
    }
}

/// `&[a, b]`, or one element per line.
fn list(key: &str, literals: Vec<String>) -> String {
    let one_line = format!("&[{}]", literals.join(", "));
    if literals.is_empty() || fits(key, one_line.len()) {
        return one_line;
    }
    let inner = " ".repeat(FIELD_INDENT + 4);
    let mut out = String::from("&[\n");
    for l in &literals {
        out.push_str(&format!("{inner}{l},\n"));
    }
    out.push_str(&" ".repeat(FIELD_INDENT));
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `prettyplease` prints for the tokens, inside a module as in a
    /// generated file.
    fn formatted(spec: &SpecConst) -> String {
        let tokens = spec.tokens();
        let file: syn::File = syn::parse2(quote! { pub mod m { #tokens } }).unwrap();
        let text = prettyplease::unparse(&file);
        text.strip_prefix("pub mod m {\n").unwrap().strip_suffix("}\n").unwrap().to_string()
    }

    fn spec() -> SpecConst {
        SpecConst {
            module: "m".into(),
            name: "n".into(),
            wire_name: "m_n".into(),
            title: None,
            annotations: Annotations { read_only: true, destructive: false, idempotent: true, open_world: false },
            category: "Read",
            description: "D.".into(),
            summary: "D.".into(),
            signature: "n()".into(),
            input_schema: "{}".into(),
            output_schema: None,
            user_message: None,
            deferred: false,
            direct: false,
            aliases: vec![],
            deprecated: None,
            fingerprint: "0123".into(),
        }
    }

    /// Every optional field and the alias list, at every length around the
    /// line width, with escapes and multi-byte text: the written text is
    /// exactly what `prettyplease` prints.
    #[test]
    fn the_written_constant_is_what_prettyplease_prints() {
        for n in 0..120 {
            let text = format!("{}é\"\\\n{}", "x".repeat(n), "→".repeat(n % 3));
            let mut s = spec();
            s.title = Some(text.clone());
            s.output_schema = Some("y".repeat(n));
            s.user_message = Some(text.clone());
            s.deprecated = Some("z".repeat(n + 5));
            s.description = text.clone();
            s.aliases = (0..(n % 9)).map(|i| format!("{}{i}", "a".repeat(n / 4))).collect();
            s.deferred = n % 2 == 0;
            assert_eq!(s.text(), formatted(&s), "length {n}");
        }
        assert_eq!(spec().text(), formatted(&spec()));
    }
}
