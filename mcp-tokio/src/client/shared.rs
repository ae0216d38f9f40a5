//! What the API layer, the driver and the transports share: the state behind
//! [`Client`](super::Client) (closed flag, notification callbacks, server details, the
//! negotiated revision, calls in flight) and the `x-mcp-header` marks of known tools.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_rs_core::client::headers::param_headers;
use mcp_rs_core::wire::json::{parse, Limits, RawJson};
use mcp_rs_core::wire::version::ProtocolVersion;
use serde_json::Value;

use super::error::ClientError;
use super::types::{Notification, ServerDetails};

/// A notification callback (runs on the driver task).
pub(crate) type NotificationHandler = Arc<dyn Fn(&Notification) + Send + Sync>;

/// The `x-mcp-header` marks of each known tool: (property, header name) pairs.
pub(crate) type ToolHeaders = Arc<Mutex<HashMap<String, Vec<(String, String)>>>>;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the API layer and the driver share.
#[derive(Default)]
pub(crate) struct Shared {
    /// Set once the driver has ended.
    pub(crate) closed: AtomicBool,
    pub(crate) handlers: Mutex<Vec<NotificationHandler>>,
    /// Notifications and progress dropped because a bounded channel was full.
    pub(crate) dropped: Arc<AtomicU64>,
    pub(crate) details: Mutex<Option<ServerDetails>>,
    pub(crate) version: Mutex<Option<ProtocolVersion>>,
    /// Bytes of answers to server requests queued and not yet written.
    pub(crate) reply_bytes: Arc<AtomicUsize>,
    pub(crate) tool_headers: ToolHeaders,
    /// Calls not yet ended.
    pub(crate) live: Mutex<HashSet<u64>>,
    pub(crate) next_call: AtomicU64,
}

impl Shared {
    /// The error a call gets when the driver is gone (calls pending when the connection
    /// ended were told what ended it).
    pub(crate) fn closed_error(&self) -> ClientError {
        ClientError::Closed
    }
}

/// Counts a notification a full bounded channel could not take, with a warning at the first
/// drop and at every power of two after it (a flood does not flood the log as well).
pub(crate) fn count_drop(dropped: &AtomicU64, what: &str) {
    let n = dropped.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_power_of_two() {
        tracing::warn!("a {what} found its channel full and was dropped ({n} dropped so far)");
    } else {
        tracing::debug!("a {what} found its channel full and was dropped");
    }
}

/// The `x-mcp-header` marks of `schema`, or `None` if they are invalid.
pub(crate) fn marks_of(schema: RawJson<'_>) -> Option<Vec<(String, String)>> {
    let marks = param_headers(schema).ok()?;
    Some(
        marks
            .map(|m| (m.property.to_string(), m.header.to_string()))
            .collect(),
    )
}

/// Whether a tool's `inputSchema` has valid `x-mcp-header` marks (a tool without is valid).
pub(crate) fn valid_marks(schema: &Value) -> bool {
    let text = schema.to_string();
    match parse(text.as_bytes(), Limits::default()) {
        Ok(raw) => param_headers(raw).is_ok(),
        Err(_) => true, // deeper than the scanner reads: nothing to mirror
    }
}
