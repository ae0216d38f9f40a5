use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Args {
    #[arg(minimum = -1)]
    count: u8,
}

fn main() {}
