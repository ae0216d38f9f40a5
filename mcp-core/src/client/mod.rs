//! The sans-IO MCP client: bytes in, frames and events out, time passed in. It speaks both
//! eras (the legacy `initialize` handshake and the stateless 2026-07-28), never allocates
//! and keeps its requests in caller-owned slots ([`ClientStorage`]).
//!
//! Split by concept: [`lifecycle`] (the handshake of each era), [`requests`] (what is sent
//! and how; `shortcuts` adds one `request_*` method per kind), `incoming` (frames from the
//! server, answers to its requests), [`events`] (what the application is told, with typed
//! readers of results), [`rounds`] (2026-07-28 `input_required` results and their retries),
//! `slots` (the caller-owned request slots), [`headers`] (SEP-2243 `x-mcp-header` marks
//! of tool schemas, for HTTP transports) and, with feature `tasks`, `tasks` (the tasks
//! extension: calls that may answer with a task, `tasks/get`, `tasks/update`,
//! `tasks/cancel`).
//!
//! ## The loop
//! Commands (`connect`, [`send`](Client::send) and the `request_*` shortcuts, `retry`,
//! `cancel`, `respond`) write one frame into the caller's buffer and return its length.
//! For every frame received, [`handle`](Client::handle) it and take its events; then, after
//! every input or command, drain [`poll_transmit`](Client::poll_transmit) and
//! [`poll_event`](Client::poll_event), and sleep until [`poll_timeout`](Client::poll_timeout)
//! or the next frame.
//!
//! ```
//! use mcp_rs_core::client::{Client, ClientConfig, ClientInfo, ClientStorage, Event};
//!
//! let mut storage = ClientStorage::<4>::new();
//! let config = ClientConfig::new(ClientInfo::new("demo", "1.0.0"));
//! let mut client = Client::new(config, &mut storage);
//! let mut out = [0u8; 1024];
//! let mut wire = Vec::new(); // what a transport would send, frame by frame
//!
//! let sent = client.connect(0, &mut out).unwrap();
//! wire.push(String::from_utf8(out[..sent.len].to_vec()).unwrap());
//! let server = [ // what the transport receives (scripted here)
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete","cacheScope":"public"}}"#,
//!     r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}"#,
//! ];
//! let mut call = None;
//! for (now, frame) in (1..).zip(server) {
//!     let mut received = client.handle(now, frame.as_bytes());
//!     while let Some(event) = received.next_event(&mut client) {
//!         if let Event::Result(response) = event {
//!             assert_eq!(Some(response.handle), call);
//!             assert_eq!(response.tool_call().unwrap().text().unwrap(), "hi");
//!         }
//!     }
//!     while let Some(tx) = client.poll_transmit(&mut out).unwrap() {
//!         wire.push(String::from_utf8(out[..tx.len].to_vec()).unwrap());
//!     }
//!     while let Some(event) = client.poll_event() {
//!         if let Event::Connected { .. } = event {
//!             let args = Some(r#"{"text":"hi"}"#);
//!             let sent = client.request_tools_call("echo", args, now, &mut out).unwrap();
//!             call = Some(sent.handle);
//!             wire.push(String::from_utf8(out[..sent.len].to_vec()).unwrap());
//!         }
//!     }
//!     // A transport now waits for the next frame or until `client.poll_timeout()`.
//! }
//! assert!(wire[0].contains(r#""method":"server/discover""#));
//! assert!(wire[1].contains(r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#));
//! ```
//!
//! ## What goes where
//!
//! | the server sends | the client |
//! |---|---|
//! | a response to one of our requests | reports [`Event::Result`], [`Event::Error`] or [`Event::InputRequired`] with the request's handle |
//! | the answer to the handshake | drives the handshake; an accepted one is reported as [`Event::Handshake`] (server info, instructions), then `poll_event` reports [`Event::Connected`] or [`Event::HandshakeFailed`] |
//! | a response nobody waits for (unknown id, cancelled or timed out) | reports [`Event::Invalid`] ([`InvalidFrame::UnknownResponse`]) |
//! | `ping` (legacy) | answers `{}` by itself (`poll_transmit`) |
//! | `sampling/createMessage`, `elicitation/create`, `roots/list` (legacy, capability declared) | reports [`Event::Request`]; the application answers with [`Client::respond`] or [`Client::respond_error`] |
//! | any other request | answers -32601 by itself (a request whose id is longer than [`MAX_ID_LEN`](crate::wire::jsonrpc::MAX_ID_LEN): -32600 without an id, and [`Event::Invalid`] ([`InvalidFrame::IdTooLong`])) |
//! | `notifications/progress` for a request that asked for it | reports [`Event::Progress`] with the request's handle (other tokens are ignored) |
//! | `notifications/{tools,prompts,resources}/list_changed`, `resources/updated`, `message`, `cancelled` | reports [`Event::ListChanged`], [`Event::ResourceUpdated`] (with the listen stream it came on, if any), [`Event::Log`], [`Event::Cancelled`] |
//! | `notifications/subscriptions/acknowledged` for a `subscriptions/listen` request in flight | reports [`Event::Subscribed`] (the honoured filter) |
//! | anything unreadable | reports [`Event::Invalid`]; never an `Err`, never a panic |

mod error;
pub mod events;
pub use crate::wire::headers::marks as headers;
mod incoming;
pub mod lifecycle;
pub mod requests;
pub mod rounds;
mod shortcuts;
#[cfg(feature = "skills")]
pub mod skills;
mod slots;
#[cfg(feature = "tasks")]
pub mod tasks;

pub use error::{ClientError, HandshakeError};
pub use events::{
    CallResult, Event, Handshake, InboundRequest, InvalidFrame, LogMessage, Page, Progress,
    Response, ResultError, RpcError,
};
pub use incoming::Received;
pub use lifecycle::{Mode, ServerCaps};
pub use requests::{Answers, Options, Reference, Request};
pub use rounds::{InputRequest, InputRound};
pub use slots::{RequestHandle, RequestSlot};
#[cfg(feature = "tasks")]
pub use tasks::{CallOutcome, Task, TaskRefusal, TaskRequest};

use crate::model::common::ClientCaps;
use crate::wire::json::{self, JsonWriter};
use crate::wire::version::ProtocolVersion;
use incoming::Replies;
use lifecycle::{Outcome, Phase};
use slots::SlotState;

/// Who the client is: `clientInfo` of `initialize` and `_meta` of 2026-07-28 requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientInfo<'a> {
    /// Programmatic name.
    pub name: &'a str,
    /// Version string.
    pub version: &'a str,
    /// Display title (sent from 2025-06-18 on).
    pub title: Option<&'a str>,
}

impl<'a> ClientInfo<'a> {
    /// A name and a version.
    pub const fn new(name: &'a str, version: &'a str) -> Self {
        ClientInfo {
            name,
            version,
            title: None,
        }
    }

    /// Writes the `Implementation` object for `version`.
    pub fn write(&self, w: &mut JsonWriter<'_>, version: ProtocolVersion) {
        w.begin_object();
        w.key("name");
        w.string(self.name);
        w.key("version");
        w.string(self.version);
        if let (true, Some(t)) = (version.features().titles_and_meta, self.title) {
            w.key("title");
            w.string(t);
        }
        w.end_object();
    }
}

/// How a client behaves.
#[derive(Clone, Copy, Debug)]
pub struct ClientConfig<'a> {
    /// Who the client is.
    pub info: ClientInfo<'a>,
    /// What it can do for the server (`sampling`, `elicitation`, `roots`): declared in
    /// `initialize` and on every 2026-07-28 request. Server requests for capabilities not
    /// declared are answered -32601.
    pub capabilities: ClientCaps,
    /// How `connect` opens the connection (default [`Mode::Auto`]).
    pub mode: Mode,
    /// Default deadline of a request, in milliseconds after it is sent (default 60 s;
    /// `u64::MAX`: none).
    pub request_timeout_ms: u64,
    /// Maximum JSON nesting depth of a received frame (default 32, at most 128).
    pub max_depth: u8,
    /// The revision `initialize` asks for (default
    /// [`ProtocolVersion::LATEST_LEGACY`]; a 2026 revision here is asked as the latest
    /// legacy one). The server may choose any legacy revision the client knows.
    pub legacy_version: ProtocolVersion,
}

impl<'a> ClientConfig<'a> {
    /// The defaults, for a client named by `info` that declares no capabilities.
    pub const fn new(info: ClientInfo<'a>) -> Self {
        ClientConfig {
            info,
            capabilities: ClientCaps::NONE,
            mode: Mode::Auto,
            request_timeout_ms: 60_000,
            max_depth: json::DEFAULT_MAX_DEPTH,
            legacy_version: ProtocolVersion::LATEST_LEGACY,
        }
    }
}

/// Caller-owned memory of a client: `REQUESTS` requests can be in flight at once (the
/// handshake takes one while it runs).
#[derive(Debug)]
pub struct ClientStorage<const REQUESTS: usize> {
    slots: [RequestSlot; REQUESTS],
}

impl<const REQUESTS: usize> ClientStorage<REQUESTS> {
    /// Empty storage (usable in a `static`).
    pub const fn new() -> Self {
        ClientStorage {
            slots: [RequestSlot::EMPTY; REQUESTS],
        }
    }
}

impl<const REQUESTS: usize> Default for ClientStorage<REQUESTS> {
    fn default() -> Self {
        Self::new()
    }
}

/// A frame written into the caller's buffer: `out[..len]`, without a trailing newline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a transmit holds a frame to send"]
pub struct Transmit {
    /// Bytes written.
    pub len: usize,
}

/// A request written into the caller's buffer: `out[..len]`, and the handle its outcome
/// will name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a request was written and must be sent"]
pub struct Sent {
    /// The request.
    pub handle: RequestHandle,
    /// Bytes written.
    pub len: usize,
}

/// One MCP client connection (a child process's stdio, a socket, an HTTP endpoint).
///
/// Methods come in groups, as in quinn: getters, `handle`/`handle_timeout` (input),
/// commands (`connect`, `send`, `retry`, `cancel`, `respond`) and `poll_*` (output).
/// **After every input or command, drain [`poll_transmit`](Self::poll_transmit) and
/// [`poll_event`](Self::poll_event)**, then read [`poll_timeout`](Self::poll_timeout). The
/// client never reads a clock, never blocks and never allocates.
#[derive(Debug)]
pub struct Client<'a> {
    config: ClientConfig<'a>,
    slots: &'a mut [RequestSlot],
    phase: Phase,
    /// What `poll_event` owes about the handshake.
    outcome: Option<Outcome>,
    server_caps: ServerCaps,
    /// The id of the next request (never 0).
    next_id: u32,
    /// The latest time passed in (milliseconds).
    now_ms: u64,
    /// Answers the client owes the server's requests (`ping`, -32601).
    replies: Replies,
    /// `server/discover` was asked again after a -32022 (once only).
    rediscovered: bool,
}

impl<'a> Client<'a> {
    /// A client over caller-owned storage.
    pub fn new<const REQUESTS: usize>(
        config: ClientConfig<'a>,
        storage: &'a mut ClientStorage<REQUESTS>,
    ) -> Self {
        Self::from_slots(config, &mut storage.slots)
    }

    /// A client over a caller-owned slice of request slots (for a capacity chosen at run
    /// time; at most 65,535 are used, as a handle names its slot in 16 bits).
    pub fn from_slots(config: ClientConfig<'a>, slots: &'a mut [RequestSlot]) -> Self {
        let used = slots.len().min(usize::from(u16::MAX));
        let slots = slots.get_mut(..used).unwrap_or_default();
        for slot in slots.iter_mut() {
            *slot = RequestSlot::EMPTY;
        }
        Client {
            config,
            slots,
            phase: Phase::Idle,
            outcome: None,
            server_caps: ServerCaps::default(),
            next_id: 1,
            now_ms: 0,
            replies: Replies::new(),
            rediscovered: false,
        }
    }

    /// The negotiated revision, once the handshake has completed.
    pub fn version(&self) -> Option<ProtocolVersion> {
        match self.phase {
            Phase::Ready(v) => Some(v),
            _ => None,
        }
    }

    /// The server capabilities read from the handshake.
    pub fn server_capabilities(&self) -> ServerCaps {
        self.server_caps
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig<'a> {
        &self.config
    }

    /// Requests in flight (sent and not yet ended; rounds waiting for input included).
    pub fn requests_in_flight(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.state != SlotState::Free)
            .count()
    }

    /// Advances the client clock (milliseconds, never backwards): requests whose deadline
    /// passed time out; drain `poll_transmit` (their `notifications/cancelled`) and
    /// `poll_event` ([`Event::TimedOut`]).
    pub fn handle_timeout(&mut self, now_ms: u64) {
        self.advance(now_ms);
    }

    /// When to call [`handle_timeout`](Self::handle_timeout) next: the earliest deadline
    /// of a request in flight, or `None`.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        self.slots
            .iter()
            .filter(|s| s.state == SlotState::Pending && s.deadline != u64::MAX)
            .map(|s| s.deadline)
            .min()
    }

    /// Writes the next frame the client owes on its own into `out`: the handshake's
    /// (`initialize` after a refused discover, `notifications/initialized`), answers to
    /// the server's `ping` and unknown requests, and `notifications/cancelled` for
    /// requests that timed out. A buffer too small keeps the frame queued.
    #[must_use = "a transmit holds a frame to send"]
    pub fn poll_transmit(&mut self, out: &mut [u8]) -> Result<Option<Transmit>, ClientError> {
        if let Some(tx) = self.poll_handshake(out)? {
            return Ok(Some(tx));
        }
        if let Some(tx) = self.poll_reply(out)? {
            return Ok(Some(tx));
        }
        let Some(slot) = self.slots.iter_mut().find(|s| s.cancel_owed) else {
            return Ok(None);
        };
        let mut w = JsonWriter::new(out);
        crate::wire::jsonrpc::write_cancelled(&mut w, u64::from(slot.id), Some("timed out"));
        let len = w.finish()?;
        slot.cancel_owed = false;
        if !slot.event_owed {
            slot.free();
        }
        Ok(Some(Transmit { len }))
    }

    /// Takes the next event that is not part of a received frame: the end of the
    /// handshake and timeouts.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event<'static>> {
        if let Some(outcome) = self.outcome.take() {
            return Some(match outcome {
                Outcome::Connected(version) => Event::Connected {
                    version,
                    capabilities: self.server_caps,
                },
                Outcome::Failed(e) => Event::HandshakeFailed(e),
            });
        }
        let (index, slot) = self
            .slots
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.event_owed)?;
        slot.event_owed = false;
        let event = Event::TimedOut {
            handle: slot.handle(index),
            method: slot.method,
        };
        if !slot.cancel_owed {
            slot.free();
        }
        Some(event)
    }

    /// Moves the clock to `now_ms` (never backwards) and times requests out.
    fn advance(&mut self, now_ms: u64) {
        self.now_ms = self.now_ms.max(now_ms);
        let now = self.now_ms;
        let mut failed = None;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if slot.state != SlotState::Pending || slot.deadline > now {
                continue;
            }
            if matches!(
                slot.method,
                crate::wire::method::Method::Initialize | crate::wire::method::Method::Discover
            ) {
                // The spec forbids cancelling `initialize`: the handshake just fails.
                failed = Some(i);
                continue;
            }
            slot.state = SlotState::TimedOut;
            slot.cancel_owed = true;
            slot.event_owed = true;
        }
        if let Some(i) = failed {
            self.fail(i, HandshakeError::TimedOut);
        }
    }

    /// A free slot, or the error naming the capacity.
    fn free_slot(&self) -> Result<usize, ClientError> {
        self.slots
            .iter()
            .position(|s| s.state == SlotState::Free)
            .ok_or(ClientError::TooManyRequests {
                capacity: self.slots.len(),
            })
    }

    /// The slot of a live handle.
    fn live_slot(&mut self, handle: RequestHandle) -> Result<&mut RequestSlot, ClientError> {
        self.slots
            .get_mut(handle.slot())
            .filter(|s| s.state != SlotState::Free && s.generation == handle.generation)
            .ok_or(ClientError::UnknownRequest)
    }

    /// Frees slot `index`.
    fn release(&mut self, index: usize) {
        if let Some(slot) = self.slots.get_mut(index) {
            slot.free();
        }
    }

    /// Ids run 1..=u32::MAX, never 0.
    fn bump_id(&mut self) {
        self.next_id = self.next_id.checked_add(1).unwrap_or(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_stays_small() {
        // Per request in flight, and the client itself without its slots (64-bit hosts;
        // smaller on 32-bit targets): the bound a firmware budget is planned with.
        assert!(core::mem::size_of::<RequestSlot>() <= 32);
        assert!(core::mem::size_of::<Client<'static>>() <= 400);
    }

    #[test]
    fn a_client_without_slots_refuses_to_connect() {
        let mut client = Client::from_slots(ClientConfig::new(ClientInfo::new("c", "1")), &mut []);
        let mut out = [0u8; 256];
        assert_eq!(
            client.connect(0, &mut out).unwrap_err(),
            ClientError::TooManyRequests { capacity: 0 }
        );
        assert_eq!(client.poll_timeout(), None);
        assert!(client.poll_transmit(&mut out).unwrap().is_none());
        assert!(client.poll_event().is_none());
    }
}
