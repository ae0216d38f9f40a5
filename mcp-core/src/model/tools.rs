//! Tool definitions (static data), the [`ToolSet`] trait, and the [`ToolResult`] builder.
//!
//! Schemas and `_meta` are raw JSON text emitted byte-for-byte, so JSON Schema 2020-12
//! keywords (`$defs`, `allOf`, `if`/`then`/`else`, ...) survive untouched.

use core::fmt;

use crate::model::common::{
    check_meta, ClientCaps, DefinitionError, Dispatch, Envelope, ResultType,
};
use crate::model::content::{Annotations, Content, Icon, ResourceLink};
use crate::wire::json::{Checkpoint, JsonStr, JsonWriter, RawJson, StrPart};
use crate::wire::version::ProtocolVersion;

/// Behaviour hints (2025-03-26+). `None` leaves a hint out (clients then assume the spec
/// default: not read-only, destructive, not idempotent, open world).
#[derive(Clone, Copy, Debug, Default)]
pub struct ToolAnnotations<'a> {
    /// A display title.
    pub title: Option<&'a str>,
    /// The tool does not modify its environment.
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no additional effect.
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    pub open_world_hint: Option<bool>,
}

/// A tool definition. All JSON fields are raw text, validated when listed.
#[derive(Clone, Copy, Debug)]
pub struct Tool<'a> {
    /// Unique name: 1-64 characters of `[A-Za-z0-9_.-/]` keeps every client happy.
    pub name: &'a str,
    /// Display name (2025-06-18+).
    pub title: Option<&'a str>,
    /// What the tool does, for the model.
    pub description: Option<&'a str>,
    /// JSON Schema (an object schema) of the arguments, raw JSON.
    pub input_schema: &'a str,
    /// JSON Schema of `structuredContent` (2025-06-18+), raw JSON.
    pub output_schema: Option<&'a str>,
    /// Behaviour hints (2025-03-26+).
    pub annotations: Option<ToolAnnotations<'a>>,
    /// Icons (2025-11-25+).
    pub icons: &'a [Icon<'a>],
    /// `_meta` object (2025-06-18+), raw JSON.
    pub meta: Option<&'a str>,
    /// Client capabilities required to call it.
    pub requires: ClientCaps,
}

impl<'a> Tool<'a> {
    /// A tool with only a name and an input schema; fill the rest with struct update syntax.
    pub const fn new(name: &'a str, input_schema: &'a str) -> Tool<'a> {
        Tool {
            name,
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            icons: &[],
            meta: None,
            requires: ClientCaps::NONE,
        }
    }

    /// Checks the name rules and that every raw JSON field is valid JSON of the right kind.
    pub fn validate(&self) -> Result<(), DefinitionError> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
        if !name_ok {
            return Err(DefinitionError::Name);
        }
        let embed = |s: &str, object: bool, invalid: DefinitionError| {
            crate::wire::json::check_embedded(s, object).map_err(|e| match e {
                crate::wire::json::EmbedError::LineBreak => DefinitionError::LineBreak,
                _ => invalid,
            })
        };
        embed(self.input_schema, true, DefinitionError::InputSchema)?;
        if let Some(s) = self.output_schema {
            embed(s, false, DefinitionError::OutputSchema)?;
        }
        check_meta(self.meta)?;
        Ok(())
    }

    /// Writes the `Tool` object for `version`, leaving out fields that revision lacks.
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
        w.key("inputSchema");
        w.raw_value(self.input_schema);
        if let (true, Some(s)) = (f.structured_content, self.output_schema) {
            w.key("outputSchema");
            w.raw_value(s);
        }
        if let (true, Some(a)) = (f.tool_annotations, self.annotations) {
            w.key("annotations");
            w.begin_object();
            if let Some(t) = a.title {
                w.key("title");
                w.string(t);
            }
            let hints = [
                ("readOnlyHint", a.read_only_hint),
                ("destructiveHint", a.destructive_hint),
                ("idempotentHint", a.idempotent_hint),
                ("openWorldHint", a.open_world_hint),
            ];
            for (k, v) in hints {
                if let Some(v) = v {
                    w.key(k);
                    w.bool(v);
                }
            }
            w.end_object();
        }
        if f.icons && !self.icons.is_empty() {
            w.key("icons");
            crate::model::content::write_icons(w, self.icons);
        }
        if let (true, Some(m)) = (f.titles_and_meta, self.meta) {
            w.key("_meta");
            w.raw_value(m);
        }
        w.end_object();
    }
}

/// A `tools/call` request as a handler sees it. Borrowed from the incoming message.
#[derive(Clone, Copy, Debug)]
pub struct CallRequest<'i> {
    pub(crate) data: Option<crate::model::common::AdapterData<'i>>,
    pub(crate) tool: usize,
    pub(crate) name: JsonStr<'i>,
    pub(crate) args: RawJson<'i>,
    pub(crate) version: ProtocolVersion,
    pub(crate) has_progress: bool,
    pub(crate) caps: ClientCaps,
    #[cfg(feature = "input-required")]
    pub(crate) input: crate::model::input::InputContext<'i>,
    #[cfg(feature = "tasks")]
    pub(crate) task: Option<crate::model::tasks::TaskId>,
}

impl<'i> CallRequest<'i> {
    /// What the adapter attached to the message (see
    /// [`Session::handle_with`](crate::Session::handle_with)), as a `T`: the authenticated
    /// principal of an HTTP request, for instance. `None` when nothing was attached or it
    /// is not a `T`.
    pub fn adapter_data<T: core::any::Any>(&self) -> Option<&'i T> {
        crate::model::common::downcast(self.data)
    }
    /// Index of the tool in the [`ToolSet`].
    pub fn tool_index(&self) -> usize {
        self.tool
    }
    /// The tool name as sent.
    pub fn name(&self) -> JsonStr<'i> {
        self.name
    }
    /// The arguments object (`{}` when the request had none).
    pub fn args(&self) -> RawJson<'i> {
        self.args
    }
    /// The protocol revision the request is served under.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }
    /// Whether the client asked for progress (`_meta.progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.has_progress
    }
    /// The client capabilities in force for this request (declared at `initialize`, or in
    /// this request's `_meta` in 2026-07-28).
    pub fn client_caps(&self) -> ClientCaps {
        self.caps
    }
    /// The task this call runs as (tasks extension): the session has answered the client
    /// with its `CreateTaskResult`; a deferred call reports its outcome to the task table
    /// ([`TaskStore::complete`](crate::model::tasks::TaskStore::complete)) instead of
    /// answering the request. A call the tool answers at once ([`Dispatch::Done`]) becomes
    /// the task's result without the tool doing anything.
    #[cfg(feature = "tasks")]
    pub fn task(&self) -> Option<&crate::model::tasks::TaskId> {
        self.task.as_ref()
    }
    /// The `inputResponses` and verified `requestState` of a 2026-07-28 retry.
    #[cfg(feature = "input-required")]
    pub fn input(&self) -> &crate::model::input::InputContext<'i> {
        &self.input
    }
    /// Deserializes the arguments into `T` (see [`json::from_json`](crate::wire::json::from_json)
    /// for how `scratch` is used).
    #[cfg(feature = "serde")]
    #[allow(clippy::result_large_err)] // `DeError` carries its message inline: no allocation.
    pub fn parse_args<T: serde::Deserialize<'i>>(
        &self,
        scratch: &mut [u8],
    ) -> Result<T, crate::wire::json::DeError> {
        crate::wire::json::from_json(self.args, scratch)
    }
}

/// The tools a server offers, in a stable order, and the synchronous way to run them.
pub trait ToolSet {
    /// Number of tools.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The definition at `index`.
    fn get(&self, index: usize) -> Option<Tool<'_>>;
    /// Index of the tool called `name` (default: linear search).
    fn find(&self, name: JsonStr<'_>) -> Option<usize> {
        (0..self.len()).find(|&i| self.get(i).is_some_and(|t| name.eq_str(t.name)))
    }
    /// Runs a call now (write the result, return [`Dispatch::Done`]) or defers it
    /// (the default: every call is handed out as a [`Call`](crate::Call)).
    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        let _ = (request, result);
        Dispatch::Defer
    }
    /// Whether the tool at `index` runs as a task (tasks extension; default: never).
    #[cfg(feature = "tasks")]
    fn task_support(&self, index: usize) -> crate::model::tasks::TaskSupport {
        let _ = index;
        crate::model::tasks::TaskSupport::Forbidden
    }
}

/// Static definitions with every call deferred.
impl ToolSet for [Tool<'_>] {
    fn len(&self) -> usize {
        <[Tool<'_>]>::len(self)
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        <[Tool<'_>]>::get(self, index).copied()
    }
}

/// Writes a `CallToolResult` for the revision of the call being answered. Content blocks are
/// streamed into the output as they are added; [`structured_raw`](Self::structured_raw) /
/// [`structured_with`](Self::structured_with) end the content list.
///
/// Running out of output space is not an error here: the session notices and answers with
/// an error that states the size required.
pub struct ToolResult<'w, 'b> {
    pub(crate) w: &'w mut JsonWriter<'b>,
    version: ProtocolVersion,
    state: ResultState,
    is_error: bool,
    env: &'w Envelope<'w>,
    #[cfg_attr(not(feature = "input-required"), allow(dead_code))]
    start: Checkpoint,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ResultState {
    Content,
    /// An `input_required` result was written (2026-07-28).
    #[cfg_attr(not(feature = "input-required"), allow(dead_code))]
    InputRequired,
    Closed,
    Misused,
}

/// Why [`ToolResult::render_task`] rendered no result.
#[cfg(feature = "tasks")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderError {
    /// The buffer is too small: the result needs `needed` bytes.
    TooSmall {
        /// Bytes the whole result needs.
        needed: usize,
    },
    /// The tool used the builder out of order, or answered `input_required`.
    Misused,
}

#[cfg(feature = "tasks")]
impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::TooSmall { needed } => write!(f, "result needs {needed} bytes"),
            RenderError::Misused => f.write_str("tool handler misused the result builder"),
        }
    }
}

impl fmt::Debug for ToolResult<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolResult")
            .field("version", &self.version)
            .field("state", &self.state)
            .finish()
    }
}

impl<'w, 'b> ToolResult<'w, 'b> {
    /// Opens `{"content":[` in `w`; `env` writes the revision's trailing members.
    pub(crate) fn begin(w: &'w mut JsonWriter<'b>, env: &'w Envelope<'w>) -> Self {
        let start = w.checkpoint();
        w.begin_object();
        w.key("content");
        w.begin_array();
        ToolResult {
            w,
            version: env.version,
            state: ResultState::Content,
            is_error: false,
            env,
            start,
        }
    }

    /// Answers with `resultType: "input_required"` instead of content (2026-07-28 only):
    /// `requests` adds the `inputRequests` (only those whose client capability the request
    /// declared are written) and `state`, if given, is sealed into `requestState` (see
    /// [`crate::model::input`]; printable ASCII without `"\\<>&'+/=` and backtick, at most
    /// [`crate::token::seal::MAX_PAYLOAD`] bytes). Must be the only thing the handler writes.
    /// Misuse (content already written, a legacy session, an unsealable state, or neither
    /// requests nor state) makes the session answer with an internal error.
    #[cfg(feature = "input-required")]
    pub fn input_required(
        &mut self,
        state: Option<&str>,
        mut requests: impl FnMut(&mut crate::model::input::InputRequests<'_, '_>),
    ) {
        let fresh = self.state == ResultState::Content
            && !self.is_error
            && self.w.len() == self.start.len() + b"{\"content\":[".len();
        if !fresh {
            self.state = ResultState::Misused;
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
            Ok(()) => self.state = ResultState::InputRequired,
            Err(_) => self.state = ResultState::Misused,
        }
    }

    /// The revision this result is written for.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// Marks the result as a tool execution error (`isError: true`).
    pub fn error(&mut self) -> &mut Self {
        self.is_error = true;
        self
    }

    /// Adds a text block.
    pub fn text(&mut self, text: &str) -> &mut Self {
        self.push(&Content::Text(text), None, None)
    }

    /// Adds a text block from format arguments (no allocation).
    pub fn text_fmt(&mut self, args: fmt::Arguments<'_>) -> &mut Self {
        if self.open() {
            self.w.begin_object();
            self.w.key("type");
            self.w.string("text");
            self.w.key("text");
            self.w.string_fmt(args);
            self.w.end_object();
        }
        self
    }

    /// Adds a text block assembled from parts, without `core::fmt` (small firmware).
    pub fn text_parts(&mut self, parts: &[StrPart<'_>]) -> &mut Self {
        if self.open() {
            self.w.begin_object();
            self.w.key("type");
            self.w.string("text");
            self.w.key("text");
            self.w.string_parts(parts);
            self.w.end_object();
        }
        self
    }

    /// Adds an `isError` text block: the usual way to report a tool failure to the model.
    pub fn fail(&mut self, args: fmt::Arguments<'_>) -> &mut Self {
        self.error().text_fmt(args)
    }

    /// Adds an image block.
    pub fn image(&mut self, data: &str, mime_type: &str) -> &mut Self {
        self.push(&Content::Image { data, mime_type }, None, None)
    }

    /// Adds an audio block.
    pub fn audio(&mut self, data: &str, mime_type: &str) -> &mut Self {
        self.push(&Content::Audio { data, mime_type }, None, None)
    }

    /// Adds a resource link block.
    pub fn resource_link(&mut self, link: &ResourceLink<'_>) -> &mut Self {
        self.push(&Content::ResourceLink(*link), None, None)
    }

    /// Adds an embedded text resource.
    pub fn embedded_text(&mut self, uri: &str, mime_type: Option<&str>, text: &str) -> &mut Self {
        self.push(
            &Content::EmbeddedText {
                uri,
                mime_type,
                text,
            },
            None,
            None,
        )
    }

    /// Adds an embedded binary resource.
    pub fn embedded_blob(&mut self, uri: &str, mime_type: Option<&str>, blob: &str) -> &mut Self {
        self.push(
            &Content::EmbeddedBlob {
                uri,
                mime_type,
                blob,
            },
            None,
            None,
        )
    }

    pub(crate) fn open(&mut self) -> bool {
        match self.state {
            ResultState::Content => true,
            _ => {
                self.state = ResultState::Misused;
                false
            }
        }
    }

    /// Adds any content block, with optional annotations and raw `_meta` object. Blocks the
    /// revision lacks are downgraded to a text block (audio before 2025-03-26, resource
    /// links before 2025-06-18); fields it lacks are left out.
    pub fn push(
        &mut self,
        content: &Content<'_>,
        annotations: Option<&Annotations<'_>>,
        meta: Option<&str>,
    ) -> &mut Self {
        if meta.is_some_and(|m| crate::wire::json::check_embedded(m, true).is_err()) {
            self.state = ResultState::Misused;
        }
        if !self.open() {
            return self;
        }
        crate::model::content::write_content(self.w, self.version, content, annotations, meta);
        self
    }

    /// Ends the content list with a text block holding `json` and sets `structuredContent`
    /// to `json` (2025-06-18+; earlier revisions only get the text block, as the spec
    /// suggests for older clients); before 2026-07-28 it must be an object. `json` must be valid JSON (checked; invalid JSON marks
    /// the result as misused and the session answers with an internal error).
    pub fn structured_raw(&mut self, json: &str) {
        if crate::wire::json::check_embedded(json, false).is_err() {
            self.state = ResultState::Misused;
            return;
        }
        self.structured_with(|w| w.raw_value(json));
    }

    /// Like [`structured_raw`](Self::structured_raw), but `write` produces the JSON value; it
    /// is called twice (once escaped into the text block, once as `structuredContent`).
    pub fn structured_with(&mut self, write: impl Fn(&mut JsonWriter<'_>)) {
        self.structured_dyn(&write);
    }

    /// The body of [`structured_with`](Self::structured_with), not generic so that it is
    /// not copied into every tool that uses it (code size on microcontrollers).
    #[inline(never)]
    pub(crate) fn structured_dyn(&mut self, write: &dyn Fn(&mut JsonWriter<'_>)) {
        if !self.open() {
            return;
        }
        let w = &mut *self.w;
        w.begin_object();
        w.key("type");
        w.string("text");
        w.key("text");
        // The structural state after `"` + value + `"` is that of one string value.
        w.raw("\"");
        w.set_string_mode(true);
        let from = w.len();
        write(w);
        let to = w.len();
        w.set_string_mode(false);
        w.raw("\"");
        w.end_object();
        w.end_array();
        self.state = ResultState::Closed;
        if self.version.features().structured_content {
            w.key("structuredContent");
            let at = w.len();
            // The text block holds the same JSON escaped: copy it back rather than
            // rendering it again (feature `render-once`; flash-starved targets render twice).
            #[cfg(feature = "render-once")]
            let copied = w.value_unescaped_from(from, to);
            #[cfg(not(feature = "render-once"))]
            let copied = {
                let _ = (from, to);
                false
            };
            if !copied {
                write(w);
            }
            // Before 2026-07-28 `structuredContent` must be an object.
            let object = w.written().get(at) == Some(&b'{') || w.overflowed();
            if !object && !self.version.is_modern() {
                self.state = ResultState::Misused;
            }
        }
    }

    /// Whether the handler answered with an `input_required` result.
    #[cfg(feature = "tasks")]
    pub(crate) fn is_input_required(&self) -> bool {
        self.state == ResultState::InputRequired
    }

    /// Whether the handler used the builder out of order (content after structured output,
    /// or invalid structured JSON).
    pub(crate) fn misused(&self) -> bool {
        self.state == ResultState::Misused
    }

    /// Renders a tool's result as a task keeps it (tasks extension): `write` fills a builder
    /// over `out` and the `CallToolResult` object is closed without the revision's trailer
    /// (`resultType`, `_meta`), exactly as the session stores a result written inline, so a
    /// task's result and a direct reply from the same `write` differ only in that trailer.
    /// An async runtime renders a detached tool's answer with it and hands the text to
    /// [`TaskStore::complete`](crate::model::tasks::TaskStore::complete).
    ///
    /// # Errors
    /// [`RenderError::TooSmall`] with the bytes it needs (render again into that many);
    /// [`RenderError::Misused`] when `write` used the builder out of order or answered
    /// `input_required` (a task asks for input through its table instead).
    #[cfg(feature = "tasks")]
    pub fn render_task(
        out: &mut [u8],
        version: ProtocolVersion,
        write: impl FnOnce(&mut ToolResult<'_, '_>),
    ) -> Result<&str, RenderError> {
        let info = crate::model::common::ServerInfo::default();
        let env = Envelope::new(version, &info);
        let mut w = JsonWriter::new(&mut *out);
        let mut result = ToolResult::begin(&mut w, &env);
        write(&mut result);
        if result.misused() || result.is_input_required() {
            return Err(RenderError::Misused);
        }
        result.finish_bare();
        let n = w
            .finish()
            .map_err(|e| RenderError::TooSmall { needed: e.required })?;
        // The writer escapes every string it writes: its output is UTF-8.
        core::str::from_utf8(out.get(..n).unwrap_or_default()).map_err(|_| RenderError::Misused)
    }

    /// Closes the result object without the revision's trailer (`resultType`, `_meta`):
    /// a task's stored result, inlined later by `tasks/get`.
    #[cfg(feature = "tasks")]
    pub(crate) fn finish_bare(self) {
        if self.state == ResultState::Content {
            self.w.end_array();
        }
        if self.is_error {
            self.w.key("isError");
            self.w.bool(true);
        }
        self.w.end_object();
    }

    /// Closes the result object.
    pub(crate) fn finish(self) {
        let w = self.w;
        if self.state == ResultState::InputRequired {
            self.env.trailer(w, ResultType::InputRequired);
            w.end_object();
            return;
        }
        if self.state == ResultState::Content {
            w.end_array();
        }
        if self.is_error {
            w.key("isError");
            w.bool(true);
        }
        self.env.trailer(w, ResultType::Complete);
        w.end_object();
    }
}

#[cfg(all(test, feature = "tasks"))]
mod render_tests {
    use super::{RenderError, ToolResult};
    use crate::wire::version::ProtocolVersion;

    const WANT: &str = r#"{"content":[{"type":"text","text":"a \"b\""}],"isError":true}"#;

    fn write(r: &mut ToolResult<'_, '_>) {
        r.error();
        r.text("a \"b\"");
    }

    #[test]
    fn render_task_says_what_it_needs_then_fits_exactly() {
        let v = ProtocolVersion::V2026_07_28;
        let mut small = [0u8; 8];
        let err = ToolResult::render_task(&mut small, v, write).unwrap_err();
        assert_eq!(err, RenderError::TooSmall { needed: WANT.len() });
        let mut exact = [0u8; WANT.len()];
        assert_eq!(ToolResult::render_task(&mut exact, v, write), Ok(WANT));
    }

    #[test]
    fn render_task_refuses_a_misused_builder() {
        let mut buf = [0u8; 256];
        let v = ProtocolVersion::V2026_07_28;
        let got = ToolResult::render_task(&mut buf, v, |r| {
            r.structured_raw("{\"a\":1}");
            r.text("after structured output");
        });
        assert_eq!(got, Err(RenderError::Misused));
    }
}
