//! A call's validated arguments as Cedar values, by the input's Cedar type
//! ([`crate::types`]): what the schema types and the generated Cedar schema
//! declare is what a policy reads.

use cedar_policy::RestrictedExpression;
use serde_json::{Number, Value};

use crate::types::{Attribute, CedarType};

/// Largest whole part a Cedar `decimal` holds (it is an `i64` of
/// ten-thousandths).
const DECIMAL_PLACES: usize = 4;

/// A number Cedar's `decimal` cannot hold exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inexact {
    /// The property holding it (for a set's element, the set's property).
    pub(crate) name: String,
    /// What to say: the path, the value and why it is not rounded.
    pub(crate) message: String,
}

/// How [`record`] treats a number `decimal` cannot hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inexacts {
    /// Stop at the first one.
    Refuse,
    /// Leave it out of the context (no policy reads it).
    LeaveOut,
}

/// `context.input`: the attributes of `value` the type declares; a null or
/// absent property is left out (an optional attribute).
pub(crate) fn record(value: &Value, attributes: &[Attribute], path: &str, inexacts: Inexacts) -> Result<RestrictedExpression, Inexact> {
    let mut fields = Vec::with_capacity(attributes.len());
    for attribute in attributes {
        let Some(field) = value.get(&attribute.name).filter(|v| !v.is_null()) else { continue };
        let at = if path.is_empty() { attribute.name.clone() } else { format!("{path}.{}", attribute.name) };
        if let Some(expr) = convert(field, &attribute.ty, &at, &attribute.name, inexacts)? {
            fields.push((attribute.name.clone(), expr));
        }
    }
    // Names are unique (they were keys of one object).
    Ok(RestrictedExpression::new_record(fields).expect("record attribute names are unique"))
}

/// One value by its type; `None` when it does not have that type (the
/// arguments were validated against the schema the type comes from, so
/// this is a value the type leaves out).
fn convert(value: &Value, ty: &CedarType, path: &str, name: &str, inexacts: Inexacts) -> Result<Option<RestrictedExpression>, Inexact> {
    Ok(match (ty, value) {
        (CedarType::String, Value::String(s)) => Some(RestrictedExpression::new_string(s.clone())),
        (CedarType::Long, Value::Number(n)) => n.as_i64().map(RestrictedExpression::new_long),
        (CedarType::Decimal, Value::Number(n)) => match decimal(n) {
            Some(text) => Some(RestrictedExpression::new_decimal(text)),
            None if inexacts == Inexacts::LeaveOut => None,
            None => {
                return Err(Inexact {
                    name: name.to_string(),
                    message: format!(
                        "`{path}` = {n} cannot be held exactly by Cedar's decimal (at most {DECIMAL_PLACES} decimals, within ±922337203685477.5807): a policy reads it, so the call is denied rather than rounded"
                    ),
                });
            }
        },
        (CedarType::Bool, Value::Bool(b)) => Some(RestrictedExpression::new_bool(*b)),
        (CedarType::Set(item), Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                if let Some(expr) = convert(v, item, &format!("{path}[{i}]"), name, inexacts)? {
                    out.push(expr);
                }
            }
            Some(RestrictedExpression::new_set(out))
        }
        (CedarType::Record(attributes), Value::Object(_)) => Some(record(value, attributes, path, inexacts)?),
        _ => None,
    })
}

/// `n` as a Cedar decimal literal, if it holds `n` exactly: the number as
/// JSON wrote it (its shortest round-trip form), with at most four
/// decimals and in range.
pub(crate) fn decimal(n: &Number) -> Option<String> {
    let text = if let Some(i) = n.as_i64() {
        format!("{i}.0")
    } else if let Some(u) = n.as_u64() {
        format!("{u}.0")
    } else {
        let f = n.as_f64().filter(|f| f.is_finite())?;
        let text = f.to_string();
        if text.contains('.') { text } else { format!("{text}.0") }
    };
    let (whole, fraction) = text.split_once('.')?;
    if fraction.len() > DECIMAL_PLACES {
        return None;
    }
    format!("{whole}{fraction:0<DECIMAL_PLACES$}").parse::<i64>().ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> Number {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn numbers_become_decimals_only_when_held_exactly() {
        for (json, expect) in [
            ("750", Some("750.0")),
            ("750.00", Some("750.0")),
            ("0.1", Some("0.1")),
            ("-12.3456", Some("-12.3456")),
            ("922337203685477", Some("922337203685477.0")),
            ("922337203685478", None),
            ("0.12345", None),
            ("1e20", None),
        ] {
            assert_eq!(decimal(&number(json)).as_deref(), expect, "{json}");
        }
    }
}
