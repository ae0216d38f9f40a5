//! # mcp-tokio
//!
//! Async MCP servers and a client on tokio. The protocol lives in the sans-IO
//! [`mcp_rs_core`]; this crate is one drive loop per transport around it: stdio, TCP and Unix
//! sockets with newline framing, Streamable HTTP ([`http`], feature `http`), async tool
//! handlers running concurrently as tokio tasks, runtime tool changes, and a [`client`]
//! (stdio, sockets and HTTP).
//!
//! ```no_run
//! use mcp_rs_tokio::{Handler, ServerInfo, Server, ToolDef, ToolReply, Tools};
//!
//! # async fn run() -> Result<(), mcp_rs_tokio::Error> {
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
//!         ToolReply::text("done")
//!     }),
//! );
//! let info = ServerInfo { name: "demo".into(), version: "1.0.0".into(), ..Default::default() };
//! Server::new(info, tools).serve_stdio().await
//! # }
//! ```
//!
//! With the `macros` feature, `#[mcp_rs_tokio::tools]` (the `tools` item) writes such
//! registrations from the methods of an `impl` block, `async fn` with a [`Context`] or not,
//! with the tool definitions and their JSON Schemas built at compile time (the
//! `ToolArgs`/`ToolOutput` derives of mcp-core, re-exported here).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

// The module graph has no cycles (tests/module_graph.rs checks it): the user-facing
// `server` (with `blocking` and `http` beside it) on top, then `driver` (one drive loop per
// connection), the runtime state it shares (`state`, and for HTTP `routes` and
// `principal`), the registries (`registry`, `prompts`) and `context`, and at the bottom
// leaves that import nothing from the crate: `output`, `config`, `error`, `clock`, `lines`,
// `budget` (HTTP's memory budget, counted by `http` and `routes`).
mod blocking;
#[cfg(feature = "http")]
mod budget;
#[cfg(feature = "client")]
pub mod client;
mod clock;
mod config;
mod context;
pub mod deferred;
mod driver;
mod error;
#[cfg(feature = "http")]
pub mod http;
pub mod keys;
mod lines;
mod macro_support;
pub mod output;
mod principal;
mod registry;
#[cfg(feature = "http")]
mod routes;
mod server;
mod state;
#[cfg(feature = "stdio")]
mod stdio;

pub use config::{Limits, ServerInfo};
pub use context::SharedTasks;
pub use context::{Context, RequestError, TaskHandle};
pub use deferred::{CompletionRequest, CompletionTarget, PromptRequest, ResourceRequest};
pub use error::Error;
pub use keys::{random_key, KeySource, Keys, KeysError};
pub use mcp_rs_core::ClientMethod;
pub use output::{
    Annotations, CompletionOutput, Content, ErrorReply, PromptOutput, ResourceContents,
    ResourceLink, ResourceOutput, ToolReply,
};
pub use principal::Principal;
pub use registry::{Args, BoxFuture, Handler, ToolAnnotations, ToolDef, Tools};
#[cfg(any(feature = "socket", feature = "http"))]
pub use server::{bind_tcp, LISTEN_BACKLOG};
pub use server::{Server, ShutdownHandle};

/// `#[mcp_rs_tokio::tools]` on an `impl` block (feature `macros`): every method marked
/// `#[tool(...)]`, `async fn` or not, becomes a tool, with its definition built at compile
/// time (schemas from the `ToolArgs`/`ToolOutput` derives) and a generated
/// `register(self: Arc<Self>, &Tools)` adding them all to a [`Tools`] registry.
///
/// The syntax is mcp-core's `#[tools]` (the same `#[tool(...)]` keys: `name`, `title`,
/// `description` (default: the doc comment), `read_only`, `destructive`, `idempotent`,
/// `open_world`, `annotations`, `icons`, `meta`, `requires`, `input_schema`,
/// `output_schema`), with these differences:
///
/// - the tool set is shared by concurrent calls as an `Arc<Self>`: methods take `&self`
///   (or no receiver), never `&mut self`;
/// - an `async fn` method runs as a tokio task, concurrently with the connection's other
///   calls, and is aborted when the client cancels the call. It takes, in any order: at most
///   one arguments value (a `ToolArgs` type, which may borrow: the task parses its own copy
///   of the arguments, so `JsonStr<'_>` fields work; or `RawJson<'_>` with `input_schema`),
///   a [`Context`] or `&Context` (progress, logging, cancellation, client capabilities,
///   requests to the client), and `&mut ToolReply` (content blocks added before the
///   returned value). It returns `()`, text (`&str`/`String`), a `ToolOutput`-derived value
///   (`structuredContent`, its `SCHEMA` the `outputSchema`), a [`ToolReply`], or `Result` of
///   one of these with an error type implementing `Display` (`Err` becomes an `isError`
///   text block);
/// - its arguments are checked before the task is spawned: invalid ones are answered at
///   once with the `isError` result of the synchronous form (``Invalid arguments for tool
///   add: argument `a`: must be a number``), and the method is not called;
/// - `#[tool(inline = path)]` on an `async fn` names a
///   `fn(&Self, &CallRequest<'_>, &mut ToolResult<'_, '_>) -> Dispatch` run first, inside
///   the connection's loop: [`Dispatch::Done`](mcp_rs_core::Dispatch::Done) answers the call
///   there, [`Dispatch::Defer`](mcp_rs_core::Dispatch::Defer) spawns the task (a
///   [`Handler::mixed`]);
/// - `#[tool(task)]` (or `task = "optional"`, `"required"`, `"forbidden"`: the tool's
///   [`TaskSupport`](mcp_rs_core::model::tasks::TaskSupport), [`ToolDef::task`]) makes a
///   long tool a task of the tasks extension (served with [`Server::tasks`]): a
///   task-augmented `tools/call` from a client that negotiated the extension is answered at
///   once with a `CreateTaskResult`, and the `async fn` runs detached as the task, its
///   answer stored as the task's result (rendered by the same writer a direct reply uses),
///   a panic as an `isError` one; its [`Context`] names the task ([`Context::task`]) and
///   sees `tasks/cancel` ([`Context::cancelled`]). Any other call (a client without the
///   extension, for an optional tool) is answered as without the key;
/// - a synchronous method (`fn`) is the core form's, answered inside the connection's loop
///   ([`Handler::sync`]); it cannot return `Dispatch` (there would be nothing to defer to);
/// - generated: `TOOLS` (the definitions, in declaration order), `find_tool` and
///   `register`; no `ToolSet` impl. Options: `#[mcp_rs_tokio::tools(crate = path::to::mcp_rs_core,
///   tokio = path::to::mcp_rs_tokio)]`.
///
/// The derives' generated code names `::mcp_rs_core`: depend on mcp-core too when you use them.
/// Misuse (an `async fn` under mcp-core's `#[tools]`, two `Context`s, `&mut self`, a
/// `Context` in a synchronous method, `&CallRequest` in an `async fn`, ...) is a compile
/// error naming the offending tokens.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
///
/// use mcp_rs_core::LogLevel;
/// use mcp_rs_tokio::{Context, ToolArgs, ToolOutput, Tools};
///
/// /// What to add.
/// #[derive(ToolArgs)]
/// struct AddArgs {
///     /// The first number.
///     a: f64,
///     /// The second number.
///     b: f64,
/// }
///
/// #[derive(ToolOutput)]
/// struct Sum {
///     sum: f64,
/// }
///
/// #[derive(ToolArgs)]
/// struct CountArgs {
///     #[arg(minimum = 1, maximum = 100)]
///     n: u32,
/// }
///
/// #[derive(Default)]
/// struct Everything {
///     calls: AtomicU64,
/// }
///
/// #[mcp_rs_tokio::tools]
/// impl Everything {
///     /// Adds two numbers.
///     #[tool(read_only, idempotent)]
///     fn add(&self, args: AddArgs) -> Sum {
///         self.calls.fetch_add(1, Ordering::Relaxed);
///         Sum { sum: args.a + args.b }
///     }
///
///     /// Counts to n, reporting progress and logging each step.
///     #[tool(title = "Count")]
///     async fn count(&self, args: CountArgs, ctx: Context) -> Result<String, &'static str> {
///         for i in 1..=args.n {
///             if ctx.is_cancelled() {
///                 return Err("cancelled");
///             }
///             ctx.progress(f64::from(i), Some(f64::from(args.n)), None).await;
///             ctx.log(LogLevel::Info, None, format!("step {i}")).await;
///         }
///         Ok(format!("Counted to {}", args.n))
///     }
/// }
///
/// let tools = Tools::new();
/// Arc::new(Everything::default()).register(&tools);
/// assert_eq!(tools.len(), 2);
/// assert_eq!(Everything::TOOLS[1].title, Some("Count"));
/// assert!(Everything::TOOLS[0].input_schema.contains(r#""required":["a","b"]"#));
/// ```
#[cfg(feature = "macros")]
pub use mcp_rs_macros::tokio_tools as tools;
/// The derives of mcp-core's argument and output traits (feature `macros`; the generated
/// code names `::mcp_rs_core`, so depend on it too). A `ToolOutput`-derived value is a tool's
/// structured result; this crate's owned result as a whole is a [`ToolReply`].
#[cfg(feature = "macros")]
pub use mcp_rs_macros::{ToolArgs, ToolOutput};

#[doc(hidden)]
pub mod __macro_support {
    //! Called by the code `#[mcp_rs_tokio::tools]` generates: not a stable API.
    pub use crate::macro_support::*;
    pub use mcp_rs_core;
}
