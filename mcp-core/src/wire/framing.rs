//! Newline framing (stdio, TCP, UART) over a caller-provided buffer.
//!
//! [`LineFramer`] turns a byte stream into newline-delimited frames without allocating: it
//! buffers at most one line in the slice it was given and never grows. See the type's
//! documentation for the driving loop.

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
///
/// * A line ends at `\n`; one trailing `\r` is removed as well (CRLF is tolerated).
/// * Blank and whitespace-only lines are skipped silently.
/// * The line length limit ([`max_len`](Self::max_len)) counts every byte before the `\n`,
///   including a `\r` that is later stripped.
/// * A longer line is reported once as [`Frame::Oversized`] as soon as its first byte past
///   the limit arrives; its buffered bytes are dropped and the rest of it, up to and
///   including the next `\n`, is consumed without being stored (see
///   [`is_discarding`](Self::is_discarding)). Framing resumes with the byte after that `\n`.
/// * No method panics, and memory use never exceeds the buffer.
///
/// # Driving loop
///
/// Offer input with [`push`](Self::push) until all of it is taken, and drain
/// [`next_frame`](Self::next_frame) after every push. `push` takes 0 bytes of non-empty input
/// only when a frame is waiting to be drained (i.e. the next `next_frame` returns `Some`), so
/// this loop always makes progress. At end of input, drain [`finish`](Self::finish), which
/// also yields a last line that has no terminating `\n`.
///
/// ```
/// use mcp_rs_core::wire::framing::{Frame, LineFramer};
///
/// let mut storage = [0u8; 16];
/// let mut framer = LineFramer::new(&mut storage);
/// let mut lines = 0;
/// let mut oversized = 0;
/// // Input as it might arrive from a socket or UART: arbitrary chunk boundaries.
/// let chunks: [&[u8]; 4] = [b"{\"id\":1}\r\n\n  \n{\"id", b"\":2}\n", b"this line is too long", b"\n{\"id\":3}"];
/// for chunk in chunks {
///     let mut input = chunk;
///     while !input.is_empty() {
///         let taken = framer.push(input);
///         input = input.get(taken..).unwrap_or_default();
///         while let Some(frame) = framer.next_frame() {
///             match frame {
///                 Frame::Line(line) => {
///                     assert!(line.starts_with(b"{\"id\":"));
///                     lines += 1;
///                 }
///                 Frame::Oversized { len } => {
///                     assert_eq!(len, 17);
///                     oversized += 1;
///                 }
///             }
///         }
///     }
/// }
/// // End of input: the last line had no newline.
/// while let Some(frame) = framer.finish() {
///     assert_eq!(frame, Frame::Line(b"{\"id\":3}"));
///     lines += 1;
/// }
/// assert_eq!((lines, oversized), (3, 1));
/// ```
///
/// When reading straight from a device, use [`spare`](Self::spare) and
/// [`commit`](Self::commit) instead of `push`: read into `spare()`, `commit(n)` the bytes
/// read, then drain `next_frame`. `spare()` is empty only when a frame is waiting.
#[derive(Debug)]
pub struct LineFramer<'b> {
    pub(crate) buf: &'b mut [u8],
    /// Start of the bytes not yet returned as frames.
    start: usize,
    /// End of the valid bytes in `buf`.
    end: usize,
    /// `buf[start..scan]` is known to contain no `\n`.
    scan: usize,
    /// Consuming (not storing) the rest of an oversized line, up to its `\n`.
    discarding: bool,
    /// An `Oversized` report waiting to be returned by `next_frame`.
    pending_oversized: Option<usize>,
    /// `buf[start..end]` fills the buffer and is a complete line whose `\n` was consumed.
    full_line_ready: bool,
    /// One byte of scratch handed out by `spare` when the buffer is full without a newline.
    extra: [u8; 1],
    /// `spare` last handed out `extra` (not the buffer).
    extra_armed: bool,
}

/// A frame as indices into the buffer (avoids borrowing `self` while deciding).
#[derive(Clone, Copy)]
enum Raw {
    Line(usize, usize),
    Oversized(usize),
}

/// What the buffer can do with the next input byte.
enum Room {
    /// There is free space at the end of the buffer.
    Space,
    /// A frame is waiting to be drained; input must wait.
    Waiting,
    /// The buffer is full, holds no newline and no frame is waiting: the next byte decides
    /// whether the buffered line is exactly `max_len` long (`\n`) or oversized.
    Full,
}

impl<'b> LineFramer<'b> {
    /// A framer whose maximum line length is `buf.len()` bytes (excluding the newline).
    pub fn new(buf: &'b mut [u8]) -> Self {
        LineFramer {
            buf,
            start: 0,
            end: 0,
            scan: 0,
            discarding: false,
            pending_oversized: None,
            full_line_ready: false,
            extra: [0],
            extra_armed: false,
        }
    }

    /// The maximum line length.
    pub fn max_len(&self) -> usize {
        self.buf.len()
    }

    /// Number of bytes currently held in the buffer (complete lines not yet returned plus a
    /// partial line).
    pub fn buffered(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// Whether the framer is consuming the remainder of an oversized line (up to and
    /// including its `\n`) without storing it.
    pub fn is_discarding(&self) -> bool {
        self.discarding
    }

    /// Forgets all buffered input, any pending report and discard mode, as if new.
    pub fn reset(&mut self) {
        self.start = 0;
        self.end = 0;
        self.scan = 0;
        self.discarding = false;
        self.pending_oversized = None;
        self.full_line_ready = false;
        self.extra_armed = false;
    }

    /// Recovers from a receive error (UART overrun, framing error): the line in progress
    /// is unreliable, so it is dropped with anything buffered after the last returned line,
    /// and input is discarded up to and including the next `\n`. No `Oversized` is
    /// reported; the next complete line after that newline comes through normally.
    pub fn resync(&mut self) {
        self.reset();
        self.discarding = true;
    }

    /// Copies bytes from `input` (as many as can be taken now) and returns how many it took.
    ///
    /// Bytes of an oversized line being discarded count as taken. Returns less than
    /// `input.len()` only when a frame is waiting: drain [`next_frame`](Self::next_frame) and
    /// push the rest.
    pub fn push(&mut self, input: &[u8]) -> usize {
        self.extra_armed = false;
        let mut taken = 0usize;
        while let Some(rest) = input.get(taken..).filter(|r| !r.is_empty()) {
            let n = if self.discarding {
                self.discard(rest)
            } else {
                match self.room() {
                    Room::Waiting => break,
                    Room::Space => self.store(rest),
                    Room::Full => match rest.first() {
                        Some(&b) => {
                            self.overflow_byte(b);
                            1
                        }
                        None => 0,
                    },
                }
            };
            taken = taken.saturating_add(n);
        }
        taken
    }

    /// The next complete frame, if any.
    pub fn next_frame(&mut self) -> Option<Frame<'_>> {
        let raw = self.next_raw();
        self.to_frame(raw)
    }

    /// End of input: returns the remaining frames like [`next_frame`](Self::next_frame), then
    /// a final unterminated non-blank line, then `None`. Call until it returns `None`; the
    /// framer is then empty and can be reused for a new stream.
    pub fn finish(&mut self) -> Option<Frame<'_>> {
        let raw = match self.next_raw() {
            Some(raw) => Some(raw),
            None => self.take_tail(),
        };
        self.to_frame(raw)
    }

    /// Free space to read into directly from a device; pass the number of bytes written to
    /// [`commit`](Self::commit), then drain [`next_frame`](Self::next_frame).
    ///
    /// Empty only when a frame is waiting to be drained. While an oversized line is being
    /// discarded this is the whole buffer (used as scratch). When the buffer holds exactly
    /// `max_len` bytes without a newline, it is a one-byte slice: that byte decides whether
    /// the line is complete or oversized.
    pub fn spare(&mut self) -> &mut [u8] {
        self.extra_armed = false;
        if self.discarding {
            self.compact();
            if self.buf.len() <= self.end {
                self.extra_armed = true;
                return &mut self.extra;
            }
        } else if let Room::Full = self.room() {
            self.extra_armed = true;
            return &mut self.extra;
        }
        let end = self.end;
        self.buf.get_mut(end..).unwrap_or_default()
    }

    /// Accepts `n` bytes written at the start of the slice last returned by
    /// [`spare`](Self::spare). `n` is clamped to that slice's length. In discard mode the bytes
    /// up to and including the first `\n` are dropped and the rest kept.
    pub fn commit(&mut self, n: usize) {
        if core::mem::take(&mut self.extra_armed) {
            if n > 0 {
                let [b] = self.extra;
                if self.discarding {
                    self.discarding = b != b'\n';
                } else {
                    self.overflow_byte(b);
                }
            }
            return;
        }
        let a = self.end;
        let n = n.min(self.buf.len().saturating_sub(a));
        let b = a.saturating_add(n);
        if self.discarding {
            let newline = self
                .buf
                .get(a..b)
                .and_then(|s| s.iter().position(|&c| c == b'\n'));
            if let Some(i) = newline {
                self.discarding = false;
                let keep = a.saturating_add(i).saturating_add(1);
                if keep <= b && b <= self.buf.len() {
                    move_down(self.buf, keep..b, a);
                    self.end = a.saturating_add(b - keep);
                }
            }
        } else {
            self.end = b;
        }
    }

    // ---- internals ----------------------------------------------------------------------

    /// Moves unreturned bytes to the front of the buffer.
    fn compact(&mut self) {
        if self.start == 0 {
            return;
        }
        if self.start <= self.end && self.end <= self.buf.len() {
            move_down(self.buf, self.start..self.end, 0);
            self.end -= self.start;
            self.scan = self.scan.saturating_sub(self.start).min(self.end);
        } else {
            // Unreachable by construction; recover to an empty buffer rather than panic.
            self.end = 0;
            self.scan = 0;
        }
        self.start = 0;
    }

    /// Position of the first `\n` in `buf[start..end]`, remembering how far was scanned.
    fn find_newline(&mut self) -> Option<usize> {
        let from = self.scan.max(self.start);
        let found = self
            .buf
            .get(from..self.end)
            .and_then(|s| s.iter().position(|&c| c == b'\n'));
        match found {
            Some(i) => {
                let p = from.saturating_add(i);
                self.scan = p;
                Some(p)
            }
            None => {
                self.scan = self.end;
                None
            }
        }
    }

    /// The line `buf[a..b]` without one trailing `\r`, unless it is blank.
    fn line_raw(&self, a: usize, b: usize) -> Option<Raw> {
        let line = self.buf.get(a..b)?;
        let b = match line.last() {
            Some(b'\r') => b.saturating_sub(1),
            _ => b,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            Some(Raw::Line(a, b))
        }
    }

    /// Makes room for input if possible (compacting, dropping blank lines from a full
    /// buffer) and says what the next byte can do.
    fn room(&mut self) -> Room {
        if self.full_line_ready {
            return Room::Waiting;
        }
        loop {
            self.compact();
            if self.end < self.buf.len() {
                return Room::Space;
            }
            match self.find_newline() {
                Some(p) => {
                    if self.line_raw(self.start, p).is_some() {
                        return Room::Waiting;
                    }
                    self.start = p.saturating_add(1);
                    self.scan = self.start;
                }
                None if self.pending_oversized.is_some() => return Room::Waiting,
                None => return Room::Full,
            }
        }
    }

    /// Copies as much of `input` as fits after `end`.
    fn store(&mut self, input: &[u8]) -> usize {
        let a = self.end;
        let n = input.len().min(self.buf.len().saturating_sub(a));
        let b = a.saturating_add(n);
        match (self.buf.get_mut(a..b), input.get(..n)) {
            (Some(dst), Some(src)) => {
                dst.copy_from_slice(src);
                self.end = b;
                n
            }
            _ => 0,
        }
    }

    /// Consumes discarded bytes up to and including the next `\n`.
    fn discard(&mut self, input: &[u8]) -> usize {
        match input.iter().position(|&c| c == b'\n') {
            Some(i) => {
                self.discarding = false;
                i.saturating_add(1)
            }
            None => input.len(),
        }
    }

    /// The byte after a full buffer without newline: ends an exactly-`max_len` line or makes
    /// the line oversized.
    fn overflow_byte(&mut self, b: u8) {
        if b == b'\n' {
            self.full_line_ready = true;
        } else {
            self.pending_oversized = Some(self.buf.len().saturating_add(1));
            self.discarding = true;
            self.start = 0;
            self.end = 0;
            self.scan = 0;
        }
    }

    fn next_raw(&mut self) -> Option<Raw> {
        if let Some(len) = self.pending_oversized.take() {
            return Some(Raw::Oversized(len));
        }
        if core::mem::take(&mut self.full_line_ready) {
            let (a, b) = (self.start, self.end);
            self.start = b;
            self.scan = b;
            if let Some(raw) = self.line_raw(a, b) {
                return Some(raw);
            }
        }
        loop {
            let p = self.find_newline()?;
            let a = self.start;
            self.start = p.saturating_add(1);
            self.scan = self.start;
            if let Some(raw) = self.line_raw(a, p) {
                return Some(raw);
            }
        }
    }

    /// At end of input: the unterminated rest as a last line.
    fn take_tail(&mut self) -> Option<Raw> {
        self.extra_armed = false;
        if core::mem::take(&mut self.discarding) {
            // The oversized line ends at end of input; it was already reported.
            return None;
        }
        let (a, b) = (self.start, self.end);
        self.start = 0;
        self.end = 0;
        self.scan = 0;
        self.line_raw(a, b)
    }

    fn to_frame(&self, raw: Option<Raw>) -> Option<Frame<'_>> {
        match raw? {
            Raw::Line(a, b) => self.buf.get(a..b).map(Frame::Line),
            Raw::Oversized(len) => Some(Frame::Oversized { len }),
        }
    }
}

/// `buf.copy_within(src, dst)` for `dst <= src.start`, done as non-overlapping chunk copies
/// (`memcpy`) instead of one overlapping move: on a microcontroller that keeps the
/// 1.5 KiB `memmove` routine out of the image. Out-of-range arguments copy nothing.
fn move_down(buf: &mut [u8], src: core::ops::Range<usize>, dst: usize) {
    let gap = src.start.saturating_sub(dst);
    if gap == 0 || src.end > buf.len() || src.start > src.end {
        return;
    }
    let mut from = src.start;
    while from < src.end {
        let n = gap.min(src.end - from);
        // `from - gap >= dst >= 0`, and `[from - gap, from)` never overlaps `[from, from + n)`.
        // Checked: `from < src.end <= buf.len()`, but a panicking split would link
        // `panic_fmt` and its message into every image.
        let Some((low, high)) = buf.split_at_mut_checked(from) else {
            return;
        };
        if let (Some(to), Some(chunk)) = (low.get_mut(from - gap..from - gap + n), high.get(..n)) {
            super::copy_bytes(to, chunk);
        }
        from += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resync_discards_through_the_next_newline() {
        let mut buf = [0u8; 32];
        let mut f = LineFramer::new(&mut buf);
        assert_eq!(f.push(b"{\"partial"), 9);
        f.resync();
        assert_eq!(f.push(b"garbage\n{\"ok\":1}\n"), 17);
        assert_eq!(f.next_frame(), Some(Frame::Line(b"{\"ok\":1}")));
        assert_eq!(f.next_frame(), None);
        // The same through spare/commit.
        f.resync();
        let n = {
            let spare = f.spare();
            let src = b"x\nyz\n";
            spare[..src.len()].copy_from_slice(src);
            src.len()
        };
        f.commit(n);
        assert_eq!(f.next_frame(), Some(Frame::Line(b"yz")));
    }

    #[test]
    fn move_down_matches_copy_within() {
        for len in 0..24usize {
            for start in 0..=len {
                for end in start..=len {
                    for dst in 0..=start {
                        let mut a: [u8; 24] = core::array::from_fn(|i| i as u8);
                        let mut b = a;
                        a.copy_within(start..end, dst);
                        move_down(&mut b, start..end, dst);
                        assert_eq!(a, b, "{start}..{end} -> {dst}");
                    }
                }
            }
        }
    }
    use std::vec;
    use std::vec::Vec;

    /// An owned frame, for comparisons.
    #[derive(Clone, Debug, PartialEq, Eq)]
    enum F {
        L(Vec<u8>),
        O(usize),
    }

    fn own(frame: Frame<'_>) -> F {
        match frame {
            Frame::Line(l) => F::L(l.to_vec()),
            Frame::Oversized { len } => F::O(len),
        }
    }

    fn l(s: &str) -> F {
        F::L(s.as_bytes().to_vec())
    }

    /// The documented driving loop: push until taken, drain after each push; then finish.
    fn run(max: usize, chunks: &[&[u8]]) -> Vec<F> {
        let mut storage = vec![0u8; max];
        let mut framer = LineFramer::new(&mut storage);
        let mut out = Vec::new();
        for chunk in chunks {
            let mut input: &[u8] = chunk;
            while !input.is_empty() {
                let n = framer.push(input);
                let waiting = framer.pending_oversized.is_some()
                    || framer.full_line_ready
                    || framer.buf[framer.start..framer.end].contains(&b'\n');
                assert!(n > 0 || waiting, "push took nothing with no frame waiting");
                input = &input[n..];
                let mut drained = 0;
                while let Some(f) = framer.next_frame() {
                    out.push(own(f));
                    drained += 1;
                }
                assert!(
                    n > 0 || drained > 0,
                    "livelock: push 0 and nothing to drain"
                );
                assert!(framer.buffered() <= framer.max_len());
            }
        }
        while let Some(f) = framer.finish() {
            out.push(own(f));
        }
        assert_eq!(framer.buffered(), 0);
        assert!(!framer.is_discarding());
        out
    }

    /// Same, but via spare/commit, copying at most `step` bytes per read.
    fn run_spare(max: usize, stream: &[u8], step: usize) -> Vec<F> {
        let mut storage = vec![0u8; max];
        let mut framer = LineFramer::new(&mut storage);
        let mut out = Vec::new();
        let mut input = stream;
        while !input.is_empty() {
            let spare = framer.spare();
            let n = spare.len().min(input.len()).min(step);
            spare[..n].copy_from_slice(&input[..n]);
            // Committing more than was handed out must be clamped.
            let empty_spare = spare.is_empty();
            framer.commit(n);
            input = &input[n..];
            let mut drained = 0;
            while let Some(f) = framer.next_frame() {
                out.push(own(f));
                drained += 1;
            }
            assert!(
                !empty_spare || drained > 0,
                "spare empty with nothing waiting"
            );
        }
        while let Some(f) = framer.finish() {
            out.push(own(f));
        }
        out
    }

    #[test]
    fn table() {
        struct Case {
            name: &'static str,
            max: usize,
            chunks: &'static [&'static [u8]],
            want: &'static [&'static str],
        }
        // "!N" in `want` means Oversized { len: N }.
        let cases = [
            Case {
                name: "crlf",
                max: 16,
                chunks: &[b"abc\r\ndef\r\n"],
                want: &["abc", "def"],
            },
            Case {
                name: "only one trailing cr stripped",
                max: 16,
                chunks: &[b"abc\r\r\n"],
                want: &["abc\r"],
            },
            Case {
                name: "blank and whitespace lines skipped",
                max: 16,
                chunks: &[b"\n\r\n  \t \n\na\n \r\n\nb\n"],
                want: &["a", "b"],
            },
            Case {
                name: "multiple lines per push",
                max: 32,
                chunks: &[b"one\ntwo\nthree\nfour"],
                want: &["one", "two", "three", "four"],
            },
            Case {
                name: "line split byte by byte",
                max: 8,
                chunks: &[b"{", b"\"", b"a", b"\"", b"}", b"\r", b"\n", b"x", b"\n"],
                want: &["{\"a\"}", "x"],
            },
            Case {
                name: "exact max length accepted",
                max: 4,
                chunks: &[b"abcd\nefgh\n"],
                want: &["abcd", "efgh"],
            },
            Case {
                name: "exact max length split before newline",
                max: 4,
                chunks: &[b"abcd", b"\n", b"ef"],
                want: &["abcd", "ef"],
            },
            Case {
                name: "max plus one rejected once and discarded",
                max: 4,
                chunks: &[b"abcde\nok\n"],
                want: &["!5", "ok"],
            },
            Case {
                name: "oversized long tail discarded across pushes",
                max: 4,
                chunks: &[b"abcdefgh", b"ijklmnop", b"qr\nok", b"\n"],
                want: &["!5", "ok"],
            },
            Case {
                name: "crlf counts against the limit",
                max: 4,
                chunks: &[b"abcd\r\nabc\r\n"],
                want: &["!5", "abc"],
            },
            Case {
                name: "two oversized in a row",
                max: 3,
                chunks: &[b"aaaaaa\nbbbbbbbb\nc\n"],
                want: &["!4", "!4", "c"],
            },
            Case {
                name: "oversized at eof",
                max: 3,
                chunks: &[b"x\naaaaaaa"],
                want: &["x", "!4"],
            },
            Case {
                name: "full buffer of blank lines does not block",
                max: 4,
                chunks: &[b"\n\n\n\n\n\n\nab\n"],
                want: &["ab"],
            },
            Case {
                name: "whitespace line of exactly max",
                max: 4,
                chunks: &[b"    \nab\n"],
                want: &["ab"],
            },
            Case {
                name: "unterminated final line",
                max: 8,
                chunks: &[b"a\nb\r"],
                want: &["a", "b"],
            },
            Case {
                name: "unterminated blank final line",
                max: 8,
                chunks: &[b"a\n  \r"],
                want: &["a"],
            },
            Case {
                name: "zero-length buffer",
                max: 0,
                chunks: &[b"\n\na\n\nbc\n"],
                want: &["!1", "!1"],
            },
            Case {
                name: "empty input",
                max: 8,
                chunks: &[b"", b""],
                want: &[],
            },
        ];
        for case in &cases {
            let want: Vec<F> = case
                .want
                .iter()
                .map(|w| match w.strip_prefix('!') {
                    Some(n) => F::O(n.parse().unwrap()),
                    None => l(w),
                })
                .collect();
            assert_eq!(run(case.max, case.chunks), want, "case {}", case.name);
            let whole: Vec<u8> = case.chunks.concat();
            for step in [1, 2, 3, 7, 1000] {
                assert_eq!(
                    run_spare(case.max, &whole, step),
                    want,
                    "case {} via spare/commit, step {step}",
                    case.name
                );
            }
        }
    }

    use crate::wire::test_rng::XorShift;

    #[test]
    fn one_megabyte_line_through_small_buffer() {
        let mut stream = vec![b'x'; 1 << 20];
        stream.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\"}\n");
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let mut chunks = Vec::new();
        let mut rest = &stream[..];
        while !rest.is_empty() {
            let n = (1 + rng.below(200)).min(rest.len());
            chunks.push(&rest[..n]);
            rest = &rest[n..];
        }
        let mut storage = [0u8; 64];
        let mut framer = LineFramer::new(&mut storage);
        let mut out = Vec::new();
        for chunk in &chunks {
            let mut input: &[u8] = chunk;
            while !input.is_empty() {
                let n = framer.push(input);
                input = &input[n..];
                while let Some(f) = framer.next_frame() {
                    out.push(own(f));
                }
            }
        }
        assert!(framer.finish().is_none());
        assert_eq!(out, vec![F::O(65), l("{\"jsonrpc\":\"2.0\"}")]);
    }

    #[test]
    fn discard_mode_is_visible() {
        let mut storage = [0u8; 2];
        let mut framer = LineFramer::new(&mut storage);
        assert_eq!(framer.push(b"abcdef"), 6);
        assert!(framer.is_discarding());
        assert_eq!(framer.buffered(), 0);
        assert_eq!(framer.next_frame(), Some(Frame::Oversized { len: 3 }));
        assert_eq!(framer.next_frame(), None);
        assert_eq!(framer.push(b"gh\nij"), 5);
        assert!(!framer.is_discarding());
        assert_eq!(framer.buffered(), 2);
        framer.reset();
        assert_eq!(framer.buffered(), 0);
        assert_eq!(framer.push(b"k\n"), 2);
        assert_eq!(framer.next_frame(), Some(Frame::Line(b"k")));
    }

    #[test]
    fn push_takes_zero_only_with_frame_waiting() {
        let mut storage = [0u8; 4];
        let mut framer = LineFramer::new(&mut storage);
        assert_eq!(framer.push(b"ab\ncdef"), 4);
        assert_eq!(framer.push(b"cdef"), 0);
        assert_eq!(framer.next_frame(), Some(Frame::Line(b"ab")));
        assert_eq!(framer.next_frame(), None);
        // Fills the buffer exactly; the newline is consumed without being stored.
        assert_eq!(framer.push(b"def\n"), 4);
        assert_eq!(framer.push(b"x"), 0);
        assert_eq!(framer.next_frame(), Some(Frame::Line(b"cdef")));
        assert_eq!(framer.push(b"x"), 1);
    }

    #[test]
    fn commit_clamps_and_spare_is_empty_only_when_waiting() {
        let mut storage = [0u8; 4];
        let mut framer = LineFramer::new(&mut storage);
        let spare = framer.spare();
        assert_eq!(spare.len(), 4);
        spare.copy_from_slice(b"abcd");
        framer.commit(100);
        assert_eq!(framer.buffered(), 4);
        assert_eq!(framer.next_frame(), None);
        // Full without newline: a one-byte spare decides.
        let spare = framer.spare();
        assert_eq!(spare.len(), 1);
        spare[0] = b'e';
        framer.commit(5);
        assert!(framer.is_discarding());
        assert_eq!(framer.next_frame(), Some(Frame::Oversized { len: 5 }));
        let spare = framer.spare();
        assert_eq!(spare.len(), 4);
        spare.copy_from_slice(b"x\nok");
        framer.commit(4);
        assert!(!framer.is_discarding());
        assert_eq!(framer.buffered(), 2);
        assert_eq!(framer.finish(), Some(Frame::Line(b"ok")));
        assert_eq!(framer.finish(), None);
        // Commit without anything written is harmless.
        framer.commit(0);
        assert_eq!(framer.buffered(), 0);
    }

    /// Random stream of lines (some blank, some CRLF, some oversized).
    fn random_stream(rng: &mut XorShift, max: usize) -> Vec<u8> {
        let mut s = Vec::new();
        for _ in 0..200 {
            let kind = rng.below(10);
            let len = match kind {
                0 => 0,
                1 => max,
                2 => max + 1 + rng.below(3 * max + 1),
                _ => rng.below(max + 1),
            };
            for _ in 0..len {
                let c = match rng.below(12) {
                    0 => b' ',
                    1 => b'\r',
                    _ => b'a' + rng.below(26) as u8,
                };
                s.push(c);
            }
            if rng.below(3) == 0 {
                s.push(b'\r');
            }
            s.push(b'\n');
        }
        // Sometimes end without a newline.
        if rng.below(2) == 0 {
            s.extend_from_slice(b"tail");
        }
        s
    }

    /// Reference model: split on `\n`, strip one `\r`, skip blanks, `len > max` → Oversized.
    fn model(stream: &[u8], max: usize) -> Vec<F> {
        let mut out = Vec::new();
        for line in stream.split(|&c| c == b'\n') {
            if line.len() > max {
                out.push(F::O(max + 1));
                continue;
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !line.iter().all(u8::is_ascii_whitespace) {
                out.push(F::L(line.to_vec()));
            }
        }
        out
    }

    #[test]
    fn random_splits_match_whole_feed() {
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        for round in 0..60 {
            let max = 1 + rng.below(40);
            let stream = random_stream(&mut rng, max);
            let whole = run(max, &[&stream]);
            assert_eq!(whole, model(&stream, max), "round {round}: model");
            for _ in 0..5 {
                let mut chunks: Vec<&[u8]> = Vec::new();
                let mut rest = &stream[..];
                while !rest.is_empty() {
                    let n = rng.below(2 * max + 2).min(rest.len());
                    chunks.push(&rest[..n]);
                    rest = &rest[n..];
                }
                assert_eq!(run(max, &chunks), whole, "round {round}: split");
                let step = 1 + rng.below(2 * max + 1);
                assert_eq!(run_spare(max, &stream, step), whole, "round {round}: spare");
            }
        }
    }
}
