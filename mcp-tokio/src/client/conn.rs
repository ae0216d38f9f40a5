//! The connection machinery: pending requests, the reader and writer tasks.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcp_rs_core::wire::framing::{Frame, LineFramer};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::error::{ClientError, Result};
use super::types::{Notification, Progress, ProgressSink};

/// Bytes read from the transport per `read` call.
const READ_CHUNK: usize = 64 * 1024;

pub(crate) type Handler = Arc<dyn Fn(&Notification) + Send + Sync>;

/// A message for the writer task.
pub(crate) enum Outgoing {
    /// One serialized JSON-RPC message (the newline is added by the writer).
    Line {
        line: String,
        /// Acknowledges the write.
        ack: Option<oneshot::Sender<Result<()>>>,
        /// Bytes counted in [`Shared::reply_bytes`] (an answer to a server's request), or 0.
        reply: usize,
    },
    /// Flush, shut down and drop the write half, then acknowledge.
    Shutdown(oneshot::Sender<Result<()>>),
}

struct Pending {
    tx: oneshot::Sender<Result<Value>>,
    method: String,
}

#[derive(Default)]
struct State {
    pending: HashMap<u64, Pending>,
    progress: HashMap<String, ProgressSink>,
    closed: bool,
}

/// Lines the client queues for a server that does not read before it gives up on it.
pub const MAX_QUEUED_LINES: usize = 4096;

/// Bytes of answers to the server's own requests (`ping`, and the -32601 of anything else)
/// the client queues before it gives up on the connection: they echo the server's ids, which
/// may be long, so [`MAX_QUEUED_LINES`] alone would not bound their memory. One answer is
/// always admitted, so the bound is this plus one answer (at most
/// [`ClientOptions::max_line`](super::ClientOptions::max_line) and a few bytes).
pub const MAX_QUEUED_REPLY_BYTES: usize = 16 << 20;

/// State shared by the client, its tasks and its in-flight requests.
pub(crate) struct Shared {
    state: Mutex<State>,
    handlers: Mutex<Vec<Handler>>,
    out: mpsc::UnboundedSender<Outgoing>,
    /// Lines queued for the writer and not yet written.
    queued: AtomicUsize,
    /// Bytes of those lines that answer the server's requests.
    reply_bytes: AtomicUsize,
    /// Set (once) when the connection closes: the reader and writer tasks stop.
    stop: watch::Sender<bool>,
    /// Notifications and progress dropped because a bounded channel was full.
    dropped: Arc<AtomicU64>,
    next_id: AtomicU64,
    next_token: AtomicU64,
    /// `_meta` members added to every request (2026-07-28), or `None` (legacy).
    modern_meta: Mutex<Option<Map<String, Value>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    pub(crate) fn new() -> (Arc<Self>, mpsc::UnboundedReceiver<Outgoing>) {
        let (out, rx) = mpsc::unbounded_channel();
        let shared = Shared {
            state: Mutex::new(State::default()),
            handlers: Mutex::new(Vec::new()),
            out,
            queued: AtomicUsize::new(0),
            reply_bytes: AtomicUsize::new(0),
            stop: watch::Sender::new(false),
            dropped: Arc::new(AtomicU64::new(0)),
            next_id: AtomicU64::new(1),
            next_token: AtomicU64::new(1),
            modern_meta: Mutex::new(None),
        };
        (Arc::new(shared), rx)
    }

    pub(crate) fn set_modern_meta(&self, meta: Option<Map<String, Value>>) {
        *lock(&self.modern_meta) = meta;
    }

    pub(crate) fn is_modern(&self) -> bool {
        lock(&self.modern_meta).is_some()
    }

    pub(crate) fn add_handler(&self, handler: Handler) {
        lock(&self.handlers).push(handler);
    }

    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// The counter behind [`Client::dropped_notifications`](super::Client::dropped_notifications).
    pub(crate) fn dropped(&self) -> &Arc<AtomicU64> {
        &self.dropped
    }

    /// Counts a line into the writer's queue (`reply`: its bytes, if it answers a request of
    /// the server). A closed connection admits nothing; a server that has not read
    /// [`MAX_QUEUED_LINES`] lines or [`MAX_QUEUED_REPLY_BYTES`] of answers ends the
    /// connection (it cannot grow our memory).
    fn admit(&self, reply: usize) -> bool {
        if self.is_closed() {
            return false;
        }
        let queued = self.queued.fetch_add(1, Ordering::Relaxed) + 1;
        if queued > MAX_QUEUED_LINES {
            tracing::warn!("the server reads nothing: {queued} messages queued; closing");
            self.close(&ClientError::Malformed(format!(
                "the server stopped reading ({MAX_QUEUED_LINES} messages queued)"
            )));
            return false;
        }
        if reply > 0 {
            let before = self.reply_bytes.fetch_add(reply, Ordering::Relaxed);
            if before >= MAX_QUEUED_REPLY_BYTES {
                tracing::warn!(
                    "the server reads nothing: {before} bytes of answers to its requests queued; closing"
                );
                self.close(&ClientError::Malformed(format!(
                    "the server stopped reading ({before} bytes of answers to its requests queued)"
                )));
                return false;
            }
        }
        true
    }

    /// Queues a line for the writer without waiting.
    pub(crate) fn send_line(&self, line: String) -> bool {
        tracing::trace!(target: "mcp_rs_tokio::client", "→ {line}");
        self.admit(0)
            && self
                .out
                .send(Outgoing::Line {
                    line,
                    ack: None,
                    reply: 0,
                })
                .is_ok()
    }

    /// Queues an answer to one of the server's requests, counted against
    /// [`MAX_QUEUED_REPLY_BYTES`].
    fn send_reply(&self, line: String) -> bool {
        tracing::trace!(target: "mcp_rs_tokio::client", "→ {line}");
        let reply = line.len() + 1;
        self.admit(reply)
            && self
                .out
                .send(Outgoing::Line {
                    line,
                    ack: None,
                    reply,
                })
                .is_ok()
    }

    /// Queues a line and waits until it is written.
    pub(crate) async fn write_line(&self, line: String) -> Result<()> {
        tracing::trace!(target: "mcp_rs_tokio::client", "→ {line}");
        let (ack, done) = oneshot::channel();
        if !self.admit(0) {
            return Err(ClientError::Closed);
        }
        self.out
            .send(Outgoing::Line {
                line,
                ack: Some(ack),
                reply: 0,
            })
            .map_err(|_| ClientError::Closed)?;
        done.await.unwrap_or(Err(ClientError::Closed))
    }

    /// Asks the writer to shut down its half and waits for it.
    pub(crate) async fn shutdown_writer(&self) -> Result<()> {
        let (ack, done) = oneshot::channel();
        if self.out.send(Outgoing::Shutdown(ack)).is_err() {
            return Ok(()); // The writer is already gone.
        }
        done.await.unwrap_or(Ok(()))
    }

    /// Sends `notifications/cancelled` for `id`.
    pub(crate) fn send_cancel(&self, id: u64, reason: Option<&str>) {
        let mut params = json!({ "requestId": id });
        if let (Some(reason), Some(obj)) = (reason, params.as_object_mut()) {
            obj.insert("reason".into(), Value::String(reason.to_owned()));
        }
        let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params});
        self.send_line(msg.to_string());
    }

    fn take_pending(&self, id: u64) -> Option<Pending> {
        lock(&self.state).pending.remove(&id)
    }

    /// Cancels a pending request: it fails with [`ClientError::Cancelled`] and the server is sent
    /// `notifications/cancelled`. Returns whether the request was pending.
    pub(crate) fn cancel(&self, id: u64, reason: Option<&str>) -> bool {
        match self.take_pending(id) {
            Some(pending) => {
                tracing::debug!("cancelling request {id} ({})", pending.method);
                if cancellable(&pending.method) {
                    self.send_cancel(id, reason);
                }
                let _ = pending.tx.send(Err(ClientError::Cancelled));
                true
            }
            None => false,
        }
    }

    /// Marks the connection closed, fails every pending request with `error` and stops the
    /// reader and writer tasks (what is still queued for the server is dropped).
    pub(crate) fn close(&self, error: &ClientError) {
        let pending: Vec<Pending> = {
            let mut state = lock(&self.state);
            state.closed = true;
            state.progress.clear();
            state.pending.drain().map(|(_, p)| p).collect()
        };
        for p in pending {
            let _ = p.tx.send(Err(error.duplicate()));
        }
        self.stop.send_replace(true);
    }

    /// Fails every pending request with `error`, leaving the connection open.
    fn fail_pending(&self, error: &ClientError) {
        let pending: Vec<Pending> = lock(&self.state).pending.drain().map(|(_, p)| p).collect();
        for p in pending {
            let _ = p.tx.send(Err(error.duplicate()));
        }
    }

    /// Sends a request now and returns its id and a future of the response.
    ///
    /// The future owns a guard: dropping it before the response arrives sends
    /// `notifications/cancelled`. When `timeout` expires it sends `notifications/cancelled`
    /// with reason `"timeout"` and resolves to [`ClientError::Timeout`].
    pub(crate) fn start_request(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
        progress: Option<ProgressSink>,
        log_level: Option<String>,
        timeout: Duration,
    ) -> (u64, impl Future<Output = Result<Value>> + Send + 'static) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let token = progress
            .as_ref()
            .map(|_| self.next_token.fetch_add(1, Ordering::Relaxed));
        let built = self.build_request(id, method, params, token, log_level);
        let token_key = token.map(|t| Value::from(t).to_string());
        let registered = built.and_then(|line| {
            {
                let mut state = lock(&self.state);
                if state.closed {
                    return Err(ClientError::Closed);
                }
                state.pending.insert(
                    id,
                    Pending {
                        tx,
                        method: method.to_owned(),
                    },
                );
                if let (Some(key), Some(sink)) = (&token_key, progress) {
                    state.progress.insert(key.clone(), sink);
                }
            }
            if self.send_line(line) {
                Ok(())
            } else {
                self.close(&ClientError::Closed);
                Err(ClientError::Closed)
            }
        });
        let guard = Guard {
            shared: Arc::clone(self),
            id,
            token_key,
        };
        let fut = async move {
            let guard = guard;
            registered?;
            let mut rx = rx;
            match tokio::time::timeout(timeout, &mut rx).await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err(ClientError::Closed),
                Err(_elapsed) => {
                    if let Some(pending) = guard.shared.take_pending(guard.id) {
                        tracing::debug!("request {} timed out after {timeout:?}", guard.id);
                        if cancellable(&pending.method) {
                            guard.shared.send_cancel(guard.id, Some("timeout"));
                        }
                        Err(ClientError::Timeout)
                    } else {
                        // The response won the race.
                        rx.try_recv().unwrap_or(Err(ClientError::Timeout))
                    }
                }
            }
        };
        (id, fut)
    }

    fn build_request(
        &self,
        id: u64,
        method: &str,
        params: Option<Value>,
        token: Option<u64>,
        log_level: Option<String>,
    ) -> Result<String> {
        let modern = lock(&self.modern_meta).clone();
        let mut extra_meta = Map::new();
        if let Some(token) = token {
            extra_meta.insert("progressToken".into(), Value::from(token));
        }
        if let (Some(level), Some(_)) = (log_level, &modern) {
            extra_meta.insert(
                "io.modelcontextprotocol/logLevel".into(),
                Value::String(level),
            );
        }
        if let Some(modern) = modern {
            extra_meta.extend(modern);
        }
        let params = if extra_meta.is_empty() {
            params
        } else {
            let mut obj = match params {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(obj)) => obj,
                Some(other) => {
                    return Err(ClientError::Malformed(format!(
                        "request params must be an object, not {other}"
                    )))
                }
            };
            let meta = obj
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(meta) = meta else {
                return Err(ClientError::Malformed(
                    "params._meta must be an object".into(),
                ));
            };
            for (k, v) in extra_meta {
                meta.entry(k).or_insert(v);
            }
            Some(Value::Object(obj))
        };
        let mut msg = Map::new();
        msg.insert("jsonrpc".into(), Value::from("2.0"));
        msg.insert("id".into(), Value::from(id));
        msg.insert("method".into(), Value::from(method));
        if let Some(params) = params.filter(|p| !p.is_null()) {
            msg.insert("params".into(), params);
        }
        Ok(Value::Object(msg).to_string())
    }

    // ---- incoming ---------------------------------------------------------------------------

    fn on_line(&self, line: &[u8]) {
        if tracing::enabled!(tracing::Level::TRACE) {
            tracing::trace!(target: "mcp_rs_tokio::client", "← {}", String::from_utf8_lossy(line));
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Array(batch)) => batch.into_iter().for_each(|m| self.on_message(m)),
            Ok(msg) => self.on_message(msg),
            Err(e) => tracing::warn!("ignoring a line from the server that is not JSON: {e}"),
        }
    }

    fn on_message(&self, msg: Value) {
        let Value::Object(mut obj) = msg else {
            tracing::warn!("ignoring a message from the server that is not an object");
            return;
        };
        let id = obj.remove("id").filter(|id| !id.is_null());
        let method = match obj.remove("method") {
            Some(Value::String(m)) => Some(m),
            Some(_) => {
                tracing::warn!("ignoring a message with a non-string method");
                return;
            }
            None => None,
        };
        let params = obj.remove("params");
        match (method, id) {
            (Some(method), Some(id)) => self.on_server_request(&method, id),
            (Some(method), None) => self.on_notification(Notification { method, params }),
            (None, id) => self.on_response(id, obj),
        }
    }

    fn on_response(&self, id: Option<Value>, mut obj: Map<String, Value>) {
        let outcome = if let Some(error) = obj.remove("error") {
            Err(protocol_error(error))
        } else if let Some(result) = obj.remove("result") {
            Ok(result)
        } else {
            Err(ClientError::Malformed(
                "response without result or error".to_owned(),
            ))
        };
        let pending = match id.as_ref().map(Value::as_u64) {
            Some(Some(id)) => self.take_pending(id),
            Some(None) => {
                tracing::warn!("ignoring a response with an id this client never uses: {id:?}");
                return;
            }
            None => {
                // An error the server could not attribute (e.g. our line was too long for it).
                // Attribute it when exactly one request is waiting.
                let mut state = lock(&self.state);
                if state.pending.len() == 1 {
                    let key = state.pending.keys().next().copied();
                    key.and_then(|k| state.pending.remove(&k))
                } else {
                    drop(state);
                    tracing::warn!("server error without id: {outcome:?}");
                    return;
                }
            }
        };
        match pending {
            Some(p) => {
                let _ = p.tx.send(outcome);
            }
            None => tracing::debug!("ignoring a response to {id:?}: no longer pending"),
        }
    }

    fn on_notification(&self, notification: Notification) {
        if notification.method == "notifications/progress" {
            let params = notification.params.as_ref();
            let key = params
                .and_then(|p| p.get("progressToken"))
                .map(Value::to_string);
            let sink = key.and_then(|k| lock(&self.state).progress.get(&k).cloned());
            if let Some(sink) = sink {
                match params.cloned().map(serde_json::from_value::<Progress>) {
                    Some(Ok(progress)) => {
                        if !sink.deliver(progress) {
                            count_drop(&self.dropped, "progress notification");
                        }
                    }
                    _ => tracing::warn!("ignoring a malformed progress notification"),
                }
                return;
            }
        }
        let handlers: Vec<Handler> = lock(&self.handlers).clone();
        if handlers.is_empty() {
            tracing::debug!("unhandled notification {}", notification.method);
        }
        for handler in handlers {
            handler(&notification);
        }
    }

    fn on_server_request(&self, method: &str, id: Value) {
        let reply = if method == "ping" {
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        } else {
            tracing::debug!("answering the server's {method} request with -32601");
            json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601,
                "message": format!("Method not found: this client does not handle {method}")
            }})
        };
        self.send_reply(reply.to_string());
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

/// Whether the server may be told about a cancellation: `initialize` must never be cancelled
/// (the request is still abandoned locally).
fn cancellable(method: &str) -> bool {
    method != "initialize"
}

fn protocol_error(error: Value) -> ClientError {
    let code = error.get("code").and_then(Value::as_i64);
    let message = error.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(code), Some(message)) => ClientError::Protocol {
            code,
            message: message.to_owned(),
            data: error.get("data").cloned(),
        },
        _ => ClientError::Malformed(format!("malformed JSON-RPC error object: {error}")),
    }
}

/// Removes a request's bookkeeping when its future ends or is dropped; if it was still
/// pending (the future was dropped), tells the server.
struct Guard {
    shared: Arc<Shared>,
    id: u64,
    token_key: Option<String>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(key) = &self.token_key {
            lock(&self.shared.state).progress.remove(key);
        }
        if let Some(pending) = self.shared.take_pending(self.id) {
            if cancellable(&pending.method) {
                tracing::debug!(
                    "request {} dropped before its response: cancelling",
                    self.id
                );
                self.shared
                    .send_cancel(self.id, Some("request dropped by the client"));
            }
        }
    }
}

/// Reads into `buf`, giving up at `deadline` (`None`: never). The read is polled before the
/// timer, so data already there is taken even after the deadline.
async fn read_by<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut [u8],
    deadline: Option<Instant>,
) -> Option<io::Result<usize>> {
    match deadline {
        None => Some(reader.read(buf).await),
        Some(at) => tokio::time::timeout_at(at, reader.read(buf)).await.ok(),
    }
}

/// The reader task: frames lines with a bounded [`LineFramer`] and dispatches them. A line
/// that has started must end within `line_timeout`, or the connection is closed with
/// [`ClientError::LineTimeout`]. Stops when the connection closes.
pub(crate) async fn read_loop<R>(
    mut reader: R,
    shared: Arc<Shared>,
    max_line: usize,
    line_timeout: Duration,
) where
    R: AsyncRead + Unpin,
{
    let mut stop = shared.stop.subscribe();
    let mut storage = vec![0u8; max_line.max(1)];
    let mut framer = LineFramer::new(&mut storage);
    let limit = framer.max_len();
    let mut chunk = vec![0u8; READ_CHUNK];
    let on_frame = |frame: Frame<'_>| match frame {
        Frame::Line(line) => shared.on_line(line),
        Frame::Oversized { len } => {
            tracing::warn!("the server sent a line longer than {limit} bytes ({len}+): discarded");
            shared.fail_pending(&ClientError::Oversized { limit });
        }
    };
    // When the line now in the framer (or being discarded) must have ended.
    let mut line_deadline: Option<Instant> = None;
    let end = loop {
        let read = tokio::select! {
            biased;
            // (mapped to `()` so the watch guard is not held across the awaits below)
            () = async { let _ = stop.wait_for(|s| *s).await; } => break None,
            read = read_by(&mut reader, &mut chunk, line_deadline) => read,
        };
        let n = match read {
            None => {
                tracing::warn!(
                    "a line from the server did not complete within {line_timeout:?}: closing"
                );
                break Some(ClientError::LineTimeout(line_timeout));
            }
            Some(Ok(0)) => break Some(ClientError::Closed),
            Some(Ok(n)) => n,
            Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
            Some(Err(e)) => {
                tracing::warn!("reading from the server failed: {e}");
                break Some(ClientError::Io(e));
            }
        };
        let mut rest = chunk.get(..n).unwrap_or_default();
        // A newline ends the line in progress: what is left after it began in this read.
        let ended = rest.contains(&b'\n');
        while !rest.is_empty() {
            let taken = framer.push(rest);
            rest = rest.get(taken..).unwrap_or_default();
            while let Some(frame) = framer.next_frame() {
                on_frame(frame);
            }
        }
        let mid_line = framer.buffered() > 0 || framer.is_discarding();
        line_deadline = match line_deadline {
            _ if !mid_line => None,
            Some(at) if !ended => Some(at),
            _ => Instant::now().checked_add(line_timeout),
        };
    };
    let Some(end) = end else {
        return; // Closed elsewhere.
    };
    if !matches!(end, ClientError::LineTimeout(_)) {
        // A last line without its newline (never the one that timed out).
        while let Some(frame) = framer.finish() {
            on_frame(frame);
        }
        tracing::debug!("the server closed the connection");
    }
    shared.close(&end);
}

/// Writes all of `buf` and flushes; fails with [`ClientError::WriteTimeout`] when a write or the
/// flush makes no progress for `limit`.
async fn write_within<W: AsyncWrite + Unpin>(
    writer: &mut W,
    mut buf: &[u8],
    limit: Duration,
) -> Result<()> {
    while !buf.is_empty() {
        match tokio::time::timeout(limit, writer.write(buf)).await {
            Err(_elapsed) => return Err(ClientError::WriteTimeout(limit)),
            Ok(Ok(0)) => return Err(ClientError::Io(io::ErrorKind::WriteZero.into())),
            Ok(Ok(n)) => buf = buf.get(n..).unwrap_or_default(),
            Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
            Ok(Err(e)) => return Err(ClientError::Io(e)),
        }
    }
    match tokio::time::timeout(limit, writer.flush()).await {
        Err(_elapsed) => Err(ClientError::WriteTimeout(limit)),
        Ok(r) => r.map_err(ClientError::Io),
    }
}

/// The writer task: writes each queued line plus `\n` and flushes. A write that makes no
/// progress for `write_timeout` closes the connection with [`ClientError::WriteTimeout`]. Stops
/// when the connection closes (dropping what is still queued) or after a shutdown.
pub(crate) async fn write_loop<W>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    shared: Arc<Shared>,
    write_timeout: Duration,
) where
    W: AsyncWrite + Unpin,
{
    let mut stop = shared.stop.subscribe();
    loop {
        let msg = tokio::select! {
            biased;
            () = async { let _ = stop.wait_for(|s| *s).await; } => return,
            msg = rx.recv() => match msg {
                Some(msg) => msg,
                None => return,
            },
        };
        match msg {
            Outgoing::Line {
                mut line,
                ack,
                reply,
            } => {
                line.push('\n');
                let result = tokio::select! {
                    biased;
                    () = async { let _ = stop.wait_for(|s| *s).await; } => Err(ClientError::Closed),
                    result = write_within(&mut writer, line.as_bytes(), write_timeout) => result,
                };
                shared.queued.fetch_sub(1, Ordering::Relaxed);
                if reply > 0 {
                    shared.reply_bytes.fetch_sub(reply, Ordering::Relaxed);
                }
                let failed = result.as_ref().err().map(ClientError::duplicate);
                if let Some(ack) = ack {
                    let _ = ack.send(result);
                }
                match failed {
                    None => {}
                    Some(ClientError::Closed) => return,
                    Some(e) => {
                        tracing::warn!("writing to the server failed: {e}");
                        shared.close(&e);
                        return;
                    }
                }
            }
            Outgoing::Shutdown(ack) => {
                let result = match tokio::time::timeout(write_timeout, writer.shutdown()).await {
                    Err(_elapsed) => Err(ClientError::WriteTimeout(write_timeout)),
                    Ok(r) => r.map_err(ClientError::Io),
                };
                drop(writer);
                let _ = ack.send(result);
                return;
            }
        }
    }
}
