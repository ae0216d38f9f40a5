//! The drive loop of one connection: a `mcp_rs_core::Session`, the server's handlers, and the
//! tasks of its deferred calls.

use std::collections::HashMap;
use std::io;

use std::sync::Arc;

use futures::FutureExt;
use mcp_rs_core::model::common::ClientCaps;
use mcp_rs_core::pump::{Output, Pump};
use mcp_rs_core::session::{Call, Request};
use mcp_rs_core::{
    CallError, CallToken, ClientOutcome, Event, HandleError, ProtocolVersion, Session, Transmit,
};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;

use crate::clock::now_ms;
use crate::context::{Answer, Command, Context, RequestError};
use crate::deferred::{CompletionRequest, CompletionTarget, PromptRequest, ResourceRequest};
use crate::error::Error;
use crate::lines::LineBuf;
use crate::output::{ErrorReply, ToolReply};
use crate::principal::Principal;
use crate::registry::{Args, Snapshot};
use crate::state::{
    note_list_changes, Combined, ListCounters, OwnProvider, Policy, Shared, Tracker,
};

pub(crate) struct Running {
    abort: AbortHandle,
    cancel: watch::Sender<bool>,
}

/// After shutdown, how long a socket is still read (and the input dropped) after our side
/// was closed, so that closing with unread input does not reset the connection and destroy
/// replies the peer has not read yet.
const LINGER: std::time::Duration = std::time::Duration::from_secs(1);

/// Completes when the accept loop sheds this connection; never without a tracker.
async fn shed(tracker: Option<&Tracker>) {
    match tracker {
        Some(t) => t.shed.notified().await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `at`; never wakes for `None`. The timer is created on first poll, so a
/// disabled `select!` branch costs nothing.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Sleeps until the session-clock time `at` (UNIX ms); never wakes for `None`.
async fn sleep_until_ms(at: Option<u64>) {
    match at {
        Some(ms) => {
            let wait = ms.saturating_sub(now_ms());
            tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
        }
        None => std::future::pending().await,
    }
}

/// Output waiting beyond this is written before more input is read (a burst of small
/// requests cannot queue an unbounded amount of replies).
const FLUSH_AT: usize = 256 << 10;

/// Capacity of the outgoing queue kept between writes; more is given back.
pub(crate) const PENDING_RETAIN: usize = 4 << 10;

thread_local! {
    /// The output buffer of every drive loop on this thread. The core writes a frame into it
    /// and [`Connection::send`] copies the frame to the connection's queue at once, so it is
    /// only needed during a synchronous stretch of work, never across an `await`: an idle
    /// connection holds none.
    static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The drive loop of one connection.
pub(crate) struct Connection<'s, W> {
    shared: &'s Shared,
    writer: W,
    /// Frames waiting to be written (each with its newline); written after every wake-up.
    pending: Vec<u8>,
    /// The thread's output buffer while lent ([`lend`](Self::lend)); empty otherwise.
    out: Vec<u8>,
    snapshot: Snapshot,
    /// The connection's own provider ([`Shared::own_provider`]), if the server makes one
    /// per connection.
    own: Option<OwnProvider>,
    running: HashMap<CallToken, Running>,
    /// Calls waiting for the client's answer to their request.
    waiting: HashMap<CallToken, oneshot::Sender<Result<serde_json::Value, RequestError>>>,
    tx: mpsc::Sender<Command>,
    /// HTTP: which response each frame belongs to (`None`: one byte stream).
    #[cfg(feature = "http")]
    routes: Option<crate::routes::Routes>,
}

impl<W: AsyncWrite + Unpin> Connection<'_, W> {
    pub(crate) async fn run<R: AsyncRead + Unpin>(
        shared: &Shared,
        mut reader: R,
        writer: W,
        policy: Policy,
    ) -> Result<(), Error> {
        let info = shared.info.core();
        let mut session = Session::with_growing_slots(
            &info,
            shared.session_config(),
            shared.limits.max_calls.max(1),
        );
        let mut framer = LineBuf::new(shared.limits.max_frame.max(mcp_rs_core::MIN_OUTPUT));
        let (tx, mut rx) = mpsc::channel(256);
        let mut versions = shared.tools.watch();
        let mut lists = shared.lists.subscribe();
        let mut seen_lists = *lists.borrow();
        let mut stop = shared.shutdown.subscribe();
        let mut conn = Connection {
            shared,
            writer,
            pending: Vec::new(),
            out: Vec::new(),
            snapshot: shared.tools.snapshot(),
            own: shared.own_provider(),
            running: HashMap::new(),
            waiting: HashMap::new(),
            tx,
            #[cfg(feature = "http")]
            routes: None,
        };
        // Set at EOF: stop reading, let running calls finish until this deadline.
        let mut draining: Option<tokio::time::Instant> = None;
        // The last complete line, and when the line now buffered began (socket timeouts).
        let mut last_line = tokio::time::Instant::now();
        let mut line_began: Option<tokio::time::Instant> = None;
        // Whether the loop ended because the server is shutting down (then the socket
        // lingers: see [`LINGER`]).
        let mut stopping = false;
        let result = 'serve: loop {
            if draining.is_some() && conn.running.is_empty() {
                break Ok(());
            }
            if let Some(t) = &policy.tracker {
                t.set_idle(
                    conn.running.is_empty()
                        && session.calls_in_flight() == 0
                        && framer.buffered() == 0,
                );
            }
            // Idle: nothing asked and nothing running; a started line must complete. Deadlines
            // are only computed (and timers only created) when a timeout applies: the clock
            // is not read and no timer is touched per request otherwise.
            let idle_at = policy
                .idle
                .filter(|_| conn.running.is_empty() && session.calls_in_flight() == 0)
                .map(|t| last_line + t);
            let line_at = line_began.zip(policy.line).map(|(began, t)| began + t);
            let wake = match (idle_at, line_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let request_deadline = session.poll_timeout();
            tokio::select! {
                biased;
                // (mapped to `()` so the watch guard is not held across the awaits below)
                () = async { let _ = stop.wait_for(|s| *s).await; } => {
                    stopping = true;
                    break Ok(());
                }
                () = shed(policy.tracker.as_deref()) => {
                    tracing::debug!("closing an idle connection to make room for a new one");
                    break Ok(());
                }
                Some(cmd) = rx.recv() => {
                    conn.commands(&mut session, cmd, &mut rx, &mut versions, (&mut lists, &mut seen_lists))?;
                }
                Ok(()) = versions.changed() => conn.tools_changed(&mut session)?,
                Ok(()) = lists.changed() => {
                    conn.lists_changed(&mut session, &mut lists, &mut seen_lists)?;
                }
                () = sleep_until(draining), if draining.is_some() => break Ok(()),
                () = sleep_until(wake), if draining.is_none() && wake.is_some() => {
                    tracing::debug!("closing a connection: idle, or a line did not complete in time");
                    break Ok(());
                }
                // The earliest deadline of a request to the client (session clock: UNIX ms).
                () = sleep_until_ms(request_deadline), if request_deadline.is_some() => {
                    session.handle_timeout(now_ms());
                    conn.drain(&mut session)?;
                }
                read = framer.read_from(&mut reader), if draining.is_none() => {
                    match read {
                        Ok(0) => {
                            while let Some(frame) = framer.finish() {
                                let pump = Pump::frame(frame, shared.limits.max_frame, now_ms());
                                conn.exchange(&mut session, pump, None)?;
                            }
                            draining = Some(tokio::time::Instant::now() + shared.limits.drain_timeout);
                            conn.give_back();
                            conn.flush().await?;
                            continue;
                        }
                        Ok(_) => {}
                        Err(e) => break Err(Error::Io(e)),
                    }
                    let mut lines = 0usize;
                    while let Some(frame) = framer.next_frame() {
                        lines += 1;
                        let pump = Pump::frame(frame, shared.limits.max_frame, now_ms());
                        conn.exchange(&mut session, pump, None)?;
                        // Fairness: a connection that pipelines without pause yields to the
                        // others (and to shutdown) once its task's budget is spent.
                        tokio::task::consume_budget().await;
                        // Backpressure: write what is owed before reading on.
                        if conn.pending.len() >= FLUSH_AT {
                            conn.give_back();
                            if let Err(e) = conn.flush_within(policy.write).await {
                                break 'serve Err(Error::Io(e));
                            }
                        }
                    }
                    if lines > 0 && policy.idle.is_some() {
                        last_line = tokio::time::Instant::now();
                    }
                    line_began = match (framer.buffered(), line_began, policy.line) {
                        (0, _, _) | (_, _, None) => None,
                        (_, Some(t), _) => Some(t),
                        (_, None, Some(_)) => Some(tokio::time::Instant::now()),
                    };
                }
            }
            conn.give_back();
            if let Err(e) = conn.flush_within(policy.write).await {
                break Err(Error::Io(e));
            }
            framer.shrink();
        };
        for (_, r) in conn.running.drain() {
            r.abort.abort();
        }
        if result.is_ok() {
            let _ = conn.flush_within(policy.write).await;
        }
        // Waits until queued output is written (stdio) and closes our side (sockets); a peer
        // that stopped reading is not waited for.
        let shutdown = conn.writer.shutdown();
        match policy.write {
            Some(t) => {
                let _ = tokio::time::timeout(t, shutdown).await;
            }
            None => {
                let _ = shutdown.await;
            }
        }
        if stopping && policy.write.is_some() {
            // Read until the peer closes too (or briefly): closing a socket with unread
            // input resets it, and the peer's kernel may then drop replies not yet read.
            let _ = tokio::time::timeout(LINGER, async {
                while let Ok(1..) = framer.read_from(&mut reader).await {
                    framer.clear();
                }
            })
            .await;
        }
        result
    }

    /// Runs one exchange of the core's [`Pump`]: frames are queued for writing (or routed
    /// to their HTTP response), deferred calls start as tasks, client responses go to the
    /// calls waiting for them. `principal` is who sent the input (HTTP with authorization):
    /// the pump hands it to the request views, and this loop to the tasks it starts.
    fn exchange(
        &mut self,
        session: &mut Session<'_>,
        mut pump: Pump<'_>,
        principal: Option<&Arc<Principal>>,
    ) -> Result<(), Error> {
        self.lend();
        loop {
            // Cheap to make: the shared provider is only locked if the session asks for it.
            let mut handler =
                Combined::new(self.shared, &mut self.snapshot, self.own.as_deref_mut());
            let polled = pump.poll(session, &mut handler, &mut self.out);
            drop(handler);
            match polled {
                Ok(Some(Output::Transmit(tx))) => self.send(tx)?,
                Ok(Some(Output::Listen(token))) => self.adopt(token),
                Ok(Some(Output::Call(call))) => self.start(session, call, principal)?,
                Ok(Some(Output::Response(response))) => self.answered(response),
                Ok(Some(Output::Event(event))) => self.event(event),
                Ok(Some(_)) => {}
                Ok(None) => return Ok(()),
                // A queued frame larger than the buffer: it stays queued until there is room.
                Err(HandleError::OutputTooSmall { required }) if required > self.out.len() => {
                    self.out.resize(required, 0);
                }
                Err(e) => return Err(Error::Core(e)),
            }
        }
    }

    /// Starts the task of a deferred call.
    fn start(
        &mut self,
        session: &mut Session<'_>,
        call: Call<'_>,
        principal: Option<&Arc<Principal>>,
    ) -> Result<(), Error> {
        let token = call.token();
        self.adopt(token);
        match call.request {
            Request::Tool(tool) => {
                let handler = self
                    .snapshot
                    .entry(tool.tool_index())
                    .and_then(|e| e.handler.async_part().cloned());
                let Some(handler) = handler else {
                    // Sync tools are answered inside `handle`; this cannot happen, but
                    // answer rather than leak the call.
                    return self.refuse(session, token, "tool has no async handler");
                };
                let ctx = self.context(
                    token,
                    tool.wants_progress(),
                    tool.client_caps(),
                    tool.version(),
                    principal,
                );
                let args = Args::new(tool.args().as_str().to_owned());
                let name = tool.name().to_string();
                self.spawn(token, ctx.1, async move {
                    let output = guarded(&format!("tool {name}"), handler(args, ctx.0)).await;
                    Command::Done(token, Answer::Tool(output.unwrap_or_else(ToolReply::error)))
                });
            }
            Request::Prompt(prompt) => {
                let Some(handler) = self.shared.async_handlers.prompts.clone() else {
                    return self.refuse(session, token, "prompt has no async handler");
                };
                let caps = (prompt.client_caps(), prompt.version());
                let request = PromptRequest {
                    name: prompt.name().to_string(),
                    arguments: serde_json::from_str(prompt.arguments().as_str())
                        .unwrap_or_default(),
                };
                let what = format!("prompt {}", request.name);
                self.run_task(token, caps, principal, what, move |ctx| async move {
                    handler(request, ctx)
                        .await
                        .map_or_else(Answer::Failed, Answer::Prompt)
                });
            }
            Request::Read(read) => {
                let Some(handler) = self.shared.async_handlers.resources.clone() else {
                    return self.refuse(session, token, "resource has no async handler");
                };
                let caps = (read.client_caps(), read.version());
                let request = ResourceRequest {
                    uri: read.uri().to_string(),
                    resource: read.resource_index(),
                    template: read.template_index(),
                };
                let what = format!("resource {}", request.uri);
                self.run_task(token, caps, principal, what, move |ctx| async move {
                    handler(request, ctx)
                        .await
                        .map_or_else(Answer::Failed, Answer::Resource)
                });
            }
            Request::Complete(complete) => {
                let Some(handler) = self.shared.async_handlers.completion.clone() else {
                    return self.refuse(session, token, "completion has no async handler");
                };
                let caps = (complete.client_caps(), complete.version());
                let request = completion_request(&complete);
                let what = format!("completion of {}", request.argument);
                self.run_task(token, caps, principal, what, move |ctx| async move {
                    handler(request, ctx)
                        .await
                        .map_or_else(Answer::Failed, Answer::Completion)
                });
            }
            _ => {
                return self.refuse(
                    session,
                    token,
                    "deferred answers are not supported for this method",
                )
            }
        }
        Ok(())
    }

    /// Starts the task of a deferred prompt, read or completion: `task` gets the call's
    /// context; a panic becomes a -32603 answer naming `what`.
    fn run_task<F, Fut>(
        &mut self,
        token: CallToken,
        (caps, version): (ClientCaps, ProtocolVersion),
        principal: Option<&Arc<Principal>>,
        what: String,
        task: F,
    ) where
        F: FnOnce(Context) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Answer> + Send + 'static,
    {
        let (ctx, cancel) = self.context(token, false, caps, version, principal);
        self.spawn(token, cancel, async move {
            let answer = guarded(&what, task(ctx)).await.unwrap_or_else(|why| {
                let e = ErrorReply::new(mcp_rs_core::wire::jsonrpc::code::INTERNAL_ERROR, why);
                Answer::Failed(e)
            });
            Command::Done(token, answer)
        });
    }

    /// A client's response to a request a call sent: to the call's task.
    fn answered(&mut self, response: mcp_rs_core::ClientResponse<'_>) {
        let Some(reply) = self.waiting.remove(&response.call) else {
            return;
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

    /// A session event: a request timed out, a call was cancelled, the client initialized.
    fn event(&mut self, event: Event) {
        match event {
            Event::RequestTimedOut(token) => {
                if let Some(reply) = self.waiting.remove(&token) {
                    let _ = reply.send(Err(RequestError::TimedOut));
                }
            }
            Event::Cancelled(token) => {
                if let Some(r) = self.running.remove(&token) {
                    let _ = r.cancel.send(true);
                    r.abort.abort();
                }
                self.ended(token);
            }
            Event::Initialized(v) => tracing::info!(version = %v, "client initialized"),
            Event::LogLevel(l) => tracing::debug!(level = l.as_str(), "log level set"),
            _ => {}
        }
    }

    /// Applies `first` and every command already queued behind it. A list a task changed
    /// is announced before that task's answer.
    fn commands(
        &mut self,
        session: &mut Session<'_>,
        first: Command,
        rx: &mut mpsc::Receiver<Command>,
        versions: &mut watch::Receiver<u64>,
        lists: (&mut watch::Receiver<ListCounters>, &mut ListCounters),
    ) -> Result<(), Error> {
        self.lend();
        if versions.has_changed().unwrap_or(false) {
            versions.borrow_and_update();
            self.tools_changed(session)?;
        }
        if lists.0.has_changed().unwrap_or(false) {
            self.lists_changed(session, lists.0, lists.1)?;
        }
        self.command(session, first)?;
        while let Ok(cmd) = rx.try_recv() {
            self.command(session, cmd)?;
        }
        Ok(())
    }

    /// The tool registry changed: take a new snapshot and announce it.
    fn tools_changed(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        self.lend();
        self.snapshot = self.shared.tools.snapshot();
        session.tools_changed();
        self.drain(session)
    }

    /// The server announced prompt, resource or template list changes since `seen`.
    fn lists_changed(
        &mut self,
        session: &mut Session<'_>,
        lists: &mut watch::Receiver<ListCounters>,
        seen: &mut ListCounters,
    ) -> Result<(), Error> {
        self.lend();
        note_list_changes(session, *lists.borrow_and_update(), seen);
        self.drain(session)
    }

    /// A context for a call's task, and the sender that cancels it.
    fn context(
        &self,
        token: CallToken,
        wants_progress: bool,
        caps: ClientCaps,
        version: ProtocolVersion,
        principal: Option<&Arc<Principal>>,
    ) -> (Context, watch::Sender<bool>) {
        let (cancel, cancelled) = watch::channel(false);
        let ctx = Context {
            token,
            wants_progress,
            caps,
            version,
            principal: principal.cloned(),
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

    /// Routes the output of a call (or listen stream) to the response of the current
    /// message (HTTP).
    fn adopt(&mut self, token: CallToken) {
        #[cfg(feature = "http")]
        if let Some(r) = &mut self.routes {
            r.adopt(token);
        }
        #[cfg(not(feature = "http"))]
        let _ = token;
    }

    /// A call answered or ended: its response may end (HTTP).
    fn ended(&mut self, token: CallToken) {
        self.running.remove(&token);
        self.waiting.remove(&token);
        #[cfg(feature = "http")]
        if let Some(r) = &mut self.routes {
            r.done(token);
        }
    }

    /// Answers a deferred request that nothing here can run with an internal error.
    fn refuse(
        &mut self,
        session: &mut Session<'_>,
        token: CallToken,
        why: &str,
    ) -> Result<(), Error> {
        self.lend();
        let code = mcp_rs_core::wire::jsonrpc::code::INTERNAL_ERROR;
        let sent = match session.fail(token, code, why, &mut self.out) {
            Ok(Some(tx)) => self.send(tx),
            _ => Ok(()),
        };
        self.ended(token);
        sent
    }

    /// Completes a call with `answer`, growing the output buffer up to
    /// [`Limits::max_response`](crate::Limits::max_response) when the result needs it.
    fn finish(
        &mut self,
        session: &mut Session<'_>,
        token: CallToken,
        mut answer: impl FnMut(&mut Session<'_>, &mut [u8]) -> Result<Option<Transmit>, CallError>,
    ) -> Result<(), Error> {
        self.lend();
        self.running.remove(&token);
        self.waiting.remove(&token);
        let why = loop {
            match answer(session, &mut self.out) {
                Ok(Some(tx)) => {
                    let sent = self.send(tx);
                    self.ended(token);
                    return sent;
                }
                Ok(None) => {
                    self.ended(token);
                    return Ok(());
                }
                Err(CallError::BufferTooSmall { required })
                    if required <= self.shared.limits.max_response =>
                {
                    self.out.resize(required, 0);
                }
                Err(CallError::BufferTooSmall { required }) => {
                    break format!(
                        "result of {required} bytes exceeds the limit of {} bytes",
                        self.shared.limits.max_response
                    )
                }
                Err(e) => {
                    tracing::warn!(error = %e, "completing a call failed");
                    break "invalid result".to_owned();
                }
            }
        };
        self.refuse(session, token, &why)
    }

    /// Applies a message from a tool task.
    fn command(&mut self, session: &mut Session<'_>, cmd: Command) -> Result<(), Error> {
        self.lend();
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
            Command::Done(token, answer) => match answer {
                Answer::Tool(output) => self.finish(session, token, |s, out| {
                    s.complete(token, out, |r| output.write(r))
                })?,
                Answer::Prompt(output) => self.finish(session, token, |s, out| {
                    s.complete_prompt(token, out, |r| output.write(r))
                })?,
                Answer::Resource(output) => self.finish(session, token, |s, out| {
                    s.complete_read(token, out, |r| output.write(r))
                })?,
                Answer::Completion(output) => self.finish(session, token, |s, out| {
                    s.complete_completion(token, out, |r| output.write(r))
                })?,
                Answer::Failed(e) => self.finish(session, token, |s, out| {
                    s.fail(token, e.code, &e.message, out)
                })?,
            },
            Command::CloseStream(token) => {
                #[cfg(feature = "http")]
                if let Some(r) = &mut self.routes {
                    r.detach(token);
                }
                #[cfg(not(feature = "http"))]
                let _ = token;
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
        self.exchange(session, Pump::drain(), None)
    }

    /// Queues one frame plus its newline; the loop writes them after every wake-up.
    fn send(&mut self, tx: Transmit) -> Result<(), Error> {
        let frame = self
            .out
            .get(..tx.len)
            .ok_or(Error::Internal("transmit beyond buffer"))?;
        #[cfg(feature = "http")]
        if let Some(routes) = &mut self.routes {
            routes.frame(tx.route, frame);
            return Ok(());
        }
        self.pending.extend_from_slice(frame);
        self.pending.push(b'\n');
        Ok(())
    }

    /// [`flush`](Self::flush), failing with `TimedOut` when the peer takes in nothing for
    /// `limit`.
    async fn flush_within(&mut self, limit: Option<std::time::Duration>) -> io::Result<()> {
        match limit {
            None => self.flush().await,
            Some(t) => tokio::time::timeout(t, self.flush())
                .await
                .unwrap_or_else(|_| {
                    Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the peer stopped reading",
                    ))
                }),
        }
    }

    /// Borrows this thread's output buffer ([`SCRATCH`]) for a synchronous stretch of
    /// work; a no-op while lent.
    fn lend(&mut self) {
        if self.out.is_empty() {
            self.out = SCRATCH.take();
            let initial = self.initial_out();
            if self.out.len() < initial {
                self.out.resize(initial, 0);
            }
        }
    }

    /// Returns the output buffer to the thread before an `await` (the task may resume on
    /// another thread), giving back what a large answer grew it by.
    fn give_back(&mut self) {
        if self.out.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        let initial = self.initial_out();
        if out.len() > initial {
            out.truncate(initial);
            out.shrink_to_fit();
        }
        SCRATCH.set(out);
    }

    fn initial_out(&self) -> usize {
        self.shared
            .limits
            .initial_response
            .max(mcp_rs_core::MIN_OUTPUT)
    }

    async fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.writer.write_all(&self.pending).await?;
            self.writer.flush().await?;
            self.pending.clear();
            self.pending.shrink_to(PENDING_RETAIN);
        }
        Ok(())
    }
}

/// The owned copy of a `completion/complete` request.
fn completion_request(
    c: &mcp_rs_core::model::completion::CompleteRequest<'_>,
) -> CompletionRequest {
    use mcp_rs_core::model::completion::CompletionRef;
    CompletionRequest {
        target: match c.reference() {
            CompletionRef::Prompt(name) => CompletionTarget::Prompt(name.to_string()),
            CompletionRef::Resource(uri) => CompletionTarget::Resource(uri.to_string()),
        },
        argument: c.argument().to_string(),
        value: c.value().to_string(),
        context: c
            .context()
            .and_then(|raw| serde_json::from_str(raw.as_str()).ok())
            .unwrap_or_default(),
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

#[cfg(feature = "http")]
impl Connection<'_, tokio::io::Sink> {
    /// The drive loop of one HTTP session: `first` is handled at once, further bodies
    /// arrive from the HTTP layer on `inbound` (none for a stateless request), each with the
    /// sink its frames go to ([`crate::http::routes`]). Ends on `Close`, shutdown, or when
    /// the HTTP layer has dropped its sender (or gave none) and nothing is open any more (a
    /// stateless request served, an idle session forgotten). A call whose response's client
    /// went away is cancelled.
    ///
    /// A stateless request whose answer is ready once `first` is handled (a synchronous
    /// tool, a list, a read) completes within the first poll, before any timer or `select!`
    /// is set up: the HTTP layer polls this future once in place and spawns it only when
    /// it is still pending.
    pub(crate) async fn run_http(
        shared: &Shared,
        first: Option<crate::routes::Post>,
        mut inbound: Option<mpsc::Receiver<crate::routes::Inbound>>,
    ) -> Result<(), Error> {
        use crate::routes::{Inbound, Routes};
        let info = shared.info.core();
        let mut session = Session::with_growing_slots(
            &info,
            shared.session_config(),
            shared.limits.max_calls.max(1),
        );
        let (tx, mut rx) = mpsc::channel(256);
        let mut versions = shared.tools.watch();
        let mut lists = shared.lists.subscribe();
        let mut seen_lists = *lists.borrow();
        let mut stop = shared.shutdown.subscribe();
        let mut conn = Connection {
            shared,
            writer: tokio::io::sink(),
            pending: Vec::new(),
            out: Vec::new(),
            snapshot: shared.tools.snapshot(),
            own: shared.own_provider(),
            running: HashMap::new(),
            waiting: HashMap::new(),
            tx,
            routes: Some(Routes::default()),
        };
        if let Some(first) = first {
            conn.post(&mut session, first)?;
            conn.give_back();
        }
        let mut open = inbound.is_some();
        // Created when the loop first waits (a request answered at once never needs it).
        let mut sweep: Option<tokio::time::Interval> = None;
        loop {
            let idle = conn.routes.as_ref().is_none_or(Routes::idle);
            if !open && idle && conn.running.is_empty() {
                break;
            }
            let sweep = sweep.get_or_insert_with(|| {
                let mut i = tokio::time::interval(std::time::Duration::from_millis(500));
                i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                i
            });
            let request_deadline = session.poll_timeout();
            tokio::select! {
                biased;
                () = async { let _ = stop.wait_for(|s| *s).await; } => {
                    conn.close_listens(&mut session)?;
                    break;
                }
                Some(cmd) = rx.recv() => {
                    conn.commands(&mut session, cmd, &mut rx, &mut versions, (&mut lists, &mut seen_lists))?;
                }
                Ok(()) = versions.changed() => conn.tools_changed(&mut session)?,
                Ok(()) = lists.changed() => {
                    conn.lists_changed(&mut session, &mut lists, &mut seen_lists)?;
                }
                () = sleep_until_ms(request_deadline), if request_deadline.is_some() => {
                    session.handle_timeout(now_ms());
                    conn.drain(&mut session)?;
                }
                msg = async { inbound.as_mut()?.recv().await }, if open => match msg {
                    Some(Inbound::Post(p)) => conn.post(&mut session, p)?,
                    Some(Inbound::Listen(sink)) => {
                        if let Some(r) = &mut conn.routes {
                            r.listen(sink);
                        }
                    }
                    Some(Inbound::Resume { last_event_id, sink, resumed }) => {
                        let ok = conn.routes.as_mut().is_some_and(|r| r.resume(&last_event_id, sink));
                        let _ = resumed.send(ok);
                    }
                    Some(Inbound::Close) => break,
                    None => open = false,
                },
                _ = sweep.tick(), if !idle => conn.cancel_abandoned(&mut session)?,
            }
            conn.give_back();
        }
        for (_, r) in conn.running.drain() {
            r.abort.abort();
        }
        Ok(())
    }

    /// Handles one POST body: its frames go to its sink, and its outcome tells the HTTP
    /// layer how to answer.
    fn post(&mut self, session: &mut Session<'_>, post: crate::routes::Post) -> Result<(), Error> {
        let version = session.negotiated_version();
        if let Some(r) = &mut self.routes {
            r.begin(post.sink, version);
        }
        // Handlers see who sent the body: request views through `adapter_data`, the tasks
        // of deferred calls through their `Context`.
        let principal = post.principal.as_ref();
        let mut pump = Pump::message(&post.body, now_ms());
        if let Some(p) = principal {
            pump = pump.with_data(&**p);
        }
        self.exchange(session, pump, principal)?;
        let version = session.negotiated_version();
        if let Some(r) = &mut self.routes {
            let _ = post.outcome.send(r.end(version));
        }
        Ok(())
    }

    /// Shutdown: every open `subscriptions/listen` stream gets its closing response
    /// (`resultType: complete`) before the session ends.
    fn close_listens(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        self.lend();
        let open = self
            .routes
            .as_ref()
            .map(crate::routes::Routes::open_calls)
            .unwrap_or_default();
        for token in open {
            if let Ok(Some(tx)) = session.close_subscription(token, &mut self.out) {
                self.send(tx)?;
                self.ended(token);
            }
        }
        Ok(())
    }

    /// Cancels the calls and listen streams whose HTTP response has no reader any more.
    fn cancel_abandoned(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        self.lend();
        let gone = self
            .routes
            .as_ref()
            .map(crate::routes::Routes::abandoned)
            .unwrap_or_default();
        for token in gone {
            if let Some(r) = self.running.remove(&token) {
                let _ = r.cancel.send(true);
                r.abort.abort();
            }
            // Frees the core's slot; the frame it writes has nowhere to go.
            if session.close_subscription(token, &mut self.out).is_err() {
                let code = mcp_rs_core::wire::jsonrpc::code::INTERNAL_ERROR;
                let _ = session.fail(token, code, "The client went away", &mut self.out);
            }
            self.ended(token);
        }
        self.drain(session)
    }
}
