//! How a client is configured ([`ClientOptions`], [`Era`], [`CallOptions`]) and what it
//! reports outside results ([`ServerDetails`], [`Notification`], [`Progress`]).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_rs_core::model::logging::LogLevel;
use mcp_rs_core::wire::version::ProtocolVersion;
use mcp_rs_core::ListKind;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::handlers::{Handler, HandlerError, Handlers};
use super::results::{Root, Tool};

/// Default of [`ClientOptions::max_input_rounds`].
pub const MAX_INPUT_ROUNDS: usize = 8;

fn boxed<F, Fut>(f: F) -> Handler
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    Arc::new(move |params| Box::pin(f(params)))
}

/// Which protocol era the client speaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Era {
    /// A handshake revision: connecting sends `initialize`, checks that the server chose a
    /// legacy revision the core knows, then sends `notifications/initialized`.
    Legacy {
        /// The version asked for (one the core does not know is asked as the newest
        /// legacy revision); the server may choose any legacy revision the core knows.
        version: String,
    },
    /// 2026-07-28: `server/discover`, then every request carries
    /// `_meta["io.modelcontextprotocol/protocolVersion"]`, `clientCapabilities` and
    /// `clientInfo`. A server that does not speak it fails the connection with
    /// [`ClientError::Version`](super::ClientError::Version).
    Modern,
    /// Probe with `server/discover`; if the server lists a 2026 revision, speak it; if it
    /// does not know the method or the revision, fall back to the legacy handshake.
    Auto,
}

impl Era {
    /// The legacy era with the newest legacy revision.
    pub fn legacy() -> Self {
        Era::Legacy {
            version: ProtocolVersion::LATEST_LEGACY.as_str().to_owned(),
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
#[derive(Clone)]
pub struct ClientOptions {
    /// The protocol era (default: [`Era::legacy`]).
    pub era: Era,
    /// Sent as `clientInfo` (legacy `initialize`) or
    /// `_meta["io.modelcontextprotocol/clientInfo"]` (2026-07-28).
    pub client_info: Implementation,
    /// What the client does for the server (sampling, elicitation, roots): the capabilities
    /// declared are those of the handlers registered (default none).
    pub handlers: Handlers,
    /// Tools known up front (e.g. from an earlier `tools/list`): calls to them need no
    /// `tools/list` first, and over HTTP their `x-mcp-header` parameters are mirrored into
    /// `Mcp-Param-*` headers (default none).
    pub known_tools: Vec<Tool>,
    /// Over Streamable HTTP, headers added to every request (name, value) (default none).
    pub headers: Vec<(String, String)>,
    /// Over `https://` (feature `tls`): certificates trusted besides the system's roots, in
    /// DER (e.g. a private CA, or a test server's self-signed certificate). Default none.
    pub root_certificates: Vec<Vec<u8>>,
    /// Most 2026-07-28 `input_required` rounds one request may take before it fails with
    /// [`ClientError::Malformed`](super::ClientError::Malformed) (default
    /// [`MAX_INPUT_ROUNDS`]).
    pub max_input_rounds: usize,
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
    /// or [`close`](super::Client::close). Applies to
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
            handlers: Handlers::default(),
            known_tools: Vec::new(),
            headers: Vec::new(),
            root_certificates: Vec::new(),
            max_input_rounds: MAX_INPUT_ROUNDS,
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

    /// These options with a `sampling/createMessage` handler (declares `sampling`).
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
    {
        self.handlers.sampling = Some(boxed(f));
        self
    }

    /// These options with an `elicitation/create` handler (declares `elicitation`). An
    /// `accept` it returns gets the requested schema's defaults for fields left out.
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
    {
        self.handlers.elicitation = Some(boxed(f));
        self
    }

    /// These options with a `roots/list` handler (declares `roots`): it returns a
    /// `ListRootsResult` (`{"roots": [...]}`); tell the server when the roots change with
    /// [`Client::roots_changed`](super::Client::roots_changed).
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
    {
        self.handlers.roots = Some(boxed(f));
        self
    }

    /// These options answering `roots/list` with `roots` (declares `roots`).
    pub fn with_roots(mut self, roots: Vec<Root>) -> Self {
        #[derive(Serialize)]
        struct ListRootsResult {
            roots: Vec<Root>,
        }
        let result = serde_json::to_value(ListRootsResult { roots }).unwrap_or(Value::Null);
        self.handlers.roots = Some(boxed(move |_| {
            let result = result.clone();
            async move { Ok(result) }
        }));
        self
    }

    /// These options with a known tool (see [`known_tools`](Self::known_tools)).
    pub fn with_known_tool(mut self, tool: Tool) -> Self {
        self.known_tools.push(tool);
        self
    }

    /// These options trusting `der` (a DER certificate) for `https://` besides the
    /// system's roots (feature `tls`; a certificate that is not valid DER fails the
    /// connect).
    pub fn with_root_certificate(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(der.into());
        self
    }

    /// These options with a header sent on every HTTP request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
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

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("era", &self.era)
            .field("client_info", &self.client_info)
            .field("handlers", &self.handlers)
            .field("known_tools", &self.known_tools.len())
            .field("request_timeout", &self.request_timeout)
            .field("max_line", &self.max_line)
            .finish_non_exhaustive()
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

/// A notification from the server (progress goes to the [`CallOptions`] progress sink of
/// its request instead).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Notification {
    /// `notifications/{tools,prompts,resources}/list_changed`.
    ListChanged(ListKind),
    /// `notifications/resources/updated`.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// `notifications/message`.
    Log {
        /// Severity.
        level: LogLevel,
        /// The logger, if named.
        logger: Option<String>,
        /// The payload.
        data: Value,
    },
    /// `notifications/cancelled`: the server withdrew a request it sent.
    Cancelled {
        /// The id of that request (its JSON text).
        request_id: String,
        /// Why, if said.
        reason: Option<String>,
    },
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

/// Per-request options for [`Client::call_tool_with`](super::Client::call_tool_with).
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
    pub log_level: Option<LogLevel>,
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
    pub fn with_log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }
}
