//! The socket side of [`Server::serve_http_with`] and [`Server::serve_http_per_core`]: the
//! connection cap with its overflow slots, hyper's HTTP/1.1 connection with the head
//! timeout, head limit and write timeout, and the shutdown drain. One [`Front`] is shared by
//! every runtime that serves connections, so that the cap, the session table and the
//! shutdown are the same whether connections run on one runtime or on one per core.

use std::convert::Infallible;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::head_timer::HeadTimer;
use super::OVERFLOW_CONNECTIONS;
use super::{rpc_error, HttpConfig, McpHttpService, State, MIN_HEAD, SHED_WAIT};
use crate::server::Server;

/// What an accepted socket was given: a connection slot, or one of the overflow slots (to
/// wait briefly for a slot, else to be answered 503).
pub(super) type Slot = Result<OwnedSemaphorePermit, OwnedSemaphorePermit>;

/// The state shared by the accept loop and every connection, on whatever runtime.
pub(super) struct Front {
    pub(super) service: McpHttpService,
    permits: Arc<Semaphore>,
    overflow: Arc<Semaphore>,
    /// Bumped when a connection arrives at the limit (and at shutdown): idle connections
    /// close.
    shed: tokio::sync::watch::Sender<u64>,
    max_head: usize,
}

impl Front {
    pub(super) fn new(server: &Server, config: HttpConfig) -> Arc<Front> {
        let endpoint = Some(config.path.clone());
        let service = McpHttpService {
            state: Arc::new(State::new(server.clone(), config, endpoint)),
        };
        let max_head = service.state.config.max_header_bytes.max(MIN_HEAD);
        Arc::new(Front {
            permits: Arc::new(Semaphore::new(server.inner.limits.max_connections)),
            overflow: Arc::new(Semaphore::new(OVERFLOW_CONNECTIONS)),
            shed: tokio::sync::watch::channel(0u64).0,
            max_head,
            service,
        })
    }

    pub(super) fn state(&self) -> &Arc<State> {
        &self.service.state
    }

    /// A connection slot for a socket just accepted; at the limit, one of the few overflow
    /// slots; beyond those `None`: the socket is to be closed at once (idle connections are
    /// asked to close meanwhile).
    pub(super) fn admit(&self, peer: std::net::SocketAddr) -> Option<Slot> {
        match self.permits.clone().try_acquire_owned() {
            Ok(p) => Some(Ok(p)),
            Err(_) => match self.overflow.clone().try_acquire_owned() {
                Ok(o) => Some(Err(o)),
                Err(_) => {
                    self.shed.send_modify(|g| *g += 1);
                    tracing::debug!(%peer, "connection closed at once: every slot is taken");
                    None
                }
            },
        }
    }

    /// Asks every connection to close once it is idle.
    pub(super) fn shed(&self) {
        self.shed.send_modify(|g| *g += 1);
    }

    /// Serves one admitted connection until it closes (on the runtime this runs on; the
    /// sessions its requests start run there too).
    pub(super) async fn connection(
        self: Arc<Self>,
        stream: tokio::net::TcpStream,
        peer: std::net::SocketAddr,
        slot: Slot,
    ) {
        let _ = stream.set_nodelay(true);
        let state = self.state().clone();
        let header_timeout = state.config.header_timeout;
        // A write that makes no progress for `write_timeout` fails: hyper then closes the
        // connection. (Boxed: the timer makes the stream `!Unpin`.)
        let mut io = tokio_io_timeout::TimeoutStream::new(stream);
        io.set_write_timeout(Some(state.config.write_timeout));
        let io = Box::pin(io);
        let mut shed_rx = self.shed.subscribe();
        let (permit, overflowed) = match slot {
            Ok(p) => (Some(p), None),
            Err(o) => {
                // At the limit: ask every connection to close once it is idle (keep-alive
                // sockets waiting for a request close at once; busy ones after their
                // response), then wait briefly.
                self.shed();
                let p = tokio::time::timeout(SHED_WAIT, self.permits.clone().acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok);
                // Served: the overflow slot is given back at once.
                let o = p.is_none().then_some(o);
                (p, o)
            }
        };
        shed_rx.borrow_and_update();
        let full = permit.is_none();
        let ip = Some(peer.ip());
        let service = hyper::service::service_fn(move |req: Request<Incoming>| {
            let state = state.clone();
            async move {
                if full {
                    return Ok::<_, Infallible>(state.stamp(rpc_error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        None,
                        -32603,
                        "Too many connections",
                    )));
                }
                Ok(state.serve_from(req, ip).await)
            }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(HeadTimer::new())
            .header_read_timeout(header_timeout)
            .max_buf_size(self.max_head)
            .serve_connection(TokioIo::new(io), service);
        let mut conn = std::pin::pin!(conn);
        let ended = loop {
            tokio::select! {
                ended = conn.as_mut() => break ended,
                Ok(()) = shed_rx.changed() => conn.as_mut().graceful_shutdown(),
            }
        };
        if let Err(e) = ended {
            tracing::debug!(%peer, error = %e, "HTTP connection ended");
        }
        drop((permit, overflowed));
    }

    /// At shutdown: sessions see the shutdown too and close their streams (listen streams
    /// get their closing response); idle connections close at once, the others get
    /// `Limits::drain_timeout` to deliver what they have, then are cut.
    pub(super) async fn drain(&self, tasks: &mut tokio::task::JoinSet<()>) {
        self.state().sessions().live.clear();
        self.shed();
        let grace = self.state().server.inner.limits.drain_timeout;
        let _ =
            tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
        tasks.abort_all();
    }
}
