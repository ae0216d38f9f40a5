//! `Server::serve_http_per_core`: connections spread over worker threads with a
//! current-thread runtime each, sharing one session table, one connection cap and one
//! shutdown. Raw HTTP/1.1 keep-alive connections, so that which connection (hence which
//! worker) carries each request is known.
#[cfg(not(feature = "http"))]
compile_error!("needs feature `http`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use mcp_rs_tokio::http::HttpConfig;
use mcp_rs_tokio::{Handler, Limits, Server, ServerInfo, ToolDef, ToolReply, Tools};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server whose tools answer with the name of the thread that ran them: `where` at once
/// (in the request's own poll), `where_async` from a task it spawns.
fn server(limits: Limits) -> Server {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("where", r#"{"type":"object"}"#),
        Handler::sync(|_, r| {
            r.text(std::thread::current().name().unwrap_or("?"));
        }),
    );
    tools.add(
        ToolDef::new("where_async", r#"{"type":"object"}"#),
        Handler::async_fn(|_, _| async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let name = tokio::spawn(async { std::thread::current().name().map(str::to_owned) })
                .await
                .ok()
                .flatten();
            ToolReply::text(name.unwrap_or_default())
        }),
    );
    let info = ServerInfo {
        name: "per-core".into(),
        version: "0".into(),
        ..Default::default()
    };
    let config = mcp_rs_core::Config::new(mcp_rs_tokio::random_key());
    Server::with(info, config, limits, tools)
}

async fn start(
    limits: Limits,
    threads: usize,
) -> (Server, SocketAddr, tokio::task::JoinHandle<()>) {
    start_with(limits, HttpConfig::default(), threads).await
}

async fn start_with(
    limits: Limits,
    config: HttpConfig,
    threads: usize,
) -> (Server, SocketAddr, tokio::task::JoinHandle<()>) {
    let server = server(limits);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let s = server.clone();
    let task = tokio::spawn(async move {
        s.serve_http_per_core(listener, config, threads)
            .await
            .unwrap();
    });
    (server, addr, task)
}

/// One keep-alive connection.
struct Conn(TcpStream);

/// A response: status, headers (lowercase names), body.
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            (n == name).then(|| v.trim())
        })
    }

    /// The text of a tool result.
    fn text(&self) -> String {
        let v = self.json();
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a tool result: {v}"))
            .to_owned()
    }
}

impl Conn {
    async fn open(addr: SocketAddr) -> Conn {
        Conn(TcpStream::connect(addr).await.unwrap())
    }

    /// A connection from another loopback address (`127.0.0.2`: another peer).
    async fn open_from(addr: SocketAddr, from: &str) -> Conn {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
        Conn(socket.connect(addr).await.unwrap())
    }

    /// POSTs `body` to `/mcp` with `extra` headers and reads the whole response.
    async fn post(&mut self, extra: &str, body: &Value) -> Reply {
        self.post_accepting("application/json, text/event-stream", extra, body)
            .await
    }

    /// [`post`](Self::post) with this `Accept` (`application/json` alone: the answer is
    /// JSON, with a length, even when the call runs on).
    async fn post_accepting(&mut self, accept: &str, extra: &str, body: &Value) -> Reply {
        let body = body.to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: {accept}\r\nContent-Length: {}\r\n{extra}\r\n",
            body.len()
        );
        self.0.write_all(head.as_bytes()).await.unwrap();
        self.0.write_all(body.as_bytes()).await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), self.read())
            .await
            .expect("an answer within 10 s")
            .expect("a complete response")
    }

    /// One response (`None`: the connection closed first).
    async fn read(&mut self) -> Option<Reply> {
        let mut buf = Vec::new();
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            let mut chunk = [0u8; 4096];
            let n = self.0.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        let status = head.split(' ').nth(1)?.parse().ok()?;
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse().unwrap_or(0));
        let mut body = buf[end + 4..].to_vec();
        while body.len() < len {
            let mut chunk = [0u8; 4096];
            let n = self.0.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            body.extend_from_slice(&chunk[..n]);
        }
        Some(Reply {
            status,
            head,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }
}

/// A stateless (2026-07-28) call of `tool`.
async fn stateless_call(conn: &mut Conn, id: u64, tool: &str) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
    "name": tool, "arguments": {},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }}});
    let extra = format!(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n"
    );
    conn.post_accepting("application/json", &extra, &body).await
}

/// Each connection stays on one worker thread, for its stateless calls and the tasks a tool
/// spawns; connections are spread over the workers (the least loaded first).
#[tokio::test]
async fn connections_are_spread_over_workers_and_stay_on_theirs() {
    let (server, addr, task) = start(Limits::default(), 2).await;
    let mut conns = Vec::new();
    for _ in 0..4 {
        conns.push(Conn::open(addr).await);
    }
    let mut threads = BTreeSet::new();
    for (i, conn) in conns.iter_mut().enumerate() {
        let mut seen = BTreeSet::new();
        for call in 0..3 {
            let id = (i * 10 + call) as u64;
            let r = stateless_call(conn, id, "where").await;
            assert_eq!(r.status, 200, "{}", r.body);
            assert_eq!(r.json()["id"], id);
            seen.insert(r.text());
            let r = stateless_call(conn, id + 100, "where_async").await;
            assert_eq!(r.status, 200, "{}", r.body);
            seen.insert(r.text());
        }
        assert_eq!(
            seen.len(),
            1,
            "connection {i} moved between threads: {seen:?}"
        );
        threads.extend(seen);
    }
    assert_eq!(
        threads,
        BTreeSet::from(["mcp-http-0".to_owned(), "mcp-http-1".to_owned()]),
        "four connections on two workers"
    );
    server.shutdown();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("serving ends after shutdown")
        .unwrap();
}

/// A legacy session created through one worker is used from a connection of another, and
/// ended there; a shutdown ends the sessions and every worker.
#[tokio::test]
async fn sessions_are_shared_by_the_workers() {
    let (server, addr, task) = start(Limits::default(), 2).await;
    let mut a = Conn::open(addr).await;
    let mut b = Conn::open(addr).await;
    // Which worker each connection is on.
    let on_a = stateless_call(&mut a, 1, "where").await.text();
    let on_b = stateless_call(&mut b, 2, "where").await.text();
    assert_ne!(on_a, on_b, "two idle workers take one connection each");

    let r = a.post("", &initialize()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    let session = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(a.post(&session, &note).await.status, 202);
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "where", "arguments": {}}})
    };
    // The session runs where it was created, whichever connection calls it.
    let r = b.post(&session, &call(2)).await;
    assert_eq!((r.status, r.text()), (200, on_a.clone()), "{}", r.body);
    let r = a.post(&session, &call(3)).await;
    assert_eq!((r.status, r.text()), (200, on_a.clone()));

    server.shutdown();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("serving ends after shutdown")
        .unwrap();
    // Both connections were closed by the drain.
    assert!(a.read().await.is_none());
    assert!(b.read().await.is_none());
}

/// The connection cap is one for all workers: at the limit an idle connection (on whichever
/// worker) is asked to close and the new one is served.
#[tokio::test]
async fn the_connection_cap_is_shared() {
    let limits = Limits {
        max_connections: 1,
        ..Limits::default()
    };
    let (server, addr, task) = start(limits, 2).await;
    let mut a = Conn::open(addr).await;
    assert_eq!(stateless_call(&mut a, 1, "where").await.status, 200);
    let mut b = Conn::open(addr).await;
    let r = stateless_call(&mut b, 2, "where").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let closed = tokio::time::timeout(Duration::from_secs(5), a.read())
        .await
        .expect("the idle connection is closed");
    assert!(closed.is_none());
    server.shutdown();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("serving ends after shutdown")
        .unwrap();
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
}

/// The per-peer session quota counts the socket's address (no `PeerAddr` extension is
/// involved; without an address every client would be one peer), across workers; a body that does not arrive within `header_timeout` gets 408
/// (the timer starts only when the body is not there with its head).
#[tokio::test]
async fn peer_quota_and_body_timeout() {
    let mut config = HttpConfig::default();
    config.max_sessions_per_peer = 1;
    config.header_timeout = Duration::from_millis(300);
    let (server, addr, task) = start_with(Limits::default(), config, 2).await;
    let mut a = Conn::open(addr).await;
    let mut b = Conn::open(addr).await;
    let mut other = Conn::open_from(addr, "127.0.0.2").await;
    assert_eq!(a.post("", &initialize()).await.status, 200);
    let r = other.post("", &initialize()).await;
    assert_eq!(r.status, 200, "another address is another peer: {}", r.body);
    let r = b.post("", &initialize()).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(
        r.body.contains("Too many sessions for this client"),
        "{}",
        r.body
    );

    let mut c = Conn::open(addr).await;
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\nContent-Length: 40\r\n\r\n{\"jsonrpc\"";
    c.0.write_all(head.as_bytes()).await.unwrap();
    let r = tokio::time::timeout(Duration::from_secs(5), c.read())
        .await
        .expect("refused within 5 s")
        .expect("a response");
    assert_eq!(r.status, 408, "{}", r.body);
    server.shutdown();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("serving ends after shutdown")
        .unwrap();
}
