//! Deferred calls of a drive loop: starting their tasks, applying what the tasks send back
//! ([`Command`]), and session events that concern them.

use std::sync::Arc;

use futures::FutureExt;
use mcp_rs_core::model::common::ClientCaps;
use mcp_rs_core::session::{Call, Request};
use mcp_rs_core::{CallError, CallToken, ClientOutcome, Event, ProtocolVersion, Session, Transmit};
use tokio::io::AsyncWrite;
use tokio::sync::{mpsc, watch};

use super::{Connection, Running, Signals};
use crate::clock::now_ms;
use crate::context::{Answer, Command, Context, RequestError};
use crate::deferred::{CompletionRequest, CompletionTarget, PromptRequest, ResourceRequest};
use crate::error::Error;
use crate::output::ToolReply;
use crate::principal::Principal;
use crate::registry::Args;
use crate::state::note_list_changes;

impl<W: AsyncWrite + Unpin> Connection<'_, W> {
    /// Starts the task of a deferred call.
    pub(super) fn start(
        &mut self,
        session: &mut Session<'_>,
        call: Call<'_>,
        principal: Option<&Arc<Principal>>,
    ) -> Result<(), Error> {
        let token = call.token();
        self.adopt(token);
        match call.request {
            Request::Tool(tool) => {
                let handler = self
                    .snapshot
                    .entry(tool.tool_index())
                    .and_then(|e| e.handler.async_part().cloned());
                let Some(handler) = handler else {
                    // Sync tools are answered inside `handle`; this cannot happen, but
                    // answer rather than leak the call.
                    return self.refuse(session, token, "tool has no async handler");
                };
                let view = (tool.client_caps(), tool.version(), tool.wants_progress());
                let args = Args::new(tool.args().as_str().to_owned());
                let what = format!("tool {}", tool.name());
                // A tool that panics answers with an `isError` result, as a failed tool does.
                let panicked = |why| Answer::Tool(ToolReply::error(why));
                self.run_task(
                    token,
                    view,
                    principal,
                    (what, panicked),
                    move |ctx| async move { Answer::Tool(handler(args, ctx).await) },
                );
            }
            Request::Prompt(prompt) => {
                let Some(handler) = self.shared.async_handlers.prompts.clone() else {
                    return self.refuse(session, token, "prompt has no async handler");
                };
                let caps = (prompt.client_caps(), prompt.version(), false);
                let request = PromptRequest {
                    name: prompt.name().to_string(),
                    arguments: serde_json::from_str(prompt.arguments().as_str())
                        .unwrap_or_default(),
                };
                let what = format!("prompt {}", request.name);
                self.run_task(
                    token,
                    caps,
                    principal,
                    (what, Answer::internal),
                    move |ctx| async move {
                        handler(request, ctx)
                            .await
                            .map_or_else(Answer::Failed, Answer::Prompt)
                    },
                );
            }
            Request::Read(read) => {
                let Some(handler) = self.shared.async_handlers.resources.clone() else {
                    return self.refuse(session, token, "resource has no async handler");
                };
                let caps = (read.client_caps(), read.version(), false);
                let request = ResourceRequest {
                    uri: read.uri().to_string(),
                    resource: read.resource_index(),
                    template: read.template_index(),
                };
                let what = format!("resource {}", request.uri);
                self.run_task(
                    token,
                    caps,
                    principal,
                    (what, Answer::internal),
                    move |ctx| async move {
                        handler(request, ctx)
                            .await
                            .map_or_else(Answer::Failed, Answer::Resource)
                    },
                );
            }
            Request::Complete(complete) => {
                let Some(handler) = self.shared.async_handlers.completion.clone() else {
                    return self.refuse(session, token, "completion has no async handler");
                };
                let caps = (complete.client_caps(), complete.version(), false);
                let request = completion_request(&complete);
                let what = format!("completion of {}", request.argument);
                self.run_task(
                    token,
                    caps,
                    principal,
                    (what, Answer::internal),
                    move |ctx| async move {
                        handler(request, ctx)
                            .await
                            .map_or_else(Answer::Failed, Answer::Completion)
                    },
                );
            }
            _ => {
                return self.refuse(
                    session,
                    token,
                    "deferred answers are not supported for this method",
                )
            }
        }
        Ok(())
    }

    /// Starts the task of a deferred request: `task` gets the call's context (`view`: the
    /// client capabilities, revision and whether progress was asked for); a panic is
    /// answered with `panicked` of "`what` panicked: ...".
    pub(super) fn run_task<F, Fut>(
        &mut self,
        token: CallToken,
        (caps, version, wants_progress): (ClientCaps, ProtocolVersion, bool),
        principal: Option<&Arc<Principal>>,
        (what, panicked): (String, fn(String) -> Answer),
        task: F,
    ) where
        F: FnOnce(Context) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Answer> + Send + 'static,
    {
        let (ctx, cancel) = self.context(token, wants_progress, caps, version, principal);
        self.spawn(token, cancel, async move {
            let answer = guarded(&what, task(ctx)).await.unwrap_or_else(panicked);
            Command::Done(token, answer)
        });
    }

    /// A client's response to a request a call sent: to the call's task.
    pub(super) fn answered(&mut self, response: mcp_rs_core::ClientResponse<'_>) {
        let Some(reply) = self.waiting.remove(&response.call) else {
            return;
        };
        let answer = match response.outcome {
            ClientOutcome::Result(v) => {
                serde_json::from_str(v.as_str()).map_err(|_| RequestError::Closed)
            }
            ClientOutcome::Error { code, message } => Err(RequestError::Client {
                code,
                message: message.to_string(),
            }),
        };
        let _ = reply.send(answer);
    }

    /// A session event: a request timed out, a call was cancelled, the client initialized.
    pub(super) fn event(&mut self, event: Event) {
        match event {
            Event::RequestTimedOut(token) => {
                if let Some(reply) = self.waiting.remove(&token) {
                    let _ = reply.send(Err(RequestError::TimedOut));
                }
            }
            Event::Cancelled(token) => {
                if let Some(r) = self.running.remove(&token) {
                    let _ = r.cancel.send(true);
                    r.abort.abort();
                }
                self.ended(token);
            }
            Event::Initialized(v) => tracing::info!(version = %v, "client initialized"),
            Event::LogLevel(l) => tracing::debug!(level = l.as_str(), "log level set"),
            _ => {}
        }
    }

    /// Applies `first` and every command already queued behind it. A list a task changed
    /// is announced before that task's answer.
    pub(super) fn commands(
        &mut self,
        session: &mut Session<'_>,
        first: Command,
        signals: &mut Signals,
    ) -> Result<(), Error> {
        self.lend();
        if signals.tools.has_changed().unwrap_or(false) {
            signals.tools.borrow_and_update();
            self.tools_changed(session)?;
        }
        if signals.lists.has_changed().unwrap_or(false) {
            self.lists_changed(session, signals)?;
        }
        self.command(session, first)?;
        while let Some(Ok(cmd)) = signals.commands.as_mut().map(mpsc::Receiver::try_recv) {
            self.command(session, cmd)?;
        }
        Ok(())
    }

    /// The tool registry changed: take a new snapshot and announce it.
    pub(super) fn tools_changed(&mut self, session: &mut Session<'_>) -> Result<(), Error> {
        self.lend();
        self.snapshot = self.shared.tools.snapshot();
        session.tools_changed();
        self.drain(session)
    }

    /// The server announced prompt, resource or template list changes since the loop last
    /// looked.
    pub(super) fn lists_changed(
        &mut self,
        session: &mut Session<'_>,
        signals: &mut Signals,
    ) -> Result<(), Error> {
        self.lend();
        let now = *signals.lists.borrow_and_update();
        note_list_changes(session, now, &mut signals.seen_lists);
        self.drain(session)
    }

    /// A context for a call's task, and the sender that cancels it.
    pub(super) fn context(
        &mut self,
        token: CallToken,
        wants_progress: bool,
        caps: ClientCaps,
        version: ProtocolVersion,
        principal: Option<&Arc<Principal>>,
    ) -> (Context, watch::Sender<bool>) {
        let (cancel, cancelled) = watch::channel(false);
        let ctx = Context {
            token: Some(token),
            wants_progress,
            caps,
            version,
            principal: principal.cloned(),
            tx: self.sender(),
            cancelled,
            task: None,
        };
        (ctx, cancel)
    }

    /// Runs a call's task; its last command (the answer) goes back to this loop.
    pub(super) fn spawn(
        &mut self,
        token: CallToken,
        cancel: watch::Sender<bool>,
        task: impl std::future::Future<Output = Command> + Send + 'static,
    ) {
        let done = self.sender();
        let task = tokio::spawn(async move {
            let _ = done.send(task.await).await;
        });
        self.running.insert(
            token,
            Running {
                abort: task.abort_handle(),
                cancel,
            },
        );
    }

    /// Routes the output of a call (or listen stream) to the response of the current
    /// message (HTTP).
    pub(super) fn adopt(&mut self, token: CallToken) {
        #[cfg(feature = "http")]
        if let Some(r) = &mut self.routes {
            r.adopt(token);
        }
        #[cfg(not(feature = "http"))]
        let _ = token;
    }

    /// A call answered or ended: its response may end (HTTP).
    pub(super) fn ended(&mut self, token: CallToken) {
        self.running.remove(&token);
        self.waiting.remove(&token);
        #[cfg(feature = "http")]
        if let Some(r) = &mut self.routes {
            r.done(token);
        }
    }

    /// Answers a deferred request that nothing here can run with an internal error.
    pub(super) fn refuse(
        &mut self,
        session: &mut Session<'_>,
        token: CallToken,
        why: &str,
    ) -> Result<(), Error> {
        self.lend();
        let code = mcp_rs_core::wire::jsonrpc::code::INTERNAL_ERROR;
        let sent = match session.fail(token, code, why, &mut self.out) {
            Ok(Some(tx)) => self.send(tx),
            _ => Ok(()),
        };
        self.ended(token);
        sent
    }

    /// Completes a call with `answer`, growing the output buffer up to
    /// [`Limits::max_response`](crate::Limits::max_response) when the result needs it.
    pub(super) fn finish(
        &mut self,
        session: &mut Session<'_>,
        token: CallToken,
        mut answer: impl FnMut(&mut Session<'_>, &mut [u8]) -> Result<Option<Transmit>, CallError>,
    ) -> Result<(), Error> {
        self.lend();
        self.running.remove(&token);
        self.waiting.remove(&token);
        let why = loop {
            match answer(session, &mut self.out) {
                Ok(Some(tx)) => {
                    let sent = self.send(tx);
                    self.ended(token);
                    return sent;
                }
                Ok(None) => {
                    self.ended(token);
                    return Ok(());
                }
                Err(CallError::BufferTooSmall { required })
                    if required <= self.shared.limits.max_response =>
                {
                    self.out.resize(required, 0);
                }
                Err(CallError::BufferTooSmall { required }) => {
                    break format!(
                        "result of {required} bytes exceeds the limit of {} bytes",
                        self.shared.limits.max_response
                    )
                }
                Err(e) => {
                    tracing::warn!(error = %e, "completing a call failed");
                    break "invalid result".to_owned();
                }
            }
        };
        self.refuse(session, token, &why)
    }

    /// Applies a message from a tool task.
    pub(super) fn command(&mut self, session: &mut Session<'_>, cmd: Command) -> Result<(), Error> {
        self.lend();
        match cmd {
            Command::Request {
                token,
                method,
                params,
                reply,
            } => {
                let timeout = self.shared.limits.request_timeout.as_millis();
                let timeout = u64::try_from(timeout).unwrap_or(u64::MAX);
                session.handle_timeout(now_ms());
                match session.request(token, method, &params, timeout, &mut self.out) {
                    Ok(Some(tx)) => {
                        self.send(tx)?;
                        self.waiting.insert(token, reply);
                    }
                    Ok(None) => {
                        let _ = reply.send(Err(RequestError::Closed));
                    }
                    Err(e) => {
                        let _ = reply.send(Err(RequestError::Refused(e)));
                    }
                }
            }
            Command::Done(token, answer) => match answer {
                Answer::Tool(output) => self.finish(session, token, |s, out| {
                    s.complete(token, out, |r| output.write(r))
                })?,
                Answer::Prompt(output) => self.finish(session, token, |s, out| {
                    s.complete_prompt(token, out, |r| output.write(r))
                })?,
                Answer::Resource(output) => self.finish(session, token, |s, out| {
                    s.complete_read(token, out, |r| output.write(r))
                })?,
                Answer::Completion(output) => self.finish(session, token, |s, out| {
                    s.complete_completion(token, out, |r| output.write(r))
                })?,
                Answer::Failed(e) => self.finish(session, token, |s, out| {
                    s.fail(token, e.code, &e.message, out)
                })?,
            },
            Command::CloseStream(token) => {
                #[cfg(feature = "http")]
                if let Some(r) = &mut self.routes {
                    r.detach(token);
                }
                #[cfg(not(feature = "http"))]
                let _ = token;
            }
            Command::Progress {
                token,
                progress,
                total,
                message,
            } => {
                match session.progress(token, progress, total, message.as_deref(), &mut self.out) {
                    Ok(Some(tx)) => self.send(tx)?,
                    Ok(None) => {}
                    Err(e) => tracing::debug!(error = %e, "progress not sent"),
                }
            }
            Command::Log {
                token,
                level,
                logger,
                data,
            } => match session.log(Some(token), level, logger.as_deref(), &data, &mut self.out) {
                Ok(Some(tx)) => self.send(tx)?,
                Ok(None) => {}
                Err(e) => tracing::debug!(error = %e, "log not sent"),
            },
        }
        self.drain(session)
    }
}

/// The owned copy of a `completion/complete` request.
pub(super) fn completion_request(
    c: &mcp_rs_core::model::completion::CompleteRequest<'_>,
) -> CompletionRequest {
    use mcp_rs_core::model::completion::CompletionRef;
    CompletionRequest {
        target: match c.reference() {
            CompletionRef::Prompt(name) => CompletionTarget::Prompt(name.to_string()),
            CompletionRef::Resource(uri) => CompletionTarget::Resource(uri.to_string()),
        },
        argument: c.argument().to_string(),
        value: c.value().to_string(),
        context: c
            .context()
            .and_then(|raw| serde_json::from_str(raw.as_str()).ok())
            .unwrap_or_default(),
    }
}

/// Runs a handler's future; a panic is logged and becomes `Err("<what> panicked: ...")`.
pub(super) async fn guarded<T>(
    what: &str,
    fut: impl std::future::Future<Output = T>,
) -> Result<T, String> {
    std::panic::AssertUnwindSafe(fut)
        .catch_unwind()
        .await
        .map_err(|panic| {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!("{what} panicked: {msg}");
            format!("{what} panicked: {msg}")
        })
}
