//! The args struct's fields as serde names them on the wire, in the order
//! the struct declares them: the order a code-first capability's
//! properties are written in (DESIGN §4). schemars writes the properties in
//! that order too, but into a `serde_json::Map`, which keeps it only in a
//! build with `preserve_order`; this list keeps it in every build.
//!
//! Only the attributes that name a field are read (`rename`, the
//! container's `rename_all`, `skip`, `skip_deserializing`); a `flatten`ed
//! field's properties are not known here and are listed after these, in
//! name order, as any property this list does not name.

use super::input::{Input, Shape};

/// The wire names of `input`'s named fields, in declaration order.
pub fn wire_names(input: &Input) -> Vec<String> {
    let Shape::Struct(syn::Fields::Named(fields)) = &input.shape else { return Vec::new() };
    let rename_all = serde_value(&input.attrs, "rename_all");
    let mut out = Vec::new();
    for field in &fields.named {
        if serde_flag(&field.attrs, &["skip", "skip_deserializing", "flatten"]) {
            continue;
        }
        let Some(ident) = &field.ident else { continue };
        let name = ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
        let wire = match serde_value(&field.attrs, "rename") {
            Some(renamed) => renamed,
            None => rename_all.as_deref().map_or(name.clone(), |rule| apply_rule(rule, &name)),
        };
        out.push(wire);
    }
    out
}

/// The value of `#[serde(key = "…")]`, or of `#[serde(key(deserialize =
/// "…"))]` (the name arguments are read by).
fn serde_value(attrs: &[syn::Attribute], key: &str) -> Option<String> {
    let mut found = None;
    each_serde_item(attrs, |meta| {
        if !meta.path.is_ident(key) {
            return Ok(false);
        }
        if meta.input.peek(syn::Token![=]) {
            let value: syn::LitStr = meta.value()?.parse()?;
            found = Some(value.value());
        } else {
            meta.parse_nested_meta(|inner| {
                if inner.path.is_ident("deserialize") {
                    let value: syn::LitStr = inner.value()?.parse()?;
                    found = Some(value.value());
                    Ok(())
                } else {
                    skip(&inner)
                }
            })?;
        }
        Ok(true)
    });
    found
}

/// Whether a `#[serde(…)]` attribute holds one of `flags`.
fn serde_flag(attrs: &[syn::Attribute], flags: &[&str]) -> bool {
    let mut found = false;
    each_serde_item(attrs, |meta| {
        found |= flags.iter().any(|f| meta.path.is_ident(f));
        Ok(false)
    });
    found
}

/// Each item of the struct's or field's `#[serde(…)]` attributes, to
/// `visit`; an item it leaves unread (returning `false`) is skipped whole.
fn each_serde_item(attrs: &[syn::Attribute], mut visit: impl FnMut(&syn::meta::ParseNestedMeta) -> syn::Result<bool>) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| if visit(&meta)? { Ok(()) } else { skip(&meta) });
    }
}

/// Read past an item's value: `= expr`, or `(…)` of items.
fn skip(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip(&inner))?;
    }
    Ok(())
}

/// serde's `rename_all` rule applied to a snake_case field name.
fn apply_rule(rule: &str, field: &str) -> String {
    let words = field.split('_').filter(|w| !w.is_empty());
    let capitalized = |w: &str| {
        let mut chars = w.chars();
        chars.next().map(|c| c.to_uppercase().chain(chars).collect::<String>()).unwrap_or_default()
    };
    match rule {
        "lowercase" => field.to_lowercase(),
        "UPPERCASE" => field.to_uppercase(),
        "PascalCase" => words.map(capitalized).collect(),
        "camelCase" => {
            let pascal: String = words.map(capitalized).collect();
            let mut chars = pascal.chars();
            chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
        }
        "SCREAMING_SNAKE_CASE" => field.to_uppercase(),
        "kebab-case" => field.replace('_', "-"),
        "SCREAMING-KEBAB-CASE" => field.replace('_', "-").to_uppercase(),
        _ => field.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::input::Input;
    use super::wire_names;

    #[test]
    fn fields_are_named_as_serde_reads_them_in_declared_order() {
        let input = Input::parse(quote::quote! {
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase", deny_unknown_fields)]
            struct Search {
                query_text: String,
                #[serde(default, skip_serializing_if = "Option::is_none", bound(deserialize = "u32: Default"), rename = "max")]
                limit: Option<u32>,
                #[serde(skip)]
                cache: (),
                #[serde(flatten)]
                extra: Extra,
                #[serde(rename(serialize = "a", deserialize = "after_id"))]
                after: Option<String>,
                r#type: String,
            }
        })
        .unwrap();
        assert_eq!(wire_names(&input), ["queryText", "max", "after_id", "type"]);
    }

    #[test]
    fn every_rename_all_rule_is_serde_s() {
        let rules = [
            ("lowercase", "max_items"),
            ("UPPERCASE", "MAX_ITEMS"),
            ("PascalCase", "MaxItems"),
            ("camelCase", "maxItems"),
            ("snake_case", "max_items"),
            ("SCREAMING_SNAKE_CASE", "MAX_ITEMS"),
            ("kebab-case", "max-items"),
            ("SCREAMING-KEBAB-CASE", "MAX-ITEMS"),
        ];
        for (rule, expected) in rules {
            assert_eq!(super::apply_rule(rule, "max_items"), expected, "{rule}");
        }
    }
}
