//! What a server is ([`ServerInfo`]) and the bounds of its connections ([`Limits`]). A leaf: nothing
//! here depends on the rest of this crate.

/// Owned server identity (see [`mcp_rs_core::ServerInfo`]).
#[derive(Clone, Debug, Default)]
pub struct ServerInfo {
    /// Programmatic name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Display title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Website.
    pub website_url: Option<String>,
    /// Guidance for the model.
    pub instructions: Option<String>,
}

/// Bounds of each connection.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest accepted line (bytes); longer lines get one `-32600` and are discarded.
    pub max_frame: usize,
    /// Calls (and listen subscriptions) in flight per connection.
    pub max_calls: usize,
    /// Initial output buffer; it grows for large deferred results up to `max_response`.
    pub initial_response: usize,
    /// Largest response a deferred call may produce; larger ones get a `-32603`.
    pub max_response: usize,
    /// Concurrent socket connections. At the limit, the connection that has been idle
    /// longest (nothing buffered, asked or running for at least 1 s) is closed to make room
    /// for the new one; only when none is idle is the new one refused with a JSON-RPC error
    /// line.
    pub max_connections: usize,
    /// After the peer closes its side (EOF), how long calls still running may take to
    /// finish and be answered before the connection closes.
    pub drain_timeout: std::time::Duration,
    /// How long a request to the client ([`Context::request`](crate::Context::request)) may stay unanswered before
    /// it is cancelled and fails with [`RequestError::TimedOut`](crate::RequestError::TimedOut).
    pub request_timeout: std::time::Duration,
    /// Sockets (not stdio): a write that makes no progress for this long closes the
    /// connection, so a peer that sends but never reads cannot stall its drive loop.
    pub write_timeout: std::time::Duration,
    /// Sockets (not stdio): a connection with no request and nothing running for this long
    /// is closed.
    pub idle_timeout: std::time::Duration,
    /// Sockets (not stdio): a line that has started must be complete within this long, or
    /// the connection is closed (a trickling peer cannot hold a connection slot).
    pub line_timeout: std::time::Duration,
    /// Every transport: once a connection is closing (the server shuts down, or the peer's
    /// input ended), the replies it still owes are written for at most this long in all
    /// (and at most `write_timeout` on sockets), so a peer that never reads cannot delay
    /// shutdown or hold the connection open.
    pub close_timeout: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame: 4 << 20,
            max_calls: 256,
            initial_response: 64 << 10,
            max_response: 64 << 20,
            max_connections: 1024,
            drain_timeout: std::time::Duration::from_secs(1),
            request_timeout: std::time::Duration::from_secs(60),
            write_timeout: std::time::Duration::from_secs(30),
            idle_timeout: std::time::Duration::from_secs(300),
            line_timeout: std::time::Duration::from_secs(30),
            close_timeout: std::time::Duration::from_secs(2),
        }
    }
}

impl ServerInfo {
    pub(crate) fn core(&self) -> mcp_rs_core::ServerInfo<'_> {
        mcp_rs_core::ServerInfo {
            name: &self.name,
            version: &self.version,
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            website_url: self.website_url.as_deref(),
            icons: &[],
            instructions: self.instructions.as_deref(),
        }
    }
}
