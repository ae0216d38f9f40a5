struct T;

#[mcp_rs_tokio::tools]
impl T {
    /// Mutable state in a shared tool set.
    #[tool]
    async fn bump(&mut self) {}

    /// Synchronous, still shared.
    #[tool]
    fn bump_now(&mut self) {}

    /// By value.
    #[tool]
    async fn consume(self) {}
}

fn main() {}
