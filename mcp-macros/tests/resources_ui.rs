//! Compile errors of `#[derive(TemplateVars)]` and `#[resources]`.

#[test]
fn resources_ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/resources_*.rs");
}
