use mcp_rs_core::model::prompts::PromptResult;

struct P;

#[mcp_rs_core::prompts]
impl P {
    #[prompt(name = "same")]
    fn a(&self, result: &mut PromptResult<'_, '_>) {}
    #[prompt(name = "same")]
    fn b(&self, result: &mut PromptResult<'_, '_>) {}
}

fn main() {}
