//! What handlers hand back, owned: content blocks, a tool's reply, a prompt's messages and
//! the JSON-RPC error answer of a deferred request. Each is written through mcp-core's result
//! builders. A leaf: nothing here depends on the rest of this crate.

use mcp_rs_core::content::Role;
use mcp_rs_core::json::JsonWriter;
use mcp_rs_core::prompts::PromptResult;
use mcp_rs_core::ToolResult;

/// One owned content block of a [`ToolReply`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text(String),
    /// Base64 image data and MIME type.
    Image {
        /// Base64 bytes.
        data: String,
        /// MIME type.
        mime_type: String,
    },
    /// Base64 audio data and MIME type.
    Audio {
        /// Base64 bytes.
        data: String,
        /// MIME type.
        mime_type: String,
    },
    /// An embedded text resource.
    Resource {
        /// URI.
        uri: String,
        /// MIME type.
        mime_type: Option<String>,
        /// Text.
        text: String,
    },
}

impl Content {
    /// The core's borrowed view of this block.
    pub fn as_core(&self) -> mcp_rs_core::content::Content<'_> {
        use mcp_rs_core::content::Content as C;
        match self {
            Content::Text(t) => C::Text(t),
            Content::Image { data, mime_type } => C::Image { data, mime_type },
            Content::Audio { data, mime_type } => C::Audio { data, mime_type },
            Content::Resource {
                uri,
                mime_type,
                text,
            } => C::EmbeddedText {
                uri,
                mime_type: mime_type.as_deref(),
                text,
            },
        }
    }
}

/// The owned result of an async tool: content blocks, optional `structuredContent`, and
/// whether it is an error.
#[derive(Clone, Debug, Default)]
pub struct ToolReply {
    content: Vec<Content>,
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
            content: vec![Content::Text(text.into())],
            ..Default::default()
        }
    }
    /// An `isError` result with one text block (a tool failure the model should see).
    pub fn error(text: impl Into<String>) -> Self {
        ToolReply {
            content: vec![Content::Text(text.into())],
            structured: None,
            is_error: true,
        }
    }
    /// Adds a content block.
    pub fn with(mut self, content: Content) -> Self {
        self.content.push(content);
        self
    }
    /// Adds a content block (for a tool that builds its result in place, as an
    /// `#[mcp_rs_tokio::tools]` method taking `&mut ToolReply` does).
    pub fn push(&mut self, content: Content) -> &mut Self {
        self.content.push(content);
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
    /// [`ToolOutput`](mcp_rs_core::args::ToolOutput) trait (a `#[derive(ToolOutput)]` struct):
    /// rendered now by its own writer (no serde), so it may borrow; sent exactly as
    /// [`ToolResult::structured`] sends it (a JSON text block after the other blocks, and
    /// `structuredContent`).
    pub fn structured_output<T: mcp_rs_core::args::ToolOutput + ?Sized>(
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
    pub fn content(&self) -> &[Content] {
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
        for c in &self.content {
            r.push(&c.as_core(), None, None);
        }
        if let Some(json) = &self.structured {
            r.structured_raw(json);
        }
    }
}

/// `value` as compact JSON text, written by its `ToolReply::write`.
fn render<T: mcp_rs_core::args::ToolOutput + ?Sized>(value: &T) -> String {
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
    messages: Vec<(Role, Content)>,
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
    pub fn message(mut self, role: Role, content: Content) -> Self {
        self.messages.push((role, content));
        self
    }
    /// Writes this output through the core's result builder.
    pub(crate) fn write(&self, r: &mut PromptResult<'_, '_>) {
        if let Some(d) = &self.description {
            r.description(d);
        }
        for (role, content) in &self.messages {
            r.message(*role, &content.as_core());
        }
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
