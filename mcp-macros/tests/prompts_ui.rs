//! Compile errors of `#[derive(PromptArgs)]` and `#[prompts]`.

#[test]
fn prompts_ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/prompts_*.rs");
}
