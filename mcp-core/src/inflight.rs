//! Call slots: deferred `tools/call` requests between hand-out and completion.

use crate::jsonrpc::StoredId;
use crate::logging::LogLevel;
use crate::version::ProtocolVersion;

/// Names one deferred call: slot index plus generation, so a stale token can never
/// complete a newer call that reused the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallToken {
    pub(crate) slot: u16,
    pub(crate) generation: u32,
}

impl CallToken {
    /// The slot index (stable while the call is in flight; useful as a table index).
    pub fn slot(&self) -> usize {
        usize::from(self.slot)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotState {
    Free,
    /// Accepted during the current `handle_message`, not yet handed to the application.
    Fresh,
    /// Handed out; waiting for `complete`/`fail`.
    Active,
    /// Never handed out (the application dropped the `Incoming`); answered with an error
    /// by `poll_transmit`.
    Abandoned,
    /// A 2026-07-28 `subscriptions/listen` stream (open until cancelled or closed).
    #[cfg_attr(not(feature = "listen"), allow(dead_code))]
    Listening,
}

/// One call slot. Storage for it is owned by the caller (see
/// [`SessionStorage`](crate::SessionStorage)).
#[derive(Clone, Copy, Debug)]
pub struct CallSlot {
    pub(crate) state: SlotState,
    pub(crate) generation: u32,
    pub(crate) id: StoredId,
    pub(crate) progress_token: StoredId,
    pub(crate) last_progress: f64,
    pub(crate) version: ProtocolVersion,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) tool: u16,
    pub(crate) args: (u32, u32),
    pub(crate) name: (u32, u32),
    /// Generation of the call last freed by a client cancellation, and whether the
    /// application still has to be told.
    pub(crate) cancelled_generation: Option<u32>,
    pub(crate) cancel_unreported: bool,
    /// Listening slot: opted in to `toolsListChanged`, and a change is waiting to be sent.
    #[cfg_attr(not(feature = "listen"), allow(dead_code))]
    pub(crate) listen_tools: bool,
    #[cfg_attr(not(feature = "listen"), allow(dead_code))]
    pub(crate) listen_pending: bool,
}

impl CallSlot {
    /// An empty slot.
    pub const EMPTY: CallSlot = CallSlot {
        state: SlotState::Free,
        generation: 0,
        id: StoredId::EMPTY,
        progress_token: StoredId::EMPTY,
        last_progress: f64::NEG_INFINITY,
        version: ProtocolVersion::LATEST,
        log_level: None,
        tool: 0,
        args: (0, 0),
        name: (0, 0),
        cancelled_generation: None,
        cancel_unreported: false,
        listen_tools: false,
        listen_pending: false,
    };

    pub(crate) fn token(&self, index: usize) -> CallToken {
        CallToken {
            slot: u16::try_from(index).unwrap_or(u16::MAX),
            generation: self.generation,
        }
    }

    /// Frees the slot; the next call in it gets a new generation.
    pub(crate) fn free(&mut self) {
        self.state = SlotState::Free;
        self.generation = self.generation.wrapping_add(1);
    }
}
