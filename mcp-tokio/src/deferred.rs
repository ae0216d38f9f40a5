//! Prompts, resource reads and completions answered by async handlers.
//!
//! One model for every kind of request, the same as tools' [`Handler`](crate::Handler):
//!
//! | model | tools | prompts, resources, completion |
//! |---|---|---|
//! | sync | [`Handler::sync`](crate::Handler::sync) | the provider ([`Server::provide`](crate::Server::provide)) answers and returns `Dispatch::Done` |
//! | async | [`Handler::async_fn`](crate::Handler::async_fn) | the provider lists, its `get_prompt`/`read`/`complete` returns `Dispatch::Defer`, and the server's async handler ([`Server::async_prompts`](crate::Server::async_prompts), [`async_resources`](crate::Server::async_resources), [`async_completion`](crate::Server::async_completion)) answers |
//! | mixed | [`Handler::mixed`](crate::Handler::mixed) | the provider answers what it can and defers the rest |
//!
//! A deferred request runs as a tokio task with a [`Context`] (cancellation, logging, the
//! caller's [`Principal`](crate::Principal), requests to a legacy client with
//! [`Context::request`]). Its answer comes back to the connection's drive loop, which
//! completes it through the core session (answers complete out of order). A handler that
//! panics is answered with -32603. Without an async handler for its kind, a deferred request
//! is answered with -32603 naming the reason.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::context::Context;
use crate::output::{CompletionOutput, ErrorReply, PromptOutput, ResourceOutput};

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

/// An owned `resources/read` request, handed to an async resource handler.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResourceRequest {
    /// The URI, decoded.
    pub uri: String,
    /// The index of the listed resource it names, if it names one exactly.
    pub resource: Option<usize>,
    /// The index of the first resource template that matches it, if no resource did.
    pub template: Option<usize>,
}

/// What a `completion/complete` request completes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionTarget {
    /// An argument of the prompt with this name (`ref/prompt`).
    Prompt(String),
    /// A variable of the resource template with this URI template (`ref/resource`).
    Resource(String),
}

/// An owned `completion/complete` request, handed to an async completion handler.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The prompt or template whose argument is completed.
    pub target: CompletionTarget,
    /// The argument (or template variable) name.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Values of other arguments already resolved (`context.arguments`, 2025-06-18+).
    pub context: serde_json::Map<String, serde_json::Value>,
}

impl CompletionRequest {
    /// A resolved argument's value from `context`.
    pub fn context_argument(&self, name: &str) -> Option<&str> {
        self.context.get(name).and_then(|v| v.as_str())
    }
}

/// What an async prompt handler returns.
pub type PromptFuture = Pin<Box<dyn Future<Output = Result<PromptOutput, ErrorReply>> + Send>>;
/// What an async resource handler returns.
pub type ResourceFuture = Pin<Box<dyn Future<Output = Result<ResourceOutput, ErrorReply>> + Send>>;
/// What an async completion handler returns.
pub type CompletionFuture =
    Pin<Box<dyn Future<Output = Result<CompletionOutput, ErrorReply>> + Send>>;

pub(crate) type PromptFn = Arc<dyn Fn(PromptRequest, Context) -> PromptFuture + Send + Sync>;
pub(crate) type ResourceFn = Arc<dyn Fn(ResourceRequest, Context) -> ResourceFuture + Send + Sync>;
pub(crate) type CompletionFn =
    Arc<dyn Fn(CompletionRequest, Context) -> CompletionFuture + Send + Sync>;

/// The async handlers of a server, one per kind of deferred request (tools have theirs in
/// the registry).
#[derive(Clone, Default)]
pub(crate) struct AsyncHandlers {
    pub(crate) prompts: Option<PromptFn>,
    pub(crate) resources: Option<ResourceFn>,
    pub(crate) completion: Option<CompletionFn>,
}

impl std::fmt::Debug for AsyncHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncHandlers")
            .field("prompts", &self.prompts.is_some())
            .field("resources", &self.resources.is_some())
            .field("completion", &self.completion.is_some())
            .finish()
    }
}
