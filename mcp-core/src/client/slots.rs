//! Request slots: the client's own requests, from sending to their outcome. The caller owns
//! them ([`ClientStorage`](super::ClientStorage)); a [`RequestHandle`] names one by index
//! and generation, so a stale handle never reaches a newer request in the same slot.
//!
//! ```text
//! Free ─send─▶ Pending ─result/error─▶ Free
//!                │  ▲
//!                │  └─retry── AwaitingInput ◀─input_required (2026-07-28)
//!                └─deadline─▶ TimedOut ─cancellation sent, event taken─▶ Free
//! ```

//!
//! Not the server's slot type ([`CallSlot`](crate::CallSlot)): that one holds a *peer's*
//! request (its raw id, the revision and capabilities it declared, the provider indexes of
//! its target, listen flags) with at most one outgoing request hanging off it, whose
//! answer is handed out later through `Incoming`. A client slot holds *its own* request:
//! an integer id, a method, a deadline and the progress flag, and its answer is reported
//! straight from the frame. What both sides do the same way is shared below the slots, in
//! the wire layer: the request and `notifications/cancelled` writers
//! ([`jsonrpc::begin_request`](crate::wire::jsonrpc::begin_request),
//! [`jsonrpc::write_cancelled`](crate::wire::jsonrpc::write_cancelled)) and the method
//! tables of both directions.

use crate::wire::method::Method;

/// Names one request the client sent: slot index plus generation (ordered by slot, then
/// generation, so it can key a sorted map).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestHandle {
    pub(crate) slot: u16,
    pub(crate) generation: u32,
}

impl RequestHandle {
    /// The slot index (stable while the request is in flight; useful as a table index).
    pub fn slot(&self) -> usize {
        usize::from(self.slot)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotState {
    Free,
    /// Sent; waiting for the response or the deadline.
    Pending,
    /// Taken for a request the client writes on its own at the next `poll_transmit` (the
    /// `initialize` that follows a refused `server/discover`).
    Owed,
    /// An `input_required` result arrived (2026-07-28): waiting for `retry`, no deadline.
    AwaitingInput,
    /// The deadline passed: the cancellation and/or the event are still owed.
    TimedOut,
}

/// One request slot. Storage for it is owned by the caller (see
/// [`ClientStorage`](super::ClientStorage)).
#[derive(Clone, Copy, Debug)]
pub struct RequestSlot {
    pub(crate) state: SlotState,
    pub(crate) generation: u32,
    /// The JSON-RPC id of the request on the wire (never 0 while in use).
    pub(crate) id: u32,
    pub(crate) method: Method,
    /// Milliseconds on the client clock (`u64::MAX`: never).
    pub(crate) deadline: u64,
    /// `_meta.progressToken` was sent (the token is the id).
    pub(crate) progress: bool,
    /// The request declared the tasks extension (2026-07-28): a `tools/call` may be
    /// answered with a task (`resultType: "task"`).
    pub(crate) tasks: bool,
    /// Digest of the method and target, checked by `retry`.
    pub(crate) target: u64,
    pub(crate) cancel_owed: bool,
    pub(crate) event_owed: bool,
}

impl RequestSlot {
    /// An empty slot.
    pub const EMPTY: RequestSlot = RequestSlot {
        state: SlotState::Free,
        generation: 0,
        id: 0,
        method: Method::Ping,
        deadline: u64::MAX,
        progress: false,
        tasks: false,
        target: 0,
        cancel_owed: false,
        event_owed: false,
    };

    pub(crate) fn handle(&self, index: usize) -> RequestHandle {
        RequestHandle {
            slot: u16::try_from(index).unwrap_or(u16::MAX),
            generation: self.generation,
        }
    }

    /// Frees the slot; the next request in it gets a new generation.
    pub(crate) fn free(&mut self) {
        *self = RequestSlot {
            generation: self.generation.wrapping_add(1),
            ..RequestSlot::EMPTY
        };
    }
}

/// FNV-1a of a method name and a request target: `retry` checks that the request it is
/// given is the one that asked for input (the client keeps no copy of the request).
pub(crate) fn target_digest(method: Method, target: &str) -> u64 {
    let bytes = method.as_str().bytes().chain([0]).chain(target.bytes());
    crate::wire::fnv::fnv1a(crate::wire::fnv::START, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_bumps_the_generation_and_clears_the_rest() {
        let mut s = RequestSlot {
            state: SlotState::Pending,
            id: 7,
            progress: true,
            ..RequestSlot::EMPTY
        };
        let before = s.handle(3);
        s.free();
        assert_eq!(s.state, SlotState::Free);
        assert_eq!(s.id, 0);
        assert!(!s.progress);
        assert_ne!(s.handle(3), before);
        assert_eq!(s.handle(3).slot(), 3);
    }

    #[test]
    fn digests_tell_targets_and_methods_apart() {
        let a = target_digest(Method::ToolsCall, "echo");
        assert_eq!(a, target_digest(Method::ToolsCall, "echo"));
        assert_ne!(a, target_digest(Method::ToolsCall, "echo2"));
        assert_ne!(a, target_digest(Method::PromptsGet, "echo"));
    }
}
