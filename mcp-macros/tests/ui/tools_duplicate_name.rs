use mcp_rs_core::model::tools;

struct T;

#[tools]
impl T {
    /// One.
    #[tool(name = "same")]
    fn one(&self) {}

    /// Two.
    #[tool(name = "same")]
    fn two(&self) {}
}

fn main() {}
