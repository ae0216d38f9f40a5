//! The typed results of the client's calls, decoded with serde from the result objects
//! the core hands over (payloads only: the envelopes are the core's). Every struct keeps
//! the members it does not know in `extra`, so nothing the server sends is lost.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool definition from `tools/list`. Schemas are kept as opaque JSON values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The tool's name, used in `tools/call`.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments (`null` if the server omitted it).
    #[serde(default)]
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints (`readOnlyHint`, ...): untrusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// Every other member (`icons`, `execution`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One page of `tools/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsPage {
    /// The tools on this page.
    pub tools: Vec<Tool>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Every other member (`ttlMs`, `cacheScope`, `resultType`, `_meta`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `tools/call`. A tool failure is a result with `is_error` set, not an
/// [`ClientError`](super::ClientError).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Content blocks (`{"type":"text","text":..}`, `image`, `audio`, `resource`,
    /// `resource_link`), as JSON values.
    #[serde(default)]
    pub content: Vec<Value>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool reported a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// Every other member (`resultType`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolResult {
    /// The `text` of every text content block, in order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|block| {
            if block.get("type")?.as_str()? == "text" {
                block.get("text")?.as_str()
            } else {
                None
            }
        })
    }

    /// The first text content block, or `""`.
    pub fn text(&self) -> &str {
        self.texts().next().unwrap_or_default()
    }
}

/// A resource from `resources/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Every other member (`size`, `annotations`, `icons`, `_meta`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource template from `resources/templates/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The RFC 6570 URI template.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of what it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `resources/read`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// The contents (`{uri, mimeType, text}` or `{uri, mimeType, blob}`), as JSON values.
    pub contents: Vec<Value>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A prompt from `prompts/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments (`{name, description, required}`), as JSON values.
    #[serde(default)]
    pub arguments: Vec<Value>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `prompts/get`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages (`{role, content}`), as JSON values.
    pub messages: Vec<Value>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `completion` of a `completion/complete` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values.
    pub values: Vec<String>,
    /// How many there are in all, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// A root the client offers the server (`roots/list`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// A root at `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            name: Some(name.into()),
        }
    }
}
