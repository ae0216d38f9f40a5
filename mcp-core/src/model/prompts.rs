//! Prompts: definitions with declared arguments, the [`PromptSet`] provider trait and the
//! [`PromptResult`] builder.
//!
//! The session checks `prompts/get` against the definition before the handler runs: an
//! unknown prompt, a missing required argument or a non-string argument value is -32602.

use crate::model::common::{ClientCaps, DefinitionError, Dispatch};
use crate::model::common::{Envelope, ResultType};
use crate::model::content::{write_content, write_icons, Annotations, Content, Icon, Role};
use crate::wire::json::{Checkpoint, JsonStr, JsonWriter, RawJson};
use crate::wire::version::ProtocolVersion;

/// One declared argument of a prompt.
#[derive(Clone, Copy, Debug, Default)]
pub struct PromptArgument<'a> {
    /// The argument name.
    pub name: &'a str,
    /// Display title (2025-06-18+).
    pub title: Option<&'a str>,
    /// Description.
    pub description: Option<&'a str>,
    /// Whether `prompts/get` must carry it.
    pub required: bool,
}

impl<'a> PromptArgument<'a> {
    /// A required argument.
    pub const fn required(name: &'a str, description: &'a str) -> Self {
        PromptArgument {
            name,
            title: None,
            description: Some(description),
            required: true,
        }
    }
    /// An optional argument.
    pub const fn optional(name: &'a str, description: &'a str) -> Self {
        PromptArgument {
            name,
            title: None,
            description: Some(description),
            required: false,
        }
    }
}

/// A prompt definition.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prompt<'a> {
    /// Unique name.
    pub name: &'a str,
    /// Display title (2025-06-18+).
    pub title: Option<&'a str>,
    /// Description.
    pub description: Option<&'a str>,
    /// Declared arguments.
    pub arguments: &'a [PromptArgument<'a>],
    /// Icons (2025-11-25+).
    pub icons: &'a [Icon<'a>],
    /// `_meta` object (2025-06-18+), raw JSON.
    pub meta: Option<&'a str>,
    /// Client capabilities rendering needs (e.g. elicitation for a prompt that asks the
    /// user): a request without them is refused before the prompt runs (-32021 in
    /// 2026-07-28, -32602 before), as for [`Tool::requires`](crate::Tool::requires).
    pub requires: ClientCaps,
}

impl<'a> Prompt<'a> {
    /// A prompt with a name and a description.
    pub const fn new(name: &'a str, description: &'a str) -> Self {
        Prompt {
            name,
            title: None,
            description: Some(description),
            arguments: &[],
            icons: &[],
            meta: None,
            requires: ClientCaps::NONE,
        }
    }
    /// Checks the name and `_meta`.
    pub fn validate(&self) -> Result<(), DefinitionError> {
        if self.name.is_empty() || self.arguments.iter().any(|a| a.name.is_empty()) {
            return Err(DefinitionError::Name);
        }
        crate::model::common::check_meta(self.meta)
    }
    /// Writes the `Prompt` object for `version`.
    pub fn write(&self, w: &mut JsonWriter<'_>, version: ProtocolVersion) {
        let f = version.features();
        w.begin_object();
        w.key("name");
        w.string(self.name);
        if let (true, Some(t)) = (f.titles_and_meta, self.title) {
            w.key("title");
            w.string(t);
        }
        if let Some(d) = self.description {
            w.key("description");
            w.string(d);
        }
        if !self.arguments.is_empty() {
            w.key("arguments");
            w.begin_array();
            for a in self.arguments {
                w.begin_object();
                w.key("name");
                w.string(a.name);
                if let (true, Some(t)) = (f.titles_and_meta, a.title) {
                    w.key("title");
                    w.string(t);
                }
                if let Some(d) = a.description {
                    w.key("description");
                    w.string(d);
                }
                if a.required {
                    w.key("required");
                    w.bool(true);
                }
                w.end_object();
            }
            w.end_array();
        }
        if f.icons && !self.icons.is_empty() {
            w.key("icons");
            write_icons(w, self.icons);
        }
        if let (true, Some(m)) = (f.titles_and_meta, self.meta) {
            w.key("_meta");
            w.raw_value(m);
        }
        w.end_object();
    }
}

/// The prompts a server offers, in a stable order, and the synchronous way to render them.
pub trait PromptSet {
    /// Number of prompts.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The definition at `index`.
    fn get(&self, index: usize) -> Option<Prompt<'_>>;
    /// Index of the prompt called `name` (default: linear search).
    fn find(&self, name: JsonStr<'_>) -> Option<usize> {
        (0..self.len()).find(|&i| self.get(i).is_some_and(|p| name.eq_str(p.name)))
    }
    /// Renders a prompt now ([`Dispatch::Done`]) or later ([`Dispatch::Defer`], the
    /// default).
    fn get_prompt(
        &mut self,
        request: &GetPromptRequest<'_>,
        result: &mut PromptResult<'_, '_>,
    ) -> Dispatch {
        let _ = (request, result);
        Dispatch::Defer
    }
}

/// Static definitions with every `prompts/get` deferred.
impl PromptSet for [Prompt<'_>] {
    fn len(&self) -> usize {
        <[Prompt<'_>]>::len(self)
    }
    fn get(&self, index: usize) -> Option<Prompt<'_>> {
        <[Prompt<'_>]>::get(self, index).copied()
    }
}

/// A `prompts/get` request, already checked against the prompt's declared arguments.
#[derive(Clone, Copy, Debug)]
pub struct GetPromptRequest<'i> {
    pub(crate) data: Option<crate::model::common::AdapterData<'i>>,
    pub(crate) index: usize,
    pub(crate) name: JsonStr<'i>,
    pub(crate) arguments: RawJson<'i>,
    pub(crate) version: ProtocolVersion,
    pub(crate) caps: ClientCaps,
    #[cfg(feature = "input-required")]
    pub(crate) input: crate::model::input::InputContext<'i>,
}

impl<'i> GetPromptRequest<'i> {
    /// What the adapter attached to the message (see
    /// [`Session::handle_with`](crate::Session::handle_with)), as a `T`: the authenticated
    /// principal of an HTTP request, for instance. `None` when nothing was attached or it
    /// is not a `T`.
    pub fn adapter_data<T: core::any::Any>(&self) -> Option<&'i T> {
        crate::model::common::downcast(self.data)
    }
    /// Index of the prompt in the [`PromptSet`].
    pub fn prompt_index(&self) -> usize {
        self.index
    }
    /// The prompt name as sent.
    pub fn name(&self) -> JsonStr<'i> {
        self.name
    }
    /// The arguments object (`{}` when absent); every value is a string.
    pub fn arguments(&self) -> RawJson<'i> {
        self.arguments
    }
    /// One argument's value.
    pub fn argument(&self, name: &str) -> Option<JsonStr<'i>> {
        self.arguments.get(name).and_then(|v| v.as_string())
    }
    /// The protocol revision the request is served under.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }
    /// The client capabilities in force for this request.
    pub fn client_caps(&self) -> ClientCaps {
        self.caps
    }
    /// The `inputResponses` and verified `requestState` of a 2026-07-28 retry.
    #[cfg(feature = "input-required")]
    pub fn input(&self) -> &crate::model::input::InputContext<'i> {
        &self.input
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PromptState {
    /// Nothing written after `{`.
    Open,
    /// Inside `"messages":[`.
    Messages,
    #[cfg_attr(not(feature = "input-required"), allow(dead_code))]
    InputRequired,
    Misused,
    /// [`PromptResult::invalid_arguments`] or [`PromptResult::fail`].
    Rejected(Rejection),
}

/// Writes a `GetPromptResult`: an optional description, then messages.
pub struct PromptResult<'w, 'b> {
    w: &'w mut JsonWriter<'b>,
    env: &'w Envelope<'w>,
    #[cfg_attr(not(feature = "input-required"), allow(dead_code))]
    start: Checkpoint,
    state: PromptState,
}

impl core::fmt::Debug for PromptResult<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PromptResult")
            .field("state", &self.state)
            .finish()
    }
}

impl<'w, 'b> PromptResult<'w, 'b> {
    pub(crate) fn begin(w: &'w mut JsonWriter<'b>, env: &'w Envelope<'w>) -> Self {
        let start = w.checkpoint();
        w.begin_object();
        PromptResult {
            w,
            env,
            start,
            state: PromptState::Open,
        }
    }

    /// The revision this result is written for.
    pub fn version(&self) -> ProtocolVersion {
        self.env.version
    }

    /// Sets the description; must come before any message.
    pub fn description(&mut self, text: &str) -> &mut Self {
        if self.state != PromptState::Open {
            self.state = PromptState::Misused;
            return self;
        }
        self.w.key("description");
        self.w.string(text);
        self
    }

    /// Adds a message with one content block (downgraded for older revisions as in tool
    /// results).
    pub fn message(&mut self, role: Role, content: &Content<'_>) -> &mut Self {
        self.message_with(role, content, None)
    }

    /// Adds a message whose content block carries annotations.
    pub fn message_with(
        &mut self,
        role: Role,
        content: &Content<'_>,
        annotations: Option<&Annotations<'_>>,
    ) -> &mut Self {
        match self.state {
            PromptState::Open => {
                self.w.key("messages");
                self.w.begin_array();
                self.state = PromptState::Messages;
            }
            PromptState::Messages => {}
            _ => {
                self.state = PromptState::Misused;
                return self;
            }
        }
        let w = &mut *self.w;
        w.begin_object();
        w.key("role");
        w.string(match role {
            Role::User => "user",
            Role::Assistant => "assistant",
        });
        w.key("content");
        write_content(w, self.env.version, content, annotations, None);
        w.end_object();
        self
    }

    /// Answers with `input_required` (2026-07-28; see
    /// [`ToolResult::input_required`](crate::ToolResult::input_required)).
    #[cfg(feature = "input-required")]
    pub fn input_required(
        &mut self,
        state: Option<&str>,
        mut requests: impl FnMut(&mut crate::model::input::InputRequests<'_, '_>),
    ) {
        if self.state != PromptState::Open {
            self.state = PromptState::Misused;
            return;
        }
        self.w.rewind(self.start);
        self.w.begin_object();
        match crate::model::input::write_input_required(
            self.w,
            self.env.seal.as_ref(),
            state,
            &mut requests,
        ) {
            Ok(()) => self.state = PromptState::InputRequired,
            Err(_) => self.state = PromptState::Misused,
        }
    }

    /// Closes the result, or says what the session must answer instead.
    pub(crate) fn finish(self) -> Result<(), PromptOutcome> {
        match self.state {
            PromptState::Misused => return Err(PromptOutcome::Misused),
            PromptState::Rejected(r) => return Err(PromptOutcome::Rejected(r)),
            PromptState::InputRequired => {
                self.env.trailer(self.w, ResultType::InputRequired);
            }
            PromptState::Open => {
                self.w.key("messages");
                self.w.begin_array();
                self.w.end_array();
                self.env.trailer(self.w, ResultType::Complete);
            }
            PromptState::Messages => {
                self.w.end_array();
                self.env.trailer(self.w, ResultType::Complete);
            }
        }
        self.w.end_object();
        Ok(())
    }
}

/// Why a rendering produced no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PromptOutcome {
    Misused,
    Rejected(Rejection),
}

/// An error reply a prompt asked for: code, message and up to 32 bytes of detail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rejection {
    pub(crate) code: i32,
    pub(crate) message: &'static str,
    detail: [u8; 32],
    len: u8,
}

impl Rejection {
    fn new(code: i32, message: &'static str) -> Self {
        Rejection {
            code,
            message,
            detail: [0; 32],
            len: 0,
        }
    }
    /// The detail text (empty: none).
    pub(crate) fn detail(&self) -> &str {
        let bytes = self.detail.get(..usize::from(self.len)).unwrap_or_default();
        core::str::from_utf8(bytes).unwrap_or_default()
    }
}

impl core::fmt::Write for Rejection {
    /// Appends what fits, whole characters only.
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for c in s.chars() {
            let at = usize::from(self.len);
            let mut utf8 = [0u8; 4];
            let bytes = c.encode_utf8(&mut utf8).as_bytes();
            match self.detail.get_mut(at..at + bytes.len()) {
                Some(dst) => dst.copy_from_slice(bytes),
                None => return Err(core::fmt::Error),
            }
            self.len += bytes.len() as u8;
        }
        Ok(())
    }
}

impl PromptResult<'_, '_> {
    /// Rejects the request's arguments with -32602: `message`, then `: ` and the
    /// argument's name when there is one (what
    /// [`invalid_arguments`](Self::invalid_arguments) writes). Anything written is discarded.
    pub(crate) fn reject_argument(
        &mut self,
        message: &'static str,
        name: &mut dyn Iterator<Item = char>,
    ) {
        use core::fmt::Write;
        let mut r = Rejection::new(crate::wire::jsonrpc::code::INVALID_PARAMS, message);
        for c in name {
            if r.write_char(c).is_err() {
                break;
            }
        }
        self.state = PromptState::Rejected(r);
    }

    /// The prompt failed: the session answers -32603 `Prompt failed: ...` with the first
    /// 32 bytes of `error`'s text. Anything written is discarded.
    pub fn fail(&mut self, error: &dyn core::fmt::Display) {
        let mut r = Rejection::new(crate::wire::jsonrpc::code::INTERNAL_ERROR, "Prompt failed");
        let _ = core::fmt::write(&mut r, format_args!("{error}"));
        self.state = PromptState::Rejected(r);
    }
}
