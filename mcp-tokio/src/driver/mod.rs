//! The drive loop of one connection: a `mcp_rs_core::Session`, the server's handlers, and the
//! tasks of its deferred calls. Every input goes through the core's
//! [`Pump`](mcp_rs_core::pump::Pump) ([`Connection::exchange`]); this file holds the loop of a
//! byte stream (stdio, TCP, Unix) and the output path, `tasks` what deferred calls start and
//! send back, `http` the loop of a Streamable HTTP session.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use mcp_rs_core::pump::{Output, Pump};
use mcp_rs_core::{CallToken, HandleError, Session, Transmit};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;

use crate::clock::now_ms;
use crate::context::{Command, RequestError};
use crate::error::Error;
use crate::lines::LineBuf;
use crate::principal::Principal;
use crate::registry::Snapshot;
use crate::state::{Combined, ListCounters, OwnProvider, Policy, Shared, Tracker};

#[cfg(feature = "http")]
mod http;
mod tasks;

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

/// The next command of a loop's call tasks (`None` before the first task started: the
/// `select!` branch is then disabled by its condition).
async fn next_command(commands: &mut Option<mpsc::Receiver<Command>>) -> Option<Command> {
    commands.as_mut()?.recv().await
}

/// Completes when the server's task table changed since the loop last looked; never
/// without a table (nor once its counter is gone).
async fn task_change(tasks: &mut Option<watch::Receiver<u64>>) {
    let changed = match tasks {
        Some(rx) => rx.changed().await.is_ok(),
        None => false,
    };
    if !changed {
        std::future::pending::<()>().await;
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
    /// How much of `pending` is written already (a flush was cut short).
    written: usize,
    /// The thread's output buffer while lent ([`lend`](Self::lend)); empty otherwise.
    out: Vec<u8>,
    snapshot: Snapshot,
    /// The connection's own provider ([`Shared::own_provider`]), if the server makes one
    /// per connection.
    own: Option<OwnProvider>,
    running: HashMap<CallToken, Running>,
    /// Calls waiting for the client's answer to their request.
    waiting: HashMap<CallToken, oneshot::Sender<Result<serde_json::Value, RequestError>>>,
    /// The sender of the channel its calls' tasks answer on; made when the first task
    /// starts (a connection whose calls are all answered at once, such as a stateless
    /// HTTP request of a synchronous tool, never makes one).
    tx: Option<mpsc::Sender<Command>>,
    /// The receiver of that channel, until the loop moves it into its [`Signals`].
    fresh_commands: Option<mpsc::Receiver<Command>>,
    /// HTTP: which response each frame belongs to (`None`: one byte stream).
    #[cfg(feature = "http")]
    routes: Option<crate::routes::Routes>,
}

/// What a drive loop watches besides its input.
pub(super) struct Signals {
    /// What its calls' tasks send back (none before the first task).
    commands: Option<mpsc::Receiver<Command>>,
    /// The version of the server's tool registry.
    tools: watch::Receiver<u64>,
    /// The server's counters of announced list changes, and the ones this loop has seen.
    lists: watch::Receiver<ListCounters>,
    seen_lists: ListCounters,
    /// The change counter of the server's task table (tasks extension), if it has one.
    tasks: Option<watch::Receiver<u64>>,
    /// Set once the server shuts down.
    stop: watch::Receiver<bool>,
    /// Set when the input ended before it was all read ([`Policy::input_ended`]).
    input_ended: Option<watch::Receiver<bool>>,
}

impl Signals {
    /// Whether the input has ended although not all of it was read yet.
    fn has_input_ended(&self) -> bool {
        self.input_ended.as_ref().is_some_and(|e| *e.borrow())
    }
}

impl<'s, W: AsyncWrite + Unpin> Connection<'s, W> {
    /// A connection of `shared` writing to `writer` (byte streams; HTTP routes frames
    /// instead), and the signals its loop waits for.
    fn new(shared: &'s Shared, writer: W) -> (Self, Signals) {
        let lists = shared.lists.subscribe();
        let seen_lists = *lists.borrow();
        let signals = Signals {
            commands: None,
            tools: shared.tools.watch(),
            seen_lists,
            lists,
            tasks: shared.tasks.as_ref().map(|t| t.changed.subscribe()),
            stop: shared.shutdown.subscribe(),
            input_ended: None,
        };
        let conn = Connection {
            shared,
            writer,
            pending: Vec::new(),
            written: 0,
            out: Vec::new(),
            snapshot: shared.tools.snapshot(),
            own: shared.own_provider(),
            running: HashMap::new(),
            waiting: HashMap::new(),
            tx: None,
            fresh_commands: None,
            #[cfg(feature = "http")]
            routes: None,
        };
        (conn, signals)
    }
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
        let (mut conn, mut signals) = Connection::new(shared, writer);
        signals.input_ended = policy.input_ended.clone();
        // Set at EOF: stop reading, let running calls finish until this deadline.
        let mut draining: Option<tokio::time::Instant> = None;
        // The last complete line, and when the line now buffered began (socket timeouts).
        let mut last_line = tokio::time::Instant::now();
        let mut line_began: Option<tokio::time::Instant> = None;
        // Whether the loop ended because the server is shutting down (then the socket
        // lingers: see [`LINGER`]).
        let mut stopping = false;
        // Whether the peer's input ended and it did not take the replies still owed within
        // `close_timeout`: they are dropped, and the connection ends without waiting more.
        let mut abandoned = false;
        // How long writes may take once the connection is closing (shutdown, or EOF): a
        // peer that never reads cannot hold it open.
        let close = shared.limits.close_timeout;
        let closing = policy.write.map_or(close, |w| w.min(close));
        let result = 'serve: loop {
            conn.hand_over_commands(&mut signals);
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
                () = async { let _ = signals.stop.wait_for(|s| *s).await; } => {
                    stopping = true;
                    break Ok(());
                }
                () = shed(policy.tracker.as_deref()) => {
                    tracing::debug!("closing an idle connection to make room for a new one");
                    break Ok(());
                }
                Some(cmd) = next_command(&mut signals.commands), if signals.commands.is_some() => conn.commands(&mut session, cmd, &mut signals)?,
                Ok(()) = signals.tools.changed() => conn.tools_changed(&mut session)?,
                Ok(()) = signals.lists.changed() => conn.lists_changed(&mut session, &mut signals)?,
                () = task_change(&mut signals.tasks), if signals.tasks.is_some() => conn.tasks_changed(&mut session)?,
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
                            match conn.flush_serving(Some(closing), closing, &mut signals).await {
                                Ok(true) => continue,
                                Ok(false) => {
                                    stopping = true;
                                    break Ok(());
                                }
                                Err(e) => {
                                    abandoned = true;
                                    break conn.abandon(e);
                                }
                            }
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
                            match conn.flush_serving(policy.write, closing, &mut signals).await {
                                Ok(true) => {}
                                Ok(false) => {
                                    stopping = true;
                                    break 'serve Ok(());
                                }
                                Err(e) if signals.has_input_ended() => {
                                    abandoned = true;
                                    break 'serve conn.abandon(e);
                                }
                                Err(e) => break 'serve Err(Error::Io(e)),
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
            let limit = if draining.is_some() {
                Some(closing)
            } else {
                policy.write
            };
            match conn.flush_serving(limit, closing, &mut signals).await {
                Ok(true) => {}
                Ok(false) => {
                    stopping = true;
                    break Ok(());
                }
                Err(e) if draining.is_some() || signals.has_input_ended() => {
                    abandoned = true;
                    break conn.abandon(e);
                }
                Err(e) => break Err(Error::Io(e)),
            }
            framer.shrink();
        };
        for (_, r) in conn.running.drain() {
            r.abort.abort();
        }
        // One budget for the replies still owed and for closing: `close_timeout` in all.
        let closed_by = tokio::time::Instant::now() + closing;
        if result.is_ok() && !abandoned {
            let _ = tokio::time::timeout_at(closed_by, conn.flush()).await;
        }
        // Waits until queued output is written (stdio) and closes our side (sockets); a peer
        // that stopped reading is not waited for beyond the budget (not at all once
        // abandoned: one poll sends a socket's FIN).
        let wait = if abandoned {
            std::time::Duration::ZERO
        } else {
            closed_by.saturating_duration_since(tokio::time::Instant::now())
        };
        let _ = tokio::time::timeout(wait, conn.writer.shutdown()).await;
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
    pub(super) fn exchange(
        &mut self,
        session: &mut Session<'_>,
        mut pump: Pump<'_>,
        principal: Option<&Arc<Principal>>,
    ) -> Result<(), Error> {
        self.lend();
        // A listen stream opened: its subscribed tasks' current state follows its
        // acknowledgement.
        let mut listened = false;
        loop {
            // Cheap to make: the shared provider is only locked if the session asks for it.
            let mut handler =
                Combined::new(self.shared, &mut self.snapshot, self.own.as_deref_mut());
            let polled = pump.poll(session, &mut handler, &mut self.out);
            drop(handler);
            match polled {
                Ok(Some(Output::Transmit(tx))) => self.send(tx)?,
                Ok(Some(Output::Listen(token))) => {
                    self.adopt(token);
                    listened = true;
                }
                Ok(Some(Output::Call(call))) => self.start(session, call, principal)?,
                Ok(Some(Output::Response(response))) => self.answered(response),
                Ok(Some(Output::Event(event))) => self.event(event),
                Ok(Some(_)) => {}
                Ok(None) if listened => return self.tasks_changed(session),
                Ok(None) => return Ok(()),
                // A queued frame larger than the buffer: it stays queued until there is room.
                Err(HandleError::OutputTooSmall { required }) if required > self.out.len() => {
                    self.out.resize(required, 0);
                }
                Err(e) => return Err(Error::Core(e)),
            }
        }
    }

    /// The server's task table may have changed (or a listen stream just opened): sends
    /// each subscribed stream the `notifications/tasks` it is owed, one pass of
    /// [`Session::tasks_changed_next`]. A frame larger than
    /// [`Limits::max_response`](crate::Limits::max_response) is skipped (logged).
    pub(super) fn tasks_changed(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        if self.shared.tasks.is_none() {
            return Ok(());
        }
        self.lend();
        let mut cursor = 0;
        loop {
            let mut handler =
                Combined::new(self.shared, &mut self.snapshot, self.own.as_deref_mut());
            let next =
                session.tasks_changed_next(&mut handler, &mut cursor, now_ms(), &mut self.out);
            drop(handler);
            match next {
                Ok(Some(tx)) => self.send(tx)?,
                Ok(None) => return Ok(()),
                Err(e) if e.required <= self.shared.limits.max_response => {
                    self.out.resize(e.required, 0);
                }
                Err(e) => {
                    tracing::warn!(
                        "a task notification of {} bytes exceeds the limit of {} bytes: not sent",
                        e.required,
                        self.shared.limits.max_response
                    );
                    cursor += 1;
                }
            }
        }
    }

    /// The sender the calls' tasks answer on, made with its channel on first use.
    pub(super) fn sender(&mut self) -> mpsc::Sender<Command> {
        if let Some(tx) = &self.tx {
            return tx.clone();
        }
        let (tx, rx) = mpsc::channel(256);
        self.fresh_commands = Some(rx);
        self.tx = Some(tx.clone());
        tx
    }

    /// Gives the loop's signals the receiver of a channel made since it last waited.
    pub(super) fn hand_over_commands(&mut self, signals: &mut Signals) {
        if let Some(rx) = self.fresh_commands.take() {
            signals.commands = Some(rx);
        }
    }

    /// Drains core output and events after every input or command.
    pub(super) fn drain(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        self.exchange(session, Pump::drain(), None)
    }

    /// Queues one frame plus its newline; the loop writes them after every wake-up.
    pub(super) fn send(&mut self, tx: Transmit) -> Result<(), Error> {
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

    /// The peer ended its input and did not read the replies still owed within
    /// `close_timeout`: it has gone, which ends the connection normally (`error` is logged).
    fn abandon(&mut self, error: io::Error) -> Result<(), Error> {
        tracing::debug!(%error, unwritten = self.pending.len() - self.written, "the peer ended its input and stopped reading; dropping the replies it did not take");
        self.pending.clear();
        self.written = 0;
        Ok(())
    }

    /// [`flush_within`](Self::flush_within) `limit` while serving: `Ok(false)`, with the
    /// unwritten rest still pending, when the server shuts down first; once the input has
    /// ended (stdio read ahead), the rest gets `closing` instead.
    async fn flush_serving(
        &mut self,
        limit: Option<std::time::Duration>,
        closing: std::time::Duration,
        signals: &mut Signals,
    ) -> io::Result<bool> {
        if self.pending.is_empty() {
            return Ok(true);
        }
        let Signals {
            stop, input_ended, ..
        } = signals;
        let ended = async {
            match input_ended {
                Some(ended) => {
                    let _ = ended.wait_for(|e| *e).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            flushed = self.flush_within(limit) => flushed.map(|()| true),
            () = async { let _ = stop.wait_for(|s| *s).await; } => Ok(false),
            // (the flush is cancel-safe: nothing is written twice)
            () = ended => self.flush_within(Some(closing)).await.map(|()| true),
        }
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
    pub(super) fn lend(&mut self) {
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
    pub(super) fn give_back(&mut self) {
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

    pub(super) fn initial_out(&self) -> usize {
        self.shared
            .limits
            .initial_response
            .max(mcp_rs_core::MIN_OUTPUT)
    }

    /// Writes what is pending. Cancel-safe: what was written is remembered
    /// ([`written`](Self::written)), so a flush cut short (a timeout, shutdown) and started
    /// again never writes a byte twice.
    async fn flush(&mut self) -> io::Result<()> {
        while let Some(rest) = self.pending.get(self.written..).filter(|r| !r.is_empty()) {
            let n = self.writer.write(rest).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            self.written += n;
        }
        if !self.pending.is_empty() {
            self.writer.flush().await?;
            self.pending.clear();
            self.pending.shrink_to(PENDING_RETAIN);
            self.written = 0;
        }
        Ok(())
    }
}
