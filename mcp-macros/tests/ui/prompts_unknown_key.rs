use mcp_rs_core::wire::json::JsonStr;

#[derive(mcp_rs_core::PromptArgs)]
struct Args<'i> {
    #[arg(default = "x")]
    name: JsonStr<'i>,
}

struct P;

#[mcp_rs_core::prompts]
impl P {
    #[prompt(name = "a", summary = "b")]
    fn a(&self, result: &mut mcp_rs_core::model::prompts::PromptResult<'_, '_>) {}
}

fn main() {}
