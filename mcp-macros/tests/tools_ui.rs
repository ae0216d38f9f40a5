//! Compile errors of `#[tools]` misuse (trybuild). Regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p mcp-rs-macros --test tools_ui` and review the diff.

#[test]
fn tools_ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/tools_*.rs");
}
