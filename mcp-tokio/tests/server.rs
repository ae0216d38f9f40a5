//! The server drive loop over in-memory pipes and real sockets: concurrency, cancellation,
//! panics, runtime tool changes, EOF drain, connection limits and shutdown.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_rs_tokio::{Handler, Limits, Server, ServerInfo, ToolDef, ToolReply, Tools};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};

const OBJECT: &str = r#"{"type":"object"}"#;

struct Peer<R, W> {
    lines: Lines<BufReader<R>>,
    writer: W,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Peer<R, W> {
    async fn send(&mut self, v: Value) {
        let mut line = v.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("reply within 10 s")
            .unwrap()
            .expect("connection open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("invalid JSON {e}: {line}"))
    }
    async fn initialize(&mut self) {
        self.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}})).await;
        assert_eq!(self.recv().await["result"]["protocolVersion"], "2025-11-25");
        self.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await;
    }
    async fn call(&mut self, id: u64, name: &str, args: Value) {
        self.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args,"_meta":{"progressToken":id}}})).await;
    }
}

fn info() -> ServerInfo {
    ServerInfo {
        name: "test".into(),
        version: "0".into(),
        ..Default::default()
    }
}

/// A server over an in-memory pipe; returns the client side and the serving task.
type PipePeer = Peer<
    tokio::io::ReadHalf<tokio::io::DuplexStream>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
>;
type Serving = tokio::task::JoinHandle<Result<(), mcp_rs_tokio::Error>>;

fn pipe(server: &Server) -> (PipePeer, Serving) {
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server_side);
    let s = server.clone();
    let task = tokio::spawn(async move { s.serve_connection(sr, sw).await });
    let (cr, cw) = tokio::io::split(client);
    (
        Peer {
            lines: BufReader::new(cr).lines(),
            writer: cw,
        },
        task,
    )
}

struct Flags {
    started: AtomicUsize,
    dropped: AtomicBool,
}

struct DropFlag(Arc<Flags>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

fn tools(flags: Arc<Flags>) -> Tools {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("echo", OBJECT),
        Handler::sync(|req, r| {
            r.text(req.args().as_str());
        }),
    );
    tools.add(
        ToolDef::new("sleep", OBJECT),
        Handler::async_fn(|args, ctx| async move {
            let ms = args.value()["ms"].as_u64().unwrap_or(0);
            for i in 1..=2 {
                tokio::time::sleep(Duration::from_millis(ms / 2)).await;
                ctx.progress(f64::from(i), Some(2.0), None).await;
            }
            ToolReply::text(format!("slept {ms}"))
        }),
    );
    let f = flags.clone();
    tools.add(
        ToolDef::new("forever", OBJECT),
        Handler::async_fn(move |_, _| {
            let f = f.clone();
            async move {
                f.started.fetch_add(1, Ordering::SeqCst);
                let _guard = DropFlag(f);
                std::future::pending::<()>().await;
                ToolReply::text("unreachable")
            }
        }),
    );
    tools.add(
        ToolDef::new("boom", OBJECT),
        Handler::async_fn(|_, _| async { panic!("kaboom") }),
    );
    tools.add(
        ToolDef::new("boom_sync", OBJECT),
        Handler::sync(|_, _| panic!("sync kaboom")),
    );
    tools
}

fn flags() -> Arc<Flags> {
    Arc::new(Flags {
        started: AtomicUsize::new(0),
        dropped: AtomicBool::new(false),
    })
}

#[tokio::test]
async fn slow_calls_do_not_block_and_complete_out_of_order() {
    let server = Server::new(info(), tools(flags()));
    let (mut peer, _task) = pipe(&server);
    peer.initialize().await;
    peer.call(1, "sleep", json!({"ms": 300})).await;
    peer.call(2, "sleep", json!({"ms": 20})).await;
    peer.send(json!({"jsonrpc":"2.0","id":3,"method":"ping"}))
        .await;
    peer.call(4, "echo", json!({"x": 1})).await;
    let mut order = Vec::new();
    let mut progress = 0;
    while order.len() < 4 {
        let v = peer.recv().await;
        if v["method"] == "notifications/progress" {
            progress += 1;
            continue;
        }
        order.push(v["id"].as_u64().unwrap());
    }
    assert_eq!(
        &order[..2],
        &[3, 4],
        "ping and the sync tool answer at once: {order:?}"
    );
    assert_eq!(&order[2..], &[2, 1], "the shorter sleep completes first");
    assert_eq!(progress, 4);
}

#[tokio::test]
async fn cancellation_aborts_the_task() {
    let f = flags();
    let server = Server::new(info(), tools(f.clone()));
    let (mut peer, _task) = pipe(&server);
    peer.initialize().await;
    peer.call(7, "forever", json!({})).await;
    peer.send(json!({"jsonrpc":"2.0","id":8,"method":"ping"}))
        .await;
    assert_eq!(peer.recv().await["id"], 8);
    assert_eq!(f.started.load(Ordering::SeqCst), 1);
    peer.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}})).await;
    peer.send(json!({"jsonrpc":"2.0","id":9,"method":"ping"}))
        .await;
    assert_eq!(
        peer.recv().await["id"],
        9,
        "no reply for the cancelled call"
    );
    for _ in 0..100 {
        if f.dropped.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the cancelled task was not aborted");
}

#[tokio::test]
async fn panics_become_error_results() {
    let server = Server::new(info(), tools(flags()));
    let (mut peer, _task) = pipe(&server);
    peer.initialize().await;
    peer.call(1, "boom", json!({})).await;
    let v = peer.recv().await;
    assert_eq!(v["result"]["isError"], true);
    assert!(v["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("kaboom"));
    peer.call(2, "boom_sync", json!({})).await;
    let v = peer.recv().await;
    assert_eq!(v["id"], 2);
    assert_eq!(v["result"]["isError"], true);
    peer.send(json!({"jsonrpc":"2.0","id":3,"method":"ping"}))
        .await;
    assert_eq!(
        peer.recv().await["id"],
        3,
        "the server survived both panics"
    );
}

#[tokio::test]
async fn runtime_tool_changes_notify_connected_clients() {
    let server = Server::new(info(), tools(flags()));
    let (mut a, _ta) = pipe(&server);
    let (mut b, _tb) = pipe(&server);
    a.initialize().await;
    b.initialize().await;
    server.tools().add(
        ToolDef::new("late", OBJECT),
        Handler::sync(|_, r| {
            r.text("late");
        }),
    );
    for peer in [&mut a, &mut b] {
        let v = peer.recv().await;
        assert_eq!(v["method"], "notifications/tools/list_changed");
        peer.call(5, "late", json!({})).await;
        assert_eq!(peer.recv().await["result"]["content"][0]["text"], "late");
    }
    assert!(server.tools().remove("late"));
    assert_eq!(a.recv().await["method"], "notifications/tools/list_changed");
    a.call(6, "late", json!({})).await;
    assert_eq!(a.recv().await["error"]["code"], -32602);
}

#[tokio::test]
async fn list_changed_announces_the_list_it_names() {
    // Regression: `list_changed(ListKind::Tools)` used to announce a template change.
    let server = Server::new(info(), tools(flags()));
    let (mut peer, _task) = pipe(&server);
    peer.initialize().await;
    server.list_changed(mcp_rs_core::ListKind::Tools);
    assert_eq!(
        peer.recv().await["method"],
        "notifications/tools/list_changed"
    );
    // the notification came from the announcement, not from a later message
    peer.send(json!({"jsonrpc":"2.0","id":9,"method":"ping"}))
        .await;
    assert_eq!(peer.recv().await["id"], 9);
}

#[tokio::test]
async fn eof_lets_running_calls_finish() {
    let server = Server::new(info(), tools(flags()));
    let (mut peer, task) = pipe(&server);
    peer.initialize().await;
    peer.call(1, "sleep", json!({"ms": 100})).await;
    peer.writer.shutdown().await.unwrap();
    let mut last = Value::Null;
    while let Ok(Some(line)) = peer.lines.next_line().await {
        last = serde_json::from_str(&line).unwrap();
    }
    assert_eq!(last["id"], 1);
    assert_eq!(last["result"]["content"][0]["text"], "slept 100");
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn oversized_lines_are_answered_and_skipped() {
    let limits = Limits {
        max_frame: 1024,
        ..Limits::default()
    };
    let server = Server::with(
        info(),
        mcp_rs_core::Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        limits,
        tools(flags()),
    );
    let (mut peer, _task) = pipe(&server);
    peer.initialize().await;
    let big = format!("{}\n", "x".repeat(100_000));
    peer.writer.write_all(big.as_bytes()).await.unwrap();
    let v = peer.recv().await;
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(v["error"]["data"]["limit"], 1024);
    peer.send(json!({"jsonrpc":"2.0","id":2,"method":"ping"}))
        .await;
    assert_eq!(peer.recv().await["id"], 2);
}

#[tokio::test]
async fn tcp_connection_limit_and_shutdown() {
    let limits = Limits {
        max_connections: 2,
        ..Limits::default()
    };
    let server = Server::with(
        info(),
        mcp_rs_core::Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        limits,
        tools(flags()),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let s = server.clone();
    let serving = tokio::spawn(async move { s.serve_tcp(listener).await });
    let connect = || async {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (r, w) = tokio::io::split(stream);
        Peer {
            lines: BufReader::new(r).lines(),
            writer: w,
        }
    };
    let mut a = connect().await;
    let mut b = connect().await;
    a.initialize().await;
    b.initialize().await;
    let mut c = connect().await;
    let refused = c.recv().await;
    assert_eq!(refused["error"]["code"], -32603);
    assert_eq!(refused["error"]["data"]["limit"], 2);
    assert!(
        c.lines.next_line().await.unwrap().is_none(),
        "refused connection is closed"
    );
    a.call(1, "echo", json!({"via": "tcp"})).await;
    assert_eq!(
        a.recv().await["result"]["content"][0]["text"],
        "{\"via\":\"tcp\"}"
    );
    server.shutdown_handle().shutdown();
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("server stops")
        .unwrap()
        .unwrap();
    assert!(
        a.lines.next_line().await.unwrap_or(None).is_none(),
        "connections are closed on shutdown"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn unix_socket() {
    let dir = std::env::temp_dir().join(format!("mcp-tokio-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.sock");
    let _ = std::fs::remove_file(&path);
    let server = Server::new(info(), tools(flags()));
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let s = server.clone();
    let serving = tokio::spawn(async move { s.serve_unix(listener).await });
    let stream = tokio::net::UnixStream::connect(&path).await.unwrap();
    let (r, w) = tokio::io::split(stream);
    let mut peer = Peer {
        lines: BufReader::new(r).lines(),
        writer: w,
    };
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    peer.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta": meta}}))
        .await;
    let v = peer.recv().await;
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(v["result"]["tools"].as_array().unwrap().len(), 5);
    server.shutdown();
    serving.await.unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// mcp-tokio enables the core's `deferred`, `listen` and `batch` features itself (the
/// workspace dependency turns defaults off): async tools, listen streams and batches work.
#[tokio::test]
async fn core_features_are_enabled() {
    let server = Server::new(info(), tools(flags()));
    let (mut peer, _task) = pipe(&server);
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    peer.send(json!({"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":meta}})).await;
    assert_eq!(
        peer.recv().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    server.tools().add(
        ToolDef::new("new_tool", OBJECT),
        Handler::sync(|_, r| {
            r.text("new");
        }),
    );
    let changed = peer.recv().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L"
    );

    let (mut legacy, _t2) = pipe(&server);
    legacy.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}})).await;
    assert_eq!(
        legacy.recv().await["result"]["protocolVersion"],
        "2025-03-26"
    );
    legacy.send(json!([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":10}}}])).await;
    let batch = legacy.recv().await;
    assert_eq!(batch, json!([{"jsonrpc":"2.0","id":1,"result":{}}]));
    let deferred = legacy.recv().await;
    assert_eq!(deferred["id"], 2);
    assert_eq!(deferred["result"]["content"][0]["text"], "slept 10");
}

/// A server with short socket timeouts (write, idle and line: `t`).
fn timed_server(t: Duration) -> Server {
    let tools = Tools::new();
    tools.add(
        ToolDef::new("nap", OBJECT),
        Handler::async_fn(|_, _| async {
            tokio::time::sleep(Duration::from_millis(600)).await;
            ToolReply::text("rested")
        }),
    );
    let limits = Limits {
        write_timeout: t,
        idle_timeout: t,
        line_timeout: t,
        ..Limits::default()
    };
    Server::with(
        info(),
        mcp_rs_core::Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        limits,
        tools,
    )
}

#[tokio::test]
async fn a_peer_that_never_reads_is_closed_after_the_write_timeout() {
    let server = timed_server(Duration::from_millis(300));
    // A small pipe: the server's replies fill it quickly.
    let (client, server_side) = tokio::io::duplex(4096);
    let (sr, sw) = tokio::io::split(server_side);
    let s = server.clone();
    let task = tokio::spawn(async move { s.serve_connection(sr, sw).await });
    let (_unread, mut cw) = tokio::io::split(client);
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}});
    let mut burst = format!("{init}\n");
    for id in 1..2000 {
        burst.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
        ));
    }
    // The writes may block too once the server stops reading: do not wait on them.
    tokio::spawn(async move {
        let _ = cw.write_all(burst.as_bytes()).await;
        std::future::pending::<()>().await;
    });
    let ended = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the connection ends within 5 s")
        .unwrap();
    match ended {
        Err(mcp_rs_tokio::Error::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::TimedOut),
        other => panic!("expected a write timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn idle_and_trickling_connections_are_closed() {
    let server = timed_server(Duration::from_millis(200));
    // Idle: nothing at all.
    let (peer, task) = pipe(&server);
    let ended = tokio::time::timeout(Duration::from_secs(3), task).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
    drop(peer);
    // Trickling: a line that never completes, while bytes keep coming slower than needed.
    let (mut peer, task) = pipe(&server);
    peer.writer.write_all(b"{\"jsonrpc\":").await.unwrap();
    let trickle = tokio::spawn(async move {
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if peer.writer.write_all(b" ").await.is_err() {
                break;
            }
        }
    });
    let ended = tokio::time::timeout(Duration::from_secs(3), task).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
    trickle.abort();
}

#[tokio::test]
async fn a_running_call_keeps_its_connection_open() {
    let server = timed_server(Duration::from_millis(200));
    let (mut peer, task) = pipe(&server);
    peer.initialize().await;
    // The call outlives the idle timeout; its connection must not be closed under it.
    peer.call(1, "nap", json!({})).await;
    let r = peer.recv().await;
    assert_eq!(r["result"]["content"][0]["text"], "rested", "{r}");
    // Then, idle again, the connection is closed.
    let ended = tokio::time::timeout(Duration::from_secs(3), task).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
}
