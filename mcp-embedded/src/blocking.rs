//! The blocking runner, over [`embedded_io::Read`] and [`embedded_io::Write`].

use embedded_io::{Error as _, Read, Write};
use mcp_rs_core::{Session, ToolSet};

use crate::{frame_bytes, Buffers, Core, Error, Exchange, Stats, Step};

/// Serves MCP over a blocking byte stream: call [`step`](Self::step) from a superloop, or
/// [`run`](Self::run) until end of input.
///
/// The reader should block until at least one byte is available (sleeping with `WFI` while
/// its receive interrupt fills a ring buffer is the usual way) and return every byte it
/// has. The runner answers each complete line as soon as it arrives.
#[derive(Debug)]
pub struct Runner<'b> {
    core: Core<'b>,
}

impl<'b> Runner<'b> {
    /// A runner over caller-owned buffers.
    pub fn new<const RX: usize, const TX: usize>(buffers: &'b mut Buffers<RX, TX>) -> Self {
        Runner {
            core: Core::new(buffers),
        }
    }

    /// Counters since creation.
    pub fn stats(&self) -> Stats {
        self.core.stats
    }

    /// Reads once (blocking until the reader returns), answers every complete line, and
    /// reports what happened. A receive error is not fatal: it is returned as
    /// [`Step::RxError`] and the runner resyncs at the next newline. Only a failing writer
    /// is an error.
    pub fn step<T, R, W>(
        &mut self,
        session: &mut Session<'_>,
        tools: &mut T,
        reader: &mut R,
        writer: &mut W,
    ) -> Result<Step, Error<W::Error>>
    where
        T: ToolSet + ?Sized,
        R: Read,
        W: Write,
    {
        let n = match reader.read(self.core.read_buf()) {
            Ok(0) => {
                let limit = self.core.framer.max_len();
                if !self.core.resync {
                    while let Some(frame) = self.core.framer.finish() {
                        let exchange = Exchange::new(frame, limit, &mut self.core.stats);
                        answer(
                            exchange,
                            session,
                            tools,
                            writer,
                            self.core.tx,
                            &mut self.core.stats,
                        )?;
                    }
                }
                self.core.framer.reset();
                self.core.resync = false;
                return Ok(Step::Eof);
            }
            Ok(n) => n,
            Err(e) => return Ok(self.core.rx_error(e.kind())),
        };
        self.core.accept(n);
        let limit = self.core.framer.max_len();
        while let Some(frame) = self.core.framer.next_frame() {
            let exchange = Exchange::new(frame, limit, &mut self.core.stats);
            answer(
                exchange,
                session,
                tools,
                writer,
                self.core.tx,
                &mut self.core.stats,
            )?;
        }
        Ok(Step::Received(n))
    }

    /// Serves until the reader reports end of input (`Ok(0)`), answering a final line that
    /// has no newline. Receive errors are survived (see [`step`](Self::step)); a failing
    /// writer ends the loop with an error.
    pub fn run<T, R, W>(
        &mut self,
        session: &mut Session<'_>,
        tools: &mut T,
        reader: &mut R,
        writer: &mut W,
    ) -> Result<(), Error<W::Error>>
    where
        T: ToolSet + ?Sized,
        R: Read,
        W: Write,
    {
        loop {
            if self.step(session, tools, reader, writer)? == Step::Eof {
                return Ok(());
            }
        }
    }
}

/// Writes every frame of one exchange, then flushes.
fn answer<T: ToolSet + ?Sized, W: Write>(
    mut exchange: Exchange<'_>,
    session: &mut Session<'_>,
    tools: &mut T,
    writer: &mut W,
    tx: &mut [u8],
    stats: &mut Stats,
) -> Result<(), Error<W::Error>> {
    let mut sent = false;
    while let Some(len) = exchange.next(session, tools, tx, stats) {
        let (bytes, newline) = frame_bytes(tx, len);
        write_all(writer, bytes)?;
        if newline {
            write_all(writer, b"\n")?;
        }
        stats.frames_sent = stats.frames_sent.saturating_add(1);
        sent = true;
    }
    if sent {
        writer.flush().map_err(Error::Write)?;
    }
    Ok(())
}

/// `write_all` that reports a zero-length write instead of panicking.
fn write_all<W: Write>(writer: &mut W, mut bytes: &[u8]) -> Result<(), Error<W::Error>> {
    while !bytes.is_empty() {
        match writer.write(bytes) {
            Ok(0) => return Err(Error::WriteZero),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e) => return Err(Error::Write(e)),
        }
    }
    Ok(())
}
