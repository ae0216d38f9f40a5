use mcp_rs_core::model::resources::ReadResult;

#[derive(mcp_rs_core::TemplateVars)]
struct Vars<'u> {
    path: &'u str,
    extra: &'u str,
}

struct R;

#[mcp_rs_core::resources]
impl R {
    #[resource_template(uri_template = "file:///{path}/{name}")]
    fn file(&self, vars: Vars<'_>, result: &mut ReadResult<'_, '_>) {}
}

fn main() {}
