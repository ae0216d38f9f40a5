use mcp_rs_core::wire::json::RawJson;
use mcp_rs_core::model::tools;

struct T;
struct A;
struct B;

#[tools]
impl T {
    /// Two argument types.
    #[tool]
    fn both(&self, _a: A, _b: B) {}

    /// Raw and typed.
    #[tool(input_schema = r#"{"type":"object"}"#)]
    fn raw(&self, _a: RawJson<'_>, _b: RawJson<'_>) {}
}

fn main() {}
