//! One simulated client's HTTP/1.1 keep-alive connection (hyper's client connection, no
//! pool: each client owns exactly one socket), and the MCP exchanges over it.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;

use crate::mcp;

/// Where the server is.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The socket address.
    pub addr: SocketAddr,
    /// `host:port` for the `Host` header.
    pub authority: String,
    /// The endpoint path (`/mcp`).
    pub path: String,
}

impl Target {
    /// Parses `http://HOST:PORT/PATH` (an IP address: the generator does no DNS).
    pub(crate) fn parse(url: &str) -> Result<Target, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url:?}: only http:// URLs are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let addr = authority
            .parse()
            .map_err(|_| format!("{url:?}: the host must be IP:PORT, e.g. 127.0.0.1:3000"))?;
        Ok(Target {
            addr,
            authority: authority.to_owned(),
            path: path.to_owned(),
        })
    }
}

/// Why an exchange failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The connection broke or could not be made: the client must reconnect.
    Connection(String),
    /// No complete answer within the timeout (the connection is then dropped too).
    Timeout,
    /// An answer arrived but is wrong (status, headers or body).
    Answer(String),
}

impl Failure {
    /// A short category, for counting.
    pub(crate) fn kind(&self) -> String {
        match self {
            Failure::Connection(_) => "connection".into(),
            Failure::Timeout => "timeout".into(),
            Failure::Answer(why) if why.starts_with("HTTP ") || why.starts_with("DELETE HTTP ") => {
                // "HTTP 503: ..." counts as "HTTP 503".
                why.split(':').next().unwrap_or(why).to_owned()
            }
            Failure::Answer(_) => "wrong answer".into(),
        }
    }
    /// Whether the connection must be replaced.
    pub(crate) fn breaks_connection(&self) -> bool {
        !matches!(self, Failure::Answer(_))
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Connection(e) => write!(f, "connection: {e}"),
            Failure::Timeout => f.write_str("timeout"),
            Failure::Answer(e) => f.write_str(e),
        }
    }
}

/// An HTTP answer, fully read.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub content_type: Option<String>,
    pub session: Option<String>,
    pub body: Bytes,
}

/// A legacy session: its id and negotiated revision.
#[derive(Clone, Debug)]
pub(crate) struct Session {
    pub id: String,
    pub version: String,
}

/// What every call sends: the tool name (as a JSON string) and the request shape.
#[derive(Clone, Debug)]
pub(crate) struct CallSpec {
    pub tool: String,
    pub tool_json: String,
    pub timeout: Duration,
}

/// One client connection.
pub(crate) struct Conn {
    sender: SendRequest<Full<Bytes>>,
}

impl Conn {
    /// Connects (TCP_NODELAY, within `timeout`) and completes the HTTP/1.1 handshake.
    pub(crate) async fn open(target: &Target, timeout: Duration) -> Result<Conn, Failure> {
        let stream = tokio::time::timeout(timeout, tokio::net::TcpStream::connect(target.addr))
            .await
            .map_err(|_| Failure::Timeout)?
            .map_err(|e| Failure::Connection(format!("connect: {e}")))?;
        let _ = stream.set_nodelay(true);
        let (sender, conn) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| Failure::Connection(format!("handshake: {e}")))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn { sender })
    }

    /// Sends one request and reads its whole answer.
    async fn exchange(
        &mut self,
        target: &Target,
        method: Method,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Reply, Failure> {
        let mut req = Request::builder()
            .method(method)
            .uri(target.path.as_str())
            .header(HOST, target.authority.as_str())
            .header(ACCEPT, "application/json, text/event-stream");
        if !body.is_empty() {
            req = req.header(CONTENT_TYPE, "application/json");
        }
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| Failure::Answer(format!("bad request: {e}")))?;
        self.sender
            .ready()
            .await
            .map_err(|e| Failure::Connection(e.to_string()))?;
        let res = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| Failure::Connection(e.to_string()))?;
        let (parts, body) = res.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|e| Failure::Connection(format!("reading the body: {e}")))?
            .to_bytes();
        let text = |name| {
            parts
                .headers
                .get(name)
                .and_then(|v: &hyper::header::HeaderValue| v.to_str().ok())
                .map(str::to_owned)
        };
        Ok(Reply {
            status: parts.status,
            content_type: text("content-type"),
            session: text("mcp-session-id"),
            body,
        })
    }

    /// [`exchange`](Self::exchange) within the call timeout.
    async fn timed(
        &mut self,
        target: &Target,
        spec: &CallSpec,
        method: Method,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Reply, Failure> {
        tokio::time::timeout(spec.timeout, self.exchange(target, method, headers, body))
            .await
            .unwrap_or(Err(Failure::Timeout))
    }

    /// One `tools/call` of `a + b` (2026-07-28 without a session, legacy within one),
    /// checked.
    pub(crate) async fn call(
        &mut self,
        target: &Target,
        spec: &CallSpec,
        session: Option<&Session>,
        id: u64,
        a: i64,
        b: i64,
    ) -> Result<(), Failure> {
        let reply = match session {
            None => {
                let body = mcp::modern_call(id, &spec.tool_json, a, b);
                let headers = [
                    ("mcp-protocol-version", mcp::MODERN),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", spec.tool.as_str()),
                ];
                self.timed(target, spec, Method::POST, &headers, body)
                    .await?
            }
            Some(s) => {
                let body = mcp::legacy_call(id, &spec.tool_json, a, b);
                let headers = [
                    ("mcp-session-id", s.id.as_str()),
                    ("mcp-protocol-version", s.version.as_str()),
                ];
                self.timed(target, spec, Method::POST, &headers, body)
                    .await?
            }
        };
        expect_status(&reply, StatusCode::OK)?;
        let result = mcp::response(reply.content_type.as_deref(), &reply.body, id)
            .map_err(Failure::Answer)?;
        mcp::check_sum(&result, (a + b) as f64).map_err(Failure::Answer)
    }

    /// A legacy handshake: `initialize` (200, an `Mcp-Session-Id`, a result) and
    /// `notifications/initialized` (202).
    pub(crate) async fn initialize(
        &mut self,
        target: &Target,
        spec: &CallSpec,
        version: &str,
    ) -> Result<Session, Failure> {
        let reply = self
            .timed(target, spec, Method::POST, &[], mcp::initialize(0, version))
            .await?;
        expect_status(&reply, StatusCode::OK)?;
        let result = mcp::response(reply.content_type.as_deref(), &reply.body, 0)
            .map_err(Failure::Answer)?;
        let negotiated = mcp::negotiated(&result).map_err(Failure::Answer)?;
        let id = reply
            .session
            .ok_or_else(|| Failure::Answer("initialize: no Mcp-Session-Id header".into()))?;
        let headers = [
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", negotiated.as_str()),
        ];
        let reply = self
            .timed(
                target,
                spec,
                Method::POST,
                &headers,
                mcp::INITIALIZED.to_vec(),
            )
            .await?;
        expect_status(&reply, StatusCode::ACCEPTED)?;
        Ok(Session {
            id,
            version: negotiated,
        })
    }

    /// DELETE of a session (any 2xx).
    pub(crate) async fn delete(
        &mut self,
        target: &Target,
        spec: &CallSpec,
        session: &Session,
    ) -> Result<(), Failure> {
        let headers = [
            ("mcp-session-id", session.id.as_str()),
            ("mcp-protocol-version", session.version.as_str()),
        ];
        let reply = self
            .timed(target, spec, Method::DELETE, &headers, Vec::new())
            .await?;
        if reply.status.is_success() {
            Ok(())
        } else {
            Err(Failure::Answer(format!(
                "DELETE HTTP {}: {}",
                reply.status.as_u16(),
                mcp::preview(&reply.body)
            )))
        }
    }
}

fn expect_status(reply: &Reply, want: StatusCode) -> Result<(), Failure> {
    if reply.status == want {
        return Ok(());
    }
    Err(Failure::Answer(format!(
        "HTTP {}: {}",
        reply.status.as_u16(),
        mcp::preview(&reply.body)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = Target::parse("http://127.0.0.1:3000/mcp").unwrap();
        assert_eq!(t.authority, "127.0.0.1:3000");
        assert_eq!(t.path, "/mcp");
        assert_eq!(Target::parse("http://[::1]:9/").unwrap().path, "/");
        assert!(Target::parse("https://127.0.0.1:1/mcp").is_err());
        assert!(Target::parse("http://localhost:1/mcp").is_err());
    }

    #[test]
    fn failure_kinds() {
        assert_eq!(Failure::Answer("HTTP 503: busy".into()).kind(), "HTTP 503");
        assert_eq!(
            Failure::Answer("JSON-RPC error {}".into()).kind(),
            "wrong answer"
        );
        assert_eq!(Failure::Timeout.kind(), "timeout");
        assert!(Failure::Timeout.breaks_connection());
        assert!(!Failure::Answer("x".into()).breaks_connection());
    }
}
