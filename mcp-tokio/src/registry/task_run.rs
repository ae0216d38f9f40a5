//! Async tools that run as tasks (tasks extension, SEP-2663). A `tools/call` the session
//! made a task of ([`ToolDef::task`](crate::ToolDef::task)) whose handler defers is not
//! handed to the drive loop (the call was answered with `CreateTaskResult`): its async
//! part runs here, detached, with a [`Context`] that names the task. Its answer is
//! rendered by the core's writer ([`ToolResult::render_task`]) and stored as the task's
//! result; a panic stores an `isError` result, as a direct call answers one. The task
//! ends on the table's time (the session clock): `tasks/cancel` or expiry is noticed
//! within [`POLL`], the handler's [`Context::cancelled`] resolves and its future is
//! dropped at its next await point.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use mcp_rs_core::model::tasks::TaskStore;
use mcp_rs_core::model::tools::RenderError;
use mcp_rs_core::wire::jsonrpc::code;
use mcp_rs_core::{CallRequest, ProtocolVersion, ToolResult};
use tokio::sync::{mpsc, watch};

use super::{Args, AsyncFn};
use crate::context::{Context, TaskHandle, TaskTableRef};
use crate::output::ToolReply;
use crate::principal::Principal;

/// How often a running task tool's table entry is checked for `tasks/cancel` and expiry.
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// Bytes a task's result is first rendered into; a larger one is rendered again into a
/// buffer of the size it needs (the table then takes it or fails the task with that size).
const FIRST_RENDER: usize = 1024;

/// Starts `handler` for `request` (which carries its task) on the current runtime; without
/// one ([`Server::serve_blocking`](crate::Server::serve_blocking)) the task fails with
/// -32603 instead.
pub(crate) fn spawn(handler: &Arc<AsyncFn>, request: &CallRequest<'_>, tasks: &TaskTableRef) {
    let Some(task) = request.task() else { return };
    let handle = TaskHandle {
        id: Arc::from(task.as_str()),
        tasks: tasks.clone(),
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        let why = "This server runs without an async runtime (serve_blocking)";
        let id = handle.id();
        let _ = handle.with(|s, now| s.fail(id, code::INTERNAL_ERROR, why, now));
        return;
    };
    let (cancel, cancelled) = watch::channel(false);
    // No request remains to carry progress, logs or client requests: their channel has
    // no receiver, and the context sends nothing without a call token anyway.
    let (tx, _) = mpsc::channel(1);
    let ctx = Context {
        token: None,
        wants_progress: false,
        caps: request.client_caps(),
        version: request.version(),
        principal: request
            .adapter_data::<Principal>()
            .map(|p| Arc::new(p.clone())),
        tx,
        cancelled,
        task: Some(handle.clone()),
    };
    let name = request.name().to_string();
    let version = request.version();
    let work = handler(Args::new(request.args().as_str().to_owned()), ctx);
    runtime.spawn(run(work, handle, cancel, version, name));
}

/// Whether the task is gone (expired) or has ended (cancelled, or failed by the tool).
fn ended(handle: &TaskHandle) -> bool {
    handle.with(|s, now| {
        s.view(handle.id(), now)
            .is_none_or(|v| v.status.is_terminal())
    })
}

async fn run(
    work: crate::BoxFuture,
    handle: TaskHandle,
    cancel: watch::Sender<bool>,
    version: ProtocolVersion,
    name: String,
) {
    let mut work = AssertUnwindSafe(work).catch_unwind();
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let reply = loop {
        tokio::select! {
            biased;
            out = &mut work => {
                break out.unwrap_or_else(|_| ToolReply::error(format!("tool {name} panicked")));
            }
            _ = tick.tick() => {
                if ended(&handle) {
                    let _ = cancel.send(true);
                    return;
                }
            }
        }
    };
    store(&handle, version, &reply);
}

/// Stores `reply` as the task's result (a task that ended meanwhile keeps its outcome).
fn store(handle: &TaskHandle, version: ProtocolVersion, reply: &ToolReply) {
    let id = handle.id();
    let write = |r: &mut ToolResult<'_, '_>| reply.write(r);
    let mut buf = vec![0u8; FIRST_RENDER];
    let mut len = match ToolResult::render_task(&mut buf, version, write) {
        Ok(text) => Ok(text.len()),
        Err(e) => Err(e),
    };
    if let Err(RenderError::TooSmall { needed }) = len {
        buf = vec![0u8; needed];
        len = ToolResult::render_task(&mut buf, version, write).map(str::len);
    }
    // The writer wrote UTF-8 (`render_task` checked it).
    let text = len
        .ok()
        .and_then(|n| std::str::from_utf8(buf.get(..n)?).ok());
    let outcome = handle.with(|s: &mut dyn TaskStore, now| match text {
        Some(text) => s.complete(id, text, now),
        None => s.fail(
            id,
            code::INTERNAL_ERROR,
            "Tool handler misused the result builder",
            now,
        ),
    });
    if let Err(e) = outcome {
        tracing::debug!("task {id}: result not stored: {e}");
    }
}
