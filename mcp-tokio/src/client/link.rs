//! What the driver and a transport exchange: frames (bytes) both ways, never parsed
//! messages. A transport is two tasks or one (a byte stream's reader and writer, or the
//! HTTP bridge) holding the other ends of these channels.

use tokio::sync::{mpsc, oneshot};

use mcp_rs_core::wire::version::ProtocolVersion;

use super::error::{ClientError, Result};

/// Capacity of the channel of frames from a transport to the driver: a reader that gets
/// this far ahead waits (backpressure on the server, not memory in the client).
pub(crate) const INBOUND_CAPACITY: usize = 64;

/// What the driver hands a transport.
pub(crate) enum Outgoing {
    /// One frame as the core wrote it (no newline). `call` names the API call it belongs
    /// to (0: none), so a transport can fail that call ([`Inbound::Failed`]).
    Frame {
        /// The message.
        bytes: Vec<u8>,
        /// The call, or 0 (read by the HTTP transport only).
        #[cfg_attr(not(feature = "http"), allow(dead_code))]
        call: u64,
        /// Bytes counted as an answer to a server request (see
        /// [`MAX_QUEUED_REPLY_BYTES`](super::MAX_QUEUED_REPLY_BYTES)), or 0.
        reply: usize,
    },
    /// The legacy handshake chose `version` (and HTTP now sends it as a header).
    Negotiated(#[cfg_attr(not(feature = "http"), allow(dead_code))] ProtocolVersion),
    /// Flush and close the write side (HTTP: end the session), then acknowledge.
    Shutdown(oneshot::Sender<Result<()>>),
}

/// What a transport hands the driver.
pub(crate) enum Inbound {
    /// One complete frame from the server (a line, a JSON body, an SSE event's data).
    Frame(Vec<u8>),
    /// A line longer than the limit was discarded (the connection goes on).
    Oversized {
        /// The limit.
        limit: usize,
    },
    /// The transport could not deliver call `call`'s request or its answer (HTTP only).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Failed {
        /// The call.
        call: u64,
        /// Why.
        error: ClientError,
    },
    /// The connection ended.
    Closed(ClientError),
}

/// The driver's ends of a transport.
pub(crate) struct Link {
    /// Frames to send (bounded: see [`MAX_QUEUED_LINES`](super::MAX_QUEUED_LINES)).
    pub(crate) out: mpsc::Sender<Outgoing>,
    /// Frames received.
    pub(crate) inbound: mpsc::Receiver<Inbound>,
}
