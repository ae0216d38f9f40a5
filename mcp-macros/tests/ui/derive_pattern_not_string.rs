use mcp_rs_core::typed::ArgList;
use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Number {
    #[arg(pattern = "^[0-9]+$")]
    count: u8,
}

#[derive(ToolArgs)]
struct List<'a> {
    #[arg(pattern = "^[a-z]+$")]
    tags: ArgList<'a, JsonStr<'a>>,
}

#[derive(mcp_rs_core::ToolOutput)]
struct Output {
    #[arg(pattern = "^[0-9]+$")]
    total: u32,
}

fn main() {}
