//! Resources: static definitions, templates (RFC 6570 level 1, see [`crate::wire::uri_template`]),
//! the [`ResourceSet`] provider trait and the [`ReadResult`] builder.
//!
//! `resources/read` of a URI that is neither listed nor matches a template still reaches
//! [`ResourceSet::read`] (servers may have unlisted resources); a read that writes no
//! contents, or calls [`ReadResult::not_found`], is answered with the revision's
//! not-found error: -32002 with `data.uri` before 2026-07-28, -32602 with `data.uri` from
//! 2026-07-28 on. An empty `contents` is never sent.

use crate::model::common::{DefinitionError, Dispatch};
use crate::model::common::{Envelope, ResultType};
use crate::model::content::{write_icons, Annotations, Icon};
use crate::wire::json::{Checkpoint, JsonStr, JsonWriter};
use crate::wire::uri_template::UriTemplate;
use crate::wire::version::ProtocolVersion;

/// A listed resource.
#[derive(Clone, Copy, Debug, Default)]
pub struct Resource<'a> {
    /// The URI.
    pub uri: &'a str,
    /// Programmatic name.
    pub name: &'a str,
    /// Display title (2025-06-18+).
    pub title: Option<&'a str>,
    /// Description.
    pub description: Option<&'a str>,
    /// MIME type.
    pub mime_type: Option<&'a str>,
    /// Size in bytes, if known.
    pub size: Option<u64>,
    /// Annotations.
    pub annotations: Option<Annotations<'a>>,
    /// Icons (2025-11-25+).
    pub icons: &'a [Icon<'a>],
    /// `_meta` object (2025-06-18+), raw JSON.
    pub meta: Option<&'a str>,
}

/// A resource template (`uriTemplate`, RFC 6570 level 1).
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceTemplate<'a> {
    /// The template, e.g. `file:///logs/{date}`.
    pub uri_template: &'a str,
    /// Programmatic name.
    pub name: &'a str,
    /// Display title (2025-06-18+).
    pub title: Option<&'a str>,
    /// Description.
    pub description: Option<&'a str>,
    /// MIME type of the resources it names.
    pub mime_type: Option<&'a str>,
    /// Annotations.
    pub annotations: Option<Annotations<'a>>,
    /// Icons (2025-11-25+).
    pub icons: &'a [Icon<'a>],
    /// `_meta` object (2025-06-18+), raw JSON.
    pub meta: Option<&'a str>,
}

#[allow(clippy::too_many_arguments)]
fn write_common(
    w: &mut JsonWriter<'_>,
    version: ProtocolVersion,
    uri_key: &str,
    uri: &str,
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
    mime_type: Option<&str>,
) {
    w.begin_object();
    w.key(uri_key);
    w.string(uri);
    w.key("name");
    w.string(name);
    if let (true, Some(t)) = (version.features().titles_and_meta, title) {
        w.key("title");
        w.string(t);
    }
    if let Some(d) = description {
        w.key("description");
        w.string(d);
    }
    if let Some(m) = mime_type {
        w.key("mimeType");
        w.string(m);
    }
}

fn write_tail(
    w: &mut JsonWriter<'_>,
    version: ProtocolVersion,
    annotations: Option<&Annotations<'_>>,
    icons: &[Icon<'_>],
    meta: Option<&str>,
) {
    let f = version.features();
    if let Some(a) = annotations {
        w.key("annotations");
        crate::model::content::write_annotations(w, version, a);
    }
    if f.icons && !icons.is_empty() {
        w.key("icons");
        write_icons(w, icons);
    }
    if let (true, Some(m)) = (f.titles_and_meta, meta) {
        w.key("_meta");
        w.raw_value(m);
    }
    w.end_object();
}

impl<'a> Resource<'a> {
    /// A resource with a URI and a name; fill the rest with struct update syntax.
    pub const fn new(uri: &'a str, name: &'a str) -> Self {
        Resource {
            uri,
            name,
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: &[],
            meta: None,
        }
    }
    /// Checks that the URI and name are non-empty and `_meta` is a JSON object.
    pub fn validate(&self) -> Result<(), DefinitionError> {
        if self.uri.is_empty() || self.name.is_empty() {
            return Err(DefinitionError::Name);
        }
        crate::model::common::check_meta(self.meta)
    }
    /// Writes the `Resource` object for `version`.
    pub fn write(&self, w: &mut JsonWriter<'_>, version: ProtocolVersion) {
        write_common(
            w,
            version,
            "uri",
            self.uri,
            self.name,
            self.title,
            self.description,
            self.mime_type,
        );
        if let Some(s) = self.size {
            w.key("size");
            w.u64(s);
        }
        write_tail(w, version, self.annotations.as_ref(), self.icons, self.meta);
    }
}

impl<'a> ResourceTemplate<'a> {
    /// A template with a URI template and a name.
    pub const fn new(uri_template: &'a str, name: &'a str) -> Self {
        ResourceTemplate {
            uri_template,
            name,
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: &[],
            meta: None,
        }
    }
    /// The parsed template.
    pub fn template(&self) -> UriTemplate<'a> {
        UriTemplate::new(self.uri_template)
    }
    /// Checks the template (RFC 6570 level 1), the name and `_meta`.
    pub fn validate(&self) -> Result<(), DefinitionError> {
        if self.template().validate().is_err() {
            return Err(DefinitionError::UriTemplate);
        }
        if self.name.is_empty() {
            return Err(DefinitionError::Name);
        }
        crate::model::common::check_meta(self.meta)
    }
    /// Writes the `ResourceTemplate` object for `version`.
    pub fn write(&self, w: &mut JsonWriter<'_>, version: ProtocolVersion) {
        write_common(
            w,
            version,
            "uriTemplate",
            self.uri_template,
            self.name,
            self.title,
            self.description,
            self.mime_type,
        );
        write_tail(w, version, self.annotations.as_ref(), self.icons, self.meta);
    }
}

/// The resources a server offers, in a stable order, and the synchronous way to read them.
pub trait ResourceSet {
    /// Number of listed resources.
    fn len(&self) -> usize;
    /// Whether none are listed.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The listed resource at `index`.
    fn get(&self, index: usize) -> Option<Resource<'_>>;
    /// Number of templates.
    fn templates_len(&self) -> usize {
        0
    }
    /// The template at `index`.
    fn template(&self, index: usize) -> Option<ResourceTemplate<'_>> {
        let _ = index;
        None
    }
    /// Whether `resources/subscribe` is offered (legacy sessions).
    fn subscribable(&self) -> bool {
        false
    }
    /// `resources/subscribe` (`subscribe: true`) or `resources/unsubscribe`. Return
    /// `false` for a URI that does not exist (answered with the not-found error). The
    /// application keeps the subscriptions and calls
    /// [`Session::resource_updated`](crate::Session::resource_updated) when one changes.
    fn subscribe(&mut self, uri: JsonStr<'_>, subscribe: bool) -> bool {
        let _ = (uri, subscribe);
        true
    }
    /// Reads a resource now (write contents, return [`Dispatch::Done`]) or later
    /// ([`Dispatch::Defer`], the default).
    fn read(&mut self, request: &ReadRequest<'_>, result: &mut ReadResult<'_, '_>) -> Dispatch {
        let _ = (request, result);
        Dispatch::Defer
    }
}

/// A `resources/read` request. Borrowed from the incoming message.
#[derive(Clone, Copy, Debug)]
pub struct ReadRequest<'i> {
    pub(crate) data: Option<crate::model::common::AdapterData<'i>>,
    pub(crate) uri: JsonStr<'i>,
    pub(crate) resource: Option<usize>,
    pub(crate) template: Option<usize>,
    pub(crate) version: ProtocolVersion,
    pub(crate) caps: crate::model::common::ClientCaps,
    #[cfg(feature = "input-required")]
    pub(crate) input: crate::model::input::InputContext<'i>,
}

impl<'i> ReadRequest<'i> {
    /// What the adapter attached to the message (see
    /// [`Session::handle_with`](crate::Session::handle_with)), as a `T`: the authenticated
    /// principal of an HTTP request, for instance. `None` when nothing was attached or it
    /// is not a `T`.
    pub fn adapter_data<T: core::any::Any>(&self) -> Option<&'i T> {
        crate::model::common::downcast(self.data)
    }
    /// The URI as sent (see [`JsonStr::text_in`] to decode escapes).
    pub fn uri(&self) -> JsonStr<'i> {
        self.uri
    }
    /// Index of the listed resource with this URI, if any.
    pub fn resource_index(&self) -> Option<usize> {
        self.resource
    }
    /// Index of the first template that matches the URI, if no listed resource did.
    pub fn template_index(&self) -> Option<usize> {
        self.template
    }
    /// The protocol revision the request is served under.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }
    /// The client capabilities in force for this request.
    pub fn client_caps(&self) -> crate::model::common::ClientCaps {
        self.caps
    }
    /// The `inputResponses` and verified `requestState` of a 2026-07-28 retry.
    #[cfg(feature = "input-required")]
    pub fn input(&self) -> &crate::model::input::InputContext<'i> {
        &self.input
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadState {
    Contents,
    NotFound,
    /// [`ReadResult::fail`].
    Failed,
    #[cfg_attr(not(feature = "input-required"), allow(dead_code))]
    InputRequired,
    Misused,
}

/// Writes a `ReadResourceResult`: `{"contents":[...]}`, streamed as contents are added.
pub struct ReadResult<'w, 'b> {
    w: &'w mut JsonWriter<'b>,
    env: &'w Envelope<'w>,
    #[cfg_attr(not(feature = "input-required"), allow(dead_code))]
    start: Checkpoint,
    count: usize,
    state: ReadState,
}

impl core::fmt::Debug for ReadResult<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReadResult")
            .field("count", &self.count)
            .finish()
    }
}

impl<'w, 'b> ReadResult<'w, 'b> {
    pub(crate) fn begin(w: &'w mut JsonWriter<'b>, env: &'w Envelope<'w>) -> Self {
        let start = w.checkpoint();
        w.begin_object();
        w.key("contents");
        w.begin_array();
        ReadResult {
            w,
            env,
            start,
            count: 0,
            state: ReadState::Contents,
        }
    }

    /// The revision this result is written for.
    pub fn version(&self) -> ProtocolVersion {
        self.env.version
    }

    fn item(&mut self, uri: &str, mime_type: Option<&str>, body: (&str, &str)) -> &mut Self {
        if self.state != ReadState::Contents {
            self.state = ReadState::Misused;
            return self;
        }
        let w = &mut *self.w;
        w.begin_object();
        w.key("uri");
        w.string(uri);
        if let Some(m) = mime_type {
            w.key("mimeType");
            w.string(m);
        }
        w.key(body.0);
        w.string(body.1);
        w.end_object();
        self.count += 1;
        self
    }

    /// Adds text contents.
    pub fn text(&mut self, uri: &str, mime_type: Option<&str>, text: &str) -> &mut Self {
        self.item(uri, mime_type, ("text", text))
    }
    /// Adds binary contents (`blob`: base64).
    pub fn blob(&mut self, uri: &str, mime_type: Option<&str>, blob: &str) -> &mut Self {
        self.item(uri, mime_type, ("blob", blob))
    }
    /// The resource does not exist: the session answers with the revision's not-found
    /// error instead (anything written is discarded).
    pub fn not_found(&mut self) {
        self.state = ReadState::NotFound;
    }

    /// Answers with `input_required` (2026-07-28; see
    /// [`ToolResult::input_required`](crate::ToolResult::input_required)).
    #[cfg(feature = "input-required")]
    pub fn input_required(
        &mut self,
        state: Option<&str>,
        mut requests: impl FnMut(&mut crate::model::input::InputRequests<'_, '_>),
    ) {
        if self.state != ReadState::Contents || self.count > 0 {
            self.state = ReadState::Misused;
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
            Ok(()) => self.state = ReadState::InputRequired,
            Err(_) => self.state = ReadState::Misused,
        }
    }

    /// How the read ended: `Ok(())` written, or what the session must answer instead.
    pub(crate) fn finish(self) -> Result<(), ReadOutcome> {
        match self.state {
            ReadState::Misused => Err(ReadOutcome::Misused),
            ReadState::NotFound => Err(ReadOutcome::NotFound),
            ReadState::Failed => Err(ReadOutcome::Failed),
            ReadState::Contents if self.count == 0 => Err(ReadOutcome::NotFound),
            ReadState::Contents => {
                self.w.end_array();
                self.env.trailer(self.w, ResultType::Complete);
                self.w.end_object();
                Ok(())
            }
            ReadState::InputRequired => {
                self.env.trailer(self.w, ResultType::InputRequired);
                self.w.end_object();
                Ok(())
            }
        }
    }
}

/// Why a read produced no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    NotFound,
    Misused,
    Failed,
}

/// Static resource definitions with every read deferred.
impl ResourceSet for [Resource<'_>] {
    fn len(&self) -> usize {
        <[Resource<'_>]>::len(self)
    }
    fn get(&self, index: usize) -> Option<Resource<'_>> {
        <[Resource<'_>]>::get(self, index).copied()
    }
}

impl ReadResult<'_, '_> {
    /// The read failed (the resource exists): the session answers -32603 `Resource read
    /// failed` instead (anything written is discarded).
    pub fn fail(&mut self) {
        self.state = ReadState::Failed;
    }
}
