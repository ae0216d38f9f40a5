use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Args {
    #[arg(minimun = 3)]
    count: u32,
}

fn main() {}
