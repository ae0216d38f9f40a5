use mcp_rs_core::Dispatch;

struct T;
struct NotArgs;
struct NotOutput;

fn wrong_inline(_: &T) -> Dispatch {
    Dispatch::Defer
}

#[mcp_rs_tokio::tools]
impl T {
    /// Arguments without `ToolArgs`.
    #[tool]
    async fn args(&self, _args: NotArgs) {}

    /// Output without `ToolOutput`.
    #[tool]
    async fn output(&self) -> NotOutput {
        NotOutput
    }

    /// An error without `Display`.
    #[tool]
    async fn error(&self) -> Result<(), NotOutput> {
        Ok(())
    }

    /// An `inline` of the wrong type.
    #[tool(inline = wrong_inline)]
    async fn inline(&self) {}
}

fn main() {}
