use mcp_rs_core::model::tools;

struct T;

#[tools]
impl T {
    /// Reads.
    #[tool(readonly)]
    fn read(&self) {}
}

fn main() {}
