//! [`Server::serve_http_per_core`]: Streamable HTTP with its connections spread over
//! worker threads that each run a current-thread runtime.
//!
//! On tokio's multi-thread runtime a keep-alive connection's request may be woken on one
//! worker and stolen by another, and every wake-up of a parked worker is a futex call; with
//! many clients that scheduling is a large part of a call's CPU (see `bench/README.md`).
//! Here the accept loop hands each socket, once, to the worker thread with the fewest
//! connections; the connection, the sessions its requests start and their tool calls then
//! run on that thread only, with no work stealing and no cross-thread wake-up per request.
//! Everything else is shared, as with [`Server::serve_http_with`]: one session table (a
//! session may be used from any connection), one connection cap, one shutdown.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::front::{Front, Slot};
use super::HttpConfig;
use crate::error::Error;
use crate::server::Server;

/// A socket handed from the accept loop to a worker, with the slot it was admitted with.
type Handoff = (std::net::TcpStream, std::net::SocketAddr, Slot);

/// One worker thread as the accept loop sees it.
struct Worker {
    sockets: mpsc::UnboundedSender<Handoff>,
    /// Its connections: handed over and not yet closed.
    live: Arc<AtomicUsize>,
}

impl Server {
    /// Serves Streamable HTTP on `listener` until shutdown, as
    /// [`serve_http_with`](Self::serve_http_with) does, with the connections run by
    /// `threads` worker threads of their own (0: one per core the process may use,
    /// [`std::thread::available_parallelism`]), each a current-thread tokio runtime.
    ///
    /// The accept loop and the idle-session sweep run on the caller's runtime; each accepted
    /// socket goes to the worker with the fewest open connections and stays there, with the
    /// sessions its requests start and their tool calls (`tokio::spawn` in a tool handler
    /// spawns on that worker). A request is then served without work stealing or a wake-up
    /// of another thread: on a loaded server this takes less CPU per call than one
    /// multi-thread runtime, and it is what `bench/http.sh` measures. The price: one
    /// long-running or blocking handler delays every connection of its worker (use
    /// `Handler::blocking` or `spawn_blocking` for blocking work), and connections are
    /// spread by count, not by load.
    ///
    /// The session table, the connection cap (`Limits::max_connections` and the overflow
    /// slots), the timeouts and the shutdown are shared by all workers: a legacy session may
    /// be used from any connection. The hand-off queue of each worker holds at most the
    /// connection slots there are. On shutdown every worker drains its connections for
    /// `Limits::drain_timeout`, then this returns.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when a worker thread or its runtime cannot be created (before anything
    /// is served).
    pub async fn serve_http_per_core(
        &self,
        listener: tokio::net::TcpListener,
        config: HttpConfig,
        threads: usize,
    ) -> Result<(), Error> {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        let front = Front::new(self, config);
        let mut workers = Vec::with_capacity(threads);
        let mut done = Vec::with_capacity(threads);
        for n in 0..threads {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (sockets, inbox) = mpsc::unbounded_channel();
            let (finished, ended) = oneshot::channel::<()>();
            let live = Arc::new(AtomicUsize::new(0));
            let (front, counted) = (front.clone(), live.clone());
            std::thread::Builder::new()
                .name(format!("mcp-http-{n}"))
                .spawn(move || {
                    runtime.block_on(work(front, inbox, counted));
                    drop(finished);
                })?;
            workers.push(Worker { sockets, live });
            done.push(ended);
        }
        front.state().start_sweep();
        let mut stop = self.inner.shutdown.subscribe();
        loop {
            tokio::select! {
                () = async { let _ = stop.wait_for(|s| *s).await; } => break,
                accepted = listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(a) => a,
                        Err(e) => {
                            tracing::warn!(error = %e, "accept failed; retrying");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            continue;
                        }
                    };
                    let Some(slot) = front.admit(peer) else { continue };
                    // Out of this runtime's reactor, into the worker's.
                    let stream = match stream.into_std() {
                        Ok(s) => s,
                        Err(e) => {
                            tracing::warn!(%peer, error = %e, "cannot hand a connection over");
                            continue;
                        }
                    };
                    let Some(worker) = workers.iter().min_by_key(|w| w.live.load(Ordering::Relaxed))
                    else {
                        break;
                    };
                    worker.live.fetch_add(1, Ordering::Relaxed);
                    if worker.sockets.send((stream, peer, slot)).is_err() {
                        // The worker has ended (only at shutdown): the socket closes.
                        worker.live.fetch_sub(1, Ordering::Relaxed);
                    }
                }
            }
        }
        // The workers see the shutdown themselves (and the end of their queues) and drain.
        drop(workers);
        for ended in done {
            let _ = ended.await;
        }
        Ok(())
    }
}

/// A worker thread's loop: serves the connections handed to it until shutdown or until
/// the accept loop is gone, then drains them.
async fn work(
    front: Arc<Front>,
    mut sockets: mpsc::UnboundedReceiver<Handoff>,
    live: Arc<AtomicUsize>,
) {
    let mut stop = front.state().server.inner.shutdown.subscribe();
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            () = async { let _ = stop.wait_for(|s| *s).await; } => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            handed = sockets.recv() => {
                let Some((stream, peer, slot)) = handed else { break };
                match tokio::net::TcpStream::from_std(stream) {
                    Ok(stream) => {
                        let (front, live) = (front.clone(), live.clone());
                        tasks.spawn(async move {
                            front.connection(stream, peer, slot).await;
                            live.fetch_sub(1, Ordering::Relaxed);
                        });
                    }
                    Err(e) => {
                        live.fetch_sub(1, Ordering::Relaxed);
                        tracing::warn!(%peer, error = %e, "cannot register a connection");
                    }
                }
            }
        }
    }
    front.drain(&mut tasks).await;
}
