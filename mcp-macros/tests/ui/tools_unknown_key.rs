use mcp_rs_core::tools;

struct T;

#[tools]
impl T {
    /// Reads.
    #[tool(readonly)]
    fn read(&self) {}
}

fn main() {}
