//! The typed API: one method per request kind. Each builds an [`OwnedRequest`] for the
//! driver (the core writes it) and decodes the result payload with serde.

use std::collections::HashSet;
use std::sync::Arc;

use mcp_rs_core::model::logging::LogLevel;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::driver::Command;
use super::request::{CompletionRef, OwnedRequest};
use super::results::{
    CallToolResult, Completion, GetPromptResult, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, Tool, ToolsPage,
};
use super::shared::{count_drop, lock, valid_marks};
use super::types::{CallOptions, Notification};
use super::{CallHandle, Client, ClientError, Result, MAX_PAGES, MAX_QUEUED_NOTIFICATIONS};

pub(super) fn decode<T: DeserializeOwned>(value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| ClientError::Malformed(e.to_string()))
}

fn nothing(_: Value) -> Result<()> {
    Ok(())
}

fn raw(value: Value) -> Result<Value> {
    Ok(value)
}

/// Tools whose `x-mcp-header` marks are invalid are left out (SEP-2243).
fn checked(mut page: ToolsPage) -> Result<ToolsPage> {
    page.tools.retain(|tool| {
        let valid = valid_marks(&tool.input_schema);
        if !valid {
            tracing::warn!(
                "tool {:?} has invalid x-mcp-header marks: excluded",
                tool.name
            );
        }
        valid
    });
    Ok(page)
}

/// Arguments as one line of JSON (`None` for `null`).
fn arguments(arguments: &Value) -> Result<Option<String>> {
    match arguments {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(arguments.to_string())),
        _ => Err(ClientError::Refused(
            "arguments must be a JSON object".into(),
        )),
    }
}

/// One page of a list with a cursor (its list renamed `items`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page<T> {
    items: Vec<T>,
    next_cursor: Option<String>,
}

impl Client {
    /// Sends `request` and returns the handle of its raw result, decoded by `decode`.
    pub(super) fn begin<T>(
        &self,
        request: OwnedRequest,
        options: CallOptions,
        decode: fn(Value) -> Result<T>,
    ) -> CallHandle<T> {
        let shared = &self.inner.shared;
        let call = shared
            .next_call
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let (reply, rx) = oneshot::channel();
        lock(&shared.live).insert(call);
        let command = Command::Call {
            call,
            request,
            options,
            reply,
        };
        if let Err(mpsc::error::SendError(Command::Call { reply, .. })) =
            self.inner.commands.send(command)
        {
            lock(&shared.live).remove(&call);
            let _ = reply.send(Err(shared.closed_error()));
        }
        CallHandle {
            id: call,
            rx,
            decode,
            commands: self.inner.commands.clone(),
            shared: Arc::clone(shared),
            done: false,
        }
    }

    /// Follows `nextCursor` from page to page; fails if the server repeats a cursor or after
    /// [`MAX_PAGES`] pages.
    pub(super) async fn all_pages<T: DeserializeOwned>(
        &self,
        what: &str,
        request: fn(Option<String>) -> OwnedRequest,
        rename: &str,
    ) -> Result<Vec<T>> {
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut value = self
                .begin(request(cursor.take()), CallOptions::default(), raw)
                .await?;
            if let Some(obj) = value.as_object_mut() {
                if let Some(list) = obj.remove(rename) {
                    obj.insert("items".into(), list);
                }
            }
            let page: Page<T> = decode(value)?;
            items.extend(page.items);
            match page.next_cursor {
                None => return Ok(items),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(ClientError::Malformed(format!(
                            "{what} repeated the cursor {next:?}"
                        )));
                    }
                    cursor = Some(next);
                }
            }
        }
        Err(ClientError::Malformed(format!(
            "{what} did not end within {MAX_PAGES} pages"
        )))
    }

    // ---- tools ------------------------------------------------------------------------------

    /// One page of `tools/list` (`cursor` from the previous page's `next_cursor`). Tools
    /// with invalid `x-mcp-header` marks are left out.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<ToolsPage> {
        let request = OwnedRequest::ListTools(cursor.map(str::to_owned));
        let page: ToolsPage = self.begin(request, CallOptions::default(), decode).await?;
        checked(page)
    }

    /// Every tool, following `nextCursor` until the last page. Fails with
    /// [`ClientError::Malformed`] if the server repeats a cursor or after [`MAX_PAGES`] pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>> {
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page = self.list_tools_page(cursor.as_deref()).await?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(ClientError::Malformed(format!(
                            "tools/list repeated the cursor {next:?}"
                        )));
                    }
                    cursor = Some(next);
                }
            }
        }
        Err(ClientError::Malformed(format!(
            "tools/list did not end within {MAX_PAGES} pages"
        )))
    }

    /// Calls a tool (`arguments` of `Value::Null` sends none). A tool failure is `Ok` with
    /// [`CallToolResult::is_error`]; an unknown tool is [`ClientError::Protocol`] (-32602).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.call_tool_with(name, arguments, CallOptions::default())
            .await
    }

    /// Calls a tool with progress, timeout or log level options; the request is sent at once
    /// and the returned handle carries its id (see [`CallHandle`]).
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> CallHandle<CallToolResult> {
        let request = match self::arguments(&arguments) {
            Ok(arguments) => OwnedRequest::CallTool {
                name: name.to_owned(),
                arguments,
            },
            Err(e) => return self.failed(e),
        };
        self.begin(request, options, decode)
    }

    /// Calls a tool and checks its `structuredContent` against the tool's `outputSchema`
    /// (`tool` as listed): a result that does not match fails with
    /// [`ClientError::Malformed`]; a tool without an output schema is not checked.
    #[cfg(feature = "validate")]
    pub async fn call_tool_validated(
        &self,
        tool: &Tool,
        arguments: Value,
    ) -> Result<CallToolResult> {
        let result = self.call_tool(&tool.name, arguments).await?;
        let Some(schema) = &tool.output_schema else {
            return Ok(result);
        };
        if result.is_error {
            return Ok(result);
        }
        let validator = jsonschema::validator_for(schema)
            .map_err(|e| ClientError::Malformed(format!("outputSchema: {e}")))?;
        let structured = result.structured_content.as_ref().ok_or_else(|| {
            ClientError::Malformed("the tool has an outputSchema but no structuredContent".into())
        })?;
        if let Err(e) = validator.validate(structured) {
            return Err(ClientError::Malformed(format!(
                "structuredContent does not match the outputSchema: {e}"
            )));
        }
        Ok(result)
    }

    /// A handle that fails at once with `e`.
    fn failed<T>(&self, e: ClientError) -> CallHandle<T> {
        let (reply, rx) = oneshot::channel();
        let _ = reply.send(Err(e));
        CallHandle {
            id: 0,
            rx,
            decode: |_| Err(ClientError::Cancelled),
            commands: self.inner.commands.clone(),
            shared: Arc::clone(&self.inner.shared),
            done: true,
        }
    }

    // ---- resources and prompts ------------------------------------------------------------

    /// Every resource (all pages).
    pub async fn list_resources(&self) -> Result<Vec<Resource>> {
        self.all_pages("resources/list", OwnedRequest::ListResources, "resources")
            .await
    }

    /// Every resource template (all pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        let request = OwnedRequest::ListTemplates;
        self.all_pages("resources/templates/list", request, "resourceTemplates")
            .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult> {
        let request = OwnedRequest::Read(uri.to_owned());
        self.begin(request, CallOptions::default(), decode).await
    }

    /// `resources/subscribe` (legacy era): `notifications/resources/updated` for `uri`
    /// then arrive as [`Notification::ResourceUpdated`].
    pub async fn subscribe(&self, uri: &str) -> Result<()> {
        let request = OwnedRequest::Subscribe(uri.to_owned());
        self.begin(request, CallOptions::default(), nothing).await
    }

    /// `resources/unsubscribe` (legacy era).
    pub async fn unsubscribe(&self, uri: &str) -> Result<()> {
        let request = OwnedRequest::Unsubscribe(uri.to_owned());
        self.begin(request, CallOptions::default(), nothing).await
    }

    /// Every prompt (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>> {
        self.all_pages("prompts/list", OwnedRequest::ListPrompts, "prompts")
            .await
    }

    /// `prompts/get` with string `arguments` (a JSON object, or `null` for none).
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult> {
        let request = OwnedRequest::GetPrompt {
            name: name.to_owned(),
            arguments: self::arguments(&arguments)?,
        };
        self.begin(request, CallOptions::default(), decode).await
    }

    /// `completion/complete`: suggestions for `argument` of a prompt or resource template,
    /// given what was typed (`value`) and the arguments already resolved (`context`, a JSON
    /// object of strings, or `null`).
    pub async fn complete(
        &self,
        reference: CompletionRef,
        argument: &str,
        value: &str,
        context: Value,
    ) -> Result<Completion> {
        #[derive(Deserialize)]
        struct Complete {
            completion: Completion,
        }
        let request = OwnedRequest::Complete {
            reference,
            argument: argument.to_owned(),
            value: value.to_owned(),
            context: self::arguments(&context)?,
        };
        let result: Complete = self.begin(request, CallOptions::default(), decode).await?;
        Ok(result.completion)
    }

    // ---- the rest ---------------------------------------------------------------------------

    /// `ping` (legacy era).
    pub async fn ping(&self) -> Result<()> {
        self.begin(OwnedRequest::Ping, CallOptions::default(), nothing)
            .await
    }

    /// `logging/setLevel` (legacy era; in 2026-07-28 use [`CallOptions::with_log_level`]).
    pub async fn set_log_level(&self, level: LogLevel) -> Result<()> {
        let request = OwnedRequest::SetLevel(level);
        self.begin(request, CallOptions::default(), nothing).await
    }

    /// `subscriptions/listen` (2026-07-28): opens the stream of the notifications opted in
    /// to by `filter` (a `SubscriptionFilter` such as `{"toolsListChanged": true}`); they
    /// arrive as [`Notification`]s. The handle resolves (to the raw result) only when the
    /// server ends the subscription; dropping it cancels the subscription. It has no
    /// timeout.
    pub fn listen(&self, filter: Value) -> CallHandle<Value> {
        if !filter.is_object() {
            return self.failed(ClientError::Refused(
                "the filter must be a JSON object".into(),
            ));
        }
        let request = OwnedRequest::Listen(filter.to_string());
        let options = CallOptions::new().with_timeout(std::time::Duration::MAX);
        self.begin(request, options, raw)
    }

    /// Tells the server the roots changed (`notifications/roots/list_changed`, legacy era):
    /// it asks `roots/list` again. Needs a roots handler
    /// ([`ClientOptions::on_roots`](super::ClientOptions::on_roots) or `with_roots`);
    /// otherwise, or in 2026-07-28, it fails with [`ClientError::Refused`].
    pub async fn roots_changed(&self) -> Result<()> {
        let (reply, rx) = oneshot::channel();
        let shared = &self.inner.shared;
        if self
            .inner
            .commands
            .send(Command::RootsChanged(reply))
            .is_err()
        {
            return Err(shared.closed_error());
        }
        rx.await.unwrap_or_else(|_| Err(shared.closed_error()))
    }

    /// What `server/discover` (2026-07-28) or `initialize` reported: the handshake already
    /// asked, so this sends nothing.
    pub async fn discover(&self) -> Result<super::ServerDetails> {
        self.server_details()
            .ok_or_else(|| ClientError::Malformed("no handshake details".into()))
    }

    /// Cancels call `call` ([`CallHandle::id`]): its caller gets [`ClientError::Cancelled`]
    /// and the server `notifications/cancelled` with `reason`. Returns whether it was
    /// pending.
    pub fn cancel(&self, call: u64, reason: Option<&str>) -> bool {
        super::cancel(&self.inner.shared, &self.inner.commands, call, reason)
    }

    /// Calls `f` for every notification from the server (progress goes to its request's
    /// sink instead). Runs on the driver task: return quickly.
    pub fn on_notification(&self, f: impl Fn(&Notification) + Send + Sync + 'static) {
        lock(&self.inner.shared.handlers).push(Arc::new(f));
    }

    /// A channel receiving the notifications [`on_notification`](Client::on_notification)
    /// sees from now on. It holds at most [`MAX_QUEUED_NOTIFICATIONS`]; a notification that
    /// finds it full is dropped, logged and counted in
    /// [`dropped_notifications`](Client::dropped_notifications).
    pub fn notifications(&self) -> mpsc::Receiver<Notification> {
        let (tx, rx) = mpsc::channel(MAX_QUEUED_NOTIFICATIONS);
        let dropped = Arc::clone(&self.inner.shared.dropped);
        self.on_notification(move |n| {
            if let Err(mpsc::error::TrySendError::Full(_)) = tx.try_send(n.clone()) {
                count_drop(&dropped, "notification");
            }
        });
        rx
    }

    /// How many notifications and progress updates were dropped because their bounded
    /// channel ([`notifications`](Client::notifications), a bounded
    /// [`ProgressSink`](super::ProgressSink)) was full.
    pub fn dropped_notifications(&self) -> u64 {
        self.inner
            .shared
            .dropped
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}
