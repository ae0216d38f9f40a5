//! Streamable HTTP/1.1 without a heap (feature `http`): an MCP server over any
//! [`embedded_io_async`] socket (embassy-net's `TcpSocket`, or host sockets in tests),
//! with caller-owned connection slots.
//!
//! The protocol stays in the core: each POST body goes through the core's [`Pump`] with a
//! session of its own (2026-07-28 requests are self-contained); the server adds HTTP/1.1
//! framing (request heads parsed by `httparse`, `Content-Length` and chunked bodies,
//! keep-alive), the transport's own checks, and the routing of each frame to its response.
//!
//! | request | what happens |
//! |---|---|
//! | POST without `Mcp-Session-Id` | a fresh session over the slot's call storage handles the body (2026-07-28 requests are self-contained), answered with `application/json`, or 202 when it asked nothing; a `subscriptions/listen` request is answered with an SSE stream (chunked) that carries the acknowledgement and then the list changes ([`Server::list_changed`]) until the client closes it or sends its next request |
//! | POST `initialize` without `Mcp-Session-Id` (legacy) | with a session table ([`Server::with_sessions`]), a free entry's session handles it; if it negotiated, the session is kept and its id returned in `Mcp-Session-Id` (503 when no entry is free) |
//! | POST with `Mcp-Session-Id` (legacy) | the body goes to that session (404 when unknown, ended or expired; 400 when `MCP-Protocol-Version` names another revision) |
//! | GET with `Mcp-Session-Id` (legacy, `Accept: text/event-stream`) | the session's stream of session-wide messages (list changes); one per session (409 while open); `Last-Event-ID` opens it afresh (nothing is replayed) |
//! | DELETE with `Mcp-Session-Id` | ends the session (404 when unknown) |
//! | GET without a session id | 405 (`Allow: POST`) |
//! | other methods on the path | 405 (`Allow: GET, POST, DELETE`) |
//! | any other path | 404 |
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
//!
//! A refusal made before the body was read closes the connection (the body is not
//! skipped); others keep it open when the client asked to.
//!
//! # 2026-07-28 headers
//!
//! A POST with `MCP-Protocol-Version: 2026-07-28` has its headers compared with the
//! session's view of the body ([`mcp_rs_core::wire::peek`]):
//!
//! | header | checked against |
//! |---|---|
//! | `Mcp-Method` | `method` (exact, case-sensitive) |
//! | `MCP-Protocol-Version` | `params._meta["io.modelcontextprotocol/protocolVersion"]` |
//! | `Mcp-Name` | `params.name` (`tools/call`, `prompts/get`), `params.uri` (`resources/read`) |
//! | `Mcp-Param-<Name>` | the argument of a tool parameter marked `x-mcp-header: <Name>`, literal or `=?base64?…?=` (decoded at most [`MAX_PARAM_HEADER`] bytes) |
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
//! [`crate::DEFERRED_CALL_MESSAGE`]. Requests to the client from a running call (sampling,
//! elicitation, roots) are not supported yet: their answers arrive on other connections.
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
mod head;
mod respond;
mod sessions;

use core::cell::{Cell, RefCell};
use core::future::{poll_fn, Future};
use core::pin::pin;
use core::task::{Poll, Waker};

use embedded_io_async::{Error as _, Read, Write};
use mcp_rs_core::pump::{Output, Pump};
use mcp_rs_core::wire::json::Limits;
use mcp_rs_core::wire::jsonrpc::{code, FrameKind};
use mcp_rs_core::wire::peek::{peek, Peek};
use mcp_rs_core::wire::Method;
use mcp_rs_core::{
    CallSlot, CallToken, Config, ListKind, ProtocolVersion, ServerHandler, ServerInfo, Session,
    MIN_OUTPUT,
};

pub use calls::{CallContext, CallRunner};
pub use checks::{MAX_PARAM_HEADER, MODERN};
pub use head::MAX_HEADERS;
pub use sessions::SESSION_ID_LEN;

use body::{BodyError, Inbox};
use calls::SessionAccess;
use head::{Framing, Head, Parsed, Verb};
use respond::{Extra, WriteFailed};
use sessions::{Entry, State, Table};

use crate::{Clock, ErrorKind, DEFERRED_CALL_MESSAGE};

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

/// List changes, as an epoch per [`ListKind`], and the wakers of the streams waiting for
/// one (`W` at most; a stream beyond polls again at once).
#[derive(Debug)]
struct Changes<const W: usize> {
    epochs: [Cell<u32>; 4],
    wakers: RefCell<[Option<Waker>; W]>,
}

const KINDS: [ListKind; 4] = [
    ListKind::Tools,
    ListKind::Prompts,
    ListKind::Resources,
    ListKind::ResourceTemplates,
];

impl<const W: usize> Changes<W> {
    const fn new() -> Self {
        Changes {
            epochs: [const { Cell::new(0) }; 4],
            wakers: RefCell::new([const { None }; W]),
        }
    }

    fn now(&self) -> [u32; 4] {
        [0, 1, 2, 3].map(|i| self.epochs[i].get())
    }

    fn bump(&self, kind: ListKind) {
        if let Some(i) = KINDS.iter().position(|k| *k == kind) {
            self.epochs[i].set(self.epochs[i].get().wrapping_add(1));
        }
        if let Ok(mut wakers) = self.wakers.try_borrow_mut() {
            for w in wakers.iter_mut() {
                if let Some(w) = w.take() {
                    w.wake();
                }
            }
        }
    }

    /// Completes with the new epochs once they differ from `seen`.
    fn wait(&self, seen: [u32; 4]) -> impl Future<Output = [u32; 4]> + '_ {
        poll_fn(move |cx| {
            let now = self.now();
            if now != seen {
                return Poll::Ready(now);
            }
            let registered = self.wakers.try_borrow_mut().is_ok_and(|mut wakers| {
                if let Some(w) = wakers
                    .iter_mut()
                    .find(|w| w.as_ref().is_some_and(|w| w.will_wake(cx.waker())))
                {
                    *w = Some(cx.waker().clone());
                    return true;
                }
                match wakers.iter_mut().find(|w| w.is_none()) {
                    Some(w) => {
                        *w = Some(cx.waker().clone());
                        true
                    }
                    None => false,
                }
            });
            if !registered {
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        })
    }
}

/// Which of two futures finished first.
enum Either<A, B> {
    First(A),
    Second(B),
}

/// The first of two futures to finish (the other is dropped).
async fn select<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let (mut a, mut b) = (pin!(a), pin!(b));
    poll_fn(|cx| {
        if let Poll::Ready(x) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::First(x));
        }
        if let Poll::Ready(y) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Second(y));
        }
        Poll::Pending
    })
    .await
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
    /// open), and frames too large for the transmit buffer.
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
    stats: Cell<HttpStats>,
}

/// Which session handles a body: a fresh one over the slot's call storage (2026-07-28,
/// and legacy requests without a session), or an entry of the legacy table.
enum Target<'x, 's> {
    Local(&'x mut Session<'s>),
    Table(usize),
}

/// What a POST turned into.
enum Posted<'s> {
    /// Answered; `true` when the connection stays open.
    Answered(bool),
    /// A `subscriptions/listen` stream is open on the slot's session.
    Stream(Session<'s>, CallToken, bool),
}

/// Where the bytes of the current request end in the receive buffer, or how the
/// connection ended.
type Next = Result<usize, Ended>;

/// What a GET or DELETE asks, decided from its head.
enum Bodyless {
    /// Answered already.
    Answered,
    /// Open the GET stream of the legacy session at this entry.
    Stream(usize),
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
                });
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

    /// One request whose head is `inbox.buf[..head_len]`.
    #[allow(clippy::too_many_arguments)]
    async fn request<T: Read + Write, R: CallRunner<T>>(
        &self,
        socket: &mut T,
        inbox: &mut Inbox<'_>,
        tx: &mut [u8],
        calls: &mut [CallSlot],
        head_len: usize,
        state: &SlotState,
        runner: &mut R,
    ) -> Next {
        // What the head says, read before the body arrives (the head is parsed again once
        // the body is in, to check it against the body).
        let plan = {
            let mut storage = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let bytes = inbox.buf.get(..head_len).unwrap_or_default();
            let Some(head) = Head::parse(bytes, &mut storage) else {
                self.refuse(socket, tx, 400, "Malformed HTTP request", false)
                    .await?;
                return Ok(head_len);
            };
            let host = if self.http.check_hosts {
                head::check_host(&head, self.http.allowed_hosts)
            } else {
                Ok(())
            };
            Plan {
                verb: head.verb,
                on_path: head.path == self.http.path,
                keep_alive: head.keep_alive(),
                framing: head.body(),
                expects_continue: head.expects_continue(),
                host,
                json: head.is_json(),
                modern: head.text("mcp-protocol-version") == Some(MODERN),
            }
        };
        if let Err(why) = plan.host {
            self.refuse(socket, tx, 403, why, false).await?;
            return Ok(head_len);
        }
        if !plan.on_path {
            self.refuse(socket, tx, 404, "Not found", false).await?;
            return Ok(head_len);
        }
        let framing = match plan.framing {
            Ok(f) => f,
            Err(why) => {
                self.refuse(socket, tx, 400, why.0, false).await?;
                return Ok(head_len);
            }
        };
        match plan.verb {
            Verb::Post => {}
            Verb::Get | Verb::Delete if framing != Framing::Length(0) => {
                self.refuse(socket, tx, 400, "GET and DELETE take no body", false)
                    .await?;
                return Ok(head_len);
            }
            Verb::Get | Verb::Delete => {
                let decided = {
                    let mut storage = [httparse::EMPTY_HEADER; MAX_HEADERS];
                    let bytes = inbox.buf.get(..head_len).unwrap_or_default();
                    match Head::parse(bytes, &mut storage) {
                        Some(head) => self.bodyless(socket, &head, tx, plan).await?,
                        None => Bodyless::Answered,
                    }
                };
                if let Bodyless::Stream(i) = decided {
                    let end = head_len.min(inbox.filled);
                    inbox.buf.copy_within(end..inbox.filled, 0);
                    inbox.filled -= end;
                    let streamed = self
                        .stream(socket, inbox, tx, Target::Table(i), None, Some(state))
                        .await;
                    if let Ok(mut table) = self.legacy.try_borrow_mut() {
                        if let Some(e) = table.entry(i) {
                            e.stream = false;
                        }
                    }
                    streamed?;
                    return if plan.keep_alive {
                        Ok(0)
                    } else {
                        Err(Ended::Done(200))
                    };
                }
                return Ok(head_len);
            }
            Verb::Other => {
                let extra = Extra {
                    allow: Some("GET, POST, DELETE"),
                    ..Extra::default()
                };
                let keep = plan.keep_alive && framing == Framing::Length(0);
                let why = "Method not allowed";
                self.refuse_with(
                    socket,
                    tx,
                    405,
                    None,
                    code::INVALID_REQUEST,
                    why,
                    keep,
                    extra,
                )
                .await?;
                return Ok(head_len);
            }
        }
        if !plan.json {
            let why = "Content-Type must be application/json";
            self.refuse(socket, tx, 415, why, false).await?;
            return Ok(head_len);
        }
        let room = inbox.buf.len() - head_len;
        let too_large = "Request body too large for the receive buffer";
        if let Framing::Length(n) = framing {
            if n > room as u64 {
                self.refuse(socket, tx, 413, too_large, false).await?;
                return Ok(head_len);
            }
        }
        if plan.expects_continue {
            respond::write_all(socket, b"HTTP/1.1 100 Continue\r\n\r\n").await?;
            socket.flush().await.map_err(|e| Ended::Write(e.kind()))?;
        }
        let read = match framing {
            Framing::Length(n) => {
                let n = n as usize;
                inbox
                    .read_to(socket, head_len + n)
                    .await
                    .map(|()| (n, head_len + n))
            }
            Framing::Chunked => inbox.chunked(socket, head_len).await,
        };
        let (body_len, end) = match read {
            Ok(r) => r,
            Err(BodyError::TooLarge) => {
                self.refuse(socket, tx, 413, too_large, false).await?;
                return Ok(head_len);
            }
            Err(BodyError::Invalid) => {
                self.refuse(socket, tx, 400, "Malformed chunked body", false)
                    .await?;
                return Ok(head_len);
            }
            Err(BodyError::Closed) => return Err(Ended::Closed),
            Err(BodyError::Read(kind)) => return Err(Ended::Read(kind)),
        };
        let posted = {
            let (head_bytes, rest) = inbox.buf.split_at(head_len);
            let body = rest.get(..body_len).unwrap_or_default();
            let mut storage = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let Some(head) = Head::parse(head_bytes, &mut storage) else {
                self.refuse(socket, tx, 400, "Malformed HTTP request", false)
                    .await?;
                return Ok(end);
            };
            self.post(socket, &head, body, tx, calls, plan, runner)
                .await?
        };
        match posted {
            Posted::Answered(true) => Ok(end),
            Posted::Answered(false) => Err(Ended::Done(200)),
            Posted::Stream(mut session, token, keep) => {
                // The request is consumed: what follows it (a pipelined request) moves down.
                let end = end.min(inbox.filled);
                inbox.buf.copy_within(end..inbox.filled, 0);
                inbox.filled -= end;
                self.stream(
                    socket,
                    inbox,
                    tx,
                    Target::Local(&mut session),
                    Some(token),
                    None,
                )
                .await?;
                if keep {
                    Ok(0)
                } else {
                    Err(Ended::Done(200))
                }
            }
        }
    }

    /// A GET (the legacy session's stream) or DELETE (ends the legacy session).
    async fn bodyless<T: Write>(
        &self,
        socket: &mut T,
        head: &Head<'_, '_>,
        tx: &mut [u8],
        plan: Plan,
    ) -> Result<Bodyless, Ended> {
        let keep = plan.keep_alive;
        let not_found = "Session not found";
        let id = head.text("mcp-session-id").filter(|_| !plan.modern);
        let Some(id) = id else {
            if plan.verb == Verb::Delete {
                let why = "DELETE needs an Mcp-Session-Id";
                self.refuse(socket, tx, 400, why, keep).await?;
            } else {
                let extra = Extra {
                    allow: Some("POST"),
                    ..Extra::default()
                };
                let why = "GET needs an Mcp-Session-Id (2026-07-28 requests are POSTs)";
                self.refuse_with(
                    socket,
                    tx,
                    405,
                    None,
                    code::INVALID_REQUEST,
                    why,
                    keep,
                    extra,
                )
                .await?;
            }
            return Ok(Bodyless::Answered);
        };
        if plan.verb == Verb::Get && !head.accepts("text/event-stream") {
            let why = "GET streams are text/event-stream";
            self.refuse(socket, tx, 406, why, keep).await?;
            return Ok(Bodyless::Answered);
        }
        let now = self.now();
        let found = self
            .legacy
            .try_borrow_mut()
            .ok()
            .and_then(|mut t| t.find(id.as_bytes(), now));
        let Some(i) = found else {
            self.refuse(socket, tx, 404, not_found, keep).await?;
            return Ok(Bodyless::Answered);
        };
        if plan.verb == Verb::Delete {
            if let Ok(mut t) = self.legacy.try_borrow_mut() {
                t.free(i);
            }
            respond::empty(socket, 200, keep, Extra::default()).await?;
            return Ok(Bodyless::Answered);
        }
        let taken = self.legacy.try_borrow_mut().ok().and_then(|mut t| {
            let e = t.entry(i)?;
            let was = e.stream;
            e.stream = true;
            Some(was)
        });
        if taken != Some(false) {
            let why = "This session's GET stream is already open";
            self.refuse(socket, tx, 409, why, keep).await?;
            return Ok(Bodyless::Answered);
        }
        self.count(|s| s.streams = s.streams.saturating_add(1));
        respond::sse_head(socket, keep, Extra::default()).await?;
        Ok(Bodyless::Stream(i))
    }

    /// A POST whose body arrived: checked, handled by its session, answered.
    #[allow(clippy::too_many_arguments)]
    async fn post<'s, T: Write, R: CallRunner<T>>(
        &'s self,
        socket: &mut T,
        head: &Head<'_, '_>,
        body: &[u8],
        tx: &mut [u8],
        calls: &'s mut [CallSlot],
        plan: Plan,
        runner: &mut R,
    ) -> Result<Posted<'s>, Ended> {
        let keep = plan.keep_alive;
        let peeked = peek(body, self.limits());
        let request_id = match peeked {
            Peek::Request(r) => r.id.map(|id| id.as_raw()),
            _ => None,
        };
        if plan.modern {
            let checked = checks::check_modern(head, &peeked).and_then(|()| {
                match self.handler.try_borrow_mut() {
                    Ok(mut handler) => {
                        checks::check_params(head, &peeked, &mut *handler, self.limits())
                    }
                    Err(_) => Ok(()),
                }
            });
            if let Err(why) = checked {
                let code = code::HEADER_MISMATCH;
                self.refuse_with(
                    socket,
                    tx,
                    400,
                    request_id,
                    code,
                    why,
                    keep,
                    Extra::default(),
                )
                .await?;
                return Ok(Posted::Answered(keep));
            }
        }
        let now = self.now();
        let version = head.text("mcp-protocol-version");
        let known = version.is_none_or(|v| ProtocolVersion::ALL.iter().any(|p| p.as_str() == v));
        let session_id = head.text("mcp-session-id").filter(|_| !plan.modern);
        if !known && session_id.is_some() {
            let why = "Unsupported MCP-Protocol-Version header";
            self.refuse(socket, tx, 400, why, keep).await?;
            return Ok(Posted::Answered(keep));
        }
        // A legacy session's request, or an `initialize` that may start one.
        let mut entry = None;
        if let Some(id) = session_id {
            let found = self.legacy.try_borrow_mut().ok().and_then(|mut t| {
                let i = t.find(id.as_bytes(), now)?;
                let negotiated = t.entry(i)?.session.negotiated_version();
                Some((i, negotiated))
            });
            match found {
                None => {
                    self.refuse(socket, tx, 404, "Session not found", keep)
                        .await?;
                    return Ok(Posted::Answered(keep));
                }
                Some((_, negotiated))
                    if version.is_some_and(|v| negotiated.is_none_or(|n| n.as_str() != v)) =>
                {
                    let why = "MCP-Protocol-Version header does not match the session's";
                    self.refuse(socket, tx, 400, why, keep).await?;
                    return Ok(Posted::Answered(keep));
                }
                Some((i, _)) => entry = Some(i),
            }
        } else if !plan.modern
            && known
            && SESSIONS > 0
            && matches!(peeked, Peek::Request(r) if r.method() == Some(Method::Initialize))
        {
            let key = self.config.key;
            let reserved = self
                .legacy
                .try_borrow_mut()
                .ok()
                .and_then(|mut t| t.reserve(&key, now));
            match reserved {
                Some(i) => entry = Some(i),
                None => {
                    let why = "Too many sessions";
                    let code = code::INTERNAL_ERROR;
                    self.refuse_with(socket, tx, 503, None, code, why, keep, Extra::default())
                        .await?;
                    return Ok(Posted::Answered(keep));
                }
            }
        }
        let creating = entry.is_some() && session_id.is_none();
        let listen = matches!(peeked, Peek::Request(r) if r.method() == Some(Method::Listen))
            && head.accepts("text/event-stream");
        let mut local = Session::from_slots(self.info, self.config, calls);
        let access = Access {
            server: self,
            target: RefCell::new(match entry {
                Some(i) => Target::Table(i),
                None => Target::Local(&mut local),
            }),
        };
        let sse_ok = head.accepts("text/event-stream");
        let mut pump = Pump::message(body, now);
        let mut reply = Reply {
            sse: listen,
            started: false,
            replied: false,
            keep_alive: keep,
            modern: plan.modern,
            sessionless: entry.is_none() || creating,
            session: None,
        };
        let mut stream = None;
        loop {
            let mut polled = None;
            if let Ok(mut handler) = self.handler.try_borrow_mut() {
                access.with(&mut |s| polled = Some(pump.poll(s, &mut *handler, tx)));
            }
            let Some(polled) = polled else {
                let why = "The server's handler is busy";
                let code = code::INTERNAL_ERROR;
                self.refuse_with(socket, tx, 503, None, code, why, keep, Extra::default())
                    .await?;
                break;
            };
            let len = match polled {
                Ok(Some(Output::Transmit(t))) => t.len,
                Ok(Some(Output::Call(call))) => {
                    let token = call.token();
                    if runner.takes(&call) {
                        // Its progress and logs go out as they come: an SSE response.
                        reply.sse |= sse_ok && !reply.replied;
                        let mut ctx = CallContext {
                            access: &access,
                            tx: &mut *tx,
                            socket: &mut *socket,
                            reply: &mut reply,
                            token,
                            failed: None,
                        };
                        runner.run(call, &mut ctx).await;
                        if let Some(e) = ctx.failed {
                            return Err(e);
                        }
                    }
                    // Unanswered by the runner (or not taken): -32603.
                    let mut failed = None;
                    access.with(&mut |s| {
                        failed =
                            Some(s.fail(token, code::INTERNAL_ERROR, DEFERRED_CALL_MESSAGE, tx))
                    });
                    match failed {
                        Some(Ok(Some(t))) => t.len,
                        _ => continue,
                    }
                }
                Ok(Some(Output::Listen(token))) => {
                    stream = Some(token);
                    continue;
                }
                Ok(Some(_)) => continue,
                Ok(None) => break,
                Err(_) => {
                    self.count(|s| s.dropped = s.dropped.saturating_add(1));
                    break;
                }
            };
            if creating && !reply.replied && reply.session.is_none() {
                // The reply to `initialize`: the session lives when it negotiated.
                let id = self.legacy.try_borrow_mut().ok().and_then(|mut t| {
                    let e = t.entry(entry?)?;
                    e.session.negotiated_version()?;
                    e.state = State::Live;
                    Some(e.id)
                });
                if id.is_some() {
                    self.count(|s| s.sessions = s.sessions.saturating_add(1));
                    reply.sessionless = false;
                }
                reply.session = id;
            }
            let frame = tx.get(..len).unwrap_or_default();
            if !reply.send(socket, frame).await? {
                self.count(|s| s.dropped = s.dropped.saturating_add(1));
            }
        }
        if creating && reply.session.is_none() {
            if let (Ok(mut t), Some(i)) = (self.legacy.try_borrow_mut(), entry) {
                t.free(i);
            }
        }
        match (stream, reply.sse && reply.started, entry) {
            (Some(token), true, None) => {
                self.count(|s| s.streams = s.streams.saturating_add(1));
                Ok(Posted::Stream(local, token, keep))
            }
            _ => {
                if reply.sse && reply.started {
                    respond::sse_end(socket).await?;
                } else if !reply.replied {
                    respond::empty(socket, 202, keep, Extra::default()).await?;
                }
                Ok(Posted::Answered(keep))
            }
        }
    }

    /// An open SSE stream (a `subscriptions/listen` on the slot's session, `listen` its
    /// token; or a legacy session's GET stream): list changes go out until the client
    /// closes the connection, or sends the next request (which ends a listen stream with
    /// its `complete` result, then is served).
    async fn stream<T: Read + Write>(
        &self,
        socket: &mut T,
        inbox: &mut Inbox<'_>,
        tx: &mut [u8],
        mut target: Target<'_, '_>,
        listen: Option<CallToken>,
        evictable: Option<&SlotState>,
    ) -> Result<(), Ended> {
        let mut seen = self.changes.now();
        loop {
            loop {
                match self.on_session(&mut target, |s| s.poll_transmit(tx)) {
                    Some(Ok(Some(t))) => {
                        let frame = tx.get(..t.len).unwrap_or_default();
                        respond::sse_event(socket, None, frame).await?;
                    }
                    Some(Ok(None)) => break,
                    None => return Err(Ended::Done(200)),
                    Some(Err(_)) => {
                        self.count(|s| s.dropped = s.dropped.saturating_add(1));
                        break;
                    }
                }
            }
            let spare = inbox.buf.get_mut(inbox.filled..).unwrap_or_default();
            if spare.is_empty() || inbox.filled > 0 {
                // The client sent more: end the stream so the next request is served.
                if let Some(token) = listen {
                    let closed = self.on_session(&mut target, |s| s.close_subscription(token, tx));
                    if let Some(Ok(Some(t))) = closed {
                        let frame = tx.get(..t.len).unwrap_or_default();
                        respond::sse_event(socket, None, frame).await?;
                    }
                }
                respond::sse_end(socket).await?;
                return Ok(());
            }
            // A legacy GET stream waiting for news is evictable (the client reopens it).
            let evicted = async {
                match evictable {
                    Some(state) => state.evicted().await,
                    None => core::future::pending().await,
                }
            };
            if let Some(state) = evictable {
                state.idle.set(true);
            }
            let woke = select(socket.read(spare), select(self.changes.wait(seen), evicted)).await;
            if let Some(state) = evictable {
                state.idle.set(false);
            }
            match woke {
                Either::First(Ok(0)) => return Err(Ended::Closed),
                Either::First(Ok(n)) => inbox.filled += n,
                Either::First(Err(e)) => return Err(Ended::Read(e.kind())),
                Either::Second(Either::Second(())) => {
                    respond::sse_end(socket).await?;
                    return Err(Ended::Evicted);
                }
                Either::Second(Either::First(now)) => {
                    let changed = |i: usize| now.get(i) != seen.get(i);
                    self.on_session(&mut target, |s| {
                        for (i, kind) in KINDS.iter().enumerate() {
                            if changed(i) {
                                s.list_changed(*kind);
                            }
                        }
                    });
                    seen = now;
                }
            }
        }
    }
}

/// The session a POST's body goes to, lent one command at a time.
struct Access<'r, 'a, 'x, 's, S: ServerHandler, const N: usize, const W: usize> {
    server: &'r Server<'a, S, N, W>,
    target: RefCell<Target<'x, 's>>,
}

impl<S: ServerHandler, const N: usize, const W: usize> SessionAccess
    for Access<'_, '_, '_, '_, S, N, W>
{
    fn with(&self, f: &mut dyn FnMut(&mut Session<'_>)) {
        if let Ok(mut target) = self.target.try_borrow_mut() {
            self.server.on_session(&mut target, |s| f(s));
        }
    }
}

/// What the head of a request says, kept while its body is read.
#[derive(Clone, Copy, Debug)]
struct Plan {
    verb: Verb,
    on_path: bool,
    keep_alive: bool,
    framing: Result<Framing, head::BadHeader>,
    expects_continue: bool,
    host: Result<(), &'static str>,
    json: bool,
    modern: bool,
}

/// The response to a POST as it is being written.
struct Reply {
    /// An SSE stream (`subscriptions/listen`), else one JSON body.
    sse: bool,
    started: bool,
    /// The JSON body was written.
    replied: bool,
    keep_alive: bool,
    modern: bool,
    /// Legacy, and no session handles it (an error is then 400).
    sessionless: bool,
    /// The id of the session this response created.
    session: Option<[u8; SESSION_ID_LEN]>,
}

impl Reply {
    /// Sends a frame; `false` when the response cannot carry it (a second frame on a JSON
    /// response).
    async fn send<T: Write>(&mut self, socket: &mut T, frame: &[u8]) -> Result<bool, Ended> {
        let extra = Extra {
            allow: None,
            session: self.session.as_ref().map(|id| &id[..]),
        };
        if self.sse {
            if !self.started {
                respond::sse_head(socket, self.keep_alive, extra).await?;
                self.started = true;
            }
            respond::sse_event(socket, None, frame).await?;
            return Ok(true);
        }
        // A JSON response carries the one response: notifications and requests cannot go
        // on it (the client asked for no stream).
        let kind = mcp_rs_core::wire::jsonrpc::frame_kind(frame);
        if self.replied || matches!(kind, FrameKind::Notification | FrameKind::Request) {
            return Ok(false);
        }
        let status = status_for(frame, self.modern, self.sessionless);
        respond::json(socket, status, frame, self.keep_alive, extra).await?;
        self.replied = true;
        Ok(true)
    }
}

/// The HTTP status of a JSON reply: 2026-07-28 maps protocol errors to 4xx as the
/// transport specifies; legacy replies are 200 except the error to a request no session
/// handles (no `initialize`, no session id): 400.
fn status_for(frame: &[u8], modern: bool, sessionless: bool) -> u16 {
    let FrameKind::Error(c) = mcp_rs_core::wire::jsonrpc::frame_kind(frame) else {
        return 200;
    };
    let bad_request = [
        code::PARSE_ERROR,
        code::INVALID_REQUEST,
        code::INVALID_PARAMS,
        code::HEADER_MISMATCH,
        code::MISSING_REQUIRED_CLIENT_CAPABILITY,
        code::UNSUPPORTED_PROTOCOL_VERSION,
    ];
    match c {
        code::METHOD_NOT_FOUND if modern => 404,
        c if modern && bad_request.contains(&c) => 400,
        _ if sessionless && !modern => 400,
        _ => 200,
    }
}
