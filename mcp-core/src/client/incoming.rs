//! Frames from the server: responses routed to their request's slot, the server's requests
//! (answered by the client itself or handed to the application) and its notifications.

use super::events::{
    Event, Handshake, InboundRequest, InvalidFrame, LogMessage, Progress, Response, RpcError,
};
use super::rounds::InputRound;
use super::slots::SlotState;
use super::{Client, ClientError, Phase, Transmit};
use crate::model::common::ClientCaps;
use crate::model::logging::LogLevel;
use crate::token::cursor::ListKind;
use crate::wire::json::{self, check_embedded, Elements, JsonStr, JsonWriter, Kind, Limits};
use crate::wire::json::{RawJson, ScanError, StrPart};
use crate::wire::jsonrpc::{self, code, Message, RequestId, StoredId};
use crate::wire::method::{Method, ServerMethod, ServerNotification};

/// How many answers to server requests (`ping`, -32601) can wait for `poll_transmit`.
pub(super) const REPLY_QUEUE: usize = 4;

#[derive(Clone, Copy, Debug)]
enum ReplyKind {
    /// `{}` for a `ping`.
    Pong,
    /// -32601 for a request the client does not serve.
    MethodNotFound,
    /// -32600 without an id for a request whose id is longer than
    /// [`MAX_ID_LEN`](jsonrpc::MAX_ID_LEN): it cannot be echoed.
    IdTooLong,
}

/// Answers the client owes, oldest first.
#[derive(Debug)]
pub(super) struct Replies {
    queue: [(StoredId, ReplyKind); REPLY_QUEUE],
    len: usize,
}

impl Replies {
    pub(super) const fn new() -> Self {
        Replies {
            queue: [(StoredId::EMPTY, ReplyKind::Pong); REPLY_QUEUE],
            len: 0,
        }
    }
}

/// The messages of one frame, taken one event at a time with
/// [`next_event`](Self::next_event). The client acts on each message as it is taken: take
/// them all before handling the next frame.
#[derive(Debug)]
#[must_use = "a frame's messages are acted on as its events are taken"]
pub struct Received<'i> {
    source: Source<'i>,
}

#[derive(Debug)]
enum Source<'i> {
    One(RawJson<'i>),
    Batch(Elements<'i>),
    Bad(ScanError),
    Empty,
    Done,
}

impl<'i> Received<'i> {
    /// The next event of the frame, or `None` when it has no more. Messages that need no
    /// event (handshake responses, pings, progress for unknown tokens) are acted on here
    /// too.
    pub fn next_event(&mut self, client: &mut Client<'_>) -> Option<Event<'i>> {
        loop {
            let v = match core::mem::replace(&mut self.source, Source::Done) {
                Source::Done => return None,
                Source::Bad(e) => return Some(Event::Invalid(InvalidFrame::Json(e))),
                Source::Empty => {
                    return Some(Event::Invalid(InvalidFrame::NotJsonRpc("empty batch")))
                }
                Source::One(v) => v,
                Source::Batch(mut items) => {
                    let v = items.next()?;
                    self.source = Source::Batch(items);
                    v
                }
            };
            if let Some(event) = client.on_message(v) {
                return Some(event);
            }
        }
    }
}

impl Client<'_> {
    /// Handles one complete frame from the server (a line without its newline, an HTTP
    /// body or SSE event data) at `now_ms`; take its events with
    /// [`Received::next_event`]. Malformed input of any kind becomes
    /// [`Event::Invalid`], never an `Err` or a panic.
    pub fn handle<'i>(&mut self, now_ms: u64, frame: &'i [u8]) -> Received<'i> {
        self.advance(now_ms);
        let limits = Limits {
            max_depth: self.config.max_depth,
        };
        let source = match json::parse(frame, limits) {
            Err(e) => Source::Bad(e),
            Ok(v) => match v.elements() {
                Some(items) if items.clone().next().is_some() => Source::Batch(items),
                Some(_) => Source::Empty,
                None => Source::One(v),
            },
        };
        Received { source }
    }

    /// Whether the client speaks the 2026-07-28 era (or is trying to).
    fn modern(&self) -> bool {
        match self.phase {
            Phase::Ready(v) => v.is_modern(),
            Phase::Discovering => true,
            _ => false,
        }
    }

    fn on_message<'i>(&mut self, v: RawJson<'i>) -> Option<Event<'i>> {
        match jsonrpc::classify(v) {
            Err(invalid) => Some(Event::Invalid(InvalidFrame::NotJsonRpc(invalid.reason))),
            Ok(Message::Response { id, outcome }) => self.on_response(id, outcome),
            Ok(Message::Request { id, method, params }) => self.on_request(id, method, params),
            Ok(Message::Notification { method, params }) => self.on_notification(method, params),
        }
    }

    fn on_response<'i>(
        &mut self,
        id: RequestId<'i>,
        outcome: Result<RawJson<'i>, RawJson<'i>>,
    ) -> Option<Event<'i>> {
        let found = id.as_raw().parse::<u32>().ok().and_then(|n| {
            self.slots
                .iter()
                .position(|s| s.state == SlotState::Pending && s.id == n)
        });
        let Some((index, slot)) = found.and_then(|i| Some((i, *self.slots.get(i)?))) else {
            return Some(Event::Invalid(InvalidFrame::UnknownResponse));
        };
        let (method, handle) = (slot.method, slot.handle(index));
        if matches!(method, Method::Initialize | Method::Discover) {
            self.on_handshake(index, method, outcome);
            // An accepted answer is shown as it was sent (server info, instructions).
            let accepted = matches!(self.phase, Phase::Ready(_) | Phase::Initialized(_));
            return match outcome {
                Ok(result) if accepted => Some(Event::Handshake(Handshake { method, result })),
                _ => None,
            };
        }
        let malformed = |reason| {
            Some(Event::Invalid(InvalidFrame::MalformedResult {
                handle,
                method,
                reason,
            }))
        };
        let result = match outcome {
            Err(e) => {
                self.release(index);
                return match RpcError::read(e) {
                    Some(error) => Some(Event::Error {
                        handle,
                        method,
                        error,
                    }),
                    None => malformed("error must have an integer code and a string message"),
                };
            }
            Ok(r) if r.kind() != Kind::Object => {
                self.release(index);
                return malformed("result must be an object");
            }
            Ok(r) => r,
        };
        // Legacy results have no `resultType`; a missing one means "complete".
        let result_type = match self.modern() {
            true => result.get("resultType"),
            false => None,
        };
        let kind = result_type.map(|t| t.as_string());
        if kind.is_none() || kind.flatten().is_some_and(|k| k.eq_str("complete")) {
            self.release(index);
            return Some(Event::Result(Response {
                handle,
                method,
                result,
            }));
        }
        // A created task (the tasks extension) answers a `tools/call` that declared it.
        #[cfg(feature = "tasks")]
        if slot.tasks
            && method == Method::ToolsCall
            && kind.flatten().is_some_and(|k| k.eq_str("task"))
        {
            self.release(index);
            return Some(Event::Result(Response {
                handle,
                method,
                result,
            }));
        }
        if !kind.flatten().is_some_and(|k| k.eq_str("input_required")) {
            self.release(index);
            return malformed("unknown resultType");
        }
        match InputRound::read(handle, method, result) {
            Ok(round) => {
                if let Some(slot) = self.slots.get_mut(index) {
                    slot.state = SlotState::AwaitingInput;
                    slot.deadline = u64::MAX;
                }
                Some(Event::InputRequired(round))
            }
            Err(reason) => {
                self.release(index);
                malformed(reason)
            }
        }
    }

    fn on_request<'i>(
        &mut self,
        id: RequestId<'i>,
        method: JsonStr<'i>,
        params: Option<RawJson<'i>>,
    ) -> Option<Event<'i>> {
        let Some(id) = StoredId::new(id.as_raw()) else {
            // Answered all the same, without the id it cannot echo.
            return Some(
                self.owe(StoredId::EMPTY, ReplyKind::IdTooLong)
                    .unwrap_or(Event::Invalid(InvalidFrame::IdTooLong)),
            );
        };
        let mut buf = [0u8; 32];
        let which = method.text_in(&mut buf).and_then(ServerMethod::lookup);
        let legacy = !self.modern();
        let served = match which {
            Some(ServerMethod::Ping) if legacy => return self.owe(id, ReplyKind::Pong),
            Some(m) if legacy && self.config.capabilities.contains(needs(m)) => Some(m),
            _ => None,
        };
        match served {
            Some(method) => Some(Event::Request(InboundRequest { id, method, params })),
            None => self.owe(id, ReplyKind::MethodNotFound),
        }
    }

    /// Queues an answer; reports a full queue.
    fn owe<'i>(&mut self, id: StoredId, kind: ReplyKind) -> Option<Event<'i>> {
        match self.replies.queue.get_mut(self.replies.len) {
            Some(entry) => {
                *entry = (id, kind);
                self.replies.len += 1;
                None
            }
            None => Some(Event::Invalid(InvalidFrame::RepliesFull)),
        }
    }

    /// The oldest answer owed, if any.
    pub(super) fn poll_reply(&mut self, out: &mut [u8]) -> Result<Option<Transmit>, ClientError> {
        let Some(&(id, kind)) = self
            .replies
            .queue
            .get(..self.replies.len)
            .and_then(|q| q.first())
        else {
            return Ok(None);
        };
        let mut w = JsonWriter::new(out);
        match kind {
            ReplyKind::Pong => {
                jsonrpc::begin_result(&mut w, id.as_raw());
                w.raw_value("{}");
                jsonrpc::end_response(&mut w);
            }
            ReplyKind::MethodNotFound => jsonrpc::write_error(
                &mut w,
                Some(id.as_raw()),
                code::METHOD_NOT_FOUND,
                &[StrPart::Text("Method not found")],
                None,
            ),
            ReplyKind::IdTooLong => jsonrpc::write_error(
                &mut w,
                None,
                code::INVALID_REQUEST,
                &[StrPart::Text("Request id exceeds the client's limit")],
                Some(&|w: &mut JsonWriter<'_>| {
                    w.begin_object();
                    w.key("limit");
                    w.u64(u64::try_from(jsonrpc::MAX_ID_LEN).unwrap_or(u64::MAX));
                    w.end_object();
                }),
            ),
        }
        let len = w.finish()?;
        self.replies.queue.copy_within(1.., 0);
        self.replies.len = self.replies.len.saturating_sub(1);
        Ok(Some(Transmit { len }))
    }

    /// The `subscriptions/listen` request in flight a notification's
    /// `_meta["io.modelcontextprotocol/subscriptionId"]` names (this client's ids are
    /// integers).
    fn listen_stream(&self, params: Option<RawJson<'_>>) -> Option<super::RequestHandle> {
        let id = params?
            .get("_meta")?
            .get(crate::wire::params::META_SUBSCRIPTION)?
            .as_u64()?;
        let (index, slot) = self.slots.iter().enumerate().find(|(_, s)| {
            s.state == SlotState::Pending && s.method == Method::Listen && u64::from(s.id) == id
        })?;
        Some(slot.handle(index))
    }

    fn on_notification<'i>(
        &mut self,
        method: JsonStr<'i>,
        params: Option<RawJson<'i>>,
    ) -> Option<Event<'i>> {
        let mut buf = [0u8; 48];
        // Unknown notifications are ignored, as the spec asks.
        let which = method
            .text_in(&mut buf)
            .and_then(ServerNotification::lookup)?;
        let bad = |reason| {
            Some(Event::Invalid(InvalidFrame::MalformedNotification {
                notification: which,
                reason,
            }))
        };
        let get = |key| params.and_then(|p| p.get(key));
        let string = |key| get(key).and_then(|v| v.as_string());
        // An optional member: absent, or of the right type.
        let optional_str = |key| match get(key) {
            None => Ok(None),
            Some(v) => v.as_string().map(Some).ok_or(()),
        };
        match which {
            ServerNotification::ToolsListChanged => Some(Event::ListChanged(ListKind::Tools)),
            ServerNotification::PromptsListChanged => Some(Event::ListChanged(ListKind::Prompts)),
            ServerNotification::ResourcesListChanged => {
                Some(Event::ListChanged(ListKind::Resources))
            }
            ServerNotification::ResourceUpdated => match string("uri") {
                Some(uri) => Some(Event::ResourceUpdated {
                    uri,
                    subscription: self.listen_stream(params),
                }),
                None => bad("params.uri must be a string"),
            },
            ServerNotification::SubscriptionsAcknowledged => {
                // An acknowledgement of a stream this client did not open is ignored.
                let handle = self.listen_stream(params)?;
                match get("notifications").filter(|n| n.kind() == Kind::Object) {
                    Some(notifications) => Some(Event::Subscribed {
                        handle,
                        notifications,
                    }),
                    None => bad("params.notifications must be an object"),
                }
            }
            ServerNotification::Message => {
                let mut level_buf = [0u8; 16];
                let level = string("level")
                    .and_then(|l| l.text_in(&mut level_buf).and_then(LogLevel::from_wire));
                match (level, get("data"), optional_str("logger")) {
                    (Some(level), Some(data), Ok(logger)) => Some(Event::Log(LogMessage {
                        level,
                        logger,
                        data,
                    })),
                    _ => bad("needs a known level, data, and a string logger if any"),
                }
            }
            ServerNotification::Progress => {
                let progress = get("progress").and_then(|p| p.as_f64());
                let total = match get("total") {
                    None => Ok(None),
                    Some(t) => t.as_f64().map(Some).ok_or(()),
                };
                let (Some(progress), Ok(total), Ok(message), Some(token)) = (
                    progress,
                    total,
                    optional_str("message"),
                    get("progressToken"),
                ) else {
                    return bad("needs progressToken, a number progress, and total and message of the right types");
                };
                // The token is the request's id; progress for anything else is ignored
                // (it may follow the response).
                let token = token.as_u64().and_then(|t| u32::try_from(t).ok())?;
                let (index, slot) =
                    self.slots.iter().enumerate().find(|(_, s)| {
                        s.state == SlotState::Pending && s.progress && s.id == token
                    })?;
                Some(Event::Progress(Progress {
                    handle: slot.handle(index),
                    progress,
                    total,
                    message,
                }))
            }
            ServerNotification::Cancelled => {
                match (
                    get("requestId").and_then(RequestId::from_json),
                    optional_str("reason"),
                ) {
                    (Some(request_id), Ok(reason)) => Some(Event::Cancelled { request_id, reason }),
                    _ => bad("needs a requestId, and a string reason if any"),
                }
            }
        }
    }

    /// Answers a server request ([`Event::Request`]) with `result`, a JSON object on one
    /// line (a `CreateMessageResult`, `ElicitResult` or `ListRootsResult`).
    pub fn respond(
        &mut self,
        id: &StoredId,
        result: &str,
        out: &mut [u8],
    ) -> Result<Transmit, ClientError> {
        if check_embedded(result, true).is_err() {
            return Err(ClientError::InvalidJson);
        }
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_result(&mut w, id.as_raw());
        w.raw_value(result);
        jsonrpc::end_response(&mut w);
        Ok(Transmit { len: w.finish()? })
    }

    /// Answers a server request ([`Event::Request`]) with a JSON-RPC error (a user who
    /// declines a sampling: -1, as the spec's examples do).
    pub fn respond_error(
        &mut self,
        id: &StoredId,
        code: i32,
        message: &str,
        out: &mut [u8],
    ) -> Result<Transmit, ClientError> {
        let mut w = JsonWriter::new(out);
        jsonrpc::write_error(
            &mut w,
            Some(id.as_raw()),
            code,
            &[StrPart::Text(message)],
            None,
        );
        Ok(Transmit { len: w.finish()? })
    }
}

/// The client capability a server request needs.
fn needs(method: ServerMethod) -> ClientCaps {
    match method {
        ServerMethod::CreateMessage => ClientCaps::SAMPLING,
        ServerMethod::Elicit => ClientCaps::ELICITATION,
        ServerMethod::ListRoots => ClientCaps::ROOTS,
        _ => ClientCaps::NONE,
    }
}
