//! Compile-time behaviour of `#[capability]`, pinned with trybuild: each
//! mistake is one error with a span on the user's tokens.

#[test]
fn capability_attribute() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/capability/*.rs");
}
