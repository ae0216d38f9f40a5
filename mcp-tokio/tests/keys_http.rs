//! Shared keys and rotation over Streamable HTTP: two servers on loopback stand for two
//! instances behind a load balancer. A 2026-07-28 page walk and an `input_required` round
//! trip started on the instance under key A continue on the one under B with A as its
//! previous key, and are refused once A is retired (its grace period over, or dropped from
//! the keys). Keys come from a file and are reloaded when it changes and on SIGHUP; a bad
//! file keeps the old keys. Every response names its instance (`HttpConfig::response_headers`).
#[cfg(not(feature = "http"))]
compile_error!("needs feature `http`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

use std::time::Duration;

use mcp_rs_core::token::mac::PreviousKey;
use mcp_rs_core::{Config, SecretKey};
use mcp_rs_tokio::http::HttpConfig;
use mcp_rs_tokio::{Handler, KeySource, Keys, Limits, Server, ServerInfo, ToolDef, Tools};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const OBJECT: &str = r#"{"type":"object"}"#;
const A: SecretKey = SecretKey([0xa1; 16]);
const B: SecretKey = SecretKey([0xb2; 16]);
const HEX_A: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
const HEX_B: &str = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// An instance named `name` under `keys`: seven tools, two per page, one of which asks for
/// confirmation (`input_required` with sealed state).
async fn instance(name: &str, keys: Keys) -> (Server, std::net::SocketAddr) {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("confirm", OBJECT),
        Handler::sync(|call, r| match call.input().state() {
            None => r.input_required(Some("step:1"), |q| {
                q.elicit(
                    "ok",
                    "Proceed?",
                    r#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#,
                );
            }),
            Some(state) => {
                r.text(&format!("confirmed after {state}"));
            }
        }),
    );
    for i in 1..=6 {
        tools.add(
            ToolDef::new(format!("t{i}"), OBJECT),
            Handler::sync(|_, r| {
                r.text("ok");
            }),
        );
    }
    let mut config = Config::new(A);
    config.page_size = 2;
    keys.apply(&mut config);
    let info = ServerInfo {
        name: "keys-test".into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::with(info, config, Limits::default(), tools);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut http = HttpConfig::default();
    http.response_headers
        .insert("mcp-instance", name.parse().unwrap());
    let s = server.clone();
    tokio::spawn(async move { s.serve_http_with(listener, http).await.unwrap() });
    (server, addr)
}

struct Reply {
    status: u16,
    instance: Option<String>,
    body: Value,
}

/// One 2026-07-28 request over a fresh connection (`Connection: close`).
async fn modern(addr: std::net::SocketAddr, method: &str, mut params: Value) -> Reply {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(name) = name {
        head.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .await
        .unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("a response within 10 s")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete response");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let instance = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-instance: "))
        .map(str::to_string);
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    Reply {
        status,
        instance,
        body,
    }
}

fn cursor(r: &Reply) -> String {
    r.body["result"]["nextCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("no nextCursor: {}", r.body))
        .to_string()
}

fn names(r: &Reply) -> Vec<String> {
    r.body["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {}", r.body))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn answer(state: &str) -> Value {
    json!({
        "name": "confirm",
        "arguments": {},
        "requestState": state,
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}},
    })
}

fn rotated(not_after_ms: u64) -> Keys {
    Keys {
        current: B,
        previous: Some(PreviousKey {
            key: A,
            not_after_ms,
        }),
    }
}

#[tokio::test]
async fn a_walk_and_a_round_trip_survive_a_rotation_until_the_old_key_retires() {
    let (_, a) = instance(
        "a",
        Keys {
            current: A,
            previous: None,
        },
    )
    .await;
    let (b_server, b) = instance("b", rotated(now_ms() + 600_000)).await;

    // Page 1 on a (key A), pages 2.. on b (key B, A previous).
    let first = modern(a, "tools/list", json!({})).await;
    assert_eq!((first.status, first.instance.as_deref()), (200, Some("a")));
    assert_eq!(names(&first), ["confirm", "t1"]);
    let under_a = cursor(&first);
    let second = modern(b, "tools/list", json!({ "cursor": under_a })).await;
    assert_eq!(
        (second.status, second.instance.as_deref()),
        (200, Some("b")),
        "{}",
        second.body
    );
    assert_eq!(names(&second), ["t2", "t3"]);
    // b signs with B: a (A only) cannot continue from b's cursor.
    let under_b = cursor(&second);
    let r = modern(a, "tools/list", json!({ "cursor": under_b })).await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_i64()),
        (400, Some(-32602)),
        "{}",
        r.body
    );
    let third = modern(b, "tools/list", json!({ "cursor": under_b })).await;
    assert_eq!(names(&third), ["t4", "t5"]);

    // input_required on a, the answer on b.
    let asked = modern(a, "tools/call", json!({"name": "confirm", "arguments": {}})).await;
    assert_eq!(
        asked.body["result"]["resultType"], "input_required",
        "{}",
        asked.body
    );
    let state = asked.body["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let done = modern(b, "tools/call", answer(&state)).await;
    assert_eq!(done.instance.as_deref(), Some("b"));
    assert_eq!(
        done.body["result"]["content"][0]["text"], "confirmed after step:1",
        "{}",
        done.body
    );

    // A's grace period ends: its cursor and state are refused (-32602 is HTTP 400).
    b_server.set_keys(rotated(now_ms() - 1));
    let r = modern(b, "tools/list", json!({ "cursor": under_a })).await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_i64()),
        (400, Some(-32602)),
        "{}",
        r.body
    );
    let r = modern(b, "tools/call", answer(&state)).await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_i64()),
        (400, Some(-32602)),
        "{}",
        r.body
    );
    // B's own cursor still pages.
    assert_eq!(
        names(&modern(b, "tools/list", json!({ "cursor": under_b })).await),
        ["t4", "t5"]
    );

    // Dropping A from the keys has the same effect; putting it back (a new grace period)
    // restores it: keys are read per request.
    b_server.set_keys(Keys {
        current: B,
        previous: None,
    });
    let r = modern(b, "tools/list", json!({ "cursor": under_a })).await;
    assert_eq!(r.status, 400, "{}", r.body);
    b_server.set_keys(rotated(now_ms() + 600_000));
    let r = modern(b, "tools/list", json!({ "cursor": under_a })).await;
    assert_eq!(names(&r), ["t2", "t3"]);
}

/// Waits until `server` has `want` keys (reloads happen on a background task).
async fn until_keys(server: &Server, want: Keys, what: &str) {
    for _ in 0..500 {
        if server.keys() == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}: keys not reloaded within 5 s: {:?}", server.keys());
}

#[tokio::test]
async fn keys_reload_from_a_file_on_change_and_on_sighup() {
    let dir = std::env::temp_dir().join(format!("mcp-keys-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("keys");
    std::fs::write(&path, format!("current = {HEX_A}\n")).unwrap();
    let source = KeySource::File(path.clone());
    let keys = source.load().unwrap();
    let (server, addr) = instance("a", keys).await;
    let under_a = cursor(&modern(addr, "tools/list", json!({})).await);

    // File changes are picked up (polled every 20 ms).
    let reloader = server.reload_keys(source.clone(), Some(Duration::from_millis(20)));
    let not_after = now_ms() / 1000 + 600;
    std::fs::write(
        &path,
        format!("current = {HEX_B}\nprevious = {HEX_A}\nprevious_not_after = {not_after}\n"),
    )
    .unwrap();
    until_keys(&server, rotated(not_after * 1000), "file change").await;
    let r = modern(addr, "tools/list", json!({ "cursor": under_a })).await;
    assert_eq!(names(&r), ["t2", "t3"], "{}", r.body);
    let under_b = cursor(&r);

    // A broken file changes nothing.
    std::fs::write(&path, "current = not-a-key\n").unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.keys(), rotated(not_after * 1000));

    // SIGHUP reloads too (here with polling off: a second reloader on signals only).
    reloader.abort();
    let _hup = server.reload_keys(source, None);
    tokio::time::sleep(Duration::from_millis(50)).await; // the handler is installed
    std::fs::write(&path, format!("current = {HEX_B}\n")).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-HUP", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    until_keys(
        &server,
        Keys {
            current: B,
            previous: None,
        },
        "SIGHUP",
    )
    .await;
    let r = modern(addr, "tools/list", json!({ "cursor": under_a })).await;
    assert_eq!(r.status, 400, "A retired: {}", r.body);
    let r = modern(addr, "tools/list", json!({ "cursor": under_b })).await;
    assert_eq!(names(&r), ["t4", "t5"]);
    server.shutdown();
    std::fs::remove_dir_all(&dir).unwrap();
}
