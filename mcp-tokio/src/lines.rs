//! Newline framing over a buffer that grows on demand and shrinks back.
//!
//! The same rules as the core's [`LineFramer`](mcp_rs_core::wire::framing::LineFramer), which
//! borrows a fixed buffer of the largest line: a connection that may receive a 4 MiB line
//! would hold 4 MiB while idle. Here bytes are read straight into the buffer (no copy from
//! a read chunk), lines are handed out in place, and memory follows use:
//!
//! | state | memory held |
//! |---|---|
//! | never read | nothing |
//! | between requests | at most [`RETAIN`] bytes (after [`LineBuf::shrink`]) |
//! | a line in progress | that line, plus up to [`READ_MAX`] bytes read ahead |
//! | hard bound | `max_len` + [`READ_MAX`] + the allocator's rounding |
//!
//! Framing: a line ends at `\n`, one trailing `\r` is removed, blank and whitespace-only
//! lines are skipped. A line longer than `max_len` bytes (counting a `\r`) is reported once
//! as [`Frame::Oversized`] as soon as more than `max_len` of its bytes are buffered; its
//! bytes are dropped and the rest of it, through the next `\n`, is discarded unread.

use std::io;

use mcp_rs_core::wire::framing::Frame;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The first read of an empty buffer asks for this many bytes.
pub(crate) const READ_MIN: usize = 4 << 10;
/// Reads that fill what they were offered double the next offer, up to this.
pub(crate) const READ_MAX: usize = 64 << 10;
/// Capacity kept between requests; more is given back by [`LineBuf::shrink`].
pub(crate) const RETAIN: usize = 4 << 10;

/// Lines read from a byte stream (see the module documentation).
#[derive(Debug)]
pub(crate) struct LineBuf {
    /// `buf[start..]` is unread input.
    buf: Vec<u8>,
    start: usize,
    /// `buf[start..scan]` holds no `\n`.
    scan: usize,
    max_len: usize,
    /// Dropping the rest of an oversized line, through its `\n`.
    discarding: bool,
    /// How many bytes the next read offers.
    read_size: usize,
}

impl LineBuf {
    /// An empty buffer for lines of at most `max_len` bytes; allocates nothing yet.
    pub(crate) fn new(max_len: usize) -> Self {
        LineBuf {
            buf: Vec::new(),
            start: 0,
            scan: 0,
            max_len,
            discarding: false,
            read_size: READ_MIN,
        }
    }

    /// Bytes buffered and not yet handed out (a partial line, or lines not yet taken).
    pub(crate) fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Reads once from `reader`, appending to the buffer; `Ok(0)` is end of input.
    pub(crate) async fn read_from<R: AsyncRead + Unpin>(
        &mut self,
        reader: &mut R,
    ) -> io::Result<usize> {
        self.compact();
        self.buf.reserve(self.read_size);
        let offered = self.buf.capacity() - self.buf.len();
        let n = reader.read_buf(&mut self.buf).await?;
        if n >= offered {
            self.read_size = (self.read_size * 2).min(READ_MAX);
        }
        Ok(n)
    }

    /// [`read_from`](Self::read_from) for a blocking reader. The spare capacity is zeroed
    /// before the read (safe code cannot read into uninitialized memory).
    pub(crate) fn read_sync<R: std::io::Read>(&mut self, reader: &mut R) -> io::Result<usize> {
        self.compact();
        let len = self.buf.len();
        self.buf.reserve(self.read_size);
        let offered = self.buf.capacity() - len;
        self.buf.resize(len + offered, 0);
        let got = match self.buf.get_mut(len..) {
            Some(spare) => reader.read(spare),
            None => Ok(0),
        };
        let n = got.as_ref().map_or(0, |n| (*n).min(offered));
        self.buf.truncate(len + n);
        if n >= offered {
            self.read_size = (self.read_size * 2).min(READ_MAX);
        }
        got.map(|_| n)
    }

    /// Appends bytes read elsewhere (the same as a read that returned them).
    #[cfg(test)]
    pub(crate) fn extend(&mut self, input: &[u8]) {
        self.compact();
        self.buf.extend_from_slice(input);
    }

    /// The next complete frame, if any.
    pub(crate) fn next_frame(&mut self) -> Option<Frame<'_>> {
        loop {
            let newline = self
                .buf
                .get(self.scan..)
                .and_then(|s| s.iter().position(|&c| c == b'\n'))
                .map(|i| self.scan + i);
            let Some(nl) = newline else {
                self.scan = self.buf.len();
                if self.discarding {
                    self.start = self.buf.len();
                    self.scan = self.start;
                    return None;
                }
                let len = self.buffered();
                if len > self.max_len {
                    // Reported now, while the line is still arriving; the rest is dropped.
                    self.start = self.buf.len();
                    self.scan = self.start;
                    self.discarding = true;
                    return Some(Frame::Oversized { len });
                }
                return None;
            };
            let (a, b) = (self.start, nl);
            self.start = nl + 1;
            self.scan = self.start;
            if std::mem::take(&mut self.discarding) {
                continue;
            }
            if b - a > self.max_len {
                return Some(Frame::Oversized { len: b - a });
            }
            if let Some(line) = line(self.buf.get(a..b)?) {
                // Re-borrow for the caller (`line` only decided where it ends).
                return self.buf.get(a..a + line).map(Frame::Line);
            }
        }
    }

    /// End of input: the remaining frames, then a last line without `\n`, then `None`.
    pub(crate) fn finish(&mut self) -> Option<Frame<'_>> {
        // (Checked first so the borrow of `next_frame` is not held across the fallback.)
        if self.peek_newline() || (!self.discarding && self.buffered() > self.max_len) {
            return self.next_frame();
        }
        let (a, b) = (self.start, self.buf.len());
        self.start = b;
        self.scan = b;
        if std::mem::take(&mut self.discarding) || a == b {
            return None;
        }
        let len = line(self.buf.get(a..b)?)?;
        self.buf.get(a..a + len).map(Frame::Line)
    }

    /// Drops everything buffered (input read after the connection stopped serving).
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.start = 0;
        self.scan = 0;
    }

    /// Gives back capacity beyond [`RETAIN`] once everything buffered has been taken.
    pub(crate) fn shrink(&mut self) {
        if self.buffered() == 0 && self.buf.capacity() > RETAIN {
            self.buf = Vec::with_capacity(RETAIN);
            self.start = 0;
            self.scan = 0;
            self.read_size = READ_MIN;
        }
    }

    fn peek_newline(&self) -> bool {
        self.buf
            .get(self.scan..)
            .is_some_and(|s| s.contains(&b'\n'))
    }

    /// Moves unread bytes to the front before reading more.
    fn compact(&mut self) {
        if self.start == 0 {
            return;
        }
        self.buf.drain(..self.start);
        self.scan -= self.start;
        self.start = 0;
    }
}

/// The length of `raw` without one trailing `\r`; `None` for a blank line.
fn line(raw: &[u8]) -> Option<usize> {
    if raw.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(match raw.last() {
        Some(b'\r') => raw.len() - 1,
        _ => raw.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_rs_core::wire::framing::LineFramer;

    /// Every frame of `chunks` fed one by one, then `finish`.
    fn frames(max: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut lb = LineBuf::new(max);
        let mut seen = Vec::new();
        for c in chunks {
            lb.extend(c);
            while let Some(f) = lb.next_frame() {
                seen.push(show(f));
            }
        }
        while let Some(f) = lb.finish() {
            seen.push(show(f));
        }
        seen
    }

    fn show(f: Frame<'_>) -> String {
        match f {
            Frame::Line(l) => String::from_utf8_lossy(l).into_owned(),
            Frame::Oversized { .. } => "<oversized>".into(),
        }
    }

    /// The core framer's frames for the same input (the reference).
    fn reference(max: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut storage = vec![0u8; max];
        let mut f = LineFramer::new(&mut storage);
        let mut seen = Vec::new();
        for c in chunks {
            let mut input = *c;
            while !input.is_empty() {
                let taken = f.push(input);
                input = &input[taken..];
                while let Some(fr) = f.next_frame() {
                    seen.push(show(fr));
                }
            }
        }
        while let Some(fr) = f.finish() {
            seen.push(show(fr));
        }
        seen
    }

    #[test]
    fn same_frames_as_the_core_framer() {
        let cases: &[&[&[u8]]] = &[
            &[
                b"{\"id\":1}\r\n\n  \n{\"id",
                b"\":2}\n",
                b"this line is too long",
                b"\n{\"id\":3}",
            ],
            &[b"abc\nde", b"f\r\n\r\n", b"0123456789abcdefXYZ\nok"],
            &[b"0123456789abcdef\n", b"0123456789abcdefg\nafter\n"],
            &[b"0123456789", b"abcdefg", b"hij", b"\nnext\n"],
            &[b"   \t \n", b"\r\n", b"x"],
            &[b"0123456789abcdefXX"],
            &[b"a\r", b"\nb"],
        ];
        for chunks in cases {
            assert_eq!(frames(16, chunks), reference(16, chunks), "{chunks:?}");
        }
        // Every split point of one stream, one byte at a time included.
        let stream: &[u8] = b"{\"a\":1}\r\n \n0123456789abcdefghij\n{\"b\":2}\nlast";
        let expect = reference(16, &[stream]);
        for cut in 0..stream.len() {
            let (x, y) = stream.split_at(cut);
            assert_eq!(frames(16, &[x, y]), expect, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(frames(16, &bytes), expect);
    }

    #[test]
    fn memory_follows_use() {
        let mut lb = LineBuf::new(1 << 20);
        assert_eq!(lb.buf.capacity(), 0, "nothing before the first read");
        let big = vec![b'x'; 200_000];
        lb.extend(&big);
        assert!(lb.next_frame().is_none());
        lb.extend(b"\n");
        assert!(matches!(lb.next_frame(), Some(Frame::Line(l)) if l.len() == 200_000));
        assert!(lb.buf.capacity() >= 200_000);
        lb.shrink();
        assert!(lb.buf.capacity() <= RETAIN, "{}", lb.buf.capacity());
        // An oversized line is dropped as it arrives: the buffer never holds much more.
        let mut lb = LineBuf::new(1000);
        for _ in 0..100 {
            lb.extend(&[b'y'; 500]);
            while lb.next_frame().is_some() {}
            assert!(lb.buffered() <= 1000);
        }
        lb.extend(b"\n{\"ok\":1}\n");
        assert_eq!(show(lb.next_frame().expect("line")), "{\"ok\":1}");
    }
}
