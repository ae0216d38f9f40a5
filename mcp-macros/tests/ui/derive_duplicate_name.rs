use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
#[arg(rename_all = "camelCase")]
struct Args {
    max_count: u32,
    #[arg(rename = "maxCount")]
    other: u32,
}

fn main() {}
