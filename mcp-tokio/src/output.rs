//! What handlers hand back, owned: content blocks, a tool's reply, a prompt's messages, a
//! resource's contents, completion values and the JSON-RPC error answer of a deferred
//! request. Each is written through mcp-core's result
//! builders. A leaf: nothing here depends on the rest of this crate.

use mcp_rs_core::model::completion::CompletionResult;
pub use mcp_rs_core::model::content::Role;
use mcp_rs_core::model::prompts::PromptResult;
use mcp_rs_core::model::resources::ReadResult;
use mcp_rs_core::wire::json::JsonWriter;
use mcp_rs_core::ToolResult;

/// One owned content block of a [`ToolReply`] or a [`PromptOutput`] message: every kind
/// mcp-core writes (see [`mcp_rs_core::model::content::Content`]), downgraded by the core for
/// revisions that lack it (audio before 2025-03-26, resource links before 2025-06-18).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text(String),
    /// Base64 image data and MIME type.
    Image {
        /// Base64 bytes.
        data: String,
        /// MIME type, e.g. `image/png`.
        mime_type: String,
    },
    /// Base64 audio data and MIME type.
    Audio {
        /// Base64 bytes.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// A link to a resource (`resource_link`).
    ResourceLink(ResourceLink),
    /// An embedded text resource.
    EmbeddedText {
        /// URI.
        uri: String,
        /// MIME type.
        mime_type: Option<String>,
        /// Text.
        text: String,
    },
    /// An embedded binary resource.
    EmbeddedBlob {
        /// URI.
        uri: String,
        /// MIME type.
        mime_type: Option<String>,
        /// Base64 bytes.
        blob: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into())
    }
    /// An image block: base64 `data` and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }
    /// An audio block: base64 `data` and its MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }
    /// An embedded text resource.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: Option<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::EmbeddedText {
            uri: uri.into(),
            mime_type,
            text: text.into(),
        }
    }
    /// An embedded binary resource: base64 `blob`.
    pub fn embedded_blob(
        uri: impl Into<String>,
        mime_type: Option<String>,
        blob: impl Into<String>,
    ) -> Self {
        Content::EmbeddedBlob {
            uri: uri.into(),
            mime_type,
            blob: blob.into(),
        }
    }

    /// The core's borrowed view of this block.
    pub fn as_core(&self) -> mcp_rs_core::model::content::Content<'_> {
        use mcp_rs_core::model::content::Content as C;
        match self {
            Content::Text(t) => C::Text(t),
            Content::Image { data, mime_type } => C::Image { data, mime_type },
            Content::Audio { data, mime_type } => C::Audio { data, mime_type },
            Content::ResourceLink(link) => C::ResourceLink(link.as_core()),
            Content::EmbeddedText {
                uri,
                mime_type,
                text,
            } => C::EmbeddedText {
                uri,
                mime_type: mime_type.as_deref(),
                text,
            },
            Content::EmbeddedBlob {
                uri,
                mime_type,
                blob,
            } => C::EmbeddedBlob {
                uri,
                mime_type: mime_type.as_deref(),
                blob,
            },
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::Text(text.to_owned())
    }
}

impl From<ResourceLink> for Content {
    fn from(link: ResourceLink) -> Self {
        Content::ResourceLink(link)
    }
}

/// An owned resource link (see [`mcp_rs_core::model::content::ResourceLink`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ResourceLink {
    /// The URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Size in bytes.
    pub size: Option<u64>,
}

impl ResourceLink {
    /// A link to `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            ..Default::default()
        }
    }
    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
    /// Sets the size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
    /// The core's borrowed view.
    pub fn as_core(&self) -> mcp_rs_core::model::content::ResourceLink<'_> {
        mcp_rs_core::model::content::ResourceLink {
            uri: &self.uri,
            name: &self.name,
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            mime_type: self.mime_type.as_deref(),
            size: self.size,
        }
    }
}

/// Owned annotations of a content block (see [`mcp_rs_core::model::content::Annotations`]): who it
/// is for, how important it is, when it last changed. The core leaves out what a revision
/// lacks (`lastModified` before 2025-06-18) and a priority outside 0..=1.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Annotations {
    /// Who the content is for.
    pub audience: Vec<Role>,
    /// Importance from 0 (least) to 1 (most).
    pub priority: Option<f64>,
    /// ISO 8601 timestamp.
    pub last_modified: Option<String>,
}

impl Annotations {
    /// No annotations yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets who the content is for.
    pub fn audience(mut self, audience: impl IntoIterator<Item = Role>) -> Self {
        self.audience = audience.into_iter().collect();
        self
    }
    /// Sets the priority (0 to 1).
    pub fn priority(mut self, priority: f64) -> Self {
        self.priority = Some(priority);
        self
    }
    /// Sets the last modification time (ISO 8601).
    pub fn last_modified(mut self, at: impl Into<String>) -> Self {
        self.last_modified = Some(at.into());
        self
    }
    /// The core's borrowed view.
    pub fn as_core(&self) -> mcp_rs_core::model::content::Annotations<'_> {
        mcp_rs_core::model::content::Annotations {
            audience: &self.audience,
            priority: self.priority,
            last_modified: self.last_modified.as_deref(),
        }
    }
}

/// A content block with its optional annotations.
type Block = (Content, Option<Annotations>);

/// The owned result of an async tool: content blocks, optional `structuredContent`, and
/// whether it is an error.
#[derive(Clone, Debug, Default)]
pub struct ToolReply {
    content: Vec<Block>,
    /// `structuredContent` as compact JSON text.
    structured: Option<String>,
    is_error: bool,
}

/// Bytes a [`ToolReply::structured_output`] value is first rendered into on the stack; a
/// larger value is rendered again into a buffer of its exact size.
const OUTPUT_STACK: usize = 512;

impl ToolReply {
    /// A result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolReply {
            content: vec![(Content::Text(text.into()), None)],
            ..Default::default()
        }
    }
    /// An `isError` result with one text block (a tool failure the model should see).
    pub fn error(text: impl Into<String>) -> Self {
        ToolReply {
            content: vec![(Content::Text(text.into()), None)],
            structured: None,
            is_error: true,
        }
    }
    /// Adds a content block.
    pub fn with(mut self, content: impl Into<Content>) -> Self {
        self.content.push((content.into(), None));
        self
    }
    /// Adds a content block with annotations.
    pub fn with_annotated(mut self, content: impl Into<Content>, annotations: Annotations) -> Self {
        self.content.push((content.into(), Some(annotations)));
        self
    }
    /// Adds a content block (for a tool that builds its result in place, as an
    /// `#[mcp_rs_tokio::tools]` method taking `&mut ToolReply` does).
    pub fn push(&mut self, content: impl Into<Content>) -> &mut Self {
        self.content.push((content.into(), None));
        self
    }
    /// Adds a content block with annotations, in place.
    pub fn push_annotated(
        &mut self,
        content: impl Into<Content>,
        annotations: Annotations,
    ) -> &mut Self {
        self.content.push((content.into(), Some(annotations)));
        self
    }
    /// Marks the result as a tool execution error (`isError: true`).
    pub fn set_error(&mut self) -> &mut Self {
        self.is_error = true;
        self
    }
    /// Sets `structuredContent` (also sent as a JSON text block, as the spec suggests).
    pub fn structured(mut self, value: serde_json::Value) -> Self {
        self.structured = Some(value.to_string());
        self
    }
    /// Sets `structuredContent` from a type implementing mcp-core's
    /// [`ToolOutput`](mcp_rs_core::typed::ToolOutput) trait (a `#[derive(ToolOutput)]` struct):
    /// rendered now by its own writer (no serde), so it may borrow; sent exactly as
    /// [`ToolResult::structured`] sends it (a JSON text block after the other blocks, and
    /// `structuredContent`).
    pub fn structured_output<T: mcp_rs_core::typed::ToolOutput + ?Sized>(
        mut self,
        value: &T,
    ) -> Self {
        self.structured = Some(render(value));
        self
    }
    /// Whether this is an error result.
    pub fn is_error(&self) -> bool {
        self.is_error
    }
    /// The content blocks so far (without the JSON text block of `structuredContent`).
    pub fn content(&self) -> impl ExactSizeIterator<Item = &Content> + '_ {
        self.content.iter().map(|(c, _)| c)
    }
    /// The content blocks so far with their annotations.
    pub fn blocks(&self) -> &[(Content, Option<Annotations>)] {
        &self.content
    }
    /// `structuredContent` as compact JSON text, if set.
    pub fn structured_json(&self) -> Option<&str> {
        self.structured.as_deref()
    }
    /// Writes this output through the core's result builder.
    pub fn write(&self, r: &mut ToolResult<'_, '_>) {
        if self.is_error {
            r.error();
        }
        for (c, a) in &self.content {
            r.push(
                &c.as_core(),
                a.as_ref().map(Annotations::as_core).as_ref(),
                None,
            );
        }
        if let Some(json) = &self.structured {
            r.structured_raw(json);
        }
    }
}

/// `value` as compact JSON text, written by its `ToolReply::write`.
fn render<T: mcp_rs_core::typed::ToolOutput + ?Sized>(value: &T) -> String {
    let mut stack = [0u8; OUTPUT_STACK];
    let mut w = JsonWriter::new(&mut stack);
    value.write(&mut w);
    let bytes = match w.finish() {
        Ok(n) => stack.get(..n).unwrap_or_default().to_vec(),
        Err(too_small) => {
            let mut heap = vec![0u8; too_small.required];
            let mut w = JsonWriter::new(&mut heap);
            value.write(&mut w);
            let n = w.finish().unwrap_or(0);
            heap.truncate(n);
            heap
        }
    };
    // The writer escapes every string it writes: its output is UTF-8.
    String::from_utf8(bytes).unwrap_or_default()
}

/// The owned result of an async prompt: an optional description and messages.
#[derive(Clone, Debug, Default)]
pub struct PromptOutput {
    description: Option<String>,
    messages: Vec<(Role, Block)>,
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
    pub fn message(mut self, role: Role, content: impl Into<Content>) -> Self {
        self.messages.push((role, (content.into(), None)));
        self
    }
    /// Adds a message whose content block carries annotations.
    pub fn message_with(
        mut self,
        role: Role,
        content: impl Into<Content>,
        annotations: Annotations,
    ) -> Self {
        self.messages
            .push((role, (content.into(), Some(annotations))));
        self
    }
    /// Writes this output through the core's result builder.
    pub(crate) fn write(&self, r: &mut PromptResult<'_, '_>) {
        if let Some(d) = &self.description {
            r.description(d);
        }
        for (role, (content, annotations)) in &self.messages {
            let annotations = annotations.as_ref().map(Annotations::as_core);
            r.message_with(*role, &content.as_core(), annotations.as_ref());
        }
    }
}

/// One item of a [`ResourceOutput`]: text or base64 binary contents of a URI.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The URI these contents are of.
        uri: String,
        /// The MIME type, if known.
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary contents.
    Blob {
        /// The URI these contents are of.
        uri: String,
        /// The MIME type, if known.
        mime_type: Option<String>,
        /// The bytes, base64-encoded.
        blob: String,
    },
}

/// The owned result of an async resource read: its contents. A read answered with no
/// contents gets the revision's "resource not found" error (as in the core, whose error
/// names the URI).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceOutput {
    contents: Vec<ResourceContents>,
}

impl ResourceOutput {
    /// No contents yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds text contents.
    pub fn text(
        mut self,
        uri: impl Into<String>,
        mime_type: Option<&str>,
        text: impl Into<String>,
    ) -> Self {
        self.contents.push(ResourceContents::Text {
            uri: uri.into(),
            mime_type: mime_type.map(Into::into),
            text: text.into(),
        });
        self
    }
    /// Adds binary contents (`blob`: base64).
    pub fn blob(
        mut self,
        uri: impl Into<String>,
        mime_type: Option<&str>,
        blob: impl Into<String>,
    ) -> Self {
        self.contents.push(ResourceContents::Blob {
            uri: uri.into(),
            mime_type: mime_type.map(Into::into),
            blob: blob.into(),
        });
        self
    }
    /// The contents.
    pub fn contents(&self) -> &[ResourceContents] {
        &self.contents
    }
    /// Writes this output through the core's result builder.
    pub(crate) fn write(&self, r: &mut ReadResult<'_, '_>) {
        if self.contents.is_empty() {
            r.not_found();
            return;
        }
        for item in &self.contents {
            match item {
                ResourceContents::Text {
                    uri,
                    mime_type,
                    text,
                } => r.text(uri, mime_type.as_deref(), text),
                ResourceContents::Blob {
                    uri,
                    mime_type,
                    blob,
                } => r.blob(uri, mime_type.as_deref(), blob),
            };
        }
    }
}

/// The owned result of an async completion: the values (at most 100 are sent, as the spec
/// requires; more set `hasMore`), and optionally how many there are in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompletionOutput {
    values: Vec<String>,
    total: Option<u64>,
    has_more: bool,
}

impl CompletionOutput {
    /// These values.
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        CompletionOutput {
            values: values.into_iter().map(Into::into).collect(),
            total: None,
            has_more: false,
        }
    }
    /// Sets `total` (all matches, which may exceed the values sent).
    pub fn total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }
    /// Sets `hasMore` (there are more values than those sent).
    pub fn has_more(mut self, more: bool) -> Self {
        self.has_more = more;
        self
    }
    /// The values.
    pub fn values(&self) -> &[String] {
        &self.values
    }
    /// Writes this output through the core's result builder.
    pub(crate) fn write(&self, r: &mut CompletionResult<'_, '_>) {
        for v in &self.values {
            r.value(v);
        }
        if let Some(t) = self.total {
            r.total(t);
        }
        r.has_more(self.has_more);
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
