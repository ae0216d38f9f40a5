//! Deferred requests run on the connection's slot: a handler that returns
//! [`Dispatch::Defer`](mcp_rs_core::Dispatch::Defer) hands the request to the
//! application's [`CallRunner`], which runs it to its end in the slot's task (awaiting a
//! sensor, a timer...) and answers through a [`CallContext`]: progress and log messages go
//! out as they are made, as SSE events of the POST's response (when the client accepts
//! `text/event-stream`), then the result. A request the runner leaves unanswered is failed
//! with -32603 (`DEFERRED_CALL_MESSAGE`).

use core::future::Future;

use embedded_io_async::Write;
use mcp_rs_core::{Call, CallError, CallToken, LogLevel, Session, ToolResult, Transmit};

use super::exchange::Reply;
use super::Ended;

/// Runs deferred requests on the connection's slot ([`Server::serve_calls`](super::Server::serve_calls)):
/// a handler's [`Dispatch::Defer`](mcp_rs_core::Dispatch::Defer) hands the request here,
/// and the runner answers it through the [`CallContext`]: progress and log messages go out
/// as they are made, as SSE events of the POST's response (when the client accepts
/// `text/event-stream`; else only the result, as JSON), then the result. A request the
/// runner leaves unanswered, or does not [`take`](Self::takes), is failed with -32603
/// [`DEFERRED_CALL_MESSAGE`](crate::DEFERRED_CALL_MESSAGE). `()` takes none.
pub trait CallRunner<T: Write> {
    /// Whether this runner runs `call` (default: all); a request it does not take is
    /// failed at once with -32603, and its response stays a JSON one.
    fn takes(&self, call: &Call<'_>) -> bool {
        let _ = call;
        true
    }

    /// Runs `call` to its end through `ctx`.
    fn run<'c>(
        &'c mut self,
        call: Call<'c>,
        ctx: &'c mut CallContext<'_, T>,
    ) -> impl Future<Output = ()> + 'c;
}

impl<T: Write> CallRunner<T> for () {
    fn takes(&self, _: &Call<'_>) -> bool {
        false
    }

    #[allow(clippy::manual_async_fn)]
    fn run<'c>(
        &'c mut self,
        _: Call<'c>,
        _: &'c mut CallContext<'_, T>,
    ) -> impl Future<Output = ()> + 'c {
        async {}
    }
}

/// Lends the session a request belongs to, for one command at a time (a session of the
/// legacy table is never borrowed across an await).
pub(super) trait SessionAccess {
    fn with(&self, f: &mut dyn FnMut(&mut Session<'_>));

    /// A new resumable stream of the session: its number and its priming `seq` (`None`
    /// without a legacy session or its replay ring).
    fn open_stream(&self) -> Option<(u32, u32)>;

    /// Keeps `frame` (empty: the end) as the next event of `stream`; its `seq`.
    fn keep(&self, stream: u32, frame: &[u8]) -> Option<u32>;

    /// The answer the session's mailbox holds for `token`, copied into `out` and taken;
    /// `None` when none can come (no legacy session, or it ended).
    #[cfg(feature = "requests")]
    fn take_answer(
        &self,
        token: CallToken,
        out: &mut [u8],
        waker: &core::task::Waker,
    ) -> core::task::Poll<Option<super::mailbox::Held>>;
}

/// The client's answer to a request of [`CallContext::request`], in the caller's buffer.
#[cfg(feature = "requests")]
#[derive(Clone, Copy, Debug)]
pub enum Answer<'b> {
    /// `result` (a `CreateMessageResult`, `ElicitResult` or `ListRootsResult`).
    Result(mcp_rs_core::wire::json::RawJson<'b>),
    /// `error`: the client refused or failed.
    Error {
        /// The error code.
        code: i64,
        /// The message, escaped as on the wire (without quotes).
        message: &'b str,
    },
}

/// Why [`CallContext::request`] got no answer.
#[cfg(feature = "requests")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestFailed {
    /// The session refused to send it (2026-07-28 calls ask with `input_required`
    /// results; the client lacks the capability; params that are not a JSON object; the
    /// call's previous request is unanswered).
    Refused(CallError),
    /// The POST's response cannot carry it (the client accepts no `text/event-stream`, or
    /// the connection failed), or the call was cancelled.
    NotSent,
    /// The session ended (or it is not a legacy session): no answer can come.
    SessionEnded,
    /// The answer is longer than the session's mailbox ([`Server::with_responses`]) or
    /// the buffer given, or is not valid JSON.
    ///
    /// [`Server::with_responses`]: super::Server::with_responses
    TooLarge,
}

/// How a runner answers its request: each method runs one session command and writes the
/// frame it makes to the POST's response at once. `false` when nothing was sent (the
/// client asked for no progress, the log level filters the message, the request was
/// already answered, the connection failed).
pub struct CallContext<'c, T> {
    pub(super) access: &'c dyn SessionAccess,
    pub(super) tx: &'c mut [u8],
    pub(super) socket: &'c mut T,
    pub(super) reply: &'c mut Reply,
    pub(super) token: CallToken,
    pub(super) failed: Option<Ended>,
}

impl<T> core::fmt::Debug for CallContext<'_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CallContext")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl<T: Write> CallContext<'_, T> {
    /// The request's token.
    pub fn token(&self) -> CallToken {
        self.token
    }

    /// Runs `command` on the session with the transmit buffer and sends the frame it makes.
    pub async fn command(
        &mut self,
        command: impl FnOnce(&mut Session<'_>, &mut [u8]) -> Result<Option<Transmit>, CallError>,
    ) -> bool {
        if self.failed.is_some() {
            return false;
        }
        let mut command = Some(command);
        let mut made = None;
        let tx = &mut *self.tx;
        self.access.with(&mut |s| {
            if let Some(c) = command.take() {
                made = Some(c(s, tx));
            }
        });
        let Some(Ok(Some(t))) = made else {
            return false;
        };
        let frame = self.tx.get(..t.len).unwrap_or_default();
        match self.reply.send(self.socket, self.access, frame).await {
            Ok(sent) => sent,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }

    /// `notifications/progress` (when the request carries a progress token).
    pub async fn progress(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> bool {
        let token = self.token;
        self.command(|s, tx| s.progress(token, progress, total, message, tx))
            .await
    }

    /// `notifications/message` tied to the request (when the level passes the client's).
    pub async fn log(&mut self, level: LogLevel, logger: Option<&str>, data: &str) -> bool {
        let token = self.token;
        self.command(|s, tx| s.log(Some(token), level, logger, data, tx))
            .await
    }

    /// Ends the POST's SSE response now, while the call runs on (SEP-1699 polling, as
    /// mcp-tokio's `Context::close_stream`): what the call sends next is kept in the
    /// session's replay ring ([`Server::with_replay`](super::Server::with_replay)), and
    /// the client reconnects with `GET` and `Last-Event-ID` to receive it, the result
    /// included. `false` (nothing changes) unless the response is a resumable SSE stream:
    /// a legacy session with a replay ring, and a client that accepts
    /// `text/event-stream`.
    pub async fn close_stream(&mut self) -> bool {
        if self.failed.is_some() {
            return false;
        }
        match self.reply.close(self.socket, self.access).await {
            Ok(closed) => closed,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }

    /// Completes a `tools/call`: `write` fills the result.
    pub async fn complete(&mut self, write: impl FnOnce(&mut ToolResult<'_, '_>)) -> bool {
        let token = self.token;
        self.command(|s, tx| s.complete(token, tx, write)).await
    }

    /// Completes a deferred `prompts/get` (feature `prompts`): `write` fills the result
    /// (its messages, or `fail`/`invalid_arguments` for an error reply). A prompt that
    /// needs the client's input in a legacy session asks with [`request`](Self::request)
    /// first, as a tool does.
    #[cfg(feature = "prompts")]
    pub async fn complete_prompt(
        &mut self,
        write: impl FnOnce(&mut mcp_rs_core::model::prompts::PromptResult<'_, '_>),
    ) -> bool {
        let token = self.token;
        self.command(|s, tx| s.complete_prompt(token, tx, write))
            .await
    }

    /// Sends a request to the client (legacy sessions, feature `requests`) on the POST's
    /// SSE response and waits for its answer, which the client POSTs separately (any slot
    /// serves it; see [`Server::with_responses`](super::Server::with_responses)); the
    /// answer is copied into `answer`. The wait has no timeout of its own (the session's
    /// `timeout_ms` deadline is checked only when the session next handles a message):
    /// bound it with the runner's timer (`select` with embassy's `Timer`).
    #[cfg(feature = "requests")]
    pub async fn request<'b>(
        &mut self,
        method: mcp_rs_core::ClientMethod,
        params: &str,
        timeout_ms: u64,
        answer: &'b mut [u8],
    ) -> Result<Answer<'b>, RequestFailed> {
        use super::mailbox::Held;
        if self.failed.is_some() {
            return Err(RequestFailed::NotSent);
        }
        let token = self.token;
        let mut made = None;
        let tx = &mut *self.tx;
        self.access.with(&mut |s| {
            if made.is_none() {
                made = Some(s.request(token, method, params, timeout_ms, tx));
            }
        });
        let t = match made {
            Some(Ok(Some(t))) => t,
            Some(Err(e)) => return Err(RequestFailed::Refused(e)),
            Some(Ok(None)) => return Err(RequestFailed::NotSent),
            None => return Err(RequestFailed::SessionEnded),
        };
        let frame = self.tx.get(..t.len).unwrap_or_default();
        match self.reply.send(self.socket, self.access, frame).await {
            Ok(true) => {}
            Ok(false) => return Err(RequestFailed::NotSent),
            Err(e) => {
                self.failed = Some(e);
                return Err(RequestFailed::NotSent);
            }
        }
        let access = self.access;
        let held = {
            let out = &mut *answer;
            core::future::poll_fn(|cx| access.take_answer(token, out, cx.waker())).await
        };
        match held {
            None => Err(RequestFailed::SessionEnded),
            Some(Held::TooLarge) => Err(RequestFailed::TooLarge),
            Some(Held::Result(n)) => {
                let text = answer.get(..n).unwrap_or_default();
                mcp_rs_core::wire::json::parse(text, mcp_rs_core::wire::json::Limits::default())
                    .map(Answer::Result)
                    .map_err(|_| RequestFailed::TooLarge)
            }
            Some(Held::Error(code, n)) => {
                let message = answer.get(..n).unwrap_or_default();
                let message = core::str::from_utf8(message).map_err(|_| RequestFailed::TooLarge)?;
                Ok(Answer::Error { code, message })
            }
        }
    }

    /// Answers the request with a JSON-RPC error.
    pub async fn fail(&mut self, code: i32, message: &str) -> bool {
        let token = self.token;
        self.command(|s, tx| s.fail(token, code, message, tx)).await
    }
}
