//! The legacy HTTP+SSE transport (2024-11-05) beside Streamable HTTP, over raw HTTP/1.1:
//! the `endpoint` event, POST → 202 with the reply on the stream, notifications on the
//! stream, 404 for unknown sessions, 400 for malformed JSON, the Host check, the body
//! limit, the session quota shared with Streamable sessions, closing the stream ending the
//! session, and the transport off by default.
#[cfg(not(feature = "http"))]
compile_error!("needs feature `http`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

#[path = "common/http_server.rs"]
mod http_server;

use std::net::SocketAddr;
use std::time::Duration;

use http_server::{request, request_with, WAIT};
use mcp_rs_tokio::http::{HttpConfig, LegacySse};
use mcp_rs_tokio::{Server, ServerInfo, Tools};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn server(configure: impl FnOnce(&mut HttpConfig)) -> SocketAddr {
    let mut config = HttpConfig::default();
    configure(&mut config);
    let tools = http_server::tools(Duration::from_millis(10));
    http_server::serve("legacy-sse-test", tools, config).await.1
}

fn legacy(config: &mut HttpConfig) {
    config.legacy_sse = Some(LegacySse::default());
}

/// An open SSE stream: the raw bytes read so far and the events parsed from them.
struct Stream {
    socket: TcpStream,
    buf: String,
    /// `(event, data)` not yet taken.
    events: Vec<(String, String)>,
    status: u16,
}

impl Stream {
    async fn open(addr: SocketAddr, host: &str) -> Stream {
        Stream::open_with(addr, host, "").await
    }

    /// With `extra` headers (each ending in `\r\n`).
    async fn open_with(addr: SocketAddr, host: &str, extra: &str) -> Stream {
        let mut socket = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "GET /sse HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n{extra}\r\n"
        );
        socket.write_all(req.as_bytes()).await.unwrap();
        let mut s = Stream {
            socket,
            buf: String::new(),
            events: Vec::new(),
            status: 0,
        };
        while !s.buf.contains("\r\n\r\n") {
            assert!(s.read().await, "the stream's head: {:?}", s.buf);
        }
        let (head, rest) = s.buf.split_once("\r\n\r\n").unwrap();
        s.status = head[9..12].parse().unwrap();
        s.buf = rest.to_owned();
        s.parse();
        s
    }

    /// Reads more; false at the end of the stream.
    async fn read(&mut self) -> bool {
        let mut chunk = [0u8; 8192];
        let n = tokio::time::timeout(WAIT, self.socket.read(&mut chunk))
            .await
            .expect("the stream stalled")
            .unwrap_or(0);
        self.buf.push_str(&String::from_utf8_lossy(&chunk[..n]));
        if self.status != 0 {
            self.parse();
        }
        n > 0
    }

    /// Events from the chunked body (each chunk one event: `<hex>\r\n<event>\r\n`).
    fn parse(&mut self) {
        while let Some(end) = self.buf.find("\n\n") {
            let block: String = self.buf[..end].to_owned();
            self.buf.drain(..end + 2);
            let mut event = String::new();
            let mut data = String::new();
            for line in block.lines().map(|l| l.trim_end_matches('\r')) {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = e.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = d.to_owned();
                }
            }
            if !event.is_empty() {
                self.events.push((event, data));
            }
        }
    }

    /// The next event.
    async fn next(&mut self) -> (String, String) {
        loop {
            if !self.events.is_empty() {
                return self.events.remove(0);
            }
            assert!(self.read().await, "the stream ended");
        }
    }

    /// The next `message` event, parsed.
    async fn message(&mut self) -> Value {
        let (event, data) = self.next().await;
        assert_eq!(event, "message", "{data}");
        serde_json::from_str(&data).unwrap()
    }
}

async fn post(addr: SocketAddr, path: &str, body: &Value) -> (u16, String) {
    request(addr, "POST", path, "127.0.0.1", &body.to_string()).await
}

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
}

/// A stream with an initialized session, and its messages path.
async fn session(addr: SocketAddr, version: &str) -> (Stream, String) {
    let mut stream = Stream::open(addr, "127.0.0.1").await;
    assert_eq!(stream.status, 200);
    let (event, endpoint) = stream.next().await;
    assert_eq!(event, "endpoint");
    let (status, body) = post(addr, &endpoint, &initialize(version)).await;
    assert_eq!((status, body.as_str()), (202, ""));
    let reply = stream.message().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["protocolVersion"], version);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &endpoint, &initialized).await.0, 202);
    (stream, endpoint)
}

#[tokio::test]
async fn endpoint_event_then_replies_and_notifications_on_the_stream() {
    let addr = server(legacy).await;
    let mut stream = Stream::open(addr, "127.0.0.1").await;
    assert_eq!(stream.status, 200);
    let (event, endpoint) = stream.next().await;
    assert_eq!(event, "endpoint");
    let id = endpoint
        .strip_prefix("/messages?sessionId=")
        .expect("the messages path");
    assert!(
        id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(
        post(addr, &endpoint, &initialize("2024-11-05")).await.0,
        202
    );
    let reply = stream.message().await;
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(reply["result"]["serverInfo"]["name"], "legacy-sse-test");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(addr, &endpoint, &initialized).await.0, 202);

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(post(addr, &endpoint, &list).await.0, 202);
    let tools = stream.message().await;
    assert_eq!(tools["id"], 2);
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 2);

    // A call that runs on: its progress notifications, then its result, all on the stream.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}});
    assert_eq!(post(addr, &endpoint, &call).await.0, 202);
    for i in 1..=3 {
        let progress = stream.message().await;
        assert_eq!(progress["method"], "notifications/progress", "{progress}");
        assert_eq!(progress["params"]["progress"], f64::from(i));
        assert_eq!(progress["params"]["progressToken"], "p");
    }
    let result = stream.message().await;
    assert_eq!(result["id"], 3);
    assert_eq!(result["result"]["content"][0]["text"], "slow done");

    // An error reply goes to the stream too.
    let unknown = json!({"jsonrpc": "2.0", "id": 4, "method": "no/such"});
    assert_eq!(post(addr, &endpoint, &unknown).await.0, 202);
    assert_eq!(stream.message().await["error"]["code"], -32601);

    // Streamable HTTP is served beside it, and a legacy SSE session id is not a
    // Streamable session.
    let (status, body) = post(addr, "/mcp", &initialize("2025-03-26")).await;
    assert_eq!(status, 200, "{body}");
    let mut socket = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {id}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{list}",
        list.to_string().len()
    );
    socket.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    socket.read_to_end(&mut out).await.unwrap();
    assert!(
        out.starts_with(b"HTTP/1.1 404"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

#[tokio::test]
async fn any_revision_is_negotiated() {
    let addr = server(legacy).await;
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let (mut stream, endpoint) = session(addr, version).await;
        let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
        assert_eq!(post(addr, &endpoint, &ping).await.0, 202);
        // No priming event (this transport has none): the reply comes next.
        assert_eq!(
            stream.message().await,
            json!({"jsonrpc": "2.0", "id": 9, "result": {}})
        );
    }
}

#[tokio::test]
async fn refusals() {
    let addr = server(|c| {
        legacy(c);
        c.max_body = 1024;
    })
    .await;
    let (_stream, endpoint) = session(addr, "2024-11-05").await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});

    // Unknown session: 404 with a JSON-RPC error.
    let (status, body) = post(
        addr,
        "/messages?sessionId=0123456789abcdef0123456789abcdef",
        &ping,
    )
    .await;
    assert_eq!(status, 404);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], -32600);
    // No session id: 400.
    assert_eq!(post(addr, "/messages", &ping).await.0, 400);
    // Malformed JSON: 400 with a parse error.
    let (status, body) = request(addr, "POST", &endpoint, "127.0.0.1", "{not json").await;
    assert_eq!(status, 400);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], -32700);
    // Too large: 413.
    let big =
        json!({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"pad": "x".repeat(2000)}});
    assert_eq!(post(addr, &endpoint, &big).await.0, 413);
    // Host check, on the stream and on POSTs.
    let stream = Stream::open(addr, "evil.example").await;
    assert_eq!(stream.status, 403);
    let (status, _) = request(addr, "POST", &endpoint, "evil.example", &ping.to_string()).await;
    assert_eq!(status, 403);
    // Wrong methods.
    assert_eq!(
        request(addr, "POST", "/sse", "127.0.0.1", "{}").await.0,
        405
    );
    assert_eq!(
        request(addr, "GET", &endpoint, "127.0.0.1", "").await.0,
        405
    );
    // Wrong media type.
    let mut socket = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "POST {endpoint} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    );
    socket.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    socket.read_to_end(&mut out).await.unwrap();
    assert!(
        out.starts_with(b"HTTP/1.1 415"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

#[tokio::test]
async fn closing_the_stream_ends_the_session() {
    let addr = server(legacy).await;
    let (stream, endpoint) = session(addr, "2024-11-05").await;
    drop(stream);
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let mut status = 0;
    for _ in 0..200 {
        status = post(addr, &endpoint, &ping).await.0;
        if status == 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, 404);
}

#[tokio::test]
async fn sessions_count_against_the_shared_quota() {
    let addr = server(|c| {
        legacy(c);
        c.max_sessions_per_peer = 1;
    })
    .await;
    let first = Stream::open(addr, "127.0.0.1").await;
    assert_eq!(first.status, 200);
    assert_eq!(Stream::open(addr, "127.0.0.1").await.status, 503);
    // A Streamable session is refused too: the quota is shared.
    assert_eq!(post(addr, "/mcp", &initialize("2025-03-26")).await.0, 503);
    drop(first);
    let mut status = 0;
    for _ in 0..200 {
        status = Stream::open(addr, "127.0.0.1").await.status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, 200, "the slot is given back when the stream closes");
}

#[tokio::test]
async fn off_by_default() {
    let addr = server(|_| {}).await;
    assert_eq!(Stream::open(addr, "127.0.0.1").await.status, 404);
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(post(addr, "/messages?sessionId=00", &ping).await.0, 404);
}

#[tokio::test]
async fn bearer_tokens_on_the_stream_and_posts_and_the_session_is_its_principals() {
    use mcp_rs_tokio::http::auth::{authorizer_fn, Auth, Principal, Rejection, ResourceMetadata};
    let authorizer = authorizer_fn(|token: String| async move {
        match token.as_str() {
            "alice" | "bob" => Ok(Principal::new(token).with_issuer("https://idp.example")),
            _ => Err(Rejection::InvalidToken("unknown".into())),
        }
    });
    let metadata = ResourceMetadata::new("http://127.0.0.1/mcp", ["https://idp.example"]);
    let auth = Auth::new(metadata, authorizer).unwrap();
    let addr = server(move |c| {
        legacy(c);
        c.auth = Some(auth);
    })
    .await;
    assert_eq!(Stream::open(addr, "127.0.0.1").await.status, 401);
    let alice = "Authorization: Bearer alice\r\n";
    let bob = "Authorization: Bearer bob\r\n";
    let mut stream = Stream::open_with(addr, "127.0.0.1", alice).await;
    assert_eq!(stream.status, 200);
    let (_, endpoint) = stream.next().await;
    let init = initialize("2024-11-05").to_string();
    let post = |extra: &'static str| {
        let (endpoint, init) = (endpoint.clone(), init.clone());
        async move {
            request_with(addr, "POST", &endpoint, "127.0.0.1", extra, &init)
                .await
                .0
        }
    };
    assert_eq!(post("").await, 401);
    assert_eq!(post("Authorization: Bearer eve\r\n").await, 401);
    // Another principal's session does not exist for it.
    assert_eq!(post(bob).await, 404);
    assert_eq!(post(alice).await, 202);
    assert_eq!(
        stream.message().await["result"]["protocolVersion"],
        "2024-11-05"
    );
}

#[tokio::test]
async fn mounted_the_endpoint_is_relative_to_the_stream() {
    use tower_service::Service;
    let server = Server::new(ServerInfo::default(), Tools::new());
    let mut config = HttpConfig::default();
    legacy(&mut config);
    let mut service = server.http_service(config);
    let req = hyper::Request::get("/sse")
        .header("host", "127.0.0.1")
        .header("accept", "text/event-stream")
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let response = service.call(req).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let frame = http_body_util::BodyExt::frame(&mut body)
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap();
    assert!(
        text.starts_with("event: endpoint\ndata: messages?sessionId="),
        "{text}"
    );
}

#[tokio::test]
async fn a_client_that_does_not_read_loses_its_session() {
    let addr = server(|c| {
        legacy(c);
        c.write_timeout = Duration::from_millis(200);
    })
    .await;
    // The stream is never read again: its replies fill the socket buffers and then the
    // stream's bounded queue; the next frame ends the session (and the write timeout closes
    // the connection).
    let (mut stream, endpoint) = session(addr, "2024-11-05").await;
    let pad = "x".repeat(32 << 10);
    let call = json!({"jsonrpc": "2.0", "id": "first", "method": "tools/call", "params": {
        "name": "echo", "arguments": {"pad": pad}}});
    assert_eq!(post(addr, &endpoint, &call).await.0, 202);
    let reply = stream.message().await;
    assert!(
        reply.to_string().len() > 32 << 10,
        "{:.300}",
        reply.to_string()
    );
    let mut status = 0;
    for id in 0..3000 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"pad": pad}}});
        status = post(addr, &endpoint, &call).await.0;
        if status == 404 {
            break;
        }
        assert_eq!(status, 202);
        if id > 600 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    assert_eq!(status, 404, "the session ended");
}
