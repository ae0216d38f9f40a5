use mcp_rs_core::{CallRequest, Dispatch, ToolResult};

struct T;

fn answer(_: &T, _: &CallRequest<'_>, _: &mut ToolResult<'_, '_>) -> Dispatch {
    Dispatch::Defer
}

#[mcp_rs_tokio::tools]
impl T {
    /// `inline` on a synchronous tool.
    #[tool(inline = answer)]
    fn now(&self) {}
}

struct U;

#[mcp_rs_core::tools]
impl U {
    /// `inline` in the core form.
    #[tool(inline = answer)]
    fn now(&self) {}

    /// `Context` in the core form.
    #[tool]
    fn context(&self, ctx: mcp_rs_tokio::Context) {}
}

#[mcp_rs_tokio::tools(no_tool_set)]
impl T {}

fn main() {}
