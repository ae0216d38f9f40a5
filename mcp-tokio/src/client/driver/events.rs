//! What the driver does with the core's events: results and errors end calls, rounds and
//! server requests go to the application's handlers (on tasks of their own), notifications
//! to the callbacks.

use mcp_rs_core::client::{
    Answers, Client as Core, Event, HandshakeError, InputRound, InvalidFrame, Response,
};
use mcp_rs_core::wire::json::RawJson;
use mcp_rs_core::wire::method::{Method, ServerMethod};
use mcp_rs_core::wire::version::ProtocolVersion;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{Answer, Driver};
use crate::client::error::ClientError;
use crate::client::handlers::{HandlerError, Handlers, Want};
use crate::client::link::Outgoing;
use crate::client::shared::{count_drop, lock, marks_of};
use crate::client::types::{Notification, Progress, ServerDetails};

impl Driver {
    pub(super) fn event(&mut self, core: &mut Core<'_>, event: Event<'_>) {
        match event {
            Event::Connected { version, .. } => self.connected(version),
            Event::HandshakeFailed(e) => {
                let e = handshake_error(e);
                self.fatal = Some(e.duplicate());
                if let Some(ready) = self.ready.take() {
                    let _ = ready.send(Err(e));
                }
            }
            Event::Handshake(h) => {
                let result = value(h.result);
                if h.method == Method::Initialize {
                    let chosen = result.get("protocolVersion").and_then(Value::as_str);
                    if let Some(v) = chosen.and_then(ProtocolVersion::from_wire) {
                        let _ = self.out.try_send(Outgoing::Negotiated(v));
                    }
                }
                let info = h.server_info().map(value);
                *lock(&self.shared.details) = Some(ServerDetails {
                    protocol_version: String::new(),
                    supported_versions: result
                        .get("supportedVersions")
                        .and_then(|v| serde_json::from_value(v.clone()).ok())
                        .unwrap_or_default(),
                    capabilities: result
                        .get("capabilities")
                        .cloned()
                        .unwrap_or_else(|| Value::Object(Map::new())),
                    server_info: info.and_then(|i| serde_json::from_value(i).ok()),
                    instructions: h.instructions().map(|i| i.to_string()),
                    raw: result,
                });
            }
            Event::Result(response) => self.result(response),
            Event::Error {
                handle, error: e, ..
            } => self.finish(
                handle,
                Err(ClientError::Protocol {
                    code: e.code,
                    message: e.message.to_string(),
                    data: e.data.map(value),
                }),
            ),
            Event::InputRequired(round) => self.round(core, round),
            Event::TimedOut { handle, .. } => self.finish(handle, Err(ClientError::Timeout)),
            Event::Progress(p) => {
                let Some(call) = self
                    .by_handle
                    .get(&p.handle)
                    .and_then(|c| self.calls.get(c))
                else {
                    return;
                };
                let progress = Progress {
                    progress: p.progress,
                    total: p.total,
                    message: p.message.map(|m| m.to_string()),
                };
                if let Some(sink) = &call.progress {
                    if !sink.deliver(progress) {
                        count_drop(&self.shared.dropped, "progress notification");
                    }
                }
            }
            Event::Request(request) => {
                let want = match request.method {
                    ServerMethod::CreateMessage => Want::Sampling,
                    ServerMethod::Elicit => Want::Elicitation,
                    _ => Want::Roots,
                };
                let params = request.params.map(value).unwrap_or(Value::Null);
                let (handlers, answers, id) =
                    (self.handlers.clone(), self.answers.clone(), request.id);
                tokio::spawn(async move {
                    let result = handlers.answer(want, params).await;
                    let _ = answers.send(Answer::Reply { id, result });
                });
            }
            Event::ListChanged(kind) => self.notify(&Notification::ListChanged(kind)),
            Event::ResourceUpdated { uri, .. } => self.notify(&Notification::ResourceUpdated {
                uri: uri.to_string(),
            }),
            Event::Log(log) => self.notify(&Notification::Log {
                level: log.level,
                logger: log.logger.map(|l| l.to_string()),
                data: value(log.data),
            }),
            Event::Cancelled { request_id, reason } => self.notify(&Notification::Cancelled {
                request_id: request_id.as_raw().to_owned(),
                reason: reason.map(|r| r.to_string()),
            }),
            Event::Invalid(InvalidFrame::MalformedResult { handle, reason, .. }) => {
                self.finish(handle, Err(ClientError::Malformed(reason.into())));
            }
            Event::Invalid(invalid) => {
                tracing::debug!("unusable message from the server: {invalid:?}");
            }
            _ => {}
        }
    }

    pub(super) fn connected(&mut self, version: ProtocolVersion) {
        *lock(&self.shared.version) = Some(version);
        if let Some(d) = lock(&self.shared.details).as_mut() {
            d.protocol_version = version.as_str().to_owned();
        }
        let _ = self.out.try_send(Outgoing::Negotiated(version));
        let outcome = if self.modern_only && !version.is_modern() {
            let e = ClientError::Version(format!(
                "the server does not speak 2026-07-28 (it chose {})",
                version.as_str()
            ));
            self.fatal = Some(e.duplicate());
            Err(e)
        } else {
            Ok(())
        };
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(outcome);
        }
    }

    pub(super) fn result(&mut self, response: Response<'_>) {
        if response.method == Method::ToolsList {
            if let Ok(page) = response.page() {
                let mut known = lock(&self.shared.tool_headers);
                for item in page.items() {
                    let Some(name) = item.get("name").and_then(|n| n.as_string()) else {
                        continue;
                    };
                    let marks = item.get("inputSchema").map_or(Some(Vec::new()), marks_of);
                    match marks {
                        Some(marks) => known.insert(name.to_string(), marks),
                        None => known.remove(&name.to_string()),
                    };
                }
            }
        }
        self.finish(response.handle, Ok(value(response.result)));
    }

    /// An `input_required` round: the handlers answer it on a task of their own.
    pub(super) fn round(&mut self, core: &mut Core<'_>, round: InputRound<'_>) {
        let Some(&call) = self.by_handle.get(&round.handle) else {
            return;
        };
        let Some(c) = self.calls.get_mut(&call) else {
            return;
        };
        c.rounds += 1;
        if c.rounds > self.max_rounds {
            let handle = c.handle;
            let _ = self.write(|out| core.cancel(handle, None, out));
            let e = format!(
                "the server asked for input more than {} times",
                self.max_rounds
            );
            return self.end_call(call, Err(ClientError::Malformed(e)));
        }
        let requests: Vec<(String, Option<ServerMethod>, Value)> = round
            .requests()
            .map(|r| {
                let params = r.params.map(value).unwrap_or(Value::Null);
                (r.key.to_string(), r.method, params)
            })
            .collect();
        let state = round.request_state.map(|s| s.to_string());
        let (handlers, answers) = (self.handlers.clone(), self.answers.clone());
        // The handlers answer within the request's own timeout.
        let limit = c.options.timeout_ms.unwrap_or(self.request_timeout_ms);
        let limit = Duration::from_millis(limit);
        tokio::spawn(async move {
            let answered = tokio::time::timeout(limit, answer_round(&handlers, requests)).await;
            let responses = answered.unwrap_or(Err(RoundFailure::TimedOut));
            let _ = answers.send(Answer::Round {
                call,
                responses,
                state,
            });
        });
    }

    pub(super) fn answer(&mut self, core: &mut Core<'_>, answer: Answer) {
        match answer {
            Answer::Reply { id, result } => {
                let written = match result {
                    Ok(v) => {
                        let text = v.to_string();
                        self.write(|out| core.respond(&id, &text, out).map(|t| t.len))
                    }
                    Err(e) => self.write(|out| {
                        core.respond_error(&id, e.code, &e.message, out)
                            .map(|t| t.len)
                    }),
                };
                match written {
                    Ok(len) => self.send_own_frame(len),
                    Err(e) => tracing::warn!("answering the server's request failed: {e}"),
                }
            }
            Answer::Round {
                call,
                responses,
                state,
            } => {
                let Some(c) = self.calls.get(&call) else {
                    return;
                };
                let handle = c.handle;
                let responses = match responses {
                    Ok(r) => Value::Object(r).to_string(),
                    Err(failure) => {
                        let _ = self.write(|out| core.cancel(handle, None, out));
                        let e = match failure {
                            RoundFailure::TimedOut => ClientError::Timeout,
                            RoundFailure::Handler(e) => ClientError::Protocol {
                                code: i64::from(e.code),
                                message: e.message,
                                data: None,
                            },
                        };
                        return self.end_call(call, Err(e));
                    }
                };
                let (request, options) = (c.request.clone(), c.options);
                let now = self.now();
                let answers = Answers {
                    input_responses: Some(&responses),
                    request_state: state.as_deref(),
                };
                let sent = self.write(|out| {
                    core.retry(handle, &request.as_core(), answers, options, now, out)
                });
                match sent {
                    Ok(sent) => self.send_frame(sent.len, call),
                    Err(e) => self.end_call(call, Err(e)),
                }
            }
        }
    }
}

/// A JSON value from the core's view of it.
fn value(raw: RawJson<'_>) -> Value {
    serde_json::from_str(raw.as_str()).unwrap_or(Value::Null)
}

fn handshake_error(e: HandshakeError) -> ClientError {
    match e {
        HandshakeError::Refused { code } => ClientError::Protocol {
            code,
            message: "the server refused the handshake".into(),
            data: None,
        },
        HandshakeError::UnsupportedVersion => ClientError::Version(
            "the server chose a protocol version this client does not speak".into(),
        ),
        HandshakeError::TimedOut => ClientError::Timeout,
        other => ClientError::Malformed(format!("handshake: {other}")),
    }
}

/// Why a round's answers could not be given.
pub(super) enum RoundFailure {
    /// A handler refused (or the server asked for something no handler answers).
    Handler(HandlerError),
    /// The handlers did not answer within the request's timeout.
    TimedOut,
}

/// The answers of one round, in the server's order; the first refusal ends it.
async fn answer_round(
    handlers: &Handlers,
    requests: Vec<(String, Option<ServerMethod>, Value)>,
) -> Result<Map<String, Value>, RoundFailure> {
    let mut responses = Map::new();
    for (key, method, params) in requests {
        let want = match method {
            Some(ServerMethod::CreateMessage) => Want::Sampling,
            Some(ServerMethod::Elicit) => Want::Elicitation,
            Some(ServerMethod::ListRoots) => Want::Roots,
            _ => {
                let e = HandlerError::new(-32601, "unknown input request");
                return Err(RoundFailure::Handler(e));
            }
        };
        let result = handlers.answer(want, params).await;
        responses.insert(key, result.map_err(RoundFailure::Handler)?);
    }
    Ok(responses)
}
