//! The tasks extension's requests (`tasks/get`, `tasks/update`, `tasks/cancel`): here, below
//! [`Request`](super::Request), so that the request layer names no reader of answers
//! (those are in [`client::tasks`](crate::client::tasks)).

use crate::wire::json::JsonWriter;
use crate::wire::method::Method;

/// A request of the tasks extension (sent as [`Request::Task`](super::Request::Task)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskRequest<'a> {
    /// `tasks/get`: the task's status, and its result or error once terminal.
    Get {
        /// The task (`taskId` of the created task).
        task_id: &'a str,
    },
    /// `tasks/update`: answers to an `input_required` task's `inputRequests`.
    Update {
        /// The task.
        task_id: &'a str,
        /// `inputResponses`: a JSON object of result objects, keyed like the task's
        /// `inputRequests` (one line).
        input_responses: &'a str,
    },
    /// `tasks/cancel`.
    Cancel {
        /// The task.
        task_id: &'a str,
    },
}

impl<'a> TaskRequest<'a> {
    /// The method.
    pub fn method(&self) -> Method {
        match self {
            TaskRequest::Get { .. } => Method::TasksGet,
            TaskRequest::Update { .. } => Method::TasksUpdate,
            TaskRequest::Cancel { .. } => Method::TasksCancel,
        }
    }

    /// The task it names.
    pub fn task_id(&self) -> &'a str {
        match *self {
            TaskRequest::Get { task_id }
            | TaskRequest::Update { task_id, .. }
            | TaskRequest::Cancel { task_id } => task_id,
        }
    }

    /// The raw JSON written verbatim (`inputResponses`), if any.
    pub(in crate::client) fn input_responses(&self) -> Option<&'a str> {
        match *self {
            TaskRequest::Update {
                input_responses, ..
            } => Some(input_responses),
            _ => None,
        }
    }

    /// Writes the params members (into an open object).
    pub(in crate::client) fn write_members(&self, w: &mut JsonWriter<'_>) {
        w.key("taskId");
        w.string(self.task_id());
        if let Some(r) = self.input_responses() {
            w.key("inputResponses");
            w.raw_value(r);
        }
    }
}
