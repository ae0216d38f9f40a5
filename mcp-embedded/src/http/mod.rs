//! Streamable HTTP/1.1 without a heap (feature `http`): an MCP server over any
//! [`embedded_io_async`] socket (embassy-net's `TcpSocket`, or host sockets in tests),
//! with caller-owned connection slots.
//!
//! The protocol stays in the core: each POST body goes through the core's
//! [`Pump`](mcp_rs_core::pump::Pump) with a session (a fresh one for a request without a
//! session id: 2026-07-28 requests are self-contained); the server adds HTTP/1.1
//! framing (request heads parsed by `httparse`, `Content-Length` and chunked bodies,
//! keep-alive), the transport's own checks, and the routing of each frame to its response.
//!
//! | request | what happens |
//! |---|---|
//! | POST without `Mcp-Session-Id` | a fresh session over the slot's call storage handles the body (2026-07-28 requests are self-contained), answered with `application/json`, or 202 when it asked nothing; a `subscriptions/listen` request is answered with an SSE stream (chunked) that carries the acknowledgement and then the list changes ([`Server::list_changed`]), resource updates and, with feature `tasks`, `notifications/tasks` for the tasks in its `taskIds` until the client closes it or sends its next request |
//! | POST `initialize` without `Mcp-Session-Id` (legacy) | with a session table ([`Server::with_sessions`]), a free entry's session handles it; if it negotiated, the session is kept and its id returned in `Mcp-Session-Id` (503 when no entry is free) |
//! | POST with `Mcp-Session-Id` (legacy) | the body goes to that session (404 when unknown, ended or expired; 400 when `MCP-Protocol-Version` names another revision) |
//! | GET with `Mcp-Session-Id` (legacy, `Accept: text/event-stream`) | the session's stream of session-wide messages (list changes, updates of the resources it subscribed to: [`Server::resource_updated`]); one per session (409 while open) |
//! | GET with `Mcp-Session-Id` and `Last-Event-ID` (legacy) | with replay rings ([`Server::with_replay`]), the resumption of one of the session's SSE POST responses: its events after that id, then the rest until its response (400 when they are no longer all kept); an id of no stream of the session: the session's stream, as without it |
//! | DELETE with `Mcp-Session-Id` | ends the session (404 when unknown) |
//! | GET without a session id | 405 (`Allow: POST`) |
//! | other methods on the path | 405 (`Allow: GET, POST, DELETE`) |
//! | any other path | 404 |
//!
//! A resource that changed ([`Server::resource_updated`]) is announced on every open
//! `subscriptions/listen` stream subscribed to it, and on the GET stream of every legacy
//! session that subscribed (`resources/subscribe`).
//!
//! A legacy session idle for longer than [`Server::with_session_idle`] (on the clock
//! given with [`Server::with_clock`]) is ended and its entry reused.
//!
//! Every refusal carries a JSON-RPC error body:
//!
//! | check | status, code |
//! |---|---|
//! | `Host` (and an absolute target's authority, and `Origin` when sent) is a loopback name or one of [`HttpConfig::allowed_hosts`] ([`HttpConfig::check_hosts`], on by default) | 403, -32600 |
//! | the head (request line and headers) fits the receive buffer, at most [`MAX_HEADERS`] headers | 431, -32600 |
//! | not an HTTP/1.x head, a bad `Content-Length`, `Transfer-Encoding` other than `chunked`, broken chunk framing | 400, -32600 |
//! | `Content-Type: application/json` on a POST | 415, -32600 |
//! | the body fits the receive buffer after its head | 413, -32600 |
//! | the 2026-07-28 headers agree with the body (see [`checks`](self#2026-07-28-headers)) | 400, -32020 |
//! | a slot is free ([`Server::refuse_busy`], called by the acceptor) | 503, -32603 |
//! | a session entry is free for `initialize` | 503, -32603 |
//! | `Accept` admits `text/event-stream` on a GET | 406, -32600 |
//! | `Accept` admits `text/event-stream` on a `subscriptions/listen` POST (a stream and nothing else) | 406, -32600 (with the request's id) |
//!
//! A refusal made before the body was read closes the connection (the body is not
//! skipped); others keep it open when the client asked to.
//!
//! # 2026-07-28 headers
//!
//! A POST with `MCP-Protocol-Version: 2026-07-28` has its headers compared with the
//! session's view of the body ([`mcp_rs_core::wire::peek`]) by mcp-core
//! ([`mcp_rs_core::wire::headers`], whose docs hold every check and reply):
//!
//! | header | checked against |
//! |---|---|
//! | `Mcp-Method` | `method` (exact, case-sensitive) |
//! | `MCP-Protocol-Version` | `params._meta["io.modelcontextprotocol/protocolVersion"]` |
//! | `Mcp-Name` | `params.name` (`tools/call`, `prompts/get`), `params.uri` (`resources/read`) |
//! | `Mcp-Param-<Name>` | the argument of a tool parameter marked `x-mcp-header: <Name>`, literal or `=?base64?…?=` (compared as it decodes: no length limit of its own) |
//!
//! # Slots and concurrency
//!
//! A [`Slot`] is one connection's memory: `RX` bytes for a request (head and body), `TX`
//! bytes for the largest frame, `CALLS` call slots for its session. The application runs
//! one task per slot, each accepting a connection and calling [`Server::serve`] with its
//! slot; all share the [`Server`] by reference (a `RefCell` lends the handler to one
//! exchange at a time, never across an await). A slow or stalled peer holds only its own
//! slot; bound how long with the socket's own timeout (embassy-net:
//! `TcpSocket::set_timeout`). A connection arriving while every slot is busy is answered
//! by [`Server::refuse_busy`] (503) if the acceptor can take it.
//!
//! Deferred requests run on the connection's slot with a [`CallRunner`]
//! ([`Server::serve_calls`]): their progress and log messages go out as SSE events of the
//! POST's response, then the result. Without a runner ([`Server::serve`],
//! [`Server::serve_with`]) a request a handler defers is answered -32603
//! [`crate::DEFERRED_CALL_MESSAGE`].
//!
//! A running call of a legacy session can ask the client (sampling, elicitation, roots;
//! feature `requests`): `CallContext::request` sends the request on the POST's SSE
//! response and waits; the client answers with a POST of its own, which any slot serves
//! (202) and which leaves the answer in the session's mailbox (`Server::with_responses`)
//! for the call's slot.
//!
//! # Tasks (feature `tasks`)
//!
//! The work of a task (the tasks extension) outlives the `tools/call` that created it: a
//! tool handed a task queues a job in the handler's `tasks::TaskHost` and defers, the
//! client gets its `working` task at once, and task workers run the job: one
//! `Server::serve_tasks` future per `TaskWorker` beside the slot tasks, with the
//! application's `TaskRunner`, which reports through a `TaskContext`. `tasks/get`, `tasks/update` and `tasks/cancel` are
//! answered by the session on any slot; `tasks/update` and `tasks/cancel` wake the workers.
//!
//! # Example
//!
//! One task per slot, all sharing the server (with embassy: `#[embassy_executor::task(pool_size
//! = 2)]`, an embassy-net `TcpSocket` per task that `accept`s, then `serve_with`). Here a
//! socket in memory stands in for the TCP socket:
//!
//! ```
//! # use core::convert::Infallible;
//! # use core::future::Future;
//! # use core::pin::pin;
//! # use core::task::{Context, Poll, Waker};
//! use mcp_rs_core::{
//!     CallRequest, CallSlot, Config, Dispatch, SecretKey, ServerHandler, ServerInfo, Tool,
//!     ToolResult, ToolSet,
//! };
//! use mcp_rs_embedded::http::{Ended, HttpConfig, Server, Slot, SlotState};
//!
//! # /// A socket that reads `input` and keeps what is written.
//! # struct Socket<'a> { input: &'a [u8], output: Vec<u8> }
//! # impl embedded_io_async::ErrorType for Socket<'_> { type Error = Infallible; }
//! # impl embedded_io_async::Read for Socket<'_> {
//! #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
//! #         let n = buf.len().min(self.input.len());
//! #         buf[..n].copy_from_slice(&self.input[..n]);
//! #         self.input = &self.input[n..];
//! #         Ok(n)
//! #     }
//! # }
//! # impl embedded_io_async::Write for Socket<'_> {
//! #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
//! #         self.output.extend_from_slice(buf);
//! #         Ok(buf.len())
//! #     }
//! #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
//! # }
//! static TOOLS: [Tool<'static>; 1] = [Tool::new("ping", r#"{"type":"object"}"#)];
//!
//! struct Device;
//! impl ToolSet for Device {
//!     fn len(&self) -> usize { TOOLS.len() }
//!     fn get(&self, i: usize) -> Option<Tool<'_>> { TOOLS.get(i).copied() }
//!     fn call(&mut self, _: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
//!         r.text("pong");
//!         Dispatch::Done
//!     }
//! }
//! impl ServerHandler for Device {
//!     fn tools(&mut self) -> Option<&mut dyn ToolSet> { Some(self) }
//! }
//! static INFO: ServerInfo<'static> = ServerInfo {
//!     name: "device", version: "1.0.0", title: None, description: None,
//!     website_url: None, icons: &[], instructions: None,
//! };
//! // The device's address is an allowed Host besides the loopback names.
//! static HOSTS: [&str; 1] = ["192.168.1.50"];
//!
//! fn uptime_ms() -> u64 { 0 } // embassy: `Instant::now().as_millis()`
//!
//! // 4 legacy sessions of 2 calls each; 2 KiB requests and frames, 2 calls per connection.
//! let sessions: &'static mut [[CallSlot; 2]; 4] = Box::leak(Box::new([[CallSlot::EMPTY; 2]; 4]));
//! let server: Server<'_, _, 4> =
//!     Server::new(&INFO, Config::new(SecretKey([7; 16])), Device)
//!         .with_http(HttpConfig::new().allowed_hosts(&HOSTS))
//!         .with_clock(uptime_ms)
//!         .with_sessions(sessions);
//! let mut slot = Slot::<2048, 2048, 2>::new(); // a `static` on a device
//! let state = SlotState::new(); // the acceptor evicts idle connections through it
//!
//! let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! let request = format!(
//!     "POST /mcp HTTP/1.1\r\nHost: 192.168.1.50\r\nContent-Type: application/json\r\n\
//!      MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{body}",
//!     body.len()
//! );
//! let mut socket = Socket { input: request.as_bytes(), output: Vec::new() };
//! // The slot's task: serve the connection until it ends (here: the input ends).
//! let ended = {
//!     let mut serving = pin!(server.serve_with(&mut slot, &state, &mut socket));
//!     loop {
//!         if let Poll::Ready(e) = serving.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
//!             break e;
//!         }
//!     }
//! };
//! assert_eq!(ended, Ended::Closed);
//! let response = String::from_utf8(socket.output).unwrap();
//! assert!(response.starts_with("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"));
//! assert!(response.contains(r#""name":"ping""#));
//! ```

mod body;
mod calls;
mod checks;
mod exchange;
mod head;
#[cfg(feature = "requests")]
mod mailbox;
mod replay;
mod respond;
mod sessions;
#[cfg(feature = "tasks")]
#[cfg_attr(docsrs, doc(cfg(feature = "tasks")))]
mod tasks;
mod updates;
mod wait;

use core::cell::{Cell, RefCell};
use core::future::{poll_fn, Future};
use core::task::{Poll, Waker};

use embedded_io_async::{Read, Write};
use mcp_rs_core::wire::json::Limits;
use mcp_rs_core::wire::jsonrpc::code;
use mcp_rs_core::{CallSlot, Config, ListKind, ServerHandler, ServerInfo, Session, MIN_OUTPUT};

#[cfg(feature = "requests")]
pub use calls::{Answer, RequestFailed};
pub use calls::{CallContext, CallRunner};
pub use checks::MODERN;
pub use head::MAX_HEADERS;
pub use sessions::SESSION_ID_LEN;
#[cfg(feature = "tasks")]
pub use tasks::{TaskContext, TaskRunner, TaskWorker};
pub use updates::{MAX_SUBSCRIPTIONS, MAX_UPDATED_URI};

use body::{BodyError, Inbox};
use exchange::Target;
use head::Parsed;
use respond::{Extra, WriteFailed};
use sessions::{Entry, State, Table};
use wait::{select, Changes, Either};

use crate::{Clock, ErrorKind};

/// Settings of the HTTP server.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct HttpConfig<'a> {
    /// The endpoint path (default `/mcp`); other paths get 404.
    pub path: &'a str,
    /// Host names (without port) accepted in `Host` and `Origin` besides `localhost`,
    /// `127.0.0.1` and `::1`: the device's address or name on its network.
    pub allowed_hosts: &'a [&'a str],
    /// DNS-rebinding protection (default on): requests whose `Host` or `Origin` names
    /// another host get 403.
    pub check_hosts: bool,
}

impl<'a> HttpConfig<'a> {
    /// `/mcp`, loopback hosts only, host checks on.
    pub const fn new() -> Self {
        HttpConfig {
            path: "/mcp",
            allowed_hosts: &[],
            check_hosts: true,
        }
    }

    /// With another endpoint path.
    #[must_use]
    pub const fn path(mut self, path: &'a str) -> Self {
        self.path = path;
        self
    }

    /// With host names accepted besides the loopback ones.
    #[must_use]
    pub const fn allowed_hosts(mut self, hosts: &'a [&'a str]) -> Self {
        self.allowed_hosts = hosts;
        self
    }

    /// With or without the `Host`/`Origin` checks (off only behind a proxy that makes
    /// them).
    #[must_use]
    pub const fn check_hosts(mut self, on: bool) -> Self {
        self.check_hosts = on;
        self
    }
}

impl Default for HttpConfig<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// One connection's memory: `RX` bytes for a request's head and body, `TX` bytes for the
/// largest frame sent, `CALLS` call slots for the session that handles each POST (one is
/// taken by an open `subscriptions/listen` stream).
///
/// `RX` is at least 256 and `TX` at least [`MIN_OUTPUT`] (checked at compile time); size
/// is `RX + TX + CALLS * size_of::<CallSlot>()` bytes. Put slots in a `static` (they are
/// all zero, so `.bss`).
#[derive(Debug)]
pub struct Slot<const RX: usize, const TX: usize, const CALLS: usize> {
    rx: [u8; RX],
    tx: [u8; TX],
    calls: [CallSlot; CALLS],
}

impl<const RX: usize, const TX: usize, const CALLS: usize> Slot<RX, TX, CALLS> {
    const VALID: () = {
        assert!(RX >= 256, "the receive buffer needs at least 256 bytes");
        assert!(
            TX >= MIN_OUTPUT,
            "the transmit buffer must hold at least mcp_rs_core::MIN_OUTPUT bytes"
        );
        assert!(CALLS >= 1, "a slot needs at least one call slot");
    };

    /// A zeroed slot (usable in a `static`).
    pub const fn new() -> Self {
        let () = Self::VALID;
        Slot {
            rx: [0; RX],
            tx: [0; TX],
            calls: [CallSlot::EMPTY; CALLS],
        }
    }
}

impl<const RX: usize, const TX: usize, const CALLS: usize> Default for Slot<RX, TX, CALLS> {
    fn default() -> Self {
        Self::new()
    }
}

/// How a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Ended {
    /// The peer closed it (between requests, or while a stream was open).
    Closed,
    /// The server answered with this status and closed it (a refusal made before the body
    /// was read, or a response to a request that asked to close).
    Done(u16),
    /// Reading failed.
    Read(ErrorKind),
    /// Writing failed, or the socket accepted nothing.
    Write(ErrorKind),
    /// It sat idle between requests and was closed for a new connection
    /// ([`SlotState::evict`]).
    Evicted,
}

/// What an acceptor knows of a connection served with [`Server::serve_with`]: whether it
/// sits idle (between requests with nothing received, or a legacy GET stream waiting for
/// something to send), and a way to close it then.
///
/// Clients keep idle connections open (browsers, Node's fetch): with a few slots, they
/// would hold every slot. An acceptor with a connection and no free slot evicts an idle
/// one instead of answering 503 (the client opens a new connection for its next request,
/// as HTTP/1.1 allows).
#[derive(Debug, Default)]
pub struct SlotState {
    idle: Cell<bool>,
    evict: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl SlotState {
    /// A connection that is not idle.
    pub const fn new() -> Self {
        SlotState {
            idle: Cell::new(false),
            evict: Cell::new(false),
            waker: RefCell::new(None),
        }
    }

    /// Whether the connection waits for its next request with nothing received.
    pub fn is_idle(&self) -> bool {
        self.idle.get()
    }

    /// Closes the connection if it is idle: its `serve_with` then returns
    /// [`Ended::Evicted`] when next polled (its task is woken). `false` when it was not
    /// idle (nothing changes).
    pub fn evict(&self) -> bool {
        if !self.idle.get() {
            return false;
        }
        self.evict.set(true);
        if let Some(w) = self.waker.try_borrow_mut().ok().and_then(|mut w| w.take()) {
            w.wake();
        }
        true
    }

    /// Completes once [`evict`](Self::evict) was called (and clears the request).
    fn evicted(&self) -> impl Future<Output = ()> + '_ {
        poll_fn(move |cx| {
            if self.evict.replace(false) {
                return Poll::Ready(());
            }
            if let Ok(mut w) = self.waker.try_borrow_mut() {
                *w = Some(cx.waker().clone());
            }
            Poll::Pending
        })
    }
}

impl From<WriteFailed> for Ended {
    fn from(e: WriteFailed) -> Self {
        Ended::Write(e.0)
    }
}

/// Counters of what a server has seen, over all slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HttpStats {
    /// Requests whose head was parsed.
    pub requests: u32,
    /// Requests refused by the transport (any 4xx or 5xx it answered itself).
    pub refused: u32,
    /// Frames no response could carry: a second frame caused by a request answered with
    /// JSON (e.g. a session-wide notification of a legacy session whose GET stream is not
    /// open), frames too large for the transmit buffer, kept events too large for the
    /// transmit buffer of the slot that resumes them, and resource updates a stream fell
    /// too far behind to send ([`Server::resource_updated`]).
    pub dropped: u32,
    /// SSE streams opened (`subscriptions/listen`, legacy GET).
    pub streams: u32,
    /// Legacy sessions created.
    pub sessions: u32,
}

/// The MCP server behind every connection slot: the description of the server (`info`,
/// session [`Config`], the handler), the HTTP settings, the clock, the table of legacy
/// sessions (`SESSIONS` entries, none by default: see [`with_sessions`](Self::with_sessions))
/// and what all slots share (list changes). Share it by reference between the slot tasks.
///
/// `WAITERS` is how many SSE streams can wait for a list change without polling (give it
/// the number of slots; a stream beyond it is woken at once and polls).
#[derive(Debug)]
pub struct Server<'a, S: ServerHandler, const SESSIONS: usize = 0, const WAITERS: usize = 4> {
    info: &'a ServerInfo<'a>,
    config: Config,
    http: HttpConfig<'a>,
    handler: RefCell<S>,
    clock: Option<Clock>,
    changes: Changes<WAITERS>,
    legacy: RefCell<Table<'a, SESSIONS>>,
    updates: RefCell<updates::Updates>,
    stats: Cell<HttpStats>,
}

impl<'a, S: ServerHandler, const SESSIONS: usize, const WAITERS: usize>
    Server<'a, S, SESSIONS, WAITERS>
{
    /// A server with the default [`HttpConfig`], no clock and no legacy sessions.
    pub fn new(info: &'a ServerInfo<'a>, config: Config, handler: S) -> Self {
        Server {
            info,
            config,
            http: HttpConfig::new(),
            handler: RefCell::new(handler),
            clock: None,
            changes: Changes::new(),
            legacy: RefCell::new(Table::new()),
            updates: RefCell::new(updates::Updates::new()),
            stats: Cell::new(HttpStats::default()),
        }
    }

    /// With HTTP settings.
    #[must_use]
    pub fn with_http(mut self, http: HttpConfig<'a>) -> Self {
        self.http = http;
        self
    }

    /// With a clock (milliseconds), passed to every exchange and used for session expiry.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// With a table of `SESSIONS` legacy sessions, each over `CALLS` call slots of
    /// `storage`: `initialize` without `Mcp-Session-Id` takes a free entry (503 when none
    /// is) and the session id is returned in `Mcp-Session-Id`.
    #[must_use]
    pub fn with_sessions<const CALLS: usize>(
        self,
        storage: &'a mut [[CallSlot; CALLS]; SESSIONS],
    ) -> Self {
        if let Ok(mut table) = self.legacy.try_borrow_mut() {
            for (entry, calls) in table.entries.iter_mut().zip(storage.iter_mut()) {
                *entry = Some(Entry {
                    session: Session::from_slots(self.info, self.config, calls),
                    id: [0; SESSION_ID_LEN],
                    state: State::Free,
                    last_ms: 0,
                    stream: false,
                    ring: replay::Ring::default(),
                    subs: updates::Subscriptions::default(),
                    #[cfg(feature = "requests")]
                    mail: mailbox::Mailbox::default(),
                });
            }
        }
        self
    }

    /// With a mailbox of `N` bytes per legacy session (call after
    /// [`with_sessions`](Self::with_sessions); feature `requests`): the client's response
    /// to a request a running call sent ([`CallContext::request`]) arrives in a POST that
    /// any slot may serve, which keeps it there for the call's slot. A session's mailbox
    /// holds one response at a time (a second one arriving before the call took the first
    /// is dropped and counted in [`HttpStats::dropped`]); a response longer than `N` bytes
    /// reaches the call as [`RequestFailed::TooLarge`]. Without mailboxes, every response
    /// is dropped.
    #[cfg(feature = "requests")]
    #[must_use]
    pub fn with_responses<const N: usize>(self, storage: &'a mut [[u8; N]; SESSIONS]) -> Self {
        if let Ok(mut table) = self.legacy.try_borrow_mut() {
            for (entry, buf) in table.entries.iter_mut().zip(storage.iter_mut()) {
                if let Some(e) = entry {
                    e.mail.buf = buf;
                }
            }
        }
        self
    }

    /// With `N` bytes per legacy session to keep the events of its SSE responses (call
    /// after [`with_sessions`](Self::with_sessions)), for stream resumption: each event of
    /// a legacy POST's SSE response then carries an id (`<stream>-<seq>`, as mcp-tokio's),
    /// the response opens with a priming event (an id and `retry`), and a client that lost
    /// the stream reconnects with `GET` and `Last-Event-ID` and gets the stream's events
    /// after that id, then the rest as they come, until its response. The oldest events
    /// make room for new ones (a frame longer than `N - 12` bytes is not kept); a
    /// `Last-Event-ID` older than the events kept is answered 400 (-32600), and one that
    /// names no stream of the session opens the session's GET stream as without it.
    /// Without this, nothing is kept and events carry no ids.
    #[must_use]
    pub fn with_replay<const N: usize>(self, storage: &'a mut [[u8; N]; SESSIONS]) -> Self {
        if let Ok(mut table) = self.legacy.try_borrow_mut() {
            for (entry, buf) in table.entries.iter_mut().zip(storage.iter_mut()) {
                if let Some(e) = entry {
                    e.ring.buf = buf;
                }
            }
        }
        self
    }

    /// A legacy session with no request for `ms` milliseconds (on the clock) is ended and
    /// its entry freed (default 10 minutes); its id then gets 404.
    #[must_use]
    pub fn with_session_idle(self, ms: u64) -> Self {
        if let Ok(mut table) = self.legacy.try_borrow_mut() {
            table.idle_ms = ms;
        }
        self
    }

    /// The handler, for the application to change between exchanges (never hold the
    /// borrow across an await: a slot that finds it borrowed answers 503).
    pub fn handler(&self) -> &RefCell<S> {
        &self.handler
    }

    /// Counters since creation.
    pub fn stats(&self) -> HttpStats {
        self.stats.get()
    }

    /// Legacy sessions alive now.
    pub fn live_sessions(&self) -> usize {
        self.legacy.try_borrow().map_or(0, |t| {
            t.entries
                .iter()
                .flatten()
                .filter(|e| e.state == State::Live)
                .count()
        })
    }

    fn count(&self, f: impl FnOnce(&mut HttpStats)) {
        let mut s = self.stats.get();
        f(&mut s);
        self.stats.set(s);
    }

    /// A list changed: every open `subscriptions/listen` stream that asked for it, and
    /// every legacy session with its GET stream open, gets its
    /// `notifications/*/list_changed`.
    pub fn list_changed(&self, kind: ListKind) {
        self.changes.bump(kind);
    }

    /// A resource changed: every open `subscriptions/listen` stream subscribed to `uri`
    /// (its `resourceSubscriptions`), and every legacy session with its GET stream open
    /// that subscribed to it (`resources/subscribe`), gets `notifications/resources/updated`.
    /// The last 4 updates are kept for the streams to send (a stream that has not sent 4
    /// newer ones loses the oldest, counted in [`HttpStats::dropped`]). `false` (nothing
    /// sent) for a URI longer than [`MAX_UPDATED_URI`] bytes, or while another slot
    /// borrows the list (never across an await).
    pub fn resource_updated(&self, uri: &str) -> bool {
        let kept = self.updates.try_borrow_mut().is_ok_and(|mut u| u.push(uri));
        if kept {
            self.changes.bump_index(wait::UPDATES);
        }
        kept
    }

    fn now(&self) -> u64 {
        self.clock.map_or(0, |c| c())
    }

    fn limits(&self) -> Limits {
        Limits {
            max_depth: self.config.max_depth,
        }
    }

    /// Runs `f` on the target's session (`None` when the table is borrowed, which no
    /// await ever leaves it, or the entry is gone).
    fn on_session<R>(
        &self,
        target: &mut Target<'_, '_>,
        f: impl FnOnce(&mut Session<'_>) -> R,
    ) -> Option<R> {
        match target {
            Target::Local(s) => Some(f(s)),
            Target::Table(i) => {
                let mut table = self.legacy.try_borrow_mut().ok()?;
                table.entry(*i).map(|e| f(&mut e.session))
            }
        }
    }

    /// Answers a connection the acceptor cannot give a slot: 503 with a JSON-RPC error,
    /// and the connection is to be closed.
    pub async fn refuse_busy<T: Write>(&self, socket: &mut T) -> Ended {
        const BODY: &[u8] =
            br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"All connection slots are busy"}}"#;
        self.count(|s| s.refused = s.refused.saturating_add(1));
        match respond::json(socket, 503, BODY, false, Extra::default()).await {
            Ok(()) => Ended::Done(503),
            Err(e) => e.into(),
        }
    }

    /// Serves one connection with `slot` until it ends: requests one after the other
    /// (keep-alive, pipelining), each answered as the module docs say.
    pub async fn serve<T, const RX: usize, const TX: usize, const CALLS: usize>(
        &self,
        slot: &mut Slot<RX, TX, CALLS>,
        socket: &mut T,
    ) -> Ended
    where
        T: Read + Write,
    {
        self.serve_with(slot, &SlotState::new(), socket).await
    }

    /// [`serve`](Self::serve), telling `state` when the connection sits idle between
    /// requests, so that an acceptor that has no free slot for a new connection can close
    /// an idle one ([`SlotState::evict`]; the connection then ends with
    /// [`Ended::Evicted`]).
    pub async fn serve_with<T, const RX: usize, const TX: usize, const CALLS: usize>(
        &self,
        slot: &mut Slot<RX, TX, CALLS>,
        state: &SlotState,
        socket: &mut T,
    ) -> Ended
    where
        T: Read + Write,
    {
        self.serve_calls(slot, state, socket, &mut ()).await
    }

    /// [`serve_with`](Self::serve_with), running the deferred requests of each POST with
    /// `runner` on this slot (see [`CallRunner`]).
    pub async fn serve_calls<T, R, const RX: usize, const TX: usize, const CALLS: usize>(
        &self,
        slot: &mut Slot<RX, TX, CALLS>,
        state: &SlotState,
        socket: &mut T,
        runner: &mut R,
    ) -> Ended
    where
        T: Read + Write,
        R: CallRunner<T>,
    {
        let Slot { rx, tx, calls } = slot;
        let mut inbox = Inbox { buf: rx, filled: 0 };
        loop {
            let head_len = loop {
                match head::scan(inbox.buf.get(..inbox.filled).unwrap_or_default()) {
                    Parsed::Complete(n) => break n,
                    Parsed::Partial if inbox.filled == 0 => {
                        // Between requests: idle, and evictable.
                        state.idle.set(true);
                        let read = select(inbox.read_more(socket), state.evicted()).await;
                        state.idle.set(false);
                        match read {
                            Either::First(Ok(_)) => {}
                            Either::First(Err(BodyError::Read(kind))) => return Ended::Read(kind),
                            Either::First(Err(_)) => return Ended::Closed,
                            Either::Second(()) => return Ended::Evicted,
                        }
                    }
                    Parsed::Partial if inbox.filled < inbox.buf.len() => {
                        match inbox.read_more(socket).await {
                            Ok(_) => {}
                            Err(BodyError::Read(kind)) => return Ended::Read(kind),
                            Err(_) => return Ended::Closed,
                        }
                    }
                    Parsed::Partial | Parsed::TooManyHeaders => {
                        return self
                            .refuse(socket, tx, 431, "Request head too large", false)
                            .await
                            .err()
                            .unwrap_or(Ended::Done(431));
                    }
                    Parsed::Invalid => {
                        return self
                            .refuse(socket, tx, 400, "Malformed HTTP request", false)
                            .await
                            .err()
                            .unwrap_or(Ended::Done(400));
                    }
                }
            };
            self.count(|s| s.requests = s.requests.saturating_add(1));
            match self
                .request(socket, &mut inbox, tx, calls, head_len, state, runner)
                .await
            {
                Ok(end) => {
                    let end = end.min(inbox.filled);
                    inbox.buf.copy_within(end..inbox.filled, 0);
                    inbox.filled -= end;
                }
                Err(ended) => return ended,
            }
        }
    }

    /// A transport refusal: `status` with a JSON-RPC -32600 error body (id-less).
    async fn refuse<T: Write>(
        &self,
        socket: &mut T,
        tx: &mut [u8],
        status: u16,
        message: &str,
        keep_alive: bool,
    ) -> Result<(), Ended> {
        self.refuse_with(
            socket,
            tx,
            status,
            None,
            code::INVALID_REQUEST,
            message,
            keep_alive,
            Extra::default(),
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn refuse_with<T: Write>(
        &self,
        socket: &mut T,
        tx: &mut [u8],
        status: u16,
        id: Option<&str>,
        code: i32,
        message: &str,
        keep_alive: bool,
        extra: Extra<'_>,
    ) -> Result<(), Ended> {
        self.count(|s| s.refused = s.refused.saturating_add(1));
        let len = respond::rpc_error(tx, id, code, message).unwrap_or(0);
        respond::json(
            socket,
            status,
            tx.get(..len).unwrap_or_default(),
            keep_alive,
            extra,
        )
        .await?;
        if keep_alive {
            Ok(())
        } else {
            Err(Ended::Done(status))
        }
    }
}
