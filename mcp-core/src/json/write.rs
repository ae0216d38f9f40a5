//! A JSON writer into a caller-owned byte slice.

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
        write!(f, "output buffer too small: {} bytes required", self.required)
    }
}

impl core::error::Error for BufferTooSmall {}

/// Writes JSON into `&mut [u8]`. Commas between members/elements are inserted automatically.
/// When the buffer runs out, writing continues *counting* bytes, so [`finish`](Self::finish)
/// can report the exact size required. Never panics.
///
/// In *string mode* ([`set_string_mode`](Self::set_string_mode)) every byte written is escaped
/// as JSON string content: used to embed one JSON document as a string inside another.
#[derive(Debug)]
pub struct JsonWriter<'b> {
    pub(crate) buf: &'b mut [u8],
    /// Logical length (may exceed `buf.len()` after overflow).
    pub(crate) len: usize,
    /// Bit `d` set: the container at depth `d` already has a member/element.
    pub(crate) has_items: u128,
    pub(crate) depth: u8,
    /// The last thing written was a key: the next value takes no comma.
    pub(crate) after_key: bool,
    pub(crate) string_mode: bool,
}

impl<'b> JsonWriter<'b> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        JsonWriter { buf, len: 0, has_items: 0, depth: 0, after_key: false, string_mode: false }
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
    /// The bytes written so far (truncated to the buffer after overflow).
    pub fn written(&self) -> &[u8] {
        unimplemented!()
    }
    /// Rewinds to an earlier length (from [`len`](Self::len)) and structural state
    /// (from [`checkpoint`](Self::checkpoint)), dropping what was written after it.
    pub fn rewind(&mut self, _to: Checkpoint) {
        unimplemented!()
    }
    /// Captures length and structural state for [`rewind`](Self::rewind).
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint { len: self.len, has_items: self.has_items, depth: self.depth, after_key: self.after_key }
    }
    /// Turns string mode on or off (see the type docs). Structural state is kept.
    pub fn set_string_mode(&mut self, _on: bool) {
        unimplemented!()
    }
    /// Appends bytes verbatim (escaped in string mode). No comma handling.
    pub fn raw(&mut self, _s: &str) {
        unimplemented!()
    }
    /// Appends an already-valid JSON value verbatim, with comma handling.
    pub fn raw_value(&mut self, _json: &str) {
        unimplemented!()
    }
    /// `{`
    pub fn begin_object(&mut self) {
        unimplemented!()
    }
    /// `}`
    pub fn end_object(&mut self) {
        unimplemented!()
    }
    /// `[`
    pub fn begin_array(&mut self) {
        unimplemented!()
    }
    /// `]`
    pub fn end_array(&mut self) {
        unimplemented!()
    }
    /// An object key (escaped) and `:`.
    pub fn key(&mut self, _k: &str) {
        unimplemented!()
    }
    /// A string value, quoted and escaped.
    pub fn string(&mut self, _s: &str) {
        unimplemented!()
    }
    /// A string value from formatting arguments, quoted and escaped.
    pub fn string_fmt(&mut self, _args: fmt::Arguments<'_>) {
        unimplemented!()
    }
    /// A string value whose escaped content is already valid (e.g. [`JsonStr::raw`](super::JsonStr::raw)).
    pub fn string_raw_escaped(&mut self, _escaped: &str) {
        unimplemented!()
    }
    /// An unsigned integer value.
    pub fn u64(&mut self, _v: u64) {
        unimplemented!()
    }
    /// A signed integer value.
    pub fn i64(&mut self, _v: i64) {
        unimplemented!()
    }
    /// A float value (shortest round-trip form); NaN and infinities are written as `null`.
    pub fn f64(&mut self, _v: f64) {
        unimplemented!()
    }
    /// `true` / `false`.
    pub fn bool(&mut self, _v: bool) {
        unimplemented!()
    }
    /// `null`.
    pub fn null(&mut self) {
        unimplemented!()
    }
    /// Total length, or [`BufferTooSmall`] with the exact size required.
    pub fn finish(self) -> Result<usize, BufferTooSmall> {
        if self.overflowed() {
            Err(BufferTooSmall { required: self.len })
        } else {
            Ok(self.len)
        }
    }
}

/// Saved writer state, see [`JsonWriter::checkpoint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub(crate) len: usize,
    pub(crate) has_items: u128,
    pub(crate) depth: u8,
    pub(crate) after_key: bool,
}
