//! Prompts rendered by async handlers: a `prompts/get` that the provider's
//! [`PromptSet`](mcp_rs_core::model::prompts::PromptSet) defers (returns `Dispatch::Defer`) runs as a
//! tokio task with a [`Context`](crate::Context), so it can ask a legacy client for input
//! (`Context::request`) before it answers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::context::Context;
use crate::output::{ErrorReply, PromptOutput};

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

/// What an async prompt handler returns.
pub type PromptFuture = Pin<Box<dyn Future<Output = Result<PromptOutput, ErrorReply>> + Send>>;
pub(crate) type PromptFn = Arc<dyn Fn(PromptRequest, Context) -> PromptFuture + Send + Sync>;
