//! # mcp-core
//!
//! A heap-free, sans-IO [Model Context Protocol](https://modelcontextprotocol.io) server core
//! for tools. Bytes in, frames out: it never does I/O, never sleeps, never reads a clock and
//! never allocates. It serves both protocol eras on one connection: the legacy handshake
//! revisions (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25) and the stateless 2026-07-28.
//! The same wire layer carries a sans-IO client for both eras (feature `client`,
//! `client::Client`).
//!
//! ## Layers
//! Each layer uses only the layers above it in this table (checked by
//! `tests/module_graph.rs`, which also forbids cycles between sibling modules):
//!
//! | layer | what it holds |
//! |---|---|
//! | [`wire`] | JSON ([`wire::json`]: strict zero-copy scanner, views, writer, serde), JSON-RPC 2.0 ([`wire::jsonrpc`]), newline framing ([`wire::framing`]), the revision table ([`wire::version`]), the method table, request parameter views, URI templates |
//! | `token` (internal) | keyed MACs, list cursors and sealed `requestState`; [`SecretKey`] is its public face |
//! | [`model`] | what a server offers: tools, prompts, resources, completion, content, the result envelope, [`ServerHandler`] |
//! | [`typed`] | the runtime of the derives: [`typed::ToolArgs`], [`typed::ToolOutput`], prompt arguments, template variables, patterns |
//! | [`session`] | the state machine: [`Session`], deferred calls ([`CallToken`]), requests to the client |
//! | `client` | the sans-IO client (feature `client`): both eras, requests in caller-owned slots, events borrowed from each frame, `input_required` rounds |
//! | [`pump`] | one exchange of a drive loop: a frame in, replies, calls, queued frames and events out |
//!
//! The types a server needs are re-exported here, at the crate root.
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
//! - `serde`: typed tool arguments ([`wire::json::from_json`], `CallRequest::parse_args`).
//! - `client`: the sans-IO MCP client (`client::Client`).
//! - `alloc`, `std`: reserved for owned conveniences; never required.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

#[cfg(feature = "client")]
pub mod client;
pub mod model;
pub mod pump;
#[cfg(all(feature = "macros", feature = "skills"))]
pub use mcp_rs_macros::skill;
#[cfg(feature = "macros")]
pub use mcp_rs_macros::{
    prompts, resources, tools, PromptArgs, TemplateVars, ToolArgs, ToolOutput,
};
pub mod session;
#[doc(hidden)]
pub mod token;
pub mod typed;
pub mod wire;

pub use model::common::{CacheScope, ClientCaps, DefinitionError, Dispatch, ServerInfo};
pub use model::content::{Annotations, Content, Icon, ResourceLink, Role};
pub use model::handler::{ServerHandler, ToolsOnly};
pub use model::logging::LogLevel;
pub use model::tools::{CallRequest, Tool, ToolAnnotations, ToolResult, ToolSet};
pub use session::error::{CallError, HandleError};
pub use session::inflight::{CallSlot, CallToken};
pub use session::{
    Call, Config, Event, Incoming, ProgressValue, Request, Route, Session, SessionStorage,
    Transmit, MAX_RESOURCE_SUBSCRIPTIONS, MAX_TASK_SUBSCRIPTIONS, MIN_OUTPUT,
};
#[cfg(feature = "requests")]
pub use session::{ClientMethod, ClientOutcome, ClientResponse};
pub use token::cursor::ListKind;
#[cfg(feature = "rotation")]
pub use token::mac::PreviousKey;
pub use token::mac::SecretKey;
pub use wire::version::ProtocolVersion;
