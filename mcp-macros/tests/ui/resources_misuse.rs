use mcp_rs_core::model::resources::ReadResult;

#[derive(mcp_rs_core::TemplateVars)]
struct Vars<'u> {
    path: &'u str,
}

struct R;

#[mcp_rs_core::resources]
impl R {
    #[resource(uri = "a://b")]
    fn fixed(&self, vars: Vars<'_>, result: &mut ReadResult<'_, '_>) {}
}

#[mcp_rs_core::resources]
impl Clone for R {
    fn clone(&self) -> Self { R }
}

#[mcp_rs_core::resources]
impl R {
    #[resource(uri = "a://c", mime = "text/plain")]
    fn other(&self, result: &mut ReadResult<'_, '_>) {}
}

fn main() {}
