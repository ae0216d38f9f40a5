//! The tasks extension (SEP-2663): task-augmented `tools/call`, `tasks/get`, `tasks/update`
//! and `tasks/cancel` over the handler's [`TaskStore`] (see [`crate::model::tasks`] for the
//! wire shapes).
//!
//! A `tools/call` of a tool whose [`ToolSet::task_support`](crate::ToolSet::task_support)
//! allows it, from a 2026-07-28 request that lists the extension in its client
//! capabilities, becomes a task: the session creates it, calls the tool with
//! [`CallRequest::task`] set, and answers `CreateTaskResult`. A tool that answers at once
//! has its result stored as the task's (the output buffer is the scratch space: a result
//! that overflows it or the slot fails the task with -32603 and the size it needed); one
//! that answers `input_required` is answered as such and no task remains (the MRTR rounds
//! come before the task, SEP-2663's composition); a deferred call reports to the table.

use super::faults::{Detail, Fault};
use super::rounds::Target;
use super::{Ctx, Reply, Session};
use crate::model::common::{ClientCaps, Dispatch, ResultType};
use crate::model::handler::ServerHandler;
use crate::model::tasks::{TaskError, TaskStore, TaskSupport};
use crate::model::tools::{CallRequest, ToolResult};
use crate::wire::json::{JsonStr, JsonWriter, Kind};
use crate::wire::jsonrpc::{self, code, RequestId};
use crate::wire::{Method, Params};

/// -32021 naming the extension in `data.requiredCapabilities.extensions`.
pub(super) fn not_negotiated<'i>() -> Fault<'i> {
    Fault::new(
        code::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with(Detail::Caps(ClientCaps::TASKS))
}

fn task_id_param<'i>(p: &Params<'i>) -> Result<JsonStr<'i>, Fault<'i>> {
    p.raw
        .and_then(|r| r.get("taskId"))
        .and_then(|t| t.as_string())
        .ok_or(Fault::new(
            code::INVALID_PARAMS,
            "params.taskId must be a string",
        ))
}

fn store<S: ServerHandler + ?Sized>(server: &mut S) -> Result<&mut dyn TaskStore, Fault<'static>> {
    server
        .tasks()
        .ok_or(Fault::new(code::METHOD_NOT_FOUND, "Method not found"))
}

/// The fault for a refused task operation.
fn task_fault<'i>(e: TaskError, id: JsonStr<'i>) -> Fault<'i> {
    match e {
        TaskError::Unknown => {
            Fault::new(code::INVALID_PARAMS, "Unknown task").with(Detail::Name(id))
        }
        TaskError::Full { capacity } => {
            Fault::new(code::INTERNAL_ERROR, "Task table full").with(Detail::Limit(capacity))
        }
        TaskError::TooLarge { needed, .. } => {
            Fault::new(code::INTERNAL_ERROR, "Task payload exceeds its slot")
                .with(Detail::Required(needed))
        }
        TaskError::Invalid => Fault::new(code::INVALID_PARAMS, "Invalid task payload"),
        TaskError::Terminal => Fault::new(code::INVALID_PARAMS, "Task has ended"),
    }
}

impl Session<'_> {
    /// `tools/call` as a task, or `None` to run it synchronously.
    pub(super) fn call_as_task<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        support: TaskSupport,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        request: &CallRequest<'i>,
        w: &mut JsonWriter<'_>,
    ) -> Option<Reply<'i>> {
        if support == TaskSupport::Forbidden {
            return None;
        }
        // Tasks v2 is a 2026-07-28 wire: a legacy session never gets a task.
        let negotiated = ctx.version.is_modern() && ctx.caps.contains(ClientCaps::TASKS);
        let has_store = server.tasks().is_some();
        if !negotiated || !has_store {
            return match support {
                TaskSupport::Required if !negotiated => Some(Err(not_negotiated())),
                TaskSupport::Required => Some(Err(Fault::new(
                    code::INTERNAL_ERROR,
                    "Task-only tool without a task table",
                ))),
                _ => None,
            };
        }
        Some(self.run_task(server, id, ctx, request, w))
    }

    fn run_task<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        request: &CallRequest<'i>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        let now = self.now_ms;
        let task = store(server)?
            .create(now)
            .map_err(|e| task_fault(e, request.name()))?;
        let mut request = *request;
        request.task = Some(task);
        let mut target = Target::of(&self.config.key, request.name().raw());
        let env = self.target_envelope(ctx, false, Method::ToolsCall, &mut target);
        let before = w.checkpoint();
        jsonrpc::begin_result(w, id.as_raw());
        let start = w.len();
        let tools = server
            .tools()
            .ok_or(Fault::new(code::METHOD_NOT_FOUND, "Method not found"))?;
        let mut result = ToolResult::begin(w, &env);
        let dispatch = tools.call(&request, &mut result);
        let (misused, input_required) = (result.misused(), result.is_input_required());
        let tasks = store(server)?;
        match dispatch {
            Dispatch::Done if input_required && !misused => {
                // An MRTR round before the task: answered as such, no task remains.
                tasks.remove(task.as_str());
                result.finish();
                jsonrpc::end_response(w);
                return Ok(());
            }
            Dispatch::Done if misused => {
                let _ = tasks.fail(
                    task.as_str(),
                    code::INTERNAL_ERROR,
                    "Tool handler misused the result builder",
                    now,
                );
            }
            Dispatch::Done => {
                result.finish_bare();
                let text = w.written().get(start..).unwrap_or_default();
                let text = core::str::from_utf8(text).ok().filter(|_| !w.overflowed());
                // A result larger than the slot fails the task with the size it needed
                // (`complete` does that); one larger than the output buffer, here.
                let stored = text.map(|t| tasks.complete(task.as_str(), t, now));
                if stored.is_none() {
                    let _ = tasks.fail(
                        task.as_str(),
                        code::INTERNAL_ERROR,
                        "Result exceeds the output buffer",
                        now,
                    );
                }
            }
            // The tool took what it needs from the request and reports to the table.
            Dispatch::Defer => {}
        }
        w.rewind(before);
        let Some(view) = tasks.view(task.as_str(), now) else {
            return Err(task_fault(TaskError::Unknown, request.name()));
        };
        jsonrpc::begin_result(w, id.as_raw());
        w.begin_object();
        view.write_fields(w);
        env.trailer(w, ResultType::Task);
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }

    /// `tasks/get`, `tasks/update`, `tasks/cancel`.
    pub(super) fn tasks_request<'i, S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        method: Method,
        id: RequestId<'i>,
        ctx: Ctx<'i>,
        p: &Params<'i>,
        w: &mut JsonWriter<'_>,
    ) -> Reply<'i> {
        if !ctx.caps.contains(ClientCaps::TASKS) {
            return Err(not_negotiated());
        }
        let task = task_id_param(p)?;
        let mut buf = [0u8; crate::model::tasks::ID_LEN + 1];
        // A longer or escaped-beyond-decoding id names no task.
        let text = task.text_in(&mut buf).unwrap_or("");
        let now = self.now_ms;
        let env = self.envelope(ctx.version, false);
        let tasks = store(server)?;
        match method {
            Method::TasksGet => {
                let view = tasks
                    .view(text, now)
                    .ok_or(task_fault(TaskError::Unknown, task))?;
                jsonrpc::begin_result(w, id.as_raw());
                w.begin_object();
                view.write_detailed(w);
            }
            Method::TasksUpdate => {
                let responses = p
                    .raw
                    .and_then(|r| r.get("inputResponses"))
                    .filter(|r| r.kind() == Kind::Object)
                    .ok_or(Fault::new(
                        code::INVALID_PARAMS,
                        "params.inputResponses must be an object",
                    ))?;
                tasks
                    .answer(text, responses, now)
                    .map_err(|e| task_fault(e, task))?;
                jsonrpc::begin_result(w, id.as_raw());
                w.begin_object();
            }
            _ => {
                tasks.cancel(text, now).map_err(|e| task_fault(e, task))?;
                jsonrpc::begin_result(w, id.as_raw());
                w.begin_object();
            }
        }
        env.trailer(w, ResultType::Complete);
        w.end_object();
        jsonrpc::end_response(w);
        Ok(())
    }
}
