//! What the client tells the application: [`Event`], borrowed from the frame being handled
//! (or `'static` from [`Client::poll_event`](super::Client::poll_event)), and typed readers
//! of the common results ([`Response::page`], [`Response::tool_call`], ...).
//!
//! Every request ends with exactly one event naming its handle: [`Event::Result`],
//! [`Event::Error`], [`Event::TimedOut`] or [`Event::Invalid`] with
//! [`InvalidFrame::MalformedResult`] (or, with no event, when the caller cancels it).
//! [`Event::InputRequired`] does not end it: the request waits for
//! [`Client::retry`](super::Client::retry) (or `cancel`). `tests/client_model.rs` checks
//! this over random sequences.

use super::error::HandshakeError;
use super::lifecycle::ServerCaps;
use super::requests::Request;
use super::rounds::InputRound;
use super::slots::RequestHandle;
use crate::model::logging::LogLevel;
use crate::token::cursor::ListKind;
use crate::wire::json::{Elements, JsonStr, Kind, RawJson, ScanError};
use crate::wire::jsonrpc::{RequestId, StoredId};
use crate::wire::method::{Method, ServerMethod, ServerNotification};

/// Something the application should know.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Event<'i> {
    /// The handshake completed: requests may be sent.
    Connected {
        /// The negotiated revision.
        version: crate::wire::version::ProtocolVersion,
        /// What the server offers.
        capabilities: ServerCaps,
    },
    /// The handshake failed; the client refuses requests.
    HandshakeFailed(HandshakeError),
    /// The server's accepted answer to the handshake (`initialize` or `server/discover`),
    /// reported from its frame before [`Connected`](Self::Connected): who the server is
    /// and its instructions.
    Handshake(Handshake<'i>),
    /// A request succeeded.
    Result(Response<'i>),
    /// A request failed with a JSON-RPC error.
    Error {
        /// The request.
        handle: RequestHandle,
        /// Its method.
        method: Method,
        /// The error.
        error: RpcError<'i>,
    },
    /// 2026-07-28: the server needs input before it can answer; answer the round with
    /// [`Client::retry`](super::Client::retry).
    InputRequired(InputRound<'i>),
    /// No response before the deadline; the server was sent `notifications/cancelled`.
    TimedOut {
        /// The request.
        handle: RequestHandle,
        /// Its method.
        method: Method,
    },
    /// Progress of a request sent with [`Options::progress`](super::Options::progress).
    Progress(Progress<'i>),
    /// A request from the server for the application (legacy era): answer it with
    /// [`Client::respond`](super::Client::respond) or
    /// [`Client::respond_error`](super::Client::respond_error).
    Request(InboundRequest<'i>),
    /// `notifications/{tools,prompts,resources}/list_changed`.
    ListChanged(ListKind),
    /// `notifications/resources/updated`.
    ResourceUpdated {
        /// The resource.
        uri: JsonStr<'i>,
        /// The 2026-07-28 `subscriptions/listen` stream it came on (its
        /// `_meta.subscriptionId` names one of this client's listen requests in flight);
        /// `None` for a legacy session's (`resources/subscribe`).
        subscription: Option<RequestHandle>,
    },
    /// `notifications/subscriptions/acknowledged` (2026-07-28): the `subscriptions/listen`
    /// request `handle` is open, honouring `notifications` (a `SubscriptionFilter` object:
    /// the subset of the requested filter the server agreed to, e.g. which
    /// `resourceSubscriptions` URIs it will report). The request itself stays in flight
    /// until the server closes the stream or the client cancels it.
    Subscribed {
        /// The listen request.
        handle: RequestHandle,
        /// The honoured filter (a JSON object).
        notifications: RawJson<'i>,
    },
    /// `notifications/message`.
    Log(LogMessage<'i>),
    /// `notifications/cancelled`: the server withdrew a request it sent.
    Cancelled {
        /// The id of that request.
        request_id: RequestId<'i>,
        /// Why, if the server said.
        reason: Option<JsonStr<'i>>,
    },
    /// Something the server sent that the client cannot use.
    Invalid(InvalidFrame),
}

/// What was wrong with a frame from the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidFrame {
    /// Not JSON (or nested deeper than the limit).
    Json(ScanError),
    /// JSON, but not a JSON-RPC 2.0 message.
    NotJsonRpc(&'static str),
    /// A response whose id names no request in flight (never sent, already answered,
    /// cancelled or timed out).
    UnknownResponse,
    /// A response to a request, unusable: the request has ended.
    MalformedResult {
        /// The request.
        handle: RequestHandle,
        /// Its method.
        method: Method,
        /// What is wrong.
        reason: &'static str,
    },
    /// A notification with unusable params.
    MalformedNotification {
        /// Which notification.
        notification: ServerNotification,
        /// What is wrong.
        reason: &'static str,
    },
    /// A server request whose id is longer than
    /// [`MAX_ID_LEN`](crate::wire::jsonrpc::MAX_ID_LEN): it cannot be echoed, so the
    /// client answers it -32600 without an id (`data.limit`) from `poll_transmit`.
    IdTooLong,
    /// A server request the client had to answer by itself found the queue of such
    /// answers full (drain `poll_transmit` after every frame): it stays unanswered.
    RepliesFull,
}

/// The server's answer to the handshake.
#[derive(Clone, Copy, Debug)]
pub struct Handshake<'i> {
    /// `initialize` or `server/discover`.
    pub method: Method,
    /// The raw result object.
    pub result: RawJson<'i>,
}

impl<'i> Handshake<'i> {
    /// The server's `Implementation` object: `serverInfo` of an `initialize` result, or
    /// `_meta["io.modelcontextprotocol/serverInfo"]` of a 2026-07-28 result.
    pub fn server_info(&self) -> Option<RawJson<'i>> {
        self.result.get("serverInfo").or_else(|| {
            self.result
                .get("_meta")
                .and_then(|m| m.get(crate::wire::params::META_SERVER_INFO))
        })
    }
    /// The server's name, from [`server_info`](Self::server_info).
    pub fn server_name(&self) -> Option<JsonStr<'i>> {
        self.server_info()?.get("name")?.as_string()
    }
    /// `instructions`: guidance for the model on how to use the server.
    pub fn instructions(&self) -> Option<JsonStr<'i>> {
        self.result.get("instructions")?.as_string()
    }
}

/// A JSON-RPC error object.
#[derive(Clone, Copy, Debug)]
pub struct RpcError<'i> {
    /// The code.
    pub code: i64,
    /// The message.
    pub message: JsonStr<'i>,
    /// `data`, if any.
    pub data: Option<RawJson<'i>>,
}

impl<'i> RpcError<'i> {
    /// Reads an `error` member: an object with an integer `code` and a string `message`.
    pub(super) fn read(v: RawJson<'i>) -> Option<Self> {
        Some(RpcError {
            code: v.get("code")?.as_i64()?,
            message: v.get("message")?.as_string()?,
            data: v.get("data"),
        })
    }
}

/// A successful response to a request.
#[derive(Clone, Copy, Debug)]
pub struct Response<'i> {
    /// The request.
    pub handle: RequestHandle,
    /// Its method.
    pub method: Method,
    /// The raw `result` object (borrowed from the frame).
    pub result: RawJson<'i>,
}

/// Why a typed reader could not read a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResultError {
    /// The reader does not apply to the request's method.
    WrongMethod,
    /// A required member is missing.
    Missing(&'static str),
    /// A member has the wrong JSON type.
    WrongType(&'static str),
}

impl core::fmt::Display for ResultError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ResultError::WrongMethod => f.write_str("the reader does not fit the request"),
            ResultError::Missing(m) => write!(f, "result has no {m}"),
            ResultError::WrongType(m) => write!(f, "result member {m} has the wrong type"),
        }
    }
}

impl core::error::Error for ResultError {}

/// A required member of kind `kind`.
fn member<'i>(v: RawJson<'i>, key: &'static str, kind: Kind) -> Result<RawJson<'i>, ResultError> {
    let m = v.get(key).ok_or(ResultError::Missing(key))?;
    if m.kind() != kind {
        return Err(ResultError::WrongType(key));
    }
    Ok(m)
}

/// An optional member of kind `kind`.
pub(super) fn optional<'i>(
    v: RawJson<'i>,
    key: &'static str,
    kind: Kind,
) -> Result<Option<RawJson<'i>>, ResultError> {
    match v.get(key) {
        None => Ok(None),
        Some(m) if m.kind() == kind => Ok(Some(m)),
        Some(_) => Err(ResultError::WrongType(key)),
    }
}

/// One page of a list (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`).
#[derive(Clone, Copy, Debug)]
pub struct Page<'i> {
    /// Which list.
    pub kind: ListKind,
    /// The items (a JSON array).
    pub items: RawJson<'i>,
    /// Where the next page starts; `None` on the last page. Pass its text as the
    /// `cursor` of the next request (cursors are opaque; the server's never need escapes,
    /// [`JsonStr::decode_into`] handles those that do).
    pub next_cursor: Option<JsonStr<'i>>,
}

impl<'i> Page<'i> {
    /// The items.
    pub fn items(&self) -> Elements<'i> {
        self.items.elements().unwrap_or(Elements { rest: "" })
    }
    /// The request for the next page, `None` on the last page (or when a cursor with
    /// escapes does not fit `buf` decoded). Send it while the frame is alive, or copy the
    /// cursor ([`next_cursor`](Self::next_cursor)) to continue later.
    pub fn next_request<'b>(&self, buf: &'b mut [u8]) -> Option<Request<'b>>
    where
        'i: 'b,
    {
        let cursor = Some(self.next_cursor?.text_in(buf)?);
        Some(match self.kind {
            ListKind::Tools => Request::ListTools { cursor },
            ListKind::Prompts => Request::ListPrompts { cursor },
            ListKind::Resources => Request::ListResources { cursor },
            _ => Request::ListResourceTemplates { cursor },
        })
    }
    /// The `name` of every item that has one.
    pub fn names(&self) -> impl Iterator<Item = JsonStr<'i>> {
        self.items()
            .filter_map(|item| item.get("name").and_then(|n| n.as_string()))
    }
}

/// A `tools/call` result.
#[derive(Clone, Copy, Debug)]
pub struct CallResult<'i> {
    /// The content blocks (a JSON array).
    pub content: RawJson<'i>,
    /// `structuredContent`, if any.
    pub structured: Option<RawJson<'i>>,
    /// `isError` (the tool failed; not a protocol error).
    pub is_error: bool,
}

impl<'i> CallResult<'i> {
    /// The text of the first text block, if any.
    pub fn text(&self) -> Option<JsonStr<'i>> {
        self.content
            .elements()?
            .filter(|b| {
                b.get("type")
                    .and_then(|t| t.as_string())
                    .is_some_and(|t| t.eq_str("text"))
            })
            .find_map(|b| b.get("text").and_then(|t| t.as_string()))
    }
}

impl<'i> Response<'i> {
    /// A list page (any of the four lists).
    pub fn page(&self) -> Result<Page<'i>, ResultError> {
        let (kind, key) = match self.method {
            Method::ToolsList => (ListKind::Tools, "tools"),
            Method::PromptsList => (ListKind::Prompts, "prompts"),
            Method::ResourcesList => (ListKind::Resources, "resources"),
            Method::TemplatesList => (ListKind::ResourceTemplates, "resourceTemplates"),
            _ => return Err(ResultError::WrongMethod),
        };
        Ok(Page {
            kind,
            items: member(self.result, key, Kind::Array)?,
            next_cursor: optional(self.result, "nextCursor", Kind::String)?
                .and_then(|c| c.as_string()),
        })
    }

    /// A `tools/call` result.
    pub fn tool_call(&self) -> Result<CallResult<'i>, ResultError> {
        if self.method != Method::ToolsCall {
            return Err(ResultError::WrongMethod);
        }
        Ok(CallResult {
            content: member(self.result, "content", Kind::Array)?,
            structured: self.result.get("structuredContent"),
            is_error: optional(self.result, "isError", Kind::Bool)?
                .and_then(|b| b.as_bool())
                .unwrap_or(false),
        })
    }

    /// The `messages` of a `prompts/get` result (a JSON array).
    pub fn prompt_messages(&self) -> Result<RawJson<'i>, ResultError> {
        if self.method != Method::PromptsGet {
            return Err(ResultError::WrongMethod);
        }
        member(self.result, "messages", Kind::Array)
    }

    /// The `contents` of a `resources/read` result (a JSON array).
    pub fn contents(&self) -> Result<RawJson<'i>, ResultError> {
        if self.method != Method::ResourcesRead {
            return Err(ResultError::WrongMethod);
        }
        member(self.result, "contents", Kind::Array)
    }

    /// The `completion.values` of a `completion/complete` result (a JSON array).
    pub fn completion_values(&self) -> Result<RawJson<'i>, ResultError> {
        if self.method != Method::Complete {
            return Err(ResultError::WrongMethod);
        }
        member(
            member(self.result, "completion", Kind::Object)?,
            "values",
            Kind::Array,
        )
    }
}

/// `notifications/progress` for one of the client's requests.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'i> {
    /// The request.
    pub handle: RequestHandle,
    /// Progress so far.
    pub progress: f64,
    /// The total, if known.
    pub total: Option<f64>,
    /// A message, if any.
    pub message: Option<JsonStr<'i>>,
}

/// `notifications/message`.
#[derive(Clone, Copy, Debug)]
pub struct LogMessage<'i> {
    /// Severity.
    pub level: LogLevel,
    /// The logger's name, if any.
    pub logger: Option<JsonStr<'i>>,
    /// The payload (any JSON value).
    pub data: RawJson<'i>,
}

/// A request from the server that the application answers (legacy era).
#[derive(Clone, Copy, Debug)]
pub struct InboundRequest<'i> {
    /// Its id, to pass to [`Client::respond`](super::Client::respond) (a copy: the
    /// answer may come after the frame is gone).
    pub id: StoredId,
    /// Its method.
    pub method: ServerMethod,
    /// Its raw `params` object, if any.
    pub params: Option<RawJson<'i>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{parse, Limits};

    fn response(method: Method, result: &str) -> Response<'_> {
        Response {
            handle: RequestHandle {
                slot: 0,
                generation: 0,
            },
            method,
            result: parse(result.as_bytes(), Limits::default()).unwrap(),
        }
    }

    #[test]
    fn next_request_continues_the_same_list_with_the_decoded_cursor() {
        let r = response(
            Method::PromptsList,
            r#"{"prompts":[{"name":"a"}],"nextCursor":"c\u0031"}"#,
        );
        let page = r.page().unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(
            page.next_request(&mut buf),
            Some(Request::ListPrompts { cursor: Some("c1") })
        );
        assert_eq!(page.next_request(&mut [0u8; 1]), None, "does not fit");
        let plain = response(
            Method::TemplatesList,
            r#"{"resourceTemplates":[],"nextCursor":"x"}"#,
        );
        assert_eq!(
            plain.page().unwrap().next_request(&mut []),
            Some(Request::ListResourceTemplates { cursor: Some("x") })
        );
        let last = response(Method::ToolsList, r#"{"tools":[]}"#);
        assert_eq!(last.page().unwrap().next_request(&mut buf), None);
    }

    #[test]
    fn the_first_text_block_is_the_text() {
        let r = response(
            Method::ToolsCall,
            r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"t\u0065xt","text":"hi"},{"type":"text","text":"second"}]}"#,
        );
        let call = r.tool_call().unwrap();
        assert_eq!(call.text().unwrap(), "hi");
        assert!(!call.is_error);
        assert!(call.structured.is_none());
    }
}
