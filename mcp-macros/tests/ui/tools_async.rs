use mcp_core::tools;

struct T;

#[tools]
impl T {
    /// Waits.
    #[tool]
    async fn wait(&self) {}
}

fn main() {}
