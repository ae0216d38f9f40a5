//! The client's local errors: misuse and capacity, each saying what was needed. The
//! server's mistakes are never a Rust `Err`: they arrive as events
//! ([`Event::Invalid`](super::Event::Invalid), [`Event::HandshakeFailed`](super::Event::HandshakeFailed)).

use core::fmt;

use crate::wire::json::BufferTooSmall;
use crate::wire::method::Method;
use crate::wire::version::ProtocolVersion;

/// Why a command (`connect`, `send`, `retry`, `cancel`, `respond`, `poll_transmit`) wrote
/// nothing. The client's state is unchanged by a failed command: fix the cause and call
/// again.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientError {
    /// The output buffer is too small: `required` bytes are needed for the frame.
    BufferTooSmall {
        /// Bytes the whole frame needs.
        required: usize,
    },
    /// The handshake has not completed (or it failed): wait for
    /// [`Event::Connected`](super::Event::Connected).
    NotConnected,
    /// `connect` was already called.
    AlreadyConnected,
    /// The method does not exist in the negotiated revision (`ping` and `logging/setLevel`
    /// are legacy only).
    NotInRevision {
        /// The method refused.
        method: Method,
        /// The revision in use.
        version: ProtocolVersion,
    },
    /// Every request slot is in use.
    TooManyRequests {
        /// How many requests can be in flight at once.
        capacity: usize,
    },
    /// The handle names no request in flight (it ended, or it is stale).
    UnknownRequest,
    /// `retry` on a request that is not waiting for input.
    NotAwaitingInput,
    /// `retry` with a request whose method or target differs from the one that asked for
    /// input.
    RetryMismatch,
    /// The handshake's own requests cannot be cancelled (the spec forbids cancelling
    /// `initialize`).
    CannotCancel,
    /// Raw JSON given to the client (arguments, a result, input responses) is not a JSON
    /// object on one line.
    InvalidJson,
    /// The notification needs a capability the client did not declare (`roots`).
    NotDeclared,
    /// The notification exists in the legacy era only.
    LegacyOnly,
    /// The request needs an extension the server did not declare in its capabilities
    /// (the tasks extension: `capabilities.extensions["io.modelcontextprotocol/tasks"]`),
    /// or the connection's revision cannot carry it (tasks v2 is 2026-07-28 only).
    NotOffered,
}

impl From<BufferTooSmall> for ClientError {
    fn from(e: BufferTooSmall) -> Self {
        ClientError::BufferTooSmall {
            required: e.required,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::BufferTooSmall { required } => {
                write!(f, "output buffer too small: {required} bytes required")
            }
            ClientError::NotConnected => f.write_str("the handshake has not completed"),
            ClientError::AlreadyConnected => f.write_str("connect was already called"),
            ClientError::NotInRevision { method, version } => write!(
                f,
                "{} does not exist in protocol {version}",
                method.as_str()
            ),
            ClientError::TooManyRequests { capacity } => {
                write!(f, "all {capacity} request slots are in use")
            }
            ClientError::UnknownRequest => f.write_str("no such request in flight"),
            ClientError::NotAwaitingInput => f.write_str("the request is not waiting for input"),
            ClientError::RetryMismatch => {
                f.write_str("the retried request differs from the one that asked for input")
            }
            ClientError::CannotCancel => f.write_str("handshake requests cannot be cancelled"),
            ClientError::InvalidJson => f.write_str("raw JSON must be one object on one line"),
            ClientError::NotDeclared => f.write_str("the capability it needs was not declared"),
            ClientError::LegacyOnly => f.write_str("it exists in the legacy era only"),
            ClientError::NotOffered => {
                f.write_str("the server does not offer the extension the request needs")
            }
        }
    }
}

impl core::error::Error for ClientError {}

/// Why the handshake failed (reported as [`Event::HandshakeFailed`](super::Event::HandshakeFailed));
/// the client stays unconnected and refuses requests.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeError {
    /// The server answered `initialize` (or `server/discover`, other than with -32601 or
    /// -32022) with this error code.
    Refused {
        /// The JSON-RPC error code.
        code: i64,
    },
    /// The server chose a revision this client does not speak.
    UnsupportedVersion,
    /// The server's answer is not a valid `InitializeResult` / `DiscoverResult`.
    Malformed,
    /// No answer before the request deadline.
    TimedOut,
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::Refused { code } => write!(f, "the server refused with {code}"),
            HandshakeError::UnsupportedVersion => {
                f.write_str("the server chose an unsupported protocol revision")
            }
            HandshakeError::Malformed => f.write_str("malformed handshake result"),
            HandshakeError::TimedOut => f.write_str("the handshake timed out"),
        }
    }
}

impl core::error::Error for HandshakeError {}
