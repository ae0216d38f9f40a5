//! Streamable HTTP on hyper: both protocol eras on one URL.
//!
//! | request | era | what happens |
//! |---|---|---|
//! | POST without `Mcp-Session-Id` | either | a fresh session handles the body; if it was a successful `initialize`, the session is kept and its id returned in `Mcp-Session-Id`, otherwise it ends once the body is answered (2026-07-28 requests are self-contained) |
//! | POST with `Mcp-Session-Id` | legacy | the body goes to that session (404 when unknown or ended) |
//! | GET with `Mcp-Session-Id` | legacy | the session's stream of session-wide messages (list changes) |
//! | DELETE with `Mcp-Session-Id` | legacy | ends the session |
//!
//! With [`HttpConfig::legacy_sse`] the 2024-11-05 HTTP+SSE transport is served beside it
//! (`GET /sse`, `POST /messages?sessionId=…`; see [`LegacySse`]).
//!
//! A POST is answered with `application/json` when everything it asked was answered at
//! once, and with an SSE stream when calls run on (progress, logs, requests to the client,
//! `subscriptions/listen`). The adapter holds no protocol knowledge beyond the transport's
//! own headers ([`headers`], public for embedders with their own HTTP front end): the core
//! decides every JSON-RPC answer, and `routes.rs` sends each frame to the response it
//! belongs to.
//!
//! A client whose `Accept` lacks `text/event-stream` gets JSON only: its call's answer
//! without the frames before it, and 406 for `subscriptions/listen` (see
//! [`HttpConfig::max_json_answer`]). What clients make the server buffer (bodies, queued and
//! kept frames) is counted against one budget, [`HttpConfig::memory_budget`]: when it is
//! spent, new work gets 503.
//!
//! Authorization ([`HttpConfig::auth`], [`auth`]): bearer tokens, Protected Resource
//! Metadata, scopes per endpoint and per tool, sessions bound to their principal; JWT
//! validation in `jwt` (feature `jwt`).
//!
//! # Mounting in axum or tower
//!
//! [`Server::http_service`] gives the same handler as a [`tower_service::Service`]
//! ([`McpHttpService`]), to mount in an existing axum router or hyper/tower stack;
//! [`Server::serve_http_with`] is that service behind an accept loop of its own. Mounted:
//!
//! - **Path.** The service answers every path its router gives it (axum's `nest_service`
//!   strips the prefix: `/api/mcp` arrives as `/`); [`HttpConfig::path`] is not used.
//!   With [`HttpConfig::auth`], the Protected Resource Metadata is served at the paths
//!   [`McpHttpService::metadata_paths`] lists (they derive from the resource URI the user
//!   sets in [`auth::ResourceMetadata::new`], e.g. `https://host/api/mcp`): route them to
//!   the service too.
//! - **Peer.** The per-peer session quota ([`HttpConfig::max_sessions_per_peer`]) counts
//!   by the [`PeerAddr`] in the request's extensions; without one (and without
//!   authorization, whose principal is the peer) every client is one shared peer. With
//!   axum, copy `ConnectInfo<SocketAddr>` into a [`PeerAddr`] (see [`PeerAddr`]).
//! - **Kept:** Host/Origin checks, the body limit (and the time the body may take:
//!   [`HttpConfig::header_timeout`]), media types, the session table and its quotas,
//!   idle-session expiry, authorization, the 2026-07-28 header checks, SSE keep-alive, the
//!   memory budget (per service: clones share it; [`McpHttpService::memory_used`]), and
//!   shutdown: after [`Server::shutdown`] requests get 503 and every session ends.
//! - **The host's job:** what needs the socket. [`HttpConfig::header_timeout`] for heads
//!   and idle keep-alive (hyper: `http1::Builder::timer` and `header_read_timeout`),
//!   [`HttpConfig::max_header_bytes`] (hyper: `max_buf_size`),
//!   [`HttpConfig::write_timeout`] (wrap the socket, e.g. `tokio-io-timeout`), and
//!   the connection cap (`Limits::max_connections`; tower's `ConcurrencyLimitLayer` bounds
//!   requests, not sockets: limit accepted sockets in the listener). `axum::serve` gives
//!   hyper no timer (so no head timeout), keeps hyper's default head buffer (about
//!   400 KB), and has no write timeout or connection cap: beyond loopback, serve the
//!   router with hyper's builder and these settings.

pub mod auth;
use crate::budget;
pub mod card;
mod front;
mod head_timer;
pub mod headers;
#[cfg(feature = "jwt")]
pub mod jwt;
mod legacy;
mod mode;
mod per_core;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::header::{HeaderValue, ACCEPT, ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use mcp_rs_core::wire::headers as wire_headers;
use mcp_rs_core::wire::peek::{peek, Peek};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use crate::driver::Connection;
use crate::error::Error;
use crate::routes::{self, Answer, Channel, Event, Inbound, Post};
use crate::server::Server;

/// Settings of the HTTP transport (see [`Server::serve_http_with`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The endpoint path of [`Server::serve_http_with`] (default `/mcp`); other paths get 404.
    /// A mounted [`McpHttpService`] does not use it: it answers whatever paths its router
    /// sends it (after axum's `nest_service`, the prefix stripped).
    pub path: String,
    /// Host names accepted in `Host` and `Origin` besides `localhost`, `127.0.0.1` and
    /// `[::1]` (DNS-rebinding protection); others get 403.
    pub allowed_hosts: Vec<String>,
    /// Largest request body (default 4 MiB); larger ones get 413.
    pub max_body: usize,
    /// Legacy sessions kept at once (default 1,024); an `initialize` beyond gets 503.
    pub max_sessions: usize,
    /// Legacy sessions one peer may hold at once (default 256, a quarter of the default
    /// `max_sessions`: no single peer can fill the table, while a gateway that opens many
    /// sessions still gets plenty); an `initialize` beyond gets 503. A peer is the
    /// authenticated principal (issuer and subject) with [`auth`](Self::auth), else the
    /// client's IP address (its /64 for IPv6; mounted, the [`PeerAddr`] in the request's
    /// extensions, and without one a single peer shared by every client). Behind a reverse
    /// proxy every client has the proxy's address: raise it to `max_sessions` there, or use
    /// authorization.
    pub max_sessions_per_peer: usize,
    /// A legacy session with no request for this long is ended and its memory freed
    /// (default 10 minutes); its id then gets 404.
    pub session_idle: Duration,
    /// How long a connection may take to send a request's headers, and then its body, and
    /// how long an idle keep-alive connection is kept (default 10 s): slow or idle sockets
    /// cannot hold connection slots (a late body gets 408).
    pub header_timeout: Duration,
    /// Largest request head, the request line and headers (default 64 KiB; at least 8 KiB):
    /// a larger one gets 431 (from hyper, without a body) and its connection is closed. It
    /// also bounds what each connection buffers before a request is complete.
    pub max_header_bytes: usize,
    /// A write to a connection that makes no progress for this long (default 30 s) fails and
    /// the connection is closed: a client that stops reading its response or SSE stream
    /// cannot keep its connection slot (the stream's session and calls see it gone).
    pub write_timeout: Duration,
    /// An SSE comment (`: keep-alive`) is sent on a response stream that has been quiet this
    /// long (default 15 s; `None`: never), so that proxies and load balancers that cut idle
    /// connections keep quiet streams (a GET stream, a `subscriptions/listen`) open.
    pub sse_keep_alive: Option<Duration>,
    /// Authorization (default `None`: none). With it, requests to [`path`](Self::path) need
    /// a bearer token its authorizer accepts, and the Protected Resource Metadata is served
    /// at `/.well-known/oauth-protected-resource[/path]` (see [`auth`]).
    pub auth: Option<auth::Auth>,
    /// Headers added to every response (default none): e.g. `Mcp-Instance: a`, naming the
    /// instance that answered behind a load balancer.
    pub response_headers: hyper::HeaderMap,
    /// The legacy HTTP+SSE transport of 2024-11-05 beside Streamable HTTP (default `None`:
    /// off); see [`LegacySse`].
    pub legacy_sse: Option<LegacySse>,
    /// The server card at `<path>/server-card` and the catalogs pointing at it at
    /// `/.well-known/ai-catalog.json` and `/.well-known/mcp/catalog.json` (default `true`;
    /// public, see [`card`]).
    pub server_card: bool,
    /// Bytes held at once, over every client, in buffers whose size clients decide (default
    /// 256 MiB): request bodies being read, frames queued for responses and streams (SSE
    /// streams, GET and `subscriptions/listen` streams, the HTTP+SSE stream), JSON answers
    /// being gathered, and backlogs kept for resumption. Once it is spent, new requests and
    /// streams get 503 with a JSON-RPC error, and a stream whose next frame does not fit is
    /// closed (as for a client that does not read); it is available again as those buffers
    /// are freed. Keep it at least [`max_body`](Self::max_body) and
    /// [`max_json_answer`](Self::max_json_answer).
    pub memory_budget: usize,
    /// Largest answer gathered for a client whose `Accept` lacks `text/event-stream` (default
    /// 64 MiB, `Limits::max_response`'s default): beyond it the POST gets 500 with a
    /// JSON-RPC error. Such a client gets the responses only: progress, logs and requests to
    /// the client are dropped as they arrive, and `subscriptions/listen` is refused with 406.
    pub max_json_answer: usize,
}

/// The legacy HTTP+SSE transport (MCP 2024-11-05), served beside Streamable HTTP when set
/// in [`HttpConfig::legacy_sse`]: a client opens `GET` [`sse_path`](Self::sse_path)
/// (`Accept: text/event-stream`); that creates a session and its stream, whose first event
/// (`event: endpoint`) names the URI to POST its JSON-RPC messages to
/// ([`messages_path`](Self::messages_path)`?sessionId=<id>`). Each POST is answered
/// `202 Accepted`; every server message (responses, notifications, requests to the client)
/// goes to the stream as `event: message`. Closing the stream ends the session.
///
/// The same defaults as Streamable HTTP apply: Host/Origin checks, authorization (a bearer
/// token on the GET and on every POST; the session belongs to its principal), the body
/// limit and media type, the session table and its per-peer quotas (shared with
/// Streamable sessions), SSE keep-alive, and a bounded stream: once 256 frames a client
/// does not read are queued, the next one ends its session; and the write timeout
/// closes its connection, which ends the session. The revision is whatever `initialize`
/// negotiates (any this server supports).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LegacySse {
    /// Where clients open their stream (default `/sse`).
    pub sse_path: String,
    /// Where clients POST their messages (default `/messages`).
    pub messages_path: String,
}

impl Default for LegacySse {
    fn default() -> Self {
        LegacySse {
            sse_path: "/sse".into(),
            messages_path: "/messages".into(),
        }
    }
}

impl LegacySse {
    /// The defaults, `/sse` and `/messages`.
    pub fn new() -> Self {
        Self::default()
    }

    /// With another stream path.
    pub fn sse_path(mut self, path: impl Into<String>) -> Self {
        self.sse_path = path.into();
        self
    }

    /// With another messages path.
    pub fn messages_path(mut self, path: impl Into<String>) -> Self {
        self.messages_path = path.into();
        self
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            allowed_hosts: Vec::new(),
            max_body: 4 << 20,
            max_sessions: 1024,
            max_sessions_per_peer: 256,
            session_idle: Duration::from_secs(600),
            header_timeout: Duration::from_secs(10),
            max_header_bytes: 64 << 10,
            write_timeout: Duration::from_secs(30),
            sse_keep_alive: Some(Duration::from_secs(15)),
            auth: None,
            response_headers: hyper::HeaderMap::new(),
            server_card: true,
            legacy_sse: None,
            memory_budget: 256 << 20,
            max_json_answer: 64 << 20,
        }
    }
}

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// The body of [`McpHttpService`]'s responses: JSON, an SSE stream, or empty.
pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// The client's address, for the per-peer session quota of a mounted [`McpHttpService`]
/// ([`HttpConfig::max_sessions_per_peer`]): put it in the request's extensions. Without it
/// (and without authorization, whose principal is the peer) every client counts as one
/// shared peer: then raise `max_sessions_per_peer` to `max_sessions`.
/// [`Server::serve_http_with`] takes the peer from the socket and needs none.
///
/// With axum, serve with `into_make_service_with_connect_info::<SocketAddr>()` and copy
/// axum's `ConnectInfo` in a middleware:
///
/// ```ignore
/// use axum::extract::{ConnectInfo, Request};
/// let app = axum::Router::new()
///     .nest_service("/mcp", server.http_service(config))
///     .layer(axum::middleware::map_request(|mut req: Request| async move {
///         if let Some(ConnectInfo(addr)) = req.extensions().get::<ConnectInfo<SocketAddr>>().copied() {
///             req.extensions_mut().insert(PeerAddr(addr));
///         }
///         req
///     }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerAddr(pub std::net::SocketAddr);

/// How long a connection arriving at the limit waits for an idle one to close.
const SHED_WAIT: Duration = Duration::from_millis(200);

/// Connections accepted beyond `Limits::max_connections`, to wait for a slot and else be
/// answered 503; a socket arriving when these are taken too is closed at once, so that the
/// memory held by connections is bounded whatever arrives.
pub const OVERFLOW_CONNECTIONS: usize = 64;

/// hyper's smallest buffer (`max_buf_size` panics below it).
const MIN_HEAD: usize = 8192;

/// Whom a session quota counts against ([`HttpConfig::max_sessions_per_peer`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Peer {
    /// The client's address (IPv6: its /64, the smallest block a host is usually given).
    Ip(std::net::IpAddr),
    /// An authenticated principal: issuer and subject.
    Principal(Option<String>, String),
    /// Every client of a mounted service whose requests carry no [`PeerAddr`].
    Shared,
}

impl Peer {
    fn of(ip: Option<std::net::IpAddr>, principal: Option<&auth::Principal>) -> Peer {
        use std::net::{IpAddr, Ipv6Addr};
        if let Some(p) = principal {
            return Peer::Principal(p.issuer.clone(), p.subject.clone());
        }
        let Some(ip) = ip else {
            return Peer::Shared;
        };
        match ip {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Peer::Ip(IpAddr::V4(v4)),
                None => {
                    let s = v6.segments();
                    Peer::Ip(IpAddr::V6(Ipv6Addr::new(
                        s[0], s[1], s[2], s[3], 0, 0, 0, 0,
                    )))
                }
            },
            v4 => Peer::Ip(v4),
        }
    }
}

/// The legacy sessions, and the count of those being created (their `initialize` is
/// running): both count against the limits, so concurrent `initialize`s cannot overfill
/// the table between the check and the insert.
#[derive(Default)]
struct Table {
    live: HashMap<String, Entry>,
    /// Live and pending sessions per peer (no entry at zero).
    per_peer: HashMap<Peer, usize>,
    pending: usize,
}

impl Table {
    fn release(&mut self, peer: &Peer) {
        if let Some(n) = self.per_peer.get_mut(peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_peer.remove(peer);
            }
        }
    }

    fn remove(&mut self, id: &str) -> Option<Entry> {
        let entry = self.live.remove(id)?;
        self.release(&entry.peer);
        Some(entry)
    }

    fn retain(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        let mut gone = Vec::new();
        self.live.retain(|_, e| {
            let kept = keep(e);
            if !kept {
                gone.push(e.peer.clone());
            }
            kept
        });
        for peer in gone {
            self.release(&peer);
        }
    }
}

/// A slot taken in the session table for a session being created; given back on drop
/// unless [`kept`](Self::keep).
struct Reservation<'a> {
    state: &'a State,
    peer: Option<Peer>,
}

impl Reservation<'_> {
    /// The session was created: the slot becomes its entry (counted against this
    /// reservation's peer).
    fn keep(mut self, id: String, mut entry: Entry) {
        let mut table = self.state.sessions();
        table.pending = table.pending.saturating_sub(1);
        if let Some(peer) = self.peer.take() {
            entry.peer = peer;
            table.live.insert(id, entry);
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if let Some(peer) = self.peer.take() {
            let mut table = self.state.sessions();
            table.pending = table.pending.saturating_sub(1);
            table.release(&peer);
        }
    }
}

struct Entry {
    tx: mpsc::Sender<Inbound>,
    /// Whose quota it counts against.
    peer: Peer,
    last: Instant,
    /// The revision the session negotiated.
    version: mcp_rs_core::ProtocolVersion,
    /// Who created it (with authorization): only that identity may use it.
    owner: Option<Arc<auth::Principal>>,
    /// A legacy HTTP+SSE session: its one stream (every frame goes there). Kept while the
    /// stream is open, whatever its idle time; reachable only at the messages path.
    stream: Option<mpsc::Sender<Event>>,
}

struct State {
    server: Server,
    config: HttpConfig,
    sessions: Mutex<Table>,
    /// The one endpoint path ([`Server::serve_http_with`]), or `None`: every path
    /// (a mounted service).
    endpoint: Option<String>,
    /// Whether the session sweep ([`State::start_sweep`]) was started.
    sweeping: AtomicBool,
    /// Dropped with the state: the sweep task then ends.
    alive: tokio::sync::watch::Sender<()>,
    /// [`HttpConfig::memory_budget`].
    budget: budget::Budget,
}

impl State {
    fn new(server: Server, config: HttpConfig, endpoint: Option<String>) -> State {
        State {
            server,
            sessions: Mutex::new(Table::default()),
            endpoint,
            sweeping: AtomicBool::new(false),
            alive: tokio::sync::watch::channel(()).0,
            budget: budget::Budget::new(config.memory_budget),
            config,
        }
    }

    /// Starts, once, the task that forgets idle sessions, on the runtime of the first
    /// request. It ends when the server shuts down (forgetting every session: their loops
    /// see the shutdown too and end) or when the last handle to the state is dropped.
    fn start_sweep(self: &Arc<Self>) {
        // Read first: asked on every request, from every worker thread, and a swap would
        // write the shared flag's cache line each time.
        if self.sweeping.load(Ordering::Acquire) || self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let weak = Arc::downgrade(self);
        let mut stop = self.server.inner.shutdown.subscribe();
        let mut alive = self.alive.subscribe();
        // Idle sessions are looked for often enough to end within 1.5x their idle time.
        let every =
            (self.config.session_idle / 2).clamp(Duration::from_millis(10), Duration::from_secs(5));
        tokio::spawn(async move {
            let mut sweep = tokio::time::interval(every);
            sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = async { let _ = stop.wait_for(|s| *s).await; } => break,
                    Err(_) = alive.changed() => return,
                    _ = sweep.tick() => match weak.upgrade() {
                        Some(state) => state.expire(),
                        None => return,
                    },
                }
            }
            if let Some(state) = weak.upgrade() {
                state.sessions().live.clear();
            }
        });
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, Table> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A slot for a new legacy session of `peer`, or why not (the message of its 503)
    /// when the table or the peer's quota is full.
    fn reserve(&self, peer: Peer) -> Result<Reservation<'_>, &'static str> {
        let mut table = self.sessions();
        if table.live.len() + table.pending >= self.config.max_sessions {
            return Err("Too many sessions");
        }
        let held = table.per_peer.get(&peer).copied().unwrap_or(0);
        if held >= self.config.max_sessions_per_peer {
            tracing::debug!(?peer, held, "session quota of a peer reached");
            return Err("Too many sessions for this client");
        }
        table.pending += 1;
        *table.per_peer.entry(peer.clone()).or_default() += 1;
        Ok(Reservation {
            state: self,
            peer: Some(peer),
        })
    }

    /// The session with this id, marked as used now; `None` also when it belongs to
    /// another principal than `caller` (to whom it does not exist).
    fn session(
        &self,
        id: &str,
        caller: Option<&auth::Principal>,
    ) -> Option<(mpsc::Sender<Inbound>, mcp_rs_core::ProtocolVersion)> {
        self.session_of(id, caller, false)
    }

    /// [`session`](Self::session) of either transport: `legacy_sse` for a session of the
    /// HTTP+SSE transport (each is reachable only by its own transport).
    fn session_of(
        &self,
        id: &str,
        caller: Option<&auth::Principal>,
        legacy_sse: bool,
    ) -> Option<(mpsc::Sender<Inbound>, mcp_rs_core::ProtocolVersion)> {
        let mut sessions = self.sessions();
        let entry = sessions.live.get_mut(id)?;
        if entry.stream.is_some() != legacy_sse {
            return None;
        }
        if entry.tx.is_closed() || entry.stream.as_ref().is_some_and(|s| s.is_closed()) {
            sessions.remove(id);
            return None;
        }
        if !owned_by(entry, caller) {
            tracing::warn!("a request named a session of another principal");
            return None;
        }
        entry.last = Instant::now();
        Some((entry.tx.clone(), entry.version))
    }

    /// Starts a session's drive loop on its first body; returns its inbox (none for a
    /// stateless request, which nothing else can reach) and the first body's outcome and
    /// frames (none if the session failed before it answered). The loop is polled once
    /// here: a request answered at once (a stateless call of a synchronous tool) is done
    /// without a task, a hand-off between tasks, or a channel for its frames or outcome
    /// (the loop hands them over on this thread: [`routes::hand_over`]); a legacy session,
    /// or calls that run on, continue in a task of their own.
    async fn start_session(
        &self,
        first: Option<Post>,
        stateless: bool,
    ) -> (
        Option<mpsc::Sender<Inbound>>,
        Option<(routes::Outcome, Answer)>,
    ) {
        let (tx, rx) = if stateless {
            (None, None)
        } else {
            let (tx, rx) = mpsc::channel(16);
            (Some(tx), Some(rx))
        };
        let server = self.server.clone();
        let budget = Some(self.budget.clone());
        let mut run = Box::pin(async move {
            if let Err(e) = Connection::run_http(&server.inner, first, rx, budget).await {
                tracing::warn!(error = %e, "HTTP session ended with an error");
            }
        });
        // (Nothing polled on this thread before can have left one; cleared all the same.)
        drop(routes::take_first());
        // As in a task of its own, a panic ends this session only (the POST then gets 500).
        let polled = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(run.as_mut()));
        match futures::poll!(polled) {
            std::task::Poll::Pending => {
                tokio::spawn(run);
            }
            std::task::Poll::Ready(Err(_)) => tracing::error!("an HTTP session panicked"),
            std::task::Poll::Ready(Ok(())) => {}
        }
        (tx, routes::take_first())
    }

    /// `response` with [`HttpConfig::response_headers`] added.
    fn stamp(&self, mut response: Response<Body>) -> Response<Body> {
        for (name, value) in &self.config.response_headers {
            response.headers_mut().append(name, value.clone());
        }
        response
    }

    /// Forgets sessions idle for longer than the configured time (their loops then end).
    fn expire(&self) {
        let idle = self.config.session_idle;
        self.sessions().retain(|e| match &e.stream {
            // A legacy HTTP+SSE session lives as long as its stream.
            Some(stream) => !stream.is_closed() && !e.tx.is_closed(),
            None => e.last.elapsed() < idle && !e.tx.is_closed(),
        });
    }
}

impl Server {
    /// Serves Streamable HTTP on `listener` with the default [`HttpConfig`] until shutdown.
    pub async fn serve_http(&self, listener: tokio::net::TcpListener) -> Result<(), Error> {
        self.serve_http_with(listener, HttpConfig::default()).await
    }

    /// Serves Streamable HTTP on `listener` until shutdown. Bind it to loopback unless the
    /// server must be reachable from elsewhere (and then list the names clients use in
    /// [`HttpConfig::allowed_hosts`]).
    pub async fn serve_http_with(
        &self,
        listener: tokio::net::TcpListener,
        config: HttpConfig,
    ) -> Result<(), Error> {
        let front = front::Front::new(self, config);
        front.state().start_sweep();
        let mut stop = self.inner.shutdown.subscribe();
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                () = async { let _ = stop.wait_for(|s| *s).await; } => break,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                accepted = listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(a) => a,
                        Err(e) => {
                            tracing::warn!(error = %e, "accept failed; retrying");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            continue;
                        }
                    };
                    if let Some(slot) = front.admit(peer) {
                        tasks.spawn(front.clone().connection(stream, peer, slot));
                    }
                }
            }
        }
        front.drain(&mut tasks).await;
        Ok(())
    }
}

impl Server {
    /// The Streamable HTTP handler as a [`tower_service::Service`], to mount in an axum
    /// router or another hyper/tower stack (see [the module docs](self#mounting-in-axum-or-tower)
    /// for what the host must then provide):
    ///
    /// ```ignore
    /// let app = axum::Router::new()
    ///     .route("/health", axum::routing::get(|| async { "ok" }))
    ///     .nest_service("/api/mcp", server.http_service(HttpConfig::default()));
    /// ```
    ///
    /// The service is cheap to clone (its clones share one session table). Its idle-session
    /// sweep starts with its first request and ends when the server shuts down or the last
    /// clone is dropped.
    pub fn http_service(&self, config: HttpConfig) -> McpHttpService {
        McpHttpService {
            state: Arc::new(State::new(self.clone(), config, None)),
        }
    }
}

/// The Streamable HTTP handler as a [`tower_service::Service`] over any request body
/// (hyper's `Incoming`, axum's `Body`), from [`Server::http_service`]. Clones share one
/// session table. It is always ready and never fails: refusals are HTTP responses.
#[derive(Clone)]
pub struct McpHttpService {
    state: Arc<State>,
}

impl std::fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpService")
            .field("config", &self.state.config)
            .finish_non_exhaustive()
    }
}

impl McpHttpService {
    /// The paths at which the Protected Resource Metadata is served ([`HttpConfig::auth`];
    /// none without it): `/.well-known/oauth-protected-resource` followed by the resource
    /// URI's path (RFC 9728 §3.1), then the bare one. Route them to this service too, at
    /// the root of the host (e.g. with axum's `route_service`).
    pub fn metadata_paths(&self) -> Vec<String> {
        let Some(auth) = &self.state.config.auth else {
            return Vec::new();
        };
        let mut paths = Vec::new();
        let suffixed = format!("{}{}", auth::WELL_KNOWN, auth.resource_path());
        if suffixed != auth::WELL_KNOWN {
            paths.push(suffixed);
        }
        paths.push(auth::WELL_KNOWN.to_owned());
        paths
    }

    /// Bytes counted now against [`HttpConfig::memory_budget`] (request bodies being read,
    /// queued and kept frames), for metrics.
    pub fn memory_used(&self) -> usize {
        self.state.budget.used()
    }

    /// Handles one request (what [`Service::call`](tower_service::Service::call) runs).
    pub async fn handle<B>(&self, req: Request<B>) -> Response<ResponseBody>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.state.serve(req).await
    }
}

impl<B> tower_service::Service<Request<B>> for McpHttpService
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let state = self.state.clone();
        Box::pin(async move { Ok(state.serve(req).await) })
    }
}

impl State {
    /// One request, with [`HttpConfig::response_headers`] added to its response.
    async fn serve<B>(self: &Arc<Self>, req: Request<B>) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let ip = req.extensions().get::<PeerAddr>().map(|p| p.0.ip());
        self.serve_from(req, ip).await
    }

    /// [`serve`](Self::serve) for a request from `ip` (the accept loop knows its socket's
    /// peer: no [`PeerAddr`] extension, whose map costs allocations per request).
    async fn serve_from<B>(
        self: &Arc<Self>,
        req: Request<B>,
        ip: Option<std::net::IpAddr>,
    ) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.start_sweep();
        let response = if *self.server.inner.shutdown.borrow() {
            rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                -32603,
                "The server is shutting down",
            )
        } else {
            handle(self, req, ip).await
        };
        self.stamp(response)
    }
}

/// Whether `caller` may use the session `entry` (always, without authorization).
fn owned_by(entry: &Entry, caller: Option<&auth::Principal>) -> bool {
    match (&entry.owner, caller) {
        (None, _) => true,
        (Some(owner), Some(caller)) => owner.same_identity(caller),
        (Some(_), None) => false,
    }
}

/// One HTTP request, from `ip`.
async fn handle<B>(
    state: &Arc<State>,
    req: Request<B>,
    ip: Option<std::net::IpAddr>,
) -> Response<Body>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = req.into_parts();
    let target = parts.uri.authority().map(|a| a.as_str());
    if let Err(why) = headers::check_host(&parts.headers, target, &state.config.allowed_hosts) {
        return rpc_error(StatusCode::FORBIDDEN, None, -32600, &why);
    }
    let auth = state.config.auth.as_ref();
    let path = parts.uri.path();
    let endpoint = state.endpoint.as_deref();
    if state.config.server_card {
        if let Some(r) = card::respond(&state.server.inner.info, &parts, endpoint.unwrap_or("")) {
            return r;
        }
    }
    let legacy = state.config.legacy_sse.as_ref().and_then(|l| {
        if path == l.sse_path {
            Some(true)
        } else if path == l.messages_path {
            Some(false)
        } else {
            None
        }
    });
    let is_endpoint = legacy.is_some()
        || match endpoint {
            Some(endpoint) => path == endpoint,
            // Mounted: every path but the metadata's (when there is metadata).
            None => auth.is_none() || !path.starts_with(auth::WELL_KNOWN),
        };
    if !is_endpoint {
        let metadata = auth.and_then(|a| a.well_known(&parts.method, path, endpoint.unwrap_or("")));
        return metadata
            .unwrap_or_else(|| rpc_error(StatusCode::NOT_FOUND, None, -32600, "Not found"));
    }
    let principal = match auth {
        None => None,
        Some(auth) => match auth.authenticate(&parts.headers).await {
            Ok(p) => Some(p),
            Err(refused) => return refused,
        },
    };
    match (legacy, parts.method.clone()) {
        (Some(true), Method::GET) => return legacy::open(state, &parts, principal, ip).await,
        (Some(true), _) => return method_not_allowed("GET"),
        (Some(false), Method::POST) => return legacy::post(state, parts, body, principal).await,
        (Some(false), _) => return method_not_allowed("POST"),
        (None, _) => {}
    }
    match parts.method {
        Method::POST => post(state, parts, body, principal, ip).await,
        Method::GET => get(state, &parts, principal.as_deref()).await,
        Method::DELETE => delete(state, &parts, principal.as_deref()).await,
        _ => method_not_allowed("GET, POST, DELETE"),
    }
}

/// 405 with `Allow: allow` and a JSON-RPC error body.
fn method_not_allowed(allow: &'static str) -> Response<Body> {
    let mut r = rpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        None,
        -32600,
        "Method not allowed",
    );
    r.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    r
}

fn accepts(req_headers: &hyper::HeaderMap, what: &str) -> bool {
    let accept = req_headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("*/*");
    accept.contains(what) || accept.contains("*/*")
}

/// Free bytes of the memory budget a new stream needs ([`State::over_budget`]).
const STREAM_ROOM: usize = 16 << 10;

impl State {
    /// 503 when the memory budget has less than [`STREAM_ROOM`] bytes free (for requests
    /// that open a stream before anything is counted).
    fn over_budget(&self) -> Option<Response<Body>> {
        match self.budget.take(STREAM_ROOM) {
            Some(_) => None,
            None => Some(busy(None)),
        }
    }
}

/// 503: the memory budget is spent ([`HttpConfig::memory_budget`]).
fn busy(id: Option<&Value>) -> Response<Body> {
    rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        -32603,
        "The server's memory budget for buffered requests and responses is spent; retry later",
    )
}

/// The body of a POST: `application/json`, within [`HttpConfig::max_body`], arrived in
/// time, and within the memory budget (its bytes are counted while the returned permit
/// lives; 503 when they do not fit); or the refusal.
async fn read_body<B>(
    state: &Arc<State>,
    parts: &hyper::http::request::Parts,
    body: B,
) -> Result<(Bytes, budget::Permit), Response<Body>>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let is_json = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return Err(rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            -32600,
            "Content-Type must be application/json",
        ));
    }
    let too_large = || {
        rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            -32600,
            &format!(
                "Request body exceeds the limit of {} bytes",
                state.config.max_body
            ),
        )
    };
    let declared = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > state.config.max_body as u64) {
        return Err(too_large());
    }
    let Some(permit) = state.budget.take(0) else {
        return Err(busy(None));
    };
    let mut collect = std::pin::pin!(collect_within(body, state.config.max_body, permit));
    // A body that has arrived with its head (the usual small POST) is taken without
    // starting a timer (no clock read, no timer entry).
    let collected = match futures::poll!(collect.as_mut()) {
        Poll::Ready(done) => Ok(done),
        Poll::Pending => tokio::time::timeout(state.config.header_timeout, collect).await,
    };
    let body = match collected {
        Ok(Ok(b)) => b,
        Ok(Err(Unread::TooLarge)) => return Err(too_large()),
        Ok(Err(Unread::OverBudget)) => return Err(busy(None)),
        Ok(Err(Unread::Broken)) => {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                -32700,
                "Unreadable body",
            ))
        }
        Err(_) => {
            return Err(rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                None,
                -32600,
                "The request body did not arrive in time",
            ))
        }
    };
    Ok(body)
}

/// Why a body was not read.
enum Unread {
    TooLarge,
    OverBudget,
    Broken,
}

/// The body's bytes, at most `max` of them, each counted in `permit` as it arrives.
async fn collect_within<B>(
    body: B,
    max: usize,
    mut permit: budget::Permit,
) -> Result<(Bytes, budget::Permit), Unread>
where
    B: hyper::body::Body<Data = Bytes>,
{
    let mut body = std::pin::pin!(body);
    // The first chunk is kept as it came (the usual small body: one chunk, no copy and no
    // list); later ones are appended to a copy of it.
    let mut first: Option<Bytes> = None;
    let mut more: Vec<u8> = Vec::new();
    let mut len = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(|_| Unread::Broken)?.into_data() else {
            continue; // trailers
        };
        len = len.saturating_add(data.len());
        if len > max {
            return Err(Unread::TooLarge);
        }
        if !permit.grow(data.len()) {
            return Err(Unread::OverBudget);
        }
        match first.take() {
            None if more.is_empty() => first = Some(data),
            None => more.extend_from_slice(&data),
            Some(head) => {
                more.reserve_exact(len);
                more.extend_from_slice(&head);
                more.extend_from_slice(&data);
            }
        }
    }
    let bytes = match first {
        Some(only) => only,
        None => Bytes::from(more),
    };
    Ok((bytes, permit))
}

async fn post<B>(
    state: &Arc<State>,
    parts: hyper::http::request::Parts,
    body: B,
    principal: Option<Arc<auth::Principal>>,
    ip: Option<std::net::IpAddr>,
) -> Response<Body>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (body, _counted) = match read_body(state, &parts, body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    // The response mode, decided before the request runs (see `mode`).
    let streams = accepts(&parts.headers, "text/event-stream");
    let modern = headers::is_modern(&parts.headers);
    let version = headers::text(&parts.headers, "mcp-protocol-version");
    let known = version.is_none_or(|v| {
        mcp_rs_core::ProtocolVersion::ALL
            .iter()
            .any(|p| p.as_str() == v)
    });
    let session_id = headers::text(&parts.headers, "mcp-session-id").filter(|_| !modern);
    if !known && session_id.is_some() {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            -32600,
            &format!(
                "Unsupported MCP-Protocol-Version header {:?}",
                version.unwrap_or("")
            ),
        );
    }
    // Stateless: a 2026-07-28 request, or one naming a revision this server does not know
    // (the core answers it with -32022 and the versions it supports).
    let stateless = modern || (!known && session_id.is_none());
    let scoped = match (&state.config.auth, &principal) {
        (Some(auth), Some(principal)) if auth.has_tool_scopes() => Some((auth, principal)),
        _ => None,
    };
    // What is checked before the session sees the body is read once, as the session reads
    // it: its scanner, its depth bound, its method table. A body the session refuses (not
    // JSON, too deep, not JSON-RPC) is checked for nothing and answered by the session.
    let peeked = (modern || scoped.is_some()).then(|| {
        let limits = mcp_rs_core::wire::json::Limits {
            max_depth: state.server.inner.config.max_depth,
        };
        peek(&body, limits)
    });
    if let (Some((auth, principal)), Some(peeked)) = (scoped, &peeked) {
        // Per-tool scopes.
        if let Some(refused) = auth.check_calls(principal, peeked) {
            return refused;
        }
    }
    if let Some(peeked) = peeked.filter(|_| modern) {
        if let Err(why) = check_headers(state, &parts.headers, &peeked) {
            let id = request_id(&peeked);
            let status =
                StatusCode::from_u16(wire_headers::STATUS).unwrap_or(StatusCode::BAD_REQUEST);
            return rpc_error(status, id.as_ref(), wire_headers::CODE, &why);
        }
        if !streams && mode::needs_stream(&peeked) {
            let id = request_id(&peeked);
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                id.as_ref(),
                -32600,
                "subscriptions/listen is answered as a stream: Accept must list text/event-stream",
            );
        }
    }
    // For an answer the transport makes itself once the request ran.
    let sent = body.clone();
    let post = Post {
        body,
        principal: principal.clone(),
    };
    // A request without a session may create one: its slot is taken before it runs.
    let mut reservation = None;
    let (inbox, fresh, first) = match session_id {
        Some(id) => match state.session(id, principal.as_deref()) {
            // A session's requests name its revision (or none: 2025-03-26 clients send none).
            Some((_, negotiated)) if version.is_some_and(|v| v != negotiated.as_str()) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    -32600,
                    &format!(
                        "MCP-Protocol-Version header {:?} does not match the session's {}",
                        version.unwrap_or(""),
                        negotiated.as_str()
                    ),
                )
            }
            Some((tx, _)) => {
                let (sink, frames) = mpsc::channel(routes::SINK_FRAMES);
                let (told, outcome) = oneshot::channel();
                let to = Channel {
                    sink,
                    outcome: told,
                };
                if tx.send(Inbound::Post(post, to)).await.is_err() {
                    return rpc_error(StatusCode::NOT_FOUND, None, -32600, "Session not found");
                }
                let first = outcome.await.ok().map(|o| (o, Answer::Stream(frames)));
                (Some(tx), false, first)
            }
            None => return rpc_error(StatusCode::NOT_FOUND, None, -32600, "Session not found"),
        },
        None => {
            if !stateless {
                match state.reserve(Peer::of(ip, principal.as_deref())) {
                    Ok(r) => reservation = Some(r),
                    Err(why) => {
                        return rpc_error(StatusCode::SERVICE_UNAVAILABLE, None, -32603, why)
                    }
                }
            }
            let (inbox, first) = state.start_session(Some(post), stateless).await;
            (inbox, true, first)
        }
    };
    let Some((outcome, answer)) = first else {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            -32603,
            "The session ended while handling the request",
        );
    };
    let mut new_session = None;
    // A fresh legacy session is kept once `initialize` succeeded; any other inbox is dropped
    // here, and its session ends once it has answered.
    let kept = inbox.filter(|_| fresh && !stateless);
    if let (Some(negotiated), Some(tx), Some(slot)) = (outcome.version, kept, reservation) {
        let id = session_id_new();
        slot.keep(
            id.clone(),
            Entry {
                tx,
                // (Replaced by the reservation's peer.)
                peer: Peer::of(ip, None),
                last: Instant::now(),
                version: negotiated,
                owner: principal,
                stream: None,
            },
        );
        new_session = Some(id);
    }
    let mut response = match answer {
        _ if !outcome.answered && !outcome.open => empty(StatusCode::ACCEPTED),
        Answer::Stream(frames) if outcome.open && streams => {
            sse(frames, state.config.sse_keep_alive)
        }
        answer => {
            // Everything was answered at once (or the client takes JSON only: wait for the
            // answer, dropping what comes before it).
            let id = || {
                let limits = mcp_rs_core::wire::json::Limits {
                    max_depth: state.server.inner.config.max_depth,
                };
                request_id(&peek(&sent, limits))
            };
            // (What a stream client gets at once is bounded by its queue and the budget.)
            let cap = if streams {
                usize::MAX
            } else {
                state.config.max_json_answer
            };
            let gathered = match answer {
                Answer::Held(frames) => mode::gather_held(frames, streams, cap),
                Answer::Stream(mut frames) => mode::gather(&mut frames, streams, cap).await,
            };
            match gathered {
                mode::Gathered::OverBudget => busy(id().as_ref()),
                mode::Gathered::TooLarge => rpc_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    id().as_ref(),
                    -32603,
                    &format!(
                    "The answer exceeds the {} bytes gathered for an application/json response; \
                     accept text/event-stream to receive it as a stream",
                    state.config.max_json_answer
                ),
                ),
                mode::Gathered::Frames(mut all) => match all.len() {
                    0 => empty(StatusCode::ACCEPTED),
                    1 => {
                        let frame = all.pop().map(|e| e.data).unwrap_or_default();
                        let status =
                            status_for(&frame, stateless, fresh && outcome.version.is_none());
                        json(status, frame)
                    }
                    _ if streams => sse_of(all),
                    _ => json(
                        StatusCode::OK,
                        all.pop().map(|e| e.data).unwrap_or_default(),
                    ),
                },
            }
        }
    };
    if let Some(id) = new_session.and_then(|id| HeaderValue::from_str(&id).ok()) {
        response.headers_mut().insert("mcp-session-id", id);
    }
    response
}

async fn get(
    state: &Arc<State>,
    req: &hyper::http::request::Parts,
    principal: Option<&auth::Principal>,
) -> Response<Body> {
    let session = headers::text(&req.headers, "mcp-session-id");
    let Some(id) = session.filter(|_| !headers::is_modern(&req.headers)) else {
        let mut r = rpc_error(
            StatusCode::METHOD_NOT_ALLOWED,
            None,
            -32600,
            "GET needs an Mcp-Session-Id (2026-07-28 requests are POSTs)",
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return r;
    };
    if !accepts(&req.headers, "text/event-stream") {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            -32600,
            "GET streams are text/event-stream",
        );
    }
    if let Some(refused) = state.over_budget() {
        return refused;
    }
    let Some((inbox, _)) = state.session(id, principal) else {
        return rpc_error(StatusCode::NOT_FOUND, None, -32600, "Session not found");
    };
    let (sink, frames) = mpsc::channel(routes::SINK_FRAMES);
    if let Some(last) = headers::text(&req.headers, "last-event-id") {
        // Resumption of a response stream (or of nothing we still know: 404 is not right for
        // a live session, so the GET becomes the session stream instead).
        let (resumed, answer) = oneshot::channel();
        let resume = Inbound::Resume {
            last_event_id: last.to_owned(),
            sink: sink.clone(),
            resumed,
        };
        if inbox.send(resume).await.is_err() {
            return rpc_error(StatusCode::NOT_FOUND, None, -32600, "Session not found");
        }
        if answer.await.unwrap_or(false) {
            drop(sink);
            return sse(frames, state.config.sse_keep_alive);
        }
    }
    if inbox.send(Inbound::Listen(sink)).await.is_err() {
        return rpc_error(StatusCode::NOT_FOUND, None, -32600, "Session not found");
    }
    sse(frames, state.config.sse_keep_alive)
}

async fn delete(
    state: &Arc<State>,
    req: &hyper::http::request::Parts,
    principal: Option<&auth::Principal>,
) -> Response<Body> {
    let Some(id) = headers::text(&req.headers, "mcp-session-id") else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            -32600,
            "DELETE needs an Mcp-Session-Id",
        );
    };
    let removed = {
        let mut sessions = state.sessions();
        match sessions.live.get(id) {
            Some(entry) if entry.stream.is_none() && owned_by(entry, principal) => {
                sessions.remove(id)
            }
            _ => None,
        }
    };
    let Some(entry) = removed else {
        return rpc_error(StatusCode::NOT_FOUND, None, -32600, "Session not found");
    };
    let _ = entry.tx.send(Inbound::Close).await;
    empty(StatusCode::OK)
}

/// The HTTP status of a JSON reply. 2026-07-28 maps protocol errors to 4xx as the
/// transport specifies; legacy replies are 200 except the error to a first request that
/// did not start a session (no `initialize`, no session id): 400.
fn status_for(frame: &[u8], modern: bool, sessionless: bool) -> StatusCode {
    use mcp_rs_core::wire::jsonrpc::code as c;
    use mcp_rs_core::wire::jsonrpc::{frame_kind, FrameKind};
    let code = match frame_kind(frame) {
        FrameKind::Error(code) => Some(i64::from(code)),
        // Not a shape the core writes: read it (zero-copy; a result is scanned, never built).
        FrameKind::Other => {
            mcp_rs_core::wire::json::parse(frame, mcp_rs_core::wire::json::Limits::default())
                .ok()
                .and_then(|v| v.get("error")?.get("code")?.as_i64())
        }
        _ => None,
    };
    let bad_request = [
        c::PARSE_ERROR,
        c::INVALID_REQUEST,
        c::INVALID_PARAMS,
        c::HEADER_MISMATCH,
        c::MISSING_REQUIRED_CLIENT_CAPABILITY,
        c::UNSUPPORTED_PROTOCOL_VERSION,
    ];
    match code.and_then(|n| i32::try_from(n).ok()) {
        None => StatusCode::OK,
        Some(c::METHOD_NOT_FOUND) if modern => StatusCode::NOT_FOUND,
        Some(code) if modern && bad_request.contains(&code) => StatusCode::BAD_REQUEST,
        Some(_) if sessionless && !modern => StatusCode::BAD_REQUEST,
        Some(_) => StatusCode::OK,
    }
}

fn session_id_new() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        panic!("mcp-tokio: the operating system provided no randomness for a session id");
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::new()).boxed_unsync());
    *r.status_mut() = status;
    r
}

fn json(status: StatusCode, frame: Bytes) -> Response<Body> {
    let mut r = Response::new(Full::new(frame).boxed_unsync());
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// A 2026-07-28 request's headers against its body, decided by mcp-core
/// ([`mcp_rs_core::wire::headers`], shared with mcp-embedded): `Mcp-Method`,
/// `MCP-Protocol-Version` and `Mcp-Name`, then the `Mcp-Param-*` headers of the called tool's
/// `x-mcp-header` arguments. `Err` is the reply's message.
fn check_headers(state: &State, map: &hyper::HeaderMap, peeked: &Peek<'_>) -> Result<(), String> {
    let sent = headers::Hyper(map);
    wire_headers::check_request(&sent, peeked).map_err(|r| r.to_string())?;
    let Some(tool) = wire_headers::called_tool(peeked) else {
        return Ok(());
    };
    let entry = match tool.as_borrowed() {
        Some(name) => state.server.tools().entry(name),
        None => state.server.tools().entry(&tool.to_string()),
    };
    let Some(entry) = entry else {
        return Ok(());
    };
    let limits = mcp_rs_core::wire::json::Limits {
        max_depth: state.server.inner.config.max_depth,
    };
    wire_headers::check_params_text(&sent, peeked, entry.input_schema(), limits)
        .map_err(|r| r.to_string())
}

/// The id of a request, for a refusal the transport makes itself (`None` for anything but
/// a request).
fn request_id(body: &Peek<'_>) -> Option<Value> {
    match body {
        Peek::Request(r) => {
            r.id.and_then(|id| serde_json::from_str::<Value>(id.as_raw()).ok())
        }
        _ => None,
    }
}

/// A JSON-RPC error reply with an HTTP status (for refusals the transport makes itself).
/// Without a request id the member is left out, as the core does (the MCP schemas have no
/// `null` request id).
fn rpc_error(status: StatusCode, id: Option<&Value>, code: i32, message: &str) -> Response<Body> {
    let mut body = serde_json::json!({
        "jsonrpc": "2.0",
        "error": {"code": code, "message": message},
    });
    if let Some(id) = id {
        body["id"] = id.clone();
    }
    json(status, Bytes::from(body.to_string()))
}

/// Client reconnection delay announced in priming events (SSE `retry`, milliseconds).
const RETRY_MS: u32 = 500;

fn sse_event(e: &Event) -> Option<Bytes> {
    if e.stream == routes::OVER_BUDGET {
        return None; // the stream ends after it
    }
    let mut event = Vec::with_capacity(e.data.len() + 48);
    if e.stream == u64::MAX {
        // The session stream: not resumable, no id.
        event.extend_from_slice(b"event: message\ndata: ");
    } else if e.data.is_empty() {
        // Priming: an id to resume from, and how soon to reconnect.
        event
            .extend_from_slice(format!("id: {}-0\nretry: {RETRY_MS}\ndata: ", e.stream).as_bytes());
    } else {
        event.extend_from_slice(
            format!("event: message\nid: {}-{}\ndata: ", e.stream, e.seq).as_bytes(),
        );
    }
    event.extend_from_slice(&e.data);
    event.extend_from_slice(b"\n\n");
    Some(Bytes::from(event))
}

fn sse_response(body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// The SSE comment sent on a quiet stream ([`HttpConfig::sse_keep_alive`]).
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// An SSE response streaming events until the session closes the channel, with a
/// [`KEEP_ALIVE`] comment whenever it has been quiet for `keep_alive`.
fn sse(events: mpsc::Receiver<Event>, keep_alive: Option<Duration>) -> Response<Body> {
    sse_stream(events, keep_alive, sse_event, ())
}

/// [`sse`] with each event written by `render` (`None`: skipped), and `guard` dropped when
/// the response body is (its client went away, or the stream ended).
fn sse_stream<G: Send + Sync + 'static>(
    events: mpsc::Receiver<Event>,
    keep_alive: Option<Duration>,
    render: impl Fn(&Event) -> Option<Bytes> + Send + Sync + Copy + 'static,
    guard: G,
) -> Response<Body> {
    let quiet = keep_alive.map(|every| Box::pin(tokio::time::sleep(every)));
    let stream = futures::stream::unfold(
        (events, quiet, guard),
        move |(mut events, mut quiet, guard)| async move {
            let data = loop {
                let data = match quiet.as_mut() {
                    None => render(&events.recv().await?),
                    Some(timer) => tokio::select! {
                        e = events.recv() => render(&e?),
                        () = timer.as_mut() => Some(Bytes::from_static(KEEP_ALIVE)),
                    },
                };
                if let Some(data) = data {
                    break data;
                }
            };
            if let (Some(timer), Some(every)) = (quiet.as_mut(), keep_alive) {
                timer.as_mut().reset(tokio::time::Instant::now() + every);
            }
            Some((
                Ok::<_, Infallible>(Frame::data(data)),
                (events, quiet, guard),
            ))
        },
    );
    sse_response(StreamBody::new(stream).boxed_unsync())
}

/// An SSE response of events already collected.
fn sse_of(events: Vec<Event>) -> Response<Body> {
    let frames: Vec<Result<Frame<Bytes>, Infallible>> = events
        .iter()
        .filter_map(|e| Some(Ok(Frame::data(sse_event(e)?))))
        .collect();
    sse_response(StreamBody::new(futures::stream::iter(frames)).boxed_unsync())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sessions being created count against both limits, so concurrent `initialize`s
    /// cannot overfill the table between the check and the insert; a slot given back is
    /// available again; IPv6 peers are their /64, IPv4-mapped ones their IPv4 address.
    #[tokio::test]
    async fn pending_sessions_count_against_the_limits() {
        let state = State::new(
            Server::new(crate::ServerInfo::default(), crate::Tools::new()),
            HttpConfig {
                max_sessions: 4,
                max_sessions_per_peer: 2,
                ..HttpConfig::default()
            },
            None,
        );
        let ip = |s: &str| Peer::of(Some(s.parse().expect("an address")), None);
        let (a, b, c) = (ip("127.0.0.1"), ip("127.0.0.2"), ip("127.0.0.3"));
        let status = |r: Result<Reservation<'_>, &str>| match r {
            Ok(_) => StatusCode::OK,
            Err(_) => StatusCode::SERVICE_UNAVAILABLE,
        };
        let a1 = state.reserve(a.clone()).ok();
        let a2 = state.reserve(a.clone()).ok();
        assert!(a1.is_some() && a2.is_some());
        assert_eq!(
            status(state.reserve(a.clone())),
            StatusCode::SERVICE_UNAVAILABLE
        );
        let b1 = state.reserve(b.clone()).ok();
        let b2 = state.reserve(b.clone()).ok();
        assert!(b1.is_some() && b2.is_some());
        assert_eq!(
            status(state.reserve(c.clone())),
            StatusCode::SERVICE_UNAVAILABLE
        );
        drop(a1);
        let a3 = state.reserve(a.clone()).ok();
        assert!(a3.is_some());
        drop((a2, a3, b1, b2));
        let table = state.sessions();
        assert_eq!((table.pending, table.per_peer.len()), (0, 0));
        drop(table);
        assert_eq!(ip("2001:db8::1"), ip("2001:db8::ffff:2"));
        assert_ne!(ip("2001:db8::1"), ip("2001:db8:0:1::1"));
        assert_eq!(ip("::ffff:127.0.0.1"), a);
    }

    /// The full parse, for comparison with the fast read.
    fn parsed_code(frame: &[u8]) -> Option<i64> {
        mcp_rs_core::wire::json::parse(frame, mcp_rs_core::wire::json::Limits::default())
            .ok()
            .and_then(|v| v.get("error")?.get("code")?.as_i64())
    }

    #[test]
    fn statuses_follow_the_cores_frame_kinds() {
        use mcp_rs_core::wire::jsonrpc::{frame_kind, FrameKind};
        let cases: &[&[u8]] = &[
            br#"{"jsonrpc":"2.0","id":1,"result":{"isError":true,"error":{"code":5}}}"#,
            br#"{"jsonrpc":"2.0","id":"a\",\"result\":","error":{"code":-32602,"message":"x"}}"#,
            br#"{"jsonrpc":"2.0","id":"\\","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":-7,"error":{"code":-32601,"message":"Method not found"}}"#,
            br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#,
        ];
        for frame in cases {
            let fast = match frame_kind(frame) {
                FrameKind::Error(code) => Some(i64::from(code)),
                FrameKind::Result => None,
                other => panic!("{other:?}: {}", String::from_utf8_lossy(frame)),
            };
            assert_eq!(
                fast,
                parsed_code(frame),
                "{}",
                String::from_utf8_lossy(frame)
            );
        }
        let odd = br#"{"id":1,"jsonrpc":"2.0","error":{"code":-32602,"message":"x"}}"#;
        assert_eq!(
            status_for(odd, true, false),
            StatusCode::BAD_REQUEST,
            "a shape the fast read does not know is still classified"
        );
        assert_eq!(status_for(cases[3], true, false), StatusCode::NOT_FOUND);
        assert_eq!(status_for(cases[0], true, false), StatusCode::OK);
    }
}
