//! An owned copy of a core [`Request`]: what an API call hands the driver, kept while the
//! request is in flight (a 2026-07-28 `input_required` round sends it again).

use mcp_rs_core::client::{Reference, Request};
use mcp_rs_core::model::common::ClientCaps;
use mcp_rs_core::model::logging::LogLevel;

/// What `completion/complete` completes an argument of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompletionRef {
    /// A prompt, by name.
    Prompt(String),
    /// A resource template, by URI template.
    Resource(String),
}

/// A request the driver sends through the core. Raw JSON members are one line.
#[derive(Clone, Debug)]
pub(crate) enum OwnedRequest {
    ListTools(Option<String>),
    CallTool {
        name: String,
        arguments: Option<String>,
    },
    ListPrompts(Option<String>),
    GetPrompt {
        name: String,
        arguments: Option<String>,
    },
    ListResources(Option<String>),
    ListTemplates(Option<String>),
    Read(String),
    Subscribe(String),
    Unsubscribe(String),
    Complete {
        reference: CompletionRef,
        argument: String,
        value: String,
        context: Option<String>,
    },
    Ping,
    SetLevel(LogLevel),
    Listen(String),
    /// `tools/call` declaring the tasks extension (a task-capable tool answers with a
    /// task).
    CallToolAsTask {
        name: String,
        arguments: Option<String>,
    },
    /// `tasks/get`, `tasks/update`, `tasks/cancel`.
    Task(super::tasks::TaskOp),
    /// The skills extension's requests.
    Skills(super::skills::OwnedSkillsRequest),
}

impl OwnedRequest {
    /// The core's view.
    pub(crate) fn as_core(&self) -> Request<'_> {
        match self {
            OwnedRequest::ListTools(cursor) => Request::ListTools {
                cursor: cursor.as_deref(),
            },
            OwnedRequest::CallTool { name, arguments } => Request::CallTool {
                name,
                arguments: arguments.as_deref(),
            },
            OwnedRequest::ListPrompts(cursor) => Request::ListPrompts {
                cursor: cursor.as_deref(),
            },
            OwnedRequest::GetPrompt { name, arguments } => Request::GetPrompt {
                name,
                arguments: arguments.as_deref(),
            },
            OwnedRequest::ListResources(cursor) => Request::ListResources {
                cursor: cursor.as_deref(),
            },
            OwnedRequest::ListTemplates(cursor) => Request::ListResourceTemplates {
                cursor: cursor.as_deref(),
            },
            OwnedRequest::Read(uri) => Request::ReadResource { uri },
            OwnedRequest::Subscribe(uri) => Request::Subscribe { uri },
            OwnedRequest::Unsubscribe(uri) => Request::Unsubscribe { uri },
            OwnedRequest::Complete {
                reference,
                argument,
                value,
                context,
            } => Request::Complete {
                reference: match reference {
                    CompletionRef::Prompt(name) => Reference::Prompt(name),
                    CompletionRef::Resource(uri) => Reference::Resource(uri),
                },
                argument,
                value,
                context: context.as_deref(),
            },
            OwnedRequest::Ping => Request::Ping,
            OwnedRequest::SetLevel(level) => Request::SetLevel(*level),
            OwnedRequest::Listen(notifications) => Request::Listen { notifications },
            OwnedRequest::Skills(skills) => skills.as_core(),
            OwnedRequest::CallToolAsTask { name, arguments } => Request::CallTool {
                name,
                arguments: arguments.as_deref(),
            },
            OwnedRequest::Task(op) => Request::Task(op.as_core()),
        }
    }

    /// Capabilities this request declares on top of the client's (2026-07-28).
    pub(crate) fn capabilities(&self) -> ClientCaps {
        match self {
            OwnedRequest::CallToolAsTask { .. } => ClientCaps::TASKS,
            _ => ClientCaps::NONE,
        }
    }
}
