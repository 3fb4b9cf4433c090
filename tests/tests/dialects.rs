//! The provider round trip as a property over generated specs: for any
//! input schema of the subset and any valid argument value, project →
//! encode as the provider's model would → decode gives back the original,
//! which the spec's validator accepts. Through OpenAI's strict mode an
//! optional, nullable property's explicit `null` comes back absent — the
//! same `None` in the impl's `Args`; the one case it cannot carry (such a
//! property with a default, left out) must be reported as a loss instead.

use capspec::__internals::Validator;
use capspec_dialects::{Provider, decode, encode, project};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// One property: its schema, and a valid value for it.
fn property(depth: u32) -> BoxedStrategy<(Value, Value)> {
    let leaf = prop_oneof![
        "[a-z]{1,8}".prop_map(|s| (json!({"type": "string", "minLength": 1, "maxLength": 8}), json!(s))),
        (0i64..100).prop_map(|n| (json!({"type": "integer", "minimum": 0, "maximum": 100}), json!(n))),
        any::<bool>().prop_map(|b| (json!({"type": "boolean"}), json!(b))),
        proptest::option::of("[a-z]{0,4}").prop_map(|s| (json!({"type": ["string", "null"]}), json!(s))),
        (0usize..3).prop_map(|i| (json!({"type": "string", "enum": ["red", "green", "blue"]}), json!(["red", "green", "blue"][i]))),
        proptest::collection::vec("[a-z]{1,4}", 0..3).prop_map(|v| (json!({"type": "array", "items": {"type": "string"}, "maxItems": 3}), json!(v))),
        (0i64..5).prop_map(|n| (json!({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}), json!(n))),
        Just((json!({"type": "string", "format": "date-time"}), json!("2026-11-30T12:00:00Z"))),
        proptest::collection::vec(any::<u8>(), 0..8)
            .prop_map(|b| (json!({"type": "string", "contentMediaType": "image/png", "contentEncoding": "base64"}), json!(capspec::content::encode(&b)))),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![3 => leaf, 1 => object(depth - 1)].boxed()
}

/// An object schema with up to four properties, each required or optional
/// (with or without a default), and a valid value (optional ones present or
/// not), plus whether a nullable property with a default was left out.
fn object(depth: u32) -> BoxedStrategy<(Value, Value)> {
    proptest::collection::vec(("[a-z]{1,6}", property(depth), any::<bool>(), any::<bool>(), any::<bool>()), 0..4)
        .prop_map(|props| {
            let mut properties = Map::new();
            let mut required = Vec::new();
            let mut value = Map::new();
            for (name, (mut schema, sample), is_required, has_default, present) in props {
                if properties.contains_key(&name) {
                    continue;
                }
                if !is_required && has_default {
                    schema["default"] = sample.clone();
                }
                if is_required {
                    required.push(json!(name));
                }
                if is_required || present {
                    value.insert(name.clone(), sample);
                }
                properties.insert(name, schema);
            }
            (json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false}), Value::Object(value))
        })
        .boxed()
}

/// Whether `value` leaves out an optional, nullable property with a
/// default somewhere (strict mode cannot tell that from `null`).
fn omits_nullable_default(schema: &Value, value: &Value) -> bool {
    let required: Vec<&Value> = schema["required"].as_array().map(|r| r.iter().collect()).unwrap_or_default();
    schema["properties"].as_object().into_iter().flatten().any(|(name, property)| match value.get(name) {
        None => !required.contains(&&json!(name)) && property.get("default").is_some() && property["type"].as_array().is_some_and(|t| t.contains(&json!("null"))),
        Some(inner) => property["type"] == "object" && omits_nullable_default(property, inner),
    })
}

/// The arguments as an impl sees them: for an optional, nullable property
/// without a default, `null` and "left out" are both `None` in the
/// generated `Args`, so they compare equal here.
fn as_the_impl_sees(schema: &Value, value: &Value) -> Value {
    let Value::Object(map) = value else { return value.clone() };
    let required: Vec<&Value> = schema["required"].as_array().map(|r| r.iter().collect()).unwrap_or_default();
    let mut out = Map::new();
    for (name, v) in map {
        let property = &schema["properties"][name];
        let optional_nullable = !required.contains(&&json!(name)) && property.get("default").is_none() && property["type"].as_array().is_some_and(|t| t.contains(&json!("null")));
        if !(v.is_null() && optional_nullable) {
            out.insert(name.clone(), if property["type"] == "object" { as_the_impl_sees(property, v) } else { v.clone() });
        }
    }
    Value::Object(out)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn project_encode_decode_gives_back_the_arguments((schema, args) in object(2)) {
        let validator = Validator::compile(&schema).expect("the generated schema is in the subset");
        prop_assert!(validator.validate(&args).is_empty(), "the generated value is valid");
        for provider in Provider::ALL {
            let projected = project(provider, "tool", "A tool.", &schema).expect("every generated schema projects");
            let sent: Value = serde_json::from_str(&encode(provider, &schema, args.clone()).to_string()).unwrap();
            let back = decode(provider, &schema, sent);
            if provider == Provider::OpenAi && omits_nullable_default(&schema, &args) {
                prop_assert!(projected.losses.iter().any(|l| l.moved.contains("the default never applies")), "{:?}", projected.losses);
                continue;
            }
            prop_assert_eq!(as_the_impl_sees(&schema, &back), as_the_impl_sees(&schema, &args), "via {}", provider.as_str());
            if provider != Provider::OpenAi {
                prop_assert_eq!(&back, &args, "via {}: values pass unchanged", provider.as_str());
            }
            prop_assert!(validator.validate(&back).is_empty());
        }
    }
}

/// Binary content: Anthropic takes the keywords as they are; OpenAI's
/// strict mode and Gemini carry them in the description (a reported loss).
#[test]
fn binary_content_keywords_reach_every_provider() {
    let schema = json!({
        "type": "object",
        "properties": { "image": { "type": "string", "contentMediaType": "image/png", "contentEncoding": "base64", "description": "A picture." } },
        "required": ["image"],
    });
    let anthropic = project(Provider::Anthropic, "t", "d", &schema).unwrap();
    assert_eq!(anthropic.tool["input_schema"]["properties"]["image"], schema["properties"]["image"]);
    for provider in [Provider::OpenAi, Provider::Gemini] {
        let projected = project(provider, "t", "d", &schema).unwrap();
        let parameters = &projected.tool["parameters"]["properties"]["image"];
        assert_eq!(parameters.get("contentMediaType"), None, "{provider:?}: {parameters}");
        assert_eq!(parameters.get("contentEncoding"), None, "{provider:?}: {parameters}");
        assert_eq!(parameters["type"], "string");
        assert_eq!(parameters["description"], "A picture. (base64 text; bytes of image/png)", "{provider:?}");
        assert!(projected.losses.iter().any(|l| l.moved.contains("contentEncoding")), "{provider:?}: {:?}", projected.losses);
    }
}
