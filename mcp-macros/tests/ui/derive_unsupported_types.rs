use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Args {
    pair: (u32, u32),
}

#[derive(ToolArgs)]
struct Letter {
    c: char,
}

#[derive(ToolArgs)]
struct Size {
    n: usize,
}

fn main() {}
