//! The tasks extension's fixtures (SEP-2663, the conformance suite's `tasks-*` scenarios):
//! `greet` (never a task), `slow_compute`, `failing_job`, `protocol_error_job`,
//! `confirm_delete`, `multi_input` and `test_tool_with_task`.
//!
//! `slow_compute` and `failing_job` are plain `async fn`s made tasks by one attribute,
//! `#[tool(task)]`: mcp-tokio answers a task-augmented call with `CreateTaskResult` and runs
//! the method detached, storing its answer as the task's result. The others use the same
//! path through `ToolDef::task`: their async part runs as the task and reaches the table
//! through `Context::task` (input requests, a protocol-level failure).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_rs_core::model::tasks::{TaskStore, TaskSupport, TaskTable};
use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::{CallRequest, Dispatch, SecretKey};
use mcp_rs_tokio::{
    Context, Handler, SharedTasks, TaskHandle, ToolArgs, ToolDef, ToolReply, Tools,
};
use serde_json::{json, Value};

/// Tasks kept at once, and the bytes of one task's result or input requests.
type Table = TaskTable<64, 8192>;

/// How often a running fixture looks for `tasks/update` answers.
const POLL: Duration = Duration::from_millis(50);

const OBJECT: &str = r#"{"type":"object","properties":{}}"#;
const NAME_SCHEMA: &str = r#"{"type":"object","properties":{"name":{"type":"string"}}}"#;
const CONFIRM_SCHEMA: &str =
    r#"{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}"#;

/// `slow_compute`'s arguments.
#[derive(ToolArgs)]
#[arg(allow_unknown)]
struct SlowArgs<'a> {
    /// Seconds to work before answering
    seconds: Option<f64>,
    /// What the answer is labelled with
    label: Option<JsonStr<'a>>,
}

/// `failing_job`'s arguments: none read.
#[derive(ToolArgs)]
#[arg(allow_unknown)]
struct NoArgs {}

/// The fixtures written as attributed `async fn`s.
struct Jobs;

#[mcp_rs_tokio::tools]
impl Jobs {
    /// Sleeps `seconds`, then answers (a task when the client negotiated tasks)
    #[tool(task)]
    async fn slow_compute(&self, args: SlowArgs<'_>) -> String {
        let secs = args.seconds.unwrap_or(0.0).clamp(0.0, 3600.0);
        if secs > 0.0 {
            tokio::time::sleep(Duration::from_secs_f64(secs)).await;
        }
        let label = args
            .label
            .map_or_else(|| "compute".into(), |l| l.to_string());
        format!("{label}: computed after {} s", args.seconds.unwrap_or(0.0))
    }

    /// Fails with a tool error after about a second (task only)
    #[tool(task = "required")]
    async fn failing_job(&self, _: NoArgs) -> Result<(), &'static str> {
        tokio::time::sleep(Duration::from_secs(1)).await;
        Err("failing_job: the job failed")
    }
}

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
    Arc::new(Jobs).register(tools);
    tools.add(
        ToolDef::new("protocol_error_job", OBJECT)
            .description("Ends in a protocol-level error (task only)")
            .task(TaskSupport::Required),
        Handler::async_fn(|_, ctx| async move {
            let Some(task) = ctx.task() else {
                return ToolReply::error("protocol_error_job runs only as a task");
            };
            tokio::time::sleep(Duration::from_millis(200)).await;
            report(task, |s, id, now| {
                s.fail(id, -32603, "protocol_error_job: internal failure", now)
            });
            // The task has failed already: this answer is not stored.
            ToolReply::default()
        }),
    );
    tools.add(
        ToolDef::new(
            "confirm_delete",
            r#"{"type":"object","properties":{"filename":{"type":"string"}}}"#,
        )
        .description("Asks the user to confirm, then deletes (nothing, really)")
        .task(TaskSupport::Optional),
        Handler::mixed(
            |req, r| {
                if req.task().is_some() {
                    return Dispatch::Defer;
                }
                let file = arg_str(req, "filename").unwrap_or_else(|| "file".into());
                r.text(&format!("Would delete {file} (confirmation needs a task)"));
                Dispatch::Done
            },
            |args, ctx| async move {
                let v = args.value();
                let file = v.get("filename").and_then(Value::as_str).unwrap_or("file");
                let ask = json!({"confirm": elicit(&format!("Delete {file}?"), CONFIRM_SCHEMA)});
                let Some(answers) = gather(&ctx, &ask, 1).await else {
                    return ToolReply::error("confirm_delete: no answer");
                };
                let yes = answers.values().any(|a| {
                    a.get("action").and_then(Value::as_str) == Some("accept")
                        && a.pointer("/content/confirm").and_then(Value::as_bool) != Some(false)
                });
                ToolReply::text(if yes {
                    format!("Deleted {file}")
                } else {
                    format!("Kept {file}")
                })
            },
        ),
    );
    tools.add(
        ToolDef::new("multi_input", OBJECT)
            .description("Asks two questions at once, then answers")
            .task(TaskSupport::Required),
        Handler::async_fn(|_, ctx| async move {
            let ask = json!({
                "name": elicit("Your name?", NAME_SCHEMA),
                "confirm": elicit("Proceed?", CONFIRM_SCHEMA),
            });
            match gather(&ctx, &ask, 2).await {
                Some(answers) => ToolReply::text(format!("Got {} answers", answers.len())),
                None => ToolReply::error("multi_input: no answers"),
            }
        }),
    );
    tools.add(
        ToolDef::new("test_tool_with_task", OBJECT)
            .description("Asks for the user's name (input_required), then greets as a task")
            .task(TaskSupport::Required),
        Handler::sync(|req, r| {
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
                return;
            };
            // The last round: answered inline, the result of the task the session created.
            if req.task().is_none() {
                r.fail(format_args!("test_tool_with_task runs only as a task"));
                return;
            }
            r.text(&format!("Hello, {name}!"));
        }),
    );
    shared
}

/// Reports an outcome; a task cancelled or expired meanwhile ignores it (logged).
fn report<E: std::fmt::Display>(
    task: &TaskHandle,
    f: impl FnOnce(&mut dyn TaskStore, &str, u64) -> Result<(), E>,
) {
    let id = task.id();
    if let Err(e) = task.with(|s, now| f(s, id, now)) {
        tracing::debug!("task {id}: outcome not stored: {e}");
    }
}

fn arg_str(req: &CallRequest<'_>, key: &str) -> Option<String> {
    let v: Value = serde_json::from_str(req.args().as_str()).ok()?;
    v.get(key)?.as_str().map(str::to_owned)
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

/// Parks the call's task on `requests` and waits until `count` answers arrived (`None`: no
/// task, or it could not ask; a task cancelled or expired meanwhile ends this future).
async fn gather(
    ctx: &Context,
    requests: &Value,
    count: usize,
) -> Option<serde_json::Map<String, Value>> {
    let task = ctx.task()?;
    let id = task.id();
    let text = requests.to_string();
    if let Err(e) = task.with(|s, now| s.ask(id, &text, now)) {
        tracing::debug!("task {id}: input requests not stored: {e}");
        return None;
    }
    let mut answers = serde_json::Map::new();
    let mut buf = vec![0u8; 8192];
    while answers.len() < count {
        tokio::time::sleep(POLL).await;
        let taken = task.with(|s, now| {
            s.take_responses(id, &mut buf, now)
                .map(|o| o.map(str::to_owned))
        });
        match taken {
            Err(_) => return None,
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
