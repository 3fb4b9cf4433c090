//! Arbitrary JSON arguments against arbitrary schemas: coercion and
//! validation refuse or accept, never panic. Input: `<schema JSON>\n<args JSON>`.
#![no_main]

use capspec::__internals::coerce;
use capspec::__internals::Validator;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Some((schema, args)) = text.split_once('\n') else { return };
    let (Ok(schema), Ok(args)) = (serde_json::from_str::<serde_json::Value>(schema), serde_json::from_str::<serde_json::Value>(args)) else {
        return;
    };
    let Ok(validator) = Validator::compile(&schema) else { return };
    if let Ok(map) = coerce(args, &validator) {
        let _ = validator.validate(&serde_json::Value::Object(map));
    }
});
