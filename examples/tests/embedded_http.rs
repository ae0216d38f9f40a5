//! `embedded-http` as a process on loopback TCP: both eras, streams, refusals and hostile
//! peers, and then the allocation count it reports: zero after start-up.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_examples::fixtures::RECONNECTION_TEXT;
use serde_json::Value;

struct Server {
    child: Child,
    addr: String,
    report: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.report);
    }
}

fn start(name: &str) -> Server {
    start_with(name, &[])
}

/// [`start`] with more arguments.
fn start_with(name: &str, args: &[&str]) -> Server {
    let report = std::env::temp_dir().join(format!(
        "embedded-http-{name}-{}.report",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&report);
    let mut child = Command::new(env!("CARGO_BIN_EXE_embedded-http"))
        .args(["--listen", "127.0.0.1:0", "--report"])
        .arg(&report)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let line = String::from_utf8(line).unwrap();
    let addr = line.strip_prefix("listening on ").expect(&line).to_string();
    Server {
        child,
        addr,
        report,
    }
}

impl Server {
    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }
    /// The report once `connections` connections have ended.
    fn report(&self, connections: u64) -> (u64, u64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(text) = std::fs::read_to_string(&self.report) {
                let field = |k: &str| {
                    text.lines()
                        .find_map(|l| l.strip_prefix(k)?.strip_prefix('='))
                        .and_then(|v| v.parse::<u64>().ok())
                };
                if let (Some(a), Some(c)) = (field("allocations_after_start"), field("connections"))
                {
                    if c >= connections {
                        return (a, c);
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "no report for {connections} connections"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Reads one response: status, headers (lowercased names) and body (`Content-Length`, or
/// chunked until `until` is found in it or the stream ends).
fn read_response(s: &mut TcpStream, until: Option<&str>) -> (u16, Vec<(String, String)>, String) {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        assert_eq!(
            s.read(&mut byte).unwrap(),
            1,
            "{}",
            String::from_utf8_lossy(&buf)
        );
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).unwrap();
    let mut lines = head.lines();
    let status: u16 = lines.next().unwrap()[9..12].parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    let get = |k: &str| headers.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if let Some(len) = get("content-length") {
        body.resize(len.parse().unwrap(), 0);
        s.read_exact(&mut body).unwrap();
    } else {
        let until = until.unwrap_or("\r\n0\r\n\r\n");
        while !String::from_utf8_lossy(&body).contains(until) {
            let mut chunk = [0u8; 4096];
            let n = s.read(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    (status, headers, String::from_utf8(body).unwrap())
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
/// The same, with a progress token and the log level the call's messages need.
const META_PROGRESS: &str = r#""_meta":{"progressToken":1,"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn modern(id: u32, method: &str, name: Option<&str>, params: &str) -> String {
    modern_with(id, method, name, params, META)
}

fn modern_with(id: u32, method: &str, name: Option<&str>, params: &str, meta: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}{meta}}}}}"#
    );
    let name = name
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn legacy(body: &str, session: Option<&str>) -> String {
    let sid = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{sid}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[test]
fn serving_allocates_nothing_after_start_up() {
    let server = start("alloc");
    let mut connections = 0;
    // 2026-07-28: every inline tool, resources, prompts, completion, on one connection.
    let mut s = server.connect();
    let tools = [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_error_handling",
        "json_schema_2020_12_tool",
        "test_trigger_tool_change",
        "test_tool_with_progress", // deferred, run on the slot: an SSE response
        "test_tool_with_logging",  // the same
        "test_reconnection",       // deferred; 2026-07-28: no stream to close, answered
    ];
    for (i, tool) in tools.iter().enumerate() {
        let req = modern_with(
            i as u32,
            "tools/call",
            Some(tool),
            &format!(r#""name":"{tool}","arguments":{{}}"#),
            META_PROGRESS,
        );
        s.write_all(req.as_bytes()).unwrap();
        let (status, headers, body) = read_response(&mut s, None);
        let sse = headers
            .iter()
            .any(|(k, v)| k == "content-type" && v == "text/event-stream");
        // An SSE body: the last event is the response.
        let last = if sse {
            body.lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .next_back()
                .unwrap()
                .to_string()
        } else {
            body.clone()
        };
        let reply = json(&last);
        match *tool {
            "test_reconnection" => {
                assert_eq!(reply["result"]["content"][0]["text"], RECONNECTION_TEXT)
            }
            "test_tool_with_progress" => {
                assert!(
                    sse && body.matches("notifications/progress").count() == 3,
                    "{body}"
                );
                assert_eq!(
                    reply["result"]["content"][0]["text"],
                    "Progress test completed"
                );
            }
            _ => assert!(reply.get("result").is_some(), "{tool}: {body}"),
        }
        assert_eq!(status, 200, "{tool}: {body}");
    }
    for (method, name, params) in [
        ("tools/list", None, ""),
        ("resources/list", None, ""),
        (
            "resources/read",
            Some("test://template/42/data"),
            r#""uri":"test://template/42/data""#,
        ),
        (
            "resources/read",
            Some("test://static-binary"),
            r#""uri":"test://static-binary""#,
        ),
        (
            "prompts/get",
            Some("test_prompt_with_arguments"),
            r#""name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b"}"#,
        ),
        (
            "completion/complete",
            None,
            r#""ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"pa"}"#,
        ),
        ("server/discover", None, ""),
    ] {
        s.write_all(modern(7, method, name, params).as_bytes())
            .unwrap();
        let (status, _, body) = read_response(&mut s, None);
        assert_eq!(status, 200, "{method}: {body}");
    }
    // A header mismatch and a body too large.
    s.write_all(
        modern(
            8,
            "tools/call",
            Some("other"),
            r#""name":"test_simple_text""#,
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(read_response(&mut s, None).0, 400);
    drop(s);
    connections += 1;
    // A listen stream gets the list change a call on another connection triggers.
    let mut listen = server.connect();
    listen
        .write_all(
            modern(
                1,
                "subscriptions/listen",
                None,
                r#""notifications":{"toolsListChanged":true}"#,
            )
            .as_bytes(),
        )
        .unwrap();
    let (status, _, ack) = read_response(&mut listen, Some("acknowledged"));
    assert_eq!(status, 200, "{ack}");
    let mut other = server.connect();
    let trigger = modern(
        2,
        "tools/call",
        Some("test_trigger_tool_change"),
        r#""name":"test_trigger_tool_change""#,
    );
    other.write_all(trigger.as_bytes()).unwrap();
    assert_eq!(read_response(&mut other, None).0, 200);
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("notifications/tools/list_changed") {
        let mut chunk = [0u8; 1024];
        let n = listen.read(&mut chunk).unwrap();
        assert!(n > 0);
        seen.extend_from_slice(&chunk[..n]);
    }
    drop((listen, other));
    connections += 2;
    // Legacy: a session, its requests, its GET stream, DELETE.
    let mut s = server.connect();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    s.write_all(legacy(init, None).as_bytes()).unwrap();
    let (status, headers, _) = read_response(&mut s, None);
    assert_eq!(status, 200);
    let sid = headers
        .iter()
        .find(|(k, _)| k == "mcp-session-id")
        .unwrap()
        .1
        .clone();
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"info"}}"#,
    ] {
        s.write_all(legacy(body, Some(&sid)).as_bytes()).unwrap();
        let (status, _, body) = read_response(&mut s, None);
        assert!(status == 200 || status == 202, "{status} {body}");
    }
    let mut get = server.connect();
    let get_req = format!("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {sid}\r\n\r\n");
    get.write_all(get_req.as_bytes()).unwrap();
    let mut head = [0u8; 17];
    get.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200 OK\r\n");
    get.shutdown(Shutdown::Both).unwrap();
    drop(get);
    connections += 1;
    let delete =
        format!("DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: {sid}\r\n\r\n");
    s.write_all(delete.as_bytes()).unwrap();
    assert_eq!(read_response(&mut s, None).0, 200);
    s.write_all(delete.as_bytes()).unwrap();
    assert_eq!(read_response(&mut s, None).0, 404);
    drop(s);
    connections += 1;
    // Refusals that close the connection.
    for req in [
        "GET /other HTTP/1.1\r\nHost: localhost\r\n\r\n".to_string(),
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".to_string(),
        format!("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", 1 << 20),
        format!("GET /mcp HTTP/1.1\r\nHost: localhost\r\nX: {}\r\n\r\n", "a".repeat(20_000)),
    ] {
        let mut s = server.connect();
        let _ = s.write_all(req.as_bytes());
        let (status, _, _) = read_response(&mut s, None);
        assert!([403, 404, 413, 431].contains(&status), "{status}");
        connections += 1;
    }
    let (allocations, seen) = server.report(connections);
    assert!(seen >= connections);
    assert_eq!(allocations, 0, "allocations while serving");
}

#[test]
fn stalled_peers_hold_only_their_slots_and_the_rest_get_503() {
    let server = start("hostile");
    let call = |i| {
        modern(
            i,
            "tools/call",
            Some("test_simple_text"),
            r#""name":"test_simple_text""#,
        )
    };
    // Every slot but one held by a peer that sent half a head and stalls.
    let mut stalled: Vec<TcpStream> = (0..15)
        .map(|_| {
            let mut s = server.connect();
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: loc").unwrap();
            s
        })
        .collect();
    // The last slot still serves, request after request.
    let mut s = server.connect();
    for i in 0..3 {
        s.write_all(call(i).as_bytes()).unwrap();
        assert_eq!(read_response(&mut s, None).0, 200);
    }
    // It now idles between requests: a new connection takes its slot, and it is closed.
    let mut newer = server.connect();
    newer.write_all(call(4).as_bytes()).unwrap();
    assert_eq!(read_response(&mut newer, None).0, 200);
    let mut rest = Vec::new();
    assert_eq!(
        s.read_to_end(&mut rest).unwrap(),
        0,
        "the idle connection was closed"
    );
    // Every slot busy with a request in progress: the next connection gets 503, closed.
    newer.write_all(b"POST /mcp HTTP/1.1\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut extra = server.connect();
    let (status, headers, body) = read_response(&mut extra, None);
    assert_eq!(status, 503, "{body}");
    assert_eq!(json(&body)["error"]["code"], -32603);
    assert!(headers
        .iter()
        .any(|(k, v)| k == "connection" && v == "close"));
    // A stalled peer that leaves frees its slot.
    drop(stalled.pop());
    std::thread::sleep(Duration::from_millis(100));
    let mut again = server.connect();
    again.write_all(call(9).as_bytes()).unwrap();
    assert_eq!(read_response(&mut again, None).0, 200);
}

/// The data of the last SSE event of `body`, or `body` itself (a JSON response).
fn last_frame(body: &str) -> Value {
    let last = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .next_back()
        .unwrap_or(body);
    json(last)
}

#[test]
fn client_input_rounds_allocate_nothing() {
    let server = start("input");
    let mut connections = 0;
    // 2026-07-28: three rounds of test_input_required_result_multi_round on one connection,
    // the sealed state carried by the client.
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let tool = "test_input_required_result_multi_round";
    let mut s = server.connect();
    let mut extra = String::new();
    let answers = [
        r#""step1":{"action":"accept","content":{"name":"Ada"}}"#,
        r#""step2":{"action":"accept","content":{"color":"teal"}}"#,
    ];
    for round in 0..3 {
        let params = format!(r#""name":"{tool}","arguments":{{}}{extra}"#);
        let req = modern_with(round, "tools/call", Some(tool), &params, meta);
        s.write_all(req.as_bytes()).unwrap();
        let (status, _, body) = read_response(&mut s, None);
        assert_eq!(status, 200, "{body}");
        let result = &last_frame(&body)["result"];
        if round == 2 {
            assert_eq!(
                result["content"][0]["text"], "Multi-round complete for Ada who likes teal",
                "{body}"
            );
            break;
        }
        assert_eq!(result["resultType"], "input_required", "{body}");
        let state = result["requestState"].as_str().expect("a sealed state");
        extra = format!(
            r#","inputResponses":{{{}}},"requestState":"{state}""#,
            answers[round as usize]
        );
    }
    drop(s);
    connections += 1;
    // Legacy: test_sampling asks the client on its SSE response; the answer comes on
    // another connection (202) and the call ends with what the model said.
    let mut s = server.connect();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
    s.write_all(legacy(init, None).as_bytes()).unwrap();
    let (_, headers, _) = read_response(&mut s, None);
    let sid = headers
        .iter()
        .find(|(k, _)| k == "mcp-session-id")
        .unwrap()
        .1
        .clone();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    s.write_all(legacy(initialized, Some(&sid)).as_bytes())
        .unwrap();
    assert_eq!(read_response(&mut s, None).0, 202);
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"Say hi"}}}"#;
    s.write_all(legacy(call, Some(&sid)).as_bytes()).unwrap();
    // The resumable stream's priming event (empty data), then the request.
    let (status, _, asked) = read_response(&mut s, Some("}\n\n"));
    assert_eq!(status, 200);
    let request = last_frame(asked.lines().find(|l| l.starts_with("data: {")).unwrap());
    assert_eq!(request["method"], "sampling/createMessage", "{asked}");
    assert_eq!(
        request["params"]["messages"][0]["content"]["text"],
        "Say hi"
    );
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"role":"assistant","content":{{"type":"text","text":"Hi!"}},"model":"m"}}}}"#,
        request["id"]
    );
    let mut other = server.connect();
    other
        .write_all(legacy(&answer, Some(&sid)).as_bytes())
        .unwrap();
    assert_eq!(read_response(&mut other, None).0, 202);
    drop(other);
    connections += 1;
    let mut rest = Vec::new();
    while !String::from_utf8_lossy(&rest).contains("\r\n0\r\n\r\n") {
        let mut chunk = [0u8; 1024];
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&rest));
        rest.extend_from_slice(&chunk[..n]);
    }
    let rest = String::from_utf8(rest).unwrap();
    let done = last_frame(&rest);
    assert_eq!(
        done["result"]["content"][0]["text"], "LLM response: Hi!",
        "{rest}"
    );
    // An input_required fixture in the legacy session: driven with server-to-client
    // requests; this session declared sampling only, so its roots request is refused.
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_input_required_result_list_roots","arguments":{}}}"#;
    s.write_all(legacy(call, Some(&sid)).as_bytes()).unwrap();
    let (status, _, body) = read_response(&mut s, None);
    assert_eq!(status, 200);
    assert_eq!(last_frame(&body)["result"]["isError"], true, "{body}");
    drop(s);
    connections += 1;
    // A session with roots: the fixture asks roots/list, the answer comes on another
    // connection.
    let mut s = server.connect();
    let init = init.replace(r#"{"sampling":{}}"#, r#"{"roots":{}}"#);
    s.write_all(legacy(&init, None).as_bytes()).unwrap();
    let (_, headers, _) = read_response(&mut s, None);
    let sid = headers
        .iter()
        .find(|(k, _)| k == "mcp-session-id")
        .unwrap()
        .1
        .clone();
    s.write_all(legacy(initialized, Some(&sid)).as_bytes())
        .unwrap();
    assert_eq!(read_response(&mut s, None).0, 202);
    s.write_all(legacy(call, Some(&sid)).as_bytes()).unwrap();
    let (_, _, asked) = read_response(&mut s, Some("}\n\n"));
    let request = last_frame(asked.lines().find(|l| l.starts_with("data: {")).unwrap());
    assert_eq!(request["method"], "roots/list", "{asked}");
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"roots":[{{"uri":"file:///a"}},{{"uri":"file:///b"}}]}}}}"#,
        request["id"]
    );
    let mut other = server.connect();
    other
        .write_all(legacy(&answer, Some(&sid)).as_bytes())
        .unwrap();
    assert_eq!(read_response(&mut other, None).0, 202);
    drop(other);
    connections += 1;
    let mut rest = Vec::new();
    while !String::from_utf8_lossy(&rest).contains("\r\n0\r\n\r\n") {
        let mut chunk = [0u8; 1024];
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&rest));
        rest.extend_from_slice(&chunk[..n]);
    }
    let rest = String::from_utf8(rest).unwrap();
    assert_eq!(
        last_frame(&rest)["result"]["content"][0]["text"],
        "Found 2 root(s): file:///a, file:///b",
        "{rest}"
    );
    drop(s);
    connections += 1;
    let (allocations, seen) = server.report(connections);
    assert!(seen >= connections);
    assert_eq!(allocations, 0, "allocations while serving");
}

/// Reads a chunked SSE body from `s` until `until` appears in it.
fn read_until(s: &mut TcpStream, until: &str) -> String {
    let mut body = Vec::new();
    while !String::from_utf8_lossy(&body).contains(until) {
        let mut chunk = [0u8; 4096];
        let n = s.read(&mut chunk).unwrap();
        assert!(
            n > 0,
            "ended before {until}: {}",
            String::from_utf8_lossy(&body)
        );
        body.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8(body).unwrap()
}

#[test]
fn resource_updates_and_resumed_streams_allocate_nothing() {
    // test://watched-resource changes every 50 ms.
    let server = start_with("updates", &["--watch-every", "50"]);
    let mut connections = 0;
    // 2026-07-28: a listen stream subscribed to it gets notifications/resources/updated.
    let mut s = server.connect();
    let listen = modern(
        1,
        "subscriptions/listen",
        None,
        r#""notifications":{"resourceSubscriptions":["test://watched-resource"]}"#,
    );
    s.write_all(listen.as_bytes()).unwrap();
    let (status, _, body) = read_response(&mut s, Some("acknowledged"));
    assert_eq!(status, 200, "{body}");
    let body = read_until(&mut s, "notifications/resources/updated");
    assert!(
        body.contains(r#""uri":"test://watched-resource""#) && body.contains("subscriptionId"),
        "{body}"
    );
    drop(s);
    connections += 1;
    // Legacy: a session subscribed to it gets them on its GET stream.
    let mut s = server.connect();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    s.write_all(legacy(init, None).as_bytes()).unwrap();
    let (_, headers, _) = read_response(&mut s, None);
    let sid = headers
        .iter()
        .find(|(k, _)| k == "mcp-session-id")
        .unwrap()
        .1
        .clone();
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}"#,
    ] {
        s.write_all(legacy(body, Some(&sid)).as_bytes()).unwrap();
        let (status, _, body) = read_response(&mut s, None);
        assert!(status == 200 || status == 202, "{status} {body}");
    }
    let mut get = server.connect();
    let get_req = format!("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {sid}\r\n\r\n");
    get.write_all(get_req.as_bytes()).unwrap();
    let out = read_until(&mut get, "notifications/resources/updated");
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    assert!(out.contains(r#""uri":"test://watched-resource""#), "{out}");
    drop(get);
    connections += 1;
    // Resumption: test_reconnection ends its POST stream after the priming event; the result
    // comes on the GET that resumes from the priming event's id.
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_reconnection","arguments":{}}}"#;
    s.write_all(legacy(call, Some(&sid)).as_bytes()).unwrap();
    let (status, _, body) = read_response(&mut s, None);
    assert_eq!(status, 200);
    assert!(!body.contains("result"), "{body}");
    let id = body
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .expect("a priming event")
        .to_string();
    assert!(body.contains("retry: 500"), "{body}");
    let resume = format!("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {sid}\r\nLast-Event-ID: {id}\r\n\r\n");
    s.write_all(resume.as_bytes()).unwrap();
    let (status, _, body) = read_response(&mut s, None);
    assert_eq!(status, 200);
    assert!(body.contains(RECONNECTION_TEXT), "{body}");
    drop(s);
    connections += 1;
    let (allocations, _) = server.report(connections);
    assert_eq!(allocations, 0, "allocations while serving");
}
