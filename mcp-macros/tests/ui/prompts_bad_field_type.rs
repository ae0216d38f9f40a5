use mcp_rs_core::wire::json::JsonStr;

#[derive(mcp_rs_core::PromptArgs)]
struct Args<'i> {
    name: JsonStr<'i>,
    count: u32,
}

fn main() {}
