//! capspec's procedural macros. Use them through the `capspec` crate, which
//! re-exports them and pins this crate to its exact version.
//!
//! Each macro is a pipeline in its own module — `capability/{parse, check,
//! expand}` and `derive/{attr, check, expand}` — with errors gathered in
//! `errors`: parse (`syn`) → check → expand. On any error the user's item is
//! re-emitted unchanged next to the `compile_error!`, so the IDE keeps
//! working and no secondary errors cascade.
//!
//! A code-first capability: the derive declares its spec (the doc comment
//! is its description, the fields its closed input), `#[capability]` makes
//! the fn its impl.
//!
//! ```
//! use capspec::{CapResult, Capability, Run, capability};
//!
//! /// Add tags to a note.
//! #[derive(serde::Deserialize, schemars::JsonSchema, Capability)]
//! #[capability(module = "notes", category = "write")]
//! pub struct TagNote {
//!     /// The note to tag.
//!     pub note_id: String,
//!     pub tags: Vec<String>,
//! }
//!
//! #[capability]
//! async fn tag_note(_run: &Run, args: TagNote) -> CapResult<usize> {
//!     Ok(args.tags.len())
//! }
//!
//! assert_eq!((TagNote::SPEC.module, TagNote::SPEC.name), ("notes", "tag_note"));
//! assert_eq!(TagNote::SPEC.description, "Add tags to a note.");
//! ```

#![warn(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;

mod capability;
mod derive;
mod errors;

/// Register an async fn as the implementation of a generated capability.
///
/// ```text
/// #[capability(workspace::read_file)]
/// async fn read_file(run: &Run, args: workspace::read_file::Args) -> CapResult<Output> { … }
/// ```
///
/// The argument is the path of the generated capability module; the fn must
/// be `async`, take `(&Run, <path>::Args)` and return `CapResult<T>` with
/// `T: Serialize`. The fn stays an ordinary fn; the runtime calls it only
/// through `invoke`.
///
/// Without a path, the fn implements a code-first capability: its args type
/// must `#[derive(Capability)]`, and that derive names the capability.
///
/// ```text
/// #[capability]
/// async fn tag_note(run: &Run, args: TagNote) -> CapResult<Tagged> { … }
/// ```
#[proc_macro_attribute]
pub fn capability(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item: TokenStream2 = item.into();
    match capability::expand(attr.into(), item.clone()) {
        Ok(tokens) => tokens.into(),
        Err(err) => {
            let error = err.to_compile_error();
            quote!(#item #error).into()
        }
    }
}

/// Declare a code-first capability on its args struct.
///
/// ```text
/// #[derive(Deserialize, JsonSchema, Capability)]
/// #[capability(module = "notes", category = "write", description = "Tag a note.")]
/// struct TagNote { title: String, tag: String }
/// ```
///
/// `module`, `category` (`read | write | execute | external`) and a
/// non-empty `description` are required; `name` defaults to the struct name
/// in snake_case without a trailing `Args`. `title`, `aliases`, `hints(…)`,
/// `open` and `feature = "…"` (the cargo feature it lives behind) are as in
/// a YAML spec. The input schema comes from `schemars`, its properties in
/// the order the struct declares its fields. `cargo xtask sync` exports the
/// spec from the compiled crate (listed under `[code_first]` in
/// `capspec.toml`) into the generated files.
#[proc_macro_derive(Capability, attributes(capability))]
pub fn derive_capability(input: TokenStream) -> TokenStream {
    match derive::expand(input.into()) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}
