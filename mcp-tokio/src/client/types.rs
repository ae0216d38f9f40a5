//! Typed protocol shapes the client reads and writes. Every struct keeps the members it does
//! not know in `extra`, so nothing the server sends is lost.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

/// The 2026-07-28 revision: stateless, version and capabilities in every request's `_meta`.
pub const MODERN_VERSION: &str = "2026-07-28";

/// The newest handshake revision, requested by [`Era::legacy`] and by [`Era::Auto`]'s fallback.
pub const LATEST_LEGACY_VERSION: &str = "2025-11-25";

/// The handshake revisions this client speaks: it accepts any of them as the server's choice
/// in the `initialize` result.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Which protocol era the client speaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Era {
    /// A handshake revision: connecting sends `initialize` asking for `version`, checks that
    /// the server chose one of [`LEGACY_VERSIONS`], then sends `notifications/initialized`.
    Legacy {
        /// The version asked for in `initialize`.
        version: String,
    },
    /// 2026-07-28: no handshake; every request carries
    /// `_meta["io.modelcontextprotocol/protocolVersion"]`, `clientCapabilities` and
    /// `clientInfo`. Call [`Client::discover`](super::Client::discover) to learn about the
    /// server.
    Modern,
    /// Probe with `server/discover`; if that succeeds and the server lists
    /// [`MODERN_VERSION`], speak 2026-07-28; on any error (or without it) fall back to the
    /// legacy handshake with [`LATEST_LEGACY_VERSION`].
    Auto,
}

impl Era {
    /// The legacy era with [`LATEST_LEGACY_VERSION`].
    pub fn legacy() -> Self {
        Era::Legacy {
            version: LATEST_LEGACY_VERSION.to_owned(),
        }
    }

    /// The legacy era asking for `version`.
    pub fn legacy_version(version: impl Into<String>) -> Self {
        Era::Legacy {
            version: version.into(),
        }
    }
}

impl Default for Era {
    /// [`Era::legacy`]: what most servers in the wild speak.
    fn default() -> Self {
        Era::legacy()
    }
}

/// Name and version of an MCP implementation (`Implementation` in the schema); other members
/// (`title`, `description`, `icons`, `websiteUrl`, ...) are kept in `extra`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            extra: Map::new(),
        }
    }
}

impl Default for Implementation {
    /// `mcp-rs-client` and this crate's version.
    fn default() -> Self {
        Implementation::new("mcp-rs-client", env!("CARGO_PKG_VERSION"))
    }
}

/// How a [`Client`](super::Client) connects and behaves.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The protocol era (default: [`Era::legacy`]).
    pub era: Era,
    /// Sent as `clientInfo` (legacy `initialize`) or
    /// `_meta["io.modelcontextprotocol/clientInfo"]` (2026-07-28).
    pub client_info: Implementation,
    /// The client capabilities object (default `{}`).
    pub capabilities: Value,
    /// Default timeout of every request, the handshake included (default 60 s). Override per
    /// request with [`CallOptions::with_timeout`].
    pub request_timeout: Duration,
    /// Longest accepted incoming line in bytes, without the newline (default 16 MiB); see
    /// [`ClientError::Oversized`](super::ClientError::Oversized). Over HTTP, also the longest JSON
    /// response body or SSE event read: a longer one is dropped unread and its request fails
    /// with a -32603 [`ClientError::Protocol`](super::ClientError::Protocol) naming the limit.
    pub max_line: usize,
    /// How long [`Client::close`](super::Client::close) waits for the queued output to be
    /// written and for a child process to exit after closing its stdin, before killing it
    /// (default 5 s).
    pub close_timeout: Duration,
    /// How long a write to the server may make no progress (not one byte taken) before the
    /// client closes the connection (default 30 s): pending requests fail with
    /// [`ClientError::WriteTimeout`](super::ClientError::WriteTimeout), later calls with
    /// [`ClientError::Closed`](super::ClientError::Closed). A server that stops reading cannot hang a call,
    /// a [`notify`](super::Client::notify) or [`close`](super::Client::close). Applies to
    /// every transport (over HTTP, to the local bridge, which never stalls that long).
    pub write_timeout: Duration,
    /// How long a line from the server may take to complete once its first byte has arrived
    /// (default 30 s); then the client closes the connection and pending requests fail with
    /// [`ClientError::LineTimeout`](super::ClientError::LineTimeout). A server that stalls or trickles
    /// in the middle of a message cannot hold the client. Time between messages is not
    /// limited (that is [`request_timeout`](Self::request_timeout)'s job).
    pub line_timeout: Duration,
    /// Over Streamable HTTP: what supplies the `Authorization` header and answers 401/403
    /// challenges (default none; see [`auth`](super::auth)).
    #[cfg(feature = "http")]
    pub authorizer: Option<std::sync::Arc<dyn super::auth::Authorizer>>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            era: Era::default(),
            client_info: Implementation::default(),
            capabilities: Value::Object(Map::new()),
            request_timeout: Duration::from_secs(60),
            max_line: 16 * 1024 * 1024,
            close_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(30),
            line_timeout: Duration::from_secs(30),
            #[cfg(feature = "http")]
            authorizer: None,
        }
    }
}

impl ClientOptions {
    /// These options with an authorizer for Streamable HTTP (e.g. OAuth, or a
    /// [`BearerToken`](super::auth::BearerToken)).
    #[cfg(feature = "http")]
    pub fn with_authorizer(mut self, authorizer: impl super::auth::Authorizer) -> Self {
        self.authorizer = Some(std::sync::Arc::new(authorizer));
        self
    }

    /// The default options with another era.
    pub fn with_era(era: Era) -> Self {
        ClientOptions {
            era,
            ..ClientOptions::default()
        }
    }
}

/// What the client learned about the server: from the `initialize` result (legacy) or from
/// `server/discover` (2026-07-28).
#[derive(Clone, Debug, PartialEq)]
pub struct ServerDetails {
    /// The protocol version in use.
    pub protocol_version: String,
    /// `supportedVersions` of `server/discover` (empty after a legacy handshake).
    pub supported_versions: Vec<String>,
    /// The server capabilities object.
    pub capabilities: Value,
    /// `serverInfo` (legacy) or `_meta["io.modelcontextprotocol/serverInfo"]` (2026-07-28).
    pub server_info: Option<Implementation>,
    /// The server's `instructions`, if any.
    pub instructions: Option<String>,
    /// The whole result the details were read from.
    pub raw: Value,
}

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

/// A `notifications/progress` for a request that asked for progress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Progress so far (increases with every notification).
    pub progress: f64,
    /// Total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A notification from the server (anything but the progress notifications routed to a
/// [`CallOptions`] progress sink).
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method, e.g. `notifications/message` or `notifications/tools/list_changed`.
    pub method: String,
    /// The params, if any.
    pub params: Option<Value>,
}

/// Where the progress notifications of one request go.
///
/// The server decides how many progress notifications it sends: with a server you do not
/// trust, use a bounded channel (`mpsc::channel(n)`), which cannot grow past `n`.
#[derive(Clone)]
pub enum ProgressSink {
    /// Called on the client's reader task: return quickly.
    Callback(Arc<dyn Fn(Progress) + Send + Sync>),
    /// An unbounded channel: every notification stays queued until it is received, so a
    /// consumer that falls behind a chatty server grows without limit.
    Unbounded(mpsc::UnboundedSender<Progress>),
    /// A bounded channel; a notification that finds it full is dropped, logged and counted in
    /// [`Client::dropped_notifications`](super::Client::dropped_notifications).
    Bounded(mpsc::Sender<Progress>),
}

impl ProgressSink {
    /// A sink calling `f` for every notification (on the reader task: return quickly).
    pub fn callback(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressSink::Callback(Arc::new(f))
    }

    /// Delivers `progress`; returns `false` if a bounded channel was full and it was dropped
    /// (a closed channel is not a drop: its receiver is gone on purpose).
    pub(crate) fn deliver(&self, progress: Progress) -> bool {
        match self {
            ProgressSink::Callback(f) => f(progress),
            ProgressSink::Unbounded(tx) => {
                let _ = tx.send(progress);
            }
            ProgressSink::Bounded(tx) => {
                if let Err(mpsc::error::TrySendError::Full(_)) = tx.try_send(progress) {
                    return false;
                }
            }
        }
        true
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProgressSink::Callback(_) => "ProgressSink::Callback",
            ProgressSink::Unbounded(_) => "ProgressSink::Unbounded",
            ProgressSink::Bounded(_) => "ProgressSink::Bounded",
        })
    }
}

impl From<mpsc::UnboundedSender<Progress>> for ProgressSink {
    fn from(tx: mpsc::UnboundedSender<Progress>) -> Self {
        ProgressSink::Unbounded(tx)
    }
}

impl From<mpsc::Sender<Progress>> for ProgressSink {
    fn from(tx: mpsc::Sender<Progress>) -> Self {
        ProgressSink::Bounded(tx)
    }
}

/// Per-request options for [`Client::call_tool_with`](super::Client::call_tool_with) and
/// [`Client::request_with`](super::Client::request_with).
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    /// Ask for progress: a fresh `_meta.progressToken` is attached and the matching
    /// `notifications/progress` go here.
    pub progress: Option<ProgressSink>,
    /// Overrides [`ClientOptions::request_timeout`].
    pub timeout: Option<Duration>,
    /// 2026-07-28: `_meta["io.modelcontextprotocol/logLevel"]`, so the server may send
    /// `notifications/message` at or above this level for this request (ignored in the
    /// legacy era: use [`Client::set_log_level`](super::Client::set_log_level)).
    pub log_level: Option<String>,
}

impl CallOptions {
    /// No progress, the client's default timeout, no log level.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// Routes progress to `sink` (a channel sender or [`ProgressSink::callback`]).
    pub fn with_progress(mut self, sink: impl Into<ProgressSink>) -> Self {
        self.progress = Some(sink.into());
        self
    }

    /// Routes progress to a callback run on the reader task.
    pub fn on_progress(self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.with_progress(ProgressSink::callback(f))
    }

    /// Sets this request's timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets this request's log level (2026-07-28).
    pub fn with_log_level(mut self, level: impl Into<String>) -> Self {
        self.log_level = Some(level.into());
        self
    }
}
