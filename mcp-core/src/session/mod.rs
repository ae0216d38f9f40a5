//! The server session: one connection's state machine for both protocol eras.
//!
//! Split by concept: [`dispatch`](self) (admission and routing through the method table),
//! lifecycle (`initialize`, `ping`, `server/discover`, `logging/setLevel`), lists (one
//! engine for every paginated list), tools, resources, prompts, completion, listen
//! (`subscriptions/listen`), calls (deferred requests: completion, progress, logs) and
//! faults (error replies).

mod calls;
#[cfg(feature = "completion")]
mod completion;
mod dispatch;
pub mod error;
mod faults;
pub mod inflight;
mod lifecycle;
#[cfg(feature = "listen")]
mod listen;
mod lists;
#[cfg(feature = "requests")]
mod outgoing;
mod progress;
#[cfg(feature = "prompts")]
mod prompts;
#[cfg(feature = "resources")]
mod resources;
mod rounds;
#[cfg(feature = "skills")]
mod skills;
#[cfg(all(feature = "listen", feature = "tasks"))]
mod task_status;
#[cfg(feature = "tasks")]
mod tasks;
mod tools;

use crate::model::common::ClientCaps;
use crate::model::handler::{ServerHandler, ToolsOnly};
use crate::model::logging::LogLevel;
use crate::model::tools::ToolSet;
use crate::session::error::HandleError;
use crate::session::inflight::{CallSlot, SlotState};
use crate::token::cursor::ListKind;
use crate::token::mac::SecretKey;
use crate::wire::json::{self, JsonWriter};
use crate::wire::version::ProtocolVersion;

use crate::model::common::{AdapterData, CacheScope, ServerInfo};
pub use calls::{Call, Request};
#[cfg(feature = "listen")]
pub use listen::uri_hash;
#[cfg(feature = "requests")]
pub use outgoing::{ClientMethod, ClientOutcome, ClientResponse};
pub use progress::ProgressValue;

use faults::{Detail, Fault};

/// The smallest output buffer `handle_message` accepts: room for any error reply the core
/// writes on its own.
pub const MIN_OUTPUT: usize = 512;

/// Most resource URIs one 2026-07-28 `subscriptions/listen` stream keeps from its
/// `resourceSubscriptions` (feature `listen` with `resources`); the rest are left out of its
/// acknowledgement. Each is a 64-bit hash in the stream's call slot, and every call slot
/// pays for the room (a slot holds a deferred call or a stream): 4 entries are 32 bytes a
/// slot, enough for the handful of sensors a device watches; a client that needs more
/// opens another stream. See the `session::listen` docs for the wire format.
pub const MAX_RESOURCE_SUBSCRIPTIONS: usize = 4;

/// Most tasks one 2026-07-28 `subscriptions/listen` stream keeps from its `taskIds`
/// (features `listen` and `tasks`); the rest are left out of its acknowledgement. Each is
/// the task id's 16 bytes and a 64-bit fingerprint of what the stream was last sent, in the
/// stream's call slot, and every call slot pays for the room: 4 entries are 96 bytes a
/// slot, a task or a few a client waits on; a client that needs more opens another stream.
/// See the `session::task_status` docs for the wire format.
pub const MAX_TASK_SUBSCRIPTIONS: usize = 4;

/// Longest method name, version or level the session decodes when it has escapes.
const SHORT: usize = 64;

/// Bounds and policies of a session. Every bound yields a reply when exceeded.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Maximum JSON nesting depth of an incoming message (default 32, at most 128);
    /// deeper messages get -32700.
    pub max_depth: u8,
    /// Items per list page (tools, prompts, resources, templates; default 50, at least 1).
    /// A page also ends early when the next item would not fit the output buffer. Ignored
    /// without the `pagination` feature: every list is then one page.
    pub page_size: u16,
    /// Most elements in one JSON-RPC batch (2025-03-26 only; default 16); larger batches get
    /// one -32600.
    pub max_batch: u16,
    /// `ttlMs` of cacheable results (2026-07-28).
    pub list_ttl_ms: u32,
    /// `cacheScope` of cacheable results (2026-07-28).
    pub cache_scope: CacheScope,
    /// Declare `listChanged` for every list and send `notifications/*/list_changed`.
    pub list_changed: bool,
    /// Session log level before the client sends `logging/setLevel` (legacy era).
    pub log_level: LogLevel,
    /// The server's secret: authenticates list cursors and seals 2026-07-28
    /// `requestState`. Draw it from an entropy source (every instance that must accept
    /// another's cursors and state shares it); there is no default. Everything new is
    /// signed with this key.
    pub key: SecretKey,
    /// A key rotation's grace period (feature `rotation`; default `None`): cursors and
    /// `requestState` signed with this previous key are still accepted until its
    /// `not_after_ms` on the session clock (the `now_ms` given to
    /// [`Session::handle`]), never minted. Nothing needs to change when the period ends: the
    /// key stops verifying by itself. A key listed here before any instance signs with it
    /// also lets a rolling change of the current key go without a window of refusals (see
    /// docs/cluster.md, "Running several instances").
    #[cfg(feature = "rotation")]
    pub previous_key: Option<crate::token::mac::PreviousKey>,
    /// How long a sealed `requestState` stays valid (default 10 minutes).
    pub state_ttl_ms: u64,
}

impl Config {
    /// The default bounds with the given secret key.
    pub const fn new(key: SecretKey) -> Self {
        Config {
            max_depth: json::DEFAULT_MAX_DEPTH,
            page_size: 50,
            max_batch: 16,
            list_ttl_ms: 0,
            cache_scope: CacheScope::Public,
            list_changed: true,
            log_level: LogLevel::Info,
            key,
            #[cfg(feature = "rotation")]
            previous_key: None,
            state_ttl_ms: 10 * 60 * 1000,
        }
    }

    /// The keys a cursor or `requestState` presented at `now_ms` is checked against: the
    /// current [`key`](Self::key), then (feature `rotation`) the
    /// `previous_key` while it is accepted.
    pub fn verification_keys(&self, now_ms: u64) -> impl Iterator<Item = &SecretKey> + '_ {
        #[cfg(feature = "rotation")]
        {
            let previous = self.previous_key.as_ref();
            let previous = previous.filter(move |p| p.accepts_at(now_ms));
            core::iter::once(&self.key).chain(previous.map(|p| &p.key))
        }
        #[cfg(not(feature = "rotation"))]
        {
            let _ = now_ms;
            core::iter::once(&self.key)
        }
    }
}

/// Where a session's call slots live: a caller-owned slice, or (feature `alloc`) a vector
/// that grows on demand up to a maximum. Either way the session sees a slice.
#[derive(Debug)]
enum Slots<'a> {
    Borrowed(&'a mut [CallSlot]),
    #[cfg(feature = "alloc")]
    Growing {
        slots: alloc::vec::Vec<CallSlot>,
        /// (Read only where calls can be deferred.)
        #[cfg_attr(not(any(feature = "deferred", feature = "listen")), allow(dead_code))]
        max: usize,
    },
}

impl Slots<'_> {
    /// How many calls can be in flight at once (reported with "Too many calls in flight").
    #[cfg(any(feature = "deferred", feature = "listen"))]
    fn limit(&self) -> usize {
        match self {
            Slots::Borrowed(s) => s.len(),
            #[cfg(feature = "alloc")]
            Slots::Growing { max, .. } => *max,
        }
    }

    /// Adds free slots if the storage can grow; returns the index of the first new one.
    #[cfg(any(feature = "deferred", feature = "listen"))]
    fn grow(&mut self) -> Option<usize> {
        match self {
            Slots::Borrowed(_) => None,
            #[cfg(feature = "alloc")]
            Slots::Growing { slots, max } => {
                let had = slots.len();
                let want = had.saturating_mul(2).clamp(4, *max);
                if want <= had {
                    return None;
                }
                slots.resize(want, CallSlot::EMPTY);
                Some(had)
            }
        }
    }
}

impl core::ops::Deref for Slots<'_> {
    type Target = [CallSlot];
    fn deref(&self) -> &[CallSlot] {
        match self {
            Slots::Borrowed(s) => s,
            #[cfg(feature = "alloc")]
            Slots::Growing { slots, .. } => slots,
        }
    }
}

impl core::ops::DerefMut for Slots<'_> {
    fn deref_mut(&mut self) -> &mut [CallSlot] {
        match self {
            Slots::Borrowed(s) => s,
            #[cfg(feature = "alloc")]
            Slots::Growing { slots, .. } => slots,
        }
    }
}

/// Caller-owned memory of a session: `CALLS` deferred calls can be in flight at once.
#[derive(Debug)]
pub struct SessionStorage<const CALLS: usize> {
    slots: [CallSlot; CALLS],
}

impl<const CALLS: usize> SessionStorage<CALLS> {
    /// Empty storage (usable in a `static`). Its bytes are all zero, so a `static` of it
    /// takes RAM only (`.bss`), no flash: [`Session::new`] sets the slots up.
    pub const fn new() -> Self {
        SessionStorage {
            slots: [CallSlot::BLANK; CALLS],
        }
    }
}

impl<const CALLS: usize> Default for SessionStorage<CALLS> {
    fn default() -> Self {
        Self::new()
    }
}

/// Where a frame belongs (for transports that multiplex, such as HTTP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// The reply to the message just handled.
    Reply,
    /// Output of a deferred call (its response, progress or logs).
    Call(crate::CallToken),
    /// Session-wide output (list changes, session logs, replies to abandoned calls).
    Session,
}

/// A frame written into the caller's buffer: `out[..len]`, without a trailing newline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct Transmit {
    /// Bytes written.
    pub len: usize,
    /// Where it belongs.
    pub route: Route,
}

impl Transmit {
    /// What the frame is (a result, an error and its code, a notification, a request),
    /// read from the first bytes of `out`, the buffer it was written to: how a transport
    /// maps a reply to its own status without parsing it.
    pub fn kind(&self, out: &[u8]) -> crate::wire::jsonrpc::FrameKind {
        crate::wire::jsonrpc::frame_kind(out.get(..self.len).unwrap_or_default())
    }
}

/// Something the application may want to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The client sent `notifications/initialized` (legacy era).
    Initialized(ProtocolVersion),
    /// The client cancelled a deferred call; its slot is already free and `complete` on
    /// the token returns `Ok(None)`.
    Cancelled(crate::CallToken),
    /// The client changed the session log level (`logging/setLevel`).
    LogLevel(LogLevel),
    /// The client's roots changed (`notifications/roots/list_changed`, legacy era).
    RootsChanged,
    /// A call's server-to-client request got no response in time; the client was sent
    /// `notifications/cancelled` for it.
    RequestTimedOut(crate::CallToken),
}

/// The outcome of [`Session::handle_message`]: an optional reply already in the output
/// buffer, plus deferred calls to take with [`next_call`](Self::next_call).
#[derive(Debug)]
#[must_use]
pub struct Incoming<'i> {
    msg: &'i str,
    /// What the adapter attached (see [`Session::handle_with`]).
    data: Option<AdapterData<'i>>,
    transmit: Option<Transmit>,
    deferred: usize,
    /// Client responses waiting to be taken with `next_response`.
    #[cfg_attr(not(feature = "requests"), allow(dead_code))]
    responses: usize,
    #[cfg_attr(not(all(feature = "batch", feature = "listen")), allow(dead_code))]
    in_batch: bool,
    /// Inside a batch: bytes needed by a reply that had to drop its id (0: none did).
    #[cfg_attr(not(feature = "batch"), allow(dead_code))]
    batch_required: usize,
    subscription: Option<crate::CallToken>,
}

impl<'i> Incoming<'i> {
    #[inline]
    fn note_lost_id(&mut self, lost: Option<usize>) {
        #[cfg(feature = "batch")]
        if let (true, Some(needed)) = (self.in_batch, lost) {
            self.batch_required = self.batch_required.max(needed);
        }
        #[cfg(not(feature = "batch"))]
        let _ = lost;
    }

    /// The reply written into the output buffer, if the message needed one now.
    pub fn transmit(&self) -> Option<Transmit> {
        self.transmit
    }
    /// The `subscriptions/listen` stream this message opened (2026-07-28), if any: its
    /// acknowledgement is the transmit, and later list changes (from `poll_transmit`) and
    /// resource updates (from [`Session::resource_updated_next`]) are routed to this token
    /// until it is cancelled or closed with [`Session::close_subscription`].
    pub fn subscription(&self) -> Option<crate::CallToken> {
        self.subscription
    }
    /// How many deferred calls are waiting to be taken.
    pub fn pending_calls(&self) -> usize {
        self.deferred
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No `initialize` yet.
    Fresh,
    /// `initialize` answered; waiting for `notifications/initialized`.
    Initializing(ProtocolVersion),
    /// Legacy session established.
    Ready(ProtocolVersion),
}

/// Per-request context: which revision and what the client declared.
#[derive(Clone, Copy, Debug)]
struct Ctx<'i> {
    /// What the adapter attached to the message (see [`Session::handle_with`]).
    data: Option<AdapterData<'i>>,
    version: ProtocolVersion,
    caps: ClientCaps,
    #[cfg_attr(not(feature = "deferred"), allow(dead_code))]
    log_level: Option<LogLevel>,
}

type Reply<'i> = Result<(), Fault<'i>>;

/// Bit of a list kind in the per-list flag bytes.
const fn list_bit(kind: ListKind) -> u8 {
    match kind {
        ListKind::Tools => 1,
        ListKind::Prompts => 2,
        ListKind::Resources => 4,
        _ => 8,
    }
}

/// One MCP server session (a stdio process, a socket connection, a UART link).
///
/// Methods come in three groups, as in quinn: `handle_*` feed input, `poll_*` drain output
/// and events, and commands (`complete`, `progress`, `log`, `tools_changed`) act on calls.
/// **After every `handle_*` or command, drain [`poll_transmit`](Self::poll_transmit)
/// and [`poll_event`](Self::poll_event).** The session never reads a clock (time is passed
/// in as milliseconds), never blocks and never allocates; the caller owns all memory.
#[derive(Debug)]
pub struct Session<'a> {
    info: &'a ServerInfo<'a>,
    config: Config,
    slots: Slots<'a>,
    phase: Phase,
    client_caps: ClientCaps,
    log_level: LogLevel,
    /// Epoch of each list kind (index: `list_bit` position); bumped when it changes.
    epochs: [u32; 4],
    /// Legacy `list_changed` notifications owed (bits of `list_bit`).
    list_changed_pending: u8,
    initialized_event: Option<ProtocolVersion>,
    level_event: bool,
    roots_event: bool,
    /// Slots not `Free`, and cancellations not yet reported: when both are zero (the
    /// steady state with synchronous tools) no per-message slot scan runs.
    occupied: usize,
    unreported_cancels: usize,
    /// The latest time passed in (milliseconds; see [`Session::handle`]).
    now_ms: u64,
    /// The id of the next server-to-client request (never 0).
    #[cfg_attr(not(feature = "requests"), allow(dead_code))]
    next_out_id: u32,
}

impl<'a> Session<'a> {
    /// A new session over caller-owned storage.
    pub fn new<const CALLS: usize>(
        info: &'a ServerInfo<'a>,
        config: Config,
        storage: &'a mut SessionStorage<CALLS>,
    ) -> Self {
        Self::from_slots(info, config, &mut storage.slots)
    }

    /// A new session over a caller-owned slice of call slots (for capacities chosen at run
    /// time, e.g. `vec![CallSlot::EMPTY; n]` with `alloc`). `slots.len()` calls can be in
    /// flight at once.
    pub fn from_slots(info: &'a ServerInfo<'a>, config: Config, slots: &'a mut [CallSlot]) -> Self {
        for slot in slots.iter_mut() {
            slot.reset();
        }
        Self::over(info, config, Slots::Borrowed(slots))
    }

    /// Starts over as a new session over the same call slots, server description and
    /// configuration, as if just created: calls in flight, subscriptions and queued frames
    /// are forgotten. How a transport with a fixed table of sessions (mcp-embedded's HTTP
    /// server) reuses an entry whose session ended, without giving its slots back.
    pub fn reset(&mut self) {
        let slots = match core::mem::replace(&mut self.slots, Slots::Borrowed(&mut [])) {
            Slots::Borrowed(slots) => {
                for slot in slots.iter_mut() {
                    slot.reset();
                }
                Slots::Borrowed(slots)
            }
            #[cfg(feature = "alloc")]
            Slots::Growing { mut slots, max } => {
                slots.clear();
                Slots::Growing { slots, max }
            }
        };
        *self = Self::over(self.info, self.config, slots);
    }

    /// A new session whose call slots are allocated on demand (feature `alloc`): none
    /// while every call is answered synchronously, then doubling up to `max_calls` (at
    /// most 65,535) as deferred calls and subscriptions are in flight at once. An adapter
    /// with many mostly idle connections pays for the concurrency each one actually used,
    /// not for its limit. Slots are not given back while the session lives (a call token
    /// names its slot).
    #[cfg(feature = "alloc")]
    pub fn with_growing_slots(info: &'a ServerInfo<'a>, config: Config, max_calls: usize) -> Self {
        Self::over(
            info,
            config,
            Slots::Growing {
                slots: alloc::vec::Vec::new(),
                max: max_calls.min(usize::from(u16::MAX)),
            },
        )
    }

    fn over(info: &'a ServerInfo<'a>, config: Config, slots: Slots<'a>) -> Self {
        Session {
            info,
            config,
            slots,
            phase: Phase::Fresh,
            client_caps: ClientCaps::NONE,
            log_level: config.log_level,
            epochs: [0; 4],
            list_changed_pending: 0,
            initialized_event: None,
            level_event: false,
            roots_event: false,
            occupied: 0,
            unreported_cancels: 0,
            now_ms: 0,
            next_out_id: 1,
        }
    }

    /// The legacy revision negotiated by `initialize`, if any.
    pub fn negotiated_version(&self) -> Option<ProtocolVersion> {
        match self.phase {
            Phase::Fresh => None,
            Phase::Initializing(v) | Phase::Ready(v) => Some(v),
        }
    }

    /// The client capabilities declared in `initialize` (legacy era).
    pub fn client_capabilities(&self) -> ClientCaps {
        self.client_caps
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Calls currently in flight (handed out, not yet completed).
    pub fn calls_in_flight(&self) -> usize {
        debug_assert_eq!(
            self.occupied,
            self.slots
                .iter()
                .filter(|s| s.state != SlotState::Free)
                .count()
        );
        self.occupied
    }

    /// Handles one complete JSON-RPC message for a server that offers only tools (kept for
    /// tools-only servers; see [`handle`](Self::handle) for every capability). Time is the
    /// latest passed to [`handle`](Self::handle) or [`handle_timeout`](Self::handle_timeout).
    pub fn handle_message<'i, T: ToolSet + ?Sized>(
        &mut self,
        tools: &mut T,
        msg: &'i [u8],
        out: &mut [u8],
    ) -> Result<Incoming<'i>, HandleError> {
        let now = self.now_ms;
        self.handle(&mut ToolsOnly(tools), now, msg, out)
    }

    /// Handles one complete JSON-RPC message (a line without its newline, an HTTP body) at
    /// time `now_ms` (milliseconds on a clock that never goes backwards; UNIX time when
    /// several instances share the [`Config::key`], since sealed `requestState` carries an
    /// expiry).
    ///
    /// The reply, if one is due now, is written to `out` and described by
    /// [`Incoming::transmit`]; deferred requests are taken with [`Incoming::next_call`].
    /// Malformed input of any kind becomes a JSON-RPC error reply, never an `Err`.
    pub fn handle<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        now_ms: u64,
        msg: &'i [u8],
        out: &mut [u8],
    ) -> Result<Incoming<'i>, HandleError> {
        self.handle_with(server, now_ms, msg, None, out)
    }

    /// [`handle`](Self::handle), with data the adapter attaches to this message (the
    /// authenticated principal of an HTTP request, a connection's identity): every request
    /// view the message produces, inline or deferred, hands it back through
    /// `adapter_data` ([`CallRequest::adapter_data`](crate::CallRequest::adapter_data), and
    /// the same on prompt, read and completion requests and on [`Call`]). The core never
    /// looks at it.
    pub fn handle_with<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        now_ms: u64,
        msg: &'i [u8],
        data: Option<AdapterData<'i>>,
        out: &mut [u8],
    ) -> Result<Incoming<'i>, HandleError> {
        if out.len() < MIN_OUTPUT {
            return Err(HandleError::OutputTooSmall {
                required: MIN_OUTPUT,
            });
        }
        self.handle_timeout(now_ms);
        self.abandon_fresh();
        let mut w = JsonWriter::new(out);
        let text = core::str::from_utf8(msg).unwrap_or("");
        let mut incoming = Incoming {
            msg: text,
            data,
            transmit: None,
            deferred: 0,
            responses: 0,
            in_batch: false,
            batch_required: 0,
            subscription: None,
        };
        self.dispatch(server, msg, text, &mut w, &mut incoming);
        if !w.is_empty() {
            incoming.transmit = Some(Transmit {
                len: w.len(),
                route: Route::Reply,
            });
        }
        Ok(incoming)
    }

    /// Advances the session clock (milliseconds; see [`handle`](Self::handle)): requests
    /// to the client whose deadline passed are cancelled (drain `poll_transmit` and
    /// `poll_event`).
    pub fn handle_timeout(&mut self, now_ms: u64) {
        self.now_ms = self.now_ms.max(now_ms);
        #[cfg(feature = "requests")]
        self.expire(self.now_ms);
    }

    /// When to call [`handle_timeout`](Self::handle_timeout) next (on the session clock,
    /// milliseconds), or `None` when nothing waits on time: today the deadline of the
    /// earliest outstanding request to the client (feature `requests`). Read it after
    /// draining, as the last step of every turn of the drive loop.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        #[cfg(feature = "requests")]
        {
            self.outgoing_deadline()
        }
        #[cfg(not(feature = "requests"))]
        {
            None
        }
    }

    /// Handles a line the framer reported as oversized: answers once with -32600 and the
    /// limit (the id cannot be known).
    pub fn handle_oversized(
        &mut self,
        limit: usize,
        out: &mut [u8],
    ) -> Result<Transmit, HandleError> {
        if out.len() < MIN_OUTPUT {
            return Err(HandleError::OutputTooSmall {
                required: MIN_OUTPUT,
            });
        }
        let mut w = JsonWriter::new(out);
        let f = Fault::new(
            crate::wire::jsonrpc::code::INVALID_REQUEST,
            "Message exceeds the maximum frame length",
        )
        .with(Detail::Limit(limit));
        faults::write_fault(&mut w, None, &f);
        Ok(Transmit {
            len: w.len(),
            route: Route::Reply,
        })
    }

    fn abandon_fresh(&mut self) {
        if self.occupied == 0 {
            return;
        }
        for slot in self
            .slots
            .iter_mut()
            .filter(|s| s.state == SlotState::Fresh)
        {
            slot.state = SlotState::Abandoned;
        }
    }

    /// Takes the next event, if any.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(v) = self.initialized_event.take() {
            return Some(Event::Initialized(v));
        }
        if core::mem::take(&mut self.level_event) {
            return Some(Event::LogLevel(self.log_level));
        }
        if core::mem::take(&mut self.roots_event) {
            return Some(Event::RootsChanged);
        }
        #[cfg(feature = "requests")]
        if let Some(token) = self.poll_request_timeout() {
            return Some(Event::RequestTimedOut(token));
        }
        if self.unreported_cancels == 0 {
            return None;
        }
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if slot.cancel_unreported {
                slot.cancel_unreported = false;
                self.unreported_cancels = self.unreported_cancels.saturating_sub(1);
                let generation = slot.cancelled_generation.unwrap_or(0);
                let slot = u16::try_from(i).unwrap_or(u16::MAX);
                return Some(Event::Cancelled(crate::CallToken { slot, generation }));
            }
        }
        None
    }

    /// Writes the next core-originated frame (a list change notification, or the error
    /// reply to a call the application never took) into `out`.
    #[must_use = "a transmit holds a frame to send"]
    pub fn poll_transmit(
        &mut self,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, json::BufferTooSmall> {
        if let Some(slot) = self
            .slots
            .iter_mut()
            .take(if self.occupied == 0 { 0 } else { usize::MAX })
            .find(|s| s.state == SlotState::Abandoned)
        {
            let mut w = JsonWriter::new(out);
            let f = Fault::new(
                crate::wire::jsonrpc::code::INTERNAL_ERROR,
                "Call was not dispatched by the server application",
            );
            let id = slot.id;
            faults::write_fault(&mut w, Some(id.as_raw()), &f);
            let len = w.finish()?;
            slot.free();
            self.occupied = self.occupied.saturating_sub(1);
            return Ok(Some(Transmit {
                len,
                route: Route::Session,
            }));
        }
        #[cfg(feature = "requests")]
        if let Some(tx) = self.poll_request_cancel(out)? {
            return Ok(Some(tx));
        }
        #[cfg(feature = "listen")]
        if let Some(tx) = self.poll_listen(out)? {
            return Ok(Some(tx));
        }
        if self.list_changed_pending != 0 {
            let mut w = JsonWriter::new(out);
            let kind = lists::KINDS
                .iter()
                .copied()
                .find(|k| self.list_changed_pending & list_bit(*k) != 0)
                .unwrap_or(ListKind::Tools);
            crate::wire::jsonrpc::begin_notification(&mut w, lists::changed_method(kind));
            w.begin_object();
            w.end_object();
            crate::wire::jsonrpc::end_response(&mut w);
            let len = w.finish()?;
            self.list_changed_pending &= !list_bit(kind);
            return Ok(Some(Transmit {
                len,
                route: Route::Session,
            }));
        }
        Ok(None)
    }

    /// A list changed: its cursors become stale, and `poll_transmit` then yields its
    /// `notifications/*/list_changed` for a legacy session and for every 2026-07-28
    /// `subscriptions/listen` stream that opted in (tagged with its subscription id).
    pub fn list_changed(&mut self, kind: ListKind) {
        if let Some(e) = self.epochs.get_mut(lists::kind_index(kind)) {
            *e = e.wrapping_add(1);
        }
        let bit = list_bit(kind);
        #[cfg(feature = "listen")]
        for slot in self
            .slots
            .iter_mut()
            .filter(|s| s.state == SlotState::Listening && s.listen & bit != 0)
        {
            slot.listen_pending |= bit;
        }
        if self.config.list_changed
            && matches!(self.phase, Phase::Initializing(_) | Phase::Ready(_))
        {
            // Resource templates have no notification of their own: the resource list's
            // notification covers them.
            let bit = if kind == ListKind::ResourceTemplates {
                list_bit(ListKind::Resources)
            } else {
                bit
            };
            self.list_changed_pending |= bit;
        }
    }

    /// The tool list changed (see [`list_changed`](Self::list_changed)).
    pub fn tools_changed(&mut self) {
        self.list_changed(ListKind::Tools);
    }

    /// Writes `notifications/resources/updated` for a resource a legacy client subscribed
    /// to (the application keeps the subscriptions, see
    /// [`ResourceSet::subscribe`](crate::model::resources::ResourceSet::subscribe)). `Ok(None)`
    /// before `initialize` or in a stateless session. 2026-07-28 `subscriptions/listen`
    /// streams subscribed to `uri` get theirs from
    /// [`resource_updated_next`](Self::resource_updated_next): call both when a resource
    /// changes.
    pub fn resource_updated(
        &mut self,
        uri: &str,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, json::BufferTooSmall> {
        if self.phase == Phase::Fresh {
            return Ok(None);
        }
        let mut w = JsonWriter::new(out);
        crate::wire::jsonrpc::begin_notification(&mut w, "notifications/resources/updated");
        w.begin_object();
        w.key("uri");
        w.string(uri);
        w.end_object();
        crate::wire::jsonrpc::end_response(&mut w);
        let len = w.finish()?;
        Ok(Some(Transmit {
            len,
            route: Route::Session,
        }))
    }
}

impl Session<'_> {
    /// Writes `notifications/tasks` for the next task a 2026-07-28 `subscriptions/listen`
    /// stream subscribed to (its `taskIds`, kept by the core) whose `DetailedTask` differs
    /// from the one that stream was last sent (none yet, right after the acknowledgement):
    /// the params are what `tasks/get` answers at `now_ms` (without `resultType`), with the
    /// stream's `_meta.subscriptionId`; the frame is routed [`Route::Call`] with the
    /// stream's token. Call it after a message opened a stream
    /// ([`Incoming::subscription`]) and whenever the task table may have changed (`server`
    /// is the handler whose `tasks()` table is read): `cursor` runs
    /// over every stream and subscription; start at 0 and call again until `Ok(None)`,
    /// sending each frame before the next call (each is written to `out`). A buffer too
    /// small leaves the cursor where it was (grow it and call again, or add 1 to skip the
    /// frame). `Ok(None)` at once without features `listen` and `tasks`. See the
    /// `session::task_status` docs.
    ///
    /// ```text
    /// let mut cursor = 0;
    /// while let Some(tx) = session.tasks_changed_next(&mut server, &mut cursor, now, &mut out)? {
    ///     send(tx.route, &out[..tx.len]);
    /// }
    /// ```
    pub fn tasks_changed_next<S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        cursor: &mut usize,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, json::BufferTooSmall> {
        #[cfg(all(feature = "listen", feature = "tasks"))]
        {
            self.stream_task_changed(server, cursor, now_ms, out)
        }
        #[cfg(not(all(feature = "listen", feature = "tasks")))]
        {
            let _ = (server, now_ms, out);
            *cursor = usize::MAX;
            Ok(None)
        }
    }

    /// Writes `notifications/resources/updated` for the next 2026-07-28
    /// `subscriptions/listen` stream subscribed to `uri` (its `resourceSubscriptions`, kept
    /// by the core): the frame carries the stream's `_meta.subscriptionId` and is routed
    /// [`Route::Call`] with the stream's token. `from` is a cursor over the streams: start
    /// at 0 and call again until `Ok(None)`, sending each frame before the next call (each
    /// is written to `out`); one frame per subscribed stream. A buffer too small leaves the
    /// cursor where it was. `Ok(None)` at once without features `listen` and `resources`.
    ///
    /// ```text
    /// let tx = session.resource_updated(uri, &mut out)?; // a legacy session's, if any
    /// let mut from = 0;
    /// while let Some(tx) = session.resource_updated_next(uri, &mut from, &mut out)? {
    ///     send(tx.route, &out[..tx.len]);
    /// }
    /// ```
    pub fn resource_updated_next(
        &mut self,
        uri: &str,
        from: &mut usize,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, json::BufferTooSmall> {
        #[cfg(all(feature = "listen", feature = "resources"))]
        {
            self.stream_resource_updated(uri, from, out)
        }
        #[cfg(not(all(feature = "listen", feature = "resources")))]
        {
            let _ = (uri, out);
            *from = usize::MAX;
            Ok(None)
        }
    }
}

/// A request's target (`name` or `uri`) as a string, decoded into `buf` when it has
/// escapes; `None` if it is not a string or does not fit.
#[cfg(feature = "resources")]
fn target_text<'v>(v: json::JsonStr<'v>, buf: &'v mut [u8]) -> Option<&'v str> {
    v.as_borrowed().or_else(|| v.text_in(buf))
}
