//! # mcp-core
//!
//! A heap-free, sans-IO [Model Context Protocol](https://modelcontextprotocol.io) server core
//! for tools. Bytes in, frames out: it never does I/O, never sleeps, never reads a clock and
//! never allocates. It serves both protocol eras on one connection: the legacy handshake
//! revisions (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25) and the stateless 2026-07-28.
//!
//! Layers, wire format apart from meaning:
//! - [`json`]: strict zero-copy JSON scanner, views and writer;
//! - [`jsonrpc`]: ids, message classification, envelopes; [`framing`]: newline framing;
//! - [`version`]: the revision table; [`session`]: the state machine; [`tools`](mod@tools):
//!   definitions, dispatch and results; [`pagination`]: cursors; [`inflight`]: call tokens;
//! - [`mac`]: keyed MACs and base64url shared by cursors and [`seal`]ed request state.
//!
//! ## The loop
//! After every `handle_*` or command, drain `poll_transmit` and `poll_event`:
//!
//! ```
//! use mcp_rs_core::{Config, ServerInfo, Session, SessionStorage, Tool};
//!
//! static TOOLS: [Tool<'static>; 1] = [Tool::new("echo", r#"{"type":"object"}"#)];
//! let info = ServerInfo { name: "demo", version: "1.0.0", ..Default::default() };
//! let mut storage = SessionStorage::<4>::new();
//! let mut session = Session::new(&info, Config::new(mcp_rs_core::SecretKey([0x5a; 16])), &mut storage);
//! let mut tools = TOOLS; // a `[Tool]` defers every call
//! let mut out = [0u8; 1024];
//! let mut sent = Vec::new();
//!
//! let input = [
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
//!     r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
//! ];
//! for line in input {
//!     let mut incoming = session.handle_message(&mut tools[..], line.as_bytes(), &mut out).unwrap();
//!     if let Some(tx) = incoming.transmit() {
//!         sent.push(String::from_utf8(out[..tx.len].to_vec()).unwrap());
//!     }
//!     while let Some(call) = incoming.next_call(&mut session) {
//!         // Run the tool now or later (another task, another loop turn); then:
//!         let args = call.args().as_str().to_owned();
//!         let tx = session
//!             .complete(call.token(), &mut out, |r| { r.text(&args); })
//!             .unwrap()
//!             .expect("not cancelled");
//!         sent.push(String::from_utf8(out[..tx.len].to_vec()).unwrap());
//!     }
//!     while let Some(tx) = session.poll_transmit(&mut out).unwrap() {
//!         sent.push(String::from_utf8(out[..tx.len].to_vec()).unwrap());
//!     }
//!     while let Some(_event) = session.poll_event() {}
//! }
//! assert!(sent[0].contains(r#""protocolVersion":"2025-06-18""#));
//! assert_eq!(
//!     sent[1],
//!     r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}]}}"#
//! );
//! ```
//!
//! ## Features
//! - `serde`: typed tool arguments ([`json::from_json`], `CallRequest::parse_args`).
//! - `alloc`, `std`: reserved for owned conveniences; never required.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod args;
#[cfg(feature = "macros")]
pub use mcp_rs_macros::{
    prompts, resources, tools, PromptArgs, TemplateVars, ToolArgs, ToolOutput,
};
#[cfg(feature = "completion")]
pub mod completion;
pub mod content;
pub mod error;
pub mod framing;
pub mod inflight;
pub mod json;
pub mod jsonrpc;
pub mod logging;
pub mod mac;
#[cfg(feature = "mrtr")]
pub mod mrtr;
pub mod pagination;
#[cfg(feature = "prompts")]
pub mod prompt_args;
#[cfg(feature = "prompts")]
pub mod prompts;
#[cfg(feature = "resources")]
pub mod resources;
pub mod seal;
pub mod server;
pub mod session;
#[cfg(feature = "resources")]
pub mod template_vars;
#[cfg(test)]
mod test_rng;
pub mod tools;
pub mod uri_template;
pub mod version;
pub mod wire;

pub use error::{CallError, HandleError};
pub use inflight::{CallSlot, CallToken};
pub use logging::LogLevel;
pub use mac::SecretKey;
pub use pagination::ListKind;
pub use server::ServerHandler;
pub use session::{
    CacheScope, Call, Config, Event, Incoming, Request, Route, ServerInfo, Session, SessionStorage,
    Transmit, MIN_OUTPUT,
};
#[cfg(feature = "requests")]
pub use session::{ClientMethod, ClientOutcome, ClientResponse};
pub use tools::{
    Annotations, CallRequest, ClientCaps, Content, Dispatch, Icon, ResourceLink, Role, Tool,
    ToolAnnotations, ToolResult, ToolSet,
};
pub use version::ProtocolVersion;
