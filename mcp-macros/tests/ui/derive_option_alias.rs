use mcp_rs_core::ToolArgs;

type Maybe<T> = Option<T>;

#[derive(ToolArgs)]
struct Args {
    count: Maybe<u32>,
}

fn main() {}
