use mcp_rs_core::typed::{ArgError, ToolArgs, ToolOutput};
use mcp_rs_core::wire::json::{JsonWriter, RawJson};
use mcp_rs_core::model::tools;

struct T;
struct Args;
struct Out;

impl<'i> ToolArgs<'i> for Args {
    const SCHEMA: &'static str = r#"{"type":"object"}"#;
    fn parse(_args: RawJson<'i>) -> Result<Self, ArgError<'i>> {
        Ok(Args)
    }
}

impl ToolOutput for Out {
    const SCHEMA: &'static str = r#"{"type":"object"}"#;
    fn write(&self, w: &mut JsonWriter<'_>) {
        w.raw_value("{}");
    }
}

#[tools]
impl T {
    #[tool(input_schema = r#"{"type":"object"}"#)]
    fn typed_and_schema(&self, _args: Args) {}

    #[tool(output_schema = r#"{"type":"object"}"#)]
    fn output_and_schema(&self) -> Out {
        Out
    }
}

fn main() {}
