use mcp_core::json::JsonStr;
use mcp_core::ToolArgs;

#[derive(ToolArgs)]
struct Args<'a> {
    #[arg(pattern = "^[a-z]+$")]
    name: JsonStr<'a>,
}

fn main() {}
