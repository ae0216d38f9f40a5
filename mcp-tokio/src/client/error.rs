//! The client's error type.

use std::time::Duration;

use serde_json::Value;

/// Everything a client operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Reading from or writing to the transport failed, or the child process could not be
    /// started or waited for.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The server answered the request with a JSON-RPC error.
    #[error("JSON-RPC error {code}: {message}")]
    Protocol {
        /// The JSON-RPC error code (`-32602` invalid params, `-32601` method not found, ...).
        code: i64,
        /// The error message.
        message: String,
        /// The optional `data` member.
        data: Option<Value>,
    },
    /// The request's timeout expired. `notifications/cancelled` (reason `"timeout"`) was sent.
    #[error("the request timed out")]
    Timeout,
    /// The request was cancelled by [`Client::cancel`](super::Client::cancel) or
    /// [`CallHandle::cancel`](super::CallHandle::cancel).
    #[error("the request was cancelled")]
    Cancelled,
    /// The connection is closed (end of stream, [`Client::close`](super::Client::close), the
    /// client was dropped, or an earlier failure such as [`ClientError::WriteTimeout`] ended it).
    #[error("the connection is closed")]
    Closed,
    /// A message from the server, or a result inside one, does not have the expected shape.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// Protocol version negotiation failed (the server chose a version this client does not
    /// speak).
    #[error("protocol version: {0}")]
    Version(String),
    /// A protocol error: the server sent a line longer than
    /// [`ClientOptions::max_line`](super::ClientOptions::max_line). The line is discarded and
    /// every request pending at that moment fails with this error (its response may have been
    /// that line); the connection keeps working.
    #[error("incoming message longer than the {limit}-byte limit")]
    Oversized {
        /// The configured maximum line length.
        limit: usize,
    },
    /// The server took in none of the client's output for
    /// [`ClientOptions::write_timeout`](super::ClientOptions::write_timeout) (it stopped
    /// reading): the client closed the connection. Every request pending at that moment fails
    /// with this error; later calls fail at once with [`ClientError::Closed`].
    #[error("the server read nothing for {0:?}: connection closed")]
    WriteTimeout(Duration),
    /// A line from the server that had started did not end within
    /// [`ClientOptions::line_timeout`](super::ClientOptions::line_timeout) (a stalled or
    /// trickling server): the client closed the connection. Every request pending at that
    /// moment fails with this error; later calls fail at once with [`ClientError::Closed`].
    #[error("a message from the server did not complete within {0:?}: connection closed")]
    LineTimeout(Duration),
    /// A request would be larger than
    /// [`MAX_OUTGOING_FRAME`](super::MAX_OUTGOING_FRAME) bytes: it was not sent.
    #[error("the request exceeds the {limit}-byte limit")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// The core refused to write the request (not connected yet, a method of the other
    /// era, too many requests in flight, arguments that are not a JSON object, ...).
    #[error("the request cannot be sent: {0}")]
    Refused(String),
    /// A skill's file failed verification (skills extension): its content was dropped.
    #[error("{uri}: {reason}")]
    Unverified {
        /// The file.
        uri: String,
        /// The check that failed: `manifest`, `size`, `digest` or `front matter`.
        check: &'static str,
        /// What differed.
        reason: String,
    },
}

impl ClientError {
    /// The JSON-RPC error code, for [`ClientError::Protocol`].
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Protocol { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// A copy of this error (an [`std::io::Error`] is copied as its kind and message), used
    /// when one failure ends several pending requests.
    pub(crate) fn duplicate(&self) -> ClientError {
        match self {
            ClientError::Io(e) => ClientError::Io(std::io::Error::new(e.kind(), e.to_string())),
            ClientError::Protocol {
                code,
                message,
                data,
            } => ClientError::Protocol {
                code: *code,
                message: message.clone(),
                data: data.clone(),
            },
            ClientError::Timeout => ClientError::Timeout,
            ClientError::Cancelled => ClientError::Cancelled,
            ClientError::Closed => ClientError::Closed,
            ClientError::Malformed(m) => ClientError::Malformed(m.clone()),
            ClientError::Version(m) => ClientError::Version(m.clone()),
            ClientError::Oversized { limit } => ClientError::Oversized { limit: *limit },
            ClientError::WriteTimeout(t) => ClientError::WriteTimeout(*t),
            ClientError::LineTimeout(t) => ClientError::LineTimeout(*t),
            ClientError::TooLarge { limit } => ClientError::TooLarge { limit: *limit },
            ClientError::Refused(m) => ClientError::Refused(m.clone()),
            ClientError::Unverified { uri, check, reason } => ClientError::Unverified {
                uri: uri.clone(),
                check,
                reason: reason.clone(),
            },
        }
    }
}

/// The client's result type.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;
