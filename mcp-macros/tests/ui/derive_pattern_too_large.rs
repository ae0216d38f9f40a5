use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
struct Counted<'a> {
    #[arg(pattern = "^[a-z]{1,300}$")]
    name: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct Nested<'a> {
    #[arg(pattern = "^(?:(?:abc){10}){10}$")]
    name: JsonStr<'a>,
}

#[derive(ToolArgs)]
struct Huge<'a> {
    #[arg(pattern = "((a{1000}){1000}){1000}")]
    name: JsonStr<'a>,
}

fn main() {}
