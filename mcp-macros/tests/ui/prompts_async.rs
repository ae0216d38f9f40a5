use mcp_core::prompts::PromptResult;

struct P;

#[mcp_core::prompts]
impl P {
    #[prompt]
    async fn a(&self, result: &mut PromptResult<'_, '_>) {}
}

fn main() {}
