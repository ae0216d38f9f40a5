//! The driver: one task owns the core's sans-IO [`mcp_rs_core::client::Client`] and runs
//! its loop. API calls arrive as [`Command`]s and are answered over oneshots; frames from
//! the transport go to `Client::handle`; after every input the driver drains
//! `poll_transmit` (frames out) and `poll_event`, and sleeps until `poll_timeout` (the
//! core's clock is milliseconds since the driver started, from tokio's clock).
//!
//! Every request is written by the core; the driver only decodes result payloads into
//! `serde_json::Value` for the API layer, and runs the application's handlers (server
//! requests and `input_required` rounds) on tasks of their own.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use mcp_rs_core::client::{
    Client as Core, ClientConfig, ClientError as CoreError, ClientInfo, Mode, Options,
    RequestHandle, RequestSlot,
};
use mcp_rs_core::wire::json::Limits;
use mcp_rs_core::wire::jsonrpc::StoredId;
use mcp_rs_core::wire::method::Method;
use mcp_rs_core::wire::peek::{peek, Peek};
use mcp_rs_core::wire::version::ProtocolVersion;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::error::{ClientError, Result};
use super::handlers::{HandlerError, Handlers};
use super::link::{Inbound, Link, Outgoing};
use super::request::OwnedRequest;
use super::shared::{lock, NotificationHandler, Shared};
use super::types::{CallOptions, ClientOptions, Era, Implementation, Notification, ProgressSink};
use super::{MAX_IN_FLIGHT, MAX_OUTGOING_FRAME, MAX_QUEUED_REPLY_BYTES};

mod events;

/// The call id a transport is given with the handshake's frames (API calls count up from 1).
const HANDSHAKE: u64 = u64::MAX;

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
    /// Send `notifications/roots/list_changed`; answer when it is queued.
    RootsChanged(oneshot::Sender<Result<()>>),
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
        responses: std::result::Result<Map<String, Value>, events::RoundFailure>,
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
    /// The default request timeout (handlers answer a round within the request's).
    request_timeout_ms: u64,
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
    let config_timeout = u64::try_from(setup.request_timeout.as_millis()).unwrap_or(u64::MAX);
    config.request_timeout_ms = config_timeout;
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
        request_timeout_ms: config_timeout,
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
                    capabilities: request.capabilities(),
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
            Command::RootsChanged(reply) => {
                let outcome = self
                    .write(|out| core.roots_list_changed(out).map(|t| t.len))
                    .map(|len| self.send_frame(len, 0));
                let _ = reply.send(outcome);
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
