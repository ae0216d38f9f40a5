//! Streamable HTTP for the client: a bridge task that carries the driver's frames (bytes,
//! as the core wrote them) in POSTs and hands the server's messages (JSON bodies, SSE
//! events) back as frames. Headers are read from each frame with the core's
//! [`peek`]: the transport and the core never disagree about a message.
//!
//! | what | how |
//! |---|---|
//! | every message | one POST; `Accept: application/json, text/event-stream` |
//! | `Mcp-Method`, `Mcp-Name` | every request and notification: its method and its target (tool or prompt name, resource URI) |
//! | `MCP-Protocol-Version` | 2026-07-28: the one in the frame's `_meta`; legacy: the negotiated revision once `initialize` is answered |
//! | `Mcp-Param-*` | `tools/call` of a tool whose `inputSchema` marks properties with `x-mcp-header` (learned from `tools/list`, or known up front): each marked argument that is a string, number or boolean; values that are not plain visible ASCII, or have surrounding spaces, as `=?base64?…?=` |
//! | custom headers | [`ClientOptions::headers`](super::ClientOptions::headers), on every request |
//! | `Mcp-Session-Id` | taken from the `initialize` response, sent on every later request, ended with DELETE on close |
//! | `Authorization` | from the [`Authorizer`], which also answers 401/403 challenges (at most [`MAX_CHALLENGES`] per request) |
//! | SSE responses | every event's data is a frame; a stream that ends before its request's response is resumed with GET and `Last-Event-ID` after the server's `retry` delay (at most [`RESUME_ATTEMPTS`] times) |
//! | session stream | a GET once a legacy session is initialized, for server-initiated messages |
//! | HTTP errors | a JSON-RPC response to the request is passed on; otherwise the request fails with -32603 naming the status |
//! | large responses | a JSON body or one SSE event (or line of the stream) longer than [`ClientOptions::max_line`](super::ClientOptions::max_line) is not read further: the request gets a -32603 error naming the limit |

mod sse;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode, Uri};
use mcp_rs_core::client::headers::PREFIX;
use mcp_rs_core::wire::json::{parse, Kind, Limits, RawJson};
use mcp_rs_core::wire::jsonrpc::{classify, Message};
use mcp_rs_core::wire::method::Method as CoreMethod;
use mcp_rs_core::wire::peek::{peek, Peek};
use mcp_rs_core::wire::version::ProtocolVersion;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::auth::{Authorizer, Challenge};
use super::error::ClientError;
use super::link::{Inbound, Link, Outgoing, INBOUND_CAPACITY};
use super::shared::{lock, ToolHeaders};
use super::MAX_QUEUED_LINES;
use sse::SseParser;

type Http = super::net::HttpClient;

/// Challenges (401, 403) one request may answer by asking the authorizer again.
const MAX_CHALLENGES: usize = 3;

/// Resumption attempts for one broken response stream.
const RESUME_ATTEMPTS: usize = 3;

/// Longest wait between resumption attempts a server's `retry` may ask for.
const MAX_RETRY: Duration = Duration::from_secs(10);

/// Longest wait for the server's answer to the session's GET stream before the
/// `initialize` call returns anyway (the stream keeps opening in the background).
const STREAM_OPENING: Duration = Duration::from_secs(2);

/// What the bridge is started with.
pub(crate) struct Setup {
    pub(crate) http: Http,
    pub(crate) url: Uri,
    /// Longest JSON body or SSE event read (the client's `max_line`).
    pub(crate) max_message: usize,
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    /// Headers sent on every request.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) tool_headers: ToolHeaders,
    /// Bytes of queued answers to server requests (taken off as they are posted).
    pub(crate) reply_bytes: Arc<AtomicUsize>,
}

#[derive(Default)]
struct Session {
    id: Option<String>,
    version: Option<ProtocolVersion>,
    stream_open: bool,
}

struct Bridge {
    http: Http,
    url: Uri,
    session: Mutex<Session>,
    tx: mpsc::Sender<Inbound>,
    max_message: usize,
    /// Supplies `Authorization` and answers challenges.
    authorizer: Option<Arc<dyn Authorizer>>,
    headers: Vec<(HeaderName, HeaderValue)>,
    tool_headers: ToolHeaders,
}

/// Starts the bridge task.
pub(crate) fn start(setup: Setup) -> (Link, JoinHandle<()>) {
    let (out, rx) = mpsc::channel(MAX_QUEUED_LINES);
    let (tx, inbound) = mpsc::channel(INBOUND_CAPACITY);
    let task = tokio::spawn(run(setup, rx, tx));
    (Link { out, inbound }, task)
}

/// What the bridge needs to know of a frame it posts, read with one [`peek`].
#[derive(Default)]
struct View {
    /// The id of a request (its JSON text), to recognise its response.
    id: Option<String>,
    /// `initialize` or `server/discover`: posted before anything else goes out.
    handshake: bool,
    initialize: bool,
    /// The frame carries its revision (2026-07-28): no session headers.
    modern: bool,
    /// `MCP-Protocol-Version` (2026-07-28), `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`.
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl View {
    /// Reads `frame`; `marks` are the `x-mcp-header` marks of known tools.
    fn of(frame: &[u8], marks: &ToolHeaders) -> View {
        let (Peek::Request(r) | Peek::Notification(r)) = peek(frame, Limits::default()) else {
            return View::default();
        };
        let mut headers = Vec::new();
        let version = r.version.map(|v| v.to_string());
        let version = version.and_then(|v| HeaderValue::from_str(&v).ok());
        let modern = version.is_some();
        if let Some(v) = version {
            headers.push((HeaderName::from_static("mcp-protocol-version"), v));
        }
        if let Some(m) = header_text(&r.method.to_string()) {
            headers.push((HeaderName::from_static("mcp-method"), m));
        }
        let target = r.target.map(|t| t.to_string());
        if let Some(name) = target.as_deref().and_then(header_text) {
            headers.push((HeaderName::from_static("mcp-name"), name));
        }
        if let (true, Some(tool), Some(arguments)) = (
            r.method() == Some(CoreMethod::ToolsCall),
            target.as_deref(),
            r.arguments,
        ) {
            for (property, header) in lock(marks).get(tool).into_iter().flatten() {
                let value = arguments.get(property).and_then(param_value);
                let name = HeaderName::from_bytes(format!("{PREFIX}{header}").as_bytes());
                if let (Some(value), Ok(name)) = (value, name) {
                    headers.push((name, value));
                }
            }
        }
        View {
            id: r.id.map(|id| id.as_raw().to_owned()),
            handshake: matches!(
                r.method(),
                Some(CoreMethod::Initialize | CoreMethod::Discover)
            ),
            initialize: r.method() == Some(CoreMethod::Initialize),
            modern,
            headers,
        }
    }
}

/// Whether `frame` is the response to the request with id `id`.
fn answers(frame: &[u8], id: &str) -> bool {
    let Ok(v) = parse(frame, Limits::default()) else {
        return false;
    };
    matches!(classify(v), Ok(Message::Response { id: rid, .. }) if rid.as_raw() == id)
}

/// A header value for `text`: as is when it is visible ASCII without surrounding spaces,
/// otherwise `=?base64?…?=` (SEP-2243).
fn header_text(text: &str) -> Option<HeaderValue> {
    let plain = text.bytes().all(|b| (0x20..=0x7e).contains(&b)) && text.trim() == text;
    let encoded;
    let value = if plain {
        text
    } else {
        let b64 = base64::engine::general_purpose::STANDARD.encode(text);
        encoded = format!("=?base64?{b64}?=");
        &encoded
    };
    HeaderValue::from_str(value).ok()
}

/// The header value of one argument: strings (encoded), numbers and booleans as written;
/// anything else (null, objects, arrays) is not mirrored.
fn param_value(v: RawJson<'_>) -> Option<HeaderValue> {
    match v.kind() {
        Kind::String => header_text(&v.as_string()?.to_string()),
        Kind::Number | Kind::Bool => HeaderValue::from_str(v.as_str()).ok(),
        _ => None,
    }
}

async fn run(setup: Setup, mut rx: mpsc::Receiver<Outgoing>, tx: mpsc::Sender<Inbound>) {
    let headers = setup
        .headers
        .iter()
        .filter_map(|(name, value)| {
            let pair = HeaderName::from_bytes(name.as_bytes())
                .ok()
                .zip(HeaderValue::from_str(value).ok());
            if pair.is_none() {
                tracing::warn!("the custom header {name:?} is not a valid header: not sent");
            }
            pair
        })
        .collect();
    let bridge = Arc::new(Bridge {
        http: setup.http,
        url: setup.url,
        session: Mutex::new(Session::default()),
        tx,
        max_message: setup.max_message,
        authorizer: setup.authorizer,
        headers,
        tool_headers: setup.tool_headers,
    });
    let mut posts = tokio::task::JoinSet::new();
    while let Some(msg) = rx.recv().await {
        match msg {
            Outgoing::Frame { bytes, call, reply } => {
                setup.reply_bytes.fetch_sub(reply, Ordering::Relaxed);
                let view = View::of(&bytes, &bridge.tool_headers);
                // The handshake must complete (session id, version) before anything else.
                if view.handshake {
                    bridge.post(bytes, view, call).await;
                    continue;
                }
                let b = Arc::clone(&bridge);
                posts.spawn(async move { b.post(bytes, view, call).await });
                while posts.try_join_next().is_some() {}
            }
            Outgoing::Negotiated(v) => {
                lock(&bridge.session).version = Some(v);
                // Before any later frame is sent: the stream is open (and carries the
                // version) before the session's first request after the handshake.
                bridge.open_session_stream().await;
            }
            Outgoing::Shutdown(ack) => {
                bridge.end_session().await;
                let _ = ack.send(Ok(()));
                break;
            }
        }
    }
    posts.abort_all();
    if rx.is_closed() {
        bridge.end_session().await;
    }
    let _ = bridge.tx.send(Inbound::Closed(ClientError::Closed)).await;
}

impl Bridge {
    /// A request with the headers of a frame's `view` (none for GET and DELETE).
    fn request(&self, method: Method, view: Option<&View>) -> hyper::http::request::Builder {
        let mut req = Request::builder()
            .method(method)
            .uri(self.url.clone())
            .header(ACCEPT, "application/json, text/event-stream");
        for (name, value) in self
            .headers
            .iter()
            .chain(view.into_iter().flat_map(|v| &v.headers))
        {
            req = req.header(name, value);
        }
        if !view.is_some_and(|v| v.modern) {
            let s = lock(&self.session);
            if let Some(id) = &s.id {
                req = req.header("mcp-session-id", id.as_str());
            }
            if let Some(v) = s.version {
                req = req.header("mcp-protocol-version", v.as_str());
            }
        }
        req
    }

    /// Sends `req` with the authorizer's `Authorization` header; a 401 (or a 403 with a
    /// challenge) goes to the authorizer, and the request is sent again while it obtains new
    /// credentials, at most [`MAX_CHALLENGES`] times.
    async fn send(&self, req: Request<Full<Bytes>>) -> Result<Response<Incoming>, String> {
        let Some(auth) = &self.authorizer else {
            return self.http.request(req).await.map_err(|e| with_causes(&e));
        };
        let (parts, body) = req.into_parts();
        let mut challenges = 0;
        loop {
            let mut req = Request::new(body.clone());
            *req.method_mut() = parts.method.clone();
            *req.uri_mut() = parts.uri.clone();
            *req.headers_mut() = parts.headers.clone();
            let url = parts.uri.to_string();
            let headers = auth
                .request_headers(parts.method.as_str(), &url)
                .await
                .map_err(|e| e.to_string())?;
            for (name, value) in headers {
                let name = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| "the authorizer's header name is not valid".to_string())?;
                let value = HeaderValue::from_str(&value)
                    .map_err(|_| "the authorizer's header value is not valid".to_string())?;
                req.headers_mut().insert(name, value);
            }
            let resp = self.http.request(req).await.map_err(|e| with_causes(&e))?;
            let www = resp
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok());
            let refused = resp.status() == StatusCode::UNAUTHORIZED
                || (resp.status() == StatusCode::FORBIDDEN && www.is_some());
            if !refused || challenges == MAX_CHALLENGES {
                return Ok(resp);
            }
            challenges += 1;
            let resource = self.url.to_string();
            let challenge = Challenge {
                status: resp.status().as_u16(),
                www_authenticate: www,
                resource: &resource,
                dpop_nonce: resp
                    .headers()
                    .get("dpop-nonce")
                    .and_then(|v| v.to_str().ok()),
            };
            if !auth.challenge(challenge).await.map_err(|e| e.to_string())? {
                return Ok(resp);
            }
        }
    }

    async fn deliver(&self, frame: Vec<u8>) {
        let _ = self.tx.send(Inbound::Frame(frame)).await;
    }

    /// Tells the driver that call `call` failed at the HTTP level (-32603).
    async fn fail(&self, call: u64, why: String) {
        if call != 0 {
            let error = ClientError::Protocol {
                code: -32603,
                message: why,
                data: None,
            };
            let _ = self.tx.send(Inbound::Failed { call, error }).await;
        }
    }

    /// POSTs one frame (sent as the core wrote it).
    async fn post(self: &Arc<Self>, frame: Vec<u8>, view: View, call: u64) {
        let req = self
            .request(Method::POST, Some(&view))
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(frame)));
        let Ok(req) = req else {
            return self.fail(call, "unsendable request".into()).await;
        };
        let resp = match self.send(req).await {
            Ok(r) => r,
            Err(e) => return self.fail(call, format!("HTTP request failed: {e}")).await,
        };
        if view.initialize {
            if let Some(sid) = resp
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
            {
                lock(&self.session).id = Some(sid.to_owned());
            }
        }
        let status = resp.status();
        let id = view.id.as_deref();
        let answered = if is_sse(&resp) {
            self.read_sse(resp.into_body(), id, call).await
        } else {
            let limited = Limited::new(resp.into_body(), self.max_message);
            match limited.collect().await.map(|b| b.to_bytes()) {
                Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                    self.too_long(call, "response body").await;
                    true
                }
                Ok(body)
                    if !body.is_empty()
                        && (status.is_success() || id.is_some_and(|id| answers(&body, id))) =>
                {
                    let ours = id.is_none_or(|id| answers(&body, id));
                    self.deliver(body.to_vec()).await;
                    ours || id.is_none()
                }
                _ => id.is_none() && status.is_success(),
            }
        };
        if !answered {
            self.fail(call, format!("HTTP {status} without a response"))
                .await;
        }
    }

    /// Fails call `call` (or logs, for the session stream): the server sent a `what`
    /// longer than the client's `max_line`, which was not read further.
    async fn too_long(&self, call: u64, what: &str) {
        let why = format!(
            "the server's {what} exceeds the client's {}-byte limit (ClientOptions::max_line)",
            self.max_message
        );
        tracing::warn!("{why}: dropped");
        self.fail(call, why).await;
    }

    /// Delivers every event of an SSE body; resumes it if it ends before the response to
    /// `id`. Returns whether that response arrived (always true without an id).
    async fn read_sse(self: &Arc<Self>, body: Incoming, id: Option<&str>, call: u64) -> bool {
        let mut body = body;
        let mut last_id: Option<String> = None;
        let mut retry = Duration::from_millis(500);
        for attempt in 0..=RESUME_ATTEMPTS {
            let mut parser = SseParser::new(self.max_message);
            let mut stream = body;
            while let Some(Ok(frame)) = stream.frame().await {
                if self.tx.is_closed() {
                    return true; // The client is gone.
                }
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let Some(events) = parser.push(&data) else {
                    self.too_long(call, "SSE event").await;
                    return true;
                };
                for event in events {
                    if let Some(e) = event.id {
                        last_id = Some(e);
                    }
                    if let Some(r) = event.retry {
                        retry = Duration::from_millis(r).min(MAX_RETRY);
                    }
                    if event.data.trim().is_empty() {
                        continue; // the priming event
                    }
                    let frame = event.data.into_bytes();
                    let done = id.is_some_and(|id| answers(&frame, id));
                    self.deliver(frame).await;
                    if done {
                        return true;
                    }
                }
            }
            let Some(last) = last_id
                .clone()
                .filter(|_| id.is_some() && attempt < RESUME_ATTEMPTS)
            else {
                break;
            };
            tokio::time::sleep(retry).await;
            let req = self
                .request(Method::GET, None)
                .header("last-event-id", last)
                .body(Full::new(Bytes::new()));
            match req.ok().map(|r| self.send(r)) {
                Some(f) => match f.await {
                    Ok(r) if r.status().is_success() && is_sse(&r) => body = r.into_body(),
                    _ => break,
                },
                None => break,
            }
        }
        id.is_none()
    }

    /// The session's GET stream (server-initiated messages), once per session, opened when
    /// the version is negotiated. Returns once the server has answered the GET (or
    /// [`STREAM_OPENING`] passed), so the stream is open before the client's next request:
    /// a server that answers that request on the GET stream (as it may) finds it there, and
    /// a later GET of the session is only ever a resumption.
    async fn open_session_stream(self: &Arc<Self>) {
        {
            let mut s = lock(&self.session);
            if s.id.is_none() || s.stream_open {
                return;
            }
            s.stream_open = true;
        }
        let (opened, answered) = tokio::sync::oneshot::channel::<()>();
        let b = Arc::clone(self);
        tokio::spawn(async move {
            let Ok(req) = b.request(Method::GET, None).body(Full::new(Bytes::new())) else {
                return;
            };
            let resp = b.send(req).await;
            let _ = opened.send(());
            if let Ok(resp) = resp {
                if resp.status().is_success() && is_sse(&resp) {
                    b.read_sse(resp.into_body(), None, 0).await;
                }
            }
        });
        // A server that holds back the GET's headers until it has something to send does
        // not hold up the session longer than this.
        let _ = tokio::time::timeout(STREAM_OPENING, answered).await;
    }

    /// DELETE of the session, if there is one (once).
    async fn end_session(&self) {
        let Some(_) = lock(&self.session).id.clone() else {
            return;
        };
        let req = self
            .request(Method::DELETE, None)
            .body(Full::new(Bytes::new()));
        lock(&self.session).id = None;
        if let Ok(req) = req {
            let _ = tokio::time::timeout(Duration::from_secs(2), self.send(req)).await;
        }
    }
}

fn is_sse(resp: &Response<Incoming>) -> bool {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// An error and its causes, `: `-separated (hyper's own text is only "client error
/// (Connect)"; the cause says which: refused, a certificate not trusted, ...).
fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_values_are_encoded_as_sep_2243_says() {
        let value = |json: &str| {
            let v = parse(json.as_bytes(), Limits::default()).unwrap();
            param_value(v).map(|h| h.to_str().unwrap().to_owned())
        };
        assert_eq!(value(r#""us-west1""#).as_deref(), Some("us-west1"));
        assert_eq!(value("42").as_deref(), Some("42"));
        assert_eq!(value("3.14159").as_deref(), Some("3.14159"));
        assert_eq!(value("false").as_deref(), Some("false"));
        assert_eq!(value(r#""""#).as_deref(), Some(""));
        assert_eq!(value("null"), None);
        assert_eq!(value("{}"), None);
        // Not plain visible ASCII, or surrounding spaces: Base64.
        assert_eq!(
            value(r#"" padded ""#).as_deref(),
            Some("=?base64?IHBhZGRlZCA=?=")
        );
        assert_eq!(
            value(r#""line1\nline2""#).as_deref(),
            Some("=?base64?bGluZTEKbGluZTI=?=")
        );
        assert_eq!(
            value(r#""Hello, \u4e16\u754c""#).as_deref(),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
        );
        assert_eq!(value(r#""us west 1""#).as_deref(), Some("us west 1"));
    }

    #[test]
    fn a_response_is_recognised_by_its_id() {
        assert!(answers(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#, "7"));
        assert!(!answers(br#"{"jsonrpc":"2.0","id":8,"result":{}}"#, "7"));
        assert!(!answers(br#"{"jsonrpc":"2.0","method":"x","id":7}"#, "7"));
        assert!(!answers(b"garbage", "7"));
    }
}
