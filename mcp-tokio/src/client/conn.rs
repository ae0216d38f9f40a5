//! The connection machinery: pending requests, the reader and writer tasks.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcp_core::framing::{Frame, LineFramer};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use super::error::{Error, Result};
use super::types::{Notification, Progress, ProgressSink};

/// Bytes read from the transport per `read` call.
const READ_CHUNK: usize = 64 * 1024;

pub(crate) type Handler = Arc<dyn Fn(&Notification) + Send + Sync>;

/// A message for the writer task.
pub(crate) enum Outgoing {
    /// One serialized JSON-RPC message (the newline is added by the writer), with an optional
    /// acknowledgement of the write.
    Line(String, Option<oneshot::Sender<io::Result<()>>>),
    /// Flush, shut down and drop the write half, then acknowledge.
    Shutdown(oneshot::Sender<io::Result<()>>),
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

/// State shared by the client, its tasks and its in-flight requests.
pub(crate) struct Shared {
    state: Mutex<State>,
    handlers: Mutex<Vec<Handler>>,
    out: mpsc::UnboundedSender<Outgoing>,
    /// Lines queued for the writer and not yet written.
    queued: std::sync::atomic::AtomicUsize,
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
            queued: std::sync::atomic::AtomicUsize::new(0),
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

    /// Counts a line into the writer's queue; a server that has not read
    /// [`MAX_QUEUED_LINES`] of them ends the connection (it cannot grow our memory).
    fn admit(&self) -> bool {
        let queued = self.queued.fetch_add(1, Ordering::Relaxed) + 1;
        if queued > MAX_QUEUED_LINES {
            tracing::warn!("the server reads nothing: {queued} messages queued; closing");
            self.close(&Error::Malformed(format!(
                "the server stopped reading ({MAX_QUEUED_LINES} messages queued)"
            )));
            return false;
        }
        true
    }

    /// Queues a line for the writer without waiting.
    pub(crate) fn send_line(&self, line: String) -> bool {
        tracing::trace!(target: "mcp_tokio::client", "→ {line}");
        self.admit() && self.out.send(Outgoing::Line(line, None)).is_ok()
    }

    /// Queues a line and waits until it is written.
    pub(crate) async fn write_line(&self, line: String) -> Result<()> {
        tracing::trace!(target: "mcp_tokio::client", "→ {line}");
        let (ack, done) = oneshot::channel();
        if !self.admit() {
            return Err(Error::Closed);
        }
        self.out
            .send(Outgoing::Line(line, Some(ack)))
            .map_err(|_| Error::Closed)?;
        match done.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::Io(e)),
            Err(_) => Err(Error::Closed),
        }
    }

    /// Asks the writer to shut down its half and waits for it.
    pub(crate) async fn shutdown_writer(&self) -> Result<()> {
        let (ack, done) = oneshot::channel();
        if self.out.send(Outgoing::Shutdown(ack)).is_err() {
            return Ok(()); // The writer is already gone.
        }
        match done.await {
            Ok(r) => r.map_err(Error::Io),
            Err(_) => Ok(()),
        }
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

    /// Cancels a pending request: it fails with [`Error::Cancelled`] and the server is sent
    /// `notifications/cancelled`. Returns whether the request was pending.
    pub(crate) fn cancel(&self, id: u64, reason: Option<&str>) -> bool {
        match self.take_pending(id) {
            Some(pending) => {
                tracing::debug!("cancelling request {id} ({})", pending.method);
                if cancellable(&pending.method) {
                    self.send_cancel(id, reason);
                }
                let _ = pending.tx.send(Err(Error::Cancelled));
                true
            }
            None => false,
        }
    }

    /// Marks the connection closed and fails every pending request with `error`.
    pub(crate) fn close(&self, error: &Error) {
        let pending: Vec<Pending> = {
            let mut state = lock(&self.state);
            state.closed = true;
            state.progress.clear();
            state.pending.drain().map(|(_, p)| p).collect()
        };
        for p in pending {
            let _ = p.tx.send(Err(error.duplicate()));
        }
    }

    /// Fails every pending request with `error`, leaving the connection open.
    fn fail_pending(&self, error: &Error) {
        let pending: Vec<Pending> = lock(&self.state).pending.drain().map(|(_, p)| p).collect();
        for p in pending {
            let _ = p.tx.send(Err(error.duplicate()));
        }
    }

    /// Sends a request now and returns its id and a future of the response.
    ///
    /// The future owns a guard: dropping it before the response arrives sends
    /// `notifications/cancelled`. When `timeout` expires it sends `notifications/cancelled`
    /// with reason `"timeout"` and resolves to [`Error::Timeout`].
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
                    return Err(Error::Closed);
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
                self.close(&Error::Closed);
                Err(Error::Closed)
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
                Ok(Err(_)) => Err(Error::Closed),
                Err(_elapsed) => {
                    if let Some(pending) = guard.shared.take_pending(guard.id) {
                        tracing::debug!("request {} timed out after {timeout:?}", guard.id);
                        if cancellable(&pending.method) {
                            guard.shared.send_cancel(guard.id, Some("timeout"));
                        }
                        Err(Error::Timeout)
                    } else {
                        // The response won the race.
                        rx.try_recv().unwrap_or(Err(Error::Timeout))
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
                    return Err(Error::Malformed(format!(
                        "request params must be an object, not {other}"
                    )))
                }
            };
            let meta = obj
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(meta) = meta else {
                return Err(Error::Malformed("params._meta must be an object".into()));
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
            tracing::trace!(target: "mcp_tokio::client", "← {}", String::from_utf8_lossy(line));
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
            Err(Error::Malformed(
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
                    Some(Ok(progress)) => sink.deliver(progress),
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
        self.send_line(reply.to_string());
    }
}

/// Whether the server may be told about a cancellation: `initialize` must never be cancelled
/// (the request is still abandoned locally).
fn cancellable(method: &str) -> bool {
    method != "initialize"
}

fn protocol_error(error: Value) -> Error {
    let code = error.get("code").and_then(Value::as_i64);
    let message = error.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(code), Some(message)) => Error::Protocol {
            code,
            message: message.to_owned(),
            data: error.get("data").cloned(),
        },
        _ => Error::Malformed(format!("malformed JSON-RPC error object: {error}")),
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

/// The reader task: frames lines with a bounded [`LineFramer`] and dispatches them.
pub(crate) async fn read_loop<R>(mut reader: R, shared: Arc<Shared>, max_line: usize)
where
    R: AsyncRead + Unpin,
{
    let mut storage = vec![0u8; max_line.max(1)];
    let mut framer = LineFramer::new(&mut storage);
    let limit = framer.max_len();
    let mut chunk = vec![0u8; READ_CHUNK];
    let on_frame = |frame: Frame<'_>| match frame {
        Frame::Line(line) => shared.on_line(line),
        Frame::Oversized { len } => {
            tracing::warn!("the server sent a line longer than {limit} bytes ({len}+): discarded");
            shared.fail_pending(&Error::Oversized { limit });
        }
    };
    let end = loop {
        let n = match reader.read(&mut chunk).await {
            Ok(0) => break Error::Closed,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::warn!("reading from the server failed: {e}");
                break Error::Io(e);
            }
        };
        let mut rest = chunk.get(..n).unwrap_or_default();
        while !rest.is_empty() {
            let taken = framer.push(rest);
            rest = rest.get(taken..).unwrap_or_default();
            while let Some(frame) = framer.next_frame() {
                on_frame(frame);
            }
        }
    };
    while let Some(frame) = framer.finish() {
        on_frame(frame);
    }
    tracing::debug!("the server closed the connection");
    shared.close(&end);
}

/// The writer task: writes each queued line plus `\n` and flushes.
pub(crate) async fn write_loop<W>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    shared: Arc<Shared>,
) where
    W: AsyncWrite + Unpin,
{
    while let Some(msg) = rx.recv().await {
        match msg {
            Outgoing::Line(mut line, ack) => {
                line.push('\n');
                let mut result = writer.write_all(line.as_bytes()).await;
                if result.is_ok() {
                    result = writer.flush().await;
                }
                shared.queued.fetch_sub(1, Ordering::Relaxed);
                let failed = result
                    .as_ref()
                    .err()
                    .map(|e| io::Error::new(e.kind(), e.to_string()));
                if let Some(ack) = ack {
                    let _ = ack.send(result);
                }
                if let Some(e) = failed {
                    tracing::warn!("writing to the server failed: {e}");
                    shared.close(&Error::Io(e));
                    return;
                }
            }
            Outgoing::Shutdown(ack) => {
                let result = writer.shutdown().await;
                drop(writer);
                let _ = ack.send(result);
                return;
            }
        }
    }
}
