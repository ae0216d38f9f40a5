use mcp_rs_core::{CallRequest, ToolResult};
use mcp_rs_tokio::{Context, ToolReply};

struct T;

#[mcp_rs_tokio::tools]
impl T {
    /// Two contexts.
    #[tool]
    async fn two_contexts(&self, a: Context, b: &Context) {}

    /// A context in a synchronous tool.
    #[tool]
    fn sync_context(&self, ctx: Context) {}

    /// An async tool borrowing the request.
    #[tool]
    async fn request(&self, request: &CallRequest<'_>) {}

    /// An async tool writing into the core's result.
    #[tool]
    async fn result(&self, result: &mut ToolResult<'_, '_>) {}

    /// The output taken twice.
    #[tool]
    async fn outputs(&self, a: &mut ToolReply, b: &mut ToolReply) {}

    /// A shared output.
    #[tool]
    async fn shared_output(&self, a: &ToolReply) {}

    /// A mutable context.
    #[tool]
    async fn mut_context(&self, ctx: &mut Context) {}
}

fn main() {}
