//! The tasks extension's fixtures (SEP-2663, the conformance suite's `tasks-*` scenarios):
//! `greet` (never a task), `slow_compute`, `failing_job`, `protocol_error_job`,
//! `confirm_delete`, `multi_input` and `test_tool_with_task`.
//!
//! Each task tool is an inline handler: handed a task id (`CallRequest::task`), it spawns
//! the work and defers; the work reports to the shared table (result, error, input
//! requests). Without a task (a client that did not negotiate the extension) the optional
//! ones answer synchronously.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_rs_core::model::tasks::{TaskStore, TaskSupport, TaskTable};
use mcp_rs_core::{CallRequest, Dispatch, SecretKey, ToolResult};
use mcp_rs_tokio::{Handler, SharedTasks, ToolDef, ToolReply, Tools};
use serde_json::{json, Value};

/// Tasks kept at once, and the bytes of one task's result or input requests.
type Table = TaskTable<64, 8192>;

/// How often a running fixture looks for `tasks/update` answers and cancellation.
const POLL: Duration = Duration::from_millis(50);

const OBJECT: &str = r#"{"type":"object","properties":{}}"#;
const NAME_SCHEMA: &str = r#"{"type":"object","properties":{"name":{"type":"string"}}}"#;
const CONFIRM_SCHEMA: &str =
    r#"{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}"#;

/// The table, and every fixture registered against it.
pub(crate) fn register(tools: &Tools, key: SecretKey) -> SharedTasks {
    let table: Arc<Mutex<Table>> = Arc::new(Mutex::new(Table::new(key)));
    let shared: SharedTasks = table;
    tools.add(
        ToolDef::new(
            "greet",
            r#"{"type":"object","properties":{"name":{"type":"string"}}}"#,
        )
        .description("Says hello (never a task)"),
        Handler::sync(|req, r| {
            let name = arg_str(req, "name").unwrap_or_else(|| "World".into());
            r.text(&format!("Hello, {name}!"));
        }),
    );
    let t = shared.clone();
    tools.add(
        ToolDef::new(
            "slow_compute",
            r#"{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}"#,
        )
        .description("Sleeps `seconds`, then answers (a task when the client negotiated tasks)")
        .task(TaskSupport::Optional),
        Handler::mixed(
            move |req, r| slow_compute(&t, req, r),
            |args, _ctx| async move {
                let v = args.value();
                let secs = v.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
                tokio::time::sleep(Duration::from_secs_f64(secs.clamp(0.0, 3600.0))).await;
                ToolReply::text(computed(&v))
            },
        ),
    );
    let t = shared.clone();
    tools.add(
        ToolDef::new("failing_job", OBJECT)
            .description("Fails with a tool error after about a second (task only)")
            .task(TaskSupport::Required),
        inline(move |req, r| {
            spawn_or_fail(&t, req, r, |t, id| async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let result = json!({"content":[{"type":"text","text":"failing_job: the job failed"}],"isError":true});
                report(&t, &id, |s, now| s.complete(&id, &result.to_string(), now));
            })
        }),
    );
    let t = shared.clone();
    tools.add(
        ToolDef::new("protocol_error_job", OBJECT)
            .description("Ends in a protocol-level error (task only)")
            .task(TaskSupport::Required),
        inline(move |req, r| {
            spawn_or_fail(&t, req, r, |t, id| async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                report(&t, &id, |s, now| {
                    s.fail(&id, -32603, "protocol_error_job: internal failure", now)
                });
            })
        }),
    );
    let t = shared.clone();
    tools.add(
        ToolDef::new(
            "confirm_delete",
            r#"{"type":"object","properties":{"filename":{"type":"string"}}}"#,
        )
        .description("Asks the user to confirm, then deletes (nothing, really)")
        .task(TaskSupport::Optional),
        inline(move |req, r| {
            let file = arg_str(req, "filename").unwrap_or_else(|| "file".into());
            let Some(id) = req.task().map(|t| t.as_str().to_string()) else {
                r.text(&format!("Would delete {file} (confirmation needs a task)"));
                return Dispatch::Done;
            };
            let t = t.clone();
            tokio::spawn(async move {
                let ask = json!({"confirm": elicit(&format!("Delete {file}?"), CONFIRM_SCHEMA)});
                let Some(answers) = gather(&t, &id, &ask, 1).await else {
                    return;
                };
                let yes = answers.values().any(|a| {
                    a.get("action").and_then(Value::as_str) == Some("accept")
                        && a.pointer("/content/confirm").and_then(Value::as_bool) != Some(false)
                });
                let text = if yes {
                    format!("Deleted {file}")
                } else {
                    format!("Kept {file}")
                };
                let result = json!({"content":[{"type":"text","text":text}]});
                report(&t, &id, |s, now| s.complete(&id, &result.to_string(), now));
            });
            Dispatch::Defer
        }),
    );
    let t = shared.clone();
    tools.add(
        ToolDef::new("multi_input", OBJECT)
            .description("Asks two questions at once, then answers")
            .task(TaskSupport::Required),
        inline(move |req, r| {
            spawn_or_fail(&t, req, r, |t, id| async move {
                let ask = json!({
                    "name": elicit("Your name?", NAME_SCHEMA),
                    "confirm": elicit("Proceed?", CONFIRM_SCHEMA),
                });
                let Some(answers) = gather(&t, &id, &ask, 2).await else {
                    return;
                };
                let text = format!("Got {} answers", answers.len());
                let result = json!({"content":[{"type":"text","text":text}]});
                report(&t, &id, |s, now| s.complete(&id, &result.to_string(), now));
            })
        }),
    );
    let t = shared.clone();
    tools.add(
        ToolDef::new("test_tool_with_task", OBJECT)
            .description("Asks for the user's name (input_required), then greets as a task")
            .task(TaskSupport::Required),
        inline(move |req, r| {
            let name = req
                .input()
                .response("user_name")
                .and_then(|v| serde_json::from_str::<Value>(v.as_str()).ok())
                .and_then(|v| {
                    v.pointer("/content/name")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
            let Some(name) = name else {
                r.input_required(None, |q| {
                    q.elicit("user_name", "What is your name?", NAME_SCHEMA);
                });
                return Dispatch::Done;
            };
            // The last round: the work runs as the task the session created.
            let Some(id) = req.task().map(|t| t.as_str().to_string()) else {
                r.fail(format_args!("test_tool_with_task runs only as a task"));
                return Dispatch::Done;
            };
            let t = t.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let result = json!({"content":[{"type":"text","text":format!("Hello, {name}!")}]});
                report(&t, &id, |s, now| s.complete(&id, &result.to_string(), now));
            });
            Dispatch::Defer
        }),
    );
    shared
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Runs `f` on the table (a poisoned lock still holds plain data).
fn with<T>(t: &SharedTasks, f: impl FnOnce(&mut dyn TaskStore, u64) -> T) -> T {
    let mut guard = t.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    f(&mut *guard, now_ms())
}

/// Reports an outcome; a task cancelled or expired meanwhile ignores it (logged).
fn report<E: std::fmt::Display>(
    t: &SharedTasks,
    id: &str,
    f: impl FnOnce(&mut dyn TaskStore, u64) -> Result<(), E>,
) {
    if let Err(e) = with(t, f) {
        tracing::debug!("task {id}: outcome not stored: {e}");
    }
}

fn arg_str(req: &CallRequest<'_>, key: &str) -> Option<String> {
    let v: Value = serde_json::from_str(req.args().as_str()).ok()?;
    v.get(key)?.as_str().map(str::to_owned)
}

fn computed(args: &Value) -> String {
    let secs = args.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
    let label = args
        .get("label")
        .and_then(Value::as_str)
        .unwrap_or("compute");
    format!("{label}: computed after {secs} s")
}

/// `slow_compute`: at once when `seconds` is 0 (as a task: completed at creation), else a
/// sleep in a spawned task that stops when the task is cancelled.
fn slow_compute(t: &SharedTasks, req: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
    let args: Value = serde_json::from_str(req.args().as_str()).unwrap_or(Value::Null);
    let secs = args.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
    if secs <= 0.0 {
        r.text(&computed(&args));
        return Dispatch::Done;
    }
    let Some(id) = req.task().map(|t| t.as_str().to_string()) else {
        return Dispatch::Defer; // No task: the async part sleeps and answers.
    };
    let t = t.clone();
    tokio::spawn(async move {
        let until = tokio::time::Instant::now() + Duration::from_secs_f64(secs.min(3600.0));
        while tokio::time::Instant::now() < until {
            if with(&t, |s, now| s.is_cancelled(&id, now)) {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
        let result = json!({"content":[{"type":"text","text":computed(&args)}]});
        report(&t, &id, |s, now| s.complete(&id, &result.to_string(), now));
    });
    Dispatch::Defer
}

/// A task-only fixture: spawns `work` with the task id, or fails visibly without a task.
fn spawn_or_fail<F, Fut>(
    t: &SharedTasks,
    req: &CallRequest<'_>,
    r: &mut ToolResult<'_, '_>,
    work: F,
) -> Dispatch
where
    F: FnOnce(SharedTasks, String) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    match req.task() {
        Some(id) => {
            tokio::spawn(work(t.clone(), id.as_str().to_string()));
            Dispatch::Defer
        }
        None => {
            r.fail(format_args!("{} runs only as a task", req.name()));
            Dispatch::Done
        }
    }
}

/// An inline handler that spawns its own work (`Dispatch::Defer` only with a task, whose
/// table the work reports to): its async part never runs.
fn inline(
    f: impl Fn(&CallRequest<'_>, &mut ToolResult<'_, '_>) -> Dispatch + Send + Sync + 'static,
) -> Handler {
    Handler::mixed(f, |_, _| async {
        ToolReply::error("this tool defers only as a task")
    })
}

/// An `elicitation/create` input request.
fn elicit(message: &str, schema: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": serde_json::from_str::<Value>(schema).unwrap_or(Value::Null),
        }
    })
}

/// Parks the task on `requests` and waits until `count` answers arrived (`None`: the task
/// was cancelled or expired meanwhile).
async fn gather(
    t: &SharedTasks,
    id: &str,
    requests: &Value,
    count: usize,
) -> Option<serde_json::Map<String, Value>> {
    let text = requests.to_string();
    if let Err(e) = with(t, |s, now| s.ask(id, &text, now)) {
        tracing::debug!("task {id}: input requests not stored: {e}");
        return None;
    }
    let mut answers = serde_json::Map::new();
    let mut buf = vec![0u8; 8192];
    while answers.len() < count {
        tokio::time::sleep(POLL).await;
        let taken = with(t, |s, now| {
            if s.is_cancelled(id, now) {
                return Err(());
            }
            s.take_responses(id, &mut buf, now)
                .map(|o| o.map(str::to_owned))
                .map_err(|_| ())
        });
        match taken {
            Err(()) => return None,
            Ok(None) => {}
            Ok(Some(members)) => {
                if let Ok(Value::Object(m)) = serde_json::from_str(&format!("{{{members}}}")) {
                    answers.extend(m);
                }
            }
        }
    }
    Some(answers)
}
