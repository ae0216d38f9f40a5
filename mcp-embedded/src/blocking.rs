//! The blocking runner, over [`embedded_io::Read`] and [`embedded_io::Write`].
//!
//! A superloop serves input, time and the application's completions in turn:
//!
//! - [`Runner::poll_with`] reads only when the reader reports bytes ready
//!   ([`embedded_io::ReadReady`]), so the loop never blocks in a read and can complete
//!   deferred calls and handle timeouts between reads (then sleep until the next interrupt,
//!   e.g. with `WFI`). Plain `embedded_io::Read` has no way to say "nothing yet": a reader
//!   without `ReadReady` can only be served with [`Runner::step_with`], which blocks until
//!   bytes come, and time then advances only when they do.
//! - Commands ([`Runner::complete`], [`Runner::fail`], [`Runner::progress`],
//!   [`Runner::resource_updated`], [`Runner::list_changed`], [`Runner::command`]) write
//!   their frame and everything the session queued after it.
//! - [`Runner::handle_timeout`] passes the clock's time to the session (requests to the
//!   client that outlived their deadline are cancelled) and writes what that caused.

use embedded_io::{Error as _, Read, ReadReady, Write};
use mcp_rs_core::{
    CallError, CallToken, ListKind, ProgressValue, ServerHandler, Session, ToolResult, ToolSet,
    ToolsOnly, Transmit,
};

use crate::{
    frame_bytes, next_frame, resource_updated, run_command, Buffers, Clock, Core, Error, Exchange,
    Hooks, NoServer, Stats, Step,
};

/// Serves MCP over a blocking byte stream: call [`poll_with`](Self::poll_with) or
/// [`step_with`](Self::step_with) from a superloop, or [`run_with`](Self::run_with) until
/// end of input. [`step`](Self::step) and [`run`](Self::run) serve a bare [`ToolSet`]
/// (the smallest firmware).
///
/// The reader should block until at least one byte is available (sleeping with `WFI`
/// while its receive interrupt fills a ring buffer is the usual way) and return every byte
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
    pub fn step<T, R, W>(
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
    }

    /// [`run_with`](Self::run_with) for a server that offers only tools (see
    /// [`step`](Self::step)).
    pub fn run<T, R, W>(
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
    }

    /// Reads once (blocking until the reader returns), answers every complete line with
    /// `server`, hands deferred requests and events to `hooks`, and reports what happened.
    /// A receive error is not fatal: it is returned as [`Step::RxError`] and the runner
    /// resyncs at the next newline. Only a failing writer is an error.
    pub fn step_with<S, H, R, W>(
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
        let buf = self.core.read_buf();
        // Empty only while a complete line waits (a runner answers every line it reads, so
        // never in practice): answer it rather than mistake the empty read for the end.
        let step = if buf.is_empty() {
            Step::Received(0)
        } else {
            let read = reader.read(buf).map_err(|e| e.kind());
            self.core.received(read)
        };
        self.answer(session, server, hooks, writer)?;
        Ok(step)
    }

    /// Never blocks in a read: handles a due timeout ([`Session::poll_timeout`] against
    /// the clock), then reads and answers (as [`step_with`](Self::step_with)) only if the
    /// reader has bytes ready, else returns [`Step::Idle`]. The loop of a superloop that
    /// also completes deferred calls: poll, complete what finished, sleep until the next
    /// interrupt.
    pub fn poll_with<S, H, R, W>(
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
        R: Read + ReadReady,
        W: Write,
    {
        if session
            .poll_timeout()
            .is_some_and(|due| due <= self.core.now())
        {
            self.handle_timeout(session, hooks, writer)?;
        }
        match reader.read_ready() {
            Ok(true) => self.step_with(session, server, hooks, reader, writer),
            Ok(false) => Ok(Step::Idle),
            Err(e) => Ok(self.core.rx_error(e.kind())),
        }
    }

    /// Serves until the reader reports end of input (`Ok(0)`), answering a final line that
    /// has no newline. Receive errors are survived (see [`step_with`](Self::step_with)); a
    /// failing writer ends the loop with an error.
    pub fn run_with<S, H, R, W>(
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
            if self.step_with(session, server, hooks, reader, writer)? == Step::Eof {
                return Ok(());
            }
        }
    }

    /// Answers every complete line buffered (and, after end of input, the last one).
    fn answer<S, H, W>(
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
            )?;
        }
        if self.core.eof {
            self.core.end_of_input();
        }
        Ok(())
    }

    /// Passes the clock's time to the session ([`Session::handle_timeout`]): requests to
    /// the client past their deadline are cancelled (`notifications/cancelled`, then
    /// [`Event::RequestTimedOut`](mcp_rs_core::Event::RequestTimedOut) to the hooks). Call
    /// it when [`Session::poll_timeout`] is due ([`poll_with`](Self::poll_with) does).
    pub fn handle_timeout<H, W>(
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
            .map(|_| ())
    }

    /// Runs `command` on the session with the transmit buffer, writes the frame it returns
    /// (if any) and then everything the session queued, and flushes: the way to send what
    /// the runner has no method for (`complete_read`, `complete_prompt`,
    /// `complete_completion`, `log`, `request`). The session's time is advanced to the
    /// clock's first. `Ok(false)` when the command sent nothing (a call cancelled
    /// meanwhile, no progress token...); [`Error::Call`] when it refused (nothing sent).
    pub fn command<H, W, F>(
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
        )?;
        Ok(first.is_some())
    }

    /// Completes a deferred `tools/call` ([`Session::complete`]): `write` fills the result.
    /// `Ok(false)` if the client cancelled it meanwhile. A result larger than the transmit
    /// buffer is refused with [`Error::Call`]`(`[`CallError::BufferTooSmall`]`)` and the
    /// call stays in flight.
    pub fn complete<H, W>(
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
    }

    /// Answers a deferred request of any kind with a JSON-RPC error ([`Session::fail`]).
    pub fn fail<H, W>(
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
    }

    /// Sends `notifications/progress` for a deferred call ([`Session::progress`];
    /// `Ok(false)` when the client asked for none). Integer values (`u32`, ...) are written
    /// without float formatting ([`ProgressValue`]).
    #[allow(clippy::too_many_arguments)]
    pub fn progress<H, W, P>(
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
    }

    /// A resource changed: sends `notifications/resources/updated` to a legacy session
    /// ([`Session::resource_updated`]; the application keeps those subscriptions: call this
    /// when the legacy client subscribed to `uri`, else
    /// [`resource_updated_on_streams`](Self::resource_updated_on_streams)) and to every
    /// 2026-07-28 `subscriptions/listen` stream whose `resourceSubscriptions` named it
    /// ([`Session::resource_updated_next`]; the core keeps those), each tagged with its
    /// subscription id. `Ok(false)` when nobody was told. A frame larger than the transmit
    /// buffer ends the round with [`Error::Call`]`(`[`CallError::BufferTooSmall`]`)`.
    pub fn resource_updated<H, W>(
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
    }

    /// [`resource_updated`](Self::resource_updated) for the 2026-07-28
    /// `subscriptions/listen` streams only: what to call when no legacy client subscribed
    /// to `uri` (a legacy session on the connection hears nothing).
    pub fn resource_updated_on_streams<H, W>(
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
    }

    /// One `notifications/resources/updated` a command, until none is left.
    fn resource_updates<H, W>(
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
        while self.command(session, hooks, writer, |s, tx| {
            resource_updated(s, uri, &mut next, tx)
        })? {
            sent = true;
        }
        Ok(sent)
    }

    /// A list changed ([`Session::list_changed`]): its cursors become stale and its
    /// `notifications/*/list_changed` is written (to a legacy session and to every
    /// 2026-07-28 `subscriptions/listen` stream that asked for it).
    pub fn list_changed<H, W>(
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
        self.handle_timeout(session, hooks, writer)
    }
}

/// Writes `first` (a frame already in `tx`), then every frame of one exchange, then
/// flushes.
#[allow(clippy::too_many_arguments)]
fn send<S: ServerHandler + ?Sized, H: Hooks + ?Sized, W: Write>(
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
        write_all(writer, bytes)?;
        if newline {
            write_all(writer, b"\n")?;
        }
        stats.frames_sent = stats.frames_sent.saturating_add(1);
        sent = true;
    }
    if sent {
        writer.flush().map_err(Error::Write)?;
    }
    Ok(())
}

/// `write_all` that reports a zero-length write instead of panicking.
fn write_all<W: Write>(writer: &mut W, mut bytes: &[u8]) -> Result<(), Error<W::Error>> {
    while !bytes.is_empty() {
        match writer.write(bytes) {
            Ok(0) => return Err(Error::WriteZero),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e) => return Err(Error::Write(e)),
        }
    }
    Ok(())
}
