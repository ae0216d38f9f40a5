//! The HTTP server over in-memory sockets: framing (keep-alive, pipelining, chunked bodies
//! split byte by byte), every refusal with its status and JSON-RPC body, the 2026-07-28
//! header checks, `subscriptions/listen` streams, and slots that do not wait for each other.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use mcp_rs_core::{
    CallRequest, Config, Dispatch, ListKind, SecretKey, ServerHandler, ServerInfo, Tool,
    ToolResult, ToolSet,
};
use mcp_rs_embedded::http::{Ended, HttpConfig, Server, Slot};
use serde_json::Value;
use support::{responses, Response, Sock};

/// Polls `f` until it completes or `steps` polls did not complete it.
fn poll_steps<F: Future + ?Sized>(f: Pin<&mut F>, steps: usize) -> Option<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    let mut f = f;
    for _ in 0..steps {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return Some(v);
        }
    }
    None
}

// ---- the server ----------------------------------------------------------------------

static TOOLS: [Tool<'static>; 2] = [
    Tool::new(
        "echo",
        r#"{"type":"object","properties":{"text":{"type":"string"}}}"#,
    ),
    Tool::new(
        "weather",
        r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#,
    ),
];

struct Tools;

impl ToolSet for Tools {
    fn len(&self) -> usize {
        TOOLS.len()
    }
    fn get(&self, i: usize) -> Option<Tool<'_>> {
        TOOLS.get(i).copied()
    }
    fn call(&mut self, req: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
        let args = req.args();
        let text = args
            .get("text")
            .or_else(|| args.get("region"))
            .and_then(|t| t.as_string())
            .map(|t| t.raw())
            .unwrap_or("none");
        r.text(text);
        Dispatch::Done
    }
}

impl ServerHandler for Tools {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(self)
    }
}

static INFO: ServerInfo<'static> = ServerInfo {
    name: "http-test",
    version: "1.0.0",
    title: None,
    description: None,
    website_url: None,
    icons: &[],
    instructions: None,
};

type TestSlot = Slot<2048, 2048, 2>;

fn server() -> Server<'static, Tools> {
    Server::new(&INFO, Config::new(SecretKey([3; 16])), Tools)
        .with_http(HttpConfig::new().allowed_hosts(&["device.local"]))
}

// ---- requests and responses ----------------------------------------------------------

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn modern_body(id: u32, method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}{META}}}}}"#)
}

/// A POST with `Content-Length`, 2026-07-28 headers and the extra header lines given.
fn post(body: &str, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn call(id: u32, tool: &str, args: &str, extra: &str) -> String {
    let body = modern_body(
        id,
        "tools/call",
        &format!(r#""name":"{tool}","arguments":{args}"#),
    );
    post(
        &body,
        &format!("Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\n{extra}"),
    )
}

/// Serves `input` on one slot until the server ends the connection (input closed at its
/// end), returning how it ended and the responses.
fn exchange(input: &[u8]) -> (Ended, Vec<Response>) {
    exchange_with(&server(), input, 0)
}

fn exchange_with(
    server: &Server<'static, Tools>,
    input: &[u8],
    max_read: usize,
) -> (Ended, Vec<Response>) {
    let sock = Sock::with(input);
    sock.0.borrow_mut().max_read = max_read;
    sock.close();
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    let ended = poll_steps(fut.as_mut(), 1_000_000).expect("the connection ends");
    (ended, responses(&sock.take_output()))
}

fn error_of(r: &Response) -> (i64, String) {
    let v = r.json();
    (
        v["error"]["code"].as_i64().unwrap(),
        v["error"]["message"].as_str().unwrap().to_string(),
    )
}

// ---- tests ---------------------------------------------------------------------------

#[test]
fn keep_alive_and_pipelined_calls() {
    let input = [
        call(1, "echo", r#"{"text":"one"}"#, ""),
        call(2, "echo", r#"{"text":"two"}"#, ""),
    ]
    .concat();
    let (ended, rs) = exchange(input.as_bytes());
    assert_eq!(ended, Ended::Closed);
    assert_eq!(rs.len(), 2, "{rs:?}");
    for (r, (id, text)) in rs.iter().zip([(1, "one"), (2, "two")]) {
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("application/json"));
        let v = r.json();
        assert_eq!(v["id"], id);
        assert_eq!(v["result"]["content"][0]["text"], text);
    }
}

#[test]
fn bodies_arrive_byte_by_byte_and_chunked() {
    let body = modern_body(
        5,
        "tools/call",
        r#""name":"echo","arguments":{"text":"chunky"}"#,
    );
    let (a, b) = body.split_at(17);
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:X};ext=1\r\n{b}\r\n0\r\nTrailer: x\r\n\r\n",
        a.len(),
        b.len()
    );
    let input = [chunked.clone(), call(6, "echo", r#"{"text":"after"}"#, "")].concat();
    let (ended, rs) = exchange_with(&server(), input.as_bytes(), 1);
    assert_eq!(ended, Ended::Closed);
    assert_eq!(rs.len(), 2, "{rs:?}");
    assert_eq!(rs[0].json()["result"]["content"][0]["text"], "chunky");
    assert_eq!(rs[1].json()["result"]["content"][0]["text"], "after");
    // Broken chunk framing is a 400 that closes the connection.
    let broken = chunked.replace("0\r\nTrailer", "zz\r\nTrailer");
    let (ended, rs) = exchange(broken.as_bytes());
    assert_eq!(ended, Ended::Done(400));
    assert_eq!(rs.last().unwrap().status, 400);
}

#[test]
fn expect_continue_is_answered() {
    let req = call(3, "echo", r#"{"text":"x"}"#, "Expect: 100-continue\r\n");
    let sock = Sock::with(req.as_bytes());
    sock.close();
    let server = server();
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    poll_steps(fut.as_mut(), 1000).unwrap();
    let out = sock.take_output();
    assert!(out.starts_with(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"));
}

#[test]
fn refusals_have_statuses_and_json_rpc_bodies() {
    let ok = call(1, "echo", "{}", "");
    let cases: Vec<(String, u16, i64, Ended)> = vec![
        (
            ok.replace("Host: localhost:8080", "Host: evil.example"),
            403,
            -32600,
            Ended::Done(403),
        ),
        (
            ok.replace("Host: localhost:8080", "Host: device.local:80"),
            200,
            0,
            Ended::Closed,
        ),
        (
            ok.replace("Accept:", "Origin: http://evil.example\r\nAccept:"),
            403,
            -32600,
            Ended::Done(403),
        ),
        (
            ok.replace("POST /mcp", "POST /other"),
            404,
            -32600,
            Ended::Done(404),
        ),
        (
            ok.replace("application/json\r\nAccept", "text/plain\r\nAccept"),
            415,
            -32600,
            Ended::Done(415),
        ),
        (
            ok.replace("POST /mcp", "PUT /mcp"),
            405,
            -32600,
            Ended::Done(405),
        ),
        (
            "GET /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n".into(),
            405,
            -32600,
            Ended::Closed,
        ),
        (
            "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: ab\r\n\r\n".into(),
            404,
            -32600,
            Ended::Closed,
        ),
        ("NOT HTTP\r\n\r\n".into(), 400, -32600, Ended::Done(400)),
        (
            ok.replace("Content-Length:", "Content-Length: 1\r\nContent-Length:"),
            400,
            -32600,
            Ended::Done(400),
        ),
        (
            ok.replace("Mcp-Name: echo", "Mcp-Name: other"),
            400,
            -32020,
            Ended::Closed,
        ),
        (
            ok.replace("Mcp-Method: tools/call", "Mcp-Method: tools/list"),
            400,
            -32020,
            Ended::Closed,
        ),
        (
            ok.replace("Mcp-Method: tools/call\r\n", ""),
            400,
            -32020,
            Ended::Closed,
        ),
    ];
    for (input, status, code, end) in cases {
        let (ended, rs) = exchange(input.as_bytes());
        assert_eq!(rs.len(), 1, "{input}: {rs:?}");
        assert_eq!(rs[0].status, status, "{input}");
        assert_eq!(ended, end, "{input}");
        if code != 0 {
            assert_eq!(error_of(&rs[0]).0, code, "{input}");
            assert_eq!(rs[0].header("content-type"), Some("application/json"));
        }
        if status == 405 {
            assert!(rs[0].header("allow").is_some());
        }
        if code == -32020 {
            assert_eq!(rs[0].json()["id"], 1, "the refusal echoes the request id");
        }
    }
}

#[test]
fn oversized_heads_and_bodies() {
    let long = format!("X-Pad: {}\r\n", "a".repeat(3000));
    let (ended, rs) = exchange(call(1, "echo", "{}", &long).as_bytes());
    assert_eq!((ended, rs[0].status), (Ended::Done(431), 431));
    assert_eq!(error_of(&rs[0]).0, -32600);
    let many: String = (0..40).map(|i| format!("X-{i}: 1\r\n")).collect();
    let (ended, rs) = exchange(call(1, "echo", "{}", &many).as_bytes());
    assert_eq!((ended, rs[0].status), (Ended::Done(431), 431));
    let big = format!(r#"{{"text":"{}"}}"#, "b".repeat(3000));
    let (ended, rs) = exchange(call(1, "echo", &big, "").as_bytes());
    assert_eq!((ended, rs[0].status), (Ended::Done(413), 413));
    assert_eq!(error_of(&rs[0]).0, -32600);
    let chunk = "c".repeat(1500);
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
        chunk.len(),
        chunk.len()
    );
    let (ended, rs) = exchange(chunked.as_bytes());
    assert_eq!((ended, rs[0].status), (Ended::Done(413), 413));
}

#[test]
fn param_headers_are_checked() {
    let args = r#"{"region":"Zürich"}"#;
    // "Zürich" in standard base64
    let (_, rs) = exchange(
        call(
            1,
            "weather",
            args,
            "Mcp-Param-Region: =?base64?WsO8cmljaA==?=\r\n",
        )
        .as_bytes(),
    );
    assert_eq!(rs[0].status, 200, "{:?}", rs[0].json());
    assert_eq!(rs[0].json()["result"]["content"][0]["text"], "Zürich");
    let (_, rs) = exchange(
        call(
            1,
            "weather",
            r#"{"region":"Bern"}"#,
            "mcp-param-region: Bern\r\n",
        )
        .as_bytes(),
    );
    assert_eq!(rs[0].status, 200);
    for extra in [
        "",
        "Mcp-Param-Region: Basel\r\n",
        "Mcp-Param-Region: =?base64?!!?=\r\n",
        // "QmVybg==" is "Bern"; "QmVybh==" sets bits after the last byte.
        "Mcp-Param-Region: =?base64?QmVybh==?=\r\n",
        // Raw UTF-8 is no header text (non-ASCII values are sent base64-encoded).
        "Mcp-Param-Region: B\u{e9}rn\r\n",
    ] {
        let (_, rs) = exchange(call(1, "weather", r#"{"region":"Bern"}"#, extra).as_bytes());
        assert_eq!(rs[0].status, 400, "{extra}");
        assert_eq!(error_of(&rs[0]).0, -32020, "{extra}");
    }
    let (_, rs) = exchange(call(1, "weather", "{}", "Mcp-Param-Region: Bern\r\n").as_bytes());
    assert_eq!(rs[0].status, 400);
}

/// The values as mcp-core's `wire::headers` reads them for both HTTP servers: no length
/// limit of their own, and `Mcp-Name` in the encoded form decoded too.
#[test]
fn header_values_follow_the_spec() {
    // 300 decoded bytes (the first embedded copy refused more than 256): "xxx" is eHh4.
    let long = "x".repeat(300);
    let header = format!("Mcp-Param-Region: =?base64?{}?=\r\n", "eHh4".repeat(100));
    let args = format!(r#"{{"region":"{long}"}}"#);
    let (_, rs) = exchange(call(1, "weather", &args, &header).as_bytes());
    assert_eq!(rs[0].status, 200, "{:?}", rs[0].json());
    assert_eq!(rs[0].json()["result"]["content"][0]["text"], long.as_str());
    // Mcp-Name in the encoded form: "weather" is d2VhdGhlcg==.
    let body = modern_body(
        1,
        "tools/call",
        r#""name":"weather","arguments":{"region":"Bern"}"#,
    );
    let head =
        "Mcp-Method: tools/call\r\nMcp-Name: =?base64?d2VhdGhlcg==?=\r\nMcp-Param-Region: Bern\r\n";
    let (_, rs) = exchange(post(&body, head).as_bytes());
    assert_eq!(rs[0].status, 200, "{:?}", rs[0].json());
    assert_eq!(rs[0].json()["result"]["content"][0]["text"], "Bern");
}

#[test]
fn statuses_follow_the_cores_replies() {
    // A notification is accepted with 202 and no body.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (_, rs) = exchange(post(note, "").as_bytes());
    assert_eq!(rs[0].status, 202);
    assert!(rs[0].body.is_empty());
    // An unknown tool is the core's error; an unknown method is 404 in 2026-07-28.
    let unknown = modern_body(4, "no/such", "");
    let (_, rs) = exchange(post(&unknown, "Mcp-Method: no/such\r\n").as_bytes());
    assert_eq!(rs[0].status, 404);
    assert_eq!(error_of(&rs[0]).0, -32601);
    // Legacy: initialize without a session is answered; other requests get 400.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let legacy = |body: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let (_, rs) = exchange(legacy(init).as_bytes());
    assert_eq!(rs[0].status, 200);
    assert_eq!(rs[0].json()["result"]["protocolVersion"], "2025-06-18");
    let (_, rs) = exchange(legacy(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).as_bytes());
    assert_eq!(rs[0].status, 400);
    // Connection: close is honoured.
    let (ended, rs) = exchange(call(1, "echo", "{}", "Connection: close\r\n").as_bytes());
    assert_eq!((ended, rs.len()), (Ended::Done(200), 1));
    assert_eq!(rs[0].header("connection"), Some("close"));
}

#[test]
fn listen_streams_carry_list_changes() {
    let server = server();
    let body = modern_body(
        9,
        "subscriptions/listen",
        r#""notifications":{"toolsListChanged":true}"#,
    );
    let req = post(&body, "Mcp-Method: subscriptions/listen\r\n");
    let sock = Sock::with(req.as_bytes());
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    assert!(
        poll_steps(fut.as_mut(), 100).is_none(),
        "the stream stays open"
    );
    let head = String::from_utf8(sock.take_output()).unwrap();
    assert!(
        head.starts_with("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"),
        "{head}"
    );
    assert!(
        head.contains("notifications/subscriptions/acknowledged"),
        "{head}"
    );
    server.list_changed(ListKind::Tools);
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    let out = String::from_utf8(sock.take_output()).unwrap();
    assert!(
        out.contains(r#""method":"notifications/tools/list_changed""#),
        "{out}"
    );
    assert!(
        out.contains(r#""io.modelcontextprotocol/subscriptionId":9"#),
        "{out}"
    );
    // Prompts were not asked for.
    server.list_changed(ListKind::Prompts);
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    assert!(sock.take_output().is_empty());
    // The next request on the connection ends the stream with its result, then is served.
    sock.push(call(10, "echo", r#"{"text":"next"}"#, "").as_bytes());
    sock.close();
    assert_eq!(poll_steps(fut.as_mut(), 1000), Some(Ended::Closed));
    let out = sock.take_output();
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains(r#""resultType":"complete""#), "{text}");
    let tail = text
        .find("HTTP/1.1 200 OK\r\ncontent-type: application/json")
        .unwrap();
    let rs = responses(&out[tail..]);
    assert_eq!(rs[0].json()["result"]["content"][0]["text"], "next");
}

#[test]
fn a_stalled_peer_holds_only_its_slot() {
    let server = server();
    // Slot A: half a head, then nothing. Slot B: a listen stream. Slot C: requests.
    let a = Sock::with(b"POST /mcp HTTP/1.1\r\nHost: loc");
    let c = Sock::with(call(1, "echo", r#"{"text":"c"}"#, "").as_bytes());
    let (mut slot_a, mut slot_c) = (Box::new(TestSlot::new()), Box::new(TestSlot::new()));
    let (mut sa, mut sc) = (a.clone(), c.clone());
    let mut fa = Box::pin(server.serve(&mut slot_a, &mut sa));
    let mut fc = Box::pin(server.serve(&mut slot_c, &mut sc));
    assert!(poll_steps(fa.as_mut(), 10).is_none());
    assert!(poll_steps(fc.as_mut(), 100).is_none());
    assert_eq!(responses(&c.take_output())[0].status, 200);
    c.push(call(2, "echo", r#"{"text":"d"}"#, "").as_bytes());
    assert!(poll_steps(fa.as_mut(), 10).is_none());
    assert!(poll_steps(fc.as_mut(), 100).is_none());
    assert_eq!(
        responses(&c.take_output())[0].json()["result"]["content"][0]["text"],
        "d"
    );
    // A closes mid-head: its slot ends, nothing was answered.
    a.close();
    assert_eq!(poll_steps(fa.as_mut(), 10), Some(Ended::Closed));
    assert!(a.take_output().is_empty());
}

#[test]
fn busy_is_503() {
    let server = server();
    let sock = Sock::default();
    let mut s = sock.clone();
    let mut fut = Box::pin(server.refuse_busy(&mut s));
    assert_eq!(poll_steps(fut.as_mut(), 10), Some(Ended::Done(503)));
    let rs = responses(&sock.take_output());
    assert_eq!(rs[0].status, 503);
    assert_eq!(error_of(&rs[0]).0, -32603);
    assert_eq!(rs[0].header("connection"), Some("close"));
}

// ---- legacy sessions -----------------------------------------------------------------

thread_local! {
    static NOW: std::cell::Cell<u64> = const { std::cell::Cell::new(1_000) };
}

fn clock() -> u64 {
    NOW.with(|n| n.get())
}

fn legacy_post(body: &str, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// Runs one request on a fresh connection (closed after it).
fn one(server: &Server<'static, Tools, 2>, input: &str) -> Response {
    let sock = Sock::with(input.as_bytes());
    sock.close();
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    poll_steps(fut.as_mut(), 100_000).expect("the connection ends");
    responses(&sock.take_output()).pop().expect("a response")
}

fn legacy_server() -> Server<'static, Tools, 2> {
    let storage = Box::leak(Box::new([[mcp_rs_core::CallSlot::EMPTY; 2]; 2]));
    Server::new(&INFO, Config::new(SecretKey([3; 16])), Tools)
        .with_clock(clock)
        .with_sessions(storage)
        .with_session_idle(60_000)
}

#[test]
fn legacy_sessions_live_in_the_table() {
    let server = legacy_server();
    let r = one(&server, &legacy_post(INIT, ""));
    assert_eq!(r.status, 200);
    let id = r
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    assert_eq!(id.len(), 32);
    assert_eq!(server.live_sessions(), 1);
    let with = |extra: &str| format!("Mcp-Session-Id: {id}\r\n{extra}");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(one(&server, &legacy_post(note, &with(""))).status, 202);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let r = one(
        &server,
        &legacy_post(list, &with("MCP-Protocol-Version: 2025-11-25\r\n")),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["tools"][0]["name"], "echo");
    // An error on a session is 200 (the session answered it).
    let bad = r#"{"jsonrpc":"2.0","id":3,"method":"no/such"}"#;
    assert_eq!(one(&server, &legacy_post(bad, &with(""))).status, 200);
    // Another revision than the session's, an unknown one, an unknown session.
    let r = one(
        &server,
        &legacy_post(list, &with("MCP-Protocol-Version: 2025-06-18\r\n")),
    );
    assert_eq!(r.status, 400);
    let r = one(
        &server,
        &legacy_post(list, &with("MCP-Protocol-Version: 1999-01-01\r\n")),
    );
    assert_eq!(r.status, 400);
    let other = "Mcp-Session-Id: 00000000000000000000000000000000\r\n";
    assert_eq!(one(&server, &legacy_post(list, other)).status, 404);
    // DELETE ends it.
    let delete = format!("DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: {id}\r\n\r\n");
    assert_eq!(one(&server, &delete).status, 200);
    assert_eq!(one(&server, &delete).status, 404);
    assert_eq!(one(&server, &legacy_post(list, &with(""))).status, 404);
    assert_eq!(server.live_sessions(), 0);
}

#[test]
fn the_table_is_bounded_and_sessions_expire() {
    let server = legacy_server();
    let a = one(&server, &legacy_post(INIT, ""));
    let b = one(&server, &legacy_post(INIT, ""));
    assert_ne!(a.header("mcp-session-id"), b.header("mcp-session-id"));
    let full = one(&server, &legacy_post(INIT, ""));
    assert_eq!(full.status, 503);
    assert_eq!(error_of(&full).0, -32603);
    // A failed initialize does not keep its entry.
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    assert_eq!(one(&server, &legacy_post(list, "")).status, 400);
    // Idle past the limit: both are gone, and their entries are reused.
    NOW.with(|n| n.set(n.get() + 60_001));
    let id = a.header("mcp-session-id").unwrap();
    let r = one(
        &server,
        &legacy_post(list, &format!("Mcp-Session-Id: {id}\r\n")),
    );
    assert_eq!(r.status, 404);
    assert_eq!(one(&server, &legacy_post(INIT, "")).status, 200);
    assert_eq!(server.live_sessions(), 1);
}

#[test]
fn a_legacy_get_stream_carries_list_changes() {
    let server = legacy_server();
    let id = one(&server, &legacy_post(INIT, ""))
        .header("mcp-session-id")
        .unwrap()
        .to_string();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {id}\r\n\r\n"
    );
    let not_sse = get.replace("text/event-stream", "application/json");
    assert_eq!(one(&server, &not_sse).status, 406);
    let sock = Sock::with(get.as_bytes());
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    let head = String::from_utf8(sock.take_output()).unwrap();
    assert!(
        head.starts_with("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream"),
        "{head}"
    );
    // A second GET stream on the same session is refused while this one is open.
    assert_eq!(one(&server, &get).status, 409);
    server.list_changed(ListKind::Tools);
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    let out = String::from_utf8(sock.take_output()).unwrap();
    assert!(
        out.contains(r#"data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed""#),
        "{out}"
    );
    sock.close();
    assert_eq!(poll_steps(fut.as_mut(), 100), Some(Ended::Closed));
    // Closed: a new GET stream may open.
    drop(fut);
    let sock = Sock::with(get.as_bytes());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    assert!(sock.take_output().starts_with(b"HTTP/1.1 200 OK"));
}

#[test]
fn idle_connections_can_be_evicted_between_requests() {
    use mcp_rs_embedded::http::SlotState;
    let server = server();
    let state = SlotState::new();
    let sock = Sock::with(b"POST /mcp HTTP/1.1\r\nHost: loc");
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve_with(&mut slot, &state, &mut s));
    // Mid-head: not idle, not evictable.
    assert!(poll_steps(fut.as_mut(), 10).is_none());
    assert!(!state.is_idle() && !state.evict());
    sock.push(b"alhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    assert!(poll_steps(fut.as_mut(), 10).is_none());
    // (`{}` is no JSON-RPC message: the core's -32600, 400 without a session.)
    assert_eq!(responses(&sock.take_output())[0].status, 400);
    // Answered, waiting for the next request: idle, and evicted on request.
    assert!(state.is_idle());
    assert!(state.evict());
    assert_eq!(poll_steps(fut.as_mut(), 10), Some(Ended::Evicted));
}

/// The memory a slot and a connection's future take (printed with `--nocapture`; the
/// README's footprint table quotes them): bounded, so that a task pool can hold them.
#[test]
fn footprint() {
    use std::mem::size_of;
    let server = server();
    let mut slot = Box::new(Slot::<1024, 1024, 2>::new());
    let mut sock = Sock::default();
    let future = server.serve(&mut slot, &mut sock);
    let future_bytes = std::mem::size_of_val(&future);
    drop(future);
    let call_slot = size_of::<mcp_rs_core::CallSlot>();
    let slot_bytes = size_of::<Slot<1024, 1024, 2>>();
    let session = size_of::<mcp_rs_core::Session<'static>>();
    println!("CallSlot {call_slot} B, Slot<1024,1024,2> {slot_bytes} B, serve future {future_bytes} B, Session {session} B");
    assert_eq!(slot_bytes, 2048 + 2 * call_slot);
    assert!(future_bytes < 4096, "{future_bytes}");
}

#[test]
fn a_waiting_get_stream_is_evictable() {
    use mcp_rs_embedded::http::SlotState;
    let server = legacy_server();
    let id = one(&server, &legacy_post(INIT, ""))
        .header("mcp-session-id")
        .unwrap()
        .to_string();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {id}\r\n\r\n"
    );
    let state = SlotState::new();
    let sock = Sock::with(get.as_bytes());
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve_with(&mut slot, &state, &mut s));
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    assert!(state.is_idle() && state.evict());
    assert_eq!(poll_steps(fut.as_mut(), 100), Some(Ended::Evicted));
    // The stream was ended properly (last chunk), and the session lives on.
    let rs = responses(&sock.take_output());
    assert_eq!(rs[0].status, 200);
    assert_eq!(server.live_sessions(), 1);
    drop(fut);
    let sock = Sock::with(get.as_bytes());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    assert!(
        sock.take_output().starts_with(b"HTTP/1.1 200 OK"),
        "the stream can be reopened"
    );
}

/// xorshift64*: a small deterministic generator for the mutation test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Mutated requests (bytes flipped, inserted, removed, cut), delivered in reads of random
/// sizes: the server never panics, always ends the connection once the input ends, and
/// answers only with complete HTTP responses up to a stream the client cut.
#[test]
fn mutated_requests_never_panic() {
    let body = modern_body(1, "tools/call", r#""name":"echo","arguments":{"text":"x"}"#);
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    let listen = post(
        &modern_body(
            2,
            "subscriptions/listen",
            r#""notifications":{"toolsListChanged":true}"#,
        ),
        "Mcp-Method: subscriptions/listen\r\n",
    );
    let seeds: Vec<String> = vec![
        call(1, "echo", r#"{"text":"hello"}"#, ""),
        call(2, "weather", r#"{"region":"Bern"}"#, "Mcp-Param-Region: =?base64?QmVybg==?=\r\n"),
        chunked,
        listen,
        legacy_post(INIT, ""),
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: 0123\r\n\r\n".into(),
        "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: 0123\r\n\r\n".into(),
    ];
    let server = legacy_server();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let alphabet = b"\r\n:;, 0123456789abcdefxyzXYZ{}[]\"\\/-=?%\t\x00\xff";
    for round in 0..3000 {
        let mut input: Vec<u8> = Vec::new();
        for _ in 0..1 + rng.below(3) {
            input.extend_from_slice(seeds[rng.below(seeds.len())].as_bytes());
        }
        for _ in 0..rng.below(6) {
            if input.is_empty() {
                break;
            }
            let at = rng.below(input.len());
            match rng.below(4) {
                0 => input[at] = alphabet[rng.below(alphabet.len())],
                1 => input.insert(at, alphabet[rng.below(alphabet.len())]),
                2 => {
                    input.remove(at);
                }
                _ => input.truncate(at),
            }
        }
        let sock = Sock::with(&input);
        sock.0.borrow_mut().max_read = 1 + rng.below(64);
        sock.close();
        let mut slot = Box::new(Slot::<512, 2048, 2>::new());
        let mut s = sock.clone();
        let mut fut = Box::pin(server.serve(&mut slot, &mut s));
        let ended = poll_steps(fut.as_mut(), 100_000);
        assert!(
            ended.is_some(),
            "round {round}: the connection did not end: {:?}",
            String::from_utf8_lossy(&input)
        );
        let out = sock.take_output();
        assert!(
            out.is_empty() || out.starts_with(b"HTTP/1.1 "),
            "round {round}"
        );
    }
}

// ---- deferred requests run on the slot -----------------------------------------------

static SLOW: [Tool<'static>; 2] = [
    Tool::new("slow", r#"{"type":"object"}"#),
    Tool::new("forgotten", r#"{"type":"object"}"#),
];

/// Defers every call.
struct Slow;

impl ToolSet for Slow {
    fn len(&self) -> usize {
        SLOW.len()
    }
    fn get(&self, i: usize) -> Option<Tool<'_>> {
        SLOW.get(i).copied()
    }
    fn call(&mut self, _: &CallRequest<'_>, _: &mut ToolResult<'_, '_>) -> Dispatch {
        Dispatch::Defer
    }
}

impl ServerHandler for Slow {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(self)
    }
}

/// Runs `slow` (progress, a log message, a pause, the result); leaves `forgotten`
/// unanswered.
struct Runner {
    ran: u32,
}

impl<T: embedded_io_async::Write> mcp_rs_embedded::http::CallRunner<T> for Runner {
    async fn run<'c>(
        &'c mut self,
        call: mcp_rs_core::Call<'c>,
        ctx: &'c mut mcp_rs_embedded::http::CallContext<'_, T>,
    ) {
        self.ran += 1;
        if !call.name().eq_str("slow") {
            return;
        }
        ctx.progress(0.0, Some(1.0), None).await;
        ctx.log(mcp_rs_core::LogLevel::Info, Some("t"), "working")
            .await;
        // A pause (a sensor, a timer): the slot waits, others are not held.
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded {
                Poll::Ready(())
            } else {
                yielded = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
        .await;
        ctx.progress(1.0, Some(1.0), None).await;
        ctx.complete(|r| {
            r.text("done");
        })
        .await;
    }
}

#[test]
fn deferred_requests_run_on_the_slot_and_stream_their_progress() {
    let server: Server<'static, Slow> = Server::new(&INFO, Config::new(SecretKey([3; 16])), Slow);
    let meta = r#""_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"}"#;
    let body = |id: u32, tool: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}},{meta}}}}}"#
        )
    };
    let req = |id, tool: &str, accept: &str| {
        let b = body(id, tool);
        format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: {accept}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}\r\n\r\n{b}",
            b.len()
        )
    };
    let input = [
        req(1, "slow", "application/json, text/event-stream"),
        req(2, "forgotten", "application/json, text/event-stream"),
        req(3, "slow", "application/json"),
    ]
    .concat();
    let sock = Sock::with(input.as_bytes());
    sock.close();
    let mut slot = Box::new(TestSlot::new());
    let mut runner = Runner { ran: 0 };
    let state = mcp_rs_embedded::http::SlotState::new();
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve_calls(&mut slot, &state, &mut s, &mut runner));
    assert_eq!(poll_steps(fut.as_mut(), 1000), Some(Ended::Closed));
    drop(fut);
    assert_eq!(runner.ran, 3);
    let rs = responses(&sock.take_output());
    assert_eq!(rs.len(), 3, "{rs:?}");
    // SSE: progress, the log message, progress, then the result.
    assert_eq!(rs[0].header("content-type"), Some("text/event-stream"));
    let events: Vec<Value> = String::from_utf8_lossy(&rs[0].body)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let methods: Vec<&str> = events
        .iter()
        .map(|e| e["method"].as_str().unwrap_or("(result)"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "(result)"
        ]
    );
    assert_eq!(events[3]["result"]["content"][0]["text"], "done");
    // Left unanswered: -32603 (on the SSE response the call opened).
    let text = String::from_utf8_lossy(&rs[1].body);
    assert!(text.contains(r#""code":-32603"#), "{text}");
    // A client that takes JSON only gets the result alone.
    assert_eq!(rs[2].header("content-type"), Some("application/json"));
    assert_eq!(rs[2].json()["result"]["content"][0]["text"], "done");
}

#[test]
fn a_listen_request_from_a_json_only_client_gets_406() {
    let body = modern_body(
        4,
        "subscriptions/listen",
        r#""notifications":{"toolsListChanged":true}"#,
    );
    let req = post(&body, "Mcp-Method: subscriptions/listen\r\n")
        .replace("application/json, text/event-stream", "application/json");
    let (ended, rs) = exchange(req.as_bytes());
    assert_eq!(ended, Ended::Closed);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].status, 406);
    let v = rs[0].json();
    assert_eq!(v["id"], 4);
    assert_eq!(v["error"]["code"], -32600);
}

// ---- requests to the client from a running call (legacy sessions) --------------------

/// Asks the client's model (`sampling/createMessage`) and answers with what it said.
struct Asker;

impl<T: embedded_io_async::Write> mcp_rs_embedded::http::CallRunner<T> for Asker {
    async fn run<'c>(
        &'c mut self,
        _: mcp_rs_core::Call<'c>,
        ctx: &'c mut mcp_rs_embedded::http::CallContext<'_, T>,
    ) {
        use mcp_rs_embedded::http::Answer;
        let params = r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}"#;
        let method = mcp_rs_core::ClientMethod::CreateMessage;
        let mut buf = [0u8; 256];
        let said = ctx.request(method, params, 60_000, &mut buf).await;
        let mut text = [0u8; 300];
        let n = match said {
            Ok(Answer::Result(r)) => {
                let t = r.get("content").and_then(|c| c.get("text")).unwrap();
                copy(&mut text, t.as_string().unwrap().raw())
            }
            Ok(Answer::Error { code, message }) => {
                copy(&mut text, &format!("error {code}: {message}"))
            }
            Err(e) => copy(&mut text, &format!("{e:?}")),
        };
        let text = std::str::from_utf8(&text[..n]).unwrap();
        ctx.complete(|r| {
            r.text(text);
        })
        .await;
    }
}

fn copy(dst: &mut [u8], s: &str) -> usize {
    dst[..s.len()].copy_from_slice(s.as_bytes());
    s.len()
}

/// One request on a fresh connection of `server` (closed after it).
fn one_on<H: ServerHandler>(server: &Server<'static, H, 2>, input: &str) -> Response {
    let sock = Sock::with(input.as_bytes());
    sock.close();
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    poll_steps(fut.as_mut(), 100_000).expect("the connection ends");
    responses(&sock.take_output()).pop().expect("a response")
}

/// A legacy session that declared sampling, on a server with 64-byte mailboxes: its id.
fn sampling_session() -> (Server<'static, Slow, 2>, String) {
    let storage = Box::leak(Box::new([[mcp_rs_core::CallSlot::EMPTY; 2]; 2]));
    let mail = Box::leak(Box::new([[0u8; 128]; 2]));
    let server = Server::new(&INFO, Config::new(SecretKey([3; 16])), Slow)
        .with_clock(clock)
        .with_sessions(storage)
        .with_responses(mail);
    let init = INIT.replace(r#""capabilities":{}"#, r#""capabilities":{"sampling":{}}"#);
    let r = one_on(&server, &legacy_post(&init, ""));
    let id = r.header("mcp-session-id").unwrap().to_string();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let sid = format!("Mcp-Session-Id: {id}\r\n");
    assert_eq!(one_on(&server, &legacy_post(initialized, &sid)).status, 202);
    (server, id)
}

/// Runs a call that asks the client on slot A, answers it with `answer` (a JSON-RPC
/// response body with `{id}` for the request's id) through slot B: the call's SSE events
/// and the answer POST's response.
fn ask_and_answer(answer: &str) -> (Vec<Value>, Response, Server<'static, Slow, 2>) {
    let (server, id) = sampling_session();
    let sid = format!("Mcp-Session-Id: {id}\r\n");
    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#;
    let sock = Sock::with(legacy_post(call, &sid).as_bytes());
    let mut slot = Box::new(TestSlot::new());
    let state = mcp_rs_embedded::http::SlotState::new();
    let mut s = sock.clone();
    let mut runner = Asker;
    let mut a = Box::pin(server.serve_calls(&mut slot, &state, &mut s, &mut runner));
    assert!(poll_steps(a.as_mut(), 1000).is_none(), "the call waits");
    let out = String::from_utf8(sock.take_output()).unwrap();
    assert!(
        out.starts_with("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream"),
        "{out}"
    );
    let asked: Value = out
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .expect("the request to the client");
    assert_eq!(asked["method"], "sampling/createMessage");
    let reply = answer.replace("{id}", &asked["id"].to_string());
    let b = one_on(&server, &legacy_post(&reply, &sid));
    sock.close();
    assert_eq!(poll_steps(a.as_mut(), 1000), Some(Ended::Closed));
    drop(a);
    let events = String::from_utf8(sock.take_output())
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    (events, b, server)
}

#[test]
fn a_call_gets_the_clients_answer_from_another_slot() {
    let answer = r#"{"jsonrpc":"2.0","id":{id},"result":{"role":"assistant","content":{"type":"text","text":"hello there"},"model":"m"}}"#;
    let (events, b, server) = ask_and_answer(answer);
    assert_eq!(b.status, 202);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["id"], 2);
    assert_eq!(events[0]["result"]["content"][0]["text"], "hello there");
    assert_eq!(server.stats().dropped, 0);
}

#[test]
fn a_clients_error_and_an_oversized_answer_reach_the_call() {
    let error = r#"{"jsonrpc":"2.0","id":{id},"error":{"code":-1,"message":"User rejected"}}"#;
    let (events, b, _) = ask_and_answer(error);
    assert_eq!(b.status, 202);
    assert_eq!(
        events[0]["result"]["content"][0]["text"],
        "error -1: User rejected"
    );
    let long = "x".repeat(200);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":{{id}},"result":{{"role":"assistant","content":{{"type":"text","text":"{long}"}},"model":"m"}}}}"#
    );
    let (events, b, _) = ask_and_answer(&big);
    assert_eq!(b.status, 202);
    assert_eq!(events[0]["result"]["content"][0]["text"], "TooLarge");
}

// ---- stream resumption (legacy sessions) ---------------------------------------------

/// Ends the POST's stream at once (`close_stream`), then answers with the tool's name
/// `closed=<whether it closed>`, padded by 100 bytes for `forgotten` (to fill the ring).
struct Closer;

impl<T: embedded_io_async::Write> mcp_rs_embedded::http::CallRunner<T> for Closer {
    async fn run<'c>(
        &'c mut self,
        call: mcp_rs_core::Call<'c>,
        ctx: &'c mut mcp_rs_embedded::http::CallContext<'_, T>,
    ) {
        let closed = ctx.close_stream().await;
        let pad = if call.name().eq_str("forgotten") {
            100
        } else {
            0
        };
        ctx.complete(|r| {
            r.text_fmt(format_args!("closed={closed} {}", "x".repeat(pad)));
        })
        .await;
    }
}

/// A legacy session on a server with `N`-byte replay rings: the server and its id.
fn replay_session<const N: usize>() -> (Server<'static, Slow, 2>, String) {
    let storage = Box::leak(Box::new([[mcp_rs_core::CallSlot::EMPTY; 2]; 2]));
    let rings = Box::leak(Box::new([[0u8; N]; 2]));
    let server = Server::new(&INFO, Config::new(SecretKey([3; 16])), Slow)
        .with_clock(clock)
        .with_sessions(storage)
        .with_replay(rings);
    let id = one_on(&server, &legacy_post(INIT, ""))
        .header("mcp-session-id")
        .unwrap()
        .to_string();
    (server, id)
}

/// Runs `input` on a fresh connection of `server` with the [`Closer`] runner, the input
/// closed after it: the responses.
fn run_closer(server: &Server<'static, Slow, 2>, input: &str) -> Vec<Response> {
    let sock = Sock::with(input.as_bytes());
    sock.close();
    let mut slot = Box::new(TestSlot::new());
    let state = mcp_rs_embedded::http::SlotState::new();
    let mut s = sock.clone();
    let mut runner = Closer;
    let mut fut = Box::pin(server.serve_calls(&mut slot, &state, &mut s, &mut runner));
    poll_steps(fut.as_mut(), 100_000).expect("the connection ends");
    responses(&sock.take_output())
}

/// The SSE events of a body: (id, data).
fn events(body: &[u8]) -> Vec<(Option<String>, String)> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| {
            let field = |name: &str| {
                e.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(str::to_string)
            };
            (field("id: "), field("data: ").unwrap_or_default())
        })
        .collect()
}

fn tool_call(id: u32, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    )
}

#[test]
fn a_closed_stream_is_resumed_with_last_event_id() {
    let (server, id) = replay_session::<256>();
    let sid = format!("Mcp-Session-Id: {id}\r\n");
    // The POST's stream: its priming event only (an id to resume from, retry), then it ends.
    let rs = run_closer(&server, &legacy_post(&tool_call(2, "slow"), &sid));
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].header("content-type"), Some("text/event-stream"));
    let body = String::from_utf8_lossy(&rs[0].body).into_owned();
    assert_eq!(body, "id: 1-0\nretry: 500\ndata: \n\n");
    // GET with Last-Event-ID: the result, with its id; then the stream ends (complete).
    let get = |last: &str| {
        format!(
            "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n{sid}Last-Event-ID: {last}\r\n\r\n"
        )
    };
    let rs = run_closer(&server, &get("1-0"));
    assert_eq!(rs.len(), 1, "{rs:?}");
    assert_eq!(rs[0].status, 200);
    let evs = events(&rs[0].body);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].0.as_deref(), Some("1-1"));
    let result: Value = serde_json::from_str(&evs[0].1).unwrap();
    assert_eq!(result["id"], 2);
    assert_eq!(result["result"]["content"][0]["text"], "closed=true ");
    // From the result's id: nothing more, the stream is complete.
    let rs = run_closer(&server, &get("1-1"));
    assert_eq!(rs[0].status, 200);
    assert!(events(&rs[0].body).is_empty());
    // Newer streams push the oldest events out of the 256-byte ring: resuming from before
    // them is refused (the events are gone), a newer id still resumes.
    for n in 3..6 {
        run_closer(&server, &legacy_post(&tool_call(n, "forgotten"), &sid));
    }
    let r = &run_closer(&server, &get("1-0"))[0];
    assert_eq!(r.status, 400);
    assert_eq!(error_of(r).0, -32600);
    let r = &run_closer(&server, &get("4-6"))[0];
    assert_eq!(r.status, 200);
    let evs = events(&r.body);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].0.as_deref(), Some("4-7"));
    // An id of no stream of this session: the session's GET stream, as without the header.
    let sock = Sock::with(get("9-0").as_bytes());
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    assert!(
        poll_steps(fut.as_mut(), 100).is_none(),
        "a session stream stays open"
    );
    let head = String::from_utf8(sock.take_output()).unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream"));
}

#[test]
fn without_a_replay_ring_streams_carry_no_ids_and_do_not_close() {
    let storage = Box::leak(Box::new([[mcp_rs_core::CallSlot::EMPTY; 2]; 2]));
    let server = Server::new(&INFO, Config::new(SecretKey([3; 16])), Slow)
        .with_clock(clock)
        .with_sessions(storage);
    let id = one_on(&server, &legacy_post(INIT, ""))
        .header("mcp-session-id")
        .unwrap()
        .to_string();
    let rs = run_closer(
        &server,
        &legacy_post(&tool_call(2, "slow"), &format!("Mcp-Session-Id: {id}\r\n")),
    );
    let evs = events(&rs[0].body);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].0, None);
    let result: Value = serde_json::from_str(&evs[0].1).unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "closed=false ");
}

// ---- resource updates on streams -----------------------------------------------------

static WATCHED: [mcp_rs_core::model::resources::Resource<'static>; 1] =
    [mcp_rs_core::model::resources::Resource::new(
        "test://w", "w",
    )];

/// One subscribable resource; `resources/subscribe` takes any URI.
struct Watched;

impl mcp_rs_core::model::resources::ResourceSet for Watched {
    fn len(&self) -> usize {
        WATCHED.len()
    }
    fn get(&self, i: usize) -> Option<mcp_rs_core::model::resources::Resource<'_>> {
        WATCHED.get(i).copied()
    }
    fn subscribable(&self) -> bool {
        true
    }
    fn subscribe(&mut self, _: mcp_rs_core::wire::json::JsonStr<'_>, _: bool) -> bool {
        true
    }
}

impl ServerHandler for Watched {
    fn resources(&mut self) -> Option<&mut dyn mcp_rs_core::model::resources::ResourceSet> {
        Some(self)
    }
}

fn updated_uris(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .filter(|v| v["method"] == "notifications/resources/updated")
        .map(|v| v["params"]["uri"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn legacy_get_streams_carry_updates_of_subscribed_resources() {
    let storage = Box::leak(Box::new([[mcp_rs_core::CallSlot::EMPTY; 2]; 2]));
    let server: Server<'static, Watched, 2> =
        Server::new(&INFO, Config::new(SecretKey([3; 16])), Watched)
            .with_clock(clock)
            .with_sessions(storage);
    let id = one_on(&server, &legacy_post(INIT, ""))
        .header("mcp-session-id")
        .unwrap()
        .to_string();
    let sid = format!("Mcp-Session-Id: {id}\r\n");
    let subscribe = |n: u32, method: &str, uri: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"resources/{method}","params":{{"uri":"{uri}"}}}}"#
        );
        one_on(&server, &legacy_post(&body, &sid))
    };
    assert_eq!(
        subscribe(2, "subscribe", "test://w").json()["result"],
        serde_json::json!({})
    );
    let get =
        format!("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n{sid}\r\n");
    let sock = Sock::with(get.as_bytes());
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    sock.take_output();
    // Subscribed: sent; another URI: not.
    assert!(server.resource_updated("test://w"));
    assert!(server.resource_updated("test://other"));
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    assert_eq!(updated_uris(&sock.take_output()), ["test://w"]);
    // Unsubscribed: no more.
    assert_eq!(subscribe(3, "unsubscribe", "test://w").status, 200);
    assert!(server.resource_updated("test://w"));
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    assert!(updated_uris(&sock.take_output()).is_empty());
    // More updates than are kept before the stream sends them: the oldest are lost
    // (counted), the last 4 go out.
    for n in 0..mcp_rs_embedded::http::MAX_SUBSCRIPTIONS {
        let r = subscribe(10 + n as u32, "subscribe", &format!("test://{n}"));
        assert!(r.json().get("result").is_some(), "{:?}", r.json());
    }
    let dropped = server.stats().dropped;
    for n in 0..6 {
        assert!(server.resource_updated(&format!("test://{n}")));
    }
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    assert_eq!(
        updated_uris(&sock.take_output()),
        ["test://2", "test://3", "test://4", "test://5"]
    );
    assert_eq!(server.stats().dropped, dropped + 2);
    // The session's subscriptions are bounded: one more is refused with an error reply.
    let r = subscribe(30, "subscribe", "test://one-too-many");
    assert_eq!(r.status, 200);
    assert_eq!(error_of(&r).0, -32603);
    // Already subscribed: fine.
    assert!(subscribe(31, "subscribe", "test://0")
        .json()
        .get("result")
        .is_some());
    // A URI too long to keep is refused (nothing sent).
    let long = format!(
        "test://{}",
        "x".repeat(mcp_rs_embedded::http::MAX_UPDATED_URI)
    );
    assert!(!server.resource_updated(&long));
}

#[test]
fn listen_streams_carry_updates_of_their_resource_subscriptions() {
    let server: Server<'static, Watched> =
        Server::new(&INFO, Config::new(SecretKey([3; 16])), Watched);
    let body = modern_body(
        9,
        "subscriptions/listen",
        r#""notifications":{"resourceSubscriptions":["test://w"]}"#,
    );
    let req = post(&body, "Mcp-Method: subscriptions/listen\r\n");
    let sock = Sock::with(req.as_bytes());
    let mut slot = Box::new(TestSlot::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    let head = String::from_utf8(sock.take_output()).unwrap();
    assert!(
        head.contains(r#""resourceSubscriptions":["test://w"]"#),
        "{head}"
    );
    assert!(server.resource_updated("test://other"));
    assert!(server.resource_updated("test://w"));
    assert!(poll_steps(fut.as_mut(), 100).is_none());
    let out = sock.take_output();
    assert_eq!(updated_uris(&out), ["test://w"]);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains(r#""io.modelcontextprotocol/subscriptionId":9"#),
        "{text}"
    );
}

// ---- a deferred prompt that asks the client (legacy sessions) ------------------------

static ASKING: [mcp_rs_core::model::prompts::Prompt<'static>; 1] =
    [mcp_rs_core::model::prompts::Prompt::new(
        "ask",
        "Asks the client's model first",
    )];

/// Defers every `prompts/get`.
struct Prompts;

impl mcp_rs_core::model::prompts::PromptSet for Prompts {
    fn len(&self) -> usize {
        ASKING.len()
    }
    fn get(&self, i: usize) -> Option<mcp_rs_core::model::prompts::Prompt<'_>> {
        ASKING.get(i).copied()
    }
    fn get_prompt(
        &mut self,
        _: &mcp_rs_core::model::prompts::GetPromptRequest<'_>,
        _: &mut mcp_rs_core::model::prompts::PromptResult<'_, '_>,
    ) -> Dispatch {
        Dispatch::Defer
    }
}

impl ServerHandler for Prompts {
    fn prompts(&mut self) -> Option<&mut dyn mcp_rs_core::model::prompts::PromptSet> {
        Some(self)
    }
}

/// Asks the client's model, then completes the prompt with what it said.
struct PromptAsker;

impl<T: embedded_io_async::Write> mcp_rs_embedded::http::CallRunner<T> for PromptAsker {
    async fn run<'c>(
        &'c mut self,
        _: mcp_rs_core::Call<'c>,
        ctx: &'c mut mcp_rs_embedded::http::CallContext<'_, T>,
    ) {
        use mcp_rs_embedded::http::Answer;
        let params = r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}"#;
        let mut buf = [0u8; 256];
        let said = ctx
            .request(
                mcp_rs_core::ClientMethod::CreateMessage,
                params,
                60_000,
                &mut buf,
            )
            .await;
        let mut text = [0u8; 300];
        let n = match said {
            Ok(Answer::Result(r)) => {
                let t = r.get("content").and_then(|c| c.get("text")).unwrap();
                copy(&mut text, t.as_string().unwrap().raw())
            }
            other => copy(&mut text, &format!("{other:?}")),
        };
        let text = std::str::from_utf8(&text[..n]).unwrap();
        ctx.complete_prompt(|r| {
            r.message(mcp_rs_core::Role::User, &mcp_rs_core::Content::Text(text));
        })
        .await;
    }
}

#[test]
fn a_deferred_prompt_asks_the_client_and_completes() {
    let storage = Box::leak(Box::new([[mcp_rs_core::CallSlot::EMPTY; 2]; 2]));
    let mail = Box::leak(Box::new([[0u8; 256]; 2]));
    let server: Server<'static, Prompts, 2> =
        Server::new(&INFO, Config::new(SecretKey([3; 16])), Prompts)
            .with_clock(clock)
            .with_sessions(storage)
            .with_responses(mail);
    let init = INIT.replace(r#""capabilities":{}"#, r#""capabilities":{"sampling":{}}"#);
    let id = one_on(&server, &legacy_post(&init, ""))
        .header("mcp-session-id")
        .unwrap()
        .to_string();
    let sid = format!("Mcp-Session-Id: {id}\r\n");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(one_on(&server, &legacy_post(initialized, &sid)).status, 202);
    let get = r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"ask"}}"#;
    let sock = Sock::with(legacy_post(get, &sid).as_bytes());
    let mut slot = Box::new(TestSlot::new());
    let state = mcp_rs_embedded::http::SlotState::new();
    let mut s = sock.clone();
    let mut runner = PromptAsker;
    let mut a = Box::pin(server.serve_calls(&mut slot, &state, &mut s, &mut runner));
    assert!(poll_steps(a.as_mut(), 1000).is_none(), "the prompt waits");
    let out = String::from_utf8(sock.take_output()).unwrap();
    let asked: Value = out
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find_map(|d| serde_json::from_str(d).ok())
        .expect("the request to the client");
    assert_eq!(asked["method"], "sampling/createMessage");
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"role":"assistant","content":{{"type":"text","text":"a context"}},"model":"m"}}}}"#,
        asked["id"]
    );
    assert_eq!(one_on(&server, &legacy_post(&answer, &sid)).status, 202);
    sock.close();
    assert_eq!(poll_steps(a.as_mut(), 1000), Some(Ended::Closed));
    drop(a);
    let result: Value = String::from_utf8(sock.take_output())
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find_map(|d| serde_json::from_str(d).ok())
        .expect("the prompt's result");
    assert_eq!(result["id"], 2);
    assert_eq!(
        result["result"]["messages"][0]["content"]["text"],
        "a context"
    );
}

/// A socket whose writes fail once the priming event of a resumable stream is out (the
/// client went away).
#[derive(Clone, Default)]
struct Dropping(Sock);

impl embedded_io_async::ErrorType for Dropping {
    type Error = embedded_io_async::ErrorKind;
}

impl embedded_io_async::Read for Dropping {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        Ok(embedded_io_async::Read::read(&mut self.0, buf)
            .await
            .unwrap_or(0))
    }
}

impl embedded_io_async::Write for Dropping {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        let gone = String::from_utf8_lossy(&self.0 .0.borrow().output)
            .contains("retry: 500\ndata: \n\n\r\n");
        if gone {
            return Err(embedded_io_async::ErrorKind::ConnectionReset);
        }
        Ok(embedded_io_async::Write::write(&mut self.0, buf)
            .await
            .unwrap_or(0))
    }
    async fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[test]
fn a_call_whose_client_went_away_runs_on_and_is_resumed() {
    let (server, id) = replay_session::<2048>();
    let sid = format!("Mcp-Session-Id: {id}\r\n");
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}}"#;
    let sock = Dropping(Sock::with(legacy_post(body, &sid).as_bytes()));
    sock.0.close();
    let mut slot = Box::new(TestSlot::new());
    let state = mcp_rs_embedded::http::SlotState::new();
    let mut s = sock.clone();
    let mut runner = Runner { ran: 0 };
    let mut fut = Box::pin(server.serve_calls(&mut slot, &state, &mut s, &mut runner));
    assert!(poll_steps(fut.as_mut(), 1000).is_some());
    drop(fut);
    assert_eq!(runner.ran, 1);
    let out = String::from_utf8(sock.0.take_output()).unwrap();
    assert!(!out.contains("progress"), "{out}");
    // Everything the call sent after the client went away is replayed, and the stream ends.
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n{sid}Last-Event-ID: 1-0\r\n\r\n"
    );
    let rs = run_closer(&server, &get);
    let evs = events(&rs[0].body);
    assert_eq!(
        rs[0].status,
        200,
        "{:?}",
        String::from_utf8_lossy(&rs[0].body)
    );
    let ids: Vec<_> = evs.iter().map(|(id, _)| id.clone().unwrap()).collect();
    // Progress, the log message, progress, the result.
    assert_eq!(ids, ["1-1", "1-2", "1-3", "1-4"], "{evs:?}");
    let result: Value = serde_json::from_str(&evs[3].1).unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "done");
}
