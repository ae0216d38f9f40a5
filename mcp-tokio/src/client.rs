//! An async MCP client: child-process stdio, TCP, Unix sockets or any byte stream; both
//! protocol eras.
//!
//! A [`Client`] owns a reader task that frames incoming lines (bounded by
//! [`ClientOptions::max_line`]) and routes responses to pending requests by id, progress to
//! the request that asked for it, and every other notification to
//! [`on_notification`](Client::on_notification) callbacks; and a writer task that sends
//! newline-delimited JSON. Requests time out ([`ClientOptions::request_timeout`], or per call
//! with [`CallOptions`]); a timed-out, [cancelled](Client::cancel) or dropped request sends
//! `notifications/cancelled` to the server (never for `initialize`).
//!
//! A hostile or stuck server cannot hang the client or grow its memory:
//!
//! | bound | default | when exceeded |
//! |---|---|---|
//! | a write without progress | 30 s, [`ClientOptions::write_timeout`] | the connection closes; pending requests fail with [`ClientError::WriteTimeout`] |
//! | a started incoming line | 30 s to complete, [`ClientOptions::line_timeout`] | the connection closes; pending requests fail with [`ClientError::LineTimeout`] |
//! | an incoming line | 16 MiB, [`ClientOptions::max_line`] | the line is discarded; pending requests fail with [`ClientError::Oversized`]; the connection keeps working |
//! | over HTTP, a JSON response body or SSE event | [`ClientOptions::max_line`] | not read further; the request fails with a -32603 [`ClientError::Protocol`] |
//! | lines queued for a server that does not read | [`MAX_QUEUED_LINES`] | the connection closes |
//! | answers to the server's requests queued | [`MAX_QUEUED_REPLY_BYTES`] | the connection closes |
//! | [`notifications`](Client::notifications) not yet received | [`MAX_QUEUED_NOTIFICATIONS`] | further ones are dropped and counted ([`Client::dropped_notifications`]) |
//! | progress in a bounded channel | its capacity | further ones are dropped and counted |
//!
//! After the connection closed, every call fails at once with [`ClientError::Closed`].
//!
//! Requests from the server are answered by the reader task: `ping` with `{}`, anything
//! else (`roots/list`, `sampling/createMessage`, `elicitation/create`, ...) with -32601, so
//! do not declare those capabilities in [`ClientOptions::capabilities`].
//!
//! ```no_run
//! use std::time::Duration;
//! use mcp_rs_tokio::client::{CallOptions, Client, ClientOptions, Era, ClientError};
//! use serde_json::json;
//! use tokio::process::Command;
//!
//! # async fn demo() -> Result<(), ClientError> {
//! // Legacy era (initialize handshake, the default):
//! let client = Client::spawn(Command::new("calculator")).await?;
//! for tool in client.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let sum = client
//!     .call_tool("add_numbers", json!({"number1": 2, "number2": 40}))
//!     .await?;
//! assert_eq!(sum.structured_content, Some(json!({"sum": 42.0})));
//!
//! // Progress (into a bounded channel) and a per-call timeout; the handle's id can be
//! // cancelled meanwhile.
//! let (tx, mut progress) = tokio::sync::mpsc::channel(64);
//! let options = CallOptions::new()
//!     .with_progress(tx)
//!     .with_timeout(Duration::from_secs(10));
//! let call = client.call_tool_with("slow_count", json!({"n": 3}), options);
//! println!("request id {}", call.id());
//! let counted = call.await?;
//! while let Ok(p) = progress.try_recv() {
//!     println!("{}/{:?} {:?}", p.progress, p.total, p.message);
//! }
//! println!("{}", counted.text());
//! client.close().await?;
//!
//! // 2026-07-28 over TCP: no handshake, version and capabilities in every request's _meta.
//! let modern = Client::connect_tcp_with("127.0.0.1:4000", ClientOptions::with_era(Era::Modern)).await?;
//! let details = modern.discover().await?;
//! println!("{:?} supports {:?}", details.server_info, details.supported_versions);
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "http")]
pub mod auth;
mod conn;
mod error;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
pub(crate) mod net;
#[cfg(feature = "oauth")]
pub mod oauth;
mod types;

use std::collections::HashSet;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, ChildStderr, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use conn::Shared;
pub use conn::{MAX_QUEUED_LINES, MAX_QUEUED_REPLY_BYTES};
pub use error::{ClientError, Result};
pub use types::{
    CallOptions, CallToolResult, ClientOptions, Era, Implementation, Notification, Progress,
    ProgressSink, ServerDetails, Tool, ToolsPage, LATEST_LEGACY_VERSION, LEGACY_VERSIONS,
    MODERN_VERSION,
};

/// Most `tools/list` pages [`Client::list_tools`] follows before giving up.
pub const MAX_PAGES: usize = 10_000;

/// Capacity of each [`Client::notifications`] channel: a notification that finds it full is
/// dropped and counted in [`Client::dropped_notifications`] (notifications are fire-and-forget
/// in MCP; a consumer that falls this far behind cannot make the client grow).
pub const MAX_QUEUED_NOTIFICATIONS: usize = 1024;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A connection to one MCP server. Cheap to clone (clones share the connection); the
/// connection ends when the last clone is dropped (a child process is killed) or with
/// [`close`](Client::close).
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    options: ClientOptions,
    child: Mutex<Option<Child>>,
    stderr: Mutex<Option<ChildStderr>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    details: Mutex<Option<ServerDetails>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shared.close(&ClientError::Closed);
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
        if let Some(child) = lock(&self.child).as_mut() {
            let _ = child.start_kill();
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("era", &self.inner.options.era)
            .field("modern", &self.is_modern())
            .field("closed", &self.inner.shared.is_closed())
            .finish_non_exhaustive()
    }
}

/// A request in flight: a future of its result that also knows the request id.
///
/// The request is sent when the handle is created, whether or not it is awaited. Dropping the
/// handle before the response arrives cancels the request (`notifications/cancelled`).
#[must_use = "dropping a CallHandle cancels the request"]
pub struct CallHandle<T> {
    id: u64,
    shared: Arc<Shared>,
    fut: Pin<Box<dyn Future<Output = Result<T>> + Send + 'static>>,
}

impl<T> CallHandle<T> {
    /// The JSON-RPC id of the request (for [`Client::cancel`]).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Cancels the request: awaiting the handle then gives [`ClientError::Cancelled`] and the server
    /// is sent `notifications/cancelled` with `reason`. Returns whether it was still pending.
    pub fn cancel(&self, reason: Option<&str>) -> bool {
        self.shared.cancel(self.id, reason)
    }
}

impl<T> Future for CallHandle<T> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        self.fut.as_mut().poll(cx)
    }
}

impl<T> std::fmt::Debug for CallHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallHandle")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

fn decode<T: DeserializeOwned>(what: &str, value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| ClientError::Malformed(format!("{what}: {e}")))
}

impl Client {
    // ---- connecting -------------------------------------------------------------------------

    /// Starts `command` as a stdio server with default options (legacy era) and performs the
    /// handshake. Its stdin and stdout are piped (stdout carries only frames); stderr is left
    /// as configured on `command` (inherited by default; if you set it to
    /// [`Stdio::piped`], take it with [`take_stderr`](Client::take_stderr)). The child is
    /// killed when the client is dropped.
    pub async fn spawn(command: impl Into<Command>) -> Result<Client> {
        Client::spawn_with(command, ClientOptions::default()).await
    }

    /// [`spawn`](Client::spawn) with options.
    pub async fn spawn_with(command: impl Into<Command>, options: ClientOptions) -> Result<Client> {
        let mut command: Command = command.into();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Io(std::io::Error::other(
                "the child's stdin or stdout is not piped",
            )));
        };
        tracing::debug!("spawned MCP server process {:?}", child.id());
        let stderr = child.stderr.take();
        let client = Client::start(stdout, stdin, options, Some(child), stderr);
        client.handshake().await?;
        Ok(client)
    }

    /// Connects over TCP with default options (legacy era) and performs the handshake.
    pub async fn connect_tcp(addr: impl tokio::net::ToSocketAddrs) -> Result<Client> {
        Client::connect_tcp_with(addr, ClientOptions::default()).await
    }

    /// [`connect_tcp`](Client::connect_tcp) with options.
    pub async fn connect_tcp_with(
        addr: impl tokio::net::ToSocketAddrs,
        options: ClientOptions,
    ) -> Result<Client> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (reader, writer) = stream.into_split();
        let client = Client::start(reader, writer, options, None, None);
        client.handshake().await?;
        Ok(client)
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`) with default
    /// options (legacy era) and performs the handshake.
    #[cfg(feature = "http")]
    pub async fn connect_http(url: &str) -> Result<Client> {
        Client::connect_http_with(url, ClientOptions::default()).await
    }

    /// [`connect_http`](Client::connect_http) with options (e.g. [`Era::Modern`] for
    /// stateless 2026-07-28 requests). Each message is one POST; session ids, protocol
    /// headers, SSE responses and their resumption are handled by the transport.
    #[cfg(feature = "http")]
    pub async fn connect_http_with(url: &str, options: ClientOptions) -> Result<Client> {
        let url: hyper::Uri = url
            .parse()
            .map_err(|e| ClientError::Malformed(format!("invalid URL {url:?}: {e}")))?;
        if !net::supports_scheme(url.scheme_str().unwrap_or("")) {
            return Err(ClientError::Malformed(format!(
                "{url}: only http:// URLs{} are supported by this build",
                if cfg!(feature = "tls") {
                    " and https://"
                } else {
                    " (https:// needs the `tls` feature)"
                }
            )));
        }
        let http = net::http_client().map_err(|e| ClientError::Malformed(e.to_string()))?;
        let (client_side, bridge_side) = tokio::io::duplex(1 << 20);
        let (bridge_reader, bridge_writer) = tokio::io::split(bridge_side);
        let (client_reader, client_writer) = tokio::io::split(client_side);
        let bridge = tokio::spawn(http::run(
            http,
            url,
            bridge_reader,
            bridge_writer,
            options.max_line,
            options.authorizer.clone(),
        ));
        let client = Client::start(client_reader, client_writer, options, None, None);
        lock(&client.inner.tasks).push(bridge);
        client.handshake().await?;
        Ok(client)
    }

    /// Connects to a Unix socket with default options (legacy era) and performs the
    /// handshake.
    #[cfg(unix)]
    pub async fn connect_unix(path: impl AsRef<Path>) -> Result<Client> {
        Client::connect_unix_with(path, ClientOptions::default()).await
    }

    /// [`connect_unix`](Client::connect_unix) with options.
    #[cfg(unix)]
    pub async fn connect_unix_with(
        path: impl AsRef<Path>,
        options: ClientOptions,
    ) -> Result<Client> {
        let stream = tokio::net::UnixStream::connect(path).await?;
        let (reader, writer) = stream.into_split();
        let client = Client::start(reader, writer, options, None, None);
        client.handshake().await?;
        Ok(client)
    }

    /// Runs the protocol over any byte stream pair with default options (legacy era) and
    /// performs the handshake.
    pub async fn from_io<R, W>(reader: R, writer: W) -> Result<Client>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Client::from_io_with(reader, writer, ClientOptions::default()).await
    }

    /// [`from_io`](Client::from_io) with options.
    pub async fn from_io_with<R, W>(reader: R, writer: W, options: ClientOptions) -> Result<Client>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let client = Client::start(reader, writer, options, None, None);
        client.handshake().await?;
        Ok(client)
    }

    fn start<R, W>(
        reader: R,
        writer: W,
        options: ClientOptions,
        child: Option<Child>,
        stderr: Option<ChildStderr>,
    ) -> Client
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (shared, rx) = Shared::new();
        let read_task = tokio::spawn(conn::read_loop(
            reader,
            Arc::clone(&shared),
            options.max_line,
            options.line_timeout,
        ));
        let write_task = tokio::spawn(conn::write_loop(
            writer,
            rx,
            Arc::clone(&shared),
            options.write_timeout,
        ));
        Client {
            inner: Arc::new(Inner {
                shared,
                options,
                child: Mutex::new(child),
                stderr: Mutex::new(stderr),
                tasks: Mutex::new(vec![read_task, write_task]),
                details: Mutex::new(None),
            }),
        }
    }

    fn modern_meta(&self) -> Map<String, Value> {
        let options = &self.inner.options;
        let mut meta = Map::new();
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            Value::from(MODERN_VERSION),
        );
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            options.capabilities.clone(),
        );
        meta.insert(
            "io.modelcontextprotocol/clientInfo".into(),
            serde_json::to_value(&options.client_info).unwrap_or(Value::Null),
        );
        meta
    }

    async fn handshake(&self) -> Result<()> {
        match self.inner.options.era.clone() {
            Era::Legacy { version } => self.initialize(&version).await,
            Era::Modern => {
                self.inner.shared.set_modern_meta(Some(self.modern_meta()));
                Ok(())
            }
            Era::Auto => {
                self.inner.shared.set_modern_meta(Some(self.modern_meta()));
                match self.discover().await {
                    Ok(d) if d.supported_versions.iter().any(|v| v == MODERN_VERSION) => Ok(()),
                    outcome => {
                        tracing::debug!(
                            "server/discover probe: {outcome:?}; falling back to initialize"
                        );
                        self.inner.shared.set_modern_meta(None);
                        *lock(&self.inner.details) = None;
                        self.initialize(LATEST_LEGACY_VERSION).await
                    }
                }
            }
        }
    }

    async fn initialize(&self, version: &str) -> Result<()> {
        let options = &self.inner.options;
        let params = json!({
            "protocolVersion": version,
            "capabilities": options.capabilities,
            "clientInfo": options.client_info,
        });
        let result = self.request("initialize", params).await?;
        let chosen = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ClientError::Malformed("initialize result without protocolVersion".into())
            })?
            .to_owned();
        if !LEGACY_VERSIONS.contains(&chosen.as_str()) {
            return Err(ClientError::Version(format!(
                "asked for {version}, the server chose {chosen}, which this client does not speak \
                 (it speaks {})",
                LEGACY_VERSIONS.join(", ")
            )));
        }
        let server_info = match result.get("serverInfo") {
            Some(info) => Some(decode("serverInfo", info.clone())?),
            None => None,
        };
        let details = ServerDetails {
            protocol_version: chosen,
            supported_versions: Vec::new(),
            capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
            server_info,
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            raw: result,
        };
        tracing::debug!("initialized: protocol {}", details.protocol_version);
        *lock(&self.inner.details) = Some(details);
        self.notify("notifications/initialized", Value::Null).await
    }

    // ---- state ------------------------------------------------------------------------------

    /// What the handshake or the last [`discover`](Client::discover) reported (`None` in the
    /// 2026-07-28 era before `discover`).
    pub fn server_details(&self) -> Option<ServerDetails> {
        lock(&self.inner.details).clone()
    }

    /// The protocol version in use: the negotiated one (legacy) or [`MODERN_VERSION`].
    pub fn protocol_version(&self) -> String {
        if self.is_modern() {
            return MODERN_VERSION.to_owned();
        }
        lock(&self.inner.details)
            .as_ref()
            .map(|d| d.protocol_version.clone())
            .unwrap_or_default()
    }

    /// Whether the client speaks 2026-07-28 (also after [`Era::Auto`] chose it).
    pub fn is_modern(&self) -> bool {
        self.inner.shared.is_modern()
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.shared.is_closed()
    }

    /// The options the client was created with.
    pub fn options(&self) -> &ClientOptions {
        &self.inner.options
    }

    /// The child's stderr, if the client spawned it with stderr piped (once).
    pub fn take_stderr(&self) -> Option<ChildStderr> {
        lock(&self.inner.stderr).take()
    }

    /// The child's process id, while it runs.
    pub fn child_id(&self) -> Option<u32> {
        lock(&self.inner.child).as_ref().and_then(Child::id)
    }

    // ---- requests ---------------------------------------------------------------------------

    /// Sends a request and returns a handle resolving to its raw result. `params` of
    /// `Value::Null` sends no params (in 2026-07-28 `params._meta` is still added).
    pub fn request_with(
        &self,
        method: &str,
        params: Value,
        options: CallOptions,
    ) -> CallHandle<Value> {
        let timeout = options
            .timeout
            .unwrap_or(self.inner.options.request_timeout);
        let shared = &self.inner.shared;
        let (id, fut) = shared.start_request(
            method,
            Some(params),
            options.progress,
            options.log_level,
            timeout,
        );
        CallHandle {
            id,
            shared: Arc::clone(shared),
            fut: Box::pin(fut),
        }
    }

    /// Sends a request and waits for its raw result (the escape hatch for any method).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value> {
        self.request_with(method, params, CallOptions::default())
            .await
    }

    /// Sends a notification (`params` of `Value::Null` sends none) and waits until it is
    /// written (at most [`ClientOptions::write_timeout`] without progress: then the connection
    /// closes and this fails with [`ClientError::WriteTimeout`]).
    pub async fn notify(&self, method: &str, params: Value) -> Result<()> {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            if let Some(obj) = msg.as_object_mut() {
                obj.insert("params".into(), params);
            }
        }
        self.inner.shared.write_line(msg.to_string()).await
    }

    /// Cancels the pending request `request_id`: its caller gets [`ClientError::Cancelled`] and the
    /// server `notifications/cancelled { requestId, reason }`. Returns whether it was pending.
    pub fn cancel(&self, request_id: u64, reason: Option<&str>) -> bool {
        self.inner.shared.cancel(request_id, reason)
    }

    /// Calls `f` for every notification from the server except progress routed to a
    /// [`CallOptions`] sink (`notifications/message`, `notifications/tools/list_changed`, ...).
    /// Runs on the reader task: return quickly.
    pub fn on_notification(&self, f: impl Fn(&Notification) + Send + Sync + 'static) {
        self.inner.shared.add_handler(Arc::new(f));
    }

    /// A channel receiving the notifications [`on_notification`](Client::on_notification)
    /// sees from now on. It holds at most [`MAX_QUEUED_NOTIFICATIONS`]; a notification that
    /// finds it full is dropped, logged and counted in
    /// [`dropped_notifications`](Client::dropped_notifications).
    pub fn notifications(&self) -> mpsc::Receiver<Notification> {
        let (tx, rx) = mpsc::channel(MAX_QUEUED_NOTIFICATIONS);
        let dropped = Arc::clone(self.inner.shared.dropped());
        self.on_notification(move |n| {
            if let Err(mpsc::error::TrySendError::Full(_)) = tx.try_send(n.clone()) {
                conn::count_drop(&dropped, "notification");
            }
        });
        rx
    }

    /// How many notifications and progress updates were dropped because their bounded channel
    /// ([`notifications`](Client::notifications), a bounded [`ProgressSink`]) was full.
    pub fn dropped_notifications(&self) -> u64 {
        self.inner
            .shared
            .dropped()
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `ping` (legacy era; a 2026-07-28 server answers -32601).
    pub async fn ping(&self) -> Result<()> {
        self.request("ping", Value::Null).await.map(drop)
    }

    /// `logging/setLevel` (legacy era; in 2026-07-28 use [`CallOptions::with_log_level`]).
    pub async fn set_log_level(&self, level: &str) -> Result<()> {
        self.request("logging/setLevel", json!({ "level": level }))
            .await
            .map(drop)
    }

    /// `server/discover` (2026-07-28): the server's supported versions, capabilities,
    /// instructions and info. Also stored for [`server_details`](Client::server_details).
    pub async fn discover(&self) -> Result<ServerDetails> {
        let result = self.request("server/discover", Value::Null).await?;
        let supported_versions: Vec<String> = match result.get("supportedVersions") {
            Some(v) => decode("supportedVersions", v.clone())?,
            None => {
                return Err(ClientError::Malformed(
                    "server/discover result without supportedVersions".into(),
                ))
            }
        };
        let server_info = match result
            .get("_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
        {
            Some(info) => Some(decode("serverInfo", info.clone())?),
            None => None,
        };
        let details = ServerDetails {
            protocol_version: MODERN_VERSION.to_owned(),
            supported_versions,
            capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
            server_info,
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            raw: result,
        };
        *lock(&self.inner.details) = Some(details.clone());
        Ok(details)
    }

    /// One page of `tools/list` (`cursor` from the previous page's `next_cursor`).
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<ToolsPage> {
        let params = match cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => Value::Null,
        };
        decode(
            "tools/list result",
            self.request("tools/list", params).await?,
        )
    }

    /// Every tool, following `nextCursor` until the last page. Fails with
    /// [`ClientError::Malformed`] if the server repeats a cursor or after [`MAX_PAGES`] pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>> {
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page = self.list_tools_page(cursor.as_deref()).await?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(ClientError::Malformed(format!(
                            "tools/list repeated the cursor {next:?}"
                        )));
                    }
                    cursor = Some(next);
                }
            }
        }
        Err(ClientError::Malformed(format!(
            "tools/list did not end within {MAX_PAGES} pages"
        )))
    }

    /// Calls a tool (`arguments` of `Value::Null` sends none). A tool failure is `Ok` with
    /// [`CallToolResult::is_error`]; an unknown tool is [`ClientError::Protocol`] (-32602).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.call_tool_with(name, arguments, CallOptions::default())
            .await
    }

    /// Calls a tool with progress, timeout or log level options; the request is sent at once
    /// and the returned handle carries its id (see [`CallHandle`]).
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> CallHandle<CallToolResult> {
        let mut params = json!({ "name": name });
        if !arguments.is_null() {
            if let Some(obj) = params.as_object_mut() {
                obj.insert("arguments".into(), arguments);
            }
        }
        let CallHandle { id, shared, fut } = self.request_with("tools/call", params, options);
        CallHandle {
            id,
            shared,
            fut: Box::pin(async move { decode("tools/call result", fut.await?) }),
        }
    }

    // ---- closing ----------------------------------------------------------------------------

    /// Ends the connection: writes what is queued and closes the write half (a child's
    /// stdin), waiting at most [`ClientOptions::close_timeout`] (less if the server reads
    /// nothing for [`ClientOptions::write_timeout`]); then for a child waits up to
    /// `close_timeout` for it to exit, killing it after that. Requests still pending fail
    /// with [`ClientError::Closed`] (or with what ended the connection first, such as
    /// [`ClientError::WriteTimeout`]). Returns the child's exit status, if there is a child.
    pub async fn close(self) -> Result<Option<ExitStatus>> {
        let inner = &self.inner;
        let grace = inner.options.close_timeout;
        let shut = tokio::time::timeout(grace, inner.shared.shutdown_writer()).await;
        if let Ok(Err(e)) = shut {
            tracing::debug!("closing the write half: {e}");
        }
        let child = lock(&inner.child).take();
        let status = match child {
            Some(mut child) => {
                match tokio::time::timeout(grace, child.wait()).await {
                    Ok(status) => Some(status?),
                    Err(_) => {
                        tracing::warn!("the server did not exit within {grace:?} of closing its stdin: killing it");
                        child.kill().await?;
                        Some(child.wait().await?)
                    }
                }
            }
            None => None,
        };
        // Give the reader a moment to drain what the server sent before closing.
        let tasks: Vec<JoinHandle<()>> = lock(&inner.tasks).drain(..).collect();
        for mut task in tasks {
            if tokio::time::timeout(Duration::from_millis(100), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
        inner.shared.close(&ClientError::Closed);
        Ok(status)
    }
}
