use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Args<'a> {
    name: &'a str,
}

fn main() {}
