//! What a call's task gets ([`Context`]: progress, logging, cancellation, requests to the
//! client) and what it sends back to its connection's drive loop ([`Command`]).

use mcp_rs_core::model::common::ClientCaps;
use mcp_rs_core::model::tasks::{TaskError, TaskId, TaskStore, TaskView};
use mcp_rs_core::wire::json::RawJson;
use mcp_rs_core::{CallError, CallToken, ClientMethod, LogLevel, ProtocolVersion};
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};

use crate::output::{CompletionOutput, ErrorReply, PromptOutput, ResourceOutput, ToolReply};
use crate::principal::Principal;

/// A task table shared by the server (which answers `tasks/*` from it) and the tools that
/// report to it ([`Server::tasks`](crate::Server::tasks)).
pub type SharedTasks =
    std::sync::Arc<std::sync::Mutex<dyn mcp_rs_core::model::tasks::TaskStore + Send>>;

/// The server's task table and the counter of its changes: every drive loop with a
/// `subscriptions/listen` stream watches the counter and, when it moves, sends the
/// `notifications/tasks` its subscribed tasks are owed
/// ([`Session::tasks_changed_next`](mcp_rs_core::Session::tasks_changed_next)). Every
/// access of the server goes through [`Watched`], which moves the counter when a call
/// changed the table (a session's `tasks/*`, a task tool's [`TaskHandle::with`], the
/// detached runner storing a result).
#[derive(Clone)]
pub(crate) struct TaskTableRef {
    pub(crate) table: SharedTasks,
    pub(crate) changed: Arc<watch::Sender<u64>>,
}

impl TaskTableRef {
    pub(crate) fn new(table: SharedTasks) -> Self {
        TaskTableRef {
            table,
            changed: Arc::new(watch::channel(0).0),
        }
    }

    /// The table, locked, counting changes until dropped.
    pub(crate) fn lock(&self) -> Watched<'_> {
        Watched {
            // A tool that panicked holding the table leaves plain data behind.
            guard: self
                .table
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            changed: &self.changed,
            mutated: false,
        }
    }
}

/// The locked task table; a call that may have changed a task moves the change counter
/// when this drops (a read, `view` or `is_cancelled`, does not: expiry sends nothing).
pub(crate) struct Watched<'a> {
    guard: std::sync::MutexGuard<'a, dyn TaskStore + Send + 'static>,
    changed: &'a watch::Sender<u64>,
    mutated: bool,
}

impl Drop for Watched<'_> {
    fn drop(&mut self) {
        if self.mutated {
            self.changed.send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

impl TaskStore for Watched<'_> {
    fn create(&mut self, now_ms: u64) -> Result<TaskId, TaskError> {
        self.mutated = true;
        self.guard.create(now_ms)
    }
    fn view(&mut self, id: &str, now_ms: u64) -> Option<TaskView<'_>> {
        self.guard.view(id, now_ms)
    }
    fn answer(&mut self, id: &str, responses: RawJson<'_>, now_ms: u64) -> Result<(), TaskError> {
        self.mutated = true;
        self.guard.answer(id, responses, now_ms)
    }
    fn cancel(&mut self, id: &str, now_ms: u64) -> Result<(), TaskError> {
        self.mutated = true;
        self.guard.cancel(id, now_ms)
    }
    fn complete(&mut self, id: &str, result: &str, now_ms: u64) -> Result<(), TaskError> {
        self.mutated = true;
        self.guard.complete(id, result, now_ms)
    }
    fn fail(&mut self, id: &str, code: i32, message: &str, now_ms: u64) -> Result<(), TaskError> {
        self.mutated = true;
        self.guard.fail(id, code, message, now_ms)
    }
    fn remove(&mut self, id: &str) {
        self.mutated = true;
        self.guard.remove(id);
    }
    fn ask(&mut self, id: &str, requests: &str, now_ms: u64) -> Result<(), TaskError> {
        self.mutated = true;
        self.guard.ask(id, requests, now_ms)
    }
    fn take_responses<'o>(
        &mut self,
        id: &str,
        out: &'o mut [u8],
        now_ms: u64,
    ) -> Result<Option<&'o str>, TaskError> {
        let taken = self.guard.take_responses(id, out, now_ms);
        // Taking answers may resume a task (another table may show it).
        self.mutated |= matches!(taken, Ok(Some(_)));
        taken
    }
    fn is_cancelled(&mut self, id: &str, now_ms: u64) -> bool {
        self.guard.is_cancelled(id, now_ms)
    }
}

/// What tool tasks send back to their connection's drive loop.
pub(crate) enum Command {
    /// A deferred request's answer.
    Done(CallToken, Answer),
    CloseStream(CallToken),
    Progress {
        token: CallToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        token: CallToken,
        level: LogLevel,
        logger: Option<String>,
        data: String,
    },
    Request {
        token: CallToken,
        method: ClientMethod,
        params: String,
        reply: oneshot::Sender<Result<serde_json::Value, RequestError>>,
    },
}

/// The answer of a deferred request's task.
pub(crate) enum Answer {
    Tool(ToolReply),
    Prompt(PromptOutput),
    Resource(ResourceOutput),
    Completion(CompletionOutput),
    /// A JSON-RPC error instead of a result (prompts, reads, completions).
    Failed(ErrorReply),
}

impl Answer {
    /// A -32603 error answer (a prompt, read or completion task that panicked).
    pub(crate) fn internal(why: String) -> Answer {
        Answer::Failed(ErrorReply::new(
            mcp_rs_core::wire::jsonrpc::code::INTERNAL_ERROR,
            why,
        ))
    }
}

/// Why a request to the client ([`Context::request`]) produced no result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The session cannot send it: a 2026-07-28 call (answer `input_required` instead), a
    /// capability the client did not declare, or a request already outstanding.
    #[error("request not sent: {0}")]
    Refused(CallError),
    /// The client answered with an error.
    #[error("the client answered with error {code}: {message}")]
    Client {
        /// The error code.
        code: i64,
        /// The error message.
        message: String,
    },
    /// No answer within [`Limits::request_timeout`](crate::Limits::request_timeout); the client was sent
    /// `notifications/cancelled`.
    #[error("the client did not answer in time")]
    TimedOut,
    /// The call was cancelled or the connection closed.
    #[error("the call ended before the client answered")]
    Closed,
}

/// Given to async handlers (tools, prompts, resource reads, completions): progress,
/// logging, cancellation and the caller's principal for one request.
///
/// A tool that runs as a task (tasks extension: [`ToolDef::task`](crate::ToolDef::task))
/// gets a detached one: it outlives the `tools/call` that created the task, which was
/// answered at once. Its [`task`](Self::task) names the task; [`is_cancelled`](Self::is_cancelled)
/// and [`cancelled`](Self::cancelled) follow `tasks/cancel` (and the task's expiry); there is
/// no request left to carry progress, logs or requests to the client, so
/// [`progress`](Self::progress) and [`log`](Self::log) do nothing and
/// [`request`](Self::request) fails with [`RequestError::Closed`] (ask through the task's
/// table instead: [`TaskHandle::with`] and `TaskStore::ask`).
#[derive(Clone, Debug)]
pub struct Context {
    /// The call's slot; `None` for a detached task.
    pub(crate) token: Option<CallToken>,
    pub(crate) wants_progress: bool,
    pub(crate) caps: ClientCaps,
    pub(crate) version: ProtocolVersion,
    pub(crate) principal: Option<Arc<Principal>>,
    pub(crate) tx: mpsc::Sender<Command>,
    pub(crate) cancelled: watch::Receiver<bool>,
    /// The task a detached call runs as.
    pub(crate) task: Option<TaskHandle>,
}

/// The task a detached tool runs as ([`Context::task`]): its id and the shared table.
#[derive(Clone)]
pub struct TaskHandle {
    pub(crate) id: Arc<str>,
    pub(crate) tasks: TaskTableRef,
}

impl std::fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskHandle").field("id", &self.id).finish()
    }
}

impl TaskHandle {
    /// The task's id (`taskId`).
    pub fn id(&self) -> &str {
        &self.id
    }
    /// Runs `f` on the table with the session clock's time (for `ask`, `take_responses`,
    /// `fail`: see [`TaskStore`](mcp_rs_core::model::tasks::TaskStore)); keep it short,
    /// every session answering `tasks/*` waits for the same lock. A change made here is
    /// announced to the `subscriptions/listen` streams subscribed to the task (change the
    /// table through this, not through another clone of it: that one is not watched).
    pub fn with<T>(&self, f: impl FnOnce(&mut dyn TaskStore, u64) -> T) -> T {
        let mut table = self.tasks.lock();
        f(&mut table, crate::clock::now_ms())
    }
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

impl Context {
    /// The client capabilities in force for this call (declared at `initialize`, or in the
    /// request's `_meta` in 2026-07-28).
    pub fn client_caps(&self) -> ClientCaps {
        self.caps
    }
    /// Who made the request that started this call: the principal an HTTP server's
    /// [`Authorizer`](crate::http::auth::Authorizer) found in its token. `None` without
    /// authorization and on other transports. (Inline handlers read the same from their
    /// request view: `request.adapter_data::<Principal>()`.)
    pub fn principal(&self) -> Option<&Arc<Principal>> {
        self.principal.as_ref()
    }
    /// The protocol revision this call is served under.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }
    /// The task this call runs as (a detached call of a task tool), if any.
    pub fn task(&self) -> Option<&TaskHandle> {
        self.task.as_ref()
    }
    /// Whether the client asked for progress on this call.
    pub fn wants_progress(&self) -> bool {
        self.wants_progress
    }
    /// Reports progress (dropped by the session unless the client gave a progress token;
    /// `progress` must increase).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let (true, Some(token)) = (self.wants_progress, self.token) {
            let _ = self
                .tx
                .send(Command::Progress {
                    token,
                    progress,
                    total,
                    message,
                })
                .await;
        }
    }
    /// Sends a log message tied to this call (filtered by the level the client chose).
    pub async fn log(&self, level: LogLevel, logger: Option<&str>, data: impl Into<String>) {
        let Some(token) = self.token else { return };
        let cmd = Command::Log {
            token,
            level,
            logger: logger.map(Into::into),
            data: data.into(),
        };
        let _ = self.tx.send(cmd).await;
    }
    /// Resolves when the client cancels the call (the task is also aborted at its next
    /// await point, so this is for cleanup that must run).
    pub async fn cancelled(&self) {
        let mut rx = self.cancelled.clone();
        let _ = rx.wait_for(|c| *c).await;
    }
    /// Streamable HTTP: ends the SSE response stream that carries this call now, while
    /// the call runs on; the client reconnects with `GET` and `Last-Event-ID` and receives
    /// the rest, the result included (SEP-1699 polling). Legacy sessions only; elsewhere
    /// (other transports, 2026-07-28 requests) it does nothing.
    pub async fn close_stream(&self) {
        if let Some(token) = self.token {
            let _ = self.tx.send(Command::CloseStream(token)).await;
        }
    }
    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        *self.cancelled.borrow()
    }
    /// Sends a request to the client of a legacy session (`sampling/createMessage`,
    /// `elicitation/create`, `roots/list`) on behalf of this call and waits for its
    /// result. `params` is the request's params object.
    pub async fn request(
        &self,
        method: ClientMethod,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, RequestError> {
        let Some(token) = self.token else {
            return Err(RequestError::Closed);
        };
        let (reply, answer) = oneshot::channel();
        let cmd = Command::Request {
            token,
            method,
            params: params.to_string(),
            reply,
        };
        if self.tx.send(cmd).await.is_err() {
            return Err(RequestError::Closed);
        }
        answer.await.unwrap_or(Err(RequestError::Closed))
    }
}
