use mcp_rs_core::wire::json::JsonStr;

#[derive(mcp_rs_core::PromptArgs)]
struct Args<'i> {
    name: JsonStr<'i>,
    #[arg(rename = "name")]
    other: JsonStr<'i>,
}

fn main() {}
