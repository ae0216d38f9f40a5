use mcp_rs_core::Dispatch;
use mcp_rs_tokio::ToolReply;

struct T;

#[mcp_rs_tokio::tools]
impl T {
    /// A synchronous tool cannot defer here.
    #[tool]
    fn later(&self) -> Dispatch {
        Dispatch::Defer
    }

    /// Nor can an async one return a `Dispatch`.
    #[tool]
    async fn dispatch(&self) -> Dispatch {
        Dispatch::Done
    }

    /// A whole result, and a result to build.
    #[tool]
    async fn both(&self, out: &mut ToolReply) -> Result<ToolReply, String> {
        Ok(ToolReply::default())
    }

    /// A tuple.
    #[tool]
    async fn tuple(&self) -> (u8, u8) {
        (1, 2)
    }
}

fn main() {}
