//! Newline framing (stdio, TCP, UART) over a caller-provided buffer.

/// One result of [`LineFramer::next_frame`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A complete line without its `\n` (and without a trailing `\r`). Never blank.
    Line(&'a [u8]),
    /// A line longer than [`LineFramer::max_len`] was seen. Reported once per such line; the
    /// framer then discards input up to and including the next `\n`.
    Oversized {
        /// Bytes of the line seen when it was reported (at least `max_len + 1`).
        len: usize,
    },
}

/// Splits a byte stream into lines, buffering at most `buf.len()` bytes of one line.
#[derive(Debug)]
pub struct LineFramer<'b> {
    pub(crate) buf: &'b mut [u8],
}

impl<'b> LineFramer<'b> {
    /// A framer whose maximum line length is `buf.len()` bytes (excluding the newline).
    pub fn new(buf: &'b mut [u8]) -> Self {
        LineFramer { buf }
    }
    /// The maximum line length.
    pub fn max_len(&self) -> usize {
        self.buf.len()
    }
    /// Copies bytes from `input` (as many as can be taken now) and returns how many it took.
    pub fn push(&mut self, _input: &[u8]) -> usize {
        unimplemented!()
    }
    /// The next complete frame, if any.
    pub fn next_frame(&mut self) -> Option<Frame<'_>> {
        unimplemented!()
    }
}
