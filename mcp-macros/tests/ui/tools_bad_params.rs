use mcp_rs_core::{tools, CallRequest, ToolResult};

struct T;

#[tools]
impl T {
    #[tool]
    fn by_value(self) {}

    #[tool]
    fn str_arg(&self, _text: &str) {}

    #[tool]
    fn shared_result(&self, _result: &ToolResult<'_, '_>) {}

    #[tool]
    fn owned_request(&self, _request: CallRequest<'_>) {}

    #[tool]
    fn tuple(&self, _pair: (u8, u8)) {}

    #[tool]
    fn opaque(&self, _args: impl Sized) {}
}

fn main() {}
