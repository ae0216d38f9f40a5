struct T;

#[mcp_rs_tokio::tools]
impl T {
    /// Not a `TaskSupport`.
    #[tool(task = "sometimes")]
    async fn job(&self) {}

    /// Twice.
    #[tool(task, task = "required")]
    async fn twice(&self) {}
}

struct U;

#[mcp_rs_core::tools]
impl U {
    /// `task` in the core form.
    #[tool(task)]
    fn now(&self) {}
}

fn main() {}
