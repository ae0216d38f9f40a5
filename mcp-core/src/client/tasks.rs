//! The tasks extension (SEP-2663 v2, `io.modelcontextprotocol/tasks`) from the client's
//! side: a `tools/call` that may answer with a task, then `tasks/get` (poll: the status,
//! and the result or error once terminal), `tasks/update` (answer an `input_required`
//! task's `inputRequests`) and `tasks/cancel`. Feature `tasks`; 2026-07-28 only (the v2
//! wire does not exist on `initialize` sessions).
//!
//! | step | what the client writes | what the server answers, read with |
//! |---|---|---|
//! | negotiate | the extension in `_meta["io.modelcontextprotocol/clientCapabilities"].extensions` of the request: per request ([`Options::capabilities`]) or on every one ([`ClientConfig::capabilities`](super::ClientConfig::capabilities)); `tasks/*` requests declare it by themselves | the server's `capabilities.extensions` in `server/discover` ([`ServerCaps::TASKS`]) |
//! | create | [`Client::request_tools_call_as_task`]: a plain `tools/call` that declares the extension (v2 has no `task` param: the server decides) | [`Response::call_outcome`]: [`CallOutcome::Done`] (an ordinary result) or [`CallOutcome::Task`] (`resultType: "task"`, a [`Task`]) |
//! | poll | [`Client::request_tasks_get`] (`{taskId}`) | [`Response::task`]: status, `pollIntervalMs`, and `result` / `error` / `inputRequests` |
//! | answer input | [`Client::request_tasks_update`] (`{taskId, inputResponses}`) | an empty result; the task is `working` again once every key is answered |
//! | cancel | [`Client::request_tasks_cancel`] (`{taskId}`) | an empty result (also for a terminal task) |
//! | refusals | — | [`Event::Error`](super::Event::Error), classified by [`TaskRefusal::of`]: -32602 unknown (or expired) task, -32021 extension not negotiated |
//!
//! Nothing is sent for a server that did not declare the extension, or on a legacy
//! session: those requests are refused with [`ClientError::NotOffered`]. A task answer to
//! a `tools/call` that did not declare the extension is not a task the client asked for:
//! it is reported as [`InvalidFrame::MalformedResult`](super::InvalidFrame::MalformedResult)
//! ("unknown resultType"), as before.
//!
//! Nothing is stored: a [`Task`] borrows the frame it came in; the application keeps the
//! task id (at most [`ID_LEN`](crate::model::tasks::ID_LEN) characters from this crate's
//! server, any string from others) and the poll interval as long as it needs them.

use super::error::ClientError;
use super::events::{optional, CallResult, ResultError, RpcError};
use super::lifecycle::ServerCaps;
pub use super::requests::tasks::TaskRequest;
use super::requests::{Options, Request};
use super::rounds::{InputRequest, InputRound};
use super::{Client, Response, Sent};
use crate::model::common::ClientCaps;
use crate::model::tasks::TaskStatus;
use crate::wire::json::{JsonStr, Kind, RawJson};
use crate::wire::jsonrpc::code;
use crate::wire::method::Method;

/// How the server refused a tasks request (from its JSON-RPC error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskRefusal {
    /// -32602 on `tasks/*`: no task has this id (never created, expired after its
    /// `ttlMs`, or another client's), or the params were invalid.
    UnknownTask,
    /// -32021: the request did not declare the extension (or the tool runs only as a task
    /// and the `tools/call` did not declare it).
    NotNegotiated,
    /// -32601: the server does not serve the method (no tasks extension there).
    NotServed,
    /// Any other error.
    Other,
}

impl TaskRefusal {
    /// Classifies `error`, the answer to a `tools/call` or `tasks/*` request.
    pub fn of(error: &RpcError<'_>) -> TaskRefusal {
        match error.code {
            c if c == i64::from(code::INVALID_PARAMS) => TaskRefusal::UnknownTask,
            c if c == i64::from(code::MISSING_REQUIRED_CLIENT_CAPABILITY) => {
                TaskRefusal::NotNegotiated
            }
            c if c == i64::from(code::METHOD_NOT_FOUND) => TaskRefusal::NotServed,
            _ => TaskRefusal::Other,
        }
    }
}

/// A task as the server showed it: a `CreateTaskResult` (answer to `tools/call`) or a
/// `DetailedTask` (answer to `tasks/get`), borrowed from the frame.
#[derive(Clone, Copy, Debug)]
pub struct Task<'i> {
    /// `taskId`.
    pub id: JsonStr<'i>,
    /// `status`.
    pub status: TaskStatus,
    /// `statusMessage`, if any.
    pub status_message: Option<JsonStr<'i>>,
    /// `createdAt` (an RFC 3339 timestamp), if given.
    pub created_at: Option<JsonStr<'i>>,
    /// `lastUpdatedAt`, if given.
    pub last_updated_at: Option<JsonStr<'i>>,
    /// `ttlMs`: how long the server keeps the task after its creation (`None`: not given
    /// or `null`, unlimited).
    pub ttl_ms: Option<u64>,
    /// `pollIntervalMs`: how often the server suggests polling, if it says.
    pub poll_interval_ms: Option<u64>,
    /// `result` of a `completed` task (a `CallToolResult` object).
    pub result: Option<RawJson<'i>>,
    /// `error` of a `failed` task.
    pub error: Option<RpcError<'i>>,
    /// `inputRequests` of an `input_required` task (an object of request objects).
    pub input_requests: Option<RawJson<'i>>,
}

impl<'i> Task<'i> {
    /// Reads a task object; `Err` names what is missing or mistyped.
    pub fn read(v: RawJson<'i>) -> Result<Self, ResultError> {
        let id = optional(v, "taskId", Kind::String)?
            .and_then(|s| s.as_string())
            .ok_or(ResultError::Missing("taskId"))?;
        let status = optional(v, "status", Kind::String)?
            .and_then(|s| s.as_string())
            .ok_or(ResultError::Missing("status"))?;
        let status = parse_status(status).ok_or(ResultError::WrongType("status"))?;
        let string = |key| Ok(optional(v, key, Kind::String)?.and_then(|s| s.as_string()));
        let number = |key| match v.get(key) {
            None => Ok(None),
            Some(n) if n.kind() == Kind::Null => Ok(None),
            Some(n) => n.as_u64().map(Some).ok_or(ResultError::WrongType(key)),
        };
        let error = match optional(v, "error", Kind::Object)? {
            None => None,
            Some(e) => Some(RpcError::read(e).ok_or(ResultError::WrongType("error"))?),
        };
        let input_requests = optional(v, "inputRequests", Kind::Object)?;
        if input_requests.is_some_and(|r| {
            r.members()
                .is_none_or(|mut m| m.any(|(_, v)| v.kind() != Kind::Object))
        }) {
            return Err(ResultError::WrongType("inputRequests"));
        }
        Ok(Task {
            id,
            status,
            status_message: string("statusMessage")?,
            created_at: string("createdAt")?,
            last_updated_at: string("lastUpdatedAt")?,
            ttl_ms: number("ttlMs")?,
            poll_interval_ms: number("pollIntervalMs")?,
            result: optional(v, "result", Kind::Object)?,
            error,
            input_requests,
        })
    }

    /// Whether the task has ended (`completed`, `failed`, `cancelled`).
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }

    /// The tool's result of a `completed` task (`None` for any other status, or a
    /// completed task shown without its result).
    pub fn call_result(&self) -> Option<Result<CallResult<'i>, ResultError>> {
        if self.status != TaskStatus::Completed {
            return None;
        }
        let result = self.result?;
        Some(
            Response {
                handle: super::RequestHandle {
                    slot: 0,
                    generation: 0,
                },
                method: Method::ToolsCall,
                result,
            }
            .tool_call(),
        )
    }

    /// The `inputRequests` of an `input_required` task, in the server's order (answer
    /// them with [`Client::request_tasks_update`]).
    pub fn input_requests(&self) -> impl Iterator<Item = InputRequest<'i>> {
        InputRound {
            handle: super::RequestHandle {
                slot: 0,
                generation: 0,
            },
            method: Method::TasksGet,
            input_requests: self.input_requests,
            request_state: None,
        }
        .requests()
    }
}

/// What a `tools/call` that declared the extension ended in.
#[derive(Clone, Copy, Debug)]
pub enum CallOutcome<'i> {
    /// An ordinary result: the tool did not run as a task.
    Done(CallResult<'i>),
    /// A created task: poll it with `tasks/get`.
    Task(Task<'i>),
}

impl<'i> Response<'i> {
    /// A `tools/call` result, which may be a created task (`resultType: "task"`).
    pub fn call_outcome(&self) -> Result<CallOutcome<'i>, ResultError> {
        if self.method != Method::ToolsCall {
            return Err(ResultError::WrongMethod);
        }
        if self.is_task() {
            return Task::read(self.result).map(CallOutcome::Task);
        }
        self.tool_call().map(CallOutcome::Done)
    }

    /// The task of a `tasks/get` result, or of a `tools/call` answered with a task.
    pub fn task(&self) -> Result<Task<'i>, ResultError> {
        match self.method {
            Method::TasksGet => Task::read(self.result),
            Method::ToolsCall if self.is_task() => Task::read(self.result),
            _ => Err(ResultError::WrongMethod),
        }
    }

    fn is_task(&self) -> bool {
        self.result
            .get("resultType")
            .and_then(|t| t.as_string())
            .is_some_and(|t| t.eq_str("task"))
    }
}

fn parse_status(s: JsonStr<'_>) -> Option<TaskStatus> {
    TaskStatus::ALL.into_iter().find(|t| s.eq_str(t.as_str()))
}

impl Client<'_> {
    /// `Err(NotOffered)` for a tasks request (or a call declaring the extension) on a
    /// connection whose server did not declare it, or on a legacy session.
    pub(super) fn check_tasks_offered(
        &self,
        request: &Request<'_>,
        options: &Options,
    ) -> Result<(), ClientError> {
        let wants = matches!(request, Request::Task(_))
            || (request.method() == Method::ToolsCall
                && options.capabilities.contains(ClientCaps::TASKS));
        let offered = self.version().is_some_and(|v| v.is_modern())
            && self.server_caps.contains(ServerCaps::TASKS);
        match wants && !offered {
            true => Err(ClientError::NotOffered),
            false => Ok(()),
        }
    }

    /// `tools/call` of `name` declaring the tasks extension, so that a task-capable tool
    /// answers with a task: read the result with [`Response::call_outcome`]. `options`
    /// gets `ClientCaps::TASKS` added. Refused with [`ClientError::NotOffered`] (nothing
    /// written) when the server did not declare the extension.
    pub fn request_tools_call_as_task(
        &mut self,
        name: &str,
        arguments: Option<&str>,
        options: Options,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let options = Options {
            capabilities: options.capabilities.with(ClientCaps::TASKS),
            ..options
        };
        self.send(&Request::CallTool { name, arguments }, options, now_ms, out)
    }

    /// `tasks/get` of `task_id` with default options: read the answer with
    /// [`Response::task`].
    pub fn request_tasks_get(
        &mut self,
        task_id: &str,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let request = Request::Task(TaskRequest::Get { task_id });
        self.send(&request, Options::default(), now_ms, out)
    }

    /// `tasks/update` of `task_id` with `input_responses` (a JSON object keyed like the
    /// task's `inputRequests`, one line), with default options.
    pub fn request_tasks_update(
        &mut self,
        task_id: &str,
        input_responses: &str,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let request = Request::Task(TaskRequest::Update {
            task_id,
            input_responses,
        });
        self.send(&request, Options::default(), now_ms, out)
    }

    /// `tasks/cancel` of `task_id` with default options.
    pub fn request_tasks_cancel(
        &mut self,
        task_id: &str,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let request = Request::Task(TaskRequest::Cancel { task_id });
        self.send(&request, Options::default(), now_ms, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{parse, Limits};

    fn task(json: &str) -> Result<Task<'_>, ResultError> {
        Task::read(parse(json.as_bytes(), Limits::default()).unwrap())
    }

    #[test]
    fn a_detailed_task_reads_with_its_payload() {
        let t = task(
            r#"{"taskId":"ab","status":"completed","createdAt":"2026-07-28T00:00:00.000Z","ttlMs":null,"pollIntervalMs":500,"result":{"content":[{"type":"text","text":"ok"}]},"resultType":"complete"}"#,
        )
        .unwrap();
        assert_eq!(t.id, "ab");
        assert!(t.is_terminal());
        assert_eq!((t.ttl_ms, t.poll_interval_ms), (None, Some(500)));
        let result = t.call_result().unwrap().unwrap();
        assert_eq!(result.text().unwrap(), "ok");

        let failed =
            task(r#"{"taskId":"ab","status":"failed","error":{"code":-32603,"message":"boom"}}"#)
                .unwrap();
        assert_eq!(failed.error.unwrap().code, -32603);
        assert!(failed.call_result().is_none());

        let asking = task(
            r#"{"taskId":"ab","status":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"?"}}}}"#,
        )
        .unwrap();
        let mut requests = asking.input_requests();
        let first = requests.next().unwrap();
        assert_eq!(first.key, "k");
        assert_eq!(
            first.method,
            Some(crate::wire::method::ServerMethod::Elicit)
        );
        assert!(requests.next().is_none());
    }

    #[test]
    fn malformed_tasks_say_what_is_wrong() {
        assert_eq!(
            task(r#"{"status":"working"}"#).unwrap_err(),
            ResultError::Missing("taskId")
        );
        assert_eq!(
            task(r#"{"taskId":"a","status":"paused"}"#).unwrap_err(),
            ResultError::WrongType("status")
        );
        assert_eq!(
            task(r#"{"taskId":"a","status":"working","ttlMs":-1}"#).unwrap_err(),
            ResultError::WrongType("ttlMs")
        );
        assert_eq!(
            task(r#"{"taskId":"a","status":"failed","error":{"code":"x"}}"#).unwrap_err(),
            ResultError::WrongType("error")
        );
        assert_eq!(
            task(r#"{"taskId":"a","status":"input_required","inputRequests":{"k":1}}"#)
                .unwrap_err(),
            ResultError::WrongType("inputRequests")
        );
    }
}
