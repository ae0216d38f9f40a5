use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Args {
    #[arg(minimum = 10, maximum = 1)]
    count: u32,
}

fn main() {}
