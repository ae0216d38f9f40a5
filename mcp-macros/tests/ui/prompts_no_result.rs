struct P;

#[mcp_rs_core::prompts]
impl P {
    #[prompt]
    fn a(&self) {}
}

fn main() {}
