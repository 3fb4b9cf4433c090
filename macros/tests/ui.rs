//! Compile-time behaviour of `#[capability]` and `#[derive(Capability)]`,
//! pinned with trybuild: each mistake is one error with a span on the
//! user's tokens.

#[test]
fn capability_attribute_and_derive() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/capability/*.rs");
    t.compile_fail("tests/ui/derive/*.rs");
}
