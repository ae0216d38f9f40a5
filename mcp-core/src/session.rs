//! The server session: one connection's state machine for both protocol eras.

use crate::error::{CallError, HandleError};
use crate::inflight::{CallSlot, CallToken, SlotState};
use crate::json::{self, JsonStr, JsonWriter, Kind, Limits, RawJson, StrPart};
#[cfg(any(feature = "deferred", feature = "listen"))]
use crate::jsonrpc::StoredId;
use crate::jsonrpc::{self, code, Invalid, Message, RequestId};
use crate::logging::LogLevel;
use crate::pagination::{self, CursorKey, ListKind};
use crate::tools::{CallRequest, ClientCaps, Dispatch, Icon, ToolResult, ToolSet};
use crate::version::ProtocolVersion;

/// The smallest output buffer `handle_message` accepts: room for any error reply the core
/// writes on its own.
pub const MIN_OUTPUT: usize = 512;

/// Longest method name, version or level the session decodes when it has escapes.
const SHORT: usize = 64;

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Who the server is: sent in `initialize` and `server/discover` results.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerInfo<'a> {
    /// Programmatic name.
    pub name: &'a str,
    /// Version string.
    pub version: &'a str,
    /// Display title (2025-06-18+).
    pub title: Option<&'a str>,
    /// Description (2025-11-25+).
    pub description: Option<&'a str>,
    /// Website (2025-11-25+).
    pub website_url: Option<&'a str>,
    /// Icons (2025-11-25+).
    pub icons: &'a [Icon<'a>],
    /// Guidance for the model on how to use this server.
    pub instructions: Option<&'a str>,
}

/// `cacheScope` of list results (2026-07-28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// No user-specific data: shared caches may keep it.
    Public,
    /// Per-user data.
    Private,
}

/// Bounds and policies of a session. Every bound yields a reply when exceeded.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Maximum JSON nesting depth of an incoming message (default 32, at most 128);
    /// deeper messages get -32700.
    pub max_depth: u8,
    /// Tools per `tools/list` page (default 50, at least 1). A page also ends early when
    /// the next tool would not fit the output buffer.
    pub page_size: u16,
    /// Most elements in one JSON-RPC batch (2025-03-26 only; default 16); larger batches get
    /// one -32600.
    pub max_batch: u16,
    /// `ttlMs` of list/discover results (2026-07-28).
    pub list_ttl_ms: u32,
    /// `cacheScope` of list/discover results (2026-07-28).
    pub cache_scope: CacheScope,
    /// Declare `tools.listChanged` and send `notifications/tools/list_changed`.
    pub list_changed: bool,
    /// Session log level before the client sends `logging/setLevel` (legacy era).
    pub log_level: LogLevel,
    /// Key for cursor integrity checks: give it entropy so cursors cannot be forged.
    pub cursor_key: CursorKey,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_depth: json::DEFAULT_MAX_DEPTH,
            page_size: 50,
            max_batch: 16,
            list_ttl_ms: 0,
            cache_scope: CacheScope::Public,
            list_changed: true,
            log_level: LogLevel::Info,
            cursor_key: CursorKey([0x6d; 16]),
        }
    }
}

/// Caller-owned memory of a session: `CALLS` deferred calls can be in flight at once.
#[derive(Debug)]
pub struct SessionStorage<const CALLS: usize> {
    slots: [CallSlot; CALLS],
}

impl<const CALLS: usize> SessionStorage<CALLS> {
    /// Empty storage (usable in a `static`).
    pub const fn new() -> Self {
        SessionStorage {
            slots: [CallSlot::EMPTY; CALLS],
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
    Call(CallToken),
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

/// Something the application may want to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The client sent `notifications/initialized` (legacy era).
    Initialized(ProtocolVersion),
    /// The client cancelled a deferred call; its slot is already free and `complete` on
    /// the token returns `Ok(None)`.
    Cancelled(CallToken),
    /// The client changed the session log level (`logging/setLevel`).
    LogLevel(LogLevel),
}

/// A deferred `tools/call`, handed out by [`Incoming::next_call`].
#[derive(Clone, Copy, Debug)]
pub struct Call<'i> {
    /// What was called.
    pub request: CallRequest<'i>,
    /// Completes the call later.
    pub token: CallToken,
}

impl<'i> Call<'i> {
    /// The tool name as sent.
    pub fn name(&self) -> JsonStr<'i> {
        self.request.name()
    }
    /// The arguments (`{}` when absent).
    pub fn args(&self) -> RawJson<'i> {
        self.request.args()
    }
    /// The token for [`Session::complete`].
    pub fn token(&self) -> CallToken {
        self.token
    }
}

/// The outcome of [`Session::handle_message`]: an optional reply already in the output
/// buffer, plus deferred calls to take with [`next_call`](Self::next_call).
#[derive(Debug)]
#[must_use]
pub struct Incoming<'i> {
    msg: &'i str,
    transmit: Option<Transmit>,
    deferred: usize,
    #[cfg_attr(not(all(feature = "batch", feature = "listen")), allow(dead_code))]
    in_batch: bool,
    /// Inside a batch: bytes needed by a reply that had to drop its id (0: none did).
    #[cfg_attr(not(feature = "batch"), allow(dead_code))]
    batch_required: usize,
    subscription: Option<CallToken>,
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
    /// acknowledgement is the transmit, and later list changes are routed to this token
    /// until it is cancelled or closed with [`Session::close_subscription`].
    pub fn subscription(&self) -> Option<CallToken> {
        self.subscription
    }
    /// How many deferred calls are waiting to be taken.
    pub fn pending_calls(&self) -> usize {
        self.deferred
    }
    /// The next deferred call of this message (a batch may carry several). Calls not taken
    /// before the next `handle_message` are answered with an internal error.
    pub fn next_call(&mut self, session: &mut Session<'_>) -> Option<Call<'i>> {
        if self.deferred == 0 || cfg!(not(feature = "deferred")) {
            return None;
        }
        for (i, slot) in session.slots.iter_mut().enumerate() {
            if slot.state != SlotState::Fresh {
                continue;
            }
            slot.state = SlotState::Active;
            self.deferred -= 1;
            let span = |(start, len): (u32, u32)| {
                let start = start as usize;
                self.msg.get(start..start.saturating_add(len as usize))
            };
            let args = match slot.args {
                (u32::MAX, 0) => Some(RawJson { text: "{}" }),
                span_of_args => span(span_of_args).map(|text| RawJson { text }),
            };
            let name = span(slot.name);
            let (Some(args), Some(name)) = (args, name) else {
                slot.state = SlotState::Abandoned;
                continue;
            };
            let request = CallRequest {
                tool: usize::from(slot.tool),
                name: JsonStr { raw: name },
                args,
                version: slot.version,
                has_progress: !slot.progress_token.is_empty(),
            };
            return Some(Call {
                request,
                token: slot.token(i),
            });
        }
        self.deferred = 0;
        None
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
struct Ctx {
    version: ProtocolVersion,
    caps: ClientCaps,
    #[cfg_attr(not(feature = "deferred"), allow(dead_code))]
    log_level: Option<LogLevel>,
}

/// A protocol error reply being prepared.
#[derive(Clone, Copy, Debug)]
struct Fault<'i> {
    code: i32,
    message: &'static str,
    detail: Detail<'i>,
}

#[derive(Clone, Copy, Debug)]
enum Detail<'i> {
    None,
    /// Appended to the message: `message: name`.
    Name(JsonStr<'i>),
    /// -32022: `data.supported` + `data.requested`.
    Version(&'i str),
    /// -32021: `data.requiredCapabilities`.
    Caps(ClientCaps),
    /// A numeric bound, as `data.limit`.
    Limit(usize),
    /// A size the output needed, as `data.required`.
    Required(usize),
    /// A scan error: message + offset.
    Scan(json::ScanError),
}

impl<'i> Fault<'i> {
    const fn new(code: i32, message: &'static str) -> Self {
        Fault {
            code,
            message,
            detail: Detail::None,
        }
    }
    const fn with(self, detail: Detail<'i>) -> Self {
        Fault { detail, ..self }
    }
}

type Reply<'i> = Result<(), Fault<'i>>;

/// The first value of each of `keys` among an object's members, in one pass (names compare
/// after unescaping, and the first occurrence wins, as with [`RawJson::get`]).
#[inline(never)]
fn pick<'i, const N: usize>(
    object: Option<RawJson<'i>>,
    keys: [&str; N],
) -> [Option<RawJson<'i>>; N] {
    let mut found = [None; N];
    for (k, v) in object.and_then(|o| o.members()).into_iter().flatten() {
        if let Some(slot) = keys
            .iter()
            .position(|key| k.eq_str(key))
            .and_then(|i| found.get_mut(i))
        {
            if slot.is_none() {
                *slot = Some(v);
            }
        }
    }
    found
}

/// The request parameters the hot paths need, read in one pass over `params` and one over
/// `params._meta` (instead of one lookup each, which would skip `arguments` every time).
#[derive(Clone, Copy, Debug, Default)]
struct Params<'i> {
    name: Option<RawJson<'i>>,
    arguments: Option<RawJson<'i>>,
    cursor: Option<RawJson<'i>>,
    meta: Option<RawJson<'i>>,
    version: Option<RawJson<'i>>,
    caps: Option<RawJson<'i>>,
    log_level: Option<RawJson<'i>>,
    progress: Option<RawJson<'i>>,
}

impl<'i> Params<'i> {
    fn read(params: Option<RawJson<'i>>) -> Self {
        let [name, arguments, cursor, meta] =
            pick(params, ["name", "arguments", "cursor", "_meta"]);
        let [version, caps, log_level, progress] = pick(
            meta,
            [META_VERSION, META_CAPS, META_LOG_LEVEL, "progressToken"],
        );
        Params {
            name,
            arguments,
            cursor,
            meta,
            version,
            caps,
            log_level,
            progress,
        }
    }
}

/// One MCP server session (a stdio process, a socket connection, a UART link).
///
/// Methods come in three groups, as in quinn: `handle_*` feed input, `poll_*` drain output
/// and events, and commands (`complete`, `progress`, `log`, `tools_changed`) act on calls.
/// **After every `handle_message` or command, drain [`poll_transmit`](Self::poll_transmit)
/// and [`poll_event`](Self::poll_event).** The session never reads a clock, never blocks
/// and never allocates; the caller owns all memory.
#[derive(Debug)]
pub struct Session<'a> {
    info: &'a ServerInfo<'a>,
    config: Config,
    slots: &'a mut [CallSlot],
    phase: Phase,
    client_caps: ClientCaps,
    log_level: LogLevel,
    epoch: u32,
    list_changed_pending: bool,
    initialized_event: Option<ProtocolVersion>,
    level_event: bool,
    /// Slots not `Free`, and cancellations not yet reported: when both are zero (the
    /// steady state with synchronous tools) no per-message slot scan runs.
    occupied: usize,
    unreported_cancels: usize,
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
            *slot = CallSlot::EMPTY;
        }
        Session {
            info,
            config,
            slots,
            phase: Phase::Fresh,
            client_caps: ClientCaps::NONE,
            log_level: config.log_level,
            epoch: 0,
            list_changed_pending: false,
            initialized_event: None,
            level_event: false,
            occupied: 0,
            unreported_cancels: 0,
        }
    }

    /// The legacy revision negotiated by `initialize`, if any.
    pub fn negotiated_version(&self) -> Option<ProtocolVersion> {
        match self.phase {
            Phase::Fresh => None,
            Phase::Initializing(v) | Phase::Ready(v) => Some(v),
        }
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

    /// Handles one complete JSON-RPC message (a line without its newline, an HTTP body).
    ///
    /// The reply, if one is due now, is written to `out` and described by
    /// [`Incoming::transmit`]; deferred tool calls are taken with [`Incoming::next_call`].
    /// Malformed input of any kind becomes a JSON-RPC error reply, never an `Err`.
    pub fn handle_message<'i, T: ToolSet + ?Sized>(
        &mut self,
        tools: &mut T,
        msg: &'i [u8],
        out: &mut [u8],
    ) -> Result<Incoming<'i>, HandleError> {
        if out.len() < MIN_OUTPUT {
            return Err(HandleError::OutputTooSmall {
                required: MIN_OUTPUT,
            });
        }
        self.abandon_fresh();
        let mut w = JsonWriter::new(out);
        let text = core::str::from_utf8(msg).unwrap_or("");
        let mut incoming = Incoming {
            msg: text,
            transmit: None,
            deferred: 0,
            in_batch: false,
            batch_required: 0,
            subscription: None,
        };
        let limits = Limits {
            max_depth: self.config.max_depth,
        };
        match json::parse(msg, limits) {
            Err(e) => {
                let f = Fault::new(code::PARSE_ERROR, "Parse error").with(Detail::Scan(e));
                Self::write_fault(&mut w, None, &f);
            }
            #[cfg(feature = "batch")]
            Ok(v) if v.kind() == Kind::Array => {
                self.handle_batch(tools, v, text, &mut w, &mut incoming)
            }
            #[cfg(not(feature = "batch"))]
            Ok(v) if v.kind() == Kind::Array => {
                let f = Fault::new(
                    code::INVALID_REQUEST,
                    "JSON-RPC batches are not supported by this server",
                );
                Self::write_fault(&mut w, None, &f);
            }
            Ok(v) => self.handle_one(tools, v, text, &mut w, &mut incoming),
        }
        if !w.is_empty() {
            incoming.transmit = Some(Transmit {
                len: w.len(),
                route: Route::Reply,
            });
        }
        Ok(incoming)
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
            code::INVALID_REQUEST,
            "Message exceeds the maximum frame length",
        )
        .with(Detail::Limit(limit));
        Self::write_fault(&mut w, None, &f);
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

    #[cfg(feature = "batch")]
    fn handle_batch<'i, T: ToolSet + ?Sized>(
        &mut self,
        tools: &mut T,
        batch: RawJson<'i>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) {
        let allowed = self
            .negotiated_version()
            .is_some_and(|v| v.features().batching);
        let count = batch.elements().map_or(0, |e| e.count());
        let fault = if !allowed {
            Some(Fault::new(
                code::INVALID_REQUEST,
                "JSON-RPC batches are only accepted on protocol 2025-03-26",
            ))
        } else if count == 0 {
            Some(Fault::new(code::INVALID_REQUEST, "Empty batch"))
        } else if count > usize::from(self.config.max_batch) {
            Some(
                Fault::new(code::INVALID_REQUEST, "Batch too large")
                    .with(Detail::Limit(usize::from(self.config.max_batch))),
            )
        } else {
            None
        };
        if let Some(f) = fault {
            Self::write_fault(w, None, &f);
            return;
        }
        let initial = w.checkpoint();
        w.begin_array();
        let start = w.len();
        incoming.in_batch = true;
        for element in batch.elements().into_iter().flatten() {
            self.handle_one(tools, element, text, w, incoming);
        }
        if w.len() == start {
            // Only notifications: no reply at all.
            w.rewind(initial);
            return;
        }
        w.end_array();
        // A reply that had to drop its id cannot be matched to its request: answer the
        // whole batch with one error instead (`required` is then a lower bound).
        if w.overflowed() || incoming.batch_required > 0 {
            let required = w.len().max(incoming.batch_required);
            w.rewind(initial);
            let f = Fault::new(
                code::INTERNAL_ERROR,
                "Batch replies exceed the output buffer",
            )
            .with(Detail::Required(required));
            Self::write_fault(w, None, &f);
        }
    }

    /// Handles one message; appends its reply (if any) to `w`.
    fn handle_one<'i, T: ToolSet + ?Sized>(
        &mut self,
        tools: &mut T,
        v: RawJson<'i>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) {
        match jsonrpc::classify(v) {
            Err(Invalid { id, reply, reason }) => {
                if reply {
                    let f = Fault {
                        code: code::INVALID_REQUEST,
                        message: reason,
                        detail: Detail::None,
                    };
                    let lost = Self::write_fault(w, id.map(|i| i.as_raw()), &f);
                    incoming.note_lost_id(lost);
                }
            }
            Ok(Message::Notification { method, params }) => {
                self.handle_notification(method, params)
            }
            Ok(Message::Response { .. }) => {} // We send no requests; stray responses are ignored.
            Ok(Message::Request { id, method, params }) => {
                let before = w.checkpoint();
                let result = self.handle_request(tools, id, method, params, text, w, incoming);
                if let Err(f) = result {
                    w.rewind(before);
                    let lost = Self::write_fault(w, Some(id.as_raw()), &f);
                    incoming.note_lost_id(lost);
                } else if w.overflowed() {
                    let required = w.len() - before.len();
                    w.rewind(before);
                    let f = Fault::new(code::INTERNAL_ERROR, "Response exceeds the output buffer")
                        .with(Detail::Required(required));
                    let lost = Self::write_fault(w, Some(id.as_raw()), &f);
                    incoming.note_lost_id(lost.map(|n| n.max(before.len() + required)));
                }
            }
        }
    }

    fn handle_notification(&mut self, method: JsonStr<'_>, params: Option<RawJson<'_>>) {
        let mut buf = [0u8; SHORT];
        match method.text_in(&mut buf).unwrap_or("") {
            "notifications/initialized" => {
                if let Phase::Initializing(v) = self.phase {
                    self.phase = Phase::Ready(v);
                    self.initialized_event = Some(v);
                }
            }
            "notifications/cancelled" => {
                let Some(id) = params
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_json)
                else {
                    return; // Malformed cancellations are ignored, as the spec asks.
                };
                let live = |s: &CallSlot| {
                    matches!(
                        s.state,
                        SlotState::Fresh | SlotState::Active | SlotState::Listening
                    )
                };
                if let Some(slot) = self
                    .slots
                    .iter_mut()
                    .find(|s| live(s) && s.id.as_raw() == id.as_raw())
                {
                    slot.cancelled_generation = Some(slot.generation);
                    if !slot.cancel_unreported {
                        self.unreported_cancels += 1;
                    }
                    slot.cancel_unreported = true;
                    slot.free();
                    self.occupied = self.occupied.saturating_sub(1);
                }
            }
            _ => {} // Unknown notifications are ignored.
        }
    }

    /// Reads the 2026-07-28 per-request `_meta`. `Ok(None)`: not a modern request.
    fn modern_ctx<'i>(p: &Params<'i>) -> Result<Option<Ctx>, Fault<'i>> {
        let Some(meta) = p.meta else {
            return Ok(None);
        };
        if meta.kind() != Kind::Object {
            return Err(Fault::new(code::INVALID_PARAMS, "_meta must be an object"));
        }
        let Some(version) = p.version else {
            if p.caps.is_some() {
                return Err(Fault::new(
                    code::INVALID_PARAMS,
                    "Missing _meta[\"io.modelcontextprotocol/protocolVersion\"]",
                ));
            }
            return Ok(None);
        };
        let Some(vs) = version.as_string() else {
            return Err(Fault::new(
                code::INVALID_PARAMS,
                "_meta protocolVersion must be a string",
            ));
        };
        let mut buf = [0u8; SHORT];
        let version = match ProtocolVersion::from_wire(vs.text_in(&mut buf).unwrap_or("")) {
            Some(v) if v.is_modern() => v,
            _ => {
                return Err(Fault::new(
                    code::UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                )
                .with(Detail::Version(vs.raw())))
            }
        };
        let caps = match p.caps {
            Some(c) if c.kind() == Kind::Object => ClientCaps::from_json(Some(c)),
            _ => {
                return Err(Fault::new(
                    code::INVALID_PARAMS,
                    "Missing _meta[\"io.modelcontextprotocol/clientCapabilities\"] object",
                ))
            }
        };
        let log_level = match p.log_level {
            None => None,
            Some(l) => match l
                .as_string()
                .and_then(|s| LogLevel::from_wire(s.text_in(&mut [0u8; SHORT])?))
            {
                Some(level) => Some(level),
                None => return Err(Fault::new(code::INVALID_PARAMS, "Invalid _meta logLevel")),
            },
        };
        Ok(Some(Ctx {
            version,
            caps,
            log_level,
        }))
    }

    #[allow(clippy::too_many_arguments)]
    fn handle_request<'i, T: ToolSet + ?Sized>(
        &mut self,
        tools: &mut T,
        id: RequestId<'i>,
        method: JsonStr<'i>,
        params: Option<RawJson<'i>>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) -> Reply<'i> {
        if params.is_some_and(|p| p.kind() != Kind::Object) {
            return Err(Fault::new(code::INVALID_PARAMS, "params must be an object"));
        }
        let mut buf = [0u8; SHORT];
        // Escaped names (`"tools\/list"`) are decoded; over-long ones match nothing.
        let method_name = method.text_in(&mut buf).unwrap_or("");
        let p = Params::read(params);
        if let Some(ctx) = Self::modern_ctx(&p)? {
            return match method_name {
                "server/discover" => self.discover(id, w),
                "tools/list" => self.list_tools(tools, id, ctx, p.cursor, w),
                "tools/call" => {
                    self.call_tool(tools, id, ctx, params.map(|_| p), text, w, incoming)
                }
                #[cfg(feature = "listen")]
                "subscriptions/listen" => self.listen(id, params, w, incoming),
                "initialize"
                | "ping"
                | "logging/setLevel"
                | "resources/subscribe"
                | "resources/unsubscribe" => Err(Fault::new(
                    code::METHOD_NOT_FOUND,
                    "Method not available in protocol 2026-07-28",
                )
                .with(Detail::Name(method))),
                _ => Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found")
                    .with(Detail::Name(method))),
            };
        }
        if method_name == "server/discover" {
            // A dual-era client probing without `_meta`: answer as the latest revision.
            return self.discover(id, w);
        }
        let version = match (self.phase, method_name) {
            (_, "initialize") => return self.initialize(id, params, w),
            (_, "ping") => {
                let v = self.negotiated_version().unwrap_or(ProtocolVersion::LATEST_LEGACY);
                return Self::empty_result(id, v, w);
            }
            (Phase::Fresh, "tools/list" | "tools/call" | "logging/setLevel") => {
                return Err(Fault::new(
                    code::INVALID_REQUEST,
                    "Server not initialized: send initialize first, or use protocol 2026-07-28 with per-request _meta",
                ))
            }
            (Phase::Fresh, _) => {
                return Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found").with(Detail::Name(method)))
            }
            (Phase::Initializing(v) | Phase::Ready(v), _) => v,
        };
        let ctx = Ctx {
            version,
            caps: self.client_caps,
            log_level: None,
        };
        match method_name {
            "tools/list" => self.list_tools(tools, id, ctx, p.cursor, w),
            "tools/call" => self.call_tool(tools, id, ctx, params.map(|_| p), text, w, incoming),
            "logging/setLevel" => {
                let level = params
                    .and_then(|p| p.get("level"))
                    .and_then(|l| l.as_string())
                    .and_then(|s| LogLevel::from_wire(s.text_in(&mut [0u8; SHORT])?))
                    .ok_or(Fault::new(
                        code::INVALID_PARAMS,
                        "params.level must be a log level",
                    ))?;
                self.log_level = level;
                self.level_event = true;
                Self::empty_result(id, version, w)
            }
            _ => {
                Err(Fault::new(code::METHOD_NOT_FOUND, "Method not found")
                    .with(Detail::Name(method)))
            }
        }
    }

    fn empty_result<'i>(
        id: RequestId<'i>,
        version: ProtocolVersion,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        if version.features().result_type {
            w.key("resultType");
            w.string("complete");
        }
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }

    fn initialize<'i>(
        &mut self,
        id: RequestId<'i>,
        params: Option<RawJson<'i>>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        if self.phase != Phase::Fresh {
            return Err(Fault::new(
                code::INVALID_REQUEST,
                "Session already initialized",
            ));
        }
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(|v| v.as_string())
            .ok_or(Fault::new(
                code::INVALID_PARAMS,
                "initialize requires params.protocolVersion (a string)",
            ))?;
        let version = ProtocolVersion::negotiate_legacy(
            requested
                .text_in(&mut [0u8; SHORT])
                .and_then(ProtocolVersion::from_wire),
        );
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        w.key("protocolVersion");
        w.string(version.as_str());
        w.key("capabilities");
        self.write_capabilities(w, false);
        w.key("serverInfo");
        self.write_implementation(w, version);
        if let Some(i) = self.info.instructions {
            w.key("instructions");
            w.string(i);
        }
        w.end_object();
        jsonrpc::end_response(w);
        if !w.overflowed() {
            self.phase = Phase::Initializing(version);
            self.client_caps = ClientCaps::from_json(params.and_then(|p| p.get("capabilities")));
        }
        Ok(())
    }

    fn write_capabilities(&self, w: &mut JsonWriter<'_>, modern: bool) {
        w.begin_object();
        w.key("tools");
        w.begin_object();
        // 2026-07-28 delivers list changes on `subscriptions/listen` streams only.
        if self.config.list_changed && (!modern || cfg!(feature = "listen")) {
            w.key("listChanged");
            w.bool(true);
        }
        w.end_object();
        w.key("logging");
        w.begin_object();
        w.end_object();
        w.end_object();
    }

    fn write_implementation(&self, w: &mut JsonWriter<'_>, version: ProtocolVersion) {
        let f = version.features();
        let info = self.info;
        w.begin_object();
        w.key("name");
        w.string(info.name);
        w.key("version");
        w.string(info.version);
        if let (true, Some(t)) = (f.titles_and_meta, info.title) {
            w.key("title");
            w.string(t);
        }
        if f.icons {
            if let Some(d) = info.description {
                w.key("description");
                w.string(d);
            }
            if let Some(u) = info.website_url {
                w.key("websiteUrl");
                w.string(u);
            }
            if !info.icons.is_empty() {
                w.key("icons");
                crate::tools::write_icons(w, info.icons);
            }
        }
        w.end_object();
    }

    /// `"_meta":{"io.modelcontextprotocol/serverInfo":{...}}` value.
    fn write_result_meta(&self, w: &mut JsonWriter<'_>) {
        w.begin_object();
        w.key(META_SERVER_INFO);
        self.write_implementation(w, ProtocolVersion::LATEST);
        w.end_object();
    }

    /// The modern trailer of a cacheable result: `resultType`, `ttlMs`, `cacheScope`, `_meta`.
    fn write_modern_trailer(&self, w: &mut JsonWriter<'_>, cacheable: bool) {
        w.key("resultType");
        w.string("complete");
        if cacheable {
            w.key("ttlMs");
            w.u64(u64::from(self.config.list_ttl_ms));
            w.key("cacheScope");
            w.string(match self.config.cache_scope {
                CacheScope::Public => "public",
                CacheScope::Private => "private",
            });
        }
        w.key("_meta");
        self.write_result_meta(w);
    }

    fn discover<'i>(&mut self, id: RequestId<'i>, w: &mut JsonWriter<'_>) -> Reply<'i> {
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        w.key("supportedVersions");
        write_supported_versions(w);
        w.key("capabilities");
        self.write_capabilities(w, true);
        if let Some(i) = self.info.instructions {
            w.key("instructions");
            w.string(i);
        }
        self.write_modern_trailer(w, true);
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }

    fn list_tools<'i, T: ToolSet + ?Sized>(
        &mut self,
        tools: &T,
        id: RequestId<'i>,
        ctx: Ctx,
        cursor: Option<RawJson<'i>>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        let total = tools.len();
        let offset = match cursor {
            None => 0,
            Some(c) if c.is_null() => 0,
            Some(c) => {
                let invalid = Fault::new(code::INVALID_PARAMS, "Invalid cursor");
                let s = c.as_string().ok_or(invalid)?;
                let pos = pagination::decode(
                    &self.config.cursor_key,
                    ListKind::Tools,
                    s.text_in(&mut [0u8; SHORT]).unwrap_or("").as_bytes(),
                )
                .map_err(|_| invalid)?;
                if pos.epoch != self.epoch {
                    return Err(Fault::new(
                        code::INVALID_PARAMS,
                        "Stale cursor: the tool list changed, list again from the start",
                    ));
                }
                let offset = pos.offset as usize;
                if offset == 0 || offset >= total {
                    return Err(invalid);
                }
                offset
            }
        };
        let page = usize::from(self.config.page_size.max(1));
        // Room kept for `nextCursor`, the modern trailer and the closing braces.
        let reserve = 96
            + if ctx.version.is_modern() {
                160 + self.info.name.len() + self.info.version.len()
            } else {
                0
            };
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        w.key("tools");
        w.begin_array();
        let mut next = offset;
        while next < total && next - offset < page {
            let Some(tool) = tools.get(next) else { break };
            if tool.validate().is_err() {
                return Err(Fault::new(
                    code::INTERNAL_ERROR,
                    "Invalid tool definition (see Tool::validate)",
                ));
            }
            let before = w.checkpoint();
            tool.write(w, ctx.version);
            if w.len().saturating_add(reserve) > w.capacity() && next > offset {
                w.rewind(before);
                break;
            }
            next += 1;
        }
        w.end_array();
        if next < total {
            let cursor = pagination::encode(
                &self.config.cursor_key,
                ListKind::Tools,
                self.epoch,
                u32::try_from(next).unwrap_or(u32::MAX),
            );
            w.key("nextCursor");
            w.string(cursor.as_str());
        }
        if ctx.version.is_modern() {
            self.write_modern_trailer(w, true);
        }
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn call_tool<'i, T: ToolSet + ?Sized>(
        &mut self,
        tools: &mut T,
        id: RequestId<'i>,
        ctx: Ctx,
        params: Option<Params<'i>>,
        text: &'i str,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) -> Reply<'i> {
        let params = params.ok_or(Fault::new(
            code::INVALID_PARAMS,
            "tools/call requires params",
        ))?;
        let name = params.name.and_then(|n| n.as_string()).ok_or(Fault::new(
            code::INVALID_PARAMS,
            "params.name must be a string",
        ))?;
        let index = tools
            .find(name)
            .ok_or(Fault::new(code::INVALID_PARAMS, "Unknown tool").with(Detail::Name(name)))?;
        let args = match params.arguments {
            None => RawJson { text: "{}" },
            Some(a) if a.is_null() => RawJson { text: "{}" },
            Some(a) if a.kind() == Kind::Object => a,
            Some(_) => {
                return Err(Fault::new(
                    code::INVALID_PARAMS,
                    "params.arguments must be an object",
                ))
            }
        };
        let required = tools.get(index).map_or(ClientCaps::NONE, |t| t.requires);
        if !ctx.caps.contains(required) {
            let missing = ClientCaps(required.0 & !ctx.caps.0);
            return Err(if ctx.version.is_modern() {
                Fault::new(
                    code::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    "Missing required client capability",
                )
                .with(Detail::Caps(missing))
            } else {
                Fault::new(
                    code::INVALID_PARAMS,
                    "Tool requires a client capability that was not declared",
                )
                .with(Detail::Caps(missing))
            });
        }
        let progress = params.progress.and_then(RequestId::from_json);
        let request = CallRequest {
            tool: index,
            name,
            args,
            version: ctx.version,
            has_progress: progress.is_some(),
        };

        let before = w.checkpoint();
        jsonrpc::begin_result(w, id.as_raw());
        let meta = |w: &mut JsonWriter<'_>| self.write_result_meta(w);
        let mut result = ToolResult::begin(w, ctx.version, Some(&meta));
        match tools.call(&request, &mut result) {
            Dispatch::Done => {
                if result.misused() {
                    return Err(Fault::new(
                        code::INTERNAL_ERROR,
                        "Tool handler misused the result builder",
                    ));
                }
                result.finish();
                jsonrpc::end_response(w);
                Ok(())
            }
            #[cfg(feature = "deferred")]
            Dispatch::Defer => {
                w.rewind(before);
                self.defer(id, &request, progress, ctx, text)?;
                incoming.deferred += 1;
                Ok(())
            }
            #[cfg(not(feature = "deferred"))]
            Dispatch::Defer => {
                let _ = (progress, text, incoming, before);
                Err(Fault::new(
                    code::INTERNAL_ERROR,
                    "Deferred tool calls are not enabled in this build",
                ))
            }
        }
    }

    #[cfg(feature = "listen")]
    /// `subscriptions/listen` (2026-07-28): acknowledges the honoured subset and keeps the
    /// subscription in a call slot until it is cancelled or closed.
    fn listen<'i>(
        &mut self,
        id: RequestId<'i>,
        params: Option<RawJson<'i>>,
        w: &mut JsonWriter<'_>,
        incoming: &mut Incoming<'i>,
    ) -> Reply<'i> {
        if incoming.in_batch {
            return Err(Fault::new(
                code::INVALID_REQUEST,
                "subscriptions/listen cannot be batched",
            ));
        }
        let filter = params
            .and_then(|p| p.get("notifications"))
            .filter(|n| n.kind() == Kind::Object)
            .ok_or(Fault::new(
                code::INVALID_PARAMS,
                "params.notifications must be an object",
            ))?;
        let tools = self.config.list_changed
            && filter.get("toolsListChanged").and_then(|v| v.as_bool()) == Some(true);
        let stored = StoredId::new(id.as_raw()).ok_or(
            Fault::new(
                code::INVALID_REQUEST,
                "Request id too long for a subscription",
            )
            .with(Detail::Limit(jsonrpc::MAX_ID_LEN)),
        )?;
        let index = self.free_slot_for(id)?;
        let Some(slot) = self.slots.get_mut(index) else {
            return Err(Fault::new(code::INTERNAL_ERROR, "Too many calls in flight"));
        };
        jsonrpc::begin_notification(w, "notifications/subscriptions/acknowledged");
        w.begin_object();
        w.key("notifications");
        w.begin_object();
        if tools {
            w.key("toolsListChanged");
            w.bool(true);
        }
        w.end_object();
        write_subscription_meta(w, id.as_raw());
        w.end_object();
        jsonrpc::end_response(w);
        slot.state = SlotState::Listening;
        self.occupied += 1;
        slot.id = stored;
        slot.progress_token = StoredId::EMPTY;
        slot.version = ProtocolVersion::LATEST;
        slot.log_level = None;
        slot.listen_tools = tools;
        slot.listen_pending = false;
        incoming.subscription = Some(slot.token(index));
        Ok(())
    }

    #[cfg(feature = "listen")]
    /// Ends a `subscriptions/listen` stream gracefully (e.g. at shutdown) with its
    /// `{"resultType":"complete"}` response. `Ok(None)` if the client already cancelled it.
    pub fn close_subscription(
        &mut self,
        token: CallToken,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, CallError> {
        let slot = self
            .slots
            .get_mut(usize::from(token.slot))
            .ok_or(CallError::UnknownCall)?;
        if slot.state != SlotState::Listening || slot.generation != token.generation {
            return if slot.cancelled_generation == Some(token.generation) {
                Ok(None)
            } else {
                Err(CallError::UnknownCall)
            };
        }
        let id = slot.id;
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_result(&mut w, id.as_raw());
        w.begin_object();
        w.key("resultType");
        w.string("complete");
        write_subscription_meta(&mut w, id.as_raw());
        w.end_object();
        jsonrpc::end_response(&mut w);
        self.sent_for_call(w, token, true)
    }

    /// A free slot for a call or subscription with this id: refuses an id already in
    /// flight (-32600) and a full table (-32603 with `data.limit`).
    #[cfg(any(feature = "deferred", feature = "listen"))]
    fn free_slot_for<'i>(&self, id: RequestId<'i>) -> Result<usize, Fault<'i>> {
        if self
            .slots
            .iter()
            .any(|s| s.state != SlotState::Free && s.id.as_raw() == id.as_raw())
        {
            return Err(Fault::new(
                code::INVALID_REQUEST,
                "Request id is already in use by a call in flight",
            ));
        }
        self.slots
            .iter()
            .position(|s| s.state == SlotState::Free)
            .ok_or(
                Fault::new(code::INTERNAL_ERROR, "Too many calls in flight")
                    .with(Detail::Limit(self.slots.len())),
            )
    }

    #[cfg(feature = "deferred")]
    fn defer<'i>(
        &mut self,
        id: RequestId<'i>,
        request: &CallRequest<'i>,
        progress: Option<RequestId<'i>>,
        ctx: Ctx,
        text: &'i str,
    ) -> Reply<'i> {
        let stored = StoredId::new(id.as_raw()).ok_or(
            Fault::new(
                code::INVALID_REQUEST,
                "Request id too long for a deferred call",
            )
            .with(Detail::Limit(jsonrpc::MAX_ID_LEN)),
        )?;
        let token = match progress {
            Some(p) => StoredId::new(p.as_raw()).ok_or(
                Fault::new(code::INVALID_PARAMS, "progressToken too long")
                    .with(Detail::Limit(jsonrpc::MAX_ID_LEN)),
            )?,
            None => StoredId::EMPTY,
        };
        let index = self.free_slot_for(id)?;
        let Some(slot) = self.slots.get_mut(index) else {
            return Err(Fault::new(code::INTERNAL_ERROR, "Too many calls in flight"));
        };
        let span = |s: &str| {
            let start = (s.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
            (
                u32::try_from(start).unwrap_or(u32::MAX),
                u32::try_from(s.len()).unwrap_or(0),
            )
        };
        // `{}` for absent arguments is not inside the message: mark it with an impossible
        // span and let `next_call` substitute.
        let args = request.args.text;
        let inside = (args.as_ptr() as usize) >= (text.as_ptr() as usize)
            && (args.as_ptr() as usize).saturating_add(args.len())
                <= (text.as_ptr() as usize).saturating_add(text.len());
        slot.args = if inside { span(args) } else { (u32::MAX, 0) };
        slot.name = span(request.name.raw());
        slot.state = SlotState::Fresh;
        self.occupied += 1;
        slot.id = stored;
        slot.progress_token = token;
        slot.last_progress = f64::NEG_INFINITY;
        slot.version = ctx.version;
        slot.log_level = ctx.log_level;
        slot.tool = u16::try_from(request.tool).unwrap_or(u16::MAX);
        Ok(())
    }

    /// Writes an error reply. If it does not fit (a huge id or detail), falls back to the
    /// bare message, then to no id, so a reply is always produced in `MIN_OUTPUT` bytes.
    /// Writes an error reply, dropping optional parts until it fits: first the detail,
    /// then the id, then `data` (last, because -32022 and -32021 require it; `data` is
    /// bounded, so the id-less reply always fits in `MIN_OUTPUT`). Returns `None` when the
    /// reply carries the id it was given, or `Some(bytes the full reply needed)` when the id
    /// had to be dropped.
    fn write_fault(w: &mut JsonWriter<'_>, id: Option<&str>, f: &Fault<'_>) -> Option<usize> {
        let before = w.checkpoint();
        Self::write_fault_full(w, id, f, true);
        let needed = w.len().saturating_sub(before.len());
        if !w.overflowed() {
            return None;
        }
        w.rewind(before);
        Self::write_fault_full(w, id, f, false);
        if !w.overflowed() {
            return None;
        }
        w.rewind(before);
        Self::write_fault_full(w, None, f, false);
        if w.overflowed() {
            w.rewind(before);
            let message = [
                StrPart::Text(f.message),
                StrPart::Text(" (request id too long to echo)"),
            ];
            jsonrpc::write_error(w, None, f.code, &message, None);
        }
        id.map(|_| before.len() + needed)
    }

    fn write_fault_full(w: &mut JsonWriter<'_>, id: Option<&str>, f: &Fault<'_>, detailed: bool) {
        let detail = f.detail;
        let data = |w: &mut JsonWriter<'_>| match detail {
            Detail::Version(requested) => {
                w.begin_object();
                w.key("supported");
                write_supported_versions(w);
                w.key("requested");
                let (head, _) = truncate_escaped(requested, 32);
                w.string_raw_escaped(head);
                w.end_object();
            }
            Detail::Caps(caps) => {
                w.begin_object();
                w.key("requiredCapabilities");
                caps.write(w);
                w.end_object();
            }
            Detail::Limit(n) => {
                w.begin_object();
                w.key("limit");
                w.u64(n as u64);
                w.end_object();
            }
            Detail::Required(n) => {
                w.begin_object();
                w.key("required");
                w.u64(n as u64);
                w.end_object();
            }
            Detail::Scan(e) => {
                w.begin_object();
                w.key("reason");
                w.string_parts(&e.message_parts());
                w.end_object();
            }
            Detail::None | Detail::Name(_) => w.null(),
        };
        let has_data = !matches!(detail, Detail::None | Detail::Name(_));
        let (mut parts, mut n) = ([StrPart::Text(""); 7], 1);
        parts[0] = StrPart::Text(f.message);
        let mut push = |p| {
            if let Some(slot) = parts.get_mut(n) {
                *slot = p;
                n += 1;
            }
        };
        match if detailed { detail } else { Detail::None } {
            Detail::Name(name) => {
                let (head, cut) = truncate_escaped(name.raw(), 64);
                push(StrPart::Text(": "));
                push(StrPart::Escaped(head));
                if cut {
                    push(StrPart::Text("..."));
                }
            }
            Detail::Version(v) => {
                let (head, cut) = truncate_escaped(v, 32);
                push(StrPart::Text(": "));
                push(StrPart::Escaped(head));
                if cut {
                    push(StrPart::Text("..."));
                }
            }
            Detail::Scan(e) => {
                push(StrPart::Text(": "));
                for p in e.message_parts() {
                    push(p);
                }
            }
            _ => {}
        }
        let message = parts.get(..n).unwrap_or(&[]);
        jsonrpc::write_error(
            w,
            id,
            f.code,
            message,
            if has_data { Some(&data) } else { None },
        );
    }

    /// Takes the next event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(v) = self.initialized_event.take() {
            return Some(Event::Initialized(v));
        }
        if core::mem::take(&mut self.level_event) {
            return Some(Event::LogLevel(self.log_level));
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
                return Some(Event::Cancelled(CallToken { slot, generation }));
            }
        }
        None
    }

    /// Writes the next core-originated frame (a list change notification, or the error
    /// reply to a call the application never took) into `out`.
    pub fn poll_transmit(
        &mut self,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, json::BufferTooSmall> {
        let mut w = JsonWriter::new(out);
        if let Some(slot) = self
            .slots
            .iter_mut()
            .take(if self.occupied == 0 { 0 } else { usize::MAX })
            .find(|s| s.state == SlotState::Abandoned)
        {
            let f = Fault::new(
                code::INTERNAL_ERROR,
                "Call was not dispatched by the server application",
            );
            let id = slot.id;
            Self::write_fault(&mut w, Some(id.as_raw()), &f);
            let len = w.finish()?;
            slot.free();
            self.occupied = self.occupied.saturating_sub(1);
            return Ok(Some(Transmit {
                len,
                route: Route::Session,
            }));
        }
        #[cfg(feature = "listen")]
        if let Some((i, slot)) = self
            .slots
            .iter_mut()
            .take(if self.occupied == 0 { 0 } else { usize::MAX })
            .enumerate()
            .find(|(_, s)| s.state == SlotState::Listening && s.listen_pending)
        {
            jsonrpc::begin_notification(&mut w, "notifications/tools/list_changed");
            w.begin_object();
            write_subscription_meta(&mut w, slot.id.as_raw());
            w.end_object();
            jsonrpc::end_response(&mut w);
            let len = w.finish()?;
            slot.listen_pending = false;
            return Ok(Some(Transmit {
                len,
                route: Route::Call(slot.token(i)),
            }));
        }
        if self.list_changed_pending {
            jsonrpc::begin_notification(&mut w, "notifications/tools/list_changed");
            w.begin_object();
            w.end_object();
            jsonrpc::end_response(&mut w);
            let len = w.finish()?;
            self.list_changed_pending = false;
            return Ok(Some(Transmit {
                len,
                route: Route::Session,
            }));
        }
        Ok(None)
    }

    /// The tool list changed: old cursors become stale, and `poll_transmit` then yields
    /// `notifications/tools/list_changed` for a legacy session and for every 2026-07-28
    /// `subscriptions/listen` stream that opted in (tagged with its subscription id).
    pub fn tools_changed(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        #[cfg(feature = "listen")]
        for slot in self
            .slots
            .iter_mut()
            .filter(|s| s.state == SlotState::Listening && s.listen_tools)
        {
            slot.listen_pending = true;
        }
        if self.config.list_changed
            && matches!(self.phase, Phase::Initializing(_) | Phase::Ready(_))
        {
            self.list_changed_pending = true;
        }
    }

    fn live_slot(&mut self, token: CallToken) -> Result<Option<&mut CallSlot>, CallError> {
        let slot = self
            .slots
            .get_mut(usize::from(token.slot))
            .ok_or(CallError::UnknownCall)?;
        if slot.state == SlotState::Active && slot.generation == token.generation {
            return Ok(Some(slot));
        }
        if slot.cancelled_generation == Some(token.generation) {
            return Ok(None);
        }
        Err(CallError::UnknownCall)
    }

    /// Completes a deferred call: `write` fills the result. Returns `Ok(None)` if the client
    /// cancelled the call meanwhile (nothing is sent). On `BufferTooSmall` the call stays in
    /// flight: retry with a buffer of `required` bytes.
    pub fn complete(
        &mut self,
        token: CallToken,
        out: &mut [u8],
        write: impl FnOnce(&mut ToolResult<'_, '_>),
    ) -> Result<Option<Transmit>, CallError> {
        let Some(slot) = self.live_slot(token)? else {
            return Ok(None);
        };
        let (id, version) = (slot.id, slot.version);
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_result(&mut w, id.as_raw());
        let meta = |w: &mut JsonWriter<'_>| self.write_result_meta(w);
        let mut result = ToolResult::begin(&mut w, version, Some(&meta));
        write(&mut result);
        if result.misused() {
            return Err(CallError::ResultMisused);
        }
        result.finish();
        jsonrpc::end_response(&mut w);
        self.sent_for_call(w, token, true)
    }

    /// Answers a deferred call with a JSON-RPC error instead of a result (for protocol-level
    /// failures; tool failures belong in an `isError` result).
    pub fn fail(
        &mut self,
        token: CallToken,
        code: i32,
        message: &str,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, CallError> {
        let Some(slot) = self.live_slot(token)? else {
            return Ok(None);
        };
        let id = slot.id;
        let mut w = JsonWriter::new(out);
        jsonrpc::write_error(
            &mut w,
            Some(id.as_raw()),
            code,
            &[StrPart::Text(message)],
            None,
        );
        self.sent_for_call(w, token, true)
    }

    /// Completes a frame written for a call: its size (or the size it needed), releasing the
    /// call's slot when the frame ends the call.
    fn sent_for_call(
        &mut self,
        w: JsonWriter<'_>,
        token: CallToken,
        release: bool,
    ) -> Result<Option<Transmit>, CallError> {
        let len = w.finish().map_err(|e| CallError::BufferTooSmall {
            required: e.required,
        })?;
        if release {
            self.release(token);
        }
        Ok(Some(Transmit {
            len,
            route: Route::Call(token),
        }))
    }

    fn release(&mut self, token: CallToken) {
        if let Some(slot) = self.slots.get_mut(usize::from(token.slot)) {
            if slot.state != SlotState::Free {
                slot.free();
                self.occupied = self.occupied.saturating_sub(1);
            }
        }
    }

    /// Sends `notifications/progress` for a deferred call, if the client asked for progress
    /// (`Ok(None)` otherwise, or if the call was cancelled). `progress` must increase.
    pub fn progress(
        &mut self,
        token: CallToken,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, CallError> {
        let Some(slot) = self.live_slot(token)? else {
            return Ok(None);
        };
        if slot.progress_token.is_empty() {
            return Ok(None);
        }
        if progress.partial_cmp(&slot.last_progress) != Some(core::cmp::Ordering::Greater)
            || !progress.is_finite()
        {
            return Err(CallError::ProgressNotIncreasing);
        }
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_notification(&mut w, "notifications/progress");
        w.begin_object();
        w.key("progressToken");
        w.raw_value(slot.progress_token.as_raw());
        w.key("progress");
        w.f64(progress);
        // A non-finite total has no JSON form; it is left out (it is optional).
        if let Some(t) = total.filter(|t| t.is_finite()) {
            w.key("total");
            w.f64(t);
        }
        if let (true, Some(m)) = (slot.version.features().progress_message, message) {
            w.key("message");
            w.string(m);
        }
        w.end_object();
        jsonrpc::end_response(&mut w);
        let len = w.finish().map_err(|e| CallError::BufferTooSmall {
            required: e.required,
        })?;
        slot.last_progress = progress;
        Ok(Some(Transmit {
            len,
            route: Route::Call(token),
        }))
    }

    /// Sends `notifications/message` if the client wants this level: session-wide
    /// (`call: None`, legacy sessions, filtered by `logging/setLevel`) or tied to a call
    /// (2026-07-28 calls log only when the request carried a `logLevel`). `data` is
    /// written as a JSON string.
    pub fn log(
        &mut self,
        call: Option<CallToken>,
        level: LogLevel,
        logger: Option<&str>,
        data: &str,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, CallError> {
        let (threshold, route) = match call {
            None => match self.phase {
                Phase::Fresh => return Ok(None),
                _ => (Some(self.log_level), Route::Session),
            },
            Some(token) => {
                let session_level = self.log_level;
                let Some(slot) = self.live_slot(token)? else {
                    return Ok(None);
                };
                let threshold = if slot.version.is_modern() {
                    slot.log_level
                } else {
                    Some(session_level)
                };
                (threshold, Route::Call(token))
            }
        };
        if threshold.is_none_or(|t| level < t) {
            return Ok(None);
        }
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_notification(&mut w, "notifications/message");
        w.begin_object();
        w.key("level");
        w.string(level.as_str());
        if let Some(l) = logger {
            w.key("logger");
            w.string(l);
        }
        w.key("data");
        w.string(data);
        w.end_object();
        jsonrpc::end_response(&mut w);
        let len = w.finish().map_err(|e| CallError::BufferTooSmall {
            required: e.required,
        })?;
        Ok(Some(Transmit { len, route }))
    }
}

#[cfg(feature = "listen")]
fn write_subscription_meta(w: &mut JsonWriter<'_>, id: &str) {
    w.key("_meta");
    w.begin_object();
    w.key("io.modelcontextprotocol/subscriptionId");
    w.raw_value(id);
    w.end_object();
}

fn write_supported_versions(w: &mut JsonWriter<'_>) {
    w.begin_array();
    for v in ProtocolVersion::ALL.iter().rev() {
        w.string(v.as_str());
    }
    w.end_array();
}

/// The longest prefix of escaped JSON string content with at most `max` characters, cut
/// only between characters (never inside an escape), and whether anything was cut.
fn truncate_escaped(raw: &str, max: usize) -> (&str, bool) {
    let mut chars = raw.char_indices();
    let mut count = 0;
    while let Some((i, c)) = chars.next() {
        if count == max {
            return (raw.get(..i).unwrap_or(""), true);
        }
        if c == '\\' {
            // `\uXXXX` (and a following `\uXXXX` low surrogate) or a one-letter escape.
            if let Some((_, 'u')) = chars.next() {
                let mut rest = chars.clone();
                for _ in 0..4 {
                    rest.next();
                }
                chars = rest;
            }
        }
        count += 1;
    }
    (raw, false)
}
