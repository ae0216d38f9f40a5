//! Local errors: misuse or capacity problems of the caller. The peer's mistakes are never
//! Rust errors; they become JSON-RPC error replies.

use core::fmt;

/// [`Session::handle_message`](crate::Session::handle_message) could not run.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleError {
    /// The output buffer is smaller than [`MIN_OUTPUT`](crate::MIN_OUTPUT); nothing was consumed.
    OutputTooSmall {
        /// The minimum size.
        required: usize,
    },
}

impl fmt::Display for HandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandleError::OutputTooSmall { required } => {
                write!(
                    f,
                    "output buffer too small: at least {required} bytes are required"
                )
            }
        }
    }
}

impl core::error::Error for HandleError {}

/// An operation on a deferred call failed.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallError {
    /// The token does not name a call in flight (already completed, or never issued).
    UnknownCall,
    /// The output buffer was too small; the call is still in flight, retry with `required`
    /// bytes.
    BufferTooSmall {
        /// Bytes needed.
        required: usize,
    },
    /// Progress must increase with every notification.
    ProgressNotIncreasing,
    /// The result builder was used out of order (content after structured output, or
    /// invalid structured JSON); nothing was sent and the call is still in flight.
    ResultMisused,
    /// The token names a request of another kind (e.g. `complete_read` on a tool call).
    WrongKind,
    /// A 2026-07-28 call cannot send requests to the client (answer `input_required`).
    Stateless,
    /// The client did not declare the capability the request needs.
    ClientCapability,
    /// The call's previous request to the client is still unanswered.
    RequestPending,
    /// The request params are not a one-line JSON object.
    InvalidParams,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::UnknownCall => f.write_str("no such call in flight"),
            CallError::BufferTooSmall { required } => {
                write!(f, "output buffer too small: {required} bytes required")
            }
            CallError::ProgressNotIncreasing => f.write_str("progress must increase"),
            CallError::ResultMisused => f.write_str("result builder used out of order"),
            CallError::WrongKind => f.write_str("the call is of another kind"),
            CallError::Stateless => {
                f.write_str("2026-07-28 calls cannot send requests (use input_required)")
            }
            CallError::ClientCapability => {
                f.write_str("the client did not declare the capability this request needs")
            }
            CallError::RequestPending => {
                f.write_str("the call's previous request to the client is unanswered")
            }
            CallError::InvalidParams => f.write_str("params must be a one-line JSON object"),
        }
    }
}

impl core::error::Error for CallError {}
