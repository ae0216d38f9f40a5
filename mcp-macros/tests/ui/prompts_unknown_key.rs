use mcp_core::json::JsonStr;

#[derive(mcp_core::PromptArgs)]
struct Args<'i> {
    #[arg(default = "x")]
    name: JsonStr<'i>,
}

struct P;

#[mcp_core::prompts]
impl P {
    #[prompt(name = "a", summary = "b")]
    fn a(&self, result: &mut mcp_core::prompts::PromptResult<'_, '_>) {}
}

fn main() {}
