//! Compile errors of `#[mcp_rs_tokio::tools]` misuse (trybuild). Regenerate the expected output
//! with `TRYBUILD=overwrite cargo test -p mcp-rs-macros --test tokio_tools_ui` and review the
//! diff.

#[test]
fn tokio_tools_ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/tokio_*.rs");
}
