//! Requests the client sends: what they carry ([`Request`]), per-request options
//! ([`Options`]), and the one writer that frames them for the negotiated era.
//!
//! | request | params written |
//! |---|---|
//! | [`Request::ListTools`], `ListPrompts`, `ListResources`, `ListResourceTemplates` | `cursor` if given |
//! | [`Request::CallTool`] | `name`, `arguments` (raw JSON object) if given |
//! | [`Request::GetPrompt`] | `name`, `arguments` (raw JSON object of strings) if given |
//! | [`Request::ReadResource`], `Subscribe`, `Unsubscribe` | `uri` (the last two legacy only) |
//! | [`Request::Complete`] | `ref`, `argument` `{name, value}`, `context.arguments` if given |
//! | [`Request::Ping`] | — (legacy only) |
//! | [`Request::SetLevel`] | `level` (legacy only) |
//! | [`Request::Listen`] | `notifications` (raw JSON `SubscriptionFilter`; 2026-07-28 only) |
//! | `Request::Task` (feature `tasks`) | `taskId`, and `inputResponses` for `tasks/update` (2026-07-28 only; see [`tasks`](super::tasks)) |
//! | `Request::Skills` (feature `skills`) | `uri`, `cursor` (see `skills::SkillsRequest`) |
//!
//! Every request then gets `_meta`: `progressToken` (the request's id) when progress was
//! asked for, and on 2026-07-28 `io.modelcontextprotocol/protocolVersion`,
//! `io.modelcontextprotocol/clientCapabilities`, `io.modelcontextprotocol/clientInfo` and
//! (if set) `io.modelcontextprotocol/logLevel`. A retry of an `input_required` round adds
//! `inputResponses` and `requestState` ([`Client::retry`]).

#[cfg(feature = "skills")]
pub(crate) mod skills;
#[cfg(feature = "tasks")]
pub(crate) mod tasks;

use super::error::ClientError;
use super::slots::{target_digest, RequestHandle, SlotState};
use super::{Client, Sent, Transmit};
use crate::model::common::ClientCaps;
use crate::model::logging::LogLevel;
use crate::wire::json::{check_embedded, JsonWriter};
use crate::wire::jsonrpc;
use crate::wire::method::{Eras, Method, Notification};
use crate::wire::params::{META_CAPS, META_CLIENT_INFO, META_LOG_LEVEL, META_VERSION};
use crate::wire::version::ProtocolVersion;

/// What `completion/complete` completes an argument of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference<'a> {
    /// `{"type":"ref/prompt","name":…}`
    Prompt(&'a str),
    /// `{"type":"ref/resource","uri":…}` (a URI template)
    Resource(&'a str),
}

/// A request to the server. Raw JSON members (`arguments`, `context`) are written verbatim
/// and must be one JSON object on one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Request<'a> {
    /// `tools/list`, from `cursor` (the text of a page's `nextCursor`).
    ListTools {
        /// Where to continue; `None` for the first page.
        cursor: Option<&'a str>,
    },
    /// `tools/call`.
    CallTool {
        /// The tool.
        name: &'a str,
        /// Its arguments (a JSON object), if any.
        arguments: Option<&'a str>,
    },
    /// `prompts/list`.
    ListPrompts {
        /// Where to continue; `None` for the first page.
        cursor: Option<&'a str>,
    },
    /// `prompts/get`.
    GetPrompt {
        /// The prompt.
        name: &'a str,
        /// Its arguments (a JSON object of strings), if any.
        arguments: Option<&'a str>,
    },
    /// `resources/list`.
    ListResources {
        /// Where to continue; `None` for the first page.
        cursor: Option<&'a str>,
    },
    /// `resources/templates/list`.
    ListResourceTemplates {
        /// Where to continue; `None` for the first page.
        cursor: Option<&'a str>,
    },
    /// `resources/read`.
    ReadResource {
        /// The resource.
        uri: &'a str,
    },
    /// `resources/subscribe` (legacy era): the server then sends
    /// `notifications/resources/updated` for it.
    Subscribe {
        /// The resource.
        uri: &'a str,
    },
    /// `resources/unsubscribe` (legacy era).
    Unsubscribe {
        /// The resource.
        uri: &'a str,
    },
    /// `completion/complete`.
    Complete {
        /// The prompt or resource template.
        reference: Reference<'a>,
        /// The argument being completed.
        argument: &'a str,
        /// What was typed so far.
        value: &'a str,
        /// `context.arguments`: arguments already resolved (a JSON object of strings).
        context: Option<&'a str>,
    },
    /// `ping` (legacy era).
    Ping,
    /// `logging/setLevel` (legacy era).
    SetLevel(LogLevel),
    /// `subscriptions/listen` (2026-07-28): a long-lived request whose stream carries the
    /// notifications opted in to; it is answered only when the server ends it (send it
    /// with a timeout of `u64::MAX`).
    Listen {
        /// The `SubscriptionFilter` (a JSON object), e.g. `{"toolsListChanged":true}`.
        notifications: &'a str,
    },
    /// `tasks/get`, `tasks/update` or `tasks/cancel` (the tasks extension, 2026-07-28):
    /// declares the extension on the request by itself.
    #[cfg(feature = "tasks")]
    Task(tasks::TaskRequest<'a>),
    /// The skills extension's requests (`skills/list`, `skills/get`,
    /// `resources/directory/read`).
    #[cfg(feature = "skills")]
    Skills(skills::SkillsRequest<'a>),
}

impl Request<'_> {
    /// The method of the request.
    pub fn method(&self) -> Method {
        match self {
            Request::ListTools { .. } => Method::ToolsList,
            Request::CallTool { .. } => Method::ToolsCall,
            Request::ListPrompts { .. } => Method::PromptsList,
            Request::GetPrompt { .. } => Method::PromptsGet,
            Request::ListResources { .. } => Method::ResourcesList,
            Request::ListResourceTemplates { .. } => Method::TemplatesList,
            Request::ReadResource { .. } => Method::ResourcesRead,
            Request::Subscribe { .. } => Method::Subscribe,
            Request::Unsubscribe { .. } => Method::Unsubscribe,
            Request::Complete { .. } => Method::Complete,
            Request::Ping => Method::Ping,
            Request::SetLevel(_) => Method::SetLevel,
            Request::Listen { .. } => Method::Listen,
            #[cfg(feature = "tasks")]
            Request::Task(t) => t.method(),
            #[cfg(feature = "skills")]
            Request::Skills(r) => r.method(),
        }
    }

    /// What the request targets (a tool or prompt name, a URI; empty for the others).
    pub(super) fn target(&self) -> &str {
        match self {
            Request::CallTool { name, .. } | Request::GetPrompt { name, .. } => name,
            Request::ReadResource { uri }
            | Request::Subscribe { uri }
            | Request::Unsubscribe { uri } => uri,
            #[cfg(feature = "tasks")]
            Request::Task(t) => t.task_id(),
            _ => "",
        }
    }

    /// The raw JSON member written verbatim, if any (checked before anything is written).
    fn raw_member(&self) -> Option<&str> {
        match self {
            Request::CallTool { arguments, .. } | Request::GetPrompt { arguments, .. } => {
                *arguments
            }
            Request::Complete { context, .. } => *context,
            Request::Listen { notifications } => Some(notifications),
            #[cfg(feature = "tasks")]
            Request::Task(t) => t.input_responses(),
            _ => None,
        }
    }

    /// Writes the method's own params members (into an open object).
    fn write_members(&self, w: &mut JsonWriter<'_>) {
        match *self {
            Request::ListTools { cursor }
            | Request::ListPrompts { cursor }
            | Request::ListResources { cursor }
            | Request::ListResourceTemplates { cursor } => {
                if let Some(c) = cursor {
                    w.key("cursor");
                    w.string(c);
                }
            }
            Request::CallTool { name, arguments } | Request::GetPrompt { name, arguments } => {
                w.key("name");
                w.string(name);
                if let Some(a) = arguments {
                    w.key("arguments");
                    w.raw_value(a);
                }
            }
            Request::ReadResource { uri }
            | Request::Subscribe { uri }
            | Request::Unsubscribe { uri } => {
                w.key("uri");
                w.string(uri);
            }
            Request::Complete {
                reference,
                argument,
                value,
                context,
            } => {
                w.key("ref");
                w.begin_object();
                w.key("type");
                match reference {
                    Reference::Prompt(name) => {
                        w.string("ref/prompt");
                        w.key("name");
                        w.string(name);
                    }
                    Reference::Resource(uri) => {
                        w.string("ref/resource");
                        w.key("uri");
                        w.string(uri);
                    }
                }
                w.end_object();
                w.key("argument");
                w.begin_object();
                w.key("name");
                w.string(argument);
                w.key("value");
                w.string(value);
                w.end_object();
                if let Some(c) = context {
                    w.key("context");
                    w.begin_object();
                    w.key("arguments");
                    w.raw_value(c);
                    w.end_object();
                }
            }
            Request::SetLevel(level) => {
                w.key("level");
                w.string(level.as_str());
            }
            Request::Listen { notifications } => {
                w.key("notifications");
                w.raw_value(notifications);
            }
            Request::Ping => {}
            #[cfg(feature = "tasks")]
            Request::Task(t) => t.write_members(w),
            #[cfg(feature = "skills")]
            Request::Skills(r) => r.write_members(w),
        }
    }
}

/// Per-request options (the defaults: the config's timeout, no progress, no log level).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// How long to wait for the response, in milliseconds (`None`: the config's
    /// [`request_timeout_ms`](super::ClientConfig::request_timeout_ms)).
    pub timeout_ms: Option<u64>,
    /// Ask for `notifications/progress` (`_meta.progressToken`), reported as
    /// [`Event::Progress`](super::Event::Progress) with the request's handle.
    pub progress: bool,
    /// 2026-07-28: the log level of this request (`io.modelcontextprotocol/logLevel`);
    /// without it the server sends no log messages for it. Ignored in the legacy era
    /// (use [`Request::SetLevel`]).
    pub log_level: Option<LogLevel>,
    /// 2026-07-28: capabilities declared on this request on top of the config's
    /// ([`ClientConfig::capabilities`](super::ClientConfig::capabilities)), e.g.
    /// `ClientCaps::TASKS` so that a task-capable tool may answer with a task
    /// ([`Client::request_tools_call_as_task`](super::Client::request_tools_call_as_task)).
    /// Ignored in the legacy era (capabilities are the `initialize` ones there).
    pub capabilities: ClientCaps,
}

impl Options {
    /// With progress notifications.
    pub const fn with_progress(mut self) -> Self {
        self.progress = true;
        self
    }
    /// With a timeout of its own.
    pub const fn with_timeout(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }
}

/// What the retry of an `input_required` round adds to the request (see
/// [`Client::retry`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Answers<'a> {
    /// `inputResponses`: a JSON object of result objects, keyed like the round's
    /// `inputRequests`.
    pub input_responses: Option<&'a str>,
    /// `requestState`: the round's, echoed (its decoded text).
    pub request_state: Option<&'a str>,
}

impl<'a> Client<'a> {
    /// Sends `request` at `now_ms`: writes it into `out` and returns its handle and length.
    /// Its outcome arrives as one event naming the handle ([`Event::Result`],
    /// [`Event::Error`], [`Event::InputRequired`], [`Event::TimedOut`] or
    /// [`Event::Invalid`]).
    ///
    /// [`Event::Result`]: super::Event::Result
    /// [`Event::Error`]: super::Event::Error
    /// [`Event::InputRequired`]: super::Event::InputRequired
    /// [`Event::TimedOut`]: super::Event::TimedOut
    /// [`Event::Invalid`]: super::Event::Invalid
    pub fn send(
        &mut self,
        request: &Request<'_>,
        options: Options,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        self.advance(now_ms);
        let version = self.version().ok_or(ClientError::NotConnected)?;
        let method = request.method();
        let allowed = match method.eras() {
            Eras::Both => true,
            Eras::Legacy => !version.is_modern(),
            Eras::Modern => version.is_modern(),
        };
        if !allowed {
            return Err(ClientError::NotInRevision { method, version });
        }
        #[cfg(feature = "tasks")]
        self.check_tasks_offered(request, &options)?;
        let index = self.free_slot()?;
        self.write_and_track(index, request, options, version, Answers::default(), out)
    }

    /// Writes a request into slot `index` (a free one, or the request's own for a retry)
    /// and marks it pending. Nothing changes if it fails.
    pub(super) fn write_and_track(
        &mut self,
        index: usize,
        request: &Request<'_>,
        options: Options,
        version: ProtocolVersion,
        retry: Answers<'_>,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        let raw = [request.raw_member(), retry.input_responses];
        if raw
            .into_iter()
            .flatten()
            .any(|json| check_embedded(json, true).is_err())
        {
            return Err(ClientError::InvalidJson);
        }
        // A tasks request declares the extension by itself.
        #[cfg(feature = "tasks")]
        let options = match request {
            Request::Task(_) => Options {
                capabilities: options.capabilities.with(ClientCaps::TASKS),
                ..options
            },
            _ => options,
        };
        let declared = self.config.capabilities.with(options.capabilities);
        let id = self.next_id;
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_request(&mut w, u64::from(id), request.method().as_str());
        w.key("params");
        w.begin_object();
        request.write_members(&mut w);
        if let Some(r) = retry.input_responses {
            w.key("inputResponses");
            w.raw_value(r);
        }
        if let Some(s) = retry.request_state {
            w.key("requestState");
            w.string(s);
        }
        self.write_meta(&mut w, version, options.progress.then_some(id), options);
        w.end_object();
        jsonrpc::end_response(&mut w);
        let len = w.finish()?;
        let timeout = options.timeout_ms.unwrap_or(self.config.request_timeout_ms);
        let deadline = self.now_ms.saturating_add(timeout);
        let slot = self
            .slots
            .get_mut(index)
            .ok_or(ClientError::UnknownRequest)?;
        slot.state = SlotState::Pending;
        slot.id = id;
        slot.method = request.method();
        slot.deadline = deadline;
        slot.progress = options.progress;
        slot.tasks = version.is_modern() && declared.contains(ClientCaps::TASKS);
        slot.target = target_digest(request.method(), request.target());
        let handle = slot.handle(index);
        self.bump_id();
        Ok(Sent { handle, len })
    }

    /// The request `_meta`, if it has any member.
    pub(super) fn write_meta(
        &self,
        w: &mut JsonWriter<'_>,
        version: ProtocolVersion,
        progress: Option<u32>,
        options: Options,
    ) {
        let modern = version.is_modern();
        if !modern && progress.is_none() {
            return;
        }
        w.key("_meta");
        w.begin_object();
        if let Some(token) = progress {
            w.key("progressToken");
            w.u64(u64::from(token));
        }
        if modern {
            w.key(META_VERSION);
            w.string(version.as_str());
            w.key(META_CAPS);
            self.config.capabilities.with(options.capabilities).write(w);
            w.key(META_CLIENT_INFO);
            self.config.info.write(w, version);
            if let Some(level) = options.log_level {
                w.key(META_LOG_LEVEL);
                w.string(level.as_str());
            }
        }
        w.end_object();
    }

    /// Tells the server the client's roots changed (`notifications/roots/list_changed`,
    /// legacy era): writes it into `out`. Refused unless the client declared `roots`
    /// ([`ClientError::NotDeclared`]); in 2026-07-28, where the server asks for the roots
    /// with each request instead, [`ClientError::LegacyOnly`].
    pub fn roots_list_changed(&mut self, out: &mut [u8]) -> Result<Transmit, ClientError> {
        let version = self.version().ok_or(ClientError::NotConnected)?;
        if version.is_modern() {
            return Err(ClientError::LegacyOnly);
        }
        if !self
            .config
            .capabilities
            .contains(crate::model::common::ClientCaps::ROOTS)
        {
            return Err(ClientError::NotDeclared);
        }
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_notification(&mut w, Notification::RootsListChanged.as_str());
        w.begin_object();
        w.end_object();
        jsonrpc::end_response(&mut w);
        Ok(Transmit { len: w.finish()? })
    }

    /// Cancels a request the caller no longer wants: writes `notifications/cancelled` for it
    /// (`Ok(None)` when nothing is in flight at the server: a round waiting for input, or a
    /// request whose timeout is being reported) and forgets it, so a late response is
    /// reported as [`InvalidFrame::UnknownResponse`](super::InvalidFrame::UnknownResponse).
    pub fn cancel(
        &mut self,
        handle: RequestHandle,
        reason: Option<&str>,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, ClientError> {
        let slot = self.live_slot(handle)?;
        if matches!(slot.method, Method::Initialize | Method::Discover) {
            return Err(ClientError::CannotCancel);
        }
        match slot.state {
            SlotState::Pending => {
                let mut w = JsonWriter::new(out);
                jsonrpc::write_cancelled(&mut w, u64::from(slot.id), reason);
                let len = w.finish()?;
                slot.free();
                Ok(Some(Transmit { len }))
            }
            SlotState::AwaitingInput => {
                slot.free();
                Ok(None)
            }
            _ => Ok(None),
        }
    }
}
