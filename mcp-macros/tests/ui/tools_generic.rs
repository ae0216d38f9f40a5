use mcp_rs_core::model::tools;

struct T;

#[tools]
impl T {
    /// Generic.
    #[tool]
    fn generic<A>(&self, _args: A) {}
}

fn main() {}
