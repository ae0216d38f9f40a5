use mcp_rs_core::model::tools;

struct T;

#[tools]
impl Clone for T {
    fn clone(&self) -> Self {
        T
    }
}

#[tools]
struct S;

fn main() {}
