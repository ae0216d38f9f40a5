//! Task status notifications (tasks extension, SEP-2663) on 2026-07-28
//! `subscriptions/listen` streams: `notifications.taskIds` subscribes a stream to tasks,
//! and each change of a subscribed task is sent as `notifications/tasks`, whose params are
//! the task's `DetailedTask`, written by the same code as `tasks/get`'s result (without its
//! `resultType`), plus the stream's `_meta["io.modelcontextprotocol/subscriptionId"]`.
//!
//! | step | behaviour |
//! |---|---|
//! | `taskIds` without the extension in the request's client capabilities | -32021, `data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"]: {}` (the member's presence is the request, whatever its value) |
//! | the acknowledgement | `notifications.taskIds`: the ids kept, as the client spelled them, in request order; unknown or expired ids, repeats, non-strings and ids beyond [`MAX_TASK_SUBSCRIPTIONS`](super::MAX_TASK_SUBSCRIPTIONS) are left out (the member too when none is kept) |
//! | right after the acknowledgement | the current state of every kept task, once (from the transport's next [`Session::tasks_changed_next`] pass): a client that subscribes after creating a task cannot miss a change made in between |
//! | a change | one frame per stream subscribed to the task whose `DetailedTask` differs from the one that stream was last sent (status, `lastUpdatedAt`, payload: several changes between two passes are sent as the latest state) |
//! | a terminal status | its frame is the task's last on the stream: the subscription ends there |
//! | expiry (or removal) | nothing is sent: the subscription ends silently (`tasks/get` answers -32602 for it too) |
//!
//! No heap: each subscription is kept in the stream's call slot as the task id's 16 bytes
//! (decoded from its 32 hex digits) and a 64-bit FNV-1a fingerprint of the `DetailedTask`
//! last sent (0: unused, 1: none yet), 24 bytes an entry. The core does not learn by
//! itself that the table changed (tools report to it outside the session): the transport
//! calls [`Session::tasks_changed_next`] once a listen stream has opened and whenever the
//! table may have changed; a pass renders each subscribed task and sends only what
//! differs.

use super::faults::Fault;
use super::inflight::{SlotState, TaskSub};
use super::{Route, Session, Transmit, MAX_TASK_SUBSCRIPTIONS};
use crate::model::common::ClientCaps;
use crate::model::handler::ServerHandler;
use crate::model::tasks::ID_LEN;
use crate::wire::fnv;
use crate::wire::json::{self, JsonStr, JsonWriter, RawJson};
use crate::wire::jsonrpc;

/// A task id's 16 bytes as its 32 hex digits, written into `out`.
fn id_text<'o>(id: &[u8; ID_LEN / 2], out: &'o mut [u8; ID_LEN]) -> &'o str {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (pair, b) in out.chunks_mut(2).zip(id) {
        if let [hi, lo] = pair {
            *hi = HEX[usize::from(b >> 4)];
            *lo = HEX[usize::from(b & 0xf)];
        }
    }
    core::str::from_utf8(out).unwrap_or("")
}

/// `text` (32 lowercase hex digits, as task ids are) as 16 bytes.
fn decode_id(text: &str) -> Option<[u8; ID_LEN / 2]> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    if text.len() != ID_LEN {
        return None;
    }
    let mut id = [0u8; ID_LEN / 2];
    for (b, pair) in id.iter_mut().zip(text.as_bytes().chunks(2)) {
        if let [hi, lo] = pair {
            *b = (digit(*hi)? << 4) | digit(*lo)?;
        }
    }
    Some(id)
}

/// 64-bit FNV-1a of a rendered `DetailedTask`; never 0 or 1 (an unused entry, nothing
/// sent yet).
fn fingerprint(bytes: &[u8]) -> u64 {
    fnv::fnv1a(fnv::START, bytes.iter().copied()).max(TaskSub::NOTHING_SENT + 1)
}

/// The tasks a listen request's `taskIds` gets: the ids kept (as spelled, in request
/// order) and their entries.
pub(super) type Kept<'i> = (
    [Option<JsonStr<'i>>; MAX_TASK_SUBSCRIPTIONS],
    [TaskSub; MAX_TASK_SUBSCRIPTIONS],
);

/// The honoured subset of `notifications.taskIds`: strings naming a live task of the
/// server's table, each once, at most [`MAX_TASK_SUBSCRIPTIONS`]. -32021 when the member is
/// present and the request's client capabilities lack the extension.
pub(super) fn task_subscriptions<'i, S: ServerHandler + ?Sized>(
    server: &mut S,
    filter: &RawJson<'i>,
    caps: ClientCaps,
    now_ms: u64,
) -> Result<Kept<'i>, Fault<'i>> {
    let mut kept: Kept<'i> = (
        [None; MAX_TASK_SUBSCRIPTIONS],
        [TaskSub::EMPTY; MAX_TASK_SUBSCRIPTIONS],
    );
    let Some(list) = filter.get("taskIds") else {
        return Ok(kept);
    };
    if !caps.contains(ClientCaps::TASKS) {
        return Err(super::tasks::not_negotiated());
    }
    let (Some(ids), Some(store)) = (list.elements(), server.tasks()) else {
        return Ok(kept);
    };
    let mut n = 0;
    for text in ids.filter_map(|v| v.as_string()) {
        if n == MAX_TASK_SUBSCRIPTIONS {
            break;
        }
        let mut buf = [0u8; ID_LEN + 1];
        let Some(id) = text.text_in(&mut buf).and_then(decode_id) else {
            continue;
        };
        if kept.1.iter().any(|s| s.used() && s.id == id) {
            continue;
        }
        let mut hex = [0u8; ID_LEN];
        let entry = TaskSub {
            id,
            sent: TaskSub::NOTHING_SENT,
        };
        if store.view(id_text(&entry.id, &mut hex), now_ms).is_none() {
            continue;
        }
        if let (Some(t), Some(e)) = (kept.0.get_mut(n), kept.1.get_mut(n)) {
            *t = Some(text);
            *e = entry;
        }
        n += 1;
    }
    Ok(kept)
}

/// Writes the acknowledgement's `taskIds` member (inside `notifications`), if any was kept.
pub(super) fn write_kept(w: &mut JsonWriter<'_>, kept: &[Option<JsonStr<'_>>]) {
    if kept.iter().any(Option::is_some) {
        w.key("taskIds");
        w.begin_array();
        for id in kept.iter().flatten() {
            w.string_raw_escaped(id.raw());
        }
        w.end_array();
    }
}

impl Session<'_> {
    /// See [`Session::tasks_changed_next`].
    pub(super) fn stream_task_changed<S: ServerHandler + ?Sized>(
        &mut self,
        server: &mut S,
        cursor: &mut usize,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, json::BufferTooSmall> {
        let end = self.slots.len().saturating_mul(MAX_TASK_SUBSCRIPTIONS);
        // No stream subscribed to a task: the table is not touched (a transport that shares
        // it with other sessions need not lock it).
        let subscribed = self
            .slots
            .iter()
            .take(if self.occupied == 0 { 0 } else { usize::MAX })
            .any(|s| s.state == SlotState::Listening && s.task_subs.iter().any(TaskSub::used));
        if !subscribed {
            *cursor = end;
            return Ok(None);
        }
        let Some(store) = server.tasks() else {
            *cursor = end;
            return Ok(None);
        };
        while *cursor < end {
            let (i, j) = (
                *cursor / MAX_TASK_SUBSCRIPTIONS,
                *cursor % MAX_TASK_SUBSCRIPTIONS,
            );
            let Some(slot) = self.slots.get_mut(i) else {
                break;
            };
            if slot.state != SlotState::Listening {
                *cursor = (i + 1) * MAX_TASK_SUBSCRIPTIONS;
                continue;
            }
            let (sub_id, stream) = (slot.id, slot.token(i));
            let Some(sub) = slot.task_subs.get_mut(j).filter(|s| s.used()) else {
                *cursor += 1;
                continue;
            };
            let mut hex = [0u8; ID_LEN];
            let Some(view) = store.view(id_text(&sub.id, &mut hex), now_ms) else {
                // Expired or removed: the subscription ends without a frame.
                *sub = TaskSub::EMPTY;
                *cursor += 1;
                continue;
            };
            let mut w = JsonWriter::new(out);
            jsonrpc::begin_notification(&mut w, "notifications/tasks");
            w.begin_object();
            let start = w.len();
            view.write_detailed(&mut w);
            let print = fingerprint(w.written().get(start..).unwrap_or_default());
            if !w.overflowed() && print == sub.sent {
                *cursor += 1;
                continue;
            }
            w.key("_meta");
            w.begin_object();
            w.key(crate::wire::params::META_SUBSCRIPTION);
            w.raw_value(sub_id.as_raw());
            w.end_object();
            w.end_object();
            jsonrpc::end_response(&mut w);
            let len = w.finish()?;
            if view.status.is_terminal() {
                *sub = TaskSub::EMPTY;
            } else {
                sub.sent = print;
            }
            *cursor += 1;
            return Ok(Some(Transmit {
                len,
                route: Route::Call(stream),
            }));
        }
        *cursor = end;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_16_bytes() {
        let text = "0123456789abcdeffedcba9876543210";
        let id = decode_id(text).unwrap();
        let mut out = [0u8; ID_LEN];
        assert_eq!(id_text(&id, &mut out), text);
        // Upper case, short, long and non-hex texts name no task.
        assert_eq!(decode_id("0123456789ABCDEFFEDCBA9876543210"), None);
        assert_eq!(decode_id("0123"), None);
        assert_eq!(decode_id(&[text, "0"].concat()), None);
        assert_eq!(decode_id("0123456789abcdeffedcba987654321g"), None);
    }

    #[test]
    fn fingerprints_are_never_zero_and_differ() {
        assert!(fingerprint(b"") > TaskSub::NOTHING_SENT);
        assert_eq!(core::mem::size_of::<TaskSub>(), 24, "no padding");
        assert_ne!(
            fingerprint(b"{\"status\":\"working\"}"),
            fingerprint(b"{\"status\":\"completed\"}")
        );
    }
}
