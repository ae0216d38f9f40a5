//! Where a session's frames go over HTTP: the POST that carried a request gets its reply
//! and everything its deferred calls emit (progress, logs, requests to the client, the
//! final response); session-wide frames go to the session's GET stream. A POST's response
//! ends when its reply is sent and its last call has answered.
//!
//! Sinks are bounded channels written with `try_send`: the drive loop never waits for a
//! slow HTTP client. A client that does not keep up loses its stream (it is closed, and
//! counted as gone), never the server's memory.

use std::collections::HashMap;

use bytes::Bytes;
use mcp_core::{CallToken, ProtocolVersion, Route};
use tokio::sync::{mpsc, oneshot};

/// Frames buffered per response before its client counts as not reading.
pub(crate) const SINK_FRAMES: usize = 256;

/// One POST handed to a session's drive loop.
pub(crate) struct Post {
    /// The body: one JSON-RPC message or batch.
    pub body: Bytes,
    /// Where its frames go.
    pub sink: mpsc::Sender<Bytes>,
    /// Told once the body has been handled.
    pub outcome: oneshot::Sender<Outcome>,
}

/// What a session's drive loop receives from the HTTP layer.
pub(crate) enum Inbound {
    /// A POST body.
    Post(Post),
    /// The session's GET stream for session-wide messages (replaces an earlier one).
    Listen(mpsc::Sender<Bytes>),
    /// DELETE: end the session now.
    Close,
}

/// How a POST was handled, for the HTTP layer to choose its response.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outcome {
    /// Frames were written for it (a reply, or output of its calls).
    pub answered: bool,
    /// Calls or a listen stream of this POST are still open: stream the response.
    pub open: bool,
    /// The session's negotiated revision after this body (`initialize` succeeded).
    pub version: Option<ProtocolVersion>,
}

struct Open {
    sink: mpsc::Sender<Bytes>,
    /// Deferred calls and listen streams of this POST still running.
    calls: usize,
    /// Frames sent so far.
    frames: usize,
}

/// The routing table of one session.
#[derive(Default)]
pub(crate) struct Routes {
    current: Option<u64>,
    next: u64,
    posts: HashMap<u64, Open>,
    calls: HashMap<CallToken, u64>,
    stream: Option<mpsc::Sender<Bytes>>,
}

impl Routes {
    /// A POST's body is about to be handled: frames routed `Reply` go to `sink`.
    pub(crate) fn begin(&mut self, sink: mpsc::Sender<Bytes>) {
        let id = self.next;
        self.next += 1;
        self.posts.insert(
            id,
            Open {
                sink,
                calls: 0,
                frames: 0,
            },
        );
        self.current = Some(id);
    }

    /// The body was handled: its response ends now unless calls of it are still open.
    pub(crate) fn end(&mut self, version: Option<ProtocolVersion>) -> Outcome {
        let Some(id) = self.current.take() else {
            return Outcome {
                answered: false,
                open: false,
                version,
            };
        };
        let (answered, open) = self
            .posts
            .get(&id)
            .map_or((false, false), |p| (p.frames > 0, p.calls > 0));
        if !open {
            self.posts.remove(&id);
        }
        Outcome {
            answered,
            open,
            version,
        }
    }

    /// A deferred call (or listen stream) of the current POST started.
    pub(crate) fn adopt(&mut self, token: CallToken) {
        if let Some(id) = self.current {
            if let Some(p) = self.posts.get_mut(&id) {
                p.calls += 1;
                self.calls.insert(token, id);
            }
        }
    }

    /// A call answered (or was cancelled): its POST's response ends after its last call.
    pub(crate) fn done(&mut self, token: CallToken) {
        let Some(id) = self.calls.remove(&token) else {
            return;
        };
        if let Some(p) = self.posts.get_mut(&id) {
            p.calls = p.calls.saturating_sub(1);
            if p.calls == 0 && self.current != Some(id) {
                self.posts.remove(&id);
            }
        }
    }

    /// Replaces the session's GET stream.
    pub(crate) fn listen(&mut self, sink: mpsc::Sender<Bytes>) {
        self.stream = Some(sink);
    }

    /// Sends one frame where `route` says. Frames for a response whose client is gone or
    /// not reading are dropped (the response is closed); session-wide frames without a GET
    /// stream are dropped (the client did not ask for them).
    pub(crate) fn frame(&mut self, route: Route, frame: &[u8]) {
        let id = match route {
            Route::Reply => self.current,
            Route::Call(token) => self.calls.get(&token).copied(),
            Route::Session => None,
        };
        let bytes = Bytes::copy_from_slice(frame);
        match id.and_then(|id| self.posts.get_mut(&id)) {
            Some(p) => {
                p.frames += 1;
                if p.sink.try_send(bytes).is_err() {
                    tracing::debug!(
                        "an HTTP response is closed or not read; its frames are dropped"
                    );
                }
            }
            None if route == Route::Session => {
                if let Some(s) = &self.stream {
                    if s.try_send(bytes).is_err() {
                        self.stream = None;
                    }
                }
            }
            None => tracing::debug!("a frame for a finished response was dropped"),
        }
    }

    /// Calls whose response's client went away.
    pub(crate) fn abandoned(&self) -> Vec<CallToken> {
        self.calls
            .iter()
            .filter(|(_, id)| self.posts.get(id).is_none_or(|p| p.sink.is_closed()))
            .map(|(t, _)| *t)
            .collect()
    }

    /// No response is open.
    pub(crate) fn idle(&self) -> bool {
        self.posts.is_empty()
    }
}
