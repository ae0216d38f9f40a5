//! The client over TCP and Unix sockets against the real `tcp` example server, and over a
//! loopback bridge to a `calculator` child whose tap records what the client sends.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_rs_tokio::client::{
    CallOptions, Client, ClientError, ClientOptions, Era, LogLevel, Notification, Progress, Root,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

mod common;
use common::example_bin;

fn modern() -> ClientOptions {
    ClientOptions::with_era(Era::Modern)
}

// ---- the `tcp` example -------------------------------------------------------------------

/// A running `tcp` example server (killed on drop).
struct TcpServer {
    _child: Child,
    addr: String,
    #[cfg(unix)]
    unix: PathBuf,
}

impl Drop for TcpServer {
    fn drop(&mut self) {
        #[cfg(unix)]
        let _ = std::fs::remove_file(&self.unix);
    }
}

async fn tcp_server(extra: &[&str]) -> TcpServer {
    static N: AtomicUsize = AtomicUsize::new(0);
    let unix = std::env::temp_dir().join(format!(
        "mcp-rs-client-{}-{}.sock",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let mut cmd = Command::new(example_bin("tcp"));
    cmd.args(["--listen", "127.0.0.1:0"]);
    if cfg!(unix) {
        cmd.arg("--unix").arg(&unix);
    }
    cmd.args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("start the tcp example");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut addr = None;
    let mut unix_ready = !cfg!(unix);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while addr.is_none() || !unix_ready {
        let line = tokio::time::timeout_at(deadline, lines.next_line())
            .await
            .expect("the tcp example prints its address")
            .unwrap()
            .expect("the tcp example exited early");
        if let Some(rest) = line.split("listening on ").nth(1) {
            match rest.strip_prefix("unix:") {
                Some(_) => unix_ready = true,
                None => addr = Some(rest.trim().to_owned()),
            }
        }
    }
    // Keep draining stderr so the server never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    TcpServer {
        _child: child,
        addr: addr.unwrap(),
        #[cfg(unix)]
        unix,
    }
}

/// A full exchange: list across pages, calls, a tool error, progress, a timeout.
async fn exercise(client: &Client) {
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 5 + 60);
    assert_eq!(tools[0].name, "add_numbers");
    assert_eq!(tools[64].name, "extra_tool_060");

    let sum = client
        .call_tool("add_numbers", json!({"number1": 2, "number2": 40}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 42.0})));
    let div = client
        .call_tool("calculate", json!({"operation": "divide", "a": 1, "b": 0}))
        .await
        .unwrap();
    assert!(div.is_error);
    let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(unknown.code(), Some(-32602));

    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
    let counted = client
        .call_tool_with(
            "slow_count",
            json!({"n": 3, "delay_ms": 10}),
            CallOptions::new().with_progress(tx),
        )
        .await
        .unwrap();
    assert_eq!(counted.text(), "Counted to 3");
    let mut steps = Vec::new();
    while let Ok(p) = rx.try_recv() {
        steps.push(p.message.unwrap_or_default());
    }
    assert_eq!(steps, ["1/3", "2/3", "3/3"]);

    let timed_out = client
        .call_tool_with(
            "slow_count",
            json!({"n": 100, "delay_ms": 100}),
            CallOptions::new().with_timeout(Duration::from_millis(150)),
        )
        .await
        .unwrap_err();
    assert!(matches!(timed_out, ClientError::Timeout), "{timed_out:?}");
    let after = client
        .call_tool(
            "calculate",
            json!({"operation": "multiply", "a": 6, "b": 7}),
        )
        .await
        .unwrap();
    assert_eq!(after.text(), "6 * 7 = 42");
}

#[tokio::test]
async fn tcp_legacy() {
    let server = tcp_server(&["--extra-tools", "60"]).await;
    let client = Client::connect_tcp(&server.addr).await.unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    client.ping().await.unwrap();
    exercise(&client).await;
    assert_eq!(client.close().await.unwrap(), None);
}

#[tokio::test]
async fn tcp_modern() {
    let server = tcp_server(&["--extra-tools", "60"]).await;
    let client = Client::connect_tcp_with(&server.addr, modern())
        .await
        .unwrap();
    let details = client.discover().await.unwrap();
    assert_eq!(details.server_info.unwrap().name, "mcp-rs-calculator");
    exercise(&client).await;
}

#[tokio::test]
async fn tcp_auto_and_independent_sessions() {
    let server = tcp_server(&["--extra-tools", "60"]).await;
    let auto = Client::connect_tcp_with(&server.addr, ClientOptions::with_era(Era::Auto))
        .await
        .unwrap();
    assert!(auto.is_modern());
    let legacy = Client::connect_tcp(&server.addr).await.unwrap();
    assert!(!legacy.is_modern());
    let (a, b) = tokio::join!(exercise(&auto), exercise(&legacy));
    let ((), ()) = (a, b);
    // Closing one connection leaves the other working.
    auto.close().await.unwrap();
    legacy.ping().await.unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn unix_legacy_and_modern() {
    let server = tcp_server(&["--extra-tools", "60"]).await;
    let legacy = Client::connect_unix(&server.unix).await.unwrap();
    assert!(!legacy.is_modern());
    exercise(&legacy).await;
    let modern = Client::connect_unix_with(&server.unix, modern())
        .await
        .unwrap();
    exercise(&modern).await;
}

#[tokio::test]
async fn tcp_explicit_cancel_stops_the_work() {
    let server = tcp_server(&[]).await;
    let client = Client::connect_tcp(&server.addr).await.unwrap();
    let mut notes = client.notifications();
    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
    let call = client.call_tool_with(
        "slow_count",
        json!({"n": 100, "delay_ms": 30}),
        CallOptions::new().with_progress(tx),
    );
    let id = call.id();
    let waiter = tokio::spawn(call);
    rx.recv().await.expect("progress");
    assert!(client.cancel(id, Some("enough")));
    assert!(matches!(waiter.await.unwrap(), Err(ClientError::Cancelled)));
    // Progress for the ended request never reaches the general notifications.
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Ok(n) = notes.try_recv() {
        assert!(
            !matches!(n, Notification::ListChanged(_)),
            "unexpected {n:?}"
        );
    }
    client.ping().await.unwrap();
}

#[tokio::test]
async fn connection_refused_is_io() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = Client::connect_tcp(addr).await.unwrap_err();
    assert!(matches!(err, ClientError::Io(_)), "{err:?}");
}

// ---- a loopback bridge to a calculator child, tapping client → server lines --------------

/// A TCP listener that serves each connection by a fresh `calculator` child (stdio bridged
/// both ways) and records every line the client sent.
struct Bridge {
    addr: std::net::SocketAddr,
    sent: Arc<Mutex<Vec<Value>>>,
}

impl Bridge {
    async fn start() -> Bridge {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sent = Arc::new(Mutex::new(Vec::new()));
        let tap = Arc::clone(&sent);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let tap = Arc::clone(&tap);
                tokio::spawn(async move {
                    let mut child = Command::new(example_bin("calculator"))
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::null())
                        .kill_on_drop(true)
                        .spawn()
                        .unwrap();
                    let mut stdin = child.stdin.take().unwrap();
                    let mut stdout = child.stdout.take().unwrap();
                    let (read, mut write) = socket.into_split();
                    let up = async move {
                        let mut lines = BufReader::new(read).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            if let Ok(v) = serde_json::from_str(&line) {
                                tap.lock().unwrap().push(v);
                            }
                            let line = line + "\n";
                            if stdin.write_all(line.as_bytes()).await.is_err() {
                                break;
                            }
                        }
                    };
                    let down = async move {
                        let _ = tokio::io::copy(&mut stdout, &mut write).await;
                    };
                    tokio::select! { _ = up => {}, _ = down => {} }
                    let _ = child.kill().await;
                });
            }
        });
        Bridge { addr, sent }
    }

    fn sent(&self) -> Vec<Value> {
        self.sent.lock().unwrap().clone()
    }

    /// The `notifications/cancelled` params the client sent.
    fn cancellations(&self) -> Vec<Value> {
        self.sent()
            .into_iter()
            .filter(|m| m["method"] == "notifications/cancelled")
            .map(|m| m["params"].clone())
            .collect()
    }
}

async fn eventually(mut f: impl FnMut() -> bool) {
    for _ in 0..200 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not reached");
}

#[tokio::test]
async fn legacy_wire_shapes() {
    let bridge = Bridge::start().await;
    let client = Client::connect_tcp(bridge.addr).await.unwrap();
    client.list_tools().await.unwrap();
    let sent = bridge.sent();
    assert_eq!(sent[0]["method"], "initialize");
    assert_eq!(sent[0]["id"], 1);
    assert_eq!(sent[0]["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(sent[0]["params"]["clientInfo"]["name"], "mcp-rs-client");
    assert_eq!(sent[0]["params"]["capabilities"], json!({}));
    assert_eq!(
        sent[1],
        json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
    );
    assert_eq!(
        sent[2],
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    );
    for m in &sent {
        assert_eq!(m["jsonrpc"], "2.0");
        assert!(
            m["params"].get("_meta").is_none(),
            "no _meta in legacy: {m}"
        );
    }
}

#[tokio::test]
async fn modern_wire_shapes() {
    let bridge = Bridge::start().await;
    let options = ClientOptions {
        ..modern().with_roots(vec![Root::new("file:///tmp", "tmp")])
    };
    let client = Client::connect_tcp_with(bridge.addr, options)
        .await
        .unwrap();
    let (tx, _rx) = mpsc::unbounded_channel::<Progress>();
    client
        .call_tool_with(
            "slow_count",
            json!({"n": 1, "delay_ms": 0}),
            CallOptions::new()
                .with_progress(tx)
                .with_log_level(LogLevel::Info),
        )
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    let mut sent = bridge.sent();
    assert_eq!(sent[0]["method"], "server/discover", "{sent:?}");
    sent.remove(0);
    assert_eq!(sent.len(), 2, "discover, then no handshake: {sent:?}");
    for m in &sent {
        let meta = &m["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({"roots": {}})
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "mcp-rs-client"
        );
    }
    let call = &sent[0]["params"];
    assert_eq!(call["name"], "slow_count");
    assert!(call["_meta"]["progressToken"].is_u64());
    assert_eq!(call["_meta"]["io.modelcontextprotocol/logLevel"], "info");
    assert!(sent[1]["params"]["_meta"].get("progressToken").is_none());
}

#[tokio::test]
async fn timeout_and_drop_send_cancelled() {
    let bridge = Bridge::start().await;
    let client = Client::connect_tcp_with(bridge.addr, modern())
        .await
        .unwrap();

    let timed = client.call_tool_with(
        "slow_count",
        json!({"n": 50, "delay_ms": 50}),
        CallOptions::new().with_timeout(Duration::from_millis(100)),
    );
    let timed_id = timed.id();
    assert!(matches!(timed.await, Err(ClientError::Timeout)));

    let dropped = client.call_tool_with(
        "slow_count",
        json!({"n": 50, "delay_ms": 50}),
        CallOptions::new(),
    );
    let dropped_id = dropped.id();
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(dropped);

    let explicit = client.call_tool_with(
        "slow_count",
        json!({"n": 50, "delay_ms": 50}),
        CallOptions::new(),
    );
    let explicit_id = explicit.id();
    assert!(explicit.cancel(Some("user")));
    assert!(matches!(explicit.await, Err(ClientError::Cancelled)));

    // A completed call is not cancelled when its handle goes away.
    let done = client.call_tool_with(
        "add_numbers",
        json!({"number1": 1, "number2": 2}),
        CallOptions::new(),
    );
    let done_id = done.id();
    done.await.unwrap();

    eventually(|| bridge.cancellations().len() >= 3).await;
    let cancels = bridge.cancellations();
    // Call ids count API calls; the JSON-RPC ids are the core's (after `server/discover`).
    let reasons: Vec<&Value> = cancels.iter().map(|c| &c["reason"]).collect();
    assert_eq!(
        reasons,
        [
            &json!("timed out"),
            &json!("request dropped by the client"),
            &json!("user")
        ]
    );
    assert!(timed_id < dropped_id && dropped_id < explicit_id && explicit_id < done_id);
    assert_eq!(cancels.len(), 3, "the completed call is not cancelled");
    client
        .call_tool("add_numbers", json!({"number1": 1, "number2": 1}))
        .await
        .unwrap();
}

#[tokio::test]
async fn server_disconnect_fails_pending_requests() {
    // A listener that accepts, answers `server/discover`, reads one more line, then hangs
    // up without answering.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let (r, mut w) = socket.into_split();
        let mut lines = BufReader::new(r).lines();
        let discover: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        let answer = json!({"jsonrpc": "2.0", "id": discover["id"], "result": {
            "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "resultType": "complete", "cacheScope": "public"}});
        w.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
        let _ = lines.next_line().await;
    });
    let client = Client::connect_tcp_with(addr, modern()).await.unwrap();
    let err = client
        .call_tool("add_numbers", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Closed), "{err:?}");
    assert!(client.is_closed());
    let again = client.ping().await.unwrap_err();
    assert!(matches!(again, ClientError::Closed), "{again:?}");
}

#[tokio::test]
async fn from_io_over_an_in_memory_pipe_to_a_child() {
    // Generic plumbing: the client's writer is an in-memory duplex pumped into the child's
    // stdin, its reader the child's stdout.
    let mut child = Command::new(example_bin("calculator"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (client_end, mut pump_end) = tokio::io::duplex(256);
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut pump_end, &mut stdin).await;
    });
    let (_unused_read, write) = tokio::io::split(client_end);
    let client = Client::from_io(stdout, write).await.unwrap();
    let r = client
        .call_tool("add_numbers", json!({"number1": 40, "number2": 2}))
        .await
        .unwrap();
    assert_eq!(r.text(), "40 + 2 = 42");
    assert_eq!(client.list_tools().await.unwrap().len(), 5);
}
