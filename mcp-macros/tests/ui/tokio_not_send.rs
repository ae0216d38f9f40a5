use std::rc::Rc;

struct T;

#[mcp_rs_tokio::tools]
impl T {
    /// Not `Send` across an await: the task could not move between threads.
    #[tool]
    async fn not_send(&self) {
        let rc = Rc::new(1);
        tokio::task::yield_now().await;
        drop(rc);
    }
}

fn main() {}
