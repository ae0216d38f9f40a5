//! Task status notifications (tasks extension, SEP-2663) on `subscriptions/listen` against
//! a real server, over a byte stream (the drive loop of stdio and sockets) and over
//! Streamable HTTP: a stream subscribed to a task hears its current state, then
//! `input_required` (asked by the detached tool), then `completed` once `tasks/update`
//! answered; a `tasks/cancel` sent on another connection reaches it as `cancelled`. Each
//! `notifications/tasks` equals what `tasks/get` answers afterwards. Every frame is
//! checked against the 2026-07-28 schema and the ext-tasks schema (`notifications/tasks`,
//! the acknowledgement's `taskIds`). `serve_blocking` sends a task's state after the
//! acknowledgement too.
#[cfg(not(feature = "http"))]
compile_error!("needs feature `http`: the self dev-dependency in mcp-tokio/Cargo.toml turns it on");

#[path = "../../mcp-core/tests/harness/mod.rs"]
mod harness;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_rs_core::model::tasks::TaskTable;
use mcp_rs_core::SecretKey;
use mcp_rs_tokio::http::HttpConfig;
use mcp_rs_tokio::{Context, Server, ServerInfo, SharedTasks, ToolArgs, Tools};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

const MODERN: &str = "2026-07-28";
const EXT: &str = "io.modelcontextprotocol/tasks";
const SUB: &str = "io.modelcontextprotocol/subscriptionId";
const WAIT: Duration = Duration::from_secs(10);

/// `slow`'s arguments.
#[derive(ToolArgs)]
struct SlowArgs {
    /// Milliseconds to work
    ms: u32,
}

struct Jobs;

#[mcp_rs_tokio::tools]
impl Jobs {
    /// Works `ms` milliseconds, then answers
    #[tool(task)]
    async fn slow(&self, args: SlowArgs) -> String {
        tokio::time::sleep(Duration::from_millis(args.ms.into())).await;
        "slow done".into()
    }

    /// Asks the client to confirm (the task becomes input_required), then answers
    #[tool(task = "required")]
    async fn confirm(&self, ctx: Context) -> String {
        let Some(task) = ctx.task() else {
            return "not a task".into();
        };
        let id = task.id().to_owned();
        let asks = r#"{"ok":{"method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{}}}}}"#;
        if task.with(|s, now| s.ask(&id, asks, now)).is_err() {
            return "could not ask".into();
        }
        let mut buf = vec![0u8; 1024];
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let taken =
                task.with(|s, now| s.take_responses(&id, &mut buf, now).map(|o| o.is_some()));
            match taken {
                Ok(true) => return "confirmed".into(),
                Ok(false) => {}
                Err(_) => return "gone".into(),
            }
        }
    }
}

fn server() -> Server {
    let tools = Tools::new();
    Arc::new(Jobs).register(&tools);
    let table: SharedTasks = Arc::new(Mutex::new(TaskTable::<8, 4096>::new(SecretKey([9; 16]))));
    let info = ServerInfo {
        name: "task-notify".into(),
        version: "0".into(),
        ..Default::default()
    };
    Server::new(info, tools).tasks(table)
}

/// A 2026-07-28 request with the tasks extension in its client capabilities (none when
/// `!tasks`).
fn request(id: &str, method: &str, mut params: Value, tasks: bool) -> Value {
    let extensions = if tasks { json!({EXT: {}}) } else { json!({}) };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
    });
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

fn check(method: Option<&str>, v: &Value) {
    harness::validate_server_message(MODERN, method, v).unwrap_or_else(|e| panic!("{e}"));
}

/// A transport: requests answered one by one, and the frames of the listen stream.
trait Peer {
    async fn ask(&mut self, msg: Value) -> Value;
    async fn listen(&mut self, msg: Value);
    fn notes(&mut self) -> &mut mpsc::UnboundedReceiver<Value>;
}

/// The byte-stream loop (`serve_connection`: what stdio and sockets run), one connection:
/// replies and notifications are told apart by their `id`.
struct Stream {
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    replies: mpsc::UnboundedReceiver<Value>,
    notes: mpsc::UnboundedReceiver<Value>,
}

impl Stream {
    fn start(server: &Server) -> Stream {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(theirs);
        let s = server.clone();
        tokio::spawn(async move { s.serve_connection(r, w).await });
        let (reader, writer) = tokio::io::split(ours);
        let (reply_tx, replies) = mpsc::unbounded_channel();
        let (note_tx, notes) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(reader).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let v: Value = serde_json::from_str(&line).expect("a JSON frame");
                let to = if v.get("id").is_some() {
                    &reply_tx
                } else {
                    &note_tx
                };
                let _ = to.send(v);
            }
        });
        Stream {
            writer,
            replies,
            notes,
        }
    }

    async fn send(&mut self, msg: &Value) {
        let line = format!("{msg}\n");
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }
}

impl Peer for Stream {
    async fn ask(&mut self, msg: Value) -> Value {
        self.send(&msg).await;
        let v = tokio::time::timeout(WAIT, self.replies.recv())
            .await
            .expect("a reply in time")
            .expect("a reply");
        assert_eq!(v["id"], msg["id"], "{v}");
        check(msg["method"].as_str(), &v);
        v
    }
    async fn listen(&mut self, msg: Value) {
        self.send(&msg).await;
    }
    fn notes(&mut self) -> &mut mpsc::UnboundedReceiver<Value> {
        &mut self.notes
    }
}

/// Streamable HTTP without sessions (2026-07-28): each request a POST on a connection of
/// its own, the listen stream an SSE response read as it comes.
struct Http {
    addr: SocketAddr,
    notes: mpsc::UnboundedReceiver<Value>,
    note_tx: mpsc::UnboundedSender<Value>,
}

impl Http {
    async fn start(server: &Server) -> Http {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let s = server.clone();
        tokio::spawn(async move { s.serve_http_with(listener, HttpConfig::default()).await });
        let (note_tx, notes) = mpsc::unbounded_channel();
        Http {
            addr,
            notes,
            note_tx,
        }
    }

    fn head(msg: &Value, accept: &str, close: bool) -> String {
        let body = msg.to_string();
        let method = msg["method"].as_str().unwrap_or("");
        let mut extra = String::new();
        let name = msg
            .pointer("/params/name")
            .or_else(|| msg.pointer("/params/taskId"));
        if let Some(name) = name.and_then(Value::as_str) {
            extra.push_str(&format!("Mcp-Name: {name}\r\n"));
        }
        if close {
            extra.push_str("Connection: close\r\n");
        }
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: {method}\r\nAccept: {accept}\r\n{extra}\r\n{body}",
            body.len()
        )
    }
}

/// The decoded body of a chunked response read so far: whole chunks only.
fn dechunk(raw: &[u8]) -> (Vec<u8>, usize) {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(eol) = raw[at..].windows(2).position(|w| w == b"\r\n") else {
            return (body, at);
        };
        let size = std::str::from_utf8(&raw[at..at + eol]).unwrap().trim();
        let size = usize::from_str_radix(size, 16).expect("a chunk size");
        let start = at + eol + 2;
        if raw.len() < start + size + 2 {
            return (body, at);
        }
        body.extend_from_slice(&raw[start..start + size]);
        at = start + size + 2;
    }
}

impl Peer for Http {
    async fn ask(&mut self, msg: Value) -> Value {
        let mut socket = TcpStream::connect(self.addr).await.unwrap();
        let head = Http::head(&msg, "application/json", true);
        socket.write_all(head.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        tokio::time::timeout(WAIT, socket.read_to_end(&mut out))
            .await
            .expect("a response in time")
            .unwrap();
        let text = String::from_utf8_lossy(&out).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").expect("a head");
        assert!(head.starts_with("HTTP/1.1 200"), "{text}");
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            String::from_utf8(dechunk(body.as_bytes()).0).unwrap()
        } else {
            body.to_owned()
        };
        let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!(v["id"], msg["id"], "{v}");
        check(msg["method"].as_str(), &v);
        v
    }

    async fn listen(&mut self, msg: Value) {
        let mut socket = TcpStream::connect(self.addr).await.unwrap();
        let head = Http::head(&msg, "application/json, text/event-stream", false);
        socket.write_all(head.as_bytes()).await.unwrap();
        let tx = self.note_tx.clone();
        tokio::spawn(async move {
            let mut raw = Vec::new();
            let mut buf = vec![0u8; 8192];
            let mut body_at = None;
            let mut sent = 0;
            loop {
                let n = match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                raw.extend_from_slice(&buf[..n]);
                if body_at.is_none() {
                    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&raw[..end]).to_string();
                    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                    assert!(head.to_ascii_lowercase().contains("chunked"), "{head}");
                    body_at = Some(end + 4);
                }
                let (body, _) = dechunk(&raw[body_at.unwrap_or(0)..]);
                let text = String::from_utf8_lossy(&body).to_string();
                // Complete events only: `data:` lines followed by a blank line.
                let events: Vec<&str> = text.split("\n\n").collect();
                let whole = &events[..events.len() - 1];
                for event in &whole[sent..] {
                    for line in event.lines() {
                        if let Some(data) = line.strip_prefix("data:") {
                            let data = data.trim_start();
                            if data.is_empty() {
                                continue;
                            }
                            let v: Value = serde_json::from_str(data).expect("JSON data");
                            let _ = tx.send(v);
                        }
                    }
                }
                sent = whole.len();
            }
        });
    }

    fn notes(&mut self) -> &mut mpsc::UnboundedReceiver<Value> {
        &mut self.notes
    }
}

/// The next frame of the listen stream, checked.
async fn next(peer: &mut impl Peer) -> Value {
    let v = tokio::time::timeout(WAIT, peer.notes().recv())
        .await
        .expect("a stream frame in time")
        .expect("a frame");
    check(None, &v);
    v
}

/// The task of a `notifications/tasks` frame (params without `_meta`), checked to belong
/// to subscription `sub`.
fn task_of(v: &Value, sub: &str) -> Value {
    assert_eq!(v["method"], "notifications/tasks", "{v}");
    assert_eq!(v["params"]["_meta"][SUB], sub, "{v}");
    let mut t = v["params"].clone();
    t.as_object_mut().expect("params").remove("_meta");
    t
}

/// `tasks/get` without `resultType` (what the notification carries).
async fn get(peer: &mut impl Peer, id: &str) -> Value {
    let mut v = peer
        .ask(request("get", "tasks/get", json!({"taskId": id}), true))
        .await;
    let o = v["result"].as_object_mut().expect("a result");
    o.remove("resultType");
    o.remove("_meta");
    v["result"].take()
}

/// Subscribes to `id` as `sub` and checks the acknowledgement lists it.
async fn subscribe(peer: &mut impl Peer, sub: &str, id: &str) {
    let ids = json!([id, "ffffffffffffffffffffffffffffffff"]);
    peer.listen(request(
        sub,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": ids}}),
        true,
    ))
    .await;
    let ack = next(peer).await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["notifications"], json!({"taskIds": [id]}));
    assert_eq!(ack["params"]["_meta"][SUB], sub);
}

/// Frames of subscription `sub` until the task reaches `status`; every one before it is
/// one of `before`.
async fn until(peer: &mut impl Peer, sub: &str, status: &str, before: &[&str]) -> Value {
    loop {
        let task = task_of(&next(peer).await, sub);
        let s = task["status"].as_str().expect("a status");
        if s == status {
            return task;
        }
        assert!(before.contains(&s), "{s} before {status}: {task}");
    }
}

/// The scenario on one transport: `confirm` goes input_required, is answered, completes;
/// `slow` is cancelled by `other` (another connection).
async fn scenario(peer: &mut impl Peer, other: &mut impl Peer) {
    let created = peer
        .ask(request(
            "c1",
            "tools/call",
            json!({"name": "confirm", "arguments": {}}),
            true,
        ))
        .await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    subscribe(peer, "s1", &id).await;
    let asked = until(peer, "s1", "input_required", &["working"]).await;
    assert!(asked["inputRequests"]["ok"].is_object(), "{asked}");
    let answered = peer
        .ask(request(
            "u1",
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"ok": {"action": "accept", "content": {}}}}),
            true,
        ))
        .await;
    assert_eq!(answered["result"]["resultType"], "complete", "{answered}");
    let done = until(peer, "s1", "completed", &["working"]).await;
    assert_eq!(done["result"]["content"][0]["text"], "confirmed", "{done}");
    assert_eq!(done, get(peer, &id).await);

    // Cancelled from another connection.
    let created = peer
        .ask(request(
            "c2",
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60000}}),
            true,
        ))
        .await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    subscribe(peer, "s2", &id).await;
    let first = task_of(&next(peer).await, "s2");
    assert_eq!(first["status"], "working", "{first}");
    let cancelled = other
        .ask(request("x", "tasks/cancel", json!({"taskId": id}), true))
        .await;
    assert_eq!(cancelled["result"]["resultType"], "complete");
    let last = until(peer, "s2", "cancelled", &[]).await;
    assert_eq!(last, get(peer, &id).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_notifications_over_a_byte_stream() {
    let server = server();
    let mut peer = Stream::start(&server);
    let mut other = Stream::start(&server);
    scenario(&mut peer, &mut other).await;
    // Without the extension: -32021 naming it (over HTTP a listen is answered on its
    // stream, as any error: the core's tests cover it).
    let refused = other
        .ask(request(
            "n",
            "subscriptions/listen",
            json!({"notifications": {"taskIds": ["0123456789abcdef0123456789abcdef"]}}),
            false,
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][EXT],
        json!({})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_notifications_over_streamable_http() {
    let server = server();
    let mut peer = Http::start(&server).await;
    let (note_tx, notes) = mpsc::unbounded_channel();
    let mut other = Http {
        addr: peer.addr,
        notes,
        note_tx,
    };
    scenario(&mut peer, &mut other).await;
}

/// `serve_blocking` (no runtime): a synchronous task tool completes its task at once; a
/// stream subscribed to it then hears its state right after the acknowledgement.
#[cfg(unix)]
#[test]
fn serve_blocking_sends_the_state_after_the_acknowledgement() {
    use mcp_rs_core::model::tasks::TaskSupport;
    use mcp_rs_tokio::{Handler, ToolDef};
    use std::io::{BufRead, Write};
    use std::os::unix::net::UnixStream;

    let tools = Tools::new();
    tools.add(
        ToolDef::new("now", r#"{"type":"object"}"#).task(TaskSupport::Optional),
        Handler::sync(|_, r| {
            r.text("at once");
        }),
    );
    let table: SharedTasks = Arc::new(Mutex::new(TaskTable::<4, 1024>::new(SecretKey([5; 16]))));
    let server = Server::new(ServerInfo::default(), tools).tasks(table);
    let (ours, theirs) = UnixStream::pair().unwrap();
    let reader = theirs.try_clone().unwrap();
    std::thread::spawn(move || server.serve_blocking(reader, theirs));
    ours.set_read_timeout(Some(WAIT)).unwrap();
    let mut lines = std::io::BufReader::new(ours.try_clone().unwrap()).lines();
    let mut writer = ours;
    let mut next = || -> Value {
        let line = lines.next().expect("a line").expect("a line in time");
        let v: Value = serde_json::from_str(&line).unwrap();
        check(None, &v);
        v
    };
    let call = request(
        "c",
        "tools/call",
        json!({"name": "now", "arguments": {}}),
        true,
    );
    writeln!(writer, "{call}").unwrap();
    let created = next();
    assert_eq!(created["result"]["status"], "completed", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let listen = request(
        "s",
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id]}}),
        true,
    );
    writeln!(writer, "{listen}").unwrap();
    let ack = next();
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id]),
        "{ack}"
    );
    let task = task_of(&next(), "s");
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["content"][0]["text"], "at once");
}
