//! The driver: one task owns the core's sans-IO [`mcp_rs_core::client::Client`] and runs
//! its loop. API calls arrive as [`Command`]s and are answered over oneshots; frames from
//! the transport go to `Client::handle`; after every input the driver drains
//! `poll_transmit` (frames out) and `poll_event`, and sleeps until `poll_timeout` (the
//! core's clock is milliseconds since the driver started, from tokio's clock).
//!
//! Every request is written by the core; the driver only decodes result payloads into
//! `serde_json::Value` for the API layer, and runs the application's handlers (server
//! requests and `input_required` rounds) on tasks of their own.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcp_rs_core::client::headers::param_headers;
use mcp_rs_core::client::{
    Answers, Client as Core, ClientConfig, ClientError as CoreError, ClientInfo, Event,
    HandshakeError, InputRound, InvalidFrame, Mode, Options, RequestHandle, RequestSlot, Response,
};
use mcp_rs_core::wire::json::{parse, Limits, RawJson};
use mcp_rs_core::wire::jsonrpc::StoredId;
use mcp_rs_core::wire::method::{Method, ServerMethod};
use mcp_rs_core::wire::peek::{peek, Peek};
use mcp_rs_core::wire::version::ProtocolVersion;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::error::{ClientError, Result};
use super::handlers::{HandlerError, Handlers, Want};
use super::link::{Inbound, Link, Outgoing};
use super::request::OwnedRequest;
use super::types::{
    CallOptions, ClientOptions, Era, Implementation, Notification, Progress, ProgressSink,
    ServerDetails,
};
use super::{MAX_IN_FLIGHT, MAX_OUTGOING_FRAME, MAX_QUEUED_REPLY_BYTES};

/// The call id a transport is given with the handshake's frames (API calls count up from 1).
const HANDSHAKE: u64 = u64::MAX;

/// A notification callback (runs on the driver task).
pub(crate) type NotificationHandler = Arc<dyn Fn(&Notification) + Send + Sync>;

/// The `x-mcp-header` marks of each known tool: (property, header name) pairs.
pub(crate) type ToolHeaders = Arc<Mutex<HashMap<String, Vec<(String, String)>>>>;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the API layer and the driver share.
#[derive(Default)]
pub(crate) struct Shared {
    /// Set once the driver has ended.
    pub(crate) closed: AtomicBool,
    pub(crate) handlers: Mutex<Vec<NotificationHandler>>,
    /// Notifications and progress dropped because a bounded channel was full.
    pub(crate) dropped: Arc<AtomicU64>,
    pub(crate) details: Mutex<Option<ServerDetails>>,
    pub(crate) version: Mutex<Option<ProtocolVersion>>,
    /// Bytes of answers to server requests queued and not yet written.
    pub(crate) reply_bytes: Arc<AtomicUsize>,
    pub(crate) tool_headers: ToolHeaders,
    /// Calls not yet ended.
    pub(crate) live: Mutex<HashSet<u64>>,
    pub(crate) next_call: AtomicU64,
}

impl Shared {
    /// The error a call gets when the driver is gone (calls pending when the connection
    /// ended were told what ended it).
    pub(crate) fn closed_error(&self) -> ClientError {
        ClientError::Closed
    }
}

/// An API call's order to the driver.
pub(crate) enum Command {
    /// Send a request; answer on `reply` with its raw result.
    Call {
        call: u64,
        request: OwnedRequest,
        options: CallOptions,
        reply: oneshot::Sender<Result<Value>>,
    },
    /// Cancel call `call` (if it is still in flight).
    Cancel { call: u64, reason: Option<String> },
    /// Close the write side (see [`Outgoing::Shutdown`]).
    Shutdown(oneshot::Sender<Result<()>>),
}

/// What a handler task hands back.
enum Answer {
    /// The answer to a legacy server request.
    Reply {
        id: StoredId,
        result: std::result::Result<Value, HandlerError>,
    },
    /// The answers of an `input_required` round of call `call`.
    Round {
        call: u64,
        responses: std::result::Result<Map<String, Value>, HandlerError>,
        state: Option<String>,
    },
}

/// A call in flight.
struct Call {
    reply: oneshot::Sender<Result<Value>>,
    request: OwnedRequest,
    options: Options,
    progress: Option<ProgressSink>,
    handle: RequestHandle,
    rounds: usize,
}

/// What the driver is started with.
pub(crate) struct Setup {
    pub(crate) era: Era,
    pub(crate) info: Implementation,
    pub(crate) handlers: Handlers,
    pub(crate) request_timeout: Duration,
    pub(crate) max_input_rounds: usize,
}

impl Setup {
    pub(crate) fn new(options: &ClientOptions) -> Setup {
        Setup {
            era: options.era.clone(),
            info: options.client_info.clone(),
            handlers: options.handlers.clone(),
            request_timeout: options.request_timeout,
            max_input_rounds: options.max_input_rounds,
        }
    }
}

struct Driver {
    shared: Arc<Shared>,
    out: mpsc::Sender<Outgoing>,
    calls: HashMap<u64, Call>,
    by_handle: HashMap<RequestHandle, u64>,
    handlers: Handlers,
    answers: mpsc::UnboundedSender<Answer>,
    ready: Option<oneshot::Sender<Result<()>>>,
    modern_only: bool,
    max_rounds: usize,
    start: Instant,
    buf: Vec<u8>,
    /// What ends the connection, once something does.
    fatal: Option<ClientError>,
}

/// Runs the driver until the client is dropped, the transport ends or the connection
/// fails; `ready` is answered when the handshake ends.
pub(crate) async fn run(
    setup: Setup,
    shared: Arc<Shared>,
    mut link: Link,
    mut commands: mpsc::UnboundedReceiver<Command>,
    ready: oneshot::Sender<Result<()>>,
) {
    let title = setup
        .info
        .extra
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut config = ClientConfig::new(ClientInfo {
        name: &setup.info.name,
        version: &setup.info.version,
        title: title.as_deref(),
    });
    config.capabilities = setup.handlers.capabilities();
    config.mode = match &setup.era {
        Era::Legacy { version } => {
            // A revision the core does not know is asked as the latest legacy one.
            if let Some(v) = ProtocolVersion::from_wire(version) {
                config.legacy_version = v;
            }
            Mode::Legacy
        }
        Era::Modern | Era::Auto => Mode::Auto,
    };
    config.request_timeout_ms =
        u64::try_from(setup.request_timeout.as_millis()).unwrap_or(u64::MAX);
    let mut slots = vec![RequestSlot::EMPTY; MAX_IN_FLIGHT];
    let mut core = Core::from_slots(config, &mut slots);
    let (answers, mut answered) = mpsc::unbounded_channel();
    let mut d = Driver {
        shared,
        out: link.out.clone(),
        calls: HashMap::new(),
        by_handle: HashMap::new(),
        handlers: setup.handlers,
        answers,
        ready: Some(ready),
        modern_only: setup.era == Era::Modern,
        max_rounds: setup.max_input_rounds,
        start: Instant::now(),
        buf: vec![0; 64 * 1024],
        fatal: None,
    };
    let now = d.now();
    match d.write(|out| core.connect(now, out).map(|s| s.len)) {
        Ok(len) => d.send_own_frame(len),
        Err(e) => d.fatal = Some(e),
    }
    let end = loop {
        d.flush(&mut core);
        if let Some(e) = d.fatal.take() {
            break e;
        }
        let deadline = core
            .poll_timeout()
            .map(|ms| d.start + Duration::from_millis(ms.saturating_add(1)));
        tokio::select! {
            command = commands.recv() => match command {
                Some(command) => d.command(&mut core, command),
                None => break ClientError::Closed,
            },
            Some(answer) = answered.recv() => d.answer(&mut core, answer),
            inbound = link.inbound.recv() => match inbound {
                Some(Inbound::Frame(frame)) => d.frame(&mut core, &frame),
                Some(Inbound::Oversized { limit }) => d.fail_all(&ClientError::Oversized { limit }),
                Some(Inbound::Failed { call, error }) => d.transport_failed(&mut core, call, error),
                Some(Inbound::Closed(e)) => break e,
                None => break ClientError::Closed,
            },
            () = sleep_until(deadline) => core.handle_timeout(d.now()),
        }
    };
    d.end(end);
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A JSON value from the core's view of it.
fn value(raw: RawJson<'_>) -> Value {
    serde_json::from_str(raw.as_str()).unwrap_or(Value::Null)
}

/// The `x-mcp-header` marks of `schema`, or `None` if they are invalid.
pub(crate) fn marks_of(schema: RawJson<'_>) -> Option<Vec<(String, String)>> {
    let marks = param_headers(schema).ok()?;
    Some(
        marks
            .map(|m| (m.property.to_string(), m.header.to_string()))
            .collect(),
    )
}

/// Whether a tool's `inputSchema` has valid `x-mcp-header` marks (a tool without is valid).
pub(crate) fn valid_marks(schema: &Value) -> bool {
    let text = schema.to_string();
    match parse(text.as_bytes(), Limits::default()) {
        Ok(raw) => param_headers(raw).is_ok(),
        Err(_) => true, // deeper than the scanner reads: nothing to mirror
    }
}

fn handshake_error(e: HandshakeError) -> ClientError {
    match e {
        HandshakeError::Refused { code } => ClientError::Protocol {
            code,
            message: "the server refused the handshake".into(),
            data: None,
        },
        HandshakeError::UnsupportedVersion => ClientError::Version(
            "the server chose a protocol version this client does not speak".into(),
        ),
        HandshakeError::TimedOut => ClientError::Timeout,
        other => ClientError::Malformed(format!("handshake: {other}")),
    }
}

impl Driver {
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Runs a core command that writes into the buffer, growing it (up to
    /// [`MAX_OUTGOING_FRAME`]) while the frame does not fit.
    fn write<T>(
        &mut self,
        mut f: impl FnMut(&mut [u8]) -> std::result::Result<T, CoreError>,
    ) -> Result<T> {
        loop {
            match f(&mut self.buf) {
                Err(CoreError::BufferTooSmall { required }) => {
                    if required > MAX_OUTGOING_FRAME {
                        return Err(ClientError::TooLarge {
                            limit: MAX_OUTGOING_FRAME,
                        });
                    }
                    let grown = required.max(self.buf.len().saturating_mul(2));
                    self.buf.resize(grown.min(MAX_OUTGOING_FRAME), 0);
                }
                Err(e) => return Err(ClientError::Refused(e.to_string())),
                Ok(t) => return Ok(t),
            }
        }
    }

    /// Queues `buf[..len]`, the request of call `call`, for the transport; a transport
    /// that takes nothing more ends the connection.
    fn send_frame(&mut self, len: usize, call: u64) {
        let bytes = self.buf.get(..len).unwrap_or_default().to_vec();
        self.queue(bytes, call, 0);
    }

    /// Queues a frame the core wrote on its own (`poll_transmit`) or an answer to a server
    /// request: answers count against [`MAX_QUEUED_REPLY_BYTES`], and the handshake's
    /// requests are tagged so a transport can fail the handshake.
    fn send_own_frame(&mut self, len: usize) {
        let bytes = self.buf.get(..len).unwrap_or_default().to_vec();
        let (reply, call) = match peek(&bytes, Limits::default()) {
            Peek::Response => (bytes.len(), 0),
            Peek::Request(r)
                if matches!(r.method(), Some(Method::Initialize | Method::Discover)) =>
            {
                (0, HANDSHAKE)
            }
            _ => (0, 0),
        };
        self.queue(bytes, call, reply);
    }

    fn queue(&mut self, bytes: Vec<u8>, call: u64, reply: usize) {
        if reply > 0 {
            let queued = self.shared.reply_bytes.fetch_add(reply, Ordering::Relaxed);
            if queued > MAX_QUEUED_REPLY_BYTES {
                self.shared.reply_bytes.fetch_sub(reply, Ordering::Relaxed);
                self.fatal = Some(ClientError::Io(std::io::Error::other(format!(
                    "the server left {queued} bytes of answers to its requests unread: closing"
                ))));
                return;
            }
        }
        let frame = Outgoing::Frame { bytes, call, reply };
        match self.out.try_send(frame) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.fatal = Some(ClientError::Io(std::io::Error::other(format!(
                    "the server did not read {} queued lines: closing",
                    super::MAX_QUEUED_LINES
                ))));
            }
            Err(mpsc::error::TrySendError::Closed(_)) => self.fatal = Some(ClientError::Closed),
        }
    }

    /// Drains the core's frames and events.
    fn flush(&mut self, core: &mut Core<'_>) {
        while self.fatal.is_none() {
            match self.write(|out| core.poll_transmit(out).map(|t| t.map(|t| t.len))) {
                Ok(Some(len)) => self.send_own_frame(len),
                Ok(None) => break,
                Err(e) => {
                    self.fatal = Some(e);
                    return;
                }
            }
        }
        while let Some(event) = core.poll_event() {
            self.event(core, event);
        }
    }

    fn frame(&mut self, core: &mut Core<'_>, frame: &[u8]) {
        let mut received = core.handle(self.now(), frame);
        while let Some(event) = received.next_event(core) {
            self.event(core, event);
        }
    }

    fn event(&mut self, core: &mut Core<'_>, event: Event<'_>) {
        match event {
            Event::Connected { version, .. } => self.connected(version),
            Event::HandshakeFailed(e) => {
                let e = handshake_error(e);
                self.fatal = Some(e.duplicate());
                if let Some(ready) = self.ready.take() {
                    let _ = ready.send(Err(e));
                }
            }
            Event::Handshake(h) => {
                let result = value(h.result);
                if h.method == Method::Initialize {
                    let chosen = result.get("protocolVersion").and_then(Value::as_str);
                    if let Some(v) = chosen.and_then(ProtocolVersion::from_wire) {
                        let _ = self.out.try_send(Outgoing::Negotiated(v));
                    }
                }
                let info = h.server_info().map(value);
                *lock(&self.shared.details) = Some(ServerDetails {
                    protocol_version: String::new(),
                    supported_versions: result
                        .get("supportedVersions")
                        .and_then(|v| serde_json::from_value(v.clone()).ok())
                        .unwrap_or_default(),
                    capabilities: result
                        .get("capabilities")
                        .cloned()
                        .unwrap_or_else(|| Value::Object(Map::new())),
                    server_info: info.and_then(|i| serde_json::from_value(i).ok()),
                    instructions: h.instructions().map(|i| i.to_string()),
                    raw: result,
                });
            }
            Event::Result(response) => self.result(response),
            Event::Error {
                handle, error: e, ..
            } => self.finish(
                handle,
                Err(ClientError::Protocol {
                    code: e.code,
                    message: e.message.to_string(),
                    data: e.data.map(value),
                }),
            ),
            Event::InputRequired(round) => self.round(core, round),
            Event::TimedOut { handle, .. } => self.finish(handle, Err(ClientError::Timeout)),
            Event::Progress(p) => {
                let Some(call) = self
                    .by_handle
                    .get(&p.handle)
                    .and_then(|c| self.calls.get(c))
                else {
                    return;
                };
                let progress = Progress {
                    progress: p.progress,
                    total: p.total,
                    message: p.message.map(|m| m.to_string()),
                };
                if let Some(sink) = &call.progress {
                    if !sink.deliver(progress) {
                        count_drop(&self.shared.dropped, "progress notification");
                    }
                }
            }
            Event::Request(request) => {
                let want = match request.method {
                    ServerMethod::CreateMessage => Want::Sampling,
                    ServerMethod::Elicit => Want::Elicitation,
                    _ => Want::Roots,
                };
                let params = request.params.map(value).unwrap_or(Value::Null);
                let (handlers, answers, id) =
                    (self.handlers.clone(), self.answers.clone(), request.id);
                tokio::spawn(async move {
                    let result = handlers.answer(want, params).await;
                    let _ = answers.send(Answer::Reply { id, result });
                });
            }
            Event::ListChanged(kind) => self.notify(&Notification::ListChanged(kind)),
            Event::ResourceUpdated { uri } => self.notify(&Notification::ResourceUpdated {
                uri: uri.to_string(),
            }),
            Event::Log(log) => self.notify(&Notification::Log {
                level: log.level,
                logger: log.logger.map(|l| l.to_string()),
                data: value(log.data),
            }),
            Event::Cancelled { request_id, reason } => self.notify(&Notification::Cancelled {
                request_id: request_id.as_raw().to_owned(),
                reason: reason.map(|r| r.to_string()),
            }),
            Event::Invalid(InvalidFrame::MalformedResult { handle, reason, .. }) => {
                self.finish(handle, Err(ClientError::Malformed(reason.into())));
            }
            Event::Invalid(invalid) => {
                tracing::debug!("unusable message from the server: {invalid:?}");
            }
            _ => {}
        }
    }

    fn connected(&mut self, version: ProtocolVersion) {
        *lock(&self.shared.version) = Some(version);
        if let Some(d) = lock(&self.shared.details).as_mut() {
            d.protocol_version = version.as_str().to_owned();
        }
        let _ = self.out.try_send(Outgoing::Negotiated(version));
        let outcome = if self.modern_only && !version.is_modern() {
            let e = ClientError::Version(format!(
                "the server does not speak 2026-07-28 (it chose {})",
                version.as_str()
            ));
            self.fatal = Some(e.duplicate());
            Err(e)
        } else {
            Ok(())
        };
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(outcome);
        }
    }

    fn result(&mut self, response: Response<'_>) {
        if response.method == Method::ToolsList {
            if let Ok(page) = response.page() {
                let mut known = lock(&self.shared.tool_headers);
                for item in page.items() {
                    let Some(name) = item.get("name").and_then(|n| n.as_string()) else {
                        continue;
                    };
                    let marks = item.get("inputSchema").map_or(Some(Vec::new()), marks_of);
                    match marks {
                        Some(marks) => known.insert(name.to_string(), marks),
                        None => known.remove(&name.to_string()),
                    };
                }
            }
        }
        self.finish(response.handle, Ok(value(response.result)));
    }

    /// Ends the call of `handle` with `outcome`.
    fn finish(&mut self, handle: RequestHandle, outcome: Result<Value>) {
        let Some(call) = self.by_handle.remove(&handle) else {
            return;
        };
        self.end_call(call, outcome);
    }

    fn end_call(&mut self, call: u64, outcome: Result<Value>) {
        lock(&self.shared.live).remove(&call);
        if let Some(c) = self.calls.remove(&call) {
            self.by_handle.remove(&c.handle);
            let _ = c.reply.send(outcome);
        }
    }

    /// Every call fails with `error` (an oversized line may have been any one's answer).
    fn fail_all(&mut self, error: &ClientError) {
        let calls: Vec<u64> = self.calls.keys().copied().collect();
        for call in calls {
            self.end_call(call, Err(error.duplicate()));
        }
    }

    fn transport_failed(&mut self, core: &mut Core<'_>, call: u64, error: ClientError) {
        if call == HANDSHAKE {
            self.fatal = Some(error.duplicate());
            if let Some(ready) = self.ready.take() {
                let _ = ready.send(Err(error));
            }
            return;
        }
        if let Some(handle) = self.calls.get(&call).map(|c| c.handle) {
            // Forget it in the core; the cancellation frame is not sent (the request
            // never got an answer over this transport).
            let _ = self.write(|out| core.cancel(handle, None, out));
        }
        self.end_call(call, Err(error));
    }

    /// An `input_required` round: the handlers answer it on a task of their own.
    fn round(&mut self, core: &mut Core<'_>, round: InputRound<'_>) {
        let Some(&call) = self.by_handle.get(&round.handle) else {
            return;
        };
        let Some(c) = self.calls.get_mut(&call) else {
            return;
        };
        c.rounds += 1;
        if c.rounds > self.max_rounds {
            let handle = c.handle;
            let _ = self.write(|out| core.cancel(handle, None, out));
            let e = format!(
                "the server asked for input more than {} times",
                self.max_rounds
            );
            return self.end_call(call, Err(ClientError::Malformed(e)));
        }
        let requests: Vec<(String, Option<ServerMethod>, Value)> = round
            .requests()
            .map(|r| {
                let params = r.params.map(value).unwrap_or(Value::Null);
                (r.key.to_string(), r.method, params)
            })
            .collect();
        let state = round.request_state.map(|s| s.to_string());
        let (handlers, answers) = (self.handlers.clone(), self.answers.clone());
        tokio::spawn(async move {
            let mut responses = Map::new();
            let mut failed = None;
            for (key, method, params) in requests {
                let want = match method {
                    Some(ServerMethod::CreateMessage) => Want::Sampling,
                    Some(ServerMethod::Elicit) => Want::Elicitation,
                    Some(ServerMethod::ListRoots) => Want::Roots,
                    _ => {
                        failed = Some(HandlerError::new(-32601, "unknown input request"));
                        break;
                    }
                };
                match handlers.answer(want, params).await {
                    Ok(result) => {
                        responses.insert(key, result);
                    }
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            let responses = match failed {
                Some(e) => Err(e),
                None => Ok(responses),
            };
            let _ = answers.send(Answer::Round {
                call,
                responses,
                state,
            });
        });
    }

    fn answer(&mut self, core: &mut Core<'_>, answer: Answer) {
        match answer {
            Answer::Reply { id, result } => {
                let written = match result {
                    Ok(v) => {
                        let text = v.to_string();
                        self.write(|out| core.respond(&id, &text, out).map(|t| t.len))
                    }
                    Err(e) => self.write(|out| {
                        core.respond_error(&id, e.code, &e.message, out)
                            .map(|t| t.len)
                    }),
                };
                match written {
                    Ok(len) => self.send_own_frame(len),
                    Err(e) => tracing::warn!("answering the server's request failed: {e}"),
                }
            }
            Answer::Round {
                call,
                responses,
                state,
            } => {
                let Some(c) = self.calls.get(&call) else {
                    return;
                };
                let handle = c.handle;
                let responses = match responses {
                    Ok(r) => Value::Object(r).to_string(),
                    Err(e) => {
                        let _ = self.write(|out| core.cancel(handle, None, out));
                        let e = ClientError::Protocol {
                            code: i64::from(e.code),
                            message: e.message,
                            data: None,
                        };
                        return self.end_call(call, Err(e));
                    }
                };
                let (request, options) = (c.request.clone(), c.options);
                let now = self.now();
                let answers = Answers {
                    input_responses: Some(&responses),
                    request_state: state.as_deref(),
                };
                let sent = self.write(|out| {
                    core.retry(handle, &request.as_core(), answers, options, now, out)
                });
                match sent {
                    Ok(sent) => self.send_frame(sent.len, call),
                    Err(e) => self.end_call(call, Err(e)),
                }
            }
        }
    }

    fn command(&mut self, core: &mut Core<'_>, command: Command) {
        match command {
            Command::Call {
                call,
                request,
                options,
                reply,
            } => {
                let core_options = Options {
                    timeout_ms: options
                        .timeout
                        .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
                    progress: options.progress.is_some(),
                    log_level: options.log_level,
                };
                let now = self.now();
                let sent = self.write(|out| core.send(&request.as_core(), core_options, now, out));
                let sent = match sent {
                    Ok(sent) => sent,
                    Err(e) => {
                        lock(&self.shared.live).remove(&call);
                        let _ = reply.send(Err(e));
                        return;
                    }
                };
                self.by_handle.insert(sent.handle, call);
                self.calls.insert(
                    call,
                    Call {
                        reply,
                        request,
                        options: core_options,
                        progress: options.progress,
                        handle: sent.handle,
                        rounds: 0,
                    },
                );
                self.send_frame(sent.len, call);
            }
            Command::Cancel { call, reason } => {
                let Some(handle) = self.calls.get(&call).map(|c| c.handle) else {
                    return;
                };
                match self.write(|out| core.cancel(handle, reason.as_deref(), out)) {
                    Ok(Some(tx)) => self.send_frame(tx.len, 0),
                    Ok(None) => {}
                    // `initialize` cannot be cancelled: it is only abandoned.
                    Err(e) => tracing::debug!("cancel: {e}"),
                }
                self.end_call(call, Err(ClientError::Cancelled));
            }
            Command::Shutdown(ack) => {
                if let Err(mpsc::error::TrySendError::Full(msg)) =
                    self.out.try_send(Outgoing::Shutdown(ack))
                {
                    let out = self.out.clone();
                    tokio::spawn(async move { out.send(msg).await });
                }
            }
        }
    }

    fn notify(&self, notification: &Notification) {
        let handlers: Vec<NotificationHandler> = lock(&self.shared.handlers).clone();
        for handler in handlers {
            handler(notification);
        }
    }

    /// The connection ended with `error`: every call and the handshake fail with it.
    fn end(mut self, error: ClientError) {
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(Err(error.duplicate()));
        }
        self.shared.closed.store(true, Ordering::Release);
        self.fail_all(&error);
    }
}

/// Counts a notification a full bounded channel could not take, with a warning at the first
/// drop and at every power of two after it (a flood does not flood the log as well).
pub(crate) fn count_drop(dropped: &AtomicU64, what: &str) {
    let n = dropped.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_power_of_two() {
        tracing::warn!("a {what} found its channel full and was dropped ({n} dropped so far)");
    } else {
        tracing::debug!("a {what} found its channel full and was dropped");
    }
}
