//! One request on a connection: the head's plan, the body read, the route taken (POST,
//! GET stream, DELETE), the session that handles a body, and the response written (JSON,
//! SSE, or a refusal).

use core::cell::RefCell;

use embedded_io_async::{Error as _, Read, Write};
use mcp_rs_core::pump::{Output, Pump};
use mcp_rs_core::wire::jsonrpc::{code, FrameKind};
use mcp_rs_core::wire::peek::{peek, Peek};
use mcp_rs_core::wire::Method;
use mcp_rs_core::{CallSlot, CallToken, ProtocolVersion, ServerHandler, Session};

use super::body::{BodyError, Inbox};
use super::calls::{CallContext, CallRunner, SessionAccess};
use super::checks::{self, MODERN};
use super::head::{self, Framing, Head, Verb, MAX_HEADERS};
use super::replay::{self, Kept, Resume};
use super::respond::{self, Extra};
use super::sessions::{State, SESSION_ID_LEN};
use super::updates::{uri_hash, KEPT, MAX_UPDATED_URI};
use super::wait::{select, Either, EVENTS, KINDS, UPDATES};
use super::{Ended, Server, SlotState};
use crate::DEFERRED_CALL_MESSAGE;

/// Which session handles a body: a fresh one over the slot's call storage (2026-07-28,
/// and legacy requests without a session), or an entry of the legacy table.
pub(super) enum Target<'x, 's> {
    Local(&'x mut Session<'s>),
    Table(usize),
}

/// What a POST turned into.
enum Posted<'s> {
    /// Answered; `true` when the connection stays open.
    Answered(bool),
    /// A `subscriptions/listen` stream is open on the slot's session.
    Stream(Session<'s>, CallToken, bool),
}

/// Where the bytes of the current request end in the receive buffer, or how the
/// connection ended.
type Next = Result<usize, Ended>;

/// What a GET or DELETE asks, decided from its head.
enum Bodyless {
    /// Answered already.
    Answered,
    /// Open the GET stream of the legacy session at this entry.
    Stream(usize),
    /// Resume stream `.1` of the legacy session at entry `.0` after event `.2`.
    Resume(usize, u32, u32),
}

/// What a resumed stream does next.
enum Step {
    /// Send the event with this `seq`, copied to the transmit buffer (this long).
    Send(u32, usize),
    /// Skip the event with this `seq` (longer than the transmit buffer).
    Skip(u32),
    /// Wait for the next one.
    Wait,
    /// The stream is complete (or the session ended, or events were lost).
    End,
}

impl<S: ServerHandler, const SESSIONS: usize, const WAITERS: usize>
    Server<'_, S, SESSIONS, WAITERS>
{
    /// One request whose head is `inbox.buf[..head_len]`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn request<T: Read + Write, R: CallRunner<T>>(
        &self,
        socket: &mut T,
        inbox: &mut Inbox<'_>,
        tx: &mut [u8],
        calls: &mut [CallSlot],
        head_len: usize,
        state: &SlotState,
        runner: &mut R,
    ) -> Next {
        // What the head says, read before the body arrives (the head is parsed again once
        // the body is in, to check it against the body).
        let plan = {
            let mut storage = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let bytes = inbox.buf.get(..head_len).unwrap_or_default();
            let Some(head) = Head::parse(bytes, &mut storage) else {
                self.refuse(socket, tx, 400, "Malformed HTTP request", false)
                    .await?;
                return Ok(head_len);
            };
            let host = if self.http.check_hosts {
                head::check_host(&head, self.http.allowed_hosts)
            } else {
                Ok(())
            };
            Plan {
                verb: head.verb,
                on_path: head.path == self.http.path,
                keep_alive: head.keep_alive(),
                framing: head.body(),
                expects_continue: head.expects_continue(),
                host,
                json: head.is_json(),
                modern: head.text("mcp-protocol-version") == Some(MODERN),
            }
        };
        if let Err(why) = plan.host {
            self.refuse(socket, tx, 403, why, false).await?;
            return Ok(head_len);
        }
        if !plan.on_path {
            self.refuse(socket, tx, 404, "Not found", false).await?;
            return Ok(head_len);
        }
        let framing = match plan.framing {
            Ok(f) => f,
            Err(why) => {
                self.refuse(socket, tx, 400, why.0, false).await?;
                return Ok(head_len);
            }
        };
        match plan.verb {
            Verb::Post => {}
            Verb::Get | Verb::Delete if framing != Framing::Length(0) => {
                self.refuse(socket, tx, 400, "GET and DELETE take no body", false)
                    .await?;
                return Ok(head_len);
            }
            Verb::Get | Verb::Delete => {
                let decided = {
                    let mut storage = [httparse::EMPTY_HEADER; MAX_HEADERS];
                    let bytes = inbox.buf.get(..head_len).unwrap_or_default();
                    match Head::parse(bytes, &mut storage) {
                        Some(head) => self.bodyless(socket, &head, tx, plan).await?,
                        None => Bodyless::Answered,
                    }
                };
                if let Bodyless::Resume(i, stream, seq) = decided {
                    let end = head_len.min(inbox.filled);
                    inbox.buf.copy_within(end..inbox.filled, 0);
                    inbox.filled -= end;
                    self.resume(socket, inbox, tx, i, stream, seq).await?;
                    return if plan.keep_alive {
                        Ok(0)
                    } else {
                        Err(Ended::Done(200))
                    };
                }
                if let Bodyless::Stream(i) = decided {
                    let end = head_len.min(inbox.filled);
                    inbox.buf.copy_within(end..inbox.filled, 0);
                    inbox.filled -= end;
                    let streamed = self
                        .stream(socket, inbox, tx, Target::Table(i), None, Some(state))
                        .await;
                    if let Ok(mut table) = self.legacy.try_borrow_mut() {
                        if let Some(e) = table.entry(i) {
                            e.stream = false;
                        }
                    }
                    streamed?;
                    return if plan.keep_alive {
                        Ok(0)
                    } else {
                        Err(Ended::Done(200))
                    };
                }
                return Ok(head_len);
            }
            Verb::Other => {
                let extra = Extra {
                    allow: Some("GET, POST, DELETE"),
                    ..Extra::default()
                };
                let keep = plan.keep_alive && framing == Framing::Length(0);
                let why = "Method not allowed";
                self.refuse_with(
                    socket,
                    tx,
                    405,
                    None,
                    code::INVALID_REQUEST,
                    why,
                    keep,
                    extra,
                )
                .await?;
                return Ok(head_len);
            }
        }
        if !plan.json {
            let why = "Content-Type must be application/json";
            self.refuse(socket, tx, 415, why, false).await?;
            return Ok(head_len);
        }
        let room = inbox.buf.len() - head_len;
        let too_large = "Request body too large for the receive buffer";
        if let Framing::Length(n) = framing {
            if n > room as u64 {
                self.refuse(socket, tx, 413, too_large, false).await?;
                return Ok(head_len);
            }
        }
        if plan.expects_continue {
            respond::write_all(socket, b"HTTP/1.1 100 Continue\r\n\r\n").await?;
            socket.flush().await.map_err(|e| Ended::Write(e.kind()))?;
        }
        let read = match framing {
            Framing::Length(n) => {
                let n = n as usize;
                inbox
                    .read_to(socket, head_len + n)
                    .await
                    .map(|()| (n, head_len + n))
            }
            Framing::Chunked => inbox.chunked(socket, head_len).await,
        };
        let (body_len, end) = match read {
            Ok(r) => r,
            Err(BodyError::TooLarge) => {
                self.refuse(socket, tx, 413, too_large, false).await?;
                return Ok(head_len);
            }
            Err(BodyError::Invalid) => {
                self.refuse(socket, tx, 400, "Malformed chunked body", false)
                    .await?;
                return Ok(head_len);
            }
            Err(BodyError::Closed) => return Err(Ended::Closed),
            Err(BodyError::Read(kind)) => return Err(Ended::Read(kind)),
        };
        let posted = {
            let (head_bytes, rest) = inbox.buf.split_at(head_len);
            let body = rest.get(..body_len).unwrap_or_default();
            let mut storage = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let Some(head) = Head::parse(head_bytes, &mut storage) else {
                self.refuse(socket, tx, 400, "Malformed HTTP request", false)
                    .await?;
                return Ok(end);
            };
            self.post(socket, &head, body, tx, calls, plan, runner)
                .await?
        };
        match posted {
            Posted::Answered(true) => Ok(end),
            Posted::Answered(false) => Err(Ended::Done(200)),
            Posted::Stream(mut session, token, keep) => {
                // The request is consumed: what follows it (a pipelined request) moves down.
                let end = end.min(inbox.filled);
                inbox.buf.copy_within(end..inbox.filled, 0);
                inbox.filled -= end;
                self.stream(
                    socket,
                    inbox,
                    tx,
                    Target::Local(&mut session),
                    Some(token),
                    None,
                )
                .await?;
                if keep {
                    Ok(0)
                } else {
                    Err(Ended::Done(200))
                }
            }
        }
    }

    /// A GET (the legacy session's stream) or DELETE (ends the legacy session).
    async fn bodyless<T: Write>(
        &self,
        socket: &mut T,
        head: &Head<'_, '_>,
        tx: &mut [u8],
        plan: Plan,
    ) -> Result<Bodyless, Ended> {
        let keep = plan.keep_alive;
        let not_found = "Session not found";
        let id = head.text("mcp-session-id").filter(|_| !plan.modern);
        let Some(id) = id else {
            if plan.verb == Verb::Delete {
                let why = "DELETE needs an Mcp-Session-Id";
                self.refuse(socket, tx, 400, why, keep).await?;
            } else {
                let extra = Extra {
                    allow: Some("POST"),
                    ..Extra::default()
                };
                let why = "GET needs an Mcp-Session-Id (2026-07-28 requests are POSTs)";
                self.refuse_with(
                    socket,
                    tx,
                    405,
                    None,
                    code::INVALID_REQUEST,
                    why,
                    keep,
                    extra,
                )
                .await?;
            }
            return Ok(Bodyless::Answered);
        };
        if plan.verb == Verb::Get && !head.accepts("text/event-stream") {
            let why = "GET streams are text/event-stream";
            self.refuse(socket, tx, 406, why, keep).await?;
            return Ok(Bodyless::Answered);
        }
        let now = self.now();
        let found = self
            .legacy
            .try_borrow_mut()
            .ok()
            .and_then(|mut t| t.find(id.as_bytes(), now));
        let Some(i) = found else {
            self.refuse(socket, tx, 404, not_found, keep).await?;
            return Ok(Bodyless::Answered);
        };
        if plan.verb == Verb::Delete {
            if let Ok(mut t) = self.legacy.try_borrow_mut() {
                t.free(i);
            }
            respond::empty(socket, 200, keep, Extra::default()).await?;
            return Ok(Bodyless::Answered);
        }
        if let Some(last) = head.text("last-event-id") {
            let resume = self
                .legacy
                .try_borrow_mut()
                .ok()
                .and_then(|mut t| Some(t.entry(i)?.ring.resume(last)));
            match resume {
                Some(Resume::From { stream, seq }) => {
                    self.count(|s| s.streams = s.streams.saturating_add(1));
                    respond::sse_head(socket, keep, Extra::default()).await?;
                    return Ok(Bodyless::Resume(i, stream, seq));
                }
                Some(Resume::Lost) => {
                    let why = "Last-Event-ID is older than the events this session keeps";
                    self.refuse(socket, tx, 400, why, keep).await?;
                    return Ok(Bodyless::Answered);
                }
                // Not one of this session's stream ids: the session's GET stream, as
                // without the header (mcp-tokio does the same).
                Some(Resume::Unknown) | None => {}
            }
        }
        let taken = self.legacy.try_borrow_mut().ok().and_then(|mut t| {
            let e = t.entry(i)?;
            let was = e.stream;
            e.stream = true;
            Some(was)
        });
        if taken != Some(false) {
            let why = "This session's GET stream is already open";
            self.refuse(socket, tx, 409, why, keep).await?;
            return Ok(Bodyless::Answered);
        }
        self.count(|s| s.streams = s.streams.saturating_add(1));
        respond::sse_head(socket, keep, Extra::default()).await?;
        Ok(Bodyless::Stream(i))
    }

    /// A POST whose body arrived: checked, handled by its session, answered.
    #[allow(clippy::too_many_arguments)]
    async fn post<'s, T: Write, R: CallRunner<T>>(
        &'s self,
        socket: &mut T,
        head: &Head<'_, '_>,
        body: &[u8],
        tx: &mut [u8],
        calls: &'s mut [CallSlot],
        plan: Plan,
        runner: &mut R,
    ) -> Result<Posted<'s>, Ended> {
        let keep = plan.keep_alive;
        let peeked = peek(body, self.limits());
        let request_id = match peeked {
            Peek::Request(r) => r.id.map(|id| id.as_raw()),
            _ => None,
        };
        if plan.modern {
            let checked = checks::check_modern(head, &peeked).and_then(|()| {
                match self.handler.try_borrow_mut() {
                    Ok(mut handler) => {
                        checks::check_params(head, &peeked, &mut *handler, self.limits())
                    }
                    Err(_) => Ok(()),
                }
            });
            if let Err(why) = checked {
                let code = code::HEADER_MISMATCH;
                self.refuse_with(
                    socket,
                    tx,
                    400,
                    request_id,
                    code,
                    why,
                    keep,
                    Extra::default(),
                )
                .await?;
                return Ok(Posted::Answered(keep));
            }
        }
        let is_listen = matches!(peeked, Peek::Request(r) if r.method() == Some(Method::Listen));
        if is_listen && !head.accepts("text/event-stream") {
            // A stream and nothing else: a JSON-only client cannot receive it.
            let why = "subscriptions/listen is answered with a text/event-stream response";
            self.refuse_with(
                socket,
                tx,
                406,
                request_id,
                code::INVALID_REQUEST,
                why,
                keep,
                Extra::default(),
            )
            .await?;
            return Ok(Posted::Answered(keep));
        }
        let now = self.now();
        let version = head.text("mcp-protocol-version");
        let known = version.is_none_or(|v| ProtocolVersion::ALL.iter().any(|p| p.as_str() == v));
        let session_id = head.text("mcp-session-id").filter(|_| !plan.modern);
        if !known && session_id.is_some() {
            let why = "Unsupported MCP-Protocol-Version header";
            self.refuse(socket, tx, 400, why, keep).await?;
            return Ok(Posted::Answered(keep));
        }
        // A legacy session's request, or an `initialize` that may start one.
        let mut entry = None;
        if let Some(id) = session_id {
            let found = self.legacy.try_borrow_mut().ok().and_then(|mut t| {
                let i = t.find(id.as_bytes(), now)?;
                let negotiated = t.entry(i)?.session.negotiated_version();
                Some((i, negotiated))
            });
            match found {
                None => {
                    self.refuse(socket, tx, 404, "Session not found", keep)
                        .await?;
                    return Ok(Posted::Answered(keep));
                }
                Some((_, negotiated))
                    if version.is_some_and(|v| negotiated.is_none_or(|n| n.as_str() != v)) =>
                {
                    let why = "MCP-Protocol-Version header does not match the session's";
                    self.refuse(socket, tx, 400, why, keep).await?;
                    return Ok(Posted::Answered(keep));
                }
                Some((i, _)) => entry = Some(i),
            }
        } else if !plan.modern
            && known
            && SESSIONS > 0
            && matches!(peeked, Peek::Request(r) if r.method() == Some(Method::Initialize))
        {
            let key = self.config.key;
            let reserved = self
                .legacy
                .try_borrow_mut()
                .ok()
                .and_then(|mut t| t.reserve(&key, now));
            match reserved {
                Some(i) => entry = Some(i),
                None => {
                    let why = "Too many sessions";
                    let code = code::INTERNAL_ERROR;
                    self.refuse_with(socket, tx, 503, None, code, why, keep, Extra::default())
                        .await?;
                    return Ok(Posted::Answered(keep));
                }
            }
        }
        let creating = entry.is_some() && session_id.is_none();
        // A legacy session's `resources/(un)subscribe`: kept once answered with a result.
        let subscription = match (&peeked, entry) {
            (Peek::Request(r), Some(_)) if !creating => {
                let hash = r.target.map(|t| uri_hash(t.chars()));
                match r.method() {
                    Some(Method::Subscribe) => hash.map(|h| (true, h)),
                    Some(Method::Unsubscribe) => hash.map(|h| (false, h)),
                    _ => None,
                }
            }
            _ => None,
        };
        if let (Some((true, hash)), Some(i)) = (subscription, entry) {
            let room = self
                .legacy
                .try_borrow_mut()
                .ok()
                .is_some_and(|mut t| t.entry(i).is_some_and(|e| e.subs.has_room_for(hash)));
            if !room {
                let why = "Too many resource subscriptions in this session";
                let code = code::INTERNAL_ERROR;
                self.refuse_with(
                    socket,
                    tx,
                    200,
                    request_id,
                    code,
                    why,
                    keep,
                    Extra::default(),
                )
                .await?;
                return Ok(Posted::Answered(keep));
            }
        }
        let mut subscribed = false;
        let listen = is_listen;
        let mut local = Session::from_slots(self.info, self.config, calls);
        let access = Access {
            server: self,
            target: RefCell::new(match entry {
                Some(i) => Target::Table(i),
                None => Target::Local(&mut local),
            }),
        };
        let sse_ok = head.accepts("text/event-stream");
        let mut pump = Pump::message(body, now);
        let mut reply = Reply {
            sse: listen,
            started: false,
            replied: false,
            keep_alive: keep,
            modern: plan.modern,
            sessionless: entry.is_none() || creating,
            session: None,
            resumable: entry.is_some() && !creating,
            stream: None,
            closed: false,
        };
        let mut stream = None;
        loop {
            let mut polled = None;
            if let Ok(mut handler) = self.handler.try_borrow_mut() {
                access.with(&mut |s| polled = Some(pump.poll(s, &mut *handler, tx)));
            }
            let Some(polled) = polled else {
                let why = "The server's handler is busy";
                let code = code::INTERNAL_ERROR;
                self.refuse_with(socket, tx, 503, None, code, why, keep, Extra::default())
                    .await?;
                break;
            };
            let len = match polled {
                Ok(Some(Output::Transmit(t))) => t.len,
                Ok(Some(Output::Call(call))) => {
                    let token = call.token();
                    if runner.takes(&call) {
                        // Its progress and logs go out as they come: an SSE response.
                        reply.sse |= sse_ok && !reply.replied;
                        let mut ctx = CallContext {
                            access: &access,
                            tx: &mut *tx,
                            socket: &mut *socket,
                            reply: &mut reply,
                            token,
                            failed: None,
                        };
                        runner.run(call, &mut ctx).await;
                        if let Some(e) = ctx.failed {
                            return Err(e);
                        }
                    }
                    // Unanswered by the runner (or not taken): -32603.
                    let mut failed = None;
                    access.with(&mut |s| {
                        failed =
                            Some(s.fail(token, code::INTERNAL_ERROR, DEFERRED_CALL_MESSAGE, tx))
                    });
                    match failed {
                        Some(Ok(Some(t))) => t.len,
                        _ => continue,
                    }
                }
                Ok(Some(Output::Listen(token))) => {
                    stream = Some(token);
                    continue;
                }
                #[cfg(feature = "requests")]
                Ok(Some(Output::Response(response))) => {
                    // For a call running on another slot (or on this one, pipelined).
                    let delivered = entry.is_some_and(|i| {
                        self.legacy.try_borrow_mut().is_ok_and(|mut t| {
                            t.entry(i)
                                .is_some_and(|e| e.mail.deliver(response.call, &response.outcome))
                        })
                    });
                    if !delivered {
                        self.count(|s| s.dropped = s.dropped.saturating_add(1));
                    }
                    continue;
                }
                Ok(Some(_)) => continue,
                Ok(None) => break,
                Err(_) => {
                    self.count(|s| s.dropped = s.dropped.saturating_add(1));
                    break;
                }
            };
            if creating && !reply.replied && reply.session.is_none() {
                // The reply to `initialize`: the session lives when it negotiated.
                let id = self.legacy.try_borrow_mut().ok().and_then(|mut t| {
                    let e = t.entry(entry?)?;
                    e.session.negotiated_version()?;
                    e.state = State::Live;
                    Some(e.id)
                });
                if id.is_some() {
                    self.count(|s| s.sessions = s.sessions.saturating_add(1));
                    reply.sessionless = false;
                }
                reply.session = id;
            }
            let frame = tx.get(..len).unwrap_or_default();
            subscribed |= subscription.is_some()
                && mcp_rs_core::wire::jsonrpc::frame_kind(frame) == FrameKind::Result;
            if !reply.send(socket, &access, frame).await? {
                self.count(|s| s.dropped = s.dropped.saturating_add(1));
            }
        }
        // A `tasks/*` request or a call made a task may have changed the task table: the
        // listen streams subscribed to a task look (a pass sends only what changed).
        #[cfg(feature = "tasks")]
        self.changes.bump_index(super::wait::TASKS);
        if creating && reply.session.is_none() {
            if let (Ok(mut t), Some(i)) = (self.legacy.try_borrow_mut(), entry) {
                t.free(i);
            }
        }
        if let (true, Some((add, hash)), Some(i)) = (subscribed, subscription, entry) {
            if let Some(e) = self
                .legacy
                .try_borrow_mut()
                .ok()
                .as_mut()
                .and_then(|t| t.entry(i))
            {
                if add {
                    e.subs.add(hash);
                } else {
                    e.subs.remove(hash);
                }
            }
        }
        match (stream, reply.sse && reply.started, entry) {
            (Some(token), true, None) => {
                self.count(|s| s.streams = s.streams.saturating_add(1));
                Ok(Posted::Stream(local, token, keep))
            }
            _ => {
                if reply.sse && reply.started {
                    if let Some(s) = reply.stream {
                        // The end of the stream, for a client that resumes it.
                        access.keep(s, b"");
                    }
                    if !reply.closed {
                        respond::sse_end(socket).await?;
                    }
                } else if !reply.replied {
                    respond::empty(socket, 202, keep, Extra::default()).await?;
                }
                Ok(Posted::Answered(keep))
            }
        }
    }

    /// An open SSE stream (a `subscriptions/listen` on the slot's session, `listen` its
    /// token; or a legacy session's GET stream): list changes go out until the client
    /// closes the connection, or sends the next request (which ends a listen stream with
    /// its `complete` result, then is served).
    async fn stream<T: Read + Write>(
        &self,
        socket: &mut T,
        inbox: &mut Inbox<'_>,
        tx: &mut [u8],
        mut target: Target<'_, '_>,
        listen: Option<CallToken>,
        evictable: Option<&SlotState>,
    ) -> Result<(), Ended> {
        let mut seen = self.changes.now();
        loop {
            loop {
                match self.on_session(&mut target, |s| s.poll_transmit(tx)) {
                    Some(Ok(Some(t))) => {
                        let frame = tx.get(..t.len).unwrap_or_default();
                        respond::sse_event(socket, None, frame).await?;
                    }
                    Some(Ok(None)) => break,
                    None => return Err(Ended::Done(200)),
                    Some(Err(_)) => {
                        self.count(|s| s.dropped = s.dropped.saturating_add(1));
                        break;
                    }
                }
            }
            // Task status notifications: each subscribed task's state once after the
            // acknowledgement, then what changed (the core compares).
            #[cfg(feature = "tasks")]
            if listen.is_some() {
                self.send_task_changes(socket, tx, &mut target).await?;
            }
            let spare = inbox.buf.get_mut(inbox.filled..).unwrap_or_default();
            if spare.is_empty() || inbox.filled > 0 {
                // The client sent more: end the stream so the next request is served.
                if let Some(token) = listen {
                    let closed = self.on_session(&mut target, |s| s.close_subscription(token, tx));
                    if let Some(Ok(Some(t))) = closed {
                        let frame = tx.get(..t.len).unwrap_or_default();
                        respond::sse_event(socket, None, frame).await?;
                    }
                }
                respond::sse_end(socket).await?;
                return Ok(());
            }
            // A legacy GET stream waiting for news is evictable (the client reopens it).
            let evicted = async {
                match evictable {
                    Some(state) => state.evicted().await,
                    None => core::future::pending().await,
                }
            };
            if let Some(state) = evictable {
                state.idle.set(true);
            }
            let woke = select(socket.read(spare), select(self.changes.wait(seen), evicted)).await;
            if let Some(state) = evictable {
                state.idle.set(false);
            }
            match woke {
                Either::First(Ok(0)) => return Err(Ended::Closed),
                Either::First(Ok(n)) => inbox.filled += n,
                Either::First(Err(e)) => return Err(Ended::Read(e.kind())),
                Either::Second(Either::Second(())) => {
                    respond::sse_end(socket).await?;
                    return Err(Ended::Evicted);
                }
                Either::Second(Either::First(now)) => {
                    let changed = |i: usize| now.get(i) != seen.get(i);
                    self.on_session(&mut target, |s| {
                        for (i, kind) in KINDS.iter().enumerate() {
                            if changed(i) {
                                s.list_changed(*kind);
                            }
                        }
                    });
                    let count = |e: &[u32]| e.get(UPDATES).copied().unwrap_or(0);
                    let (from, to) = (count(&seen), count(&now));
                    seen = now;
                    self.send_updates(socket, tx, &mut target, from, to).await?;
                }
            }
        }
    }
}

impl<S: ServerHandler, const SESSIONS: usize, const WAITERS: usize>
    Server<'_, S, SESSIONS, WAITERS>
{
    /// One pass of [`Session::tasks_changed_next`](mcp_rs_core::Session::tasks_changed_next)
    /// on a listen stream: the `notifications/tasks` it is owed. A frame larger than `tx`
    /// is counted as dropped (and tried again on the next pass).
    #[cfg(feature = "tasks")]
    async fn send_task_changes<T: Write>(
        &self,
        socket: &mut T,
        tx: &mut [u8],
        target: &mut Target<'_, '_>,
    ) -> Result<(), Ended> {
        let mut cursor = 0;
        loop {
            let now = self.now();
            // The handler is borrowed for the pass's step only, never across the write.
            let next = match self.handler.try_borrow_mut() {
                Ok(mut handler) => self.on_session(target, |s| {
                    s.tasks_changed_next(&mut *handler, &mut cursor, now, tx)
                }),
                Err(_) => None,
            };
            match next {
                Some(Ok(Some(t))) => {
                    respond::sse_event(socket, None, tx.get(..t.len).unwrap_or_default()).await?;
                }
                Some(Err(_)) => {
                    self.count(|s| s.dropped = s.dropped.saturating_add(1));
                    cursor += 1;
                }
                _ => return Ok(()),
            }
        }
    }

    /// Sends updates `from + 1 ..= to` ([`Server::resource_updated`]) on an open stream:
    /// a listen stream's subscribed ones, or a legacy GET stream's when its session
    /// subscribed.
    async fn send_updates<T: Write>(
        &self,
        socket: &mut T,
        tx: &mut [u8],
        target: &mut Target<'_, '_>,
        from: u32,
        to: u32,
    ) -> Result<(), Ended> {
        let made = to.wrapping_sub(from);
        let kept = made.min(KEPT as u32);
        if made > kept {
            self.count(|s| s.dropped = s.dropped.saturating_add(made - kept));
        }
        for n in (0..kept).map(|k| to.wrapping_sub(kept - 1 - k)) {
            let mut uri = [0u8; MAX_UPDATED_URI];
            let len = self
                .updates
                .try_borrow()
                .ok()
                .and_then(|u| u.get(n, &mut uri));
            let Some(uri) = len.and_then(|len| core::str::from_utf8(uri.get(..len)?).ok()) else {
                self.count(|s| s.dropped = s.dropped.saturating_add(1));
                continue;
            };
            if let Target::Table(i) = *target {
                let subscribed = self.legacy.try_borrow_mut().ok().is_some_and(|mut t| {
                    t.entry(i)
                        .is_some_and(|e| e.subs.contains(uri_hash(uri.chars())))
                });
                if !subscribed {
                    continue;
                }
                if let Some(Ok(Some(t))) = self.on_session(target, |s| s.resource_updated(uri, tx))
                {
                    respond::sse_event(socket, None, tx.get(..t.len).unwrap_or_default()).await?;
                }
                continue;
            }
            let mut cursor = 0;
            while let Some(Ok(Some(t))) =
                self.on_session(target, |s| s.resource_updated_next(uri, &mut cursor, tx))
            {
                respond::sse_event(socket, None, tx.get(..t.len).unwrap_or_default()).await?;
            }
        }
        Ok(())
    }

    /// A resumed stream (`GET` with `Last-Event-ID`): stream `stream` of the legacy session
    /// at entry `i`, its kept events after `seq`, then the next ones as they are kept,
    /// until the end of its response. The stream also ends when the session does, when
    /// events it has not sent were dropped from the ring meanwhile (the client resumes
    /// again and learns it), or when the client sends its next request.
    #[allow(clippy::too_many_arguments)]
    async fn resume<T: Read + Write>(
        &self,
        socket: &mut T,
        inbox: &mut Inbox<'_>,
        tx: &mut [u8],
        i: usize,
        stream: u32,
        mut seq: u32,
    ) -> Result<(), Ended> {
        let mut seen = self.changes.now();
        loop {
            loop {
                let step = self.legacy.try_borrow_mut().ok().and_then(|mut t| {
                    let e = t.entry(i).filter(|e| e.state == State::Live)?;
                    Some(match e.ring.next(stream, seq) {
                        Ok(Some(Kept::Event { seq, start, len })) => match tx.get_mut(..len) {
                            Some(dst) => {
                                dst.copy_from_slice(e.ring.frame(start, len));
                                Step::Send(seq, len)
                            }
                            None => Step::Skip(seq),
                        },
                        Ok(None) => Step::Wait,
                        Ok(Some(Kept::End)) | Err(()) => Step::End,
                    })
                });
                match step {
                    Some(Step::Send(n, len)) => {
                        seq = n;
                        let mut id = [0u8; 24];
                        let id_len = replay::event_id(stream, n, &mut id);
                        let frame = tx.get(..len).unwrap_or_default();
                        respond::sse_event(socket, id.get(..id_len), frame).await?;
                    }
                    Some(Step::Skip(n)) => {
                        seq = n;
                        self.count(|s| s.dropped = s.dropped.saturating_add(1));
                    }
                    Some(Step::Wait) => break,
                    Some(Step::End) | None => {
                        respond::sse_end(socket).await?;
                        return Ok(());
                    }
                }
            }
            let spare = inbox.buf.get_mut(inbox.filled..).unwrap_or_default();
            if spare.is_empty() || inbox.filled > 0 {
                // The client sent more: end the stream so the next request is served.
                respond::sse_end(socket).await?;
                return Ok(());
            }
            match select(socket.read(spare), self.changes.wait(seen)).await {
                Either::First(Ok(0)) => return Err(Ended::Closed),
                Either::First(Ok(n)) => inbox.filled += n,
                Either::First(Err(e)) => return Err(Ended::Read(e.kind())),
                Either::Second(now) => seen = now,
            }
        }
    }
}

/// The session a POST's body goes to, lent one command at a time.
struct Access<'r, 'a, 'x, 's, S: ServerHandler, const N: usize, const W: usize> {
    server: &'r Server<'a, S, N, W>,
    target: RefCell<Target<'x, 's>>,
}

impl<S: ServerHandler, const N: usize, const W: usize> SessionAccess
    for Access<'_, '_, '_, '_, S, N, W>
{
    fn with(&self, f: &mut dyn FnMut(&mut Session<'_>)) {
        if let Ok(mut target) = self.target.try_borrow_mut() {
            self.server.on_session(&mut target, |s| f(s));
        }
    }

    fn open_stream(&self) -> Option<(u32, u32)> {
        let Target::Table(i) = *self.target.try_borrow().ok()? else {
            return None;
        };
        self.server
            .legacy
            .try_borrow_mut()
            .ok()?
            .entry(i)?
            .ring
            .open()
    }

    fn keep(&self, stream: u32, frame: &[u8]) -> Option<u32> {
        let Target::Table(i) = *self.target.try_borrow().ok()? else {
            return None;
        };
        let seq = {
            let mut table = self.server.legacy.try_borrow_mut().ok()?;
            let e = table.entry(i)?;
            e.ring.on().then(|| e.ring.push(stream, frame))?
        };
        self.server.changes.bump_index(EVENTS);
        Some(seq)
    }

    #[cfg(feature = "requests")]
    fn take_answer(
        &self,
        token: CallToken,
        out: &mut [u8],
        waker: &core::task::Waker,
    ) -> core::task::Poll<Option<super::mailbox::Held>> {
        use super::mailbox::Held;
        use core::task::Poll;
        let Ok(target) = self.target.try_borrow() else {
            return Poll::Ready(None);
        };
        let Target::Table(i) = *target else {
            return Poll::Ready(None); // No session outlives the POST: nothing can answer.
        };
        let Ok(mut table) = self.server.legacy.try_borrow_mut() else {
            waker.wake_by_ref();
            return Poll::Pending;
        };
        let Some(e) = table.entry(i).filter(|e| e.state == State::Live) else {
            return Poll::Ready(None);
        };
        match e.mail.held {
            Some((call, held)) if call == token => {
                e.mail.held = None;
                let len = match held {
                    Held::Result(n) | Held::Error(_, n) => n,
                    Held::TooLarge => 0,
                };
                let copied = match (out.get_mut(..len), e.mail.buf.get(..len)) {
                    (Some(dst), Some(src)) => {
                        dst.copy_from_slice(src);
                        held
                    }
                    _ => Held::TooLarge,
                };
                Poll::Ready(Some(copied))
            }
            _ => {
                e.mail.waker = Some(waker.clone());
                Poll::Pending
            }
        }
    }
}

/// What the head of a request says, kept while its body is read.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    verb: Verb,
    on_path: bool,
    keep_alive: bool,
    framing: Result<Framing, head::BadHeader>,
    expects_continue: bool,
    host: Result<(), &'static str>,
    json: bool,
    modern: bool,
}

/// The response to a POST as it is being written.
pub(super) struct Reply {
    /// An SSE stream (`subscriptions/listen`), else one JSON body.
    sse: bool,
    started: bool,
    /// The JSON body was written.
    replied: bool,
    keep_alive: bool,
    modern: bool,
    /// Legacy, and no session handles it (an error is then 400).
    sessionless: bool,
    /// The id of the session this response created.
    session: Option<[u8; SESSION_ID_LEN]>,
    /// A legacy session's: an SSE response is resumable when the session keeps events.
    resumable: bool,
    /// The resumable stream's number, once its head is written.
    stream: Option<u32>,
    /// Ended early ([`CallContext::close_stream`]): its events are only kept.
    closed: bool,
}

impl Reply {
    /// Sends a frame; `false` when the response cannot carry it (a second frame on a JSON
    /// response).
    pub(super) async fn send<T: Write>(
        &mut self,
        socket: &mut T,
        access: &dyn SessionAccess,
        frame: &[u8],
    ) -> Result<bool, Ended> {
        let extra = Extra {
            allow: None,
            session: self.session.as_ref().map(|id| &id[..]),
        };
        if self.sse {
            self.start(socket, access).await?;
            let Some(stream) = self.stream else {
                respond::sse_event(socket, None, frame).await?;
                return Ok(true);
            };
            let seq = access.keep(stream, frame);
            if self.closed {
                return Ok(seq.is_some());
            }
            let mut id = [0u8; 24];
            let id_len = seq.map(|n| replay::event_id(stream, n, &mut id));
            let id = id_len.and_then(|n| id.get(..n));
            if respond::sse_event(socket, id, frame).await.is_err() {
                // The client went away: the requests run on, their events kept for it to
                // resume (the connection ends once the POST is done).
                self.closed = true;
            }
            return Ok(true);
        }
        // A JSON response carries the one response: notifications and requests cannot go
        // on it (the client asked for no stream).
        let kind = mcp_rs_core::wire::jsonrpc::frame_kind(frame);
        if self.replied || matches!(kind, FrameKind::Notification | FrameKind::Request) {
            return Ok(false);
        }
        let status = status_for(frame, self.modern, self.sessionless);
        respond::json(socket, status, frame, self.keep_alive, extra).await?;
        self.replied = true;
        Ok(true)
    }
}

impl Reply {
    /// Writes the SSE head (and a resumable stream's priming event) unless written.
    async fn start<T: Write>(
        &mut self,
        socket: &mut T,
        access: &dyn SessionAccess,
    ) -> Result<(), Ended> {
        if self.started {
            return Ok(());
        }
        let extra = Extra {
            allow: None,
            session: self.session.as_ref().map(|id| &id[..]),
        };
        respond::sse_head(socket, self.keep_alive, extra).await?;
        self.started = true;
        if let Some((stream, seq)) = self.resumable.then(|| access.open_stream()).flatten() {
            self.stream = Some(stream);
            let mut id = [0u8; 24];
            let n = replay::event_id(stream, seq, &mut id);
            let id = id.get(..n).unwrap_or_default();
            if respond::sse_priming(socket, id).await.is_err() {
                self.closed = true; // As in `send`: resumable.
            }
        }
        Ok(())
    }

    /// Ends a resumable SSE response early (see [`CallContext::close_stream`]); `false`
    /// when the response is not one.
    pub(super) async fn close<T: Write>(
        &mut self,
        socket: &mut T,
        access: &dyn SessionAccess,
    ) -> Result<bool, Ended> {
        if !self.sse || self.closed || !self.resumable {
            return Ok(false);
        }
        self.start(socket, access).await?;
        if self.stream.is_none() {
            return Ok(false);
        }
        // A failed write changes nothing: the stream is closed either way.
        let _ = respond::sse_end(socket).await;
        self.closed = true;
        Ok(true)
    }
}

/// The HTTP status of a JSON reply: 2026-07-28 maps protocol errors to 4xx as the
/// transport specifies; legacy replies are 200 except the error to a request no session
/// handles (no `initialize`, no session id): 400.
fn status_for(frame: &[u8], modern: bool, sessionless: bool) -> u16 {
    let FrameKind::Error(c) = mcp_rs_core::wire::jsonrpc::frame_kind(frame) else {
        return 200;
    };
    let bad_request = [
        code::PARSE_ERROR,
        code::INVALID_REQUEST,
        code::INVALID_PARAMS,
        code::HEADER_MISMATCH,
        code::MISSING_REQUIRED_CLIENT_CAPABILITY,
        code::UNSUPPORTED_PROTOCOL_VERSION,
    ];
    match c {
        code::METHOD_NOT_FOUND if modern => 404,
        c if modern && bad_request.contains(&c) => 400,
        _ if sessionless && !modern => 400,
        _ => 200,
    }
}
