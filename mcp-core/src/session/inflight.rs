//! Call slots: deferred requests (`tools/call`, `resources/read`, `prompts/get`,
//! `completion/complete`) and listen streams between hand-out and completion.

use crate::model::common::ClientCaps;
use crate::model::logging::LogLevel;
use crate::wire::jsonrpc::StoredId;
use crate::wire::version::ProtocolVersion;

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

/// The kind of request a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallKind {
    Tool,
    #[cfg_attr(not(feature = "resources"), allow(dead_code))]
    Read,
    #[cfg_attr(not(feature = "prompts"), allow(dead_code))]
    Prompt,
    #[cfg_attr(not(feature = "completion"), allow(dead_code))]
    Complete,
}

/// The state of a call's server-to-client request.
#[cfg(feature = "requests")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutState {
    /// None outstanding.
    Idle,
    /// Sent; waiting for the client.
    Pending,
    /// The client answered with `result` (span in `out_reply`) in the current message.
    Answered,
    /// The client answered with `error` (span in `out_reply`) in the current message.
    Failed,
    /// The deadline passed: `notifications/cancelled` is owed to the client and the
    /// timeout to the application.
    TimedOut,
    /// The cancellation was sent; the timeout is owed to the application.
    Expired,
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
    /// Client capabilities the request declared (or the session's, legacy).
    pub(crate) caps: ClientCaps,
    /// Which request this slot holds.
    pub(crate) kind: CallKind,
    /// Provider indexes of the target (tool, prompt; resource and template for reads).
    pub(crate) index: (u16, u16),
    /// Span of the request's `params` in the message (`u32::MAX` start: absent).
    pub(crate) params: (u32, u32),
    /// Keyed digest of the target, for sealing `requestState` (see `crate::model::input`).
    pub(crate) target_digest: u64,
    /// A deferred read's URI (raw JSON string content; empty if longer than
    /// [`MAX_ID_LEN`](crate::wire::jsonrpc::MAX_ID_LEN)), for the `data.uri` of its not-found
    /// error: the message it came in is gone when the read is completed.
    #[cfg(feature = "resources")]
    pub(crate) uri: StoredId,
    /// Generation of the call last freed by a client cancellation, and whether the
    /// application still has to be told.
    pub(crate) cancelled_generation: Option<u32>,
    pub(crate) cancel_unreported: bool,
    /// The call's outstanding server-to-client request (legacy era): its id (0: none).
    #[cfg(feature = "requests")]
    pub(crate) out_id: u32,
    /// When that request times out (milliseconds, the session clock).
    #[cfg(feature = "requests")]
    pub(crate) out_deadline: u64,
    /// What became of it, waiting to be reported.
    #[cfg(feature = "requests")]
    pub(crate) out_state: OutState,
    /// Span of the client's response (`result` or `error` value) in the current message.
    #[cfg(feature = "requests")]
    pub(crate) out_reply: (u32, u32),
    /// Listening slot: the list kinds it opted in to, and those with a change waiting to be
    /// sent (bits of the session's list flags).
    #[cfg_attr(not(feature = "listen"), allow(dead_code))]
    pub(crate) listen: u8,
    #[cfg_attr(not(feature = "listen"), allow(dead_code))]
    pub(crate) listen_pending: u8,
    /// Listening slot: 64-bit FNV-1a hashes of the resource URIs it subscribed to
    /// (`resourceSubscriptions`; 0: unused), see `session::listen`.
    #[cfg(all(feature = "listen", feature = "resources"))]
    pub(crate) resource_subs: [u64; crate::session::MAX_RESOURCE_SUBSCRIPTIONS],
    /// Listening slot: the tasks it subscribed to (`taskIds`), see `session::task_status`.
    #[cfg(all(feature = "listen", feature = "tasks"))]
    pub(crate) task_subs: [TaskSub; crate::session::MAX_TASK_SUBSCRIPTIONS],
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
        caps: ClientCaps::NONE,
        kind: CallKind::Tool,
        index: (0, 0),
        params: (u32::MAX, 0),
        target_digest: 0,
        #[cfg(feature = "resources")]
        uri: StoredId::EMPTY,
        cancelled_generation: None,
        cancel_unreported: false,
        #[cfg(feature = "requests")]
        out_id: 0,
        #[cfg(feature = "requests")]
        out_deadline: 0,
        #[cfg(feature = "requests")]
        out_state: OutState::Idle,
        #[cfg(feature = "requests")]
        out_reply: (0, 0),
        listen: 0,
        listen_pending: 0,
        #[cfg(all(feature = "listen", feature = "resources"))]
        resource_subs: [0; crate::session::MAX_RESOURCE_SUBSCRIPTIONS],
        #[cfg(all(feature = "listen", feature = "tasks"))]
        task_subs: [TaskSub::EMPTY; crate::session::MAX_TASK_SUBSCRIPTIONS],
    };

    /// A slot of zero bytes only (every enum at its first variant, no float but `0.0`),
    /// for [`SessionStorage::new`](crate::SessionStorage::new): a `static` of it goes in
    /// `.bss`, not in flash as `.data` (#21). Not a state to serve from: sessions
    /// [`reset`](Self::reset) their slots before use.
    pub(crate) const BLANK: CallSlot = CallSlot {
        last_progress: 0.0,
        version: ProtocolVersion::V2024_11_05,
        log_level: Some(crate::LogLevel::Debug),
        params: (0, 0),
        ..Self::EMPTY
    };

    /// `*self = CallSlot::EMPTY`, field by field: assigning the constant is a copy of its
    /// bytes from flash, a call to `memcpy` on microcontrollers (#21). The destructuring
    /// names every field, so a new one cannot be forgotten here.
    pub(crate) fn reset(&mut self) {
        let CallSlot {
            state,
            generation,
            id,
            progress_token,
            last_progress,
            version,
            log_level,
            caps,
            kind,
            index,
            params,
            target_digest,
            #[cfg(feature = "resources")]
            uri,
            cancelled_generation,
            cancel_unreported,
            #[cfg(feature = "requests")]
            out_id,
            #[cfg(feature = "requests")]
            out_deadline,
            #[cfg(feature = "requests")]
            out_state,
            #[cfg(feature = "requests")]
            out_reply,
            listen,
            listen_pending,
            #[cfg(all(feature = "listen", feature = "resources"))]
            resource_subs,
            #[cfg(all(feature = "listen", feature = "tasks"))]
            task_subs,
        } = self;
        *state = SlotState::Free;
        *generation = 0;
        id.clear();
        progress_token.clear();
        *last_progress = f64::NEG_INFINITY;
        *version = ProtocolVersion::LATEST;
        *log_level = None;
        *caps = ClientCaps::NONE;
        *kind = CallKind::Tool;
        *index = (0, 0);
        *params = (u32::MAX, 0);
        *target_digest = 0;
        #[cfg(feature = "resources")]
        uri.clear();
        *cancelled_generation = None;
        *cancel_unreported = false;
        #[cfg(feature = "requests")]
        {
            *out_id = 0;
            *out_deadline = 0;
            *out_state = OutState::Idle;
            *out_reply = (0, 0);
        }
        *listen = 0;
        *listen_pending = 0;
        #[cfg(all(feature = "listen", feature = "resources"))]
        resource_subs.fill(0);
        #[cfg(all(feature = "listen", feature = "tasks"))]
        task_subs.fill(TaskSub::EMPTY);
    }

    pub(crate) fn token(&self, index: usize) -> CallToken {
        CallToken {
            slot: u16::try_from(index).unwrap_or(u16::MAX),
            generation: self.generation,
        }
    }

    /// Frees the slot; the next call in it gets a new generation (and any outstanding
    /// server-to-client request is forgotten: a late response is ignored).
    pub(crate) fn free(&mut self) {
        #[cfg(feature = "requests")]
        {
            self.out_id = 0;
            self.out_state = OutState::Idle;
        }
        self.state = SlotState::Free;
        self.generation = self.generation.wrapping_add(1);
    }
}

/// One task a listen stream is subscribed to (`taskIds`, see `session::task_status`): 24
/// bytes, no padding.
#[cfg(all(feature = "listen", feature = "tasks"))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TaskSub {
    /// The task id's 32 hex digits as 16 bytes.
    pub(crate) id: [u8; crate::model::tasks::ID_LEN / 2],
    /// [`TaskSub::UNUSED`], [`TaskSub::NOTHING_SENT`], or the fingerprint (never below 2)
    /// of the `DetailedTask` last sent on the stream.
    pub(crate) sent: u64,
}

#[cfg(all(feature = "listen", feature = "tasks"))]
impl TaskSub {
    /// `sent` of an entry not in use.
    pub(crate) const UNUSED: u64 = 0;
    /// `sent` of a subscription whose task has not been sent yet.
    pub(crate) const NOTHING_SENT: u64 = 1;
    /// An unused entry (all zero bytes, as `CallSlot::BLANK` needs).
    pub(crate) const EMPTY: TaskSub = TaskSub {
        id: [0; crate::model::tasks::ID_LEN / 2],
        sent: Self::UNUSED,
    };

    /// Whether the entry is in use.
    pub(crate) fn used(&self) -> bool {
        self.sent != Self::UNUSED
    }
}
