//! JSON-RPC 2.0 wire layer: request ids, message classification, error codes and response
//! envelopes. No MCP semantics live here.

use core::fmt;

use crate::wire::json::{JsonStr, JsonWriter, Kind, RawJson, StrPart};

/// Error codes used in replies.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// Resource not found (2024-11-05 .. 2025-11-25; 2026-07-28 uses -32602).
    pub const RESOURCE_NOT_FOUND: i32 = -32002;
    /// 2026-07-28: HTTP headers disagree with the body.
    pub const HEADER_MISMATCH: i32 = -32020;
    /// 2026-07-28: the request needs a client capability that was not declared.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
    /// 2026-07-28: the per-request protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
}

/// Longest request id (in raw JSON bytes, quotes and escapes included) that can be held for
/// a deferred call. Immediate replies echo ids of any length.
pub const MAX_ID_LEN: usize = 64;

/// A request id exactly as it appeared on the wire (a JSON string or integer), echoed
/// byte-for-byte in the response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestId<'a> {
    raw: &'a str,
}

impl<'a> RequestId<'a> {
    /// Accepts a string or an integer (no fraction, no exponent); anything else is not an id.
    pub fn from_json(v: RawJson<'a>) -> Option<Self> {
        match v.kind() {
            Kind::String => Some(RequestId { raw: v.as_str() }),
            Kind::Number if is_integer_text(v.as_str()) => Some(RequestId { raw: v.as_str() }),
            _ => None,
        }
    }
    /// The raw JSON text of the id.
    pub fn as_raw(&self) -> &'a str {
        self.raw
    }
}

fn is_integer_text(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// An id copied into fixed storage (for deferred calls and progress tokens).
#[derive(Clone, Copy)]
pub struct StoredId {
    buf: [u8; MAX_ID_LEN],
    len: u8,
}

impl StoredId {
    /// An empty id.
    pub const EMPTY: StoredId = StoredId {
        buf: [0; MAX_ID_LEN],
        len: 0,
    };

    /// Copies raw JSON id text; `None` if longer than [`MAX_ID_LEN`].
    pub fn new(raw: &str) -> Option<StoredId> {
        let bytes = raw.as_bytes();
        let mut id = StoredId::EMPTY;
        id.buf.get_mut(..bytes.len())?.copy_from_slice(bytes);
        id.len = u8::try_from(bytes.len()).ok()?;
        Some(id)
    }
    /// The stored raw JSON text.
    pub fn as_raw(&self) -> &str {
        let bytes = self.buf.get(..usize::from(self.len)).unwrap_or(&[]);
        // Only whole `&str`s are stored, so this always succeeds.
        core::str::from_utf8(bytes).unwrap_or("null")
    }
    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Forgets the stored text (as [`StoredId::EMPTY`]: the bytes past the length are
    /// never read).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }
}

impl fmt::Debug for StoredId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_raw())
    }
}

/// One JSON-RPC message, classified.
#[derive(Clone, Copy, Debug)]
pub enum Message<'a> {
    /// Has `method` and `id`: must be answered.
    Request {
        /// The id to echo.
        id: RequestId<'a>,
        /// The method name (still escaped).
        method: JsonStr<'a>,
        /// `params`, if present (an object or array).
        params: Option<RawJson<'a>>,
    },
    /// Has `method` and no `id`: never answered.
    Notification {
        /// The method name.
        method: JsonStr<'a>,
        /// `params`, if present.
        params: Option<RawJson<'a>>,
    },
    /// Has `result` or `error` and an `id`: a response to a request we sent.
    Response {
        /// The id of the request it answers.
        id: RequestId<'a>,
        /// `result` (a success) or `error` (a failure): exactly one is present.
        outcome: Result<RawJson<'a>, RawJson<'a>>,
    },
}

/// Why an object is not a valid JSON-RPC 2.0 message. Answered with -32600 when the message
/// looked like a request (the id is echoed when it could be read), ignored otherwise.
#[derive(Clone, Copy, Debug)]
pub struct Invalid<'a> {
    /// The id, if one could be read.
    pub id: Option<RequestId<'a>>,
    /// Whether a reply is due (false for things that were clearly notifications/responses).
    pub reply: bool,
    /// What is wrong, for the error message.
    pub reason: &'static str,
}

/// Classifies one JSON value (not an array) as a JSON-RPC message.
pub fn classify(v: RawJson<'_>) -> Result<Message<'_>, Invalid<'_>> {
    let members = v.members().ok_or(Invalid {
        id: None,
        reply: true,
        reason: "message must be a JSON object",
    })?;
    // In this order in `slots`.
    const KEYS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];
    let mut slots = [None; KEYS.len()];
    let mut duplicate = false;
    for (k, val) in members {
        // Member names compare after unescaping (`"\u0069d"` is `id`); byte by byte, as
        // `bytes_eq` does (a `match` on strings would link `memcmp`: code size).
        let mut buf = [0u8; 8];
        let text = k.text_in(&mut buf).unwrap_or("");
        let Some(slot) = KEYS
            .iter()
            .position(|key| super::bytes_eq(key.as_bytes(), text.as_bytes()))
            .and_then(|i| slots.get_mut(i))
        else {
            continue;
        };
        duplicate |= slot.is_some();
        *slot = Some(val);
    }
    let [jsonrpc, id, method, params, result, error] = slots;
    let parsed_id = id.and_then(RequestId::from_json);
    let fail = |reason| Invalid {
        id: parsed_id,
        reply: id.is_some() || method.is_none(),
        reason,
    };
    if duplicate {
        return Err(fail("duplicate member in message"));
    }
    if jsonrpc
        .and_then(|j| j.as_string())
        .is_none_or(|j| !j.eq_str("2.0"))
    {
        return Err(fail("\"jsonrpc\" must be exactly \"2.0\""));
    }
    if id.is_some() && parsed_id.is_none() {
        return Err(Invalid {
            id: None,
            reply: true,
            reason: "\"id\" must be a string or an integer",
        });
    }
    match (method, parsed_id) {
        (Some(m), _) => {
            let method = m.as_string().ok_or(fail("\"method\" must be a string"))?;
            if result.is_some() || error.is_some() {
                return Err(fail("a request cannot carry \"result\" or \"error\""));
            }
            if let Some(p) = params {
                if !matches!(p.kind(), Kind::Object | Kind::Array) {
                    return Err(fail("\"params\" must be an object or an array"));
                }
            }
            Ok(match parsed_id {
                Some(id) => Message::Request { id, method, params },
                None => Message::Notification { method, params },
            })
        }
        (None, Some(id)) => match (result, error) {
            (Some(r), None) => Ok(Message::Response { id, outcome: Ok(r) }),
            (None, Some(e)) => Ok(Message::Response {
                id,
                outcome: Err(e),
            }),
            _ => Err(fail("message has no \"method\" and is not a response")),
        },
        (None, _) => Err(fail("message has no \"method\" and is not a response")),
    }
}

/// Writes `{"jsonrpc":"2.0","id":<id>,"result":` ; the caller writes the result value and
/// then calls [`end_response`].
#[doc(hidden)]
pub fn begin_result(w: &mut JsonWriter<'_>, id: &str) {
    w.begin_object();
    w.key("jsonrpc");
    w.string("2.0");
    w.key("id");
    w.raw_value(id);
    w.key("result");
}

/// Closes a response envelope opened by [`begin_result`].
#[doc(hidden)]
pub fn end_response(w: &mut JsonWriter<'_>) {
    w.end_object();
}

/// Writes a complete error response. `id: None` omits the id (it could not be read).
/// The message is assembled from parts (no `core::fmt`); `data`, if given, writes one JSON
/// value.
#[doc(hidden)]
pub fn write_error(
    w: &mut JsonWriter<'_>,
    id: Option<&str>,
    code: i32,
    message: &[StrPart<'_>],
    data: Option<&dyn Fn(&mut JsonWriter<'_>)>,
) {
    w.begin_object();
    w.key("jsonrpc");
    w.string("2.0");
    if let Some(id) = id {
        w.key("id");
        w.raw_value(id);
    }
    w.key("error");
    w.begin_object();
    w.key("code");
    w.i64(i64::from(code));
    w.key("message");
    w.string_parts(message);
    if let Some(data) = data {
        w.key("data");
        data(w);
    }
    w.end_object();
    w.end_object();
}

/// Writes `{"jsonrpc":"2.0","method":"<method>","params":` ; the caller writes the params
/// object and then calls [`end_response`] (the same closing brace).
#[doc(hidden)]
pub fn begin_notification(w: &mut JsonWriter<'_>, method: &str) {
    w.begin_object();
    w.key("jsonrpc");
    w.string("2.0");
    w.key("method");
    w.string(method);
    w.key("params");
}

/// Writes `{"jsonrpc":"2.0","id":<id>,"method":"<method>"` ; the caller writes
/// `w.key("params")` and the params object if any, then calls [`end_response`]. Requests the
/// core sends (the server's to a legacy client, the client's to a server) carry the integer
/// ids it numbers them with.
#[doc(hidden)]
pub fn begin_request(w: &mut JsonWriter<'_>, id: u64, method: &str) {
    w.begin_object();
    w.key("jsonrpc");
    w.string("2.0");
    w.key("id");
    w.u64(id);
    w.key("method");
    w.string(method);
}

/// Writes a complete `notifications/cancelled` for the request numbered `request_id`, with
/// an optional reason (either side sends it only for requests it numbered itself).
#[doc(hidden)]
pub fn write_cancelled(w: &mut JsonWriter<'_>, request_id: u64, reason: Option<&str>) {
    begin_notification(w, crate::wire::method::Notification::Cancelled.as_str());
    w.begin_object();
    w.key("requestId");
    w.u64(request_id);
    if let Some(r) = reason {
        w.key("reason");
        w.string(r);
    }
    w.end_object();
    end_response(w);
}

/// What a frame the core wrote is (see [`frame_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameKind {
    /// A response carrying `result`.
    Result,
    /// A response carrying `error`, with its code.
    Error(i32),
    /// A notification (`method`, no `id`).
    Notification,
    /// A request the server sends (`id` and `method`).
    Request,
    /// A batch of responses (a JSON array).
    Batch,
    /// Anything else (not a frame the core's writers produce).
    Other,
}

/// What a frame is, read from its first bytes. The core's writers always begin with
/// `{"jsonrpc":"2.0",`, then `"id":<id>,` when there is an id, then `"result":`,
/// `"error":{"code":<n>,` or `"method":`; so the kind is known without walking a result of
/// any size. Adapters use it to map replies to transport statuses.
pub fn frame_kind(frame: &[u8]) -> FrameKind {
    if frame.first() == Some(&b'[') {
        return FrameKind::Batch;
    }
    let Some(rest) = frame.strip_prefix(br#"{"jsonrpc":"2.0","#) else {
        return FrameKind::Other;
    };
    let (rest, has_id) = match rest.strip_prefix(br#""id":"#) {
        Some(id) => {
            // The id as the request had it: a number or a string.
            let end = if id.first() == Some(&b'"') {
                let mut i = 1;
                loop {
                    match id.get(i) {
                        Some(b'\\') => i += 2,
                        Some(b'"') => break Some(i + 1),
                        Some(_) => i += 1,
                        None => break None,
                    }
                }
            } else {
                id.iter().position(|&b| b == b',')
            };
            match end
                .and_then(|e| id.get(e..))
                .and_then(|r| r.strip_prefix(b","))
            {
                Some(r) => (r, true),
                None => return FrameKind::Other,
            }
        }
        None => (rest, false),
    };
    if rest.starts_with(br#""result":"#) {
        return FrameKind::Result;
    }
    if rest.starts_with(br#""method":"#) {
        return if has_id {
            FrameKind::Request
        } else {
            FrameKind::Notification
        };
    }
    let Some(code) = rest.strip_prefix(br#""error":{"code":"#) else {
        return FrameKind::Other;
    };
    let (neg, digits) = match code.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, code),
    };
    let mut n: i32 = 0;
    let mut any = false;
    for &b in digits.iter().take_while(|b| b.is_ascii_digit()) {
        any = true;
        let Some(m) = n
            .checked_mul(10)
            .and_then(|m| m.checked_add(i32::from(b - b'0')))
        else {
            return FrameKind::Other;
        };
        n = m;
    }
    if !any {
        return FrameKind::Other;
    }
    FrameKind::Error(if neg { -n } else { n })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::format;

    use super::*;
    use crate::wire::json::{parse, Limits};

    fn cls(s: &str) -> Result<Message<'_>, Invalid<'_>> {
        classify(parse(s.as_bytes(), Limits::default()).unwrap())
    }

    #[test]
    fn member_names_compare_decoded_and_exactly() {
        // Escaped names are the members they spell; near misses are other members.
        assert!(matches!(
            cls(r#"{"\u006asonrpc":"2.0","\u0069d":1,"met\u0068od":"ping"}"#),
            Ok(Message::Request { .. })
        ));
        for other in [
            r#""i""#,
            r#""idd""#,
            r#""ID""#,
            r#""jsonrpc2""#,
            r#""params\u0000""#,
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","method":"ping",{other}:1}}"#);
            assert!(
                matches!(cls(&text), Ok(Message::Notification { .. })),
                "{text}"
            );
        }
        // A name longer than the decode buffer is no member of ours.
        assert!(matches!(
            cls(r#"{"jsonrpc":"2.0","method":"ping","methodmethod":1}"#),
            Ok(Message::Notification { .. })
        ));
        let e = cls(r#"{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"ping"}"#).unwrap_err();
        assert_eq!(e.reason, "duplicate member in message");
    }

    #[test]
    fn classification_table() {
        macro_rules! ok {
            ($s:expr, $pat:pat) => {
                assert!(matches!(cls($s), Ok($pat)), "{}", $s)
            };
        }
        macro_rules! bad {
            ($s:expr, $reply:expr, $has_id:expr) => {{
                let e = cls($s).unwrap_err();
                assert_eq!(e.reply, $reply, "{}", $s);
                assert_eq!(e.id.is_some(), $has_id, "{}", $s);
            }};
        }
        ok!(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            Message::Request { .. }
        );
        ok!(
            r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#,
            Message::Request { .. }
        );
        ok!(
            r#"{"jsonrpc":"2.0","id":-7,"method":"x","params":[]}"#,
            Message::Request { .. }
        );
        ok!(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            Message::Notification { .. }
        );
        ok!(
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            Message::Response { .. }
        );
        ok!(
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}"#,
            Message::Response { .. }
        );
        bad!(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, true, true);
        bad!(r#"{"id":1,"method":"ping"}"#, true, true);
        bad!(
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            true,
            false
        );
        bad!(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, true, false);
        bad!(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, true, false);
        bad!(r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, true, false);
        bad!(r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#, true, false);
        bad!(r#"{"jsonrpc":"2.0","id":1,"method":7}"#, true, true);
        bad!(
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            true,
            true
        );
        bad!(
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
            true,
            true
        );
        bad!(
            r#"{"jsonrpc":"2.0","method":"x","params":"s"}"#,
            false,
            false
        );
        bad!(r#"[1]"#, true, false);
        bad!(r#"{"jsonrpc":"2.0"}"#, true, false);
    }

    #[test]
    fn stored_id_bounds() {
        assert_eq!(StoredId::new("\"abc\"").unwrap().as_raw(), "\"abc\"");
        let long = "9".repeat(MAX_ID_LEN + 1);
        assert!(StoredId::new(&long).is_none());
        assert!(StoredId::new(&long[..MAX_ID_LEN]).is_some());
    }

    #[test]
    fn frame_kinds_of_what_the_core_writes() {
        let kind = |f: &str| frame_kind(f.as_bytes());
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1,"result":{"isError":true,"error":{"code":5}}}"#),
            FrameKind::Result
        );
        assert_eq!(
            kind(
                r#"{"jsonrpc":"2.0","id":"a\",\"result\":","error":{"code":-32602,"message":"x"}}"#
            ),
            FrameKind::Error(-32602)
        );
        assert_eq!(
            kind(
                r#"{"jsonrpc":"2.0","id":-7,"error":{"code":-32601,"message":"Method not found"}}"#
            ),
            FrameKind::Error(-32601)
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#),
            FrameKind::Error(-32700)
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#),
            FrameKind::Notification
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":3,"method":"roots/list"}"#),
            FrameKind::Request
        );
        assert_eq!(
            kind(r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#),
            FrameKind::Batch
        );
        assert_eq!(
            kind(r#"{"id":1,"jsonrpc":"2.0","error":{"code":-32602}}"#),
            FrameKind::Other
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":"unterminated"#),
            FrameKind::Other
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","error":{"code":-99999999999}}"#),
            FrameKind::Other
        );
        // every reply the writers produce reads back as what it is
        let mut buf = [0u8; 128];
        let mut w = JsonWriter::new(&mut buf);
        write_error(
            &mut w,
            Some("\"x\""),
            -32603,
            &[StrPart::Text("boom")],
            None,
        );
        let n = w.len();
        assert_eq!(frame_kind(&buf[..n]), FrameKind::Error(-32603));
        let mut w = JsonWriter::new(&mut buf);
        begin_result(&mut w, "12");
        w.raw_value("{}");
        end_response(&mut w);
        let n = w.len();
        assert_eq!(frame_kind(&buf[..n]), FrameKind::Result);
    }
}
