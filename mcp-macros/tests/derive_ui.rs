//! Compile errors of `#[derive(ToolArgs)]` / `#[derive(ToolOutput)]` for misuse.
#![allow(missing_docs)]

#[test]
fn derive_misuse_is_a_clear_compile_error() {
    trybuild::TestCases::new().compile_fail("tests/ui/derive_*.rs");
}
