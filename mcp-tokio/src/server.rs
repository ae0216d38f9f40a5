//! Servers: one drive loop per connection around a `mcp_rs_core::Session`.

#[cfg(feature = "socket")]
use std::io;
use std::sync::Arc;

use mcp_rs_core::{Config, ListKind, ServerHandler};
#[cfg(feature = "socket")]
use std::time::Duration;
#[cfg(feature = "socket")]
use tokio::io::AsyncWriteExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
#[cfg(feature = "socket")]
use tokio::sync::Semaphore;

#[cfg(feature = "socket")]
use crate::clock::now_ms;
use crate::config::{Limits, ServerInfo};
use crate::context::Context;
use crate::deferred::{AsyncHandlers, CompletionRequest, PromptRequest, ResourceRequest};
use crate::driver::Connection;
use crate::error::Error;
use crate::keys::{random_key, KeySource, Keys};
use crate::output::{CompletionOutput, ErrorReply, PromptOutput, ResourceOutput};
use crate::registry::Tools;
use crate::state::{OwnProvider, Policy, Provider, Shared, COUNTED_LISTS};
#[cfg(feature = "socket")]
use crate::state::{Tracker, SHED_MIN_IDLE};

/// An MCP server: identity, session policy, limits and a shared tool registry. Cheap to
/// clone; every connection gets its own session.
#[derive(Clone, Debug)]
pub struct Server {
    pub(crate) inner: Arc<Shared>,
}

/// What tells a server to reload its keys besides file changes: SIGHUP on Unix.
#[cfg(unix)]
type Hangup = tokio::signal::unix::Signal;
#[cfg(not(unix))]
type Hangup = ();

impl Server {
    /// A server with default config (and a [`random_key`]) and limits.
    pub fn new(info: ServerInfo, tools: Tools) -> Self {
        Self::with(info, Config::new(random_key()), Limits::default(), tools)
    }

    /// Adds resources, prompts and completion (the [`ServerHandler`] methods other than
    /// `tools`), answered inside each connection's drive loop; what the provider defers
    /// (`Dispatch::Defer`) goes to the server's async handlers
    /// ([`async_prompts`](Self::async_prompts), [`async_resources`](Self::async_resources),
    /// [`async_completion`](Self::async_completion)). Call before cloning the server.
    ///
    /// One instance serves every connection, **serialised**: it is locked for each message
    /// that reaches it, so connections wait for each other there. A provider that can be
    /// made per connection (e.g. a handle on shared, internally synchronised state) runs
    /// without that lock through [`provider_factory`](Self::provider_factory).
    pub fn provide(mut self, provider: impl ServerHandler + Send + 'static) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.inner) {
            shared.provider = Some(Provider::Shared(Arc::new(std::sync::Mutex::new(provider))));
        } else {
            tracing::error!("Server::provide called after the server was cloned; ignored");
        }
        self
    }

    /// Serves the tasks extension (SEP-2663) from `tasks`: the extension is declared to
    /// 2026-07-28 clients, `tasks/get`, `tasks/update` and `tasks/cancel` are answered from
    /// the table, and the tools registered with [`ToolDef::task`](crate::ToolDef::task)
    /// run as tasks for clients that negotiated it. Tools report to the same table through
    /// [`Context::task`](crate::Context::task) ([`TaskHandle::with`](crate::TaskHandle::with)):
    /// see [`mcp_rs_core::model::tasks`]. Every change made that way or by a session is
    /// announced as `notifications/tasks` to the `subscriptions/listen` streams subscribed
    /// to the task (`notifications.taskIds`); a change made through another clone of
    /// `tasks` is not watched (it is announced with the next watched one).
    pub fn tasks(mut self, tasks: crate::SharedTasks) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.inner) {
            shared.tasks = Some(crate::context::TaskTableRef::new(tasks));
        } else {
            tracing::error!("Server::tasks called after the server was cloned; ignored");
        }
        self
    }

    /// Like [`provide`](Self::provide), without a lock shared by connections: `factory` makes
    /// one provider for each connection when it starts (for each socket or stdio connection,
    /// each legacy HTTP session, and each stateless 2026-07-28 HTTP request), and only that
    /// connection's drive loop calls it, so connections never wait for each other. State
    /// that all connections must see lives behind the instances (an `Arc` they share), with
    /// its own synchronisation. Replaces an earlier [`provide`](Self::provide). Call before
    /// cloning the server.
    pub fn provider_factory<P, F>(mut self, factory: F) -> Self
    where
        F: Fn() -> P + Send + Sync + 'static,
        P: ServerHandler + Send + 'static,
    {
        if let Some(shared) = Arc::get_mut(&mut self.inner) {
            shared.provider = Some(Provider::PerConnection(Arc::new(move || {
                Box::new(factory()) as OwnProvider
            })));
        } else {
            tracing::error!("Server::provider_factory called after the server was cloned; ignored");
        }
        self
    }

    /// Renders the `prompts/get` requests that the provider's prompt set defers (its
    /// `get_prompt` returns `Dispatch::Defer`, the default) as tokio tasks: `f` gets the
    /// request and a [`Context`] (e.g. to ask a legacy client for input with
    /// [`Context::request`]). See [`deferred`](crate::deferred) for the model. Call before
    /// cloning the server.
    pub fn async_prompts<F, Fut>(self, f: F) -> Self
    where
        F: Fn(PromptRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<PromptOutput, ErrorReply>> + Send + 'static,
    {
        self.async_handler("async_prompts", |h| {
            h.prompts = Some(Arc::new(move |r, c| Box::pin(f(r, c))));
        })
    }

    /// Reads the resources that the provider's resource set defers (its `read` returns
    /// `Dispatch::Defer`, the default: a provider may only list) as tokio tasks: `f` gets
    /// the request and a [`Context`]. An answer with no contents gets the revision's
    /// "resource not found" error. Call before cloning the server.
    pub fn async_resources<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ResourceRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ResourceOutput, ErrorReply>> + Send + 'static,
    {
        self.async_handler("async_resources", |h| {
            h.resources = Some(Arc::new(move |r, c| Box::pin(f(r, c))));
        })
    }

    /// Answers the `completion/complete` requests that the provider's completions defer
    /// (its `complete` returns `Dispatch::Defer`) as tokio tasks: `f` gets the request and
    /// a [`Context`]. Call before cloning the server.
    pub fn async_completion<F, Fut>(self, f: F) -> Self
    where
        F: Fn(CompletionRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<CompletionOutput, ErrorReply>> + Send + 'static,
    {
        self.async_handler("async_completion", |h| {
            h.completion = Some(Arc::new(move |r, c| Box::pin(f(r, c))));
        })
    }

    fn async_handler(mut self, what: &str, set: impl FnOnce(&mut AsyncHandlers)) -> Self {
        match Arc::get_mut(&mut self.inner) {
            Some(shared) => set(&mut shared.async_handlers),
            None => tracing::error!("Server::{what} called after the server was cloned; ignored"),
        }
        self
    }

    /// Announces that a list changed: every connected session marks its cursors of that
    /// list stale and notifies its client (legacy sessions, and 2026-07-28 listen streams
    /// that opted in). Changes made through the [`Tools`] registry are announced by it;
    /// this is for tool sets of a provider, prompts, resources and templates.
    pub fn list_changed(&self, kind: ListKind) {
        if let Some(index) = COUNTED_LISTS.iter().position(|k| *k == kind) {
            self.inner.lists.send_modify(|c| c[index] += 1);
        }
    }

    /// A server with explicit session config and limits.
    pub fn with(info: ServerInfo, config: Config, limits: Limits, tools: Tools) -> Self {
        let (shutdown, _) = watch::channel(false);
        let (lists, _) = watch::channel([0; COUNTED_LISTS.len()]);
        Server {
            inner: Arc::new(Shared {
                info,
                keys: std::sync::RwLock::new(Keys::of(&config)),
                config,
                limits,
                tools,
                provider: None,
                tasks: None,
                async_handlers: AsyncHandlers::default(),
                lists,
                shutdown,
            }),
        }
    }

    /// Replaces the secret keys (a rotation: see [`keys`](crate::keys)). Every session that
    /// starts from now on uses them: each 2026-07-28 HTTP request, new legacy sessions and
    /// connections. Sessions already open keep the keys they started with (their cursors
    /// and state only come back to them).
    pub fn set_keys(&self, keys: Keys) {
        *self
            .inner
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = keys;
    }

    /// The keys new sessions get.
    pub fn keys(&self) -> Keys {
        *self
            .inner
            .keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Reloads the keys from `source` whenever the process receives SIGHUP (Unix) and, for a
    /// file, when it changes (its modification time, size or inode, looked at every
    /// `poll`; `None` for SIGHUP only), until the server shuts down. Call it from within a
    /// tokio runtime, after loading the keys once (so that a bad file fails start-up).
    ///
    /// A reload that fails (unreadable file, invalid content) is logged with `tracing` and
    /// changes nothing: the server goes on with the keys it has. A file replaced by a
    /// rename is picked up like one rewritten in place.
    pub fn reload_keys(
        &self,
        source: KeySource,
        poll: Option<std::time::Duration>,
    ) -> tokio::task::JoinHandle<()> {
        // The signal handler and the file's first stamp are taken now, not when the task
        // first runs: a change or a signal right after this call is not missed.
        #[cfg(unix)]
        let hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGHUP; keys reload on file changes only");
                None
            }
        };
        #[cfg(not(unix))]
        let hangup: Option<Hangup> = None;
        let path = match (&source, poll) {
            (KeySource::File(path), Some(_)) => Some(path.clone()),
            _ => None,
        };
        let stamp = path.as_deref().and_then(crate::keys::file_stamp);
        let server = self.clone();
        tokio::spawn(async move { server.reload_loop(source, hangup, path, stamp, poll).await })
    }

    async fn reload_loop(
        self,
        source: KeySource,
        mut hangup: Option<Hangup>,
        path: Option<std::path::PathBuf>,
        mut stamp: Option<(std::time::SystemTime, u64, u64)>,
        poll: Option<std::time::Duration>,
    ) {
        let mut stop = self.inner.shutdown.subscribe();
        let every = poll.unwrap_or(std::time::Duration::from_secs(3600));
        let mut tick = tokio::time::interval(every.max(std::time::Duration::from_millis(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let hup = async {
                match hangup.as_mut() {
                    #[cfg(unix)]
                    Some(h) => h.recv().await,
                    _ => std::future::pending().await,
                }
            };
            let why = tokio::select! {
                _ = stop.wait_for(|s| *s) => return,
                Some(()) = hup => "SIGHUP",
                _ = tick.tick(), if path.is_some() => {
                    let now = path.as_deref().and_then(crate::keys::file_stamp);
                    if now == stamp {
                        continue;
                    }
                    stamp = now;
                    "the file changed"
                }
            };
            match source.load() {
                Ok(keys) => {
                    let before = self.keys();
                    self.set_keys(keys);
                    tracing::info!(
                        %source,
                        trigger = why,
                        current_changed = before.current != keys.current,
                        previous_not_after_ms = keys.previous.map(|p| p.not_after_ms),
                        "keys reloaded"
                    );
                }
                Err(e) => {
                    tracing::error!(%source, trigger = why, error = %e, "keys not reloaded; keeping the current ones");
                }
            }
        }
    }

    /// The tool registry (add or remove tools at run time).
    pub fn tools(&self) -> &Tools {
        &self.inner.tools
    }

    /// Asks every connection and listener of this server to stop.
    pub fn shutdown(&self) {
        self.inner.shutdown.send_replace(true);
    }

    /// A handle that stops this server from elsewhere.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            server: self.clone(),
        }
    }

    /// Serves one connection until EOF, an I/O error, shutdown, or one of the socket
    /// timeouts of [`Limits`] (write, idle, line).
    pub async fn serve_connection<R, W>(&self, reader: R, writer: W) -> Result<(), Error>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let policy = Policy::sockets(&self.inner.limits);
        Connection::run(&self.inner, reader, writer, policy).await
    }

    /// Serves stdin/stdout until stdin closes, Ctrl-C (SIGINT), SIGTERM (Unix), or
    /// shutdown. Only protocol frames go to stdout. Once closing, replies still owed are
    /// written for at most [`Limits::close_timeout`], so a client that stopped reading
    /// cannot keep the process alive.
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        let server = self.clone();
        #[cfg(unix)]
        let terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::spawn(async move {
            #[cfg(unix)]
            let terminated = async move {
                match terminate {
                    Some(mut t) => {
                        t.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            #[cfg(not(unix))]
            let terminated = std::future::pending::<()>();
            let interrupted = async {
                if tokio::signal::ctrl_c().await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                () = interrupted => {}
                () = terminated => {}
            }
            server.shutdown();
        });
        // Pipes: non-blocking, on this runtime; otherwise a reader and a writer thread (see
        // `stdio`).
        let (stdin, stdout, ended) = crate::stdio::open();
        // A person may type at a stdio server, and its client may go quiet for hours: no
        // timeouts while it serves. Once stdin ends, writes are bounded (`close_timeout`).
        let policy = Policy {
            input_ended: Some(ended),
            ..Policy::default()
        };
        Connection::run(&self.inner, stdin, stdout, policy).await
    }

    /// Accepts TCP connections until shutdown; one session per connection.
    #[cfg(feature = "socket")]
    pub async fn serve_tcp(&self, listener: tokio::net::TcpListener) -> Result<(), Error> {
        self.accept_loop(|| async {
            let (stream, peer) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            Ok((stream, format!("tcp {peer}")))
        })
        .await
    }

    /// Accepts Unix socket connections until shutdown; one session per connection.
    #[cfg(all(feature = "socket", unix))]
    pub async fn serve_unix(&self, listener: tokio::net::UnixListener) -> Result<(), Error> {
        self.accept_loop(|| async { Ok((listener.accept().await?.0, "unix".to_string())) })
            .await
    }

    /// Runs connections until shutdown, then waits for them to close. A failed `accept`
    /// (e.g. out of file descriptors) is logged and retried after a pause: it never stops
    /// the server.
    #[cfg(feature = "socket")]
    async fn accept_loop<S, A, F>(&self, mut accept: A) -> Result<(), Error>
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
        A: FnMut() -> F,
        F: std::future::Future<Output = io::Result<(S, String)>>,
    {
        let mut stop = self.inner.shutdown.subscribe();
        let permits = Arc::new(Semaphore::new(self.inner.limits.max_connections));
        let mut tasks = tokio::task::JoinSet::new();
        let mut live: Vec<Arc<Tracker>> = Vec::new();
        loop {
            tokio::select! {
                // (mapped to `()` so the watch guard is not held across the pause below)
                () = async { let _ = stop.wait_for(|s| *s).await; } => break,
                accepted = accept() => match accepted {
                    Ok((stream, peer)) => {
                        self.spawn_connection(&mut tasks, &permits, &mut live, stream, peer);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed; retrying");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                },
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        }
        while tasks.join_next().await.is_some() {}
        Ok(())
    }

    /// Serves a new connection; at the limit, first sheds the connection that has been
    /// idle longest (at least [`SHED_MIN_IDLE`]), and refuses with a JSON-RPC error line
    /// only when none is idle.
    #[cfg(feature = "socket")]
    fn spawn_connection<S>(
        &self,
        tasks: &mut tokio::task::JoinSet<()>,
        permits: &Arc<Semaphore>,
        live: &mut Vec<Arc<Tracker>>,
        stream: S,
        peer: String,
    ) where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let server = self.clone();
        let tracker = Arc::new(Tracker::default());
        if let Ok(permit) = permits.clone().try_acquire_owned() {
            live.push(Arc::clone(&tracker));
            tasks.spawn(server.serve_tracked(stream, peer, tracker, permit));
            return;
        }
        // Forget connections that ended (their task dropped its tracker).
        live.retain(|t| Arc::strong_count(t) > 1);
        let oldest_idle = now_ms().saturating_sub(SHED_MIN_IDLE.as_millis() as u64);
        let victim = live
            .iter()
            .filter_map(|t| Some((t.idle_since()?, t)))
            .filter(|(since, _)| *since <= oldest_idle)
            .min_by_key(|(since, _)| *since);
        if let Some((since, victim)) = victim {
            if victim.shed(since) {
                tracing::debug!(%peer, "connection limit reached: shedding the longest idle connection");
                live.push(Arc::clone(&tracker));
                let permits = Arc::clone(permits);
                tasks.spawn(async move {
                    // The shed connection writes what it owes and closes, freeing its permit.
                    let wait = server
                        .inner
                        .limits
                        .write_timeout
                        .min(Duration::from_secs(5));
                    match tokio::time::timeout(wait, permits.acquire_owned()).await {
                        Ok(Ok(permit)) => server.serve_tracked(stream, peer, tracker, permit).await,
                        _ => server.refuse(stream, peer).await,
                    }
                });
                return;
            }
        }
        tasks.spawn(server.refuse(stream, peer));
    }

    #[cfg(feature = "socket")]
    async fn serve_tracked<S>(
        self,
        stream: S,
        peer: String,
        tracker: Arc<Tracker>,
        permit: tokio::sync::OwnedSemaphorePermit,
    ) where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let (r, w) = tokio::io::split(stream);
        let mut policy = Policy::sockets(&self.inner.limits);
        policy.tracker = Some(tracker);
        match Connection::run(&self.inner, r, w, policy).await {
            Ok(()) => tracing::debug!(%peer, "connection closed"),
            Err(e) => tracing::debug!(%peer, error = %e, "connection ended"),
        }
        drop(permit);
    }

    /// Answers a connection over the limit with one JSON-RPC error line and closes it.
    #[cfg(feature = "socket")]
    async fn refuse<S>(self, mut stream: S, peer: String)
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        tracing::warn!(%peer, "connection limit reached");
        let error = serde_json::json!({
            "jsonrpc": "2.0",
            "error": {
                "code": mcp_rs_core::wire::jsonrpc::code::INTERNAL_ERROR,
                "message": "Too many connections",
                "data": {"limit": self.inner.limits.max_connections},
            },
        });
        let line = format!("{error}\n");
        let _ = stream.write_all(line.as_bytes()).await;
        let _ = stream.shutdown().await;
    }
}

/// Pending connections a listener from [`bind_tcp`] queues before `accept` (tokio's own
/// `TcpListener::bind` queues 128, which a burst of clients overflows: their SYNs are
/// dropped and retried a second later).
#[cfg(any(feature = "socket", feature = "http"))]
pub const LISTEN_BACKLOG: u32 = 1024;

/// A TCP listener on `addr` (resolved; the first address is used) with `SO_REUSEADDR` and a
/// backlog of [`LISTEN_BACKLOG`], for [`Server::serve_tcp`] or `serve_http`.
#[cfg(any(feature = "socket", feature = "http"))]
pub async fn bind_tcp(addr: &str) -> std::io::Result<tokio::net::TcpListener> {
    let addr = tokio::net::lookup_host(addr)
        .await?
        .next()
        .ok_or_else(|| std::io::Error::other("the address resolves to nothing"))?;
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Stops a [`Server`] (its listeners and connections) when [`shutdown`](Self::shutdown) is
/// called.
#[derive(Clone, Debug)]
pub struct ShutdownHandle {
    server: Server,
}

impl ShutdownHandle {
    /// Requests shutdown.
    pub fn shutdown(&self) {
        self.server.shutdown();
    }
}
