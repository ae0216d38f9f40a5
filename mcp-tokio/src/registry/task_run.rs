//! Async tools that run as tasks (tasks extension, SEP-2663). A `tools/call` the session
//! made a task of ([`ToolDef::task`](crate::ToolDef::task)) whose handler defers is not
//! handed to the drive loop (the call was answered with `CreateTaskResult`): its async
//! part runs here, detached, with a [`Context`] that names the task. Its answer is
//! rendered by the core's writer ([`ToolResult::render_task`]) and stored as the task's
//! result; a panic stores an `isError` result, as a direct call answers one. The task
//! ends on the table's time (the session clock). `tasks/cancel`, from any connection, moves
//! the table's change counter (the one that wakes `subscriptions/listen` streams), which
//! wakes the runner at once; expiry, which changes nothing in the table, is noticed at the
//! task's deadline (`createdAt` + `ttlMs`), checked again every [`EXPIRY_RECHECK`] after
//! it. Either way the handler's [`Context::cancelled`] resolves and its future is dropped
//! at its next await point.

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

/// How often a running task tool's table entry is checked again once its deadline
/// (`createdAt` + `ttlMs`) has passed without the table expiring it (a `TaskStore` of the
/// application's may keep tasks longer than its `ttlMs`).
pub(crate) const EXPIRY_RECHECK: Duration = Duration::from_secs(1);

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

/// When the task expires (`createdAt` + `ttlMs`), as an instant of the runtime's clock;
/// now for a task that is already gone.
fn deadline(handle: &TaskHandle) -> tokio::time::Instant {
    let left = handle.with(|s, now| {
        s.view(handle.id(), now).map_or(0, |v| {
            v.created_ms
                .saturating_add(u64::from(v.ttl_ms))
                .saturating_sub(now)
        })
    });
    tokio::time::Instant::now() + Duration::from_millis(left)
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
    // Subscribed before the first check: a change made after it wakes the loop.
    let mut changes = handle.tasks.changed.subscribe();
    let mut check_at = deadline(&handle);
    let reply = loop {
        tokio::select! {
            biased;
            out = &mut work => {
                break out.unwrap_or_else(|_| ToolReply::error(format!("tool {name} panicked")));
            }
            // The sender lives in the handle's table reference: this never ends in an
            // error while the handle is alive.
            Ok(()) = changes.changed() => {}
            () = tokio::time::sleep_until(check_at) => {
                check_at = tokio::time::Instant::now() + EXPIRY_RECHECK;
            }
        }
        if ended(&handle) {
            let _ = cancel.send(true);
            return;
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use mcp_rs_core::model::tasks::{TaskStore, TaskTable};
    use mcp_rs_core::{ProtocolVersion, SecretKey};
    use tokio::sync::watch;
    use tokio::time::Instant;

    use super::run;
    use crate::context::{TaskHandle, TaskTableRef};
    use crate::output::ToolReply;

    /// `tasks/cancel` wakes the runner at once: on a paused clock (which only moves when
    /// every task waits for a timer), the runner ends (dropping the tool's future) with no
    /// time passed. A runner that polled the table would let the clock jump to its next
    /// poll.
    #[tokio::test(start_paused = true)]
    async fn a_cancel_wakes_the_runner_without_waiting_for_a_timer() {
        let table = TaskTableRef::new(Arc::new(Mutex::new(TaskTable::<2, 256>::new(SecretKey(
            [3; 16],
        )))));
        let id = {
            let mut locked = table.lock();
            locked.create(crate::clock::now_ms()).unwrap()
        };
        let handle = TaskHandle {
            id: Arc::from(id.as_str()),
            tasks: table,
        };
        let (cancel, mut cancelled) = watch::channel(false);
        let work: crate::BoxFuture = Box::pin(async move {
            let _ = cancelled.changed().await;
            std::future::pending::<ToolReply>().await
        });
        let runner = tokio::spawn(run(
            work,
            handle.clone(),
            cancel,
            ProtocolVersion::LATEST,
            "forever".into(),
        ));
        tokio::task::yield_now().await;
        let cancelled_at = Instant::now();
        handle
            .with(|s, now| s.cancel(handle.id(), now))
            .expect("cancel");
        runner.await.expect("the runner ends");
        assert_eq!(
            Instant::now(),
            cancelled_at,
            "the clock moved: the runner polled"
        );
    }
}
