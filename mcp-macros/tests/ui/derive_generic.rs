use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Args<T> {
    value: T,
}

fn main() {}
