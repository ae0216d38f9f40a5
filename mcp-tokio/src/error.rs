//! Why a server stopped. A leaf: nothing here depends on the rest of this crate.

/// Why a server stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transport failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The core refused an operation (a local misuse, never the peer's fault).
    #[error("core: {0}")]
    Core(mcp_rs_core::HandleError),
    /// An invariant of this crate broke.
    #[error("internal error: {0}")]
    Internal(&'static str),
}
