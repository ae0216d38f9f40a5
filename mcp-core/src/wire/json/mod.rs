//! Zero-copy JSON (RFC 8259): a strict, depth-bounded validator with borrowed views
//! ([`RawJson`], [`JsonStr`]) and a writer into caller-owned buffers ([`JsonWriter`]).
//!
//! The scanner validates a whole text once ([`parse`]); the views it hands out borrow that
//! text and never re-validate. Nothing here allocates, recurses or panics: nesting is
//! tracked in a fixed bit stack bounded by [`Limits::max_depth`] (at most
//! [`MAX_DEPTH_LIMIT`]).

mod scan;
mod value;
mod write;

#[cfg(feature = "serde")]
mod de;

#[cfg(feature = "serde")]
pub use de::{from_json, DeError};
pub use scan::{parse, Limits, ScanError, DEFAULT_MAX_DEPTH, MAX_DEPTH_LIMIT};
pub use value::{Chars, Elements, JsonStr, Kind, Members, RawJson};
pub use write::{BufferTooSmall, Checkpoint, JsonWriter, StrPart};

/// Why raw JSON given by the embedder (schemas, `_meta`, structured output) is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbedError {
    /// Not valid JSON, or not an object where one is required.
    Invalid,
    /// It contains a line break: valid JSON can only hold one as whitespace between tokens,
    /// and written verbatim it would split a newline-delimited frame (stdio, TCP, UART).
    LineBreak,
}

/// Checks raw JSON the embedder hands the writer verbatim: valid JSON (an object when
/// `object`), on one line.
pub fn check_embedded(text: &str, object: bool) -> Result<(), EmbedError> {
    let v = parse(text.as_bytes(), Limits::default()).map_err(|_| EmbedError::Invalid)?;
    if object && v.kind() != Kind::Object {
        return Err(EmbedError::Invalid);
    }
    if text.bytes().any(|b| b == b'\n' || b == b'\r') {
        return Err(EmbedError::LineBreak);
    }
    Ok(())
}

/// `f64::trunc` without std (the integral part, toward zero): one rule for "is this number
/// whole" in the serde deserializer and the derives' readers.
pub(crate) fn trunc(f: f64) -> f64 {
    if f.abs() >= 4_503_599_627_370_496.0 || f.is_nan() {
        f // 2^52 and beyond: every f64 is whole
    } else {
        (f as i64) as f64
    }
}
