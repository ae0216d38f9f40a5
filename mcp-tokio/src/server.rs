//! Servers: one drive loop per connection around a `mcp_core::Session`.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use futures::FutureExt;
use mcp_core::framing::{Frame, LineFramer};
use mcp_core::inflight::CallSlot;
use mcp_core::session::Request;
use mcp_core::tools::ClientCaps;
use mcp_core::{
    CallError, CallToken, ClientMethod, ClientOutcome, Config, Event, ListKind, LogLevel,
    ProtocolVersion, SecretKey, ServerHandler, ServerInfo, Session, ToolSet, Transmit,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch, Semaphore};
use tokio::task::AbortHandle;

use crate::prompts::{ErrorReply, PromptFn, PromptOutput, PromptRequest};
use crate::registry::{Args, Snapshot, ToolOutput, Tools};
use crate::Error;

/// Owned server identity (see [`mcp_core::ServerInfo`]).
#[derive(Clone, Debug, Default)]
pub struct Info {
    /// Programmatic name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Display title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Website.
    pub website_url: Option<String>,
    /// Guidance for the model.
    pub instructions: Option<String>,
}

/// Bounds of each connection.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest accepted line (bytes); longer lines get one `-32600` and are discarded.
    pub max_frame: usize,
    /// Calls (and listen subscriptions) in flight per connection.
    pub max_calls: usize,
    /// Initial output buffer; it grows for large deferred results up to `max_response`.
    pub initial_response: usize,
    /// Largest response a deferred call may produce; larger ones get a `-32603`.
    pub max_response: usize,
    /// Concurrent socket connections; further ones are refused with a JSON-RPC error line.
    pub max_connections: usize,
    /// After the peer closes its side (EOF), how long calls still running may take to
    /// finish and be answered before the connection closes.
    pub drain_timeout: std::time::Duration,
    /// How long a request to the client ([`Context::request`]) may stay unanswered before
    /// it is cancelled and fails with [`RequestError::TimedOut`].
    pub request_timeout: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame: 4 << 20,
            max_calls: 256,
            initial_response: 64 << 10,
            max_response: 64 << 20,
            max_connections: 1024,
            drain_timeout: std::time::Duration::from_secs(1),
            request_timeout: std::time::Duration::from_secs(60),
        }
    }
}

/// An MCP server: identity, session policy, limits and a shared tool registry. Cheap to
/// clone; every connection gets its own session.
#[derive(Clone, Debug)]
pub struct Server {
    inner: Arc<Shared>,
}

/// The capabilities beyond tools (resources, prompts, completion), answered inside the
/// drive loop; shared by every connection.
type Provider = Arc<std::sync::Mutex<dyn ServerHandler + Send>>;

struct Shared {
    info: Info,
    config: Config,
    limits: Limits,
    tools: Tools,
    provider: Option<Provider>,
    /// Renders the `prompts/get` requests the provider defers.
    async_prompts: Option<PromptFn>,
    /// Change counters of the prompt, resource and template lists (tool changes go through
    /// the registry): connections announce each advance.
    lists: watch::Sender<[u64; 3]>,
    shutdown: watch::Sender<bool>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("info", &self.info)
            .field("limits", &self.limits)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

/// A fresh secret key from the operating system's entropy source (for
/// [`Config::new`]): cursors and sealed request state of one server instance cannot be
/// forged or replayed against another.
pub fn random_key() -> SecretKey {
    let mut key = [0u8; 16];
    if getrandom::fill(&mut key).is_err() {
        // No entropy source at all: refuse to run with a predictable key.
        panic!("mcp-tokio: the operating system provided no randomness for the server key");
    }
    SecretKey(key)
}

/// Milliseconds since the UNIX epoch: the time passed to the core.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The tool snapshot of a connection plus the server's other providers, as one handler.
struct Combined<'a> {
    tools: &'a mut Snapshot,
    provider: Option<std::sync::MutexGuard<'a, dyn ServerHandler + Send + 'static>>,
}

impl ServerHandler for Combined<'_> {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(self.tools)
    }
    fn resources(&mut self) -> Option<&mut dyn mcp_core::resources::ResourceSet> {
        self.provider.as_mut()?.resources()
    }
    fn prompts(&mut self) -> Option<&mut dyn mcp_core::prompts::PromptSet> {
        self.provider.as_mut()?.prompts()
    }
    fn completions(&mut self) -> Option<&mut dyn mcp_core::completion::Completions> {
        self.provider.as_mut()?.completions()
    }
}

impl Server {
    /// A server with default config (and a [`random_key`]) and limits.
    pub fn new(info: Info, tools: Tools) -> Self {
        Self::with(info, Config::new(random_key()), Limits::default(), tools)
    }

    /// Adds resources, prompts and completion (the [`ServerHandler`] methods other than
    /// `tools`, answered inside each connection's drive loop; deferred answers are not
    /// supported for them yet). Call before cloning the server.
    pub fn provide(mut self, provider: impl ServerHandler + Send + 'static) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.inner) {
            shared.provider = Some(Arc::new(std::sync::Mutex::new(provider)));
        } else {
            tracing::error!("Server::provide called after the server was cloned; ignored");
        }
        self
    }

    /// Renders the `prompts/get` requests that the provider's prompt set defers (its
    /// `get_prompt` returns `Dispatch::Defer`) as tokio tasks: `f` gets the request and a
    /// [`Context`] (e.g. to ask a legacy client for input with [`Context::request`]).
    /// Call before cloning the server.
    pub fn async_prompts<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(PromptRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<PromptOutput, ErrorReply>> + Send + 'static,
    {
        if let Some(shared) = Arc::get_mut(&mut self.inner) {
            shared.async_prompts = Some(Arc::new(move |r, c| Box::pin(f(r, c))));
        } else {
            tracing::error!("Server::async_prompts called after the server was cloned; ignored");
        }
        self
    }

    /// Announces that a prompt, resource or template list changed: every connected
    /// session marks its cursors stale and notifies its client (legacy sessions, and
    /// 2026-07-28 listen streams that opted in). Tool changes are announced by the
    /// [`Tools`] registry.
    pub fn list_changed(&self, kind: ListKind) {
        let index = match kind {
            ListKind::Prompts => 0,
            ListKind::Resources => 1,
            _ => 2,
        };
        self.inner.lists.send_modify(|c| c[index] += 1);
    }

    /// A server with explicit session config and limits.
    pub fn with(info: Info, config: Config, limits: Limits, tools: Tools) -> Self {
        let (shutdown, _) = watch::channel(false);
        let (lists, _) = watch::channel([0; 3]);
        Server {
            inner: Arc::new(Shared {
                info,
                config,
                limits,
                tools,
                provider: None,
                async_prompts: None,
                lists,
                shutdown,
            }),
        }
    }

    /// The tool registry (add or remove tools at run time).
    pub fn tools(&self) -> &Tools {
        &self.inner.tools
    }

    /// Asks every connection and listener of this server to stop.
    pub fn shutdown(&self) {
        self.inner.shutdown.send_replace(true);
    }

    /// A handle that stops this server from elsewhere.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            server: self.clone(),
        }
    }

    /// Serves one connection until EOF, an I/O error or shutdown.
    pub async fn serve_connection<R, W>(&self, reader: R, writer: W) -> Result<(), Error>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        Connection::run(&self.inner, reader, writer).await
    }

    /// Serves stdin/stdout until stdin closes, Ctrl-C, or shutdown. Only protocol frames go
    /// to stdout.
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        let server = self.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                server.shutdown();
            }
        });
        let stdin = crate::stdio::ThreadStdin::spawn();
        let stdout = crate::stdio::ThreadStdout::spawn();
        self.serve_connection(stdin, stdout).await
    }

    /// Accepts TCP connections until shutdown; one session per connection.
    #[cfg(feature = "socket")]
    pub async fn serve_tcp(&self, listener: tokio::net::TcpListener) -> Result<(), Error> {
        self.accept_loop(|| async {
            let (stream, peer) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            Ok((stream, format!("tcp {peer}")))
        })
        .await
    }

    /// Accepts Unix socket connections until shutdown; one session per connection.
    #[cfg(all(feature = "socket", unix))]
    pub async fn serve_unix(&self, listener: tokio::net::UnixListener) -> Result<(), Error> {
        self.accept_loop(|| async { Ok((listener.accept().await?.0, "unix".to_string())) })
            .await
    }

    /// Runs connections until shutdown, then waits for them to close. A failed `accept`
    /// (e.g. out of file descriptors) is logged and retried after a pause: it never stops
    /// the server.
    #[cfg(feature = "socket")]
    async fn accept_loop<S, A, F>(&self, mut accept: A) -> Result<(), Error>
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
        A: FnMut() -> F,
        F: std::future::Future<Output = io::Result<(S, String)>>,
    {
        let mut stop = self.inner.shutdown.subscribe();
        let permits = Arc::new(Semaphore::new(self.inner.limits.max_connections));
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                // (mapped to `()` so the watch guard is not held across the pause below)
                () = async { let _ = stop.wait_for(|s| *s).await; } => break,
                accepted = accept() => match accepted {
                    Ok((stream, peer)) => self.spawn_connection(&mut tasks, &permits, stream, peer),
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed; retrying");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                },
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        }
        while tasks.join_next().await.is_some() {}
        Ok(())
    }

    #[cfg(feature = "socket")]
    fn spawn_connection<S>(
        &self,
        tasks: &mut tokio::task::JoinSet<()>,
        permits: &Arc<Semaphore>,
        stream: S,
        peer: String,
    ) where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let server = self.clone();
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                tasks.spawn(async move {
                    let (r, w) = tokio::io::split(stream);
                    match server.serve_connection(r, w).await {
                        Ok(()) => tracing::debug!(%peer, "connection closed"),
                        Err(e) => tracing::debug!(%peer, error = %e, "connection ended"),
                    }
                    drop(permit);
                });
            }
            Err(_) => {
                tracing::warn!(%peer, "connection limit reached");
                tasks.spawn(async move {
                    let mut stream = stream;
                    let line = format!(
                        "{{\"jsonrpc\":\"2.0\",\"error\":{{\"code\":-32603,\"message\":\"Too many connections\",\"data\":{{\"limit\":{}}}}}}}\n",
                        server.inner.limits.max_connections
                    );
                    let _ = stream.write_all(line.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        }
    }
}

/// Stops a [`Server`] (its listeners and connections) when [`shutdown`](Self::shutdown) is
/// called.
#[derive(Clone, Debug)]
pub struct ShutdownHandle {
    server: Server,
}

impl ShutdownHandle {
    /// Requests shutdown.
    pub fn shutdown(&self) {
        self.server.shutdown();
    }
}

/// What tool tasks send back to their connection's drive loop.
enum Command {
    Done(CallToken, ToolOutput),
    PromptDone(CallToken, Result<PromptOutput, ErrorReply>),
    Progress {
        token: CallToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        token: CallToken,
        level: LogLevel,
        logger: Option<String>,
        data: String,
    },
    Request {
        token: CallToken,
        method: ClientMethod,
        params: String,
        reply: oneshot::Sender<Result<serde_json::Value, RequestError>>,
    },
}

/// Why a request to the client ([`Context::request`]) produced no result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The session cannot send it: a 2026-07-28 call (answer `input_required` instead), a
    /// capability the client did not declare, or a request already outstanding.
    #[error("request not sent: {0}")]
    Refused(CallError),
    /// The client answered with an error.
    #[error("the client answered with error {code}: {message}")]
    Client {
        /// The error code.
        code: i64,
        /// The error message.
        message: String,
    },
    /// No answer within [`Limits::request_timeout`]; the client was sent
    /// `notifications/cancelled`.
    #[error("the client did not answer in time")]
    TimedOut,
    /// The call was cancelled or the connection closed.
    #[error("the call ended before the client answered")]
    Closed,
}

/// Given to async tool handlers: progress, logging and cancellation for one call.
#[derive(Clone, Debug)]
pub struct Context {
    token: CallToken,
    wants_progress: bool,
    caps: ClientCaps,
    version: ProtocolVersion,
    tx: mpsc::Sender<Command>,
    cancelled: watch::Receiver<bool>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

impl Context {
    /// The client capabilities in force for this call (declared at `initialize`, or in the
    /// request's `_meta` in 2026-07-28).
    pub fn client_caps(&self) -> ClientCaps {
        self.caps
    }
    /// The protocol revision this call is served under.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }
    /// Whether the client asked for progress on this call.
    pub fn wants_progress(&self) -> bool {
        self.wants_progress
    }
    /// Reports progress (dropped by the session unless the client gave a progress token;
    /// `progress` must increase).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if self.wants_progress {
            let _ = self
                .tx
                .send(Command::Progress {
                    token: self.token,
                    progress,
                    total,
                    message,
                })
                .await;
        }
    }
    /// Sends a log message tied to this call (filtered by the level the client chose).
    pub async fn log(&self, level: LogLevel, logger: Option<&str>, data: impl Into<String>) {
        let cmd = Command::Log {
            token: self.token,
            level,
            logger: logger.map(Into::into),
            data: data.into(),
        };
        let _ = self.tx.send(cmd).await;
    }
    /// Resolves when the client cancels the call (the task is also aborted at its next
    /// await point, so this is for cleanup that must run).
    pub async fn cancelled(&self) {
        let mut rx = self.cancelled.clone();
        let _ = rx.wait_for(|c| *c).await;
    }
    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        *self.cancelled.borrow()
    }
    /// Sends a request to the client of a legacy session (`sampling/createMessage`,
    /// `elicitation/create`, `roots/list`) on behalf of this call and waits for its
    /// result. `params` is the request's params object.
    pub async fn request(
        &self,
        method: ClientMethod,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, RequestError> {
        let (reply, answer) = oneshot::channel();
        let cmd = Command::Request {
            token: self.token,
            method,
            params: params.to_string(),
            reply,
        };
        if self.tx.send(cmd).await.is_err() {
            return Err(RequestError::Closed);
        }
        answer.await.unwrap_or(Err(RequestError::Closed))
    }
}

struct Running {
    abort: AbortHandle,
    cancel: watch::Sender<bool>,
}

/// The drive loop of one connection.
struct Connection<'s, W> {
    shared: &'s Shared,
    writer: W,
    /// Frames waiting to be written (each with its newline); written after every wake-up.
    pending: Vec<u8>,
    out: Vec<u8>,
    snapshot: Snapshot,
    running: HashMap<CallToken, Running>,
    /// Calls waiting for the client's answer to their request.
    waiting: HashMap<CallToken, oneshot::Sender<Result<serde_json::Value, RequestError>>>,
    tx: mpsc::Sender<Command>,
}

impl<W: AsyncWrite + Unpin> Connection<'_, W> {
    async fn run<R: AsyncRead + Unpin>(
        shared: &Shared,
        mut reader: R,
        writer: W,
    ) -> Result<(), Error> {
        let info = shared.info.core();
        let mut slots = vec![CallSlot::EMPTY; shared.limits.max_calls.max(1)];
        let mut session = Session::from_slots(&info, shared.config, &mut slots);
        let mut frame_buf = vec![0u8; shared.limits.max_frame.max(mcp_core::MIN_OUTPUT)];
        let mut framer = LineFramer::new(&mut frame_buf);
        let (tx, mut rx) = mpsc::channel(256);
        let mut versions = shared.tools.watch();
        let mut lists = shared.lists.subscribe();
        let mut seen_lists = *lists.borrow();
        let mut stop = shared.shutdown.subscribe();
        let mut conn = Connection {
            shared,
            writer,
            pending: Vec::with_capacity(64 << 10),
            out: vec![0; shared.limits.initial_response.max(mcp_core::MIN_OUTPUT)],
            snapshot: shared.tools.snapshot(),
            running: HashMap::new(),
            waiting: HashMap::new(),
            tx,
        };
        let mut chunk = vec![0u8; 64 << 10];
        // Set at EOF: stop reading, let running calls finish until this deadline.
        let mut draining: Option<tokio::time::Instant> = None;
        let result = loop {
            if draining.is_some() && conn.running.is_empty() {
                break Ok(());
            }
            let deadline = draining.unwrap_or_else(|| {
                tokio::time::Instant::now() + std::time::Duration::from_secs(3600)
            });
            tokio::select! {
                biased;
                // (mapped to `()` so the watch guard is not held across the awaits below)
                () = async { let _ = stop.wait_for(|s| *s).await; } => break Ok(()),
                Some(cmd) = rx.recv() => {
                    // A list a task changed is announced before that task's answer.
                    if versions.has_changed().unwrap_or(false) {
                        versions.borrow_and_update();
                        conn.tools_changed(&mut session)?;
                    }
                    if lists.has_changed().unwrap_or(false) {
                        conn.lists_changed(&mut session, &mut lists, &mut seen_lists)?;
                    }
                    conn.command(&mut session, cmd)?;
                    while let Ok(cmd) = rx.try_recv() {
                        conn.command(&mut session, cmd)?;
                    }
                }
                Ok(()) = versions.changed() => conn.tools_changed(&mut session)?,
                Ok(()) = lists.changed() => {
                    conn.lists_changed(&mut session, &mut lists, &mut seen_lists)?;
                }
                _ = tokio::time::sleep_until(deadline), if draining.is_some() => break Ok(()),
                // The earliest deadline of a request to the client (session clock: UNIX ms).
                _ = tokio::time::sleep(std::time::Duration::from_millis(
                        session.poll_timeout().unwrap_or(0).saturating_sub(now_ms()))),
                    if session.poll_timeout().is_some() => {
                    session.handle_timeout(now_ms());
                    conn.drain(&mut session)?;
                }
                read = reader.read(&mut chunk), if draining.is_none() => {
                    let n = match read {
                        Ok(0) => {
                            while let Some(frame) = framer.finish() {
                                if let Frame::Line(line) = frame {
                                    let line = line.to_vec();
                                    conn.message(&mut session, &line)?;
                                }
                            }
                            draining = Some(tokio::time::Instant::now() + shared.limits.drain_timeout);
                            conn.flush().await?;
                            continue;
                        }
                        Ok(n) => n,
                        Err(e) => break Err(Error::Io(e)),
                    };
                    let mut input = chunk.get(..n).unwrap_or(&[]);
                    while !input.is_empty() {
                        let taken = framer.push(input);
                        input = input.get(taken..).unwrap_or(&[]);
                        while let Some(frame) = framer.next_frame() {
                            match frame {
                                Frame::Line(line) => conn.message(&mut session, line)?,
                                Frame::Oversized { .. } => {
                                    let limit = shared.limits.max_frame;
                                    let tx = session.handle_oversized(limit, &mut conn.out).map_err(Error::Core)?;
                                    conn.send(tx)?;
                                }
                            }
                        }
                    }
                }
            }
            conn.flush().await?;
        };
        for (_, r) in conn.running.drain() {
            r.abort.abort();
        }
        let _ = conn.flush().await;
        // Waits until queued output is written (stdio) and closes our side (sockets).
        let _ = conn.writer.shutdown().await;
        result
    }

    /// Handles one incoming line.
    fn message(&mut self, session: &mut Session<'_>, line: &[u8]) -> Result<(), Error> {
        let provider = self.shared.provider.as_ref().map(|p| {
            // A provider that panicked keeps serving: its state is plain data.
            p.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
        });
        let mut handler = Combined {
            tools: &mut self.snapshot,
            provider,
        };
        let mut incoming = session
            .handle(&mut handler, now_ms(), line, &mut self.out)
            .map_err(Error::Core)?;
        drop(handler);
        if let Some(tx) = incoming.transmit() {
            self.send(tx)?;
        }
        while let Some(call) = incoming.next_call(session) {
            let token = call.token();
            match call.request {
                Request::Tool(tool) => {
                    let handler = self
                        .snapshot
                        .entry(tool.tool_index())
                        .and_then(|e| e.handler.async_part().cloned());
                    let Some(handler) = handler else {
                        // Sync tools are answered inside `handle`; this cannot happen, but
                        // answer rather than leak the call.
                        self.refuse(session, token, "tool has no async handler")?;
                        continue;
                    };
                    let ctx = self.context(
                        token,
                        tool.wants_progress(),
                        tool.client_caps(),
                        tool.version(),
                    );
                    let args = Args::new(tool.args().as_str().to_owned());
                    let name = tool.name().to_string();
                    self.spawn(token, ctx.1, async move {
                        let output = guarded(&format!("tool {name}"), handler(args, ctx.0)).await;
                        Command::Done(token, output.unwrap_or_else(ToolOutput::error))
                    });
                }
                #[allow(unreachable_patterns)]
                Request::Prompt(prompt) => {
                    let Some(handler) = self.shared.async_prompts.clone() else {
                        self.refuse(session, token, "prompt has no async handler")?;
                        continue;
                    };
                    let ctx = self.context(token, false, prompt.client_caps(), prompt.version());
                    let request = PromptRequest {
                        name: prompt.name().to_string(),
                        arguments: serde_json::from_str(prompt.arguments().as_str())
                            .unwrap_or_default(),
                    };
                    let what = format!("prompt {}", request.name);
                    self.spawn(token, ctx.1, async move {
                        let output = guarded(&what, handler(request, ctx.0)).await;
                        let output = output.unwrap_or_else(|why| {
                            Err(ErrorReply::new(
                                mcp_core::jsonrpc::code::INTERNAL_ERROR,
                                why,
                            ))
                        });
                        Command::PromptDone(token, output)
                    });
                }
                _ => {
                    // Resources and completion are answered inline by the provider.
                    self.refuse(
                        session,
                        token,
                        "deferred answers are not supported for this method",
                    )?;
                }
            }
        }
        while let Some(response) = incoming.next_response(session) {
            let Some(reply) = self.waiting.remove(&response.call) else {
                continue;
            };
            let answer = match response.outcome {
                ClientOutcome::Result(v) => {
                    serde_json::from_str(v.as_str()).map_err(|_| RequestError::Closed)
                }
                ClientOutcome::Error { code, message } => Err(RequestError::Client {
                    code,
                    message: message.to_string(),
                }),
            };
            let _ = reply.send(answer);
        }
        self.drain(session)
    }

    /// The tool registry changed: take a new snapshot and announce it.
    fn tools_changed(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        self.snapshot = self.shared.tools.snapshot();
        session.tools_changed();
        self.drain(session)
    }

    /// The server announced prompt, resource or template list changes since `seen`.
    fn lists_changed(
        &mut self,
        session: &mut Session<'_>,
        lists: &mut watch::Receiver<[u64; 3]>,
        seen: &mut [u64; 3],
    ) -> Result<(), Error> {
        let now = *lists.borrow_and_update();
        let kinds = [
            ListKind::Prompts,
            ListKind::Resources,
            ListKind::ResourceTemplates,
        ];
        for ((kind, new), old) in kinds.into_iter().zip(now).zip(*seen) {
            if new != old {
                session.list_changed(kind);
            }
        }
        *seen = now;
        self.drain(session)
    }

    /// A context for a call's task, and the sender that cancels it.
    fn context(
        &self,
        token: CallToken,
        wants_progress: bool,
        caps: ClientCaps,
        version: ProtocolVersion,
    ) -> (Context, watch::Sender<bool>) {
        let (cancel, cancelled) = watch::channel(false);
        let ctx = Context {
            token,
            wants_progress,
            caps,
            version,
            tx: self.tx.clone(),
            cancelled,
        };
        (ctx, cancel)
    }

    /// Runs a call's task; its last command (the answer) goes back to this loop.
    fn spawn(
        &mut self,
        token: CallToken,
        cancel: watch::Sender<bool>,
        task: impl std::future::Future<Output = Command> + Send + 'static,
    ) {
        let done = self.tx.clone();
        let task = tokio::spawn(async move {
            let _ = done.send(task.await).await;
        });
        self.running.insert(
            token,
            Running {
                abort: task.abort_handle(),
                cancel,
            },
        );
    }

    /// Answers a deferred request that nothing here can run with an internal error.
    fn refuse(
        &mut self,
        session: &mut Session<'_>,
        token: CallToken,
        why: &str,
    ) -> Result<(), Error> {
        let code = mcp_core::jsonrpc::code::INTERNAL_ERROR;
        if let Ok(Some(tx)) = session.fail(token, code, why, &mut self.out) {
            self.send(tx)?;
        }
        Ok(())
    }

    /// Completes a call with `answer`, growing the output buffer up to
    /// [`Limits::max_response`] when the result needs it.
    fn finish(
        &mut self,
        session: &mut Session<'_>,
        token: CallToken,
        mut answer: impl FnMut(&mut Session<'_>, &mut [u8]) -> Result<Option<Transmit>, CallError>,
    ) -> Result<(), Error> {
        self.running.remove(&token);
        self.waiting.remove(&token);
        loop {
            let why = match answer(session, &mut self.out) {
                Ok(Some(tx)) => return self.send(tx),
                Ok(None) => return Ok(()),
                Err(CallError::BufferTooSmall { required })
                    if required <= self.shared.limits.max_response =>
                {
                    self.out.resize(required, 0);
                    continue;
                }
                Err(CallError::BufferTooSmall { required }) => format!(
                    "result of {required} bytes exceeds the limit of {} bytes",
                    self.shared.limits.max_response
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "completing a call failed");
                    "invalid result".to_owned()
                }
            };
            return self.refuse(session, token, &why);
        }
    }

    /// Applies a message from a tool task.
    fn command(&mut self, session: &mut Session<'_>, cmd: Command) -> Result<(), Error> {
        match cmd {
            Command::Request {
                token,
                method,
                params,
                reply,
            } => {
                let timeout = self.shared.limits.request_timeout.as_millis();
                let timeout = u64::try_from(timeout).unwrap_or(u64::MAX);
                session.handle_timeout(now_ms());
                match session.request(token, method, &params, timeout, &mut self.out) {
                    Ok(Some(tx)) => {
                        self.send(tx)?;
                        self.waiting.insert(token, reply);
                    }
                    Ok(None) => {
                        let _ = reply.send(Err(RequestError::Closed));
                    }
                    Err(e) => {
                        let _ = reply.send(Err(RequestError::Refused(e)));
                    }
                }
            }
            Command::Done(token, output) => {
                self.finish(session, token, |s, out| {
                    s.complete(token, out, |r| output.write(r))
                })?;
            }
            Command::PromptDone(token, Ok(output)) => {
                self.finish(session, token, |s, out| {
                    s.complete_prompt(token, out, |r| output.write(r))
                })?;
            }
            Command::PromptDone(token, Err(e)) => {
                self.finish(session, token, |s, out| {
                    s.fail(token, e.code, &e.message, out)
                })?;
            }
            Command::Progress {
                token,
                progress,
                total,
                message,
            } => {
                match session.progress(token, progress, total, message.as_deref(), &mut self.out) {
                    Ok(Some(tx)) => self.send(tx)?,
                    Ok(None) => {}
                    Err(e) => tracing::debug!(error = %e, "progress not sent"),
                }
            }
            Command::Log {
                token,
                level,
                logger,
                data,
            } => match session.log(Some(token), level, logger.as_deref(), &data, &mut self.out) {
                Ok(Some(tx)) => self.send(tx)?,
                Ok(None) => {}
                Err(e) => tracing::debug!(error = %e, "log not sent"),
            },
        }
        self.drain(session)
    }

    /// Drains core output and events after every input or command.
    fn drain(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        loop {
            match session.poll_transmit(&mut self.out) {
                Ok(Some(tx)) => self.send(tx)?,
                Ok(None) => break,
                Err(e) => self.out.resize(e.required, 0),
            }
        }
        while let Some(event) = session.poll_event() {
            match event {
                Event::RequestTimedOut(token) => {
                    if let Some(reply) = self.waiting.remove(&token) {
                        let _ = reply.send(Err(RequestError::TimedOut));
                    }
                }
                Event::Cancelled(token) => {
                    self.waiting.remove(&token);
                    if let Some(r) = self.running.remove(&token) {
                        let _ = r.cancel.send(true);
                        r.abort.abort();
                    }
                }
                Event::Initialized(v) => tracing::info!(version = %v, "client initialized"),
                Event::LogLevel(l) => tracing::debug!(level = l.as_str(), "log level set"),
                _ => {}
            }
        }
        Ok(())
    }

    /// Queues one frame plus its newline; the loop writes them after every wake-up.
    fn send(&mut self, tx: Transmit) -> Result<(), Error> {
        let frame = self
            .out
            .get(..tx.len)
            .ok_or(Error::Internal("transmit beyond buffer"))?;
        self.pending.extend_from_slice(frame);
        self.pending.push(b'\n');
        Ok(())
    }

    async fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.writer.write_all(&self.pending).await?;
            self.writer.flush().await?;
            self.pending.clear();
            if self.pending.capacity() > 1 << 20 {
                self.pending.shrink_to(64 << 10);
            }
        }
        Ok(())
    }
}

/// Runs a handler's future; a panic is logged and becomes `Err("<what> panicked: ...")`.
async fn guarded<T>(what: &str, fut: impl std::future::Future<Output = T>) -> Result<T, String> {
    std::panic::AssertUnwindSafe(fut)
        .catch_unwind()
        .await
        .map_err(|panic| {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!("{what} panicked: {msg}");
            format!("{what} panicked: {msg}")
        })
}

impl Info {
    fn core(&self) -> ServerInfo<'_> {
        ServerInfo {
            name: &self.name,
            version: &self.version,
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            website_url: self.website_url.as_deref(),
            icons: &[],
            instructions: self.instructions.as_deref(),
        }
    }
}
