//! A runtime-free drive loop for synchronous tool sets: one thread, blocking reads and
//! writes, no async runtime, no thread hand-offs.
//!
//! The tokio drive loop serves stdio pipes on its runtime (non-blocking, epoll), and any
//! other stdin/stdout (a terminal, a file) through a reader thread and a writer thread, where
//! every request crosses threads (profile in docs/design-notes.md). A server whose tools all
//! answer synchronously needs no runtime at all: [`Server::serve_blocking`] reads, answers
//! and writes on the calling thread, and
//! writes only when no further input is already buffered (one write per batch of pipelined
//! requests).
//!
//! What it does not do: run async handlers (a deferred tool call or prompt is answered with
//! `-32603` naming the reason), time out anything, or notice shutdown while blocked in a
//! read. Everything else (resources, prompts, completion, list-change notifications,
//! cancellation, both protocol eras) is the same core session as on tokio.

use std::io::{ErrorKind, Read, Write};

use mcp_rs_core::pump::{Output, Pump};
use mcp_rs_core::wire::framing::Frame;
use mcp_rs_core::wire::jsonrpc::code;
use mcp_rs_core::{HandleError, ServerHandler, Session};

use crate::clock::now_ms;
use crate::driver::PENDING_RETAIN;
use crate::error::Error;
use crate::lines::LineBuf;
use crate::registry::Snapshot;
use crate::server::Server;
use crate::state::{note_list_changes, Combined, Shared};

impl Server {
    /// Serves stdin/stdout on the calling thread, without an async runtime, until stdin
    /// closes. For synchronous tool sets: a call to an async handler is answered with
    /// `-32603`. One thread, no runtime, no thread hand-offs; replies are written once no
    /// complete request is left unread. It does not notice [`shutdown`](Self::shutdown) while
    /// blocked in a read and applies no timeouts (like [`serve_stdio`](Self::serve_stdio)).
    #[cfg(feature = "stdio")]
    pub fn serve_stdio_blocking(&self) -> Result<(), Error> {
        self.serve_blocking(std::io::stdin().lock(), std::io::stdout().lock())
    }

    /// Serves one byte stream on the calling thread until `reader` reaches its end (see
    /// [`serve_stdio_blocking`](Self::serve_stdio_blocking)). Replies are written to
    /// `writer` and flushed whenever no complete request is left unread.
    pub fn serve_blocking<R: Read, W: Write>(
        &self,
        mut reader: R,
        mut writer: W,
    ) -> Result<(), Error> {
        let shared = &*self.inner;
        let info = shared.info.core();
        let mut session = Session::with_growing_slots(
            &info,
            shared.session_config(),
            shared.limits.max_calls.max(1),
        );
        let mut lines = LineBuf::new(shared.limits.max_frame.max(mcp_rs_core::MIN_OUTPUT));
        let mut out = vec![0u8; shared.limits.initial_response.max(mcp_rs_core::MIN_OUTPUT)];
        let mut pending = Vec::new();
        let mut snapshot = shared.tools.snapshot();
        let mut own = shared.own_provider();
        let mut versions = shared.tools.watch();
        let lists = shared.lists.subscribe();
        let mut seen_lists = *lists.borrow();
        let mut task_versions = shared.tasks.as_ref().map(|t| t.changed.subscribe());
        let mut turn = Turn {
            session: &mut session,
            out: &mut out,
            pending: &mut pending,
            now: 0,
            listened: false,
        };
        loop {
            let n = match lines.read_sync(&mut reader) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::Io(e)),
            };
            // Registry and list changes made by other threads since the last read.
            if versions.has_changed().unwrap_or(false) {
                versions.borrow_and_update();
                snapshot = shared.tools.snapshot();
                turn.session.tools_changed();
            }
            note_list_changes(turn.session, *lists.borrow(), &mut seen_lists);
            // One clock read per read: the requests of one batch arrived together.
            turn.now = now_ms();
            let at_end = n == 0;
            loop {
                let frame = if at_end {
                    lines.finish()
                } else {
                    lines.next_frame()
                };
                let Some(frame) = frame else { break };
                turn.exchange(shared, &mut snapshot, own.as_deref_mut(), frame)?;
            }
            // Task changes (this session's `tasks/*`, other threads) and new listen streams:
            // the `notifications/tasks` owed, before the replies are written.
            let tasks_moved = task_versions.as_mut().is_some_and(|v| {
                let moved = v.has_changed().unwrap_or(false);
                v.borrow_and_update();
                moved
            });
            if tasks_moved || std::mem::take(&mut turn.listened) {
                turn.tasks_changed(shared, &mut snapshot, own.as_deref_mut())?;
            }
            if !turn.pending.is_empty() {
                writer.write_all(turn.pending)?;
                writer.flush()?;
                turn.pending.clear();
                turn.pending.shrink_to(PENDING_RETAIN);
            }
            if at_end {
                return Ok(());
            }
            lines.shrink();
        }
    }
}

/// The session and buffers of one read's worth of work.
struct Turn<'t, 's> {
    session: &'t mut Session<'s>,
    out: &'t mut Vec<u8>,
    pending: &'t mut Vec<u8>,
    /// Milliseconds since the UNIX epoch when the current batch was read.
    now: u64,
    /// Whether a `subscriptions/listen` stream opened in this batch.
    listened: bool,
}

impl Turn<'_, '_> {
    /// One frame through the core's pump: the reply, then whatever the session queued.
    /// Deferred calls are refused (nothing here can run them), and the output buffer grows
    /// when a queued frame needs more room.
    fn exchange(
        &mut self,
        shared: &Shared,
        snapshot: &mut Snapshot,
        own: Option<&mut (dyn ServerHandler + Send + 'static)>,
        frame: Frame<'_>,
    ) -> Result<(), Error> {
        let mut handler = Combined::new(shared, snapshot, own);
        let mut pump = Pump::frame(frame, shared.limits.max_frame, self.now);
        loop {
            match pump.poll(self.session, &mut handler, self.out) {
                Ok(Some(Output::Transmit(tx))) => self.send(tx.len)?,
                Ok(Some(Output::Call(call))) => {
                    let why = "This server runs without an async runtime (serve_blocking): \
                               handlers that answer asynchronously cannot run";
                    if let Ok(Some(tx)) =
                        self.session
                            .fail(call.token(), code::INTERNAL_ERROR, why, self.out)
                    {
                        self.send(tx.len)?;
                    }
                }
                Ok(Some(Output::Listen(_))) => self.listened = true,
                // No request to the client is ever sent, so no response is awaited; events
                // need no action here.
                Ok(Some(_)) => {}
                Ok(None) => return Ok(()),
                Err(HandleError::OutputTooSmall { required }) if required > self.out.len() => {
                    self.out.resize(required, 0);
                }
                Err(e) => return Err(Error::Core(e)),
            }
        }
    }

    /// One pass of [`Session::tasks_changed_next`]: every `notifications/tasks` owed.
    fn tasks_changed(
        &mut self,
        shared: &Shared,
        snapshot: &mut Snapshot,
        own: Option<&mut (dyn ServerHandler + Send + 'static)>,
    ) -> Result<(), Error> {
        let mut handler = Combined::new(shared, snapshot, own);
        let mut cursor = 0;
        loop {
            match self
                .session
                .tasks_changed_next(&mut handler, &mut cursor, self.now, self.out)
            {
                Ok(Some(tx)) => self.send(tx.len)?,
                Ok(None) => return Ok(()),
                Err(e) if e.required <= shared.limits.max_response => {
                    self.out.resize(e.required, 0);
                }
                Err(_) => cursor += 1,
            }
        }
    }

    fn send(&mut self, len: usize) -> Result<(), Error> {
        let frame = self
            .out
            .get(..len)
            .ok_or(Error::Internal("transmit beyond buffer"))?;
        self.pending.extend_from_slice(frame);
        self.pending.push(b'\n');
        Ok(())
    }
}
