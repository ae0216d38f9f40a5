#[derive(mcp_core::TemplateVars)]
struct Vars {
    path: f64,
}

fn main() {}
