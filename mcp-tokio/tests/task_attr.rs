//! `#[tool(task)]`: an `async fn` made a task of the tasks extension (SEP-2663) by one
//! attribute, called both ways over TCP against a real server: directly (no extension in
//! the request's client capabilities: answered as any tool) and task-augmented (a
//! `CreateTaskResult` at once, the method run detached, its answer the task's result for
//! `tasks/get`). Also: a required task tool refused to a client without the extension,
//! `tasks/cancel` reaching the detached `Context`, and a panic stored as an `isError`
//! result. Every frame is checked against the 2026-07-28 schema (the tasks shapes by the
//! harness's SEP-2663 checks: no published schema has them).

#[path = "../../mcp-core/tests/harness/mod.rs"]
mod harness;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_rs_core::model::tasks::TaskTable;
use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::SecretKey;
use mcp_rs_tokio::{Context, Server, ServerInfo, SharedTasks, ToolArgs, ToolReply, Tools};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

const MODERN: &str = "2026-07-28";
const EXT: &str = "io.modelcontextprotocol/tasks";

/// `slow`'s arguments.
#[derive(ToolArgs)]
struct SlowArgs<'a> {
    /// Milliseconds to work
    ms: u32,
    /// Echoed in the answer
    label: JsonStr<'a>,
}

/// The attributed tools; `cancelled` is set when a detached `Context` saw `tasks/cancel`.
#[derive(Default)]
struct Jobs {
    cancelled: Arc<AtomicBool>,
}

#[mcp_rs_tokio::tools]
impl Jobs {
    /// Works `ms` milliseconds, then answers with two blocks and an error flag
    #[tool(task)]
    async fn slow(&self, args: SlowArgs<'_>, ctx: Context) -> ToolReply {
        tokio::time::sleep(Duration::from_millis(args.ms.into())).await;
        let task = ctx
            .task()
            .map_or("none", |t| if t.id().is_empty() { "" } else { "some" });
        let mut reply = ToolReply::text(format!("{} \"done\" \u{e9}", args.label));
        reply.push(format!("task: {task}"));
        reply.set_error();
        reply
    }

    /// Runs until cancelled
    #[tool(task = "required")]
    async fn forever(&self, ctx: Context) -> &'static str {
        let seen = self.cancelled.clone();
        let watcher = ctx.clone();
        tokio::spawn(async move {
            watcher.cancelled().await;
            seen.store(true, Ordering::SeqCst);
        });
        tokio::time::sleep(Duration::from_secs(3600)).await;
        "never"
    }

    /// Panics
    #[tool(task)]
    async fn boom(&self) -> &'static str {
        panic!("boom")
    }
}

struct Client {
    lines: Lines<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
    id: u64,
}

impl Client {
    /// Sends a 2026-07-28 request (with the tasks extension in its client capabilities when
    /// `tasks`) and returns its response line and value, schema-checked.
    async fn call(&mut self, method: &str, mut params: Value, tasks: bool) -> (String, Value) {
        let extensions = if tasks { json!({EXT: {}}) } else { json!({}) };
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
        });
        self.id += 1;
        let request = json!({"jsonrpc":"2.0","id":self.id,"method":method,"params":params});
        let line = format!("{request}\n");
        self.writer.write_all(line.as_bytes()).await.unwrap();
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], self.id, "{v}");
        harness::validate_server_message(MODERN, Some(method), &v)
            .unwrap_or_else(|e| panic!("{e}"));
        (line, v)
    }

    /// `tasks/get` until the task is no longer `working` (10 s at most).
    async fn settle(&mut self, id: &str) -> Value {
        for _ in 0..200 {
            let (_, v) = self.call("tasks/get", json!({"taskId": id}), true).await;
            if v["result"]["status"] != "working" {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("task {id} still working after 10 s");
    }
}

async fn start() -> (Client, Arc<Jobs>) {
    let tools = Tools::new();
    let jobs = Arc::new(Jobs::default());
    jobs.clone().register(&tools);
    let table: SharedTasks = Arc::new(Mutex::new(TaskTable::<8, 4096>::new(SecretKey([7; 16]))));
    let info = ServerInfo {
        name: "task-attr".into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::new(info, tools).tasks(table);
    let listener = mcp_rs_tokio::bind_tcp("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { server.serve_tcp(listener).await });
    let (r, w) = TcpStream::connect(addr).await.unwrap().into_split();
    let client = Client {
        lines: BufReader::new(r).lines(),
        writer: w,
        id: 0,
    };
    (client, jobs)
}

/// The result object without the revision's trailer (what a task stores).
fn bare(result: &Value) -> Value {
    let mut r = result.clone();
    let o = r.as_object_mut().expect("a result object");
    o.remove("resultType");
    o.remove("_meta");
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attributed_tool_answers_directly_or_as_a_task() {
    let (mut c, _) = start().await;
    let (_, list) = c.call("tools/list", json!({}), true).await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["slow", "forever", "boom"]);

    // Directly: no task, the method's answer is the reply.
    let args = json!({"name": "slow", "arguments": {"ms": 400, "label": "x"}});
    let (direct_line, direct) = c.call("tools/call", args.clone(), false).await;
    let direct = &direct["result"];
    assert_eq!(direct["resultType"], "complete", "{direct}");
    assert_eq!(direct["content"][0]["text"], "x \"done\" \u{e9}");
    assert_eq!(direct["content"][1]["text"], "task: none");

    // As a task: `CreateTaskResult` at once, then the same result from `tasks/get`.
    let (_, created) = c.call("tools/call", args, true).await;
    let created = &created["result"];
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let done = c.settle(&id).await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    // Byte for byte: the direct result's text up to its trailer is what `tasks/get`
    // inlines (only the text the method wrote differs).
    let start = direct_line.find(r#""result":{"#).expect("a result") + r#""result":"#.len();
    let end = direct_line
        .find(r#","resultType":"complete""#)
        .expect("a trailer");
    let stored = direct_line[start..end].replace("task: none", "task: some") + "}";
    let (get_line, _) = c.call("tasks/get", json!({"taskId": id}), true).await;
    assert!(
        get_line.contains(&format!(r#""result":{stored}"#)),
        "{stored}\nnot in\n{get_line}"
    );
    let mut expected = bare(direct);
    expected["content"][1]["text"] = json!("task: some");
    assert_eq!(done["result"]["result"], expected, "{done}");
    // Kept until its TTL: asked again, the same.
    let (_, again) = c.call("tasks/get", json!({"taskId": id}), true).await;
    assert_eq!(again["result"]["result"], expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_task_tool_needs_the_extension() {
    let (mut c, _) = start().await;
    let (_, refused) = c
        .call("tools/call", json!({"name": "forever"}), false)
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    let ext = &refused["error"]["data"]["requiredCapabilities"]["extensions"];
    assert!(ext.get(EXT).is_some(), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_cancel_reaches_the_detached_context() {
    let (mut c, jobs) = start().await;
    let (_, created) = c.call("tools/call", json!({"name": "forever"}), true).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!jobs.cancelled.load(Ordering::SeqCst));
    let (_, ack) = c.call("tasks/cancel", json!({"taskId": id}), true).await;
    assert!(ack.get("result").is_some(), "{ack}");
    let mut seen = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(25)).await;
        if jobs.cancelled.load(Ordering::SeqCst) {
            seen = true;
            break;
        }
    }
    assert!(
        seen,
        "the tool's Context did not see tasks/cancel within 1 s"
    );
    let (_, got) = c.call("tasks/get", json!({"taskId": id}), true).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_task_tool_fails_visibly() {
    let (mut c, _) = start().await;
    let (_, created) = c.call("tools/call", json!({"name": "boom"}), true).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = c.settle(&id).await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let result = &done["result"]["result"];
    assert_eq!(result["isError"], true, "{done}");
    assert_eq!(result["content"][0]["text"], "tool boom panicked", "{done}");
}

#[test]
fn without_a_runtime_the_task_fails_instead_of_panicking() {
    let tools = Tools::new();
    Arc::new(Jobs::default()).register(&tools);
    let table = Arc::new(Mutex::new(TaskTable::<8, 4096>::new(SecretKey([7; 16]))));
    let shared: SharedTasks = table.clone();
    let info = ServerInfo {
        name: "task-attr".into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::new(info, tools).tasks(shared);
    let request = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
    "name":"boom",
    "_meta":{
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
    }}});
    let input = format!("{request}\n");
    let mut out = Vec::new();
    server.serve_blocking(input.as_bytes(), &mut out).unwrap();
    let line = String::from_utf8(out).unwrap();
    let created: Value = serde_json::from_str(line.trim()).unwrap();
    harness::validate_server_message(MODERN, Some("tools/call"), &created)
        .unwrap_or_else(|e| panic!("{e}"));
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let mut t = table.lock().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let view = mcp_rs_core::model::tasks::TaskStore::view(&mut *t, &id, now).expect("the task");
    assert_eq!(view.status, mcp_rs_core::model::tasks::TaskStatus::Failed);
}
