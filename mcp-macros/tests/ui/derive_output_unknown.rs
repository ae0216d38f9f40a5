use mcp_rs_core::ToolOutput;

#[derive(ToolOutput)]
#[arg(allow_unknown)]
struct Out {
    n: u32,
}

fn main() {}
