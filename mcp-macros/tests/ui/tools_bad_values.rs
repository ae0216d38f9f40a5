use mcp_rs_core::model::tools;

struct T;

#[tools]
impl T {
    #[tool(name = "has space")]
    fn spaced(&self) {}

    #[tool(meta = "[1]")]
    fn meta_array(&self) {}

    #[tool(input_schema = r#"{"type":"object",}"#)]
    fn bad_schema(&self) {}

    #[tool(read_only = "yes")]
    fn flag_string(&self) {}

    #[tool(title = "a", title = "b")]
    fn twice(&self) {}

    #[tool]
    #[tool]
    fn marked_twice(&self) {}
}

#[tools(no_toolset)]
impl T {}

fn main() {}

struct U;

#[tools]
impl U {
    #[tool]
    const NOT_A_METHOD: u8 = 0;
}
