//! stdin/stdout of `serve_stdio`.
//!
//! **Pipes (Unix), the usual case:** a client that spawns the server hands it pipes. Both
//! are switched to non-blocking mode (`O_NONBLOCK`, on duplicates of fd 0 and 1, which share
//! the file description) and driven by the runtime's epoll like sockets
//! ([`tokio::net::unix::pipe`]): the drive loop reads a batch of requests, answers them and
//! writes every reply with one `write`, on one thread, with no thread hand-off and no
//! wake-up of another thread per request. This is what `serve_blocking` does, plus an
//! `epoll_wait` when the input runs dry. Blocking mode is restored when serving ends. While
//! serving, another process sharing the same pipe ends would see them non-blocking; stdout
//! is left alone (threads below) when stderr is the same pipe, so that logging never sees
//! `EAGAIN`. Anything else written to stdout while serving (a `println!`) was already a
//! protocol error and may now fail with `WouldBlock`.
//!
//! The end of input (the client closed its end) must be noticed even while the loop is
//! stuck writing to a client that stopped reading, before the requests still buffered in
//! the pipe are read: a small task watches a second duplicate of stdin, registered with
//! epoll on its own, for `EPOLLHUP` ([`PipeStdin::spawn`]) and sets the same `ended` flag
//! the reader thread sets.
//!
//! **Anything else (a terminal, a file, a socket, or not Unix):** `tokio::io::stdin()`/
//! `stdout()` would run every read and write on tokio's blocking pool, so a single
//! request/response crosses threads four times and the next read is only issued after the
//! reply was written (measured: ~48 µs median round trip against ~10 µs for a plain blocking
//! loop). Instead one thread blocks in `read` and hands chunks over a bounded channel, so
//! the next request is already being read while the reply goes out, and one thread writes
//! and flushes whatever frames are queued.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// Bytes read per chunk.
const CHUNK: usize = 64 << 10;
/// Output bytes queued for the writer thread before `poll_write` waits (back-pressure when
/// the client does not read).
const MAX_QUEUED: usize = 4 << 20;

/// stdin read by a dedicated thread.
pub(crate) struct ThreadStdin {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    /// Set by the reader thread when stdin ends (or fails), before the chunks it read ahead
    /// are consumed.
    ended: tokio::sync::watch::Receiver<bool>,
    chunk: Vec<u8>,
    pos: usize,
}

impl ThreadStdin {
    pub(crate) fn spawn() -> Self {
        let (tx, rx) = mpsc::channel(4);
        let (end, ended) = tokio::sync::watch::channel(false);
        let spawned = std::thread::Builder::new()
            .name("mcp-stdin".into())
            .spawn(move || {
                // Told however the loop below ends.
                struct Ended(tokio::sync::watch::Sender<bool>);
                impl Drop for Ended {
                    fn drop(&mut self) {
                        self.0.send_replace(true);
                    }
                }
                let _ended = Ended(end);
                let mut stdin = io::stdin().lock();
                // One zeroed buffer for every read; only what was read is copied out (a
                // fresh zeroed 64 KiB per read cost more than the protocol work of a small
                // batch).
                let mut buf = vec![0u8; CHUNK];
                loop {
                    match stdin.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            let chunk = buf.get(..n).unwrap_or_default().to_vec();
                            if tx.blocking_send(Ok(chunk)).is_err() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            let _ = tx.blocking_send(Err(e));
                            break;
                        }
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the stdin thread");
        }
        ThreadStdin {
            rx,
            ended,
            chunk: Vec::new(),
            pos: 0,
        }
    }
}

impl ThreadStdin {
    /// Becomes `true` when stdin has ended, even while chunks read before the end are
    /// still unconsumed: a drive loop blocked writing to a client that does not read learns
    /// that the client has stopped sending too.
    pub(crate) fn ended(&self) -> tokio::sync::watch::Receiver<bool> {
        self.ended.clone()
    }
}

impl AsyncRead for ThreadStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.pos >= self.chunk.len() {
            match self.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(Ok(())), // EOF
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Some(Ok(chunk))) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
            }
        }
        let this = &mut *self;
        let available = this.chunk.get(this.pos..).unwrap_or_default();
        let n = available.len().min(out.remaining());
        out.put_slice(available.get(..n).unwrap_or_default());
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

/// State shared with the writer thread.
struct Shared {
    queued: AtomicUsize,
    waker: Mutex<Option<Waker>>,
    error: Mutex<Option<io::Error>>,
}

/// stdout written by a dedicated thread (frames are queued; the thread writes and flushes).
pub(crate) struct ThreadStdout {
    tx: Option<std::sync::mpsc::Sender<Vec<u8>>>,
    shared: Arc<Shared>,
    done: Option<std::thread::JoinHandle<()>>,
}

impl ThreadStdout {
    pub(crate) fn spawn() -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let shared = Arc::new(Shared {
            queued: AtomicUsize::new(0),
            waker: Mutex::new(None),
            error: Mutex::new(None),
        });
        let s = Arc::clone(&shared);
        let done = std::thread::Builder::new()
            .name("mcp-stdout".into())
            .spawn(move || {
                let mut stdout = io::stdout().lock();
                while let Ok(first) = rx.recv() {
                    let mut result = stdout.write_all(&first);
                    let mut written = first.len();
                    while let (Ok(()), Ok(more)) = (&result, rx.try_recv()) {
                        result = stdout.write_all(&more);
                        written += more.len();
                    }
                    let result = result.and_then(|()| stdout.flush());
                    s.queued.fetch_sub(written, Ordering::AcqRel);
                    if let Some(w) = s.waker.lock().unwrap_or_else(|e| e.into_inner()).take() {
                        w.wake();
                    }
                    if let Err(e) = result {
                        *s.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                        break;
                    }
                }
            })
            .ok();
        ThreadStdout {
            tx: Some(tx),
            shared,
            done,
        }
    }

    fn take_error(&self) -> Option<io::Error> {
        self.shared
            .error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Registers for a wake-up, then re-checks (no lost wake-up between check and park).
    fn wait(&self, cx: &mut Context<'_>, ready: impl Fn(usize) -> bool) -> bool {
        if ready(self.shared.queued.load(Ordering::Acquire)) {
            return true;
        }
        *self.shared.waker.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        ready(self.shared.queued.load(Ordering::Acquire))
    }
}

impl AsyncWrite for ThreadStdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.take_error() {
            return Poll::Ready(Err(e));
        }
        if !self.wait(cx, |q| q < MAX_QUEUED) {
            return Poll::Pending;
        }
        let Some(tx) = &self.tx else {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        };
        self.shared.queued.fetch_add(buf.len(), Ordering::AcqRel);
        if tx.send(buf.to_vec()).is_err() {
            return Poll::Ready(Err(self
                .take_error()
                .unwrap_or_else(|| io::ErrorKind::BrokenPipe.into())));
        }
        Poll::Ready(Ok(buf.len()))
    }

    /// Frames are handed to the writer thread, which flushes after every batch; waiting
    /// for it here would put the thread hop back on the request path.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.take_error() {
            Some(e) => Poll::Ready(Err(e)),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Waits until everything queued is written.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !self.wait(cx, |q| q == 0) && self.shared.error.lock().map_or(true, |e| e.is_none()) {
            return Poll::Pending;
        }
        self.tx = None;
        if let Some(done) = self.done.take() {
            let _ = done.join();
        }
        match self.take_error() {
            Some(e) => Poll::Ready(Err(e)),
            None => Poll::Ready(Ok(())),
        }
    }
}

/// stdin of `serve_stdio`: a non-blocking pipe on the runtime, or the reader thread.
pub(crate) enum Stdin {
    #[cfg(unix)]
    Pipe(pipes::PipeStdin),
    Thread(ThreadStdin),
}

/// stdout of `serve_stdio`: a non-blocking pipe on the runtime, or the writer thread.
pub(crate) enum Stdout {
    #[cfg(unix)]
    Pipe(pipes::PipeStdout),
    Thread(ThreadStdout),
}

/// Opens stdin and stdout (see the module documentation); the receiver becomes `true`
/// once stdin has ended (or failed), even while input read ahead is still unconsumed.
/// Must run inside the runtime.
pub(crate) fn open() -> (Stdin, Stdout, tokio::sync::watch::Receiver<bool>) {
    #[cfg(unix)]
    let stdin = match pipes::PipeStdin::spawn() {
        Some(pipe) => Stdin::Pipe(pipe),
        None => Stdin::Thread(ThreadStdin::spawn()),
    };
    #[cfg(not(unix))]
    let stdin = Stdin::Thread(ThreadStdin::spawn());
    #[cfg(unix)]
    let stdout = match pipes::PipeStdout::open() {
        Some(pipe) => Stdout::Pipe(pipe),
        None => Stdout::Thread(ThreadStdout::spawn()),
    };
    #[cfg(not(unix))]
    let stdout = Stdout::Thread(ThreadStdout::spawn());
    let ended = match &stdin {
        #[cfg(unix)]
        Stdin::Pipe(p) => p.ended(),
        Stdin::Thread(t) => t.ended(),
    };
    (stdin, stdout, ended)
}

impl AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Stdin::Pipe(p) => Pin::new(p).poll_read(cx, out),
            Stdin::Thread(t) => Pin::new(t).poll_read(cx, out),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(unix)]
            Stdout::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            Stdout::Thread(t) => Pin::new(t).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Stdout::Pipe(p) => Pin::new(p).poll_flush(cx),
            Stdout::Thread(t) => Pin::new(t).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Stdout::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            Stdout::Thread(t) => Pin::new(t).poll_shutdown(cx),
        }
    }
}

/// stdin and stdout as non-blocking pipes on the runtime (see the module documentation).
#[cfg(unix)]
mod pipes {
    use std::io;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
    use tokio::net::unix::pipe;
    use tokio::sync::watch;
    use tokio::task::AbortHandle;

    /// A duplicate of `fd` (same file description, so the same pipe and flags).
    fn dup(fd: impl AsFd) -> Option<OwnedFd> {
        fd.as_fd().try_clone_to_owned().ok()
    }

    /// The pipe (device and inode) `fd` refers to, if it is one.
    fn pipe_id(fd: impl AsFd) -> Option<(u64, u64)> {
        let meta = std::fs::File::from(dup(fd)?).metadata().ok()?;
        meta.file_type().is_fifo().then(|| (meta.dev(), meta.ino()))
    }

    /// stdin as a non-blocking pipe; blocking mode is restored on drop.
    pub(crate) struct PipeStdin {
        pipe: Option<pipe::Receiver>,
        ended: watch::Receiver<bool>,
        watcher: AbortHandle,
    }

    impl PipeStdin {
        /// `None` when stdin is not a pipe (or cannot be registered with the runtime).
        pub(crate) fn spawn() -> Option<Self> {
            let stdin = io::stdin();
            pipe_id(&stdin)?;
            // Registered on its own (a second epoll entry for the same pipe): it reports
            // the hang-up without taking readiness from the reading side.
            let pipe = pipe::Receiver::from_owned_fd(dup(&stdin)?).ok()?;
            let hangup = pipe::Receiver::from_owned_fd(dup(&stdin)?).ok()?;
            let (end, ended) = watch::channel(false);
            let watcher = tokio::spawn(async move {
                loop {
                    match hangup.ready(Interest::READABLE).await {
                        Ok(ready) if ready.is_read_closed() => break,
                        // Input arrived (it is read through the other descriptor): forget
                        // that readiness, wait for the next event.
                        Ok(_) => {
                            let _ =
                                hangup.try_io(|| Err::<(), _>(io::ErrorKind::WouldBlock.into()));
                        }
                        Err(_) => break,
                    }
                }
                end.send_replace(true);
            })
            .abort_handle();
            Some(PipeStdin {
                pipe: Some(pipe),
                ended,
                watcher,
            })
        }

        pub(crate) fn ended(&self) -> watch::Receiver<bool> {
            self.ended.clone()
        }
    }

    impl Drop for PipeStdin {
        fn drop(&mut self) {
            self.watcher.abort();
            if let Some(pipe) = self.pipe.take() {
                let _ = pipe.into_blocking_fd();
            }
        }
    }

    impl AsyncRead for PipeStdin {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            out: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            match self.pipe.as_mut() {
                Some(pipe) => Pin::new(pipe).poll_read(cx, out),
                None => Poll::Ready(Ok(())),
            }
        }
    }

    /// stdout as a non-blocking pipe; blocking mode is restored on drop.
    pub(crate) struct PipeStdout {
        pipe: Option<pipe::Sender>,
    }

    impl PipeStdout {
        /// `None` when stdout is not a pipe, or stderr is the same pipe (logging must not
        /// see `EAGAIN`).
        pub(crate) fn open() -> Option<Self> {
            let stdout = io::stdout();
            let id = pipe_id(&stdout)?;
            if pipe_id(io::stderr()) == Some(id) {
                return None;
            }
            let pipe = pipe::Sender::from_owned_fd(dup(&stdout)?).ok()?;
            Some(PipeStdout { pipe: Some(pipe) })
        }
    }

    impl Drop for PipeStdout {
        fn drop(&mut self) {
            if let Some(pipe) = self.pipe.take() {
                let _ = pipe.into_blocking_fd();
            }
        }
    }

    impl AsyncWrite for PipeStdout {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            match self.pipe.as_mut() {
                Some(pipe) => Pin::new(pipe).poll_write(cx, buf),
                None => Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
            }
        }

        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }
}
