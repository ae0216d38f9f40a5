//! An async MCP client: child-process stdio, TCP, Unix sockets, any byte stream or
//! Streamable HTTP; both protocol eras.
//!
//! The protocol is the core's sans-IO [`mcp_rs_core::client::Client`]: one driver task owns
//! it, writes every request through it and feeds it every frame the transport reads. API
//! calls are commands to that task; results come back as typed payloads (see the table
//! of calls below). Requests time out ([`ClientOptions::request_timeout`], or per call with
//! [`CallOptions`]); a timed-out, [cancelled](Client::cancel) or dropped request sends
//! `notifications/cancelled` to the server (never for `initialize`).
//!
//! | area | calls |
//! |---|---|
//! | tools | [`list_tools`](Client::list_tools) (every page), [`list_tools_page`](Client::list_tools_page), [`call_tool`](Client::call_tool), [`call_tool_with`](Client::call_tool_with) (progress, timeout, log level, cancellation), `call_tool_validated` (feature `validate`: `structuredContent` checked against the `outputSchema`) |
//! | resources | [`list_resources`](Client::list_resources), [`list_resource_templates`](Client::list_resource_templates), [`read_resource`](Client::read_resource), [`subscribe`](Client::subscribe), [`unsubscribe`](Client::unsubscribe) |
//! | prompts | [`list_prompts`](Client::list_prompts), [`get_prompt`](Client::get_prompt) |
//! | other | [`complete`](Client::complete), [`set_log_level`](Client::set_log_level), [`ping`](Client::ping), [`server_details`](Client::server_details) |
//! | from the server | [`on_notification`](Client::on_notification), [`notifications`](Client::notifications), [`listen`](Client::listen) (2026-07-28); sampling, elicitation and roots handlers in [`ClientOptions`] (they also answer 2026-07-28 `input_required` rounds, at most [`ClientOptions::max_input_rounds`] per request) |
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
//! | requests in flight | [`MAX_IN_FLIGHT`] | the call fails with [`ClientError::Refused`] |
//! | one outgoing request | [`MAX_OUTGOING_FRAME`] | the call fails with [`ClientError::TooLarge`] |
//! | 2026-07-28 `input_required` rounds of one request | [`ClientOptions::max_input_rounds`] | the call fails with [`ClientError::Malformed`] |
//! | the handlers answering a round | the request's timeout | the call fails with [`ClientError::Timeout`] |
//! | answers to the server's requests queued | [`MAX_QUEUED_REPLY_BYTES`] | the connection closes |
//! | [`notifications`](Client::notifications) not yet received | [`MAX_QUEUED_NOTIFICATIONS`] | further ones are dropped and counted ([`Client::dropped_notifications`]) |
//! | progress in a bounded channel | its capacity | further ones are dropped and counted |
//!
//! After the connection closed, every call fails at once with [`ClientError::Closed`].
//!
//! Requests from the server: `ping` is answered by the core; `sampling/createMessage`,
//! `elicitation/create` and `roots/list` by the handlers registered in
//! [`ClientOptions`] (their capabilities are declared only when registered); anything
//! else with -32601.
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
//! // 2026-07-28 over TCP: server/discover, then version and capabilities in every _meta.
//! let modern = Client::connect_tcp_with("127.0.0.1:4000", ClientOptions::with_era(Era::Modern)).await?;
//! let details = modern.server_details().unwrap();
//! println!("{:?} supports {:?}", details.server_info, details.supported_versions);
//! # Ok(())
//! # }
//! ```

mod api;
#[cfg(feature = "http")]
pub mod auth;
mod driver;
mod error;
mod handlers;
#[cfg(feature = "http")]
mod http;
mod link;
#[cfg(feature = "http")]
pub(crate) mod net;
#[cfg(feature = "oauth")]
pub mod oauth;
mod request;
mod results;
mod shared;
mod skills;
mod stream;
mod tasks;
mod types;

use std::future::Future;
#[cfg(unix)]
use std::path::Path;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, ChildStderr, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use driver::{Command as DriverCommand, Setup};
pub use error::{ClientError, Result};
pub use handlers::{apply_defaults, Handler, HandlerError, HandlerFuture, Handlers};
use link::Link;
pub use mcp_rs_core::model::logging::LogLevel;
pub use mcp_rs_core::ListKind;
pub use request::CompletionRef;
pub use results::{
    CallToolResult, Completion, GetPromptResult, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, Root, Tool, ToolsPage,
};
use shared::{lock, Shared};
pub use skills::{DynamicMarker, LoadedSkill, SkillContent, SkillEntry, SkillFile, SkillResources};
pub use tasks::{TaskFailure, TaskHandle, TaskInfo, TaskStart, TaskStatus, MIN_TASK_POLL};
pub use types::{
    CallOptions, ClientOptions, Era, Implementation, Notification, Progress, ProgressSink,
    ServerDetails, MAX_INPUT_ROUNDS,
};

/// Most pages a `list_*` call follows before giving up.
pub const MAX_PAGES: usize = 10_000;

/// Capacity of each [`Client::notifications`] channel: a notification that finds it full is
/// dropped and counted in [`Client::dropped_notifications`] (notifications are fire-and-forget
/// in MCP; a consumer that falls this far behind cannot make the client grow).
pub const MAX_QUEUED_NOTIFICATIONS: usize = 1024;

/// Frames the client queues for a server that does not read before it gives up on it.
pub const MAX_QUEUED_LINES: usize = 4096;

/// Bytes of answers to the server's own requests (`ping`, handler answers, -32601) the
/// client queues before it gives up on the connection.
pub const MAX_QUEUED_REPLY_BYTES: usize = 16 << 20;

/// Requests one client can have in flight at once (the core's request slots).
pub const MAX_IN_FLIGHT: usize = 1024;

/// Longest request the client writes (64 MiB).
pub const MAX_OUTGOING_FRAME: usize = 64 << 20;

/// A connection to one MCP server. Cheap to clone (clones share the connection); the
/// connection ends when the last clone is dropped (a child process is killed) or with
/// [`close`](Client::close).
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    commands: mpsc::UnboundedSender<DriverCommand>,
    options: ClientOptions,
    child: Mutex<Option<Child>>,
    stderr: Mutex<Option<ChildStderr>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
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
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

/// A request in flight: a future of its result that also knows the call's id.
///
/// The request is sent when the handle is created, whether or not it is awaited. Dropping the
/// handle before the response arrives cancels the request (`notifications/cancelled`).
#[must_use = "dropping a CallHandle cancels the request"]
pub struct CallHandle<T> {
    id: u64,
    rx: oneshot::Receiver<Result<Value>>,
    decode: fn(Value) -> Result<T>,
    commands: mpsc::UnboundedSender<DriverCommand>,
    shared: Arc<Shared>,
    done: bool,
}

impl<T> CallHandle<T> {
    /// The id of the call (for [`Client::cancel`]).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Cancels the request: awaiting the handle then gives [`ClientError::Cancelled`] and
    /// the server is sent `notifications/cancelled` with `reason`. Returns whether it was
    /// still pending.
    pub fn cancel(&self, reason: Option<&str>) -> bool {
        cancel(&self.shared, &self.commands, self.id, reason)
    }
}

fn cancel(
    shared: &Shared,
    commands: &mpsc::UnboundedSender<DriverCommand>,
    call: u64,
    reason: Option<&str>,
) -> bool {
    if !lock(&shared.live).remove(&call) {
        return false;
    }
    let reason = reason.map(str::to_owned);
    commands
        .send(DriverCommand::Cancel { call, reason })
        .is_ok()
}

impl<T> Future for CallHandle<T> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        let outcome = match Pin::new(&mut self.rx).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(outcome)) => outcome,
            Poll::Ready(Err(_)) => Err(self.shared.closed_error()),
        };
        self.done = true;
        Poll::Ready(outcome.and_then(self.decode))
    }
}

impl<T> Drop for CallHandle<T> {
    fn drop(&mut self) {
        if !self.done {
            let reason = Some("request dropped by the client");
            cancel(&self.shared, &self.commands, self.id, reason);
        }
    }
}

impl<T> std::fmt::Debug for CallHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallHandle")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
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
        Client::over_stream(stdout, stdin, options, Some(child), stderr).await
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
        Client::over_stream(reader, writer, options, None, None).await
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`) with default
    /// options (legacy era) and performs the handshake.
    #[cfg(feature = "http")]
    pub async fn connect_http(url: &str) -> Result<Client> {
        Client::connect_http_with(url, ClientOptions::default()).await
    }

    /// [`connect_http`](Client::connect_http) with options (e.g. [`Era::Modern`] for
    /// stateless 2026-07-28 requests). Each message is one POST; session ids, protocol
    /// headers, SSE responses and their resumption are handled by the transport (see
    /// `client/http.rs`).
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
        let http_client = net::http_client(&options.root_certificates)
            .map_err(|e| ClientError::Malformed(e.to_string()))?;
        let shared = Arc::new(Shared::default());
        // The bridge is not aborted with the client: when the driver ends it ends the
        // session (DELETE, bounded) and stops by itself.
        let (link, _bridge) = http::start(http::Setup {
            http: http_client,
            url,
            max_message: options.max_line,
            authorizer: options.authorizer.clone(),
            headers: options.headers.clone(),
            tool_headers: Arc::clone(&shared.tool_headers),
            reply_bytes: Arc::clone(&shared.reply_bytes),
        });
        Client::start(link, Vec::new(), shared, options, None, None).await
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
        Client::over_stream(reader, writer, options, None, None).await
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
        Client::over_stream(reader, writer, options, None, None).await
    }

    async fn over_stream<R, W>(
        reader: R,
        writer: W,
        options: ClientOptions,
        child: Option<Child>,
        stderr: Option<ChildStderr>,
    ) -> Result<Client>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared::default());
        let (link, tasks) = stream::start(
            reader,
            writer,
            options.max_line,
            options.line_timeout,
            options.write_timeout,
            Arc::clone(&shared.reply_bytes),
        );
        Client::start(link, tasks, shared, options, child, stderr).await
    }

    /// Starts the driver over `link` and waits for the handshake.
    async fn start(
        link: Link,
        mut tasks: Vec<JoinHandle<()>>,
        shared: Arc<Shared>,
        options: ClientOptions,
        child: Option<Child>,
        stderr: Option<ChildStderr>,
    ) -> Result<Client> {
        {
            let mut known = lock(&shared.tool_headers);
            for tool in &options.known_tools {
                let text = tool.input_schema.to_string();
                let raw = mcp_rs_core::wire::json::parse(text.as_bytes(), Default::default());
                if let Some(marks) = raw.ok().and_then(shared::marks_of) {
                    known.insert(tool.name.clone(), marks);
                }
            }
        }
        let (commands, rx) = mpsc::unbounded_channel();
        let (ready, handshake) = oneshot::channel();
        let setup = Setup::new(&options);
        tasks.push(tokio::spawn(driver::run(
            setup,
            Arc::clone(&shared),
            link,
            rx,
            ready,
        )));
        let client = Client {
            inner: Arc::new(Inner {
                shared,
                commands,
                options,
                child: Mutex::new(child),
                stderr: Mutex::new(stderr),
                tasks: Mutex::new(tasks),
            }),
        };
        match handshake.await {
            Ok(Ok(())) => Ok(client),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(client.inner.shared.closed_error()),
        }
    }

    // ---- state ------------------------------------------------------------------------------

    /// What the handshake reported (`initialize` or `server/discover`).
    pub fn server_details(&self) -> Option<ServerDetails> {
        lock(&self.inner.shared.details).clone()
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> String {
        lock(&self.inner.shared.version)
            .map(|v| v.as_str().to_owned())
            .unwrap_or_default()
    }

    /// Whether the client speaks a 2026 revision (also after [`Era::Auto`] chose it).
    pub fn is_modern(&self) -> bool {
        lock(&self.inner.shared.version).is_some_and(|v| v.is_modern())
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.shared.closed.load(Ordering::Acquire)
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

    // ---- closing ----------------------------------------------------------------------------

    /// Ends the connection: writes what is queued and closes the write half (a child's
    /// stdin; over HTTP, DELETE of the session), waiting at most
    /// [`ClientOptions::close_timeout`] (less if the server reads nothing for
    /// [`ClientOptions::write_timeout`]); then for a child waits up to `close_timeout` for
    /// it to exit, killing it after that. Requests still pending fail with
    /// [`ClientError::Closed`] (or with what ended the connection first, such as
    /// [`ClientError::WriteTimeout`]). Returns the child's exit status, if there is a child.
    pub async fn close(self) -> Result<Option<ExitStatus>> {
        let inner = &self.inner;
        let grace = inner.options.close_timeout;
        let (ack, acked) = oneshot::channel();
        if inner.commands.send(DriverCommand::Shutdown(ack)).is_ok() {
            if let Ok(Ok(Err(e))) = tokio::time::timeout(grace, acked).await {
                tracing::debug!("closing the write half: {e}");
            }
        }
        let child = lock(&inner.child).take();
        let status = match child {
            Some(mut child) => match tokio::time::timeout(grace, child.wait()).await {
                Ok(status) => Some(status?),
                Err(_) => {
                    tracing::warn!(
                        "the server did not exit within {grace:?} of closing its stdin: killing it"
                    );
                    child.kill().await?;
                    Some(child.wait().await?)
                }
            },
            None => None,
        };
        // Give the driver a moment to take what the server sent before closing.
        let tasks: Vec<JoinHandle<()>> = lock(&inner.tasks).drain(..).collect();
        for mut task in tasks {
            if tokio::time::timeout(Duration::from_millis(100), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
        inner.shared.closed.store(true, Ordering::Release);
        Ok(status)
    }
}
