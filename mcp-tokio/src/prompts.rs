//! Prompts rendered by async handlers: a `prompts/get` that the provider's
//! [`PromptSet`](mcp_rs_core::model::prompts::PromptSet) defers (returns `Dispatch::Defer`) runs as a
//! tokio task with a [`Context`](crate::Context), so it can ask a legacy client for input
//! (`Context::request`) before it answers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_rs_core::model::content::Role;
use mcp_rs_core::model::prompts::PromptResult;

use crate::registry::Content;
use crate::Context;

/// An owned `prompts/get` request, handed to an async prompt handler.
#[derive(Clone, Debug)]
pub struct PromptRequest {
    /// The prompt name.
    pub name: String,
    /// The arguments (every value a string; declared required ones are present).
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

impl PromptRequest {
    /// One argument's value.
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).and_then(|v| v.as_str())
    }
}

/// The owned result of an async prompt: an optional description and messages.
#[derive(Clone, Debug, Default)]
pub struct PromptOutput {
    description: Option<String>,
    messages: Vec<(Role, Content)>,
}

impl PromptOutput {
    /// No messages yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }
    /// Adds a message with one content block.
    pub fn message(mut self, role: Role, content: Content) -> Self {
        self.messages.push((role, content));
        self
    }
    /// Writes this output through the core's result builder.
    pub(crate) fn write(&self, r: &mut PromptResult<'_, '_>) {
        if let Some(d) = &self.description {
            r.description(d);
        }
        for (role, content) in &self.messages {
            r.message(*role, &content.as_core());
        }
    }
}

/// A JSON-RPC error answer of a deferred request (for protocol-level failures such as an
/// unknown argument value; the client sees `code` and `message`).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message} ({code})")]
pub struct ErrorReply {
    /// The JSON-RPC error code (e.g. -32602).
    pub code: i32,
    /// The message.
    pub message: String,
}

impl ErrorReply {
    /// An error with this code and message.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        ErrorReply {
            code,
            message: message.into(),
        }
    }
}

/// What an async prompt handler returns.
pub type PromptFuture = Pin<Box<dyn Future<Output = Result<PromptOutput, ErrorReply>> + Send>>;
pub(crate) type PromptFn = Arc<dyn Fn(PromptRequest, Context) -> PromptFuture + Send + Sync>;
