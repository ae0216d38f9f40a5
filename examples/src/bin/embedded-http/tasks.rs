//! The tasks extension's fixtures (SEP-2663, the conformance suite's `tasks-*` scenarios),
//! as `everything` serves them: `greet` (never a task), `slow_compute`, `failing_job`,
//! `protocol_error_job`, `confirm_delete`, `multi_input` and `test_tool_with_task`.
//!
//! Heap-free: a tool handed a task queues a job in the handler's [`TaskHost`] (its
//! arguments, or the name gathered before the task) and defers; a task worker
//! ([`Work`], run by `Server::serve_tasks` beside the connection slots) runs it, sleeping
//! on the executor's timers and reporting to the table. Without a task (a client that did
//! not negotiate the extension) the optional ones answer synchronously: `slow_compute`
//! sleeps on the connection's slot ([`crate::handler::Runner`]).

use core::fmt::Write as _;
use std::time::Duration;

use mcp_rs_core::model::tasks::{TaskSupport, TaskTable};
use mcp_rs_core::wire::json::{self, JsonWriter, Limits, RawJson};
use mcp_rs_core::{CallRequest, Dispatch, SecretKey, Tool, ToolResult};
use mcp_rs_embedded::http::{TaskContext, TaskRunner};
use mcp_rs_embedded::tasks::TaskHost;

use crate::handler::{tool, Buf};
use crate::net::Timer;

/// Tasks kept at once (each lives 5 minutes), the bytes of one task's result or input
/// requests, jobs waiting for a worker, and the bytes of one job (tool name and arguments).
pub(crate) type Host = TaskHost<64, 4096, 8, 1024>;
/// Task workers (futures beside the connection slots).
pub(crate) const WORKERS: usize = 4;
/// Bytes of a worker's job memory (the host's `A`).
pub(crate) const JOB: usize = 1024;

/// The host, empty.
pub(crate) fn host(key: SecretKey) -> Host {
    TaskHost::new(TaskTable::new(key))
}

const OBJECT: &str = r#"{"type":"object","properties":{}}"#;
const NAME_SCHEMA: &str = r#"{"type":"object","properties":{"name":{"type":"string"}}}"#;
const CONFIRM_SCHEMA: &str =
    r#"{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}"#;

/// The fixtures, after `everything`'s other tools (as `everything` registers them).
pub(crate) static TOOLS: [Tool<'static>; 7] = [
    tool("greet", "Says hello (never a task)", NAME_SCHEMA),
    tool(
        "slow_compute",
        "Sleeps `seconds`, then answers (a task when the client negotiated tasks)",
        r#"{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}"#,
    ),
    tool(
        "failing_job",
        "Fails with a tool error after about a second (task only)",
        OBJECT,
    ),
    tool(
        "protocol_error_job",
        "Ends in a protocol-level error (task only)",
        OBJECT,
    ),
    tool(
        "confirm_delete",
        "Asks the user to confirm, then deletes (nothing, really)",
        r#"{"type":"object","properties":{"filename":{"type":"string"}}}"#,
    ),
    tool(
        "multi_input",
        "Asks two questions at once, then answers",
        OBJECT,
    ),
    tool(
        "test_tool_with_task",
        "Asks for the user's name (input_required), then greets as a task",
        OBJECT,
    ),
];

/// `TOOLS[index]`'s task support.
pub(crate) fn support(index: usize) -> TaskSupport {
    match index {
        1 | 4 => TaskSupport::Optional,
        2 | 3 | 5 | 6 => TaskSupport::Required,
        _ => TaskSupport::Forbidden,
    }
}

/// `slow_compute`'s `seconds`, clamped to an hour.
pub(crate) fn seconds(args: RawJson<'_>) -> f64 {
    args.get("seconds")
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0)
        .clamp(0.0, 3600.0)
}

/// `slow_compute`'s text.
pub(crate) fn computed(args: RawJson<'_>, out: &mut dyn core::fmt::Write) {
    let secs = args.get("seconds").and_then(|v| v.as_f64()).unwrap_or(0.0);
    let label = args.get("label").and_then(|v| v.as_string());
    let _ = match label {
        Some(l) => write!(out, "{l}: computed after {secs} s"),
        None => write!(out, "compute: computed after {secs} s"),
    };
}

/// Calls `TOOLS[index]`.
pub(crate) fn call(
    host: &mut Host,
    index: usize,
    req: &CallRequest<'_>,
    r: &mut ToolResult<'_, '_>,
    now_ms: u64,
) -> Dispatch {
    let Some(tool) = TOOLS.get(index) else {
        return Dispatch::Defer;
    };
    let args = req.args();
    let queue = |host: &mut Host, data: &str| {
        if let Some(id) = req.task() {
            // A refusal fails the task, which the client then sees.
            let _ = host.queue(id, tool.name, data, now_ms);
        }
        Dispatch::Defer
    };
    match tool.name {
        "greet" => {
            match args.get("name").and_then(|v| v.as_string()) {
                Some(name) => r.text_fmt(format_args!("Hello, {name}!")),
                None => r.text("Hello, World!"),
            };
            Dispatch::Done
        }
        "slow_compute" if seconds(args) <= 0.0 => {
            let mut text = Buf::<512>::new();
            computed(args, &mut text);
            r.text(text.as_str());
            Dispatch::Done
        }
        // Without a task: the slot's runner sleeps, then answers.
        "slow_compute" => queue(host, args.as_str()),
        "confirm_delete" if req.task().is_none() => {
            match args.get("filename").and_then(|v| v.as_string()) {
                Some(f) => r.text_fmt(format_args!("Would delete {f} (confirmation needs a task)")),
                None => r.text("Would delete file (confirmation needs a task)"),
            };
            Dispatch::Done
        }
        "test_tool_with_task" => {
            let name = req
                .input()
                .response("user_name")
                .and_then(|v| v.get("content"))
                .and_then(|c| c.get("name"))
                .filter(|n| n.as_string().is_some());
            match name {
                // Before the task: one MRTR round, then the task greets.
                None => {
                    r.input_required(None, |q| {
                        q.elicit("user_name", "What is your name?", NAME_SCHEMA);
                    });
                    Dispatch::Done
                }
                Some(_) if req.task().is_none() => {
                    r.fail(format_args!("test_tool_with_task runs only as a task"));
                    Dispatch::Done
                }
                // The name as a JSON string: the worker writes it back as it came.
                Some(n) => queue(host, n.as_str()),
            }
        }
        _ if req.task().is_none() => {
            r.fail(format_args!("{} runs only as a task", tool.name));
            Dispatch::Done
        }
        _ => queue(host, args.as_str()),
    }
}

/// Writes `{"content":[{"type":"text","text":<text>}]}` (with `"isError":true` when
/// `error`) into `out`.
fn text_result<'o>(out: &'o mut [u8], error: bool, text: &str) -> &'o str {
    let mut w = JsonWriter::new(out);
    w.begin_object();
    w.key("content");
    w.begin_array();
    w.begin_object();
    w.key("type");
    w.string("text");
    w.key("text");
    w.string(text);
    w.end_object();
    w.end_array();
    if error {
        w.key("isError");
        w.bool(true);
    }
    w.end_object();
    let len = w.finish().unwrap_or(0);
    core::str::from_utf8(out.get(..len).unwrap_or_default()).unwrap_or("")
}

/// Writes an `elicitation/create` input request as the member `key` (inside an open
/// object).
fn elicit(w: &mut JsonWriter<'_>, key: &str, message: &str, schema: &str) {
    w.key(key);
    w.begin_object();
    w.key("method");
    w.string("elicitation/create");
    w.key("params");
    w.begin_object();
    w.key("message");
    w.string(message);
    w.key("requestedSchema");
    w.raw_value(schema);
    w.end_object();
    w.end_object();
}

/// One task worker's runner: its timer and scratch space.
pub(crate) struct Work {
    pub(crate) timer: Timer,
    out: [u8; 4096],
    answers: [u8; 4096],
}

impl Work {
    pub(crate) fn new(timer: Timer) -> Self {
        Work {
            timer,
            out: [0; 4096],
            answers: [0; 4096],
        }
    }

    /// Sleeps `d` unless the task stops first (`false` then).
    async fn sleep(&self, task: &TaskContext<'_>, d: Duration) -> bool {
        task.until_stopped(self.timer.sleep(d)).await.is_some()
    }

    /// Parks the task on `requests` (written by `ask`) and waits until `count` answers
    /// arrived; how many were accepted (`"action":"accept"` without `confirm: false`),
    /// or `None` when the task stopped.
    async fn gather(
        &mut self,
        task: &TaskContext<'_>,
        ask: impl FnOnce(&mut JsonWriter<'_>),
        count: usize,
    ) -> Option<(usize, usize)> {
        let mut w = JsonWriter::new(&mut self.out);
        w.begin_object();
        ask(&mut w);
        w.end_object();
        let len = w.finish().ok()?;
        let requests = core::str::from_utf8(self.out.get(..len)?).ok()?;
        task.ask(requests).ok()?;
        let (mut got, mut yes) = (0, 0);
        while got < count {
            let mut taken = [0u8; 2048];
            let members = task.responses(&mut taken).await.ok()?;
            // `"key":value,...` as an object, in the answers buffer.
            let mut w = JsonWriter::new(&mut self.answers);
            w.raw("{");
            w.raw(members);
            w.raw("}");
            let len = w.finish().ok()?;
            let text = core::str::from_utf8(self.answers.get(..len)?).ok()?;
            let object = json::parse(text.as_bytes(), Limits::default()).ok()?;
            for (_, answer) in object.members()? {
                got += 1;
                let accepted = answer
                    .get("action")
                    .and_then(|a| a.as_string())
                    .is_some_and(|a| a.eq_str("accept"));
                let refused = answer
                    .get("content")
                    .and_then(|c| c.get("confirm"))
                    .and_then(|c| c.as_bool())
                    == Some(false);
                if accepted && !refused {
                    yes += 1;
                }
            }
        }
        Some((got, yes))
    }

    fn complete(&mut self, task: &TaskContext<'_>, error: bool, text: &str) {
        let result = text_result(&mut self.out, error, text);
        let _ = task.complete(result);
    }
}

impl TaskRunner for Work {
    async fn run<'c>(&'c mut self, task: &'c mut TaskContext<'_>) {
        let args = json::parse(task.data().as_bytes(), Limits::default()).ok();
        let mut text = Buf::<1024>::new();
        match task.name() {
            "slow_compute" => {
                let Some(args) = args else { return };
                let secs = Duration::from_secs_f64(seconds(args));
                if self.sleep(task, secs).await {
                    computed(args, &mut text);
                    self.complete(task, false, text.as_str());
                }
            }
            "failing_job" => {
                if !self.sleep(task, Duration::from_secs(1)).await {
                    return;
                }
                self.complete(task, true, "failing_job: the job failed");
            }
            "protocol_error_job" => {
                if !self.sleep(task, Duration::from_millis(200)).await {
                    return;
                }
                let _ = task.fail(-32603, "protocol_error_job: internal failure");
            }
            "confirm_delete" => {
                let file = args
                    .and_then(|a| a.get("filename"))
                    .and_then(|f| f.as_string());
                let mut message = Buf::<512>::new();
                let _ = match file {
                    Some(f) => write!(message, "Delete {f}?"),
                    None => write!(message, "Delete file?"),
                };
                let ask = |w: &mut JsonWriter<'_>| {
                    elicit(w, "confirm", message.as_str(), CONFIRM_SCHEMA);
                };
                let Some((_, yes)) = self.gather(task, ask, 1).await else {
                    return;
                };
                let verb = if yes > 0 { "Deleted" } else { "Kept" };
                let _ = match file {
                    Some(f) => write!(text, "{verb} {f}"),
                    None => write!(text, "{verb} file"),
                };
                self.complete(task, false, text.as_str());
            }
            "multi_input" => {
                let ask = |w: &mut JsonWriter<'_>| {
                    elicit(w, "name", "Your name?", NAME_SCHEMA);
                    elicit(w, "confirm", "Proceed?", CONFIRM_SCHEMA);
                };
                let Some((got, _)) = self.gather(task, ask, 2).await else {
                    return;
                };
                let _ = write!(text, "Got {got} answers");
                self.complete(task, false, text.as_str());
            }
            "test_tool_with_task" => {
                if !self.sleep(task, Duration::from_millis(200)).await {
                    return;
                }
                let name = json::parse(task.data().as_bytes(), Limits::default())
                    .ok()
                    .and_then(|n| n.as_string());
                let _ = match name {
                    Some(n) => write!(text, "Hello, {n}!"),
                    None => write!(text, "Hello!"),
                };
                self.complete(task, false, text.as_str());
            }
            _ => {}
        }
    }
}
