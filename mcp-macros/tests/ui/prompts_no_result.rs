struct P;

#[mcp_core::prompts]
impl P {
    #[prompt]
    fn a(&self) {}
}

fn main() {}
