//! The byte-stream transport (a child's stdio, TCP, Unix sockets, any
//! `AsyncRead`/`AsyncWrite`): a reader task that frames lines with the core's bounded
//! [`LineFramer`], and a writer task that writes each frame and a newline, each write
//! bounded in time.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_rs_core::wire::framing::{Frame, LineFramer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::error::{ClientError, Result};
use super::link::{Inbound, Link, Outgoing, INBOUND_CAPACITY};
use super::MAX_QUEUED_LINES;

/// Bytes read from the transport per `read` call.
const READ_CHUNK: usize = 64 * 1024;

/// Starts the reader and writer tasks over `reader` and `writer`. `reply_bytes` counts the
/// bytes of queued answers to server requests (the writer takes them off as it writes).
pub(crate) fn start<R, W>(
    reader: R,
    writer: W,
    max_line: usize,
    line_timeout: Duration,
    write_timeout: Duration,
    reply_bytes: Arc<AtomicUsize>,
) -> (Link, Vec<JoinHandle<()>>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, rx) = mpsc::channel(MAX_QUEUED_LINES);
    let (tx, inbound) = mpsc::channel(INBOUND_CAPACITY);
    let read = tokio::spawn(read_loop(reader, tx.clone(), max_line, line_timeout));
    let write = tokio::spawn(write_loop(writer, rx, tx, write_timeout, reply_bytes));
    (Link { out, inbound }, vec![read, write])
}

/// Reads into `buf`, giving up at `deadline` (`None`: never). The read is polled before the
/// timer, so data already there is taken even after the deadline.
async fn read_by<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut [u8],
    deadline: Option<Instant>,
) -> Option<io::Result<usize>> {
    match deadline {
        None => Some(reader.read(buf).await),
        Some(at) => tokio::time::timeout_at(at, reader.read(buf)).await.ok(),
    }
}

/// The reader task: frames lines and hands them to the driver. A line that has started
/// must end within `line_timeout`, or the connection is closed with
/// [`ClientError::LineTimeout`]. Stops at the end of the stream or when the driver is gone.
async fn read_loop<R>(
    mut reader: R,
    tx: mpsc::Sender<Inbound>,
    max_line: usize,
    line_timeout: Duration,
) where
    R: AsyncRead + Unpin,
{
    let mut storage = vec![0u8; max_line.max(1)];
    let mut framer = LineFramer::new(&mut storage);
    let limit = framer.max_len();
    let mut chunk = vec![0u8; READ_CHUNK];
    let inbound = |frame: Frame<'_>| match frame {
        Frame::Line(line) => Inbound::Frame(line.to_vec()),
        Frame::Oversized { len } => {
            tracing::warn!("the server sent a line longer than {limit} bytes ({len}+): discarded");
            Inbound::Oversized { limit }
        }
    };
    // When the line now in the framer (or being discarded) must have ended.
    let mut line_deadline: Option<Instant> = None;
    let end = loop {
        let n = match read_by(&mut reader, &mut chunk, line_deadline).await {
            None => {
                tracing::warn!(
                    "a line from the server did not complete within {line_timeout:?}: closing"
                );
                break ClientError::LineTimeout(line_timeout);
            }
            Some(Ok(0)) => break ClientError::Closed,
            Some(Ok(n)) => n,
            Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
            Some(Err(e)) => {
                tracing::warn!("reading from the server failed: {e}");
                break ClientError::Io(e);
            }
        };
        let mut rest = chunk.get(..n).unwrap_or_default();
        // A newline ends the line in progress: what is left after it began in this read.
        let ended = rest.contains(&b'\n');
        while !rest.is_empty() {
            let taken = framer.push(rest);
            rest = rest.get(taken..).unwrap_or_default();
            while let Some(frame) = framer.next_frame() {
                if tx.send(inbound(frame)).await.is_err() {
                    return; // The driver is gone.
                }
            }
        }
        let mid_line = framer.buffered() > 0 || framer.is_discarding();
        line_deadline = match line_deadline {
            _ if !mid_line => None,
            Some(at) if !ended => Some(at),
            _ => Instant::now().checked_add(line_timeout),
        };
    };
    if !matches!(end, ClientError::LineTimeout(_)) {
        // A last line without its newline (never the one that timed out).
        while let Some(frame) = framer.finish() {
            let _ = tx.send(inbound(frame)).await;
        }
        tracing::debug!("the server closed the connection");
    }
    let _ = tx.send(Inbound::Closed(end)).await;
}

/// Writes all of `buf` and flushes; fails with [`ClientError::WriteTimeout`] when a write or
/// the flush makes no progress for `limit`.
async fn write_within<W: AsyncWrite + Unpin>(
    writer: &mut W,
    mut buf: &[u8],
    limit: Duration,
) -> Result<()> {
    while !buf.is_empty() {
        match tokio::time::timeout(limit, writer.write(buf)).await {
            Err(_elapsed) => return Err(ClientError::WriteTimeout(limit)),
            Ok(Ok(0)) => return Err(ClientError::Io(io::ErrorKind::WriteZero.into())),
            Ok(Ok(n)) => buf = buf.get(n..).unwrap_or_default(),
            Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
            Ok(Err(e)) => return Err(ClientError::Io(e)),
        }
    }
    match tokio::time::timeout(limit, writer.flush()).await {
        Err(_elapsed) => Err(ClientError::WriteTimeout(limit)),
        Ok(r) => r.map_err(ClientError::Io),
    }
}

/// The writer task: writes each frame plus `\n` and flushes. A write that makes no progress
/// for `write_timeout` ends the connection with [`ClientError::WriteTimeout`] (told to the
/// driver). Stops when the driver is gone or after a shutdown.
async fn write_loop<W>(
    mut writer: W,
    mut rx: mpsc::Receiver<Outgoing>,
    tx: mpsc::Sender<Inbound>,
    write_timeout: Duration,
    reply_bytes: Arc<AtomicUsize>,
) where
    W: AsyncWrite + Unpin,
{
    while let Some(msg) = rx.recv().await {
        match msg {
            Outgoing::Frame {
                mut bytes, reply, ..
            } => {
                bytes.push(b'\n');
                let result = write_within(&mut writer, &bytes, write_timeout).await;
                reply_bytes.fetch_sub(reply, Ordering::Relaxed);
                if let Err(e) = result {
                    tracing::warn!("writing to the server failed: {e}");
                    let _ = tx.send(Inbound::Closed(e)).await;
                    return;
                }
            }
            Outgoing::Negotiated(_) => {}
            Outgoing::Shutdown(ack) => {
                let result = match tokio::time::timeout(write_timeout, writer.shutdown()).await {
                    Err(_elapsed) => Err(ClientError::WriteTimeout(write_timeout)),
                    Ok(r) => r.map_err(ClientError::Io),
                };
                drop(writer);
                let _ = ack.send(result);
                return;
            }
        }
    }
}
