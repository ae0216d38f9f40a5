use mcp_rs_core::model::prompts::PromptResult;

struct P;

#[mcp_rs_core::prompts]
impl P {
    #[prompt]
    async fn a(&self, result: &mut PromptResult<'_, '_>) {}
}

fn main() {}
