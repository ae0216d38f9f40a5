//! Tasks over the HTTP server (features `http` and `tasks`): a task-augmented `tools/call`
//! answered at once while its work runs on a task worker (`Server::serve_tasks`) after the
//! response; `input_required` and `tasks/update`, `tasks/cancel` waking the worker, a
//! worker that ends without an outcome, a full job queue, and the TTL on the clock.

mod support;

use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use mcp_rs_core::model::tasks::{TaskStore, TaskSupport, TaskTable};
use mcp_rs_core::{
    CallRequest, Config, Dispatch, SecretKey, ServerHandler, ServerInfo, Tool, ToolResult, ToolSet,
};
use mcp_rs_embedded::http::{Server, Slot, TaskContext, TaskRunner, TaskWorker};
use mcp_rs_embedded::tasks::{TaskHandler, TaskHost, TaskJobs};
use serde_json::Value;
use support::{responses, Sock};

// ---- the server ----------------------------------------------------------------------

const SCHEMA: &str = r#"{"type":"object","properties":{"x":{"type":"string"}}}"#;
static TOOLS: [Tool<'static>; 3] = [
    Tool::new("ask", SCHEMA),
    Tool::new("wait", SCHEMA),
    Tool::new("quiet", SCHEMA),
];

/// 4 tasks of 512 bytes, 1 queued job of 64 bytes.
type Host = TaskHost<4, 512, 1, 64>;

struct Device {
    host: Host,
}

impl ToolSet for Device {
    fn len(&self) -> usize {
        TOOLS.len()
    }
    fn get(&self, i: usize) -> Option<Tool<'_>> {
        TOOLS.get(i).copied()
    }
    fn task_support(&self, _: usize) -> TaskSupport {
        TaskSupport::Required
    }
    fn call(&mut self, req: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
        let Some(id) = req.task() else {
            r.fail(format_args!("task only"));
            return Dispatch::Done;
        };
        let name = TOOLS[req.tool_index()].name;
        let _ = self.host.queue(id, name, req.args().as_str(), clock());
        Dispatch::Defer
    }
}

impl ServerHandler for Device {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(self)
    }
    fn tasks(&mut self) -> Option<&mut dyn TaskStore> {
        Some(&mut self.host)
    }
}

impl TaskHandler for Device {
    fn task_jobs(&mut self) -> Option<&mut dyn TaskJobs> {
        Some(&mut self.host)
    }
}

thread_local! {
    /// Each test's clock (tests run on threads of their own).
    static NOW: Cell<u64> = const { Cell::new(1_785_242_096_789) };
}

fn clock() -> u64 {
    NOW.get()
}

static INFO: ServerInfo<'static> = ServerInfo {
    name: "tasks-test",
    version: "1.0.0",
    title: None,
    description: None,
    website_url: None,
    icons: &[],
    instructions: None,
};

/// Tasks live 10 s.
fn server() -> Server<'static, Device> {
    let table = TaskTable::new(SecretKey([5; 16])).with_timing(10_000, 100);
    Server::new(
        &INFO,
        Config::new(SecretKey([3; 16])),
        Device {
            host: TaskHost::new(table),
        },
    )
    .with_clock(clock)
}

/// What the runner saw: the responses it took, and whether a `wait` job was stopped.
#[derive(Default)]
struct Seen {
    responses: RefCell<Vec<String>>,
    stopped: Cell<u32>,
}

struct Runner<'s>(&'s Seen);

impl TaskRunner for Runner<'_> {
    async fn run<'c>(&'c mut self, task: &'c mut TaskContext<'_>) {
        match task.name() {
            "ask" => {
                let requests = r#"{"q":{"method":"elicitation/create","params":{"message":"Go?","requestedSchema":{"type":"object","properties":{}}}}}"#;
                task.ask(requests).unwrap();
                let mut out = [0u8; 256];
                let Ok(taken) = task.responses(&mut out).await else {
                    return;
                };
                self.0.responses.borrow_mut().push(taken.to_string());
                let result = format!(
                    r#"{{"content":[{{"type":"text","text":"asked with {}"}}]}}"#,
                    task.data().replace('"', "'")
                );
                task.complete(&result).unwrap();
            }
            "wait" => {
                let forever = std::future::pending::<()>();
                if task.until_stopped(forever).await.is_none() {
                    self.0.stopped.set(self.0.stopped.get() + 1);
                }
            }
            // Returns without an outcome: the worker fails the task.
            _ => {}
        }
    }
}

/// A waker that records that it was woken.
#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

// ---- requests and responses ----------------------------------------------------------

const TASKS_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;

fn post(method: &str, name: &str, params: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params},{TASKS_META}}}}}"#
    );
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\nMcp-Name: {name}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// One request on its own connection; the JSON-RPC response (200 for a result, 400 for
/// an error).
fn exchange(server: &Server<'static, Device>, request: &str) -> Value {
    let sock = Sock::with(request.as_bytes());
    sock.close();
    let mut slot = Box::new(Slot::<4096, 4096, 2>::new());
    let mut s = sock.clone();
    let mut fut = Box::pin(server.serve(&mut slot, &mut s));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(
        fut.as_mut().poll(&mut cx).is_ready(),
        "the exchange ends at once"
    );
    let all = responses(&sock.take_output());
    assert_eq!(all.len(), 1, "one response");
    assert_eq!(all[0].header("content-type"), Some("application/json"));
    let v = all[0].json();
    let want = if v.get("error").is_some() { 400 } else { 200 };
    assert_eq!(all[0].status, want, "{v}");
    v
}

fn call(server: &Server<'static, Device>, tool: &str, args: &str) -> Value {
    let params = format!(r#""name":"{tool}","arguments":{args}"#);
    exchange(server, &post("tools/call", tool, &params))["result"].clone()
}

fn task_op(server: &Server<'static, Device>, method: &str, id: &str, extra: &str) -> Value {
    exchange(
        server,
        &post(method, id, &format!(r#""taskId":"{id}"{extra}"#)),
    )
}

fn get(server: &Server<'static, Device>, id: &str) -> Value {
    task_op(server, "tasks/get", id, "")["result"].clone()
}

type Worker<'a> = Pin<Box<dyn Future<Output = Infallible> + 'a>>;

/// Polls the worker once with `flag`'s waker: it must be waiting.
fn park(worker: &mut Worker<'_>, flag: &Arc<Flag>) {
    flag.0.store(false, Ordering::SeqCst);
    let waker = Waker::from(Arc::clone(flag));
    assert!(worker
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
}

#[test]
fn task_work_runs_after_the_response_and_reports_to_the_table() {
    let server = server();
    let seen = Seen::default();
    let mut runner = Runner(&seen);
    let mut memory = Box::new(TaskWorker::<64>::new());
    let mut worker: Worker<'_> = Box::pin(server.serve_tasks(&mut memory, &mut runner));
    let flag = Arc::new(Flag::default());
    park(&mut worker, &flag);

    // The call is answered with a working task before any work ran.
    let created = call(&server, "ask", r#"{"x":"1"}"#);
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 10_000);
    assert_eq!(created["createdAt"], "2026-07-28T12:34:56.789Z");
    let id = created["taskId"].as_str().unwrap().to_string();
    assert!(
        flag.0.load(Ordering::SeqCst),
        "queuing the job woke the worker"
    );

    // The worker takes the job and asks the client.
    park(&mut worker, &flag);
    let task = get(&server, &id);
    assert_eq!(task["status"], "input_required", "{task}");
    assert_eq!(
        task["inputRequests"]["q"]["method"], "elicitation/create",
        "{task}"
    );

    // tasks/update delivers the answer and wakes the worker, which completes the task.
    let update = task_op(
        &server,
        "tasks/update",
        &id,
        r#","inputResponses":{"q":{"action":"accept","content":{}}}"#,
    );
    assert_eq!(update["result"]["resultType"], "complete", "{update}");
    assert!(
        flag.0.load(Ordering::SeqCst),
        "tasks/update woke the worker"
    );
    park(&mut worker, &flag);
    assert_eq!(
        *seen.responses.borrow(),
        [r#""q":{"action":"accept","content":{}}"#]
    );
    let task = get(&server, &id);
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"],
        r#"asked with {'x':'1'}"#
    );
    // Kept until the TTL, not until fetched.
    assert_eq!(get(&server, &id)["status"], "completed");
}

#[test]
fn cancellation_stops_the_work_and_a_silent_runner_fails_its_task() {
    let server = server();
    let seen = Seen::default();
    let mut runner = Runner(&seen);
    let mut memory = Box::new(TaskWorker::<64>::new());
    let mut worker: Worker<'_> = Box::pin(server.serve_tasks(&mut memory, &mut runner));
    let flag = Arc::new(Flag::default());

    let id = call(&server, "wait", "{}")["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    park(&mut worker, &flag);
    assert_eq!(get(&server, &id)["status"], "working");
    assert_eq!(seen.stopped.get(), 0);

    let cancel = task_op(&server, "tasks/cancel", &id, "");
    assert_eq!(cancel["result"]["resultType"], "complete", "{cancel}");
    assert!(
        flag.0.load(Ordering::SeqCst),
        "tasks/cancel woke the worker"
    );
    park(&mut worker, &flag);
    assert_eq!(seen.stopped.get(), 1, "the work saw the cancellation");
    assert_eq!(get(&server, &id)["status"], "cancelled");
    // Idempotent on a terminal task.
    assert_eq!(
        task_op(&server, "tasks/cancel", &id, "")["result"]["resultType"],
        "complete"
    );

    // A runner that returns without an outcome: the worker fails the task.
    let id = call(&server, "quiet", "{}")["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    park(&mut worker, &flag);
    let task = get(&server, &id);
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(task["error"]["code"], -32603);
    assert_eq!(task["error"]["message"], "Task work ended without a result");
}

#[test]
fn a_full_job_queue_and_oversized_data_fail_the_task_at_once() {
    let server = server();
    // No worker runs: the one job slot stays taken.
    let first = call(&server, "wait", "{}");
    assert_eq!(first["status"], "working", "{first}");
    let second = call(&server, "wait", "{}");
    assert_eq!(second["status"], "failed", "{second}");
    let id = second["taskId"].as_str().unwrap();
    let task = get(&server, id);
    assert_eq!(task["error"]["message"], "No task worker free", "{task}");

    // 64 bytes per job: the tool's name and arguments do not fit.
    let server = self::server();
    let long = format!(r#"{{"x":"{}"}}"#, "y".repeat(80));
    let created = call(&server, "wait", &long);
    assert_eq!(created["status"], "failed", "{created}");
    let task = get(&server, created["taskId"].as_str().unwrap());
    assert_eq!(
        task["error"]["message"], "Task data exceeds its job slot",
        "{task}"
    );
}

#[test]
fn tasks_expire_on_the_clock_passed_in() {
    let server = server();
    let seen = Seen::default();
    let mut runner = Runner(&seen);
    let mut memory = Box::new(TaskWorker::<64>::new());
    let mut worker: Worker<'_> = Box::pin(server.serve_tasks(&mut memory, &mut runner));
    let flag = Arc::new(Flag::default());
    let id = call(&server, "quiet", "{}")["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    park(&mut worker, &flag);
    assert_eq!(get(&server, &id)["status"], "failed");
    NOW.set(NOW.get() + 10_000);
    let gone = task_op(&server, "tasks/get", &id, "");
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert_eq!(gone["error"]["message"], format!("Unknown task: {id}"));
}

/// The `data:` payloads of the SSE events in `out`, as JSON.
fn events(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// A `notifications/tasks` frame's task (without `_meta`), checked to be stream 1's.
fn notified(v: &Value) -> Value {
    assert_eq!(v["method"], "notifications/tasks", "{v}");
    assert_eq!(
        v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    let mut t = v["params"].clone();
    t.as_object_mut().unwrap().remove("_meta");
    t
}

/// `tasks/get` as a notification carries it (without `resultType` and `_meta`).
fn detailed(server: &Server<'static, Device>, id: &str) -> Value {
    let mut t = get(server, id);
    let o = t.as_object_mut().unwrap();
    o.remove("resultType");
    o.remove("_meta");
    t
}

#[test]
fn listen_streams_hear_task_status_changes() {
    let server = server();
    let seen = Seen::default();
    let mut runner = Runner(&seen);
    let mut memory = Box::new(TaskWorker::<64>::new());
    let mut worker: Worker<'_> = Box::pin(server.serve_tasks(&mut memory, &mut runner));
    let flag = Arc::new(Flag::default());
    park(&mut worker, &flag);
    let created = call(&server, "ask", r#"{"x":"1"}"#);
    let id = created["taskId"].as_str().unwrap().to_string();

    // A listen stream subscribed to the task (and an unknown id) on a slot of its own.
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{{"notifications":{{"taskIds":["{id}","nope"]}},{TASKS_META}}}}}"#
    );
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let sock = Sock::with(request.as_bytes());
    let mut slot = Box::new(Slot::<4096, 4096, 2>::new());
    let mut s = sock.clone();
    let mut stream = Box::pin(server.serve(&mut slot, &mut s));
    let woken = Arc::new(Flag::default());
    let waker = Waker::from(Arc::clone(&woken));
    macro_rules! poll_stream {
        () => {
            woken.0.store(false, Ordering::SeqCst);
            assert!(stream
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending());
        };
    }
    poll_stream!();
    let first = events(&sock.take_output());
    assert_eq!(first.len(), 2, "{first:?}");
    assert_eq!(
        first[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(
        first[0]["params"]["notifications"]["taskIds"],
        serde_json::json!([id])
    );
    // The current state right after the acknowledgement.
    assert_eq!(notified(&first[1])["status"], "working");

    // The worker asks the client: the stream is woken and hears input_required.
    park(&mut worker, &flag);
    assert!(woken.0.load(Ordering::SeqCst), "the ask woke the stream");
    poll_stream!();
    let asked = events(&sock.take_output());
    assert_eq!(asked.len(), 1, "{asked:?}");
    let task = notified(&asked[0]);
    assert_eq!(task["status"], "input_required");
    assert_eq!(task, detailed(&server, &id));

    // tasks/update (another connection), then the worker completes: the latest state.
    task_op(
        &server,
        "tasks/update",
        &id,
        r#","inputResponses":{"q":{"action":"accept","content":{}}}"#,
    );
    park(&mut worker, &flag);
    assert!(woken.0.load(Ordering::SeqCst));
    poll_stream!();
    let done = events(&sock.take_output());
    let last = notified(done.last().expect("a frame"));
    assert_eq!(last["status"], "completed", "{done:?}");
    assert_eq!(last, detailed(&server, &id));
    // Nothing changed since: nothing more.
    poll_stream!();
    assert!(events(&sock.take_output()).is_empty());
}
