use mcp_rs_core::model::tools;

struct T;
struct NotArgs;
struct NotOutput;

#[tools]
impl T {
    /// Arguments without `ToolArgs`.
    #[tool]
    fn args(&self, _args: NotArgs) {}

    /// Output without `ToolOutput`.
    #[tool]
    fn output(&self) -> NotOutput {
        NotOutput
    }

    /// An error without `Display`.
    #[tool]
    fn error(&self) -> Result<(), NotOutput> {
        Ok(())
    }
}

fn main() {}
