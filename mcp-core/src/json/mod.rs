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
