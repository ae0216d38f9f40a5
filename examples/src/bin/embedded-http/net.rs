//! Host sockets as `embedded-io-async` streams, and the executor that runs one future per
//! connection slot: mio (edge-triggered epoll/kqueue) with preallocated events, one waker
//! per slot made at start-up (an `Arc` whose clones allocate nothing), nothing boxed or
//! queued while serving.

use std::cell::Cell;
use std::fmt;
use std::future::{poll_fn, Future};
use std::io::{self, Read as _, Write as _};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use mcp_rs_embedded::http::{Ended, SlotState, TaskWorker};
use mcp_rs_embedded::ErrorKind;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Token};

use crate::{handler, tasks, FixtureServer, HttpSlot};

/// A socket error, by kind (`std::io::Error` is not an `embedded_io::Error`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NetError(io::ErrorKind);

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "socket error: {}", self.0)
    }
}

impl std::error::Error for NetError {}

impl embedded_io_async::Error for NetError {
    fn kind(&self) -> ErrorKind {
        match self.0 {
            io::ErrorKind::ConnectionReset => ErrorKind::ConnectionReset,
            io::ErrorKind::ConnectionAborted => ErrorKind::ConnectionAborted,
            io::ErrorKind::BrokenPipe => ErrorKind::BrokenPipe,
            io::ErrorKind::TimedOut => ErrorKind::TimedOut,
            _ => ErrorKind::Other,
        }
    }
}

/// A non-blocking mio stream as an async one: `WouldBlock` is `Pending` (the socket's
/// readiness event wakes the slot).
pub(crate) struct Sock<'s>(pub(crate) &'s TcpStream);

impl embedded_io_async::ErrorType for Sock<'_> {
    type Error = NetError;
}

impl embedded_io_async::Read for Sock<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, NetError> {
        poll_fn(|_| loop {
            match (&mut &*self.0).read(buf) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Poll::Ready(Err(NetError(e.kind()))),
            }
        })
        .await
    }
}

impl embedded_io_async::Write for Sock<'_> {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, NetError> {
        poll_fn(|_| loop {
            match (&mut &*self.0).write(buf) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Poll::Ready(Err(NetError(e.kind()))),
            }
        })
        .await
    }
    async fn flush(&mut self) -> Result<(), NetError> {
        Ok(())
    }
}

/// A slot's waker: sets its flag; the executor polls flagged slots.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// What the acceptor and a slot's future pass each other.
#[derive(Default)]
struct Handoff {
    conn: Cell<Option<TcpStream>>,
    busy: Cell<bool>,
    ended: Cell<Option<Ended>>,
    state: SlotState,
}

const LISTENER: Token = Token(usize::MAX);

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// The executor: the listener, the slots' futures, their wakers and handoffs.
pub(crate) struct Executor {
    poll: mio::Poll,
    events: Events,
    listener: TcpListener,
    server: &'static FixtureServer,
    tasks: Vec<Task>,
    flags: Vec<Arc<Flag>>,
    wakers: Vec<Waker>,
    /// One timer per future (the slots', then the task workers').
    timers: &'static [Cell<Option<Instant>>],
    handoffs: &'static [Handoff],
    /// `--watch-every`: the period of `test://watched-resource`'s updates, and the next one.
    watch: Option<(Duration, Instant)>,
}

/// A future's timer: the deadline it sleeps until, which the executor's poll waits for
/// (one per future, made at start-up).
#[derive(Clone, Copy)]
pub(crate) struct Timer(&'static Cell<Option<Instant>>);

impl Timer {
    /// Sleeps `d` (the executor polls the future again once it has passed).
    pub(crate) async fn sleep(&self, d: Duration) {
        let until = Instant::now() + d;
        poll_fn(|_| {
            if Instant::now() >= until {
                Poll::Ready(())
            } else {
                self.0.set(Some(until));
                Poll::Pending
            }
        })
        .await;
    }
}

/// One task worker's life: run task work as it is queued.
async fn worker_task(
    server: &'static FixtureServer,
    worker: &'static mut TaskWorker<{ tasks::JOB }>,
    timer: Timer,
) {
    let mut work = tasks::Work::new(timer);
    let _ = server.serve_tasks(worker, &mut work).await;
}

/// The resource the `--watch-every` clock updates.
const WATCHED_URI: &str = "test://watched-resource";

/// One slot's life: take a connection, serve it, close it, again.
async fn slot_task(
    server: &'static FixtureServer,
    slot: &'static mut HttpSlot,
    hand: &'static Handoff,
    timer: Timer,
) {
    let mut runner = handler::Runner { timer };
    loop {
        let stream = poll_fn(|_| match hand.conn.take() {
            Some(s) => Poll::Ready(s),
            None => Poll::Pending,
        })
        .await;
        let ended = server
            .serve_calls(slot, &hand.state, &mut Sock(&stream), &mut runner)
            .await;
        let _ = stream.shutdown(std::net::Shutdown::Both);
        drop(stream);
        hand.ended.set(Some(ended));
        hand.busy.set(false);
    }
}

impl Executor {
    /// Everything set up: after this, serving allocates nothing.
    pub(crate) fn new(
        mut listener: TcpListener,
        server: &'static FixtureServer,
        slots: &'static mut [HttpSlot],
        workers: &'static mut [TaskWorker<{ tasks::JOB }>],
    ) -> io::Result<Self> {
        let poll = mio::Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let handoffs: &'static [Handoff] =
            Box::leak((0..slots.len()).map(|_| Handoff::default()).collect());
        let slot_count = slots.len();
        let timers: &'static [Cell<Option<Instant>>] = Box::leak(
            (0..slot_count + workers.len())
                .map(|_| Cell::new(None))
                .collect(),
        );
        let mut tasks: Vec<Task> = slots
            .iter_mut()
            .zip(handoffs)
            .zip(timers)
            .map(|((slot, hand), t)| Box::pin(slot_task(server, slot, hand, Timer(t))) as Task)
            .collect();
        let worker_timers = timers.get(slot_count..).unwrap_or_default();
        tasks.extend(
            workers
                .iter_mut()
                .zip(worker_timers)
                .map(|(w, t)| Box::pin(worker_task(server, w, Timer(t))) as Task),
        );
        let flags: Vec<Arc<Flag>> = (0..tasks.len())
            .map(|_| Arc::new(Flag(AtomicBool::new(true))))
            .collect();
        let wakers = flags.iter().map(|f| Waker::from(Arc::clone(f))).collect();
        Ok(Executor {
            poll,
            events: Events::with_capacity(256),
            listener,
            server,
            tasks,
            flags,
            wakers,
            timers,
            handoffs,
            watch: None,
        })
    }

    /// `test://watched-resource` changes every `period` ([`FixtureServer::resource_updated`]).
    pub(crate) fn watch_every(&mut self, period: Duration) {
        self.watch = Some((period, Instant::now() + period));
    }

    /// Serves until the listener fails; `ended` hears of every connection that ended.
    pub(crate) fn run(&mut self, mut ended: impl FnMut(Ended)) -> io::Result<()> {
        loop {
            let mut polled = true;
            while polled {
                polled = false;
                for i in 0..self.tasks.len() {
                    if self.flags[i].0.swap(false, Ordering::Acquire) {
                        polled = true;
                        self.poll_task(i);
                    }
                    if let Some(e) = self.handoffs.get(i).and_then(|h| h.ended.take()) {
                        ended(e);
                    }
                }
                for kind in handler::take_changes() {
                    self.server.list_changed(kind);
                }
            }
            let now = Instant::now();
            let timeout = self
                .watch
                .map(|(_, next)| next)
                .into_iter()
                .chain(self.timers.iter().filter_map(Cell::get))
                .min()
                .map(|next| next.saturating_duration_since(now));
            match self.poll.poll(&mut self.events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let mut accept = false;
            for event in self.events.iter() {
                match event.token() {
                    LISTENER => accept = true,
                    Token(t) => {
                        if let Some(flag) = self.flags.get(t) {
                            flag.0.store(true, Ordering::Release);
                        }
                    }
                }
            }
            if accept {
                self.accept();
            }
            // Timers that have passed: their futures are polled (and sleep again if they
            // were woken early).
            let now = Instant::now();
            for (timer, flag) in self.timers.iter().zip(&self.flags) {
                if timer.get().is_some_and(|t| t <= now) {
                    timer.set(None);
                    flag.0.store(true, Ordering::Release);
                }
            }
            if let Some((period, next)) = self.watch.as_mut() {
                if Instant::now() >= *next {
                    *next += *period;
                    self.server.resource_updated(WATCHED_URI);
                }
            }
        }
    }

    fn poll_task(&mut self, i: usize) {
        let mut cx = Context::from_waker(&self.wakers[i]);
        let _ = self.tasks[i].as_mut().poll(&mut cx);
    }

    /// An evicted connection's end is not reported (it is not a served connection's).
    fn handle_ended(&mut self, i: usize) {
        if self.handoffs[i].ended.get() == Some(Ended::Evicted) {
            self.handoffs[i].ended.set(None);
        }
    }

    /// Takes every pending connection: to a free slot (evicting an idle connection when
    /// none is free), or answered 503.
    fn accept(&mut self) {
        loop {
            let mut stream = match self.listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A connection that failed before it was accepted: the next one.
                Err(_) => continue,
            };
            let _ = stream.set_nodelay(true);
            let mut free = self.handoffs.iter().position(|h| !h.busy.get());
            if free.is_none() {
                // Every slot busy: close a connection that idles between requests, if one
                // does (its task ends the connection when polled, right here).
                free = self.handoffs.iter().position(|h| h.state.evict());
                if let Some(i) = free {
                    self.poll_task(i);
                    self.handle_ended(i);
                    if self.handoffs[i].busy.get() {
                        free = None;
                    }
                }
            }
            let registered = free.filter(|&i| {
                self.poll
                    .registry()
                    .register(
                        &mut stream,
                        Token(i),
                        Interest::READABLE | Interest::WRITABLE,
                    )
                    .is_ok()
            });
            match registered {
                Some(i) => {
                    self.handoffs[i].busy.set(true);
                    self.handoffs[i].conn.set(Some(stream));
                    self.flags[i].0.store(true, Ordering::Release);
                }
                None => {
                    // Every slot is busy: 503, written at once if the socket takes it.
                    let mut sock = Sock(&stream);
                    let mut refusal = std::pin::pin!(self.server.refuse_busy(&mut sock));
                    let mut cx = Context::from_waker(Waker::noop());
                    let _ = refusal.as_mut().poll(&mut cx);
                }
            }
        }
    }
}
