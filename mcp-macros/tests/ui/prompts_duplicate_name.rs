use mcp_core::json::JsonStr;

#[derive(mcp_core::PromptArgs)]
struct Args<'i> {
    name: JsonStr<'i>,
    #[arg(rename = "name")]
    other: JsonStr<'i>,
}

fn main() {}
