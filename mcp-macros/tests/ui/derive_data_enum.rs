use mcp_rs_core::ToolArgs;

#[derive(ToolArgs)]
enum Shape {
    Circle { r: f64 },
    Square,
}

fn main() {}
