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

/// The longest prefix of escaped JSON string content with at most `max` characters and at
/// most `4 * max` bytes (escapes take up to 12 bytes a character; unescaped text is never
/// cut by the byte bound), cut only between characters: never inside an escape, and never
/// between the two halves of a `\uD83D\uDE00` surrogate pair (which would leave a lone
/// surrogate no parser accepts). Also returns whether anything was cut. The error replies
/// and the typed arguments' messages share it (one copy in flash).
pub(crate) fn truncate_escaped(raw: &str, max: usize) -> (&str, bool) {
    let bytes = raw.as_bytes();
    // `\uD8..`-`\uDB..` opens a surrogate pair; the scanner accepted only text where a
    // `\uDC..`-`\uDF..` escape follows it, so the pair is one character of 12 bytes.
    let high_surrogate = |at: usize| {
        bytes.get(at).is_some_and(|d| d.eq_ignore_ascii_case(&b'd'))
            && bytes
                .get(at + 1)
                .is_some_and(|x| matches!(x.to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'b'))
    };
    let (mut i, mut count) = (0usize, 0usize);
    while i < bytes.len() {
        let step = match (bytes.get(i), bytes.get(i + 1)) {
            (Some(b'\\'), Some(b'u')) if high_surrogate(i + 2) => 12,
            (Some(b'\\'), Some(b'u')) => 6,
            (Some(b'\\'), _) => 2,
            (Some(&b), _) => match b {
                0x00..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            },
            (None, _) => 1,
        };
        if count == max || i.saturating_add(step) > max.saturating_mul(4) {
            return (raw.get(..i).unwrap_or(""), true);
        }
        i = i.saturating_add(step).min(bytes.len());
        count += 1;
    }
    (raw, false)
}
