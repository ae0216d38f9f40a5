//! The legacy HTTP+SSE transport of MCP 2024-11-05 ([`super::LegacySse`]): a session whose
//! every frame goes to its one SSE stream. It is an ordinary HTTP session
//! (`driver/http.rs`): its POSTs carry the stream as their sink, and the stream is the
//! session's stream for session-wide frames too ([`Inbound::Stream`]).

use std::sync::{Arc, Weak};
use std::time::Instant;

use bytes::Bytes;
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use tokio::sync::{mpsc, oneshot};

use super::{
    accepts, auth, empty, read_body, routes, rpc_error, session_id_new, Body, Entry, Peer, State,
};
use crate::routes::{Channel, Event, Inbound, Post};

/// The stream number marking the `endpoint` event (the first of the stream).
const ENDPOINT: u64 = u64::MAX - 1;

/// `GET` at the SSE path: a new session and its stream, which starts with the `endpoint`
/// event naming where to POST.
pub(super) async fn open(
    state: &Arc<State>,
    parts: &Parts,
    principal: Option<Arc<auth::Principal>>,
    ip: Option<std::net::IpAddr>,
) -> Response<Body> {
    let Some(config) = &state.config.legacy_sse else {
        return rpc_error(StatusCode::NOT_FOUND, None, -32600, "Not found");
    };
    if !accepts(&parts.headers, "text/event-stream") {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            None,
            -32600,
            "The SSE endpoint streams text/event-stream",
        );
    }
    if let Some(refused) = state.over_budget() {
        return refused;
    }
    let reservation = match state.reserve(Peer::of(ip, principal.as_deref())) {
        Ok(r) => r,
        Err(why) => return rpc_error(StatusCode::SERVICE_UNAVAILABLE, None, -32603, why),
    };
    let id = session_id_new();
    let (sink, frames) = mpsc::channel(routes::SINK_FRAMES);
    // The announced URI: as configured for `serve_http_with`; relative to the SSE URL when
    // mounted (the router stripped a prefix the service does not know).
    let messages = if state.endpoint.is_some() {
        config.messages_path.clone()
    } else {
        relative(&config.sse_path, &config.messages_path)
    };
    let announce = Event::uncounted(
        ENDPOINT,
        0,
        Bytes::from(format!("{messages}?sessionId={id}")),
    );
    // A fresh channel has room: the endpoint event is first.
    let _ = sink.try_send(announce);
    let Some(tx) = state.start_session(None, false).await.0 else {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            -32603,
            "The session did not start",
        );
    };
    if tx.send(Inbound::Stream(sink.clone())).await.is_err() {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            -32603,
            "The session did not start",
        );
    }
    reservation.keep(
        id.clone(),
        Entry {
            tx,
            // (Replaced by the reservation's peer.)
            peer: Peer::of(ip, None),
            last: Instant::now(),
            // Unused: the transport has no version header; `initialize` negotiates.
            version: mcp_rs_core::ProtocolVersion::V2024_11_05,
            owner: principal,
            stream: Some(sink),
        },
    );
    let ended = Ended {
        state: Arc::downgrade(state),
        id,
    };
    super::sse_stream(frames, state.config.sse_keep_alive, render, ended)
}

/// `POST` at the messages path: the body goes to the session named by `sessionId`, its
/// frames to the session's stream; answered `202 Accepted` once the session has read it.
pub(super) async fn post<B>(
    state: &Arc<State>,
    parts: Parts,
    body: B,
    principal: Option<Arc<auth::Principal>>,
) -> Response<Body>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let Some(id) = session_param(parts.uri.query()) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            -32600,
            "The messages endpoint needs a sessionId",
        );
    };
    let (body, _counted) = match read_body(state, &parts, body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let limits = mcp_rs_core::wire::json::Limits {
        max_depth: state.server.inner.config.max_depth,
    };
    if mcp_rs_core::wire::json::parse(&body, limits).is_err() {
        return rpc_error(StatusCode::BAD_REQUEST, None, -32700, "Parse error");
    }
    if let (Some(auth), Some(principal)) = (&state.config.auth, &principal) {
        if auth.has_tool_scopes() {
            let peeked = mcp_rs_core::wire::peek::peek(&body, limits);
            if let Some(refused) = auth.check_calls(principal, &peeked) {
                return refused;
            }
        }
    }
    let not_found = || rpc_error(StatusCode::NOT_FOUND, None, -32600, "Session not found");
    let Some((tx, _)) = state.session_of(id, principal.as_deref(), true) else {
        return not_found();
    };
    let Some(sink) = state.sessions().live.get(id).and_then(|e| e.stream.clone()) else {
        return not_found();
    };
    let (told, outcome) = oneshot::channel();
    let post = Post { body, principal };
    let to = Channel {
        sink,
        outcome: told,
    };
    if tx.send(Inbound::Post(post, to)).await.is_err() || outcome.await.is_err() {
        return not_found();
    }
    empty(StatusCode::ACCEPTED)
}

/// The `sessionId` query parameter (ids are hex: nothing to decode).
fn session_param(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("sessionId="))
        .filter(|id| !id.is_empty())
}

/// `messages` relative to `sse`'s directory when it is in it (`/sse`, `/messages`:
/// `messages`), else as it is.
fn relative(sse: &str, messages: &str) -> String {
    let dir = &sse[..sse.rfind('/').map_or(0, |i| i + 1)];
    match messages.strip_prefix(dir) {
        Some(rest) if !dir.is_empty() && !rest.is_empty() => rest.to_owned(),
        _ => messages.to_owned(),
    }
}

/// One event of the stream: the `endpoint` event, or a message (priming events, which
/// this transport does not have, are skipped).
fn render(e: &Event) -> Option<Bytes> {
    let kind: &[u8] = if e.stream == ENDPOINT {
        b"event: endpoint\ndata: "
    } else if e.data.is_empty() {
        return None;
    } else {
        b"event: message\ndata: "
    };
    let mut event = Vec::with_capacity(e.data.len() + kind.len() + 2);
    event.extend_from_slice(kind);
    event.extend_from_slice(&e.data);
    event.extend_from_slice(b"\n\n");
    Some(Bytes::from(event))
}

/// Dropped with the stream's response body: the client went away (or the stream ended),
/// so the session ends.
struct Ended {
    state: Weak<State>,
    id: String,
}

impl Drop for Ended {
    fn drop(&mut self) {
        let Some(state) = self.state.upgrade() else {
            return;
        };
        let Some(entry) = state.sessions().remove(&self.id) else {
            return;
        };
        if let Err(mpsc::error::TrySendError::Full(close)) = entry.tx.try_send(Inbound::Close) {
            // Its inbox is full: close once there is room (the loop also ends once it has
            // read what is queued, its last sender being gone).
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let tx = entry.tx.clone();
                runtime.spawn(async move {
                    let _ = tx.send(close).await;
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announced_paths_and_session_ids() {
        assert_eq!(relative("/sse", "/messages"), "messages");
        assert_eq!(relative("/a/sse", "/a/b/messages"), "b/messages");
        assert_eq!(relative("/a/sse", "/messages"), "/messages");
        assert_eq!(session_param(Some("x=1&sessionId=ab")), Some("ab"));
        assert_eq!(session_param(Some("sessionId=")), None);
        assert_eq!(session_param(None), None);
    }
}
