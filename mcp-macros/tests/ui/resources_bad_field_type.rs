#[derive(mcp_rs_core::TemplateVars)]
struct Vars {
    path: f64,
}

fn main() {}
