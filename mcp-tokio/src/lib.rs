//! # mcp-tokio
//!
//! Async MCP servers and a client on tokio. The protocol lives in the sans-IO
//! [`mcp_core`]; this crate is one drive loop per transport around it: stdio, TCP and Unix
//! sockets with newline framing, Streamable HTTP ([`http`], feature `http`), async tool
//! handlers running concurrently as tokio tasks, runtime tool changes, and a [`client`]
//! (stdio, sockets and HTTP).
//!
//! ```no_run
//! use mcp_tokio::{Handler, Info, Server, ToolDef, ToolOutput, Tools};
//!
//! # async fn run() -> Result<(), mcp_tokio::Error> {
//! let tools = Tools::new();
//! tools.add(
//!     ToolDef::new("wait", r#"{"type":"object","properties":{"ms":{"type":"integer"}}}"#)
//!         .description("Sleeps, reporting progress"),
//!     Handler::async_fn(|args, ctx| async move {
//!         let ms: u64 = args.value()["ms"].as_u64().unwrap_or(100);
//!         for step in 1..=4 {
//!             tokio::time::sleep(std::time::Duration::from_millis(ms / 4)).await;
//!             ctx.progress(step as f64, Some(4.0), None).await;
//!         }
//!         ToolOutput::text("done")
//!     }),
//! );
//! let info = Info { name: "demo".into(), version: "1.0.0".into(), ..Default::default() };
//! Server::new(info, tools).serve_stdio().await
//! # }
//! ```
#![forbid(unsafe_code)]

mod blocking;
#[cfg(feature = "client")]
pub mod client;
mod context;
mod driver;
#[cfg(feature = "http")]
pub mod http;
pub mod keys;
mod lines;
mod prompts;
mod registry;
mod server;
#[cfg(feature = "stdio")]
mod stdio;

pub use context::{Context, RequestError};
pub use keys::{KeySource, Keys, KeysError};
pub use mcp_core::ClientMethod;
pub use prompts::{ErrorReply, PromptFuture, PromptOutput, PromptRequest};
pub use registry::{Annotations, Args, BoxFuture, Content, Handler, ToolDef, ToolOutput, Tools};
pub use server::{random_key, Info, Limits, Server, ShutdownHandle};

/// Why a server stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transport failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The core refused an operation (a local misuse, never the peer's fault).
    #[error("core: {0}")]
    Core(mcp_core::HandleError),
    /// An invariant of this crate broke.
    #[error("internal error: {0}")]
    Internal(&'static str),
}
