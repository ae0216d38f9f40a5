use mcp_core::json::JsonStr;

#[derive(mcp_core::PromptArgs)]
struct Args<'i> {
    name: JsonStr<'i>,
    count: u32,
}

fn main() {}
