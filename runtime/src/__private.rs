//! What generated bindings and the macros name (`::capspec::__private::…`).
//! Not a public API.

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::spec::Category;
pub use crate::code_first::{Capability, CodeFirst, NoOutputSchema, OutputProbe, OutputSchema, require_deserialize, schema_of};
pub use crate::error::CapError;
pub use crate::gate::BoxFuture;
pub use crate::registry::Registration;
pub use crate::run::Run;

/// Decode validated arguments into the generated `Args` type.
pub fn decode_args<T: serde::de::DeserializeOwned>(args: serde_json::Value) -> Result<T, CapError> {
    serde_json::from_value(args).map_err(|e| CapError::new(format!("arguments do not fit the generated Args type: {e}")))
}

/// A spec's default value (JSON text from the generator) as the field's
/// type. `check` has proven the value fits the property's schema, so a
/// failure here is a generator bug, reported as such.
pub fn default_value<T: serde::de::DeserializeOwned>(json: &str) -> T {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("capspec: the spec default {json} does not fit its generated field type: {e}"))
}

/// Encode an impl's output as JSON.
pub fn encode_output<T: serde::Serialize>(output: &T) -> Result<serde_json::Value, CapError> {
    serde_json::to_value(output).map_err(|e| CapError::new(format!("the result does not serialize: {e}")))
}

/// Call an impl with its decoded arguments. Written as a generic call so
/// that an impl whose argument type is not the capability's `Args` is
/// one type error, at the impl.
pub fn call_impl<'a, F, A, Fut>(f: F, run: &'a Run, args: A) -> Fut
where
    F: FnOnce(&'a Run, A) -> Fut,
{
    f(run, args)
}
