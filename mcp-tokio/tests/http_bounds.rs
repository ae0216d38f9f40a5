//! Bounded buffering on Streamable HTTP (issue #23), against the real server over raw
//! HTTP/1.1: the response mode is decided up front (a `subscriptions/listen` whose `Accept`
//! lacks `text/event-stream` gets 406 at once; a JSON-only client gets its answer without
//! the frames before it, within `HttpConfig::max_json_answer`), and the global memory budget
//! (`HttpConfig::memory_budget`) refuses new work with 503 while clients hold buffers, never
//! counting past it, and serves again once they are freed.
#[cfg(not(feature = "http"))]
compile_error!("needs feature `http`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

#[path = "common/http_server.rs"]
mod http_server;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use http_server::{request_with, OBJECT};
use mcp_rs_tokio::http::{HttpConfig, McpHttpService};
use mcp_rs_tokio::{Handler, Server, ServerInfo, ToolDef, ToolReply, Tools};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MODERN: &str = "2026-07-28";

/// Text of `big`'s answer: 30,000 bytes.
const BIG: usize = 30_000;

fn tools() -> Tools {
    let tools = http_server::tools(Duration::from_millis(1));
    tools.add(
        ToolDef::new("chatty", OBJECT),
        Handler::async_fn(|_, ctx| async move {
            for i in 0..2_000 {
                ctx.progress(f64::from(i), None, Some("tick".to_owned()))
                    .await;
                if i % 100 == 0 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            ToolReply::text("chatty done")
        }),
    );
    tools.add(
        ToolDef::new("big", OBJECT),
        Handler::sync(|_, r| {
            r.text(&"x".repeat(BIG));
        }),
    );
    tools
}

/// A 2026-07-28 request body.
fn modern(id: Value, method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "progressToken": "p",
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A 2026-07-28 POST with `accept`: status and body.
async fn post_modern(
    addr: SocketAddr,
    accept: &str,
    method: &str,
    name: Option<&str>,
    body: &str,
) -> (u16, String) {
    let mut extra =
        format!("MCP-Protocol-Version: {MODERN}\r\nMcp-Method: {method}\r\nAccept: {accept}\r\n");
    if let Some(name) = name {
        extra.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    request_with(addr, "POST", "/mcp", "127.0.0.1", &extra, body).await
}

fn call(id: i64, tool: &str) -> String {
    modern(
        json!(id),
        "tools/call",
        json!({"name": tool, "arguments": {}}),
    )
}

/// The finding: a `subscriptions/listen` POST with `Accept: application/json` got
/// no response head at all within 5 s. It is refused at once with 406 and a JSON-RPC error
/// naming the request; with `text/event-stream` accepted the stream opens.
#[tokio::test]
async fn listen_without_event_stream_is_refused_at_once() {
    let (server, addr, _task) = http_server::serve("bounds", tools(), HttpConfig::default()).await;
    let listen = modern(
        json!("L"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let refused = tokio::time::timeout(
        Duration::from_secs(5),
        post_modern(
            addr,
            "application/json",
            "subscriptions/listen",
            None,
            &listen,
        ),
    )
    .await
    .expect("a response within 5 s");
    assert_eq!(refused.0, 406, "{}", refused.1);
    let error: Value = serde_json::from_str(&refused.1).unwrap();
    assert_eq!(error["id"], "L", "{error}");
    assert_eq!(error["error"]["code"], -32600, "{error}");

    // Accepting a stream, it is one.
    let mut socket = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: subscriptions/listen\r\nAccept: application/json, text/event-stream\r\n\r\n{listen}",
        listen.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), socket.read(&mut buf))
        .await
        .expect("the stream's head")
        .unwrap();
    let text = String::from_utf8_lossy(&buf[..n]);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("text/event-stream"), "{text}");
    server.shutdown();
}

/// A JSON-only client of a call that sends 2,000 progress notifications gets one JSON
/// object, the answer: the notifications are dropped as they come, never gathered.
#[tokio::test]
async fn json_only_clients_get_the_answer_without_interim_frames() {
    let (server, addr, _task) = http_server::serve("bounds", tools(), HttpConfig::default()).await;
    let (status, body) = post_modern(
        addr,
        "application/json",
        "tools/call",
        Some("chatty"),
        &call(7, "chatty"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("one JSON object");
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "chatty done");
    server.shutdown();
}

/// An answer larger than `max_json_answer` for a JSON-only client gets 500 with a JSON-RPC
/// error naming the request and the bound; a client that takes a stream gets it.
#[tokio::test]
async fn a_json_answer_beyond_its_bound_is_refused() {
    let mut config = HttpConfig::default();
    config.max_json_answer = 10_000;
    let (server, addr, _task) = http_server::serve("bounds", tools(), config).await;
    let (status, body) = post_modern(
        addr,
        "application/json",
        "tools/call",
        Some("big"),
        &call(8, "big"),
    )
    .await;
    assert_eq!(status, 500, "{}", &body[..body.len().min(200)]);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["id"], 8, "{error}");
    assert_eq!(error["error"]["code"], -32603, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("10000 bytes")),
        "{error}"
    );
    let (status, body) = post_modern(
        addr,
        "application/json, text/event-stream",
        "tools/call",
        Some("big"),
        &call(9, "big"),
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.contains(&"x".repeat(BIG)), "the answer, streamed");
    server.shutdown();
}

/// A frame that does not fit the memory budget is not queued: the POST it answers gets
/// 503 with a JSON-RPC error naming the request, and the budget serves smaller work.
#[tokio::test]
async fn a_frame_beyond_the_memory_budget_gets_503() {
    let mut config = HttpConfig::default();
    config.memory_budget = 20_000;
    let (server, addr, _task) = http_server::serve("bounds", tools(), config).await;
    let both = "application/json, text/event-stream";
    let (status, body) = post_modern(addr, both, "tools/call", Some("big"), &call(3, "big")).await;
    assert_eq!(status, 503, "{}", &body[..body.len().min(200)]);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (error["id"].clone(), error["error"]["code"].clone()),
        (json!(3), json!(-32603))
    );
    let (status, body) =
        post_modern(addr, both, "tools/call", Some("echo"), &call(4, "echo")).await;
    assert_eq!(status, 200, "{body}");
    server.shutdown();
}

/// `service` behind a hyper accept loop of this test's own (to read its budget).
async fn mounted(service: McpHttpService) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let service = service.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let service = service.clone();
                    async move { Ok::<_, std::convert::Infallible>(service.handle(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

/// A connection that sent a request head declaring `declared` body bytes and then `sent`
/// of them, and holds them.
async fn holder(addr: SocketAddr, declared: usize, sent: usize) -> TcpStream {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {declared}\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&vec![b' '; sent]).await.unwrap();
    socket
}

/// The status and body a holder was answered (it need not have sent its whole body).
async fn answer(socket: &mut TcpStream) -> (u16, String) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let n = tokio::time::timeout_at(deadline.into(), socket.read(&mut buf))
            .await
            .expect("an answer within 5 s")
            .unwrap_or(0);
        out.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&out).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(str::to_owned)
                })
                .and_then(|n| n.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= length || n == 0 {
                return (head[9..12].parse().unwrap(), body.to_owned());
            }
        }
        assert!(n > 0, "closed without an answer: {text:?}");
    }
}

/// Many clients holding request bodies cannot take the counted bytes past the budget: the
/// bodies that do not fit get 503 (JSON-RPC error body), so does a small request while the
/// budget is spent, and once the holder goes away every byte is given back and requests
/// succeed again.
#[tokio::test]
async fn the_memory_budget_refuses_new_work_until_it_is_freed() {
    const BUDGET: usize = 64 << 10;
    let info = ServerInfo {
        name: "budget".into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::new(info, tools());
    let mut config = HttpConfig::default();
    config.memory_budget = BUDGET;
    let service = server.http_service(config);
    let addr = mounted(service.clone()).await;
    let used = || service.memory_used();

    // One body nearly fills the budget (fewer than 100 bytes stay free).
    let mut big = holder(addr, 200_000, BUDGET - 90).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while used() < BUDGET - 90 {
        assert!(Instant::now() < deadline, "counted: {}", used());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Sixteen more bodies of 4 KiB each: none fits, each is refused at once.
    let mut others = Vec::new();
    for _ in 0..16 {
        others.push(holder(addr, 100_000, 4096).await);
    }
    for socket in &mut others {
        let (status, body) = answer(socket).await;
        assert_eq!(status, 503, "{body}");
        let error: Value = serde_json::from_str(&body).expect("a JSON-RPC error");
        assert_eq!(error["error"]["code"], -32603, "{error}");
        assert!(used() <= BUDGET, "counted {} of {BUDGET}", used());
    }
    // A small request while the budget is spent: 503 too.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let accept = "Accept: application/json, text/event-stream\r\n";
    let (status, body) = request_with(addr, "POST", "/mcp", "127.0.0.1", accept, &init).await;
    assert_eq!(status, 503, "{body}");
    assert!(used() <= BUDGET, "counted {} of {BUDGET}", used());

    // The holder goes away: its bytes are given back, and the same request succeeds.
    big.shutdown().await.unwrap();
    drop(big);
    drop(others);
    let deadline = Instant::now() + Duration::from_secs(5);
    while used() > 0 {
        assert!(Instant::now() < deadline, "still counted: {}", used());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, body) = request_with(addr, "POST", "/mcp", "127.0.0.1", accept, &init).await;
    assert_eq!(status, 200, "{body}");
    server.shutdown();
}
