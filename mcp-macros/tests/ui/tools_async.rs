use mcp_rs_core::model::tools;

struct T;

#[tools]
impl T {
    /// Waits.
    #[tool]
    async fn wait(&self) {}
}

fn main() {}
