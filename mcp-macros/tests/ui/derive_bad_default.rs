use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Args {
    #[arg(maximum = 10, default = 11)]
    count: u8,
}

#[derive(ToolArgs)]
struct Flags {
    #[arg(default = "yes")]
    on: bool,
}

fn main() {}
