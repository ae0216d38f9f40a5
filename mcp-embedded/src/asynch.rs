//! The async runner, over [`embedded_io_async::Read`] and [`embedded_io_async::Write`]
//! (embassy and other executors).
//!
//! One task serves the link; the application drives it with three sources of work and
//! `select`s between them (embassy-futures' `select3`, for instance):
//!
//! - [`Runner::read`]: one read into the receive buffer. It only reads, so it is
//!   **cancel-safe whenever the reader's `read` is** (dropping it loses no byte the runner
//!   took): it can lose a `select` to a completion or a timer. Follow every read with
//!   [`Runner::answer`], which answers the lines it completed.
//! - completions from the application (a channel fed by another task or an interrupt):
//!   [`Runner::complete`], [`Runner::fail`], [`Runner::progress`],
//!   [`Runner::resource_updated`], [`Runner::list_changed`], [`Runner::command`];
//! - a timer at [`Session::poll_timeout`], then [`Runner::handle_timeout`].
//!
//! Every method that writes (`answer`, the commands, `handle_timeout`, `step_with`) is
//! **not cancel-safe**: dropping it mid-write may leave a partial frame on the wire. Run
//! them to completion, outside the `select`. The session, server and hooks are lent to each
//! call only, never held across the `select`'s await, so other code may use them between
//! calls.
//!
//! ```no_run
//! # use core::future::{pending, poll_fn, Future};
//! # use core::pin::pin;
//! # use core::task::Poll;
//! # // What embassy-futures' `select` does, so that this example needs no executor.
//! # enum Either<A, B> { First(A), Second(B) }
//! # async fn select<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
//! #     let (mut a, mut b) = (pin!(a), pin!(b));
//! #     poll_fn(|cx| {
//! #         if let Poll::Ready(x) = a.as_mut().poll(cx) { return Poll::Ready(Either::First(x)); }
//! #         if let Poll::Ready(y) = b.as_mut().poll(cx) { return Poll::Ready(Either::Second(y)); }
//! #         Poll::Pending
//! #     }).await
//! # }
//! use embedded_io_async::{Read, Write};
//! use mcp_rs_core::{CallToken, ServerHandler, Session};
//! use mcp_rs_embedded::{asynch::Runner, Error, Hooks, Step};
//!
//! /// The link's task. `finished()` is the receiving end of a channel the hardware tasks
//! /// send completed measurements to (embassy-sync's `Channel::receive`); `timer(at)`
//! /// sleeps until `at` on the runner's clock (`Timer::at`).
//! async fn serve<R: Read, W: Write, D: Future<Output = (CallToken, f32)>, T: Future<Output = ()>>(
//!     runner: &mut Runner<'_>,
//!     session: &mut Session<'_>,
//!     server: &mut impl ServerHandler,
//!     hooks: &mut impl Hooks, // keeps the tokens of deferred calls, starts the hardware
//!     rx: &mut R,
//!     tx: &mut W,
//!     mut finished: impl FnMut() -> D,
//!     mut timer: impl FnMut(u64) -> T,
//! ) -> Result<(), Error<W::Error>> {
//!     loop {
//!         let deadline = session.poll_timeout();
//!         let wake = async {
//!             match deadline {
//!                 Some(at) => timer(at).await,
//!                 None => pending().await,
//!             }
//!         };
//!         // Only `read` is raced: it is cancel-safe (if the reader's `read` is).
//!         match select(runner.read(rx), select(finished(), wake)).await {
//!             Either::First(Step::Eof) => {
//!                 runner.answer(session, server, hooks, tx).await?;
//!                 return Ok(());
//!             }
//!             Either::First(_) => runner.answer(session, server, hooks, tx).await?,
//!             Either::Second(Either::First((token, celsius))) => {
//!                 let text = if celsius > 0.0 { "above freezing" } else { "freezing" };
//!                 // `false`: the client cancelled it meanwhile (the hooks heard it).
//!                 runner.complete(session, hooks, tx, token, |r| { r.text(text); }).await?;
//!             }
//!             Either::Second(Either::Second(())) => {
//!                 runner.handle_timeout(session, hooks, tx).await?
//!             }
//!         }
//!     }
//! }
//! ```

use embedded_io_async::{Error as _, Read, Write};
use mcp_rs_core::{
    CallError, CallToken, ListKind, ProgressValue, ServerHandler, Session, ToolResult, ToolSet,
    ToolsOnly, Transmit,
};

use crate::{
    frame_bytes, next_frame, resource_updated, run_command, Buffers, Clock, Core, Error, Exchange,
    Hooks, NoServer, Stats, Step,
};

/// Serves MCP over an async byte stream: `run_with(...).await` in a task when every
/// request is answered inline, or [`read`](Self::read) / [`answer`](Self::answer) in a
/// loop of your own that also `select`s on completions and a timer (see the
/// [module docs](self)). [`step`](Self::step) and [`run`](Self::run) serve a bare
/// [`ToolSet`].
///
/// The reader should complete once at least one byte is available and return every byte
/// it has. The runner answers each complete line as soon as it arrives.
#[derive(Debug)]
pub struct Runner<'b> {
    core: Core<'b>,
}

impl<'b> Runner<'b> {
    /// A runner over caller-owned buffers, without a clock (the session's time stays at 0
    /// unless [`with_clock`](Self::with_clock) gives one).
    pub fn new<const RX: usize, const TX: usize>(buffers: &'b mut Buffers<RX, TX>) -> Self {
        Runner {
            core: Core::new(buffers),
        }
    }

    /// Reads the time from `clock` (milliseconds, never going backwards) at every exchange,
    /// command and [`handle_timeout`](Self::handle_timeout); see [`Clock`].
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.core.clock = Some(clock);
        self
    }

    /// Counters since creation.
    pub fn stats(&self) -> Stats {
        self.core.stats
    }

    /// [`step_with`](Self::step_with) for a server that offers only tools, answered inline
    /// (a deferred call is answered with -32603 [`DEFERRED_CALL_MESSAGE`](crate::DEFERRED_CALL_MESSAGE)).
    pub async fn step<T, R, W>(
        &mut self,
        session: &mut Session<'_>,
        tools: &mut T,
        reader: &mut R,
        writer: &mut W,
    ) -> Result<Step, Error<W::Error>>
    where
        T: ToolSet + ?Sized,
        R: Read,
        W: Write,
    {
        self.step_with(session, &mut ToolsOnly(tools), &mut (), reader, writer)
            .await
    }

    /// [`run_with`](Self::run_with) for a server that offers only tools (see
    /// [`step`](Self::step)).
    pub async fn run<T, R, W>(
        &mut self,
        session: &mut Session<'_>,
        tools: &mut T,
        reader: &mut R,
        writer: &mut W,
    ) -> Result<(), Error<W::Error>>
    where
        T: ToolSet + ?Sized,
        R: Read,
        W: Write,
    {
        self.run_with(session, &mut ToolsOnly(tools), &mut (), reader, writer)
            .await
    }

    /// Reads once (until the reader's future completes), answers every complete line with
    /// `server`, hands deferred requests and events to `hooks`, and reports what happened.
    /// A receive error is not fatal: it is returned as [`Step::RxError`] and the runner
    /// resyncs at the next newline. Only a failing writer is an error.
    pub async fn step_with<S, H, R, W>(
        &mut self,
        session: &mut Session<'_>,
        server: &mut S,
        hooks: &mut H,
        reader: &mut R,
        writer: &mut W,
    ) -> Result<Step, Error<W::Error>>
    where
        S: ServerHandler + ?Sized,
        H: Hooks + ?Sized,
        R: Read,
        W: Write,
    {
        let step = self.read(reader).await;
        self.answer(session, server, hooks, writer).await?;
        Ok(step)
    }

    /// Serves until the reader reports end of input (`Ok(0)`), answering a final line that
    /// has no newline. Receive errors are survived (see [`step_with`](Self::step_with)); a
    /// failing writer ends the loop with an error.
    pub async fn run_with<S, H, R, W>(
        &mut self,
        session: &mut Session<'_>,
        server: &mut S,
        hooks: &mut H,
        reader: &mut R,
        writer: &mut W,
    ) -> Result<(), Error<W::Error>>
    where
        S: ServerHandler + ?Sized,
        H: Hooks + ?Sized,
        R: Read,
        W: Write,
    {
        loop {
            if self
                .step_with(session, server, hooks, reader, writer)
                .await?
                == Step::Eof
            {
                return Ok(());
            }
        }
    }

    /// Reads once into the receive buffer and reports what came ([`Step::Received`],
    /// [`Step::Eof`] or [`Step::RxError`]); answers nothing: call
    /// [`answer`](Self::answer) next. Cancel-safe when the reader's `read` is: the bytes
    /// are taken only when the read completes. If a complete line is still waiting to be
    /// answered, returns `Step::Received(0)` at once without reading.
    pub async fn read<R: Read>(&mut self, reader: &mut R) -> Step {
        let buf = self.core.read_buf();
        if buf.is_empty() {
            return Step::Received(0);
        }
        let read = reader.read(buf).await.map_err(|e| e.kind());
        self.core.received(read)
    }

    /// Answers every complete line buffered by [`read`](Self::read) (and, after end of
    /// input, a last line without newline) with `server`, handing deferred requests and
    /// events to `hooks`. Not cancel-safe (it writes).
    pub async fn answer<S, H, W>(
        &mut self,
        session: &mut Session<'_>,
        server: &mut S,
        hooks: &mut H,
        writer: &mut W,
    ) -> Result<(), Error<W::Error>>
    where
        S: ServerHandler + ?Sized,
        H: Hooks + ?Sized,
        W: Write,
    {
        let limit = self.core.framer.max_len();
        let ending = self.core.eof && !self.core.resync;
        let now = self.core.now();
        while let Some(frame) = next_frame(&mut self.core.framer, ending) {
            let exchange = Exchange::new(frame, limit, now, &mut self.core.stats);
            send(
                exchange,
                None,
                session,
                server,
                hooks,
                writer,
                self.core.tx,
                &mut self.core.stats,
            )
            .await?;
        }
        if self.core.eof {
            self.core.end_of_input();
        }
        Ok(())
    }

    /// Passes the clock's time to the session ([`Session::handle_timeout`]): requests to
    /// the client past their deadline are cancelled (`notifications/cancelled`, then
    /// [`Event::RequestTimedOut`](mcp_rs_core::Event::RequestTimedOut) to the hooks). Call
    /// it when [`Session::poll_timeout`] is due (a timer at that instant, `select`ed with
    /// [`read`](Self::read)).
    pub async fn handle_timeout<H, W>(
        &mut self,
        session: &mut Session<'_>,
        hooks: &mut H,
        writer: &mut W,
    ) -> Result<(), Error<W::Error>>
    where
        H: Hooks + ?Sized,
        W: Write,
    {
        self.command(session, hooks, writer, |_, _| Ok(None))
            .await
            .map(|_| ())
    }

    /// Runs `command` on the session with the transmit buffer, writes the frame it returns
    /// (if any) and then everything the session queued, and flushes: the way to send what
    /// the runner has no method for (`complete_read`, `complete_prompt`,
    /// `complete_completion`, `log`, `request`). The session's time is advanced to the
    /// clock's first. `Ok(false)` when the command sent nothing (a call cancelled
    /// meanwhile, no progress token...); [`Error::Call`] when it refused (nothing sent).
    pub async fn command<H, W, F>(
        &mut self,
        session: &mut Session<'_>,
        hooks: &mut H,
        writer: &mut W,
        command: F,
    ) -> Result<bool, Error<W::Error>>
    where
        H: Hooks + ?Sized,
        W: Write,
        F: FnOnce(&mut Session<'_>, &mut [u8]) -> Result<Option<Transmit>, CallError>,
    {
        session.handle_timeout(self.core.now());
        let first = run_command(session, self.core.tx, &mut self.core.stats, command)
            .map_err(Error::Call)?;
        send(
            Exchange::drain(),
            first,
            session,
            &mut NoServer,
            hooks,
            writer,
            self.core.tx,
            &mut self.core.stats,
        )
        .await?;
        Ok(first.is_some())
    }

    /// Completes a deferred `tools/call` ([`Session::complete`]): `write` fills the result.
    /// `Ok(false)` if the client cancelled it meanwhile. A result larger than the transmit
    /// buffer is refused with [`Error::Call`]`(`[`CallError::BufferTooSmall`]`)` and the
    /// call stays in flight.
    pub async fn complete<H, W>(
        &mut self,
        session: &mut Session<'_>,
        hooks: &mut H,
        writer: &mut W,
        token: CallToken,
        write: impl FnOnce(&mut ToolResult<'_, '_>),
    ) -> Result<bool, Error<W::Error>>
    where
        H: Hooks + ?Sized,
        W: Write,
    {
        self.command(session, hooks, writer, |s, tx| s.complete(token, tx, write))
            .await
    }

    /// Answers a deferred request of any kind with a JSON-RPC error ([`Session::fail`]).
    pub async fn fail<H, W>(
        &mut self,
        session: &mut Session<'_>,
        hooks: &mut H,
        writer: &mut W,
        token: CallToken,
        code: i32,
        message: &str,
    ) -> Result<bool, Error<W::Error>>
    where
        H: Hooks + ?Sized,
        W: Write,
    {
        self.command(session, hooks, writer, |s, tx| {
            s.fail(token, code, message, tx)
        })
        .await
    }

    /// Sends `notifications/progress` for a deferred call ([`Session::progress`];
    /// `Ok(false)` when the client asked for none). Integer values (`u32`, ...) are written
    /// without float formatting ([`ProgressValue`]).
    #[allow(clippy::too_many_arguments)]
    pub async fn progress<H, W, P>(
        &mut self,
        session: &mut Session<'_>,
        hooks: &mut H,
        writer: &mut W,
        token: CallToken,
        progress: P,
        total: Option<P>,
        message: Option<&str>,
    ) -> Result<bool, Error<W::Error>>
    where
        H: Hooks + ?Sized,
        W: Write,
        P: ProgressValue,
    {
        self.command(session, hooks, writer, |s, tx| {
            s.progress(token, progress, total, message, tx)
        })
        .await
    }

    /// A resource changed: sends `notifications/resources/updated` to a legacy session
    /// ([`Session::resource_updated`]; the application keeps those subscriptions: call this
    /// when the legacy client subscribed to `uri`, else
    /// [`resource_updated_on_streams`](Self::resource_updated_on_streams)) and to every
    /// 2026-07-28 `subscriptions/listen` stream whose `resourceSubscriptions` named it
    /// ([`Session::resource_updated_next`]; the core keeps those), each tagged with its
    /// subscription id. `Ok(false)` when nobody was told. A frame larger than the transmit
    /// buffer ends the round with [`Error::Call`]`(`[`CallError::BufferTooSmall`]`)`.
    pub async fn resource_updated<H, W>(
        &mut self,
        session: &mut Session<'_>,
        hooks: &mut H,
        writer: &mut W,
        uri: &str,
    ) -> Result<bool, Error<W::Error>>
    where
        H: Hooks + ?Sized,
        W: Write,
    {
        self.resource_updates(session, hooks, writer, uri, None)
            .await
    }

    /// [`resource_updated`](Self::resource_updated) for the 2026-07-28
    /// `subscriptions/listen` streams only: what to call when no legacy client subscribed
    /// to `uri` (a legacy session on the connection hears nothing).
    pub async fn resource_updated_on_streams<H, W>(
        &mut self,
        session: &mut Session<'_>,
        hooks: &mut H,
        writer: &mut W,
        uri: &str,
    ) -> Result<bool, Error<W::Error>>
    where
        H: Hooks + ?Sized,
        W: Write,
    {
        self.resource_updates(session, hooks, writer, uri, Some(0))
            .await
    }

    /// One `notifications/resources/updated` a command, until none is left.
    async fn resource_updates<H, W>(
        &mut self,
        session: &mut Session<'_>,
        hooks: &mut H,
        writer: &mut W,
        uri: &str,
        mut next: Option<usize>,
    ) -> Result<bool, Error<W::Error>>
    where
        H: Hooks + ?Sized,
        W: Write,
    {
        let mut sent = false;
        while self
            .command(session, hooks, writer, |s, tx| {
                resource_updated(s, uri, &mut next, tx)
            })
            .await?
        {
            sent = true;
        }
        Ok(sent)
    }

    /// A list changed ([`Session::list_changed`]): its cursors become stale and its
    /// `notifications/*/list_changed` is written (to a legacy session and to every
    /// 2026-07-28 `subscriptions/listen` stream that asked for it).
    pub async fn list_changed<H, W>(
        &mut self,
        session: &mut Session<'_>,
        hooks: &mut H,
        writer: &mut W,
        kind: ListKind,
    ) -> Result<(), Error<W::Error>>
    where
        H: Hooks + ?Sized,
        W: Write,
    {
        session.list_changed(kind);
        self.handle_timeout(session, hooks, writer).await
    }
}

/// Writes `first` (a frame already in `tx`), then every frame of one exchange, then
/// flushes.
#[allow(clippy::too_many_arguments)]
async fn send<S: ServerHandler + ?Sized, H: Hooks + ?Sized, W: Write>(
    mut exchange: Exchange<'_>,
    first: Option<usize>,
    session: &mut Session<'_>,
    server: &mut S,
    hooks: &mut H,
    writer: &mut W,
    tx: &mut [u8],
    stats: &mut Stats,
) -> Result<(), Error<W::Error>> {
    let mut sent = false;
    let mut next = first;
    while let Some(len) = next
        .take()
        .or_else(|| exchange.next(session, server, hooks, tx, stats))
    {
        let (bytes, newline) = frame_bytes(tx, len);
        write_all(writer, bytes).await?;
        if newline {
            write_all(writer, b"\n").await?;
        }
        stats.frames_sent = stats.frames_sent.saturating_add(1);
        sent = true;
    }
    if sent {
        writer.flush().await.map_err(Error::Write)?;
    }
    Ok(())
}

/// `write_all` that reports a zero-length write instead of panicking.
async fn write_all<W: Write>(writer: &mut W, mut bytes: &[u8]) -> Result<(), Error<W::Error>> {
    while !bytes.is_empty() {
        match writer.write(bytes).await {
            Ok(0) => return Err(Error::WriteZero),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e) => return Err(Error::Write(e)),
        }
    }
    Ok(())
}
