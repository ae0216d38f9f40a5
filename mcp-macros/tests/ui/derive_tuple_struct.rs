use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Args(u32, u32);

fn main() {}
