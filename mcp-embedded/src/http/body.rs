//! Request bodies, read into the receive buffer right after their head: `Content-Length`
//! bodies as they come, chunked bodies decoded in place (each chunk's data moved down over
//! the chunk framing, so the decoded body is contiguous and needs no second buffer).

use embedded_io_async::{Error as _, Read};

use crate::ErrorKind;

/// Why a body could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BodyError {
    /// It does not fit the receive buffer after its head (413).
    TooLarge,
    /// Broken chunk framing (400).
    Invalid,
    /// The peer closed the connection before the body was complete.
    Closed,
    /// The socket failed.
    Read(ErrorKind),
}

/// Bytes of a request in the receive buffer: `buf[..filled]` arrived.
#[derive(Debug)]
pub(super) struct Inbox<'a> {
    pub(super) buf: &'a mut [u8],
    pub(super) filled: usize,
}

impl Inbox<'_> {
    /// Reads once more after `filled`; `Closed` on end of input, `TooLarge` when full.
    pub(super) async fn read_more<R: Read>(&mut self, socket: &mut R) -> Result<usize, BodyError> {
        let spare = self.buf.get_mut(self.filled..).unwrap_or_default();
        if spare.is_empty() {
            return Err(BodyError::TooLarge);
        }
        match socket.read(spare).await {
            Ok(0) => Err(BodyError::Closed),
            Ok(n) => {
                self.filled = self.filled.saturating_add(n).min(self.buf.len());
                Ok(n)
            }
            Err(e) => Err(BodyError::Read(e.kind())),
        }
    }

    /// Reads until `buf[..end]` arrived (`end` at most the buffer's length).
    pub(super) async fn read_to<R: Read>(
        &mut self,
        socket: &mut R,
        end: usize,
    ) -> Result<(), BodyError> {
        if end > self.buf.len() {
            return Err(BodyError::TooLarge);
        }
        while self.filled < end {
            self.read_more(socket).await?;
        }
        Ok(())
    }

    /// Reads and decodes a chunked body starting at `start`: returns the decoded length
    /// (the body is `buf[start..start + len]`) and where the request ends in the buffer
    /// (what follows is the next request, pipelined).
    pub(super) async fn chunked<R: Read>(
        &mut self,
        socket: &mut R,
        start: usize,
    ) -> Result<(usize, usize), BodyError> {
        let mut c = Chunked {
            dec: start,
            scan: start,
        };
        loop {
            let (n, size) = loop {
                let pending = self.buf.get(c.scan..self.filled).unwrap_or_default();
                match httparse::parse_chunk_size(pending) {
                    Ok(httparse::Status::Complete(found)) => break found,
                    Ok(httparse::Status::Partial) => c.fill(self, socket).await?,
                    Err(_) => return Err(BodyError::Invalid),
                }
            };
            c.scan += n;
            if size == 0 {
                break;
            }
            let size = usize::try_from(size).map_err(|_| BodyError::TooLarge)?;
            if size > self.buf.len().saturating_sub(c.dec) {
                return Err(BodyError::TooLarge);
            }
            let mut left = size;
            while left > 0 {
                if c.scan == self.filled {
                    c.fill(self, socket).await?;
                }
                let take = left.min(self.filled - c.scan);
                self.buf.copy_within(c.scan..c.scan + take, c.dec);
                c.dec += take;
                c.scan += take;
                left -= take;
            }
            while self.filled < c.scan + 2 {
                c.fill(self, socket).await?;
            }
            if self.buf.get(c.scan..c.scan + 2) != Some(b"\r\n") {
                return Err(BodyError::Invalid);
            }
            c.scan += 2;
        }
        // Trailer fields (ignored) up to the empty line.
        loop {
            let pending = self.buf.get(c.scan..self.filled).unwrap_or_default();
            match pending.windows(2).position(|w| w == b"\r\n") {
                Some(0) => {
                    c.scan += 2;
                    return Ok((c.dec - start, c.scan));
                }
                Some(i) => c.scan += i + 2,
                None => c.fill(self, socket).await?,
            }
        }
    }
}

/// The decoder's two positions: decoded data ends at `dec`, undecoded input starts at
/// `scan` (`dec <= scan <= filled`).
struct Chunked {
    dec: usize,
    scan: usize,
}

impl Chunked {
    /// Reads more input, first moving the undecoded bytes down to `dec` when the buffer is
    /// full.
    async fn fill<R: Read>(
        &mut self,
        inbox: &mut Inbox<'_>,
        socket: &mut R,
    ) -> Result<(), BodyError> {
        if inbox.filled == inbox.buf.len() && self.scan > self.dec {
            inbox.buf.copy_within(self.scan..inbox.filled, self.dec);
            inbox.filled -= self.scan - self.dec;
            self.scan = self.dec;
        }
        inbox.read_more(socket).await.map(|_| ())
    }
}
