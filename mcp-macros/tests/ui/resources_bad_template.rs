use mcp_rs_core::model::resources::ReadResult;

struct R;

#[mcp_rs_core::resources]
impl R {
    #[resource_template(uri_template = "file:///{+path}")]
    fn file(&self, result: &mut ReadResult<'_, '_>) {}
}

fn main() {}
