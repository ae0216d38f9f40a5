//! A serde `Deserializer` over [`RawJson`] views: typed tool arguments without allocation.

use core::fmt;

use super::RawJson;

/// Why arguments did not deserialize. Holds a short message (truncated to fit) naming the
/// field or the type mismatch, suitable for an `isError` tool result.
#[derive(Clone)]
pub struct DeError {
    pub(crate) msg: [u8; 160],
    pub(crate) len: u8,
}

impl DeError {
    /// The message text.
    pub fn message(&self) -> &str {
        unimplemented!()
    }
}

impl fmt::Debug for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DeError").field(&self.message()).finish()
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for DeError {}

/// Deserializes `T` from a validated value. Strings without escapes are lent zero-copy
/// (`&'a str` fields work); strings with escapes are decoded into `scratch` and offered as a
/// transient `&str` (owned/heapless string fields and enum variants work; a borrowed `&'a str`
/// field then fails with a clear message). `scratch` may be empty if no escaped strings occur.
pub fn from_json<'a, T: serde::Deserialize<'a>>(_value: RawJson<'a>, _scratch: &mut [u8]) -> Result<T, DeError> {
    unimplemented!()
}
