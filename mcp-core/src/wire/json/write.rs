//! A JSON writer into a caller-owned byte slice.
//!
//! # Output rules
//!
//! * Strings are escaped per RFC 8259: `"` → `\"`, `\` → `\\`, the control characters
//!   U+0008/9/A/C/D → `\b` `\t` `\n` `\f` `\r`, every other control character (U+0000..U+001F)
//!   → `\u00xx` (lowercase hex). Everything else, including non-ASCII, DEL and
//!   U+2028/U+2029, is copied verbatim as UTF-8 (valid JSON; embedders that paste JSON into
//!   JavaScript source must escape those two themselves). Runs of bytes that need no escaping
//!   are copied in one `copy_from_slice`.
//! * Integers are formatted by hand; `f64` uses the shortest representation that round-trips
//!   (Rust's `{:?}` float formatting: `0.1`, `1.0`, `1e21`, `5e-324`, `-0.0`), which is always a
//!   valid JSON number for finite values. NaN and infinities are written as `null`.
//! * Commas are inserted automatically from a 128-bit "has items" stack, so nesting up to
//!   128 levels (the scanner's [`MAX_DEPTH_LIMIT`](super::MAX_DEPTH_LIMIT)) is exact. Deeper
//!   nesting never panics, but the levels beyond 128 share the last bit, so comma placement
//!   there is unreliable: keep documents within 128 levels.

use core::fmt;

/// The output buffer was too small; `required` is the total number of bytes the whole
/// output needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferTooSmall {
    /// Bytes needed for the complete output.
    pub required: usize,
}

impl fmt::Display for BufferTooSmall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "output buffer too small: {} bytes required",
            self.required
        )
    }
}

impl core::error::Error for BufferTooSmall {}

/// Number of nesting levels whose comma state is tracked exactly (bits of `has_items`).
const TRACKED_DEPTH: u8 = 128;

/// Writes JSON into `&mut [u8]`. Commas between members/elements are inserted automatically.
/// When the buffer runs out, writing continues *counting* bytes, so [`finish`](Self::finish)
/// can report the exact size required. Never panics.
///
/// In *string mode* ([`set_string_mode`](Self::set_string_mode)) every byte written is escaped
/// as JSON string content: used to embed one JSON document as a string inside another.
///
/// ```
/// use mcp_rs_core::wire::json::JsonWriter;
///
/// let mut buf = [0u8; 64];
/// let mut w = JsonWriter::new(&mut buf);
/// w.begin_object();
/// w.key("a");
/// w.u64(1);
/// w.key("b");
/// w.begin_array();
/// w.bool(true);
/// w.null();
/// w.end_array();
/// w.end_object();
/// assert_eq!(w.written(), br#"{"a":1,"b":[true,null]}"#);
/// ```
///
/// Embedding a document as a string value (see also
/// [`begin_string_value`](Self::begin_string_value)):
///
/// ```
/// use mcp_rs_core::wire::json::JsonWriter;
///
/// let mut buf = [0u8; 64];
/// let mut w = JsonWriter::new(&mut buf);
/// w.begin_object();
/// w.key("text");
/// w.begin_string_value();
/// w.begin_object();
/// w.key("a");
/// w.string("x");
/// w.end_object();
/// w.end_string_value();
/// w.end_object();
/// assert_eq!(w.written(), br#"{"text":"{\"a\":\"x\"}"}"#);
/// ```
#[derive(Debug)]
pub struct JsonWriter<'b> {
    pub(crate) buf: &'b mut [u8],
    /// Logical length (may exceed `buf.len()` after overflow).
    pub(crate) len: usize,
    /// Bit `d - 1` set: the container at depth `d` (1-based) already has a member/element.
    pub(crate) has_items: u128,
    pub(crate) depth: u8,
    /// The last thing written was a key: the next value takes no comma.
    pub(crate) after_key: bool,
    pub(crate) string_mode: bool,
}

impl<'b> JsonWriter<'b> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        JsonWriter {
            buf,
            len: 0,
            has_items: 0,
            depth: 0,
            after_key: false,
            string_mode: false,
        }
    }
    /// Bytes written (or required) so far.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Whether the output no longer fits the buffer.
    pub fn overflowed(&self) -> bool {
        self.len > self.buf.len()
    }
    /// Capacity of the underlying buffer.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }
    /// Current nesting depth of open arrays/objects (saturates at 255).
    pub fn depth(&self) -> u8 {
        self.depth
    }
    /// Whether string mode is on.
    pub fn string_mode(&self) -> bool {
        self.string_mode
    }
    /// The bytes written so far (truncated to the buffer after overflow).
    pub fn written(&self) -> &[u8] {
        let n = self.len.min(self.buf.len());
        self.buf.get(..n).unwrap_or_default()
    }
    /// Rewinds to an earlier length (from [`len`](Self::len)) and structural state
    /// (from [`checkpoint`](Self::checkpoint)), dropping what was written after it.
    ///
    /// Works after an overflow too: if the checkpoint was taken while the output still fit,
    /// the writer is exactly as it was then and [`finish`](Self::finish) can succeed again.
    /// The string mode is restored as well. A checkpoint that lies *ahead* of the current
    /// length (taken before an earlier rewind past it) is ignored.
    pub fn rewind(&mut self, to: Checkpoint) {
        if to.len > self.len {
            return;
        }
        self.len = to.len;
        self.has_items = to.has_items;
        self.depth = to.depth;
        self.after_key = to.after_key;
        self.string_mode = to.string_mode;
    }
    /// Captures length and structural state for [`rewind`](Self::rewind).
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            len: self.len,
            has_items: self.has_items,
            depth: self.depth,
            after_key: self.after_key,
            string_mode: self.string_mode,
        }
    }
    /// Turns string mode on or off (see the type docs). Structural state is kept.
    ///
    /// String mode is a single level: the escaped output is meant to sit between two `"`
    /// written with string mode off (or use [`begin_string_value`](Self::begin_string_value)).
    pub fn set_string_mode(&mut self, on: bool) {
        self.string_mode = on;
    }
    /// Starts a string value (comma handling, opening `"`) and turns string mode on, so the
    /// next value written becomes the string's content as JSON text. That embedded value is
    /// treated as a top-level value (no leading comma). Close with
    /// [`end_string_value`](Self::end_string_value). Must not be nested (string mode is one
    /// level).
    pub fn begin_string_value(&mut self) {
        self.before_value();
        self.emit(b"\"");
        self.string_mode = true;
        // The embedded document's first value must not take a comma.
        self.after_key = true;
    }
    /// Turns string mode off and writes the closing `"` of a
    /// [`begin_string_value`](Self::begin_string_value).
    pub fn end_string_value(&mut self) {
        self.string_mode = false;
        self.after_key = false;
        self.put(b"\"");
    }
    /// Appends bytes verbatim (escaped in string mode). No comma handling.
    pub fn raw(&mut self, s: &str) {
        self.emit(s.as_bytes());
    }
    /// Appends an already-valid JSON value verbatim, with comma handling. It must be on one
    /// line (see [`check_embedded`](crate::wire::json::check_embedded)), or it would split a
    /// newline-delimited frame.
    pub fn raw_value(&mut self, json: &str) {
        self.before_value();
        self.emit(json.as_bytes());
    }
    /// Writes, as a value, the JSON text that string mode wrote escaped at `from..to` of this
    /// buffer (one level of escaping undone, so the value is byte for byte what was written
    /// into the string). Returns `false`, writing nothing, when that text is not in the
    /// buffer (overflow) or the room after it is too small; the caller then writes the value
    /// again. Cheaper than a second rendering for a value that appears both as text and as
    /// JSON (`structuredContent`).
    #[cfg(feature = "render-once")]
    pub(crate) fn value_unescaped_from(&mut self, from: usize, to: usize) -> bool {
        if self.overflowed() || self.string_mode || from > to || to > self.len {
            return false;
        }
        // The unescaped text is never longer than the escaped one.
        let room = self.buf.len() - self.len;
        let comma = usize::from(!self.after_key && self.depth > 0);
        if room < to - from + comma {
            return false;
        }
        self.before_value();
        let (done, free) = self.buf.split_at_mut(self.len);
        let (Some(src), mut at) = (done.get(from..to), 0) else {
            return false;
        };
        let mut rest = src;
        loop {
            // A run without escapes, copied whole, then one escape sequence.
            let run_len = rest.iter().position(|&b| b == b'\\').unwrap_or(rest.len());
            let (run, tail) = rest.split_at(run_len);
            if let Some(dst) = free.get_mut(at..at + run.len()) {
                dst.copy_from_slice(run);
            }
            at += run.len();
            let (byte, used) = match tail.get(1) {
                None => break,
                Some(b'"') => (b'"', 2),
                Some(b'\\') => (b'\\', 2),
                Some(b'n') => (b'\n', 2),
                Some(b'r') => (b'\r', 2),
                Some(b't') => (b'\t', 2),
                Some(b'b') => (0x08, 2),
                Some(b'f') => (0x0c, 2),
                // `\u00XX`: the only other form `Escape::of` writes.
                Some(_) => {
                    let hex = |k: usize| tail.get(k).and_then(|&h| char::from(h).to_digit(16));
                    match (hex(4), hex(5)) {
                        (Some(hi), Some(lo)) => ((hi * 16 + lo) as u8, 6),
                        _ => (b'\\', 1),
                    }
                }
            };
            if let Some(slot) = free.get_mut(at) {
                *slot = byte;
            }
            at += 1;
            rest = tail.get(used..).unwrap_or_default();
        }
        self.len += at;
        true
    }
    /// `{`
    pub fn begin_object(&mut self) {
        self.before_value();
        self.emit(b"{");
        self.push();
    }
    /// `}`
    pub fn end_object(&mut self) {
        self.emit(b"}");
        self.pop();
    }
    /// `[`
    pub fn begin_array(&mut self) {
        self.before_value();
        self.emit(b"[");
        self.push();
    }
    /// `]`
    pub fn end_array(&mut self) {
        self.emit(b"]");
        self.pop();
    }
    /// An object key (escaped) and `:`.
    pub fn key(&mut self, k: &str) {
        // A key directly after a key is a caller error; treat it like a fresh member.
        self.after_key = false;
        self.before_value();
        self.emit(b"\"");
        self.emit_escaped(k.as_bytes());
        self.emit(b"\":");
        self.after_key = true;
    }
    /// A string value, quoted and escaped.
    pub fn string(&mut self, s: &str) {
        self.before_value();
        self.emit(b"\"");
        self.emit_escaped(s.as_bytes());
        self.emit(b"\"");
    }
    /// A string value assembled from parts, without `core::fmt` (which costs kilobytes of
    /// flash on a microcontroller).
    pub fn string_parts(&mut self, parts: &[StrPart<'_>]) {
        self.before_value();
        self.emit(b"\"");
        for part in parts {
            match *part {
                StrPart::Text(t) => self.emit_escaped(t.as_bytes()),
                StrPart::Escaped(e) => self.emit(e.as_bytes()),
                StrPart::Number(n) => {
                    let mut digits = Digits::new();
                    digits.push_u64(n);
                    self.emit(digits.as_bytes());
                }
            }
        }
        self.emit(b"\"");
    }
    /// A string value from formatting arguments, quoted and escaped.
    ///
    /// A formatting error from a `Display` impl stops the content there; the string is
    /// still closed, so the output stays valid JSON.
    pub fn string_fmt(&mut self, args: fmt::Arguments<'_>) {
        self.before_value();
        self.emit(b"\"");
        match args.as_str() {
            Some(s) => self.emit_escaped(s.as_bytes()),
            None => {
                let _ = fmt::write(&mut EscapingSink { w: self }, args);
            }
        }
        self.emit(b"\"");
    }
    /// A string value whose escaped content is already valid (e.g. [`JsonStr::raw`](super::JsonStr::raw)).
    pub fn string_raw_escaped(&mut self, escaped: &str) {
        self.before_value();
        self.emit(b"\"");
        self.emit(escaped.as_bytes());
        self.emit(b"\"");
    }
    /// An unsigned integer value.
    pub fn u64(&mut self, v: u64) {
        self.integer(false, v);
    }
    /// A signed integer value.
    pub fn i64(&mut self, v: i64) {
        self.integer(v < 0, v.unsigned_abs());
    }
    /// The one integer writer behind [`u64`](Self::u64) and [`i64`](Self::i64) (#21: one
    /// copy of the digit loop and its zeroed buffer).
    fn integer(&mut self, negative: bool, magnitude: u64) {
        self.before_value();
        let mut digits = Digits::new();
        digits.push_u64(magnitude);
        if negative {
            digits.push_byte(b'-');
        }
        self.emit(digits.as_bytes());
    }
    /// A float value (shortest round-trip form); NaN and infinities are written as `null`.
    ///
    /// The form is Rust's `{:?}` for `f64`: `1.0`, `0.1`, `-0.0`, `1e21`, `1e-7`, `5e-324`;
    /// always a valid JSON number and at most 24 bytes.
    pub fn f64(&mut self, v: f64) {
        if !v.is_finite() {
            self.null();
            return;
        }
        self.before_value();
        // Integral values below 1e16 (where `{:?}` switches to exponent form) are written
        // as the integer and `.0`, exactly as `{:?}` would, without the shortest-digits
        // search (a third of a small tool call's cost when counts and sums are integers).
        // `-0.0` keeps the general path for its sign.
        if v.abs() < 1e16 && v == (v as i64) as f64 && !(v == 0.0 && v.is_sign_negative()) {
            let mut digits = Digits::new();
            digits.push_byte(b'0');
            digits.push_byte(b'.');
            digits.push_u64((v as i64).unsigned_abs());
            if v < 0.0 {
                digits.push_byte(b'-');
            }
            self.emit(digits.as_bytes());
            return;
        }
        let _ = fmt::write(&mut RawSink { w: self }, format_args!("{v:?}"));
    }
    /// `true` / `false`.
    pub fn bool(&mut self, v: bool) {
        self.before_value();
        self.emit(if v { b"true" } else { b"false" });
    }
    /// `null`.
    pub fn null(&mut self) {
        self.before_value();
        self.emit(b"null");
    }
    /// Total length, or [`BufferTooSmall`] with the exact size required.
    pub fn finish(self) -> Result<usize, BufferTooSmall> {
        if self.overflowed() {
            Err(BufferTooSmall { required: self.len })
        } else {
            Ok(self.len)
        }
    }

    // ---- structure ----

    /// The `has_items` bit of the innermost open container (depth >= 1).
    fn top_bit(&self) -> u128 {
        let idx = self.depth.min(TRACKED_DEPTH).saturating_sub(1);
        1u128.checked_shl(u32::from(idx)).unwrap_or(0)
    }

    /// Comma handling before a value or key.
    fn before_value(&mut self) {
        if self.after_key {
            self.after_key = false;
            return;
        }
        if self.depth == 0 {
            return;
        }
        let bit = self.top_bit();
        if self.has_items & bit != 0 {
            self.emit(b",");
        } else {
            self.has_items |= bit;
        }
    }

    fn push(&mut self) {
        self.depth = self.depth.saturating_add(1);
        self.has_items &= !self.top_bit();
    }

    fn pop(&mut self) {
        self.after_key = false;
        self.depth = self.depth.saturating_sub(1);
    }

    // ---- byte sinks ----

    /// Stores bytes (as far as they fit) and counts them. No escaping.
    fn put(&mut self, bytes: &[u8]) {
        let start = self.len;
        let end = start.saturating_add(bytes.len());
        if let Some(dst) = self.buf.get_mut(start..end) {
            crate::wire::copy_bytes(dst, bytes);
        } else if let Some(dst) = self.buf.get_mut(start..) {
            // Partial fit: keep the stored prefix identical to the logical output.
            let n = dst.len();
            if let Some(src) = bytes.get(..n) {
                crate::wire::copy_bytes(dst, src);
            }
        }
        self.len = end;
    }

    /// Output bytes: verbatim, or escaped as string content in string mode.
    fn emit(&mut self, bytes: &[u8]) {
        if self.string_mode {
            self.escape_into(bytes, Self::put);
        } else {
            self.put(bytes);
        }
    }

    /// String content: escaped, then passed through [`emit`](Self::emit) (so it is escaped a
    /// second time in string mode).
    fn emit_escaped(&mut self, bytes: &[u8]) {
        self.escape_into(bytes, Self::emit);
    }

    /// Escapes `s` as JSON string content, handing runs and escape sequences to `sink`.
    fn escape_into(&mut self, mut s: &[u8], sink: fn(&mut Self, &[u8])) {
        while let Some(pos) = s.iter().position(|&b| needs_escape(b)) {
            let Some((run, rest)) = s.split_at_checked(pos) else {
                break;
            };
            let Some((&b, rest)) = rest.split_first() else {
                break;
            };
            if !run.is_empty() {
                sink(self, run);
            }
            let esc = Escape::of(b);
            sink(self, esc.as_bytes());
            s = rest;
        }
        if !s.is_empty() {
            sink(self, s);
        }
    }
}

/// Appends raw text (escaped as string content in string mode), without comma handling:
/// the same as [`JsonWriter::raw`]. Never returns an error.
impl fmt::Write for JsonWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.emit(s.as_bytes());
        Ok(())
    }
}

/// One piece of a string written with [`JsonWriter::string_parts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrPart<'a> {
    /// Plain text, escaped on output.
    Text(&'a str),
    /// Content that is already valid escaped JSON string content (e.g.
    /// [`JsonStr::raw`](super::JsonStr::raw)), written as is.
    Escaped(&'a str),
    /// A decimal number.
    Number(u64),
}

/// Saved writer state, see [`JsonWriter::checkpoint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub(crate) len: usize,
    pub(crate) has_items: u128,
    pub(crate) depth: u8,
    pub(crate) after_key: bool,
    pub(crate) string_mode: bool,
}

impl Checkpoint {
    /// The writer length at the checkpoint.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the checkpoint was taken at the very start.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// `fmt::Write` adapter: string content, escaped.
struct EscapingSink<'w, 'b> {
    w: &'w mut JsonWriter<'b>,
}

impl fmt::Write for EscapingSink<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.w.emit_escaped(s.as_bytes());
        Ok(())
    }
}

/// `fmt::Write` adapter: raw output (escaped only in string mode).
struct RawSink<'w, 'b> {
    w: &'w mut JsonWriter<'b>,
}

impl fmt::Write for RawSink<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.w.emit(s.as_bytes());
        Ok(())
    }
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// One escape sequence (2 or 6 ASCII bytes).
struct Escape {
    bytes: [u8; 6],
    len: usize,
}

impl Escape {
    fn of(b: u8) -> Escape {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let short = match b {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'\n' => Some(b'n'),
            b'\r' => Some(b'r'),
            b'\t' => Some(b't'),
            0x08 => Some(b'b'),
            0x0c => Some(b'f'),
            _ => None,
        };
        match short {
            Some(c) => Escape {
                bytes: [b'\\', c, 0, 0, 0, 0],
                len: 2,
            },
            None => {
                let hi = HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0');
                let lo = HEX.get(usize::from(b & 0xf)).copied().unwrap_or(b'0');
                Escape {
                    bytes: [b'\\', b'u', b'0', b'0', hi, lo],
                    len: 6,
                }
            }
        }
    }

    fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

/// Decimal digits, filled from the end.
struct Digits {
    buf: [u8; 24],
    start: usize,
}

/// `(n / 10, n % 10)` with shifts and adds only (Hacker's Delight, `divu10`).
fn div10(n: u64) -> (u64, u8) {
    let mut q = (n >> 1) + (n >> 2);
    q += q >> 4;
    q += q >> 8;
    q += q >> 16;
    q += q >> 32;
    q >>= 3;
    // `q` is `n / 10` or one less; `q * 10 <= n`.
    let r = n.wrapping_sub((q << 3).wrapping_add(q << 1));
    if r > 9 {
        (q + 1, (r - 10) as u8)
    } else {
        (q, r as u8)
    }
}

impl Digits {
    fn new() -> Self {
        Digits {
            buf: [0; 24],
            start: 24,
        }
    }

    fn push_byte(&mut self, b: u8) {
        if let Some(i) = self.start.checked_sub(1) {
            if let Some(slot) = self.buf.get_mut(i) {
                *slot = b;
                self.start = i;
            }
        }
    }

    /// Decimal digits without division: [`div10`]'s shifts and adds. (A 64-bit division is
    /// a ~1 KiB library call on 32-bit microcontrollers, and a 32-bit one is too on the
    /// Cortex-M0, which has no divide instruction: #21.)
    fn push_u64(&mut self, mut v: u64) {
        loop {
            let (q, r) = div10(v);
            self.push_byte(b'0' + r);
            v = q;
            if v == 0 {
                break;
            }
        }
    }

    fn as_bytes(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn f64_fast_path_matches_debug_format() {
        use std::format;
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut values = std::vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            5.0,
            10.0,
            0.5,
            -2.5,
            1e15,
            -1e15,
            9_999_999_999_999_998.0,
            1e16,
            -1e16,
            1e17,
            1e21,
            9_007_199_254_740_993.0,
            4_503_599_627_370_495.5,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            0.1,
            123_456_789.0,
            -987_654_321.0,
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if v.is_finite() {
                values.push(v);
                values.push((v as i64) as f64);
                values.push(((x >> 11) as i64 - (1 << 52)) as f64);
            }
        }
        let mut buf = [0u8; 32];
        for v in values {
            let mut w = JsonWriter::new(&mut buf);
            w.f64(v);
            let len = w.finish().expect("fits");
            assert_eq!(
                core::str::from_utf8(&buf[..len]).expect("utf-8"),
                format!("{v:?}"),
                "{v:e}"
            );
        }
    }

    #[test]
    #[cfg(feature = "render-once")]
    fn value_unescaped_from_matches_a_second_rendering() {
        let value = |w: &mut JsonWriter<'_>| {
            w.begin_object();
            w.key("q\"uote\\");
            w.string("line\nbreak\ttab\r\u{8}\u{c}\u{1}\u{1f} é ✓ \\u00e9");
            w.key("n");
            w.f64(-2.5);
            w.key("raw");
            w.raw_value(r#"["\u00e9\"\\",null]"#);
            w.end_object();
        };
        let twice = render(|w| {
            w.begin_array();
            w.begin_string_value();
            value(w);
            w.end_string_value();
            value(w);
            w.end_array();
        });
        let copied = render(|w| {
            w.begin_array();
            w.begin_string_value();
            let from = w.len();
            value(w);
            let to = w.len();
            w.end_string_value();
            assert!(w.value_unescaped_from(from, to));
            w.end_array();
        });
        assert_eq!(copied, twice);
        // No room for the copy: nothing is written, the caller renders again.
        let mut small = [0u8; 40];
        let mut w = JsonWriter::new(&mut small);
        w.begin_array();
        w.begin_string_value();
        let from = w.len();
        w.string("abcdefghijklmnop");
        let to = w.len();
        w.end_string_value();
        let len = w.len();
        assert!(!w.value_unescaped_from(from, to));
        assert_eq!(w.len(), len);
    }

    #[test]
    fn div10_matches_division() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let check = |n: u64| assert_eq!(div10(n), (n / 10, (n % 10) as u8), "{n}");
        for n in [
            0,
            9,
            10,
            11,
            99,
            100,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
            u64::MAX,
            u64::MAX - 5,
            10u64.pow(19),
            10u64.pow(19) - 1,
        ] {
            check(n);
        }
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check(x);
            check(x >> (x % 64));
        }
    }

    #[test]
    fn string_parts_without_fmt() {
        let mut buf = [0u8; 64];
        let mut w = JsonWriter::new(&mut buf);
        w.string_parts(&[
            StrPart::Text("a\"b "),
            StrPart::Escaped("\\u00e9"),
            StrPart::Number(18_446_744_073_709_551_615),
        ]);
        let n = w.finish().unwrap();
        assert_eq!(
            core::str::from_utf8(&buf[..n]).unwrap(),
            "\"a\\\"b \\u00e918446744073709551615\""
        );
    }
    use core::fmt::Write as _;
    use std::string::String;
    use std::vec;
    use std::vec::Vec;

    /// Runs `f` on a writer over a large buffer and returns the output as a `String`.
    fn render(f: impl Fn(&mut JsonWriter<'_>)) -> String {
        let mut buf = vec![0u8; 1 << 16];
        let mut w = JsonWriter::new(&mut buf);
        f(&mut w);
        let n = w.finish().expect("fits");
        String::from_utf8(buf[..n].to_vec()).expect("utf-8")
    }

    /// Runs `f` into buffers of every size below the full length and checks the reported
    /// `required` size and the stored prefix.
    fn check_overflow(f: impl Fn(&mut JsonWriter<'_>)) {
        let full = render(&f);
        for cap in 0..full.len() {
            let mut buf = vec![0u8; cap];
            let mut w = JsonWriter::new(&mut buf);
            f(&mut w);
            assert!(w.overflowed());
            assert_eq!(w.written(), &full.as_bytes()[..cap]);
            assert_eq!(
                w.finish(),
                Err(BufferTooSmall {
                    required: full.len()
                })
            );
        }
        let mut buf = vec![0u8; full.len()];
        let mut w = JsonWriter::new(&mut buf);
        f(&mut w);
        assert!(!w.overflowed());
        assert_eq!(w.finish(), Ok(full.len()));
    }

    fn string_json(s: &str) -> String {
        render(|w| w.string(s))
    }

    #[test]
    fn escaping_table() {
        let cases: &[(&str, &str)] = &[
            ("", r#""""#),
            ("plain", r#""plain""#),
            ("\"", r#""\"""#),
            ("\\", r#""\\""#),
            ("\n", r#""\n""#),
            ("\r", r#""\r""#),
            ("\t", r#""\t""#),
            ("\u{8}", r#""\b""#),
            ("\u{c}", r#""\f""#),
            ("\u{0}", r#""\u0000""#),
            ("\u{1}", r#""\u0001""#),
            ("\u{1f}", r#""\u001f""#),
            ("\u{b}", r#""\u000b""#),
            ("\u{7f}", "\"\u{7f}\""),
            ("/", r#""/""#),
            ("é€😀", "\"é€😀\""),
            ("\u{2028}\u{2029}", "\"\u{2028}\u{2029}\""),
            ("a\"b\\c\nd", r#""a\"b\\c\nd""#),
            ("\"\"", r#""\"\"""#),
        ];
        for (input, expected) in cases {
            let out = string_json(input);
            assert_eq!(&out, expected, "input {input:?}");
            let back: String = serde_json::from_str(&out).unwrap();
            assert_eq!(&back, input);
        }
        // Every control character and a few specials round-trip through serde_json.
        let all: String = (0u32..0x80).filter_map(char::from_u32).collect();
        let out = string_json(&all);
        assert_eq!(serde_json::from_str::<String>(&out).unwrap(), all);
    }

    #[test]
    fn keys_are_escaped() {
        let out = render(|w| {
            w.begin_object();
            w.key("a\"b");
            w.u64(1);
            w.end_object();
        });
        assert_eq!(out, r#"{"a\"b":1}"#);
    }

    #[test]
    fn auto_commas() {
        let out = render(|w| {
            w.begin_object();
            w.key("a");
            w.begin_array();
            w.end_array();
            w.key("b");
            w.begin_object();
            w.end_object();
            w.key("c");
            w.begin_array();
            w.u64(1);
            w.begin_array();
            w.i64(-2);
            w.string("x");
            w.end_array();
            w.begin_object();
            w.key("d");
            w.null();
            w.key("e");
            w.bool(false);
            w.end_object();
            w.raw_value("{\"r\":1}");
            w.string_raw_escaped("q\\n");
            w.string_fmt(format_args!("{}-{}", 1, "two"));
            w.f64(0.5);
            w.end_array();
            w.key("f");
            w.bool(true);
            w.end_object();
        });
        assert_eq!(
            out,
            r#"{"a":[],"b":{},"c":[1,[-2,"x"],{"d":null,"e":false},{"r":1},"q\n","1-two",0.5],"f":true}"#
        );
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
    }

    #[test]
    fn top_level_values_and_empty() {
        assert_eq!(render(|w| w.null()), "null");
        assert_eq!(
            render(|w| {
                w.begin_array();
                w.end_array();
            }),
            "[]"
        );
        let mut buf = [0u8; 4];
        let w = JsonWriter::new(&mut buf);
        assert!(w.is_empty());
        assert_eq!(w.written(), b"");
        assert_eq!(w.finish(), Ok(0));
    }

    #[test]
    fn deep_nesting_exact_to_128_and_no_panic_beyond() {
        let nested = |levels: usize| {
            move |w: &mut JsonWriter<'_>| {
                for _ in 0..levels {
                    w.begin_array();
                    w.u64(1);
                }
                for _ in 0..levels {
                    w.end_array();
                    w.u64(2);
                }
            }
        };
        // The 128-level document must be exact.
        let out = render(nested(128));
        let mut expected = String::new();
        for i in 0..128 {
            expected.push_str(if i == 0 { "[1" } else { ",[1" });
        }
        for i in 0..128 {
            expected.push(']');
            expected.push_str(if i == 127 { "2" } else { ",2" });
        }
        assert_eq!(out, expected);
        // 300 levels: saturated but never panics, length still counted.
        let out = render(nested(300));
        assert!(out.len() > 600);
        let mut buf = [0u8; 10];
        let mut w = JsonWriter::new(&mut buf);
        for _ in 0..300 {
            w.end_object();
        }
        assert_eq!(w.depth(), 0);
        for _ in 0..300 {
            w.begin_object();
        }
        assert_eq!(w.depth(), 255);
        assert_eq!(w.finish(), Err(BufferTooSmall { required: 600 }));
    }

    fn sample(w: &mut JsonWriter<'_>) {
        w.begin_object();
        w.key("jsonrpc");
        w.string("2.0");
        w.key("id");
        w.i64(-7);
        w.key("result");
        w.begin_object();
        w.key("content");
        w.begin_array();
        w.begin_object();
        w.key("type");
        w.string("text");
        w.key("text");
        w.string("line1\nline2 \"q\" é\u{1}");
        w.end_object();
        w.end_array();
        w.key("n");
        w.f64(0.1 + 0.2);
        w.key("fmt");
        w.string_fmt(format_args!("{}\t{:?}", 42, "s"));
        w.end_object();
        w.end_object();
    }

    #[test]
    fn overflow_reports_exact_required() {
        check_overflow(sample);
        check_overflow(|w| w.string("\u{0}\u{1f}\"\\ü"));
        check_overflow(|w| {
            w.begin_array();
            w.u64(u64::MAX);
            w.i64(i64::MIN);
            w.f64(5e-324);
            w.end_array();
        });
    }

    #[test]
    fn overflow_partial_prefix_then_rewind() {
        let full = render(sample);
        let cap = 20;
        let mut buf = vec![0u8; cap];
        let mut w = JsonWriter::new(&mut buf);
        w.begin_array();
        let cp = w.checkpoint();
        assert_eq!(cp.len(), 1);
        sample(&mut w);
        assert!(w.overflowed());
        assert_eq!(w.len(), full.len() + 1);
        // Rewind below capacity: state is as before, a smaller value fits.
        w.rewind(cp);
        assert!(!w.overflowed());
        w.string("small");
        w.u64(3);
        w.end_array();
        assert_eq!(w.written(), br#"["small",3]"#);
        assert_eq!(w.finish(), Ok(11));
    }

    #[test]
    fn checkpoint_rewind_restores_commas_and_mode() {
        let out = render(|w| {
            w.begin_array();
            w.u64(1);
            let cp = w.checkpoint();
            w.u64(2);
            w.begin_object();
            w.key("x");
            w.set_string_mode(true);
            w.rewind(cp);
            assert!(!w.string_mode());
            assert_eq!(w.depth(), 1);
            w.u64(3);
            let cp2 = w.checkpoint();
            w.key("bogus");
            w.rewind(cp2);
            w.u64(4);
            w.end_array();
        });
        assert_eq!(out, "[1,3,4]");
        // Rewinding right after a key keeps the "after key" state.
        let out = render(|w| {
            w.begin_object();
            w.key("k");
            let cp = w.checkpoint();
            w.string("dropped");
            w.rewind(cp);
            w.u64(5);
            w.end_object();
        });
        assert_eq!(out, r#"{"k":5}"#);
        // A checkpoint ahead of the current length is ignored.
        let out = render(|w| {
            w.begin_array();
            let early = w.checkpoint();
            w.u64(1);
            let late = w.checkpoint();
            w.rewind(early);
            w.rewind(late);
            w.u64(2);
            w.end_array();
        });
        assert_eq!(out, "[2]");
    }

    #[test]
    fn string_mode_embeds_document() {
        let inner = render(sample);
        let out = render(|w| {
            w.begin_object();
            w.key("before");
            w.u64(0);
            w.key("text");
            w.raw("\"");
            w.set_string_mode(true);
            sample(w);
            w.set_string_mode(false);
            w.raw("\"");
            w.key("after");
            w.begin_array();
            w.begin_string_value();
            sample(w);
            w.end_string_value();
            w.begin_string_value();
            w.u64(1);
            w.end_string_value();
            w.end_array();
            w.end_object();
        });
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["text"].as_str().unwrap(), inner);
        assert_eq!(v["after"][0].as_str().unwrap(), inner);
        assert_eq!(v["after"][1].as_str().unwrap(), "1");
        assert_eq!(v["before"], 0);
        // The spec example.
        let out = render(|w| {
            w.set_string_mode(true);
            w.begin_object();
            w.key("a");
            w.u64(1);
            w.end_object();
        });
        assert_eq!(out, r#"{\"a\":1}"#);
        check_overflow(|w| {
            w.begin_string_value();
            sample(w);
            w.end_string_value();
        });
    }

    #[test]
    fn fmt_write_impl() {
        let out = render(|w| {
            w.begin_array();
            w.u64(1);
            write!(w, ",{}", 2).unwrap();
            w.end_array();
        });
        assert_eq!(out, "[1,2]");
        let out = render(|w| {
            w.set_string_mode(true);
            let s = "a\n";
            write!(w, "\"{s}\"").unwrap();
        });
        assert_eq!(out, r#"\"a\n\""#);
    }

    #[test]
    fn integers() {
        let ints: &[i64] = &[0, 1, -1, 9, 10, -10, 99, 100, i64::MAX, i64::MIN, 1 << 53];
        for &i in ints {
            let out = render(|w| w.i64(i));
            assert_eq!(out, std::format!("{i}"));
            assert_eq!(serde_json::from_str::<i64>(&out).unwrap(), i);
        }
        let uints: &[u64] = &[0, 7, 10, 12345678901234567890, u64::MAX];
        for &u in uints {
            let out = render(|w| w.u64(u));
            assert_eq!(out, std::format!("{u}"));
            assert_eq!(serde_json::from_str::<u64>(&out).unwrap(), u);
        }
    }

    #[test]
    fn floats_round_trip() {
        let mut floats: Vec<f64> = vec![
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.1,
            0.1 + 0.2,
            1e-7,
            1e21,
            1e22,
            1e100,
            5e-324,
            -5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            1.7976931348623157e308,
            123456789.12345679,
            9007199254740992.0,
        ];
        // A deterministic pseudo-random sweep over bit patterns.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            floats.push(f64::from_bits(x));
        }
        for f in floats.into_iter().filter(|f| f.is_finite()) {
            let out = render(|w| w.f64(f));
            assert!(out.len() <= 24, "{out}");
            let back: f64 = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{out}: {e}"));
            assert_eq!(back.to_bits(), f.to_bits(), "{out}");
        }
        assert_eq!(render(|w| w.f64(f64::NAN)), "null");
        assert_eq!(render(|w| w.f64(f64::INFINITY)), "null");
        assert_eq!(render(|w| w.f64(f64::NEG_INFINITY)), "null");
        assert_eq!(render(|w| w.f64(1e-7)), "1e-7");
        assert_eq!(render(|w| w.f64(-0.0)), "-0.0");
        let out = render(|w| {
            w.begin_array();
            w.f64(f64::NAN);
            w.f64(2.5);
            w.end_array();
        });
        assert_eq!(out, "[null,2.5]");
    }

    #[test]
    fn zero_capacity_never_panics() {
        let mut buf = [0u8; 0];
        let mut w = JsonWriter::new(&mut buf);
        sample(&mut w);
        w.raw("x");
        assert_eq!(w.written(), b"");
        assert_eq!(w.capacity(), 0);
        let required = render(sample).len() + 1;
        assert_eq!(w.finish(), Err(BufferTooSmall { required }));
    }
}
