//! Where a session's frames go over HTTP: the POST that carried a request gets its reply
//! and everything its deferred calls emit (progress, logs, requests to the client, the
//! final response); session-wide frames go to the session's GET stream. A POST's response
//! ends when its reply is sent and its last call has answered.
//!
//! Every frame of a response stream gets an SSE event id `<stream>-<seq>`. A legacy
//! session keeps the last [`BACKLOG`] frames of each stream whose calls run on, so a client
//! whose stream closed (the server may close it: [`crate::Context::close_stream`]) resumes
//! with `GET` and `Last-Event-ID` and receives what it missed, then the rest. Streams that
//! finished while nobody was listening are kept for resumption too ([`FINISHED`] of them).
//!
//! Sinks are bounded channels written with `try_send`: the drive loop never waits for a
//! slow HTTP client. A client that does not keep up loses its stream (it is closed), never
//! the server's memory.
//!
//! Every frame queued or kept is counted against the transport's memory budget
//! ([`crate::http::HttpConfig::memory_budget`]) until the last copy of its event is dropped;
//! a frame the budget cannot take closes its stream as if its client did not read (a
//! response gets [`OVER_BUDGET`] first, so that the HTTP layer answers 503).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use mcp_rs_core::{CallToken, ProtocolVersion, Route};
use tokio::sync::{mpsc, oneshot};

use crate::budget::{Budget, Permit};

/// Frames buffered per response before its client counts as not reading.
pub(crate) const SINK_FRAMES: usize = 256;
/// Frames of a stream kept for resumption.
pub(crate) const BACKLOG: usize = 64;
/// Finished streams kept for resumption.
pub(crate) const FINISHED: usize = 16;
/// The stream number of the event that tells a response its frames went over the memory
/// budget (no data; never rendered): its stream ends after it.
pub(crate) const OVER_BUDGET: u64 = u64::MAX - 2;

/// One SSE event: `id: <stream>-<seq>`; empty `data` is the priming event.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub stream: u64,
    pub seq: u64,
    pub data: Bytes,
    /// `data`'s bytes counted against the memory budget, given back with the last copy
    /// (held for its `Drop`).
    #[allow(dead_code)]
    pub charge: Option<Arc<Permit>>,
}

impl Event {
    /// An event whose bytes are not counted (priming, announcements, markers).
    pub(crate) fn uncounted(stream: u64, seq: u64, data: Bytes) -> Event {
        Event {
            stream,
            seq,
            data,
            charge: None,
        }
    }
}

/// One POST handed to a session's drive loop.
pub(crate) struct Post {
    /// The body: one JSON-RPC message or batch.
    pub body: Bytes,
    /// Who sent it (with authorization): current while the body is handled.
    pub principal: Option<std::sync::Arc<crate::principal::Principal>>,
}

/// Where the frames and the outcome of a POST sent to a running drive loop go.
pub(crate) struct Channel {
    /// Its frames.
    pub sink: mpsc::Sender<Event>,
    /// Told once the body has been handled.
    pub outcome: oneshot::Sender<Outcome>,
}

/// The frames of the first POST of a drive loop, which the HTTP layer handles in place
/// (see [`hand_over`]).
pub(crate) enum Answer {
    /// The POST is done: every frame it got (at most [`SINK_FRAMES`]).
    Held(Vec<Event>),
    /// Calls of it run on: its frames so far, then the rest as they come.
    Stream(mpsc::Receiver<Event>),
}

thread_local! {
    /// The outcome and frames of the first POST of the drive loop the HTTP layer is polling
    /// in place on this thread ([`hand_over`], [`take_first`]).
    static FIRST: std::cell::Cell<Option<(Outcome, Answer)>> = const { std::cell::Cell::new(None) };
}

/// The drive loop hands the outcome of its first POST to the HTTP layer. That POST is
/// handled within the loop's first poll, which the HTTP layer makes in place on this thread
/// and follows with [`take_first`]: a request answered at once needs no channel for its
/// frames and none for its outcome (the first POST is the only one handed over this way, so
/// a loop running as a task never sets it).
pub(crate) fn hand_over(outcome: Outcome, answer: Answer) {
    FIRST.with(|f| f.set(Some((outcome, answer))));
}

/// What the drive loop polled last on this thread handed over ([`hand_over`]).
pub(crate) fn take_first() -> Option<(Outcome, Answer)> {
    FIRST.with(std::cell::Cell::take)
}

/// Where a POST's frames go.
enum Sink {
    /// A channel read by the HTTP layer.
    Channel(mpsc::Sender<Event>),
    /// Kept until the POST is handled (the first POST of a drive loop); `closed` once it
    /// refused a frame, as a channel whose client does not read.
    Held { frames: Vec<Event>, closed: bool },
}

impl Sink {
    /// Queues `event`; `false` when the sink is full or its reader gone.
    fn send(&mut self, event: Event) -> bool {
        match self {
            Sink::Channel(s) => s.try_send(event).is_ok(),
            Sink::Held { frames, closed } => {
                if *closed || frames.len() >= SINK_FRAMES {
                    *closed = true;
                    return false;
                }
                frames.push(event);
                true
            }
        }
    }

    fn attached(&self) -> bool {
        match self {
            Sink::Channel(s) => !s.is_closed(),
            Sink::Held { closed, .. } => !closed,
        }
    }
}

/// What a session's drive loop receives from the HTTP layer.
pub(crate) enum Inbound {
    /// A POST body, and where its frames and outcome go.
    Post(Post, Channel),
    /// The session's GET stream for session-wide messages (replaces an earlier one).
    Listen(mpsc::Sender<Event>),
    /// A GET with `Last-Event-ID`: continue that stream on `sink` (`false`: unknown id).
    Resume {
        last_event_id: String,
        sink: mpsc::Sender<Event>,
        resumed: oneshot::Sender<bool>,
    },
    /// The legacy HTTP+SSE transport: the session's one stream. Session-wide frames go
    /// there, and detached calls keep sending there (each POST's sink is this stream too).
    Stream(mpsc::Sender<Event>),
    /// DELETE (or the HTTP+SSE stream closed): end the session now.
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
    /// `None` once the client's stream closed (or the server closed it).
    sink: Option<Sink>,
    /// Deferred calls and listen streams of this POST still running.
    calls: usize,
    /// Sequence number of the last event sent.
    seq: u64,
    /// The last frames, for resumption (legacy sessions only).
    backlog: VecDeque<Event>,
}

impl Open {
    fn attached(&self) -> bool {
        self.sink.as_ref().is_some_and(Sink::attached)
    }

    /// The client's stream is closed: a held sink keeps what it has (the answer so far).
    fn close(&mut self) {
        match &mut self.sink {
            Some(Sink::Held { closed, .. }) => *closed = true,
            _ => self.sink = None,
        }
    }
}

/// The routing table of one session.
#[derive(Default)]
pub(crate) struct Routes {
    current: Option<u64>,
    next: u64,
    posts: HashMap<u64, Open>,
    calls: HashMap<CallToken, u64>,
    stream: Option<mpsc::Sender<Event>>,
    /// Keep backlogs and prime streams: set once the session is a legacy one.
    resumable: bool,
    /// An HTTP+SSE session: one stream for everything, never detached.
    single: bool,
    /// The one stream of an HTTP+SSE session refused a frame (its client does not read, or
    /// is gone): the session ends, as it cannot go on without the frames it lost.
    overflowed: bool,
    finished: VecDeque<(u64, VecDeque<Event>)>,
    /// The memory budget frames are counted against (none: not counted).
    budget: Option<Budget>,
}

impl Routes {
    /// A table whose frames are counted against `budget`.
    pub(crate) fn new(budget: Option<Budget>) -> Routes {
        Routes {
            budget,
            ..Routes::default()
        }
    }

    /// A POST's body is about to be handled: frames routed `Reply` go to `sink` (none: they
    /// are held, and [`end`](Self::end) gives them back). On a legacy session at 2025-11-25
    /// or later the stream starts with a priming event (an id, no data) so that the client
    /// can resume it from the start.
    pub(crate) fn begin(
        &mut self,
        sink: Option<mpsc::Sender<Event>>,
        version: Option<ProtocolVersion>,
    ) {
        let id = self.next;
        self.next += 1;
        self.resumable = version.is_some();
        let mut sink = match sink {
            Some(s) => Sink::Channel(s),
            None => Sink::Held {
                frames: Vec::new(),
                closed: false,
            },
        };
        let prime = version.is_some_and(|v| v >= ProtocolVersion::V2025_11_25);
        if prime {
            sink.send(Event::uncounted(id, 0, Bytes::new()));
        }
        self.posts.insert(
            id,
            Open {
                sink: Some(sink),
                calls: 0,
                seq: 0,
                backlog: VecDeque::new(),
            },
        );
        self.current = Some(id);
    }

    /// The body was handled: its response ends now unless calls of it are still open. For
    /// a POST begun without a sink, its frames: held if it is done, else a channel that
    /// starts with them and carries the rest.
    pub(crate) fn end(&mut self, version: Option<ProtocolVersion>) -> (Outcome, Option<Answer>) {
        self.resumable = version.is_some();
        let Some(id) = self.current.take() else {
            let outcome = Outcome {
                answered: false,
                open: false,
                version,
            };
            return (outcome, None);
        };
        let (answered, open) = self
            .posts
            .get(&id)
            .map_or((false, false), |p| (p.seq > 0, p.calls > 0));
        let outcome = Outcome {
            answered,
            open,
            version,
        };
        if !open {
            let answer = match self.posts.remove(&id).and_then(|p| p.sink) {
                Some(Sink::Held { frames, .. }) => Some(Answer::Held(frames)),
                _ => None,
            };
            return (outcome, answer);
        }
        let Some(p) = self.posts.get_mut(&id) else {
            return (outcome, None);
        };
        if !matches!(p.sink, Some(Sink::Held { .. })) {
            return (outcome, None);
        }
        let Some(Sink::Held { frames, closed }) = p.sink.take() else {
            return (outcome, None);
        };
        let (tx, rx) = mpsc::channel(SINK_FRAMES);
        for e in frames {
            // (At most SINK_FRAMES: they fit.)
            let _ = tx.try_send(e);
        }
        if !closed {
            p.sink = Some(Sink::Channel(tx));
        }
        (outcome, Some(Answer::Stream(rx)))
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
        let Some(p) = self.posts.get_mut(&id) else {
            return;
        };
        p.calls = p.calls.saturating_sub(1);
        if p.calls > 0 || self.current == Some(id) {
            return;
        }
        if let Some(p) = self.posts.remove(&id) {
            // Finished while nobody listened: keep it for a resuming client.
            if self.resumable && !p.attached() && !p.backlog.is_empty() {
                if self.finished.len() == FINISHED {
                    self.finished.pop_front();
                }
                self.finished.push_back((id, p.backlog));
            }
        }
    }

    /// Ends the response stream carrying `token` now; the call runs on and its frames are
    /// kept for a client that resumes (legacy sessions).
    pub(crate) fn detach(&mut self, token: CallToken) {
        if !self.resumable || self.single {
            return; // a 2026-07-28 stream cannot be resumed: closing it would cancel the call
        }
        if let Some(p) = self.calls.get(&token).and_then(|id| self.posts.get_mut(id)) {
            p.close();
        }
    }

    /// Continues the stream named by `last_event_id` (`<stream>-<seq>`) on `sink`: the
    /// frames after that event first, then the rest as they come.
    pub(crate) fn resume(&mut self, last_event_id: &str, sink: mpsc::Sender<Event>) -> bool {
        let Some((stream, seq)) = last_event_id
            .split_once('-')
            .and_then(|(s, n)| Some((s.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
        else {
            return false;
        };
        let replay = |backlog: &VecDeque<Event>| {
            for e in backlog.iter().filter(|e| e.seq > seq) {
                let _ = sink.try_send(e.clone());
            }
        };
        if let Some(p) = self.posts.get_mut(&stream) {
            replay(&p.backlog);
            p.sink = Some(Sink::Channel(sink));
            return true;
        }
        if let Some(i) = self.finished.iter().position(|(id, _)| *id == stream) {
            if let Some((_, backlog)) = self.finished.remove(i) {
                replay(&backlog);
            }
            // The stream is complete: `sink` is dropped here, ending the response.
            return true;
        }
        false
    }

    /// The session's one stream (HTTP+SSE): session-wide frames go there, and streams are
    /// never detached from it.
    pub(crate) fn single(&mut self, sink: mpsc::Sender<Event>) {
        self.single = true;
        self.stream = Some(sink);
    }

    /// Replaces the session's GET stream.
    pub(crate) fn listen(&mut self, sink: mpsc::Sender<Event>) {
        self.stream = Some(sink);
    }

    /// Sends one frame where `route` says. Frames for a response whose client is gone or
    /// not reading are kept in its backlog (legacy) or dropped; session-wide frames without
    /// a GET stream are dropped (the client did not ask for them).
    pub(crate) fn frame(&mut self, route: Route, frame: &[u8]) {
        let id = match route {
            Route::Reply => self.current,
            Route::Call(token) => self.calls.get(&token).copied(),
            Route::Session => None,
        };
        let charge = match &self.budget {
            None => None,
            Some(budget) => match budget.take(frame.len()) {
                Some(permit) => Some(Arc::new(permit)),
                None => {
                    self.over_budget(id, route);
                    return;
                }
            },
        };
        let data = Bytes::copy_from_slice(frame);
        match id.and_then(|id| self.posts.get_mut(&id).map(|p| (id, p))) {
            Some((stream, p)) => {
                p.seq += 1;
                let event = Event {
                    stream,
                    seq: p.seq,
                    data,
                    charge,
                };
                if self.resumable {
                    if p.backlog.len() == BACKLOG {
                        p.backlog.pop_front();
                    }
                    p.backlog.push_back(event.clone());
                }
                if let Some(sink) = &mut p.sink {
                    if !sink.send(event) {
                        tracing::debug!("an HTTP response is closed or not read");
                        p.close();
                        self.overflowed |= self.single;
                    }
                }
            }
            None if route == Route::Session => {
                if let Some(s) = &self.stream {
                    let event = Event {
                        stream: u64::MAX,
                        seq: 0,
                        data,
                        charge,
                    };
                    if s.try_send(event).is_err() {
                        self.stream = None;
                        self.overflowed |= self.single;
                    }
                }
            }
            None => tracing::debug!("a frame for a finished response was dropped"),
        }
    }

    /// A frame for response `id` (or the session stream) did not fit the memory budget: it
    /// is dropped and its stream closed (a response is told with [`OVER_BUDGET`] first).
    fn over_budget(&mut self, id: Option<u64>, route: Route) {
        tracing::debug!("the HTTP memory budget is exhausted: a stream is closed");
        match id.and_then(|id| self.posts.get_mut(&id)) {
            Some(p) => {
                // The response was answered, by the refusal the HTTP layer makes of it.
                p.seq += 1;
                if let Some(sink) = &mut p.sink {
                    sink.send(Event::uncounted(OVER_BUDGET, 0, Bytes::new()));
                }
                p.close();
                self.overflowed |= self.single;
            }
            None if route == Route::Session => {
                let had = self.stream.take().is_some();
                self.overflowed |= self.single && had;
            }
            None => {}
        }
    }

    /// Calls whose response's client went away, in a session that cannot resume them
    /// (2026-07-28 requests): they are cancelled.
    pub(crate) fn abandoned(&self) -> Vec<CallToken> {
        if self.resumable {
            return Vec::new();
        }
        self.calls
            .iter()
            .filter(|(_, id)| self.posts.get(id).is_none_or(|p| !p.attached()))
            .map(|(t, _)| *t)
            .collect()
    }

    /// Every call and listen stream still routed to a response.
    pub(crate) fn open_calls(&self) -> Vec<CallToken> {
        self.calls.keys().copied().collect()
    }

    /// The one stream of an HTTP+SSE session lost a frame: the session must end.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// No response is open.
    pub(crate) fn idle(&self) -> bool {
        self.posts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_post_begun_without_a_sink_gets_its_frames_back_bounded() {
        let mut routes = Routes::new(None);
        routes.begin(None, Some(ProtocolVersion::V2025_11_25));
        for _ in 0..SINK_FRAMES + 10 {
            routes.frame(Route::Reply, b"{}");
        }
        let (outcome, answer) = routes.end(Some(ProtocolVersion::V2025_11_25));
        assert!(outcome.answered && !outcome.open);
        match answer {
            // The priming event first, then frames up to the sink's bound.
            Some(Answer::Held(frames)) => {
                assert_eq!(frames.len(), SINK_FRAMES);
                assert!(frames[0].data.is_empty());
                assert_eq!(&frames[1].data[..], b"{}");
            }
            _ => panic!("held frames"),
        }
        assert!(routes.idle());
    }

    #[test]
    fn a_post_with_a_channel_sends_there_and_gets_no_answer_back() {
        let mut routes = Routes::new(None);
        let (tx, mut rx) = mpsc::channel(SINK_FRAMES);
        routes.begin(Some(tx), None);
        routes.frame(Route::Reply, b"{}");
        let (outcome, answer) = routes.end(None);
        assert!(outcome.answered && !outcome.open && answer.is_none());
        assert_eq!(
            rx.try_recv().map(|e| e.data).ok().as_deref(),
            Some(&b"{}"[..])
        );
        // The POST is done: its sink was dropped.
        assert!(rx.try_recv().is_err() && rx.is_closed());
    }
}
