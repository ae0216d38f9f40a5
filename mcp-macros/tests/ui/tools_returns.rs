use mcp_rs_core::wire::json::RawJson;
use mcp_rs_core::{tools, Dispatch};

struct T;

#[tools]
impl T {
    #[tool]
    fn opaque(&self) -> impl Sized {}

    #[tool]
    fn tuple(&self) -> (u8, u8) {
        (1, 2)
    }

    #[tool]
    fn wrapped(&self) -> Result<Dispatch, ()> {
        Ok(Dispatch::Done)
    }

    #[tool]
    fn raw_without_schema(&self, _args: RawJson<'_>) {}
}

fn main() {}
