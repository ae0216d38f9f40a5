//! The session clock. A leaf: nothing here depends on the rest of this crate.

/// Milliseconds since the UNIX epoch: the time passed to the core.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
