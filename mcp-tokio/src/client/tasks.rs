//! The tasks extension (SEP-2663 v2, `io.modelcontextprotocol/tasks`) on the async client:
//! [`Client::call_tool_as_task`] declares the extension on one `tools/call` (other calls
//! stay synchronous), and a task it creates comes back as a [`TaskHandle`]: poll it
//! ([`status`](TaskHandle::status)), wait for its end ([`wait`](TaskHandle::wait),
//! honouring `pollIntervalMs`, bounded by the caller), answer its input requests
//! ([`update`](TaskHandle::update), or `wait` through the client's elicitation, sampling
//! and roots handlers) or [`cancel`](TaskHandle::cancel) it. 2026-07-28 only; a server
//! that does not declare the extension gets nothing ([`ClientError::Refused`]).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use mcp_rs_core::client::TaskRequest;
pub use mcp_rs_core::model::tasks::TaskStatus;
use mcp_rs_core::model::tasks::EXTENSION;
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::handlers::{HandlerError, Want};
use super::request::OwnedRequest;
use super::results::CallToolResult;
use super::types::CallOptions;
use super::{Client, ClientError, Result};

/// Shortest pause between two `tasks/get` of [`TaskHandle::wait`]: a smaller
/// `pollIntervalMs` from the server is raised to this.
pub const MIN_TASK_POLL: Duration = Duration::from_millis(50);

/// The pause between polls when the server suggests none.
const DEFAULT_TASK_POLL: Duration = Duration::from_millis(500);

/// A tasks request, owned while it is in flight.
#[derive(Clone, Debug)]
pub(crate) enum TaskOp {
    Get(String),
    Update {
        task_id: String,
        input_responses: String,
    },
    Cancel(String),
}

impl TaskOp {
    pub(crate) fn as_core(&self) -> TaskRequest<'_> {
        match self {
            TaskOp::Get(task_id) => TaskRequest::Get { task_id },
            TaskOp::Update {
                task_id,
                input_responses,
            } => TaskRequest::Update {
                task_id,
                input_responses,
            },
            TaskOp::Cancel(task_id) => TaskRequest::Cancel { task_id },
        }
    }
}

/// The error of a `failed` task (a protocol-level failure; a tool that reported an error
/// is `completed` with [`CallToolResult::is_error`]).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct TaskFailure {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// `data`, if any.
    #[serde(default)]
    pub data: Option<Value>,
}

/// A task as the server showed it: when it was created (`CreateTaskResult`) or polled
/// (`tasks/get`).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskInfo {
    /// `taskId`.
    pub task_id: String,
    /// `status`.
    pub status: TaskStatus,
    /// `statusMessage`, if any.
    pub status_message: Option<String>,
    /// `createdAt` (RFC 3339), if given.
    pub created_at: Option<String>,
    /// `lastUpdatedAt`, if given.
    pub last_updated_at: Option<String>,
    /// `ttlMs`: how long the server keeps the task after its creation (`None`: unlimited
    /// or not said).
    pub ttl_ms: Option<u64>,
    /// `pollIntervalMs`, if the server suggests one.
    pub poll_interval_ms: Option<u64>,
    /// The tool's result, once `completed`.
    pub result: Option<CallToolResult>,
    /// The error, once `failed`.
    pub error: Option<TaskFailure>,
    /// `inputRequests` while `input_required`: key → `{method, params}` (empty otherwise).
    pub input_requests: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    task_id: String,
    status: String,
    #[serde(default)]
    status_message: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    last_updated_at: Option<String>,
    #[serde(default)]
    ttl_ms: Option<u64>,
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    #[serde(default)]
    result: Option<CallToolResult>,
    #[serde(default)]
    error: Option<TaskFailure>,
    #[serde(default)]
    input_requests: Map<String, Value>,
}

impl TaskInfo {
    fn from_value(value: Value) -> Result<TaskInfo> {
        let w: Wire = serde_json::from_value(value)
            .map_err(|e| ClientError::Malformed(format!("task: {e}")))?;
        let status = TaskStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == w.status)
            .ok_or_else(|| ClientError::Malformed(format!("unknown task status {:?}", w.status)))?;
        Ok(TaskInfo {
            task_id: w.task_id,
            status,
            status_message: w.status_message,
            created_at: w.created_at,
            last_updated_at: w.last_updated_at,
            ttl_ms: w.ttl_ms,
            poll_interval_ms: w.poll_interval_ms,
            result: w.result,
            error: w.error,
            input_requests: w.input_requests,
        })
    }

    /// The pause before the next poll: the server's `pollIntervalMs` (500 ms if none), at
    /// least [`MIN_TASK_POLL`].
    pub fn poll_interval(&self) -> Duration {
        self.poll_interval_ms
            .map_or(DEFAULT_TASK_POLL, Duration::from_millis)
            .max(MIN_TASK_POLL)
    }
}

/// What [`Client::call_tool_as_task`] ended in.
#[derive(Debug)]
pub enum TaskStart {
    /// The tool answered at once, without a task.
    Done(CallToolResult),
    /// The server created a task.
    Task(TaskHandle),
}

/// A task on the server. Cheap to clone; dropping it leaves the task running (cancel it
/// with [`cancel`](Self::cancel)).
#[derive(Clone, Debug)]
pub struct TaskHandle {
    client: Client,
    id: String,
    created: Option<Arc<TaskInfo>>,
}

impl Client {
    /// Whether the server declared the tasks extension (2026-07-28 `server/discover`:
    /// `capabilities.extensions["io.modelcontextprotocol/tasks"]`).
    pub fn offers_tasks(&self) -> bool {
        self.is_modern()
            && self.server_details().is_some_and(|d| {
                d.capabilities
                    .get("extensions")
                    .and_then(|e| e.get(EXTENSION))
                    .is_some()
            })
    }

    /// Calls a tool declaring the tasks extension on this one request: a task-capable tool
    /// answers with a task ([`TaskStart::Task`]), any other with its result
    /// ([`TaskStart::Done`]). Fails with [`ClientError::Refused`] without sending anything
    /// when the server does not offer the extension ([`offers_tasks`](Self::offers_tasks)).
    pub async fn call_tool_as_task(&self, name: &str, arguments: Value) -> Result<TaskStart> {
        self.call_tool_as_task_with(name, arguments, CallOptions::default())
            .await
    }

    /// [`call_tool_as_task`](Self::call_tool_as_task) with options (timeout, progress,
    /// log level of the `tools/call` itself).
    pub async fn call_tool_as_task_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<TaskStart> {
        if !self.offers_tasks() {
            return Err(ClientError::Refused(format!(
                "the server does not offer the tasks extension ({EXTENSION})"
            )));
        }
        let arguments = match arguments {
            Value::Null => None,
            Value::Object(_) => Some(arguments.to_string()),
            _ => {
                return Err(ClientError::Refused(
                    "arguments must be a JSON object".into(),
                ))
            }
        };
        let request = OwnedRequest::CallToolAsTask {
            name: name.to_owned(),
            arguments,
        };
        let value = self.begin(request, options, Ok).await?;
        if value.get("resultType").and_then(Value::as_str) == Some("task") {
            let created = TaskInfo::from_value(value)?;
            return Ok(TaskStart::Task(TaskHandle {
                client: self.clone(),
                id: created.task_id.clone(),
                created: Some(Arc::new(created)),
            }));
        }
        serde_json::from_value(value)
            .map(TaskStart::Done)
            .map_err(|e| ClientError::Malformed(e.to_string()))
    }

    /// A handle on the task `task_id` (one created earlier, e.g. by another handle).
    pub fn task(&self, task_id: &str) -> TaskHandle {
        TaskHandle {
            client: self.clone(),
            id: task_id.to_owned(),
            created: None,
        }
    }

    async fn task_request(&self, op: TaskOp) -> Result<Value> {
        self.begin(OwnedRequest::Task(op), CallOptions::default(), Ok)
            .await
    }
}

impl TaskHandle {
    /// The task id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The task as it was created (`None` for a handle from [`Client::task`]).
    pub fn created(&self) -> Option<&TaskInfo> {
        self.created.as_deref()
    }

    /// `tasks/get`: the task now. An unknown or expired task is
    /// [`ClientError::Protocol`] -32602.
    pub async fn status(&self) -> Result<TaskInfo> {
        let value = self
            .client
            .task_request(TaskOp::Get(self.id.clone()))
            .await?;
        let info = TaskInfo::from_value(value)?;
        if info.task_id != self.id {
            return Err(ClientError::Malformed(format!(
                "tasks/get of {} answered for {}",
                self.id, info.task_id
            )));
        }
        Ok(info)
    }

    /// `tasks/update`: answers input requests of an `input_required` task (`responses`:
    /// key of the request → its result object, e.g. an `ElicitResult`).
    pub async fn update(&self, responses: Map<String, Value>) -> Result<()> {
        let op = TaskOp::Update {
            task_id: self.id.clone(),
            input_responses: Value::Object(responses).to_string(),
        };
        self.client.task_request(op).await.map(drop)
    }

    /// `tasks/cancel` (also acknowledged for a task that has ended).
    pub async fn cancel(&self) -> Result<()> {
        let op = TaskOp::Cancel(self.id.clone());
        self.client.task_request(op).await.map(drop)
    }

    /// Polls until the task ends, at most `limit`: its result once `completed`;
    /// [`ClientError::Protocol`] with its error once `failed`; [`ClientError::Cancelled`]
    /// once `cancelled`; [`ClientError::Timeout`] when `limit` passes first (the task is
    /// left running). Polls follow the server's `pollIntervalMs` (at least
    /// [`MIN_TASK_POLL`]). An `input_required` task is answered through the client's
    /// handlers ([`ClientOptions::handlers`](super::ClientOptions::handlers)), each request
    /// once, at most [`max_input_rounds`](super::ClientOptions::max_input_rounds) times; a
    /// handler's refusal (or a request no handler answers, -32601) cancels the task and
    /// is returned as [`ClientError::Protocol`].
    pub async fn wait(&self, limit: Duration) -> Result<CallToolResult> {
        let now = Instant::now();
        let deadline = now
            .checked_add(limit)
            .unwrap_or(now + Duration::from_secs(1 << 40));
        let mut answered: HashSet<String> = HashSet::new();
        let mut rounds = 0;
        loop {
            let info = self.status().await?;
            let pause = info.poll_interval();
            match info.status {
                TaskStatus::Completed => {
                    return info.result.ok_or_else(|| {
                        ClientError::Malformed("a completed task without its result".into())
                    })
                }
                TaskStatus::Failed => {
                    let e = info.error.unwrap_or(TaskFailure {
                        code: -32603,
                        message: "the task failed without an error".into(),
                        data: None,
                    });
                    return Err(ClientError::Protocol {
                        code: e.code,
                        message: e.message,
                        data: e.data,
                    });
                }
                TaskStatus::Cancelled => return Err(ClientError::Cancelled),
                TaskStatus::InputRequired => {
                    let pending: Vec<(String, Value)> = info
                        .input_requests
                        .into_iter()
                        .filter(|(k, _)| !answered.contains(k))
                        .collect();
                    if !pending.is_empty() {
                        rounds += 1;
                        if rounds > self.client.options().max_input_rounds {
                            let _ = self.cancel().await;
                            return Err(ClientError::Malformed(format!(
                                "the task asked for input more than {} times",
                                self.client.options().max_input_rounds
                            )));
                        }
                        let keys: Vec<String> = pending.iter().map(|(k, _)| k.clone()).collect();
                        let answers = tokio::time::timeout_at(deadline, self.answer(pending));
                        let responses = match answers.await {
                            Err(_) => return Err(ClientError::Timeout),
                            Ok(Err(e)) => {
                                let _ = self.cancel().await;
                                return Err(ClientError::Protocol {
                                    code: i64::from(e.code),
                                    message: e.message,
                                    data: None,
                                });
                            }
                            Ok(Ok(responses)) => responses,
                        };
                        self.update(responses).await?;
                        answered.extend(keys);
                        continue;
                    }
                }
                TaskStatus::Working => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ClientError::Timeout);
            }
            tokio::time::sleep_until((now + pause).min(deadline)).await;
        }
    }

    /// The handlers' answers to `requests` (key → `{method, params}`), in order; the first
    /// refusal ends it.
    async fn answer(
        &self,
        requests: Vec<(String, Value)>,
    ) -> std::result::Result<Map<String, Value>, HandlerError> {
        let handlers = &self.client.options().handlers;
        let mut responses = Map::new();
        for (key, request) in requests {
            let want = match request.get("method").and_then(Value::as_str) {
                Some("sampling/createMessage") => Want::Sampling,
                Some("elicitation/create") => Want::Elicitation,
                Some("roots/list") => Want::Roots,
                _ => return Err(HandlerError::new(-32601, "unknown input request")),
            };
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            responses.insert(key, handlers.answer(want, params).await?);
        }
        Ok(responses)
    }
}
