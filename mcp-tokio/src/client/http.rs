//! Streamable HTTP for the client: a bridge task that turns the client's newline-delimited
//! messages into POSTs and the responses (JSON or SSE) back into lines, so the rest of the
//! client stays transport-agnostic.
//!
//! | what | how |
//! |---|---|
//! | every message | one POST; `Accept: application/json, text/event-stream` |
//! | `Mcp-Session-Id` | taken from the `initialize` response, sent on every later request, ended with DELETE on close |
//! | `MCP-Protocol-Version` | the negotiated revision after `initialize`; for 2026-07-28 messages the one in their `_meta`, with `Mcp-Method` and `Mcp-Name` |
//! | SSE responses | every event's data is a message; a stream that ends before its request's response is resumed with GET and `Last-Event-ID` (a few attempts, honouring `retry`) |
//! | session stream | a GET once the session is initialized, for server-initiated messages |
//! | HTTP errors | a JSON-RPC error body is passed on; otherwise the request gets a -32603 error naming the status |
//! | large responses | a JSON body or one SSE event (or line of the stream) longer than [`ClientOptions::max_line`](super::ClientOptions::max_line) is not read further: the request gets a -32603 error naming the limit |

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode, Uri};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::auth::{Authorizer, Challenge};

type Http = super::net::HttpClient;

/// Challenges (401, 403) one request may answer by asking the authorizer again.
const MAX_CHALLENGES: usize = 3;

/// Resumption attempts for one broken response stream.
const RESUME_ATTEMPTS: usize = 3;

#[derive(Default)]
struct Session {
    id: Option<String>,
    version: Option<String>,
    stream_open: bool,
}

struct Bridge {
    http: Http,
    url: Uri,
    session: Mutex<Session>,
    out: mpsc::Sender<String>,
    /// Longest JSON body or SSE event read (the client's `max_line`).
    max_message: usize,
    /// Supplies `Authorization` and answers challenges.
    authorizer: Option<Arc<dyn Authorizer>>,
}

/// Runs the bridge: reads the client's lines from `from_client`, writes the server's
/// messages to `to_client`, until the client closes its side. Bodies and events longer than
/// `max_message` bytes are not read (their request fails).
pub(crate) async fn run<R, W>(
    http: Http,
    url: Uri,
    from_client: R,
    mut to_client: W,
    max_message: usize,
    authorizer: Option<Arc<dyn Authorizer>>,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, mut lines) = mpsc::channel::<String>(256);
    let writer = tokio::spawn(async move {
        while let Some(line) = lines.recv().await {
            if to_client.write_all(line.as_bytes()).await.is_err()
                || to_client.write_all(b"\n").await.is_err()
            {
                break;
            }
            let _ = to_client.flush().await;
        }
        let _ = to_client.shutdown().await;
    });
    let bridge = Arc::new(Bridge {
        http,
        url,
        session: Mutex::new(Session::default()),
        out,
        max_message,
        authorizer,
    });
    let mut reader = BufReader::new(from_client).lines();
    let mut posts = tokio::task::JoinSet::new();
    while let Ok(Some(line)) = reader.next_line().await {
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        // The handshake must complete (session id, version) before anything else goes out.
        if msg.get("method").and_then(Value::as_str) == Some("initialize") {
            bridge.post(msg, line).await;
            continue;
        }
        let b = bridge.clone();
        posts.spawn(async move { b.post(msg, line).await });
        while posts.try_join_next().is_some() {}
    }
    posts.abort_all();
    bridge.end_session().await;
    drop(bridge);
    let _ = writer.await;
}

fn lock(m: &Mutex<Session>) -> std::sync::MutexGuard<'_, Session> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Bridge {
    fn request(&self, method: Method, msg: Option<&Value>) -> hyper::http::request::Builder {
        let mut req = Request::builder()
            .method(method)
            .uri(self.url.clone())
            .header(ACCEPT, "application/json, text/event-stream");
        let s = lock(&self.session);
        let modern = msg
            .and_then(|m| {
                m.get("params")?
                    .get("_meta")?
                    .get("io.modelcontextprotocol/protocolVersion")
            })
            .and_then(Value::as_str);
        if let Some(v) = modern {
            req = req.header("mcp-protocol-version", v);
            if let Some(m) = msg.and_then(|m| m.get("method")).and_then(Value::as_str) {
                req = req.header("mcp-method", m);
                let target = match m {
                    "tools/call" | "prompts/get" => "name",
                    "resources/read" => "uri",
                    _ => "",
                };
                let name = msg
                    .and_then(|m| m.get("params")?.get(target))
                    .and_then(Value::as_str);
                if let Some(name) = name.filter(|n| HeaderValue::from_str(n).is_ok()) {
                    req = req.header("mcp-name", name);
                }
            }
        } else {
            if let Some(id) = &s.id {
                req = req.header("mcp-session-id", id.as_str());
            }
            if let Some(v) = &s.version {
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
            return self.http.request(req).await.map_err(|e| e.to_string());
        };
        let (parts, body) = req.into_parts();
        let mut challenges = 0;
        loop {
            let mut req = Request::new(body.clone());
            *req.method_mut() = parts.method.clone();
            *req.uri_mut() = parts.uri.clone();
            *req.headers_mut() = parts.headers.clone();
            if let Some(value) = auth.authorization().await.map_err(|e| e.to_string())? {
                let value = HeaderValue::from_str(&value)
                    .map_err(|_| "the authorizer's header value is not valid".to_string())?;
                req.headers_mut().insert(AUTHORIZATION, value);
            }
            let resp = self.http.request(req).await.map_err(|e| e.to_string())?;
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
            };
            if !auth.challenge(challenge).await.map_err(|e| e.to_string())? {
                return Ok(resp);
            }
        }
    }

    async fn deliver(&self, msg: &Value) {
        let _ = self.out.send(msg.to_string()).await;
    }

    /// Tells the client that request `id` failed at the HTTP level.
    async fn fail(&self, id: Option<&Value>, why: String) {
        if let Some(id) = id {
            let err =
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}});
            self.deliver(&err).await;
        }
    }

    /// POSTs one message: `line` is its text as the client wrote it (sent as is), `msg` the
    /// parsed view the headers are taken from.
    async fn post(self: &Arc<Self>, msg: Value, line: String) {
        let id = msg.get("method").and(msg.get("id")).cloned();
        let initialize = msg.get("method").and_then(Value::as_str) == Some("initialize");
        let req = self
            .request(Method::POST, Some(&msg))
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(line)));
        let Ok(req) = req else {
            return self.fail(id.as_ref(), "unsendable request".into()).await;
        };
        let resp = match self.send(req).await {
            Ok(r) => r,
            Err(e) => {
                return self
                    .fail(id.as_ref(), format!("HTTP request failed: {e}"))
                    .await
            }
        };
        if initialize {
            if let Some(sid) = resp
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
            {
                lock(&self.session).id = Some(sid.to_owned());
            }
        }
        let status = resp.status();
        let sse = is_sse(&resp);
        let answered = if sse {
            self.read_sse(resp.into_body(), id.as_ref(), initialize)
                .await
        } else {
            let limited = Limited::new(resp.into_body(), self.max_message);
            match limited.collect().await.map(|b| b.to_bytes()) {
                Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                    self.too_long(id.as_ref(), "response body").await;
                    true
                }
                body => match body
                    .ok()
                    .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                {
                    Some(reply) => {
                        self.seen(&reply, initialize);
                        self.deliver(&reply).await;
                        true
                    }
                    None => status == StatusCode::ACCEPTED || id.is_none(),
                },
            }
        };
        if !answered {
            self.fail(id.as_ref(), format!("HTTP {status} without a response"))
                .await;
        }
        if initialize {
            self.open_session_stream();
        }
    }

    /// Fails request `id` (or logs, for the session stream): the server sent a `what` longer
    /// than the client's `max_line`, which was not read further.
    async fn too_long(&self, id: Option<&Value>, what: &str) {
        let why = format!(
            "the server's {what} exceeds the client's {}-byte limit (ClientOptions::max_line)",
            self.max_message
        );
        tracing::warn!("{why}: dropped");
        self.fail(id, why).await;
    }

    /// Notes the negotiated version from an `initialize` response.
    fn seen(&self, reply: &Value, initialize: bool) {
        if initialize {
            if let Some(v) = reply
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
            {
                lock(&self.session).version = Some(v.to_owned());
            }
        }
    }

    /// Delivers every message of an SSE body; resumes it if it ends before the response to
    /// `id`. Returns whether that response arrived (always true for notifications).
    async fn read_sse(
        self: &Arc<Self>,
        body: Incoming,
        id: Option<&Value>,
        initialize: bool,
    ) -> bool {
        let mut body = body;
        let mut last_id: Option<String> = None;
        let mut retry = Duration::from_millis(500);
        for attempt in 0..=RESUME_ATTEMPTS {
            let mut parser = SseParser::new(self.max_message);
            let mut stream = body;
            while let Some(Ok(frame)) = stream.frame().await {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let Some(events) = parser.push(&data) else {
                    self.too_long(id, "SSE event").await;
                    return true;
                };
                for event in events {
                    if let Some(e) = event.id {
                        last_id = Some(e);
                    }
                    if let Some(r) = event.retry {
                        retry = Duration::from_millis(r);
                    }
                    let Ok(msg) = serde_json::from_str::<Value>(&event.data) else {
                        continue; // the priming event, or noise
                    };
                    let done = id.is_some() && msg.get("method").is_none() && msg.get("id") == id;
                    self.seen(&msg, initialize);
                    self.deliver(&msg).await;
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

    /// The session's GET stream (server-initiated messages), once per session.
    fn open_session_stream(self: &Arc<Self>) {
        {
            let mut s = lock(&self.session);
            if s.id.is_none() || s.stream_open {
                return;
            }
            s.stream_open = true;
        }
        let b = self.clone();
        tokio::spawn(async move {
            let Ok(req) = b.request(Method::GET, None).body(Full::new(Bytes::new())) else {
                return;
            };
            if let Ok(resp) = b.send(req).await {
                if resp.status().is_success() && is_sse(&resp) {
                    b.read_sse(resp.into_body(), None, false).await;
                }
            }
        });
    }

    /// DELETE of the session, if there is one.
    async fn end_session(&self) {
        if lock(&self.session).id.is_none() {
            return;
        }
        let req = self
            .request(Method::DELETE, None)
            .body(Full::new(Bytes::new()));
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

/// One server-sent event.
#[derive(Debug, Default, PartialEq)]
struct SseEvent {
    id: Option<String>,
    retry: Option<u64>,
    data: String,
}

/// Room beyond the limit for a line's field name and line end (`data: ` and `\r\n`).
const LINE_SLACK: usize = 16;

/// An incremental `text/event-stream` parser (the fields MCP uses: `data`, `id`, `retry`),
/// holding at most `limit` bytes of an event's data (and [`LINE_SLACK`] more of a line).
struct SseParser {
    buf: Vec<u8>,
    /// `buf[..scanned]` holds no newline.
    scanned: usize,
    event: SseEvent,
    has_data: bool,
    limit: usize,
    /// A line or an event's data went past `limit`.
    overflow: bool,
}

impl SseParser {
    fn new(limit: usize) -> Self {
        SseParser {
            buf: Vec::new(),
            scanned: 0,
            event: SseEvent::default(),
            has_data: false,
            limit,
            overflow: false,
        }
    }

    /// The events `chunk` completes; `None` once a line or an event's data is longer than
    /// the limit (the stream must not be read further).
    fn push(&mut self, chunk: &[u8]) -> Option<Vec<SseEvent>> {
        if self.overflow {
            return None;
        }
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(nl) = self
            .buf
            .get(self.scanned..)
            .and_then(|rest| rest.iter().position(|&b| b == b'\n'))
        {
            let line: Vec<u8> = self.buf.drain(..=self.scanned + nl).collect();
            self.scanned = 0;
            self.line(&line, &mut events);
            if self.overflow {
                return None;
            }
        }
        self.scanned = self.buf.len();
        // What is left is one unfinished line.
        if self.buf.len() > self.limit.saturating_add(LINE_SLACK) {
            self.overflow = true;
            return None;
        }
        Some(events)
    }

    fn line(&mut self, line: &[u8], events: &mut Vec<SseEvent>) {
        if line.len() > self.limit.saturating_add(LINE_SLACK) {
            self.overflow = true;
            return;
        }
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.is_empty() {
            if self.has_data || self.event.id.is_some() {
                events.push(std::mem::take(&mut self.event));
            }
            self.has_data = false;
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => {
                if self.has_data {
                    self.event.data.push('\n');
                }
                self.event.data.push_str(value);
                self.has_data = true;
                if self.event.data.len() > self.limit {
                    self.overflow = true;
                }
            }
            "id" => self.event.id = Some(value.to_owned()),
            "retry" => self.event.retry = value.parse().ok(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_parser() {
        let mut p = SseParser::new(1 << 20);
        assert!(p.push(b"id: 1-0\nretry: 500\ndata: \n").unwrap().is_empty());
        let e = p
            .push(b"\nevent: message\nid: 1-1\ndata: {\"a\"")
            .unwrap()
            .pop();
        assert_eq!(
            e,
            Some(SseEvent {
                id: Some("1-0".into()),
                retry: Some(500),
                data: String::new()
            })
        );
        let e = p.push(b":1}\r\n\r\n").unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].data, "{\"a\":1}");
        assert_eq!(e[0].id.as_deref(), Some("1-1"));
        let two = p.push(b"data: x\ndata: y\n\n: comment\n\n").unwrap();
        assert_eq!(two.len(), 1);
        assert_eq!(two[0].data, "x\ny");
        // A line split over many chunks.
        for part in [&b"da"[..], b"ta: ", b"{\"b\":", b"2}\n", b"\n"] {
            let e = p.push(part).unwrap();
            if part == b"\n" {
                assert_eq!(e.len(), 1);
                assert_eq!(e[0].data, "{\"b\":2}");
            } else {
                assert!(e.is_empty());
            }
        }
    }

    #[test]
    fn sse_parser_limits() {
        // A line that never ends.
        let mut p = SseParser::new(16);
        assert!(p.push(b"data: 0123456789abcdef").is_some());
        assert!(p.push(b"0123456789abcdef").is_none());
        assert!(p.push(b"\n\n").is_none(), "stays failed");
        // An event whose data lines add up past the limit, completed in the same chunk.
        let mut p = SseParser::new(16);
        assert!(p.push(b"data: 0123456789\ndata: 0123456789\n\n").is_none());
        // At the limit is fine.
        let mut p = SseParser::new(16);
        let e = p.push(b"data: 0123456789abcdef\r\n\r\n").unwrap();
        assert_eq!(e[0].data, "0123456789abcdef");
        let e = p.push(b"data: 01234567\ndata: 0123456\n\n").unwrap();
        assert_eq!(e[0].data, "01234567\n0123456");
    }
}
