//! Legacy server-to-client requests: `sampling/createMessage`, `elicitation/create` and
//! `roots/list`, issued from inside a deferred call, only to clients that declared the
//! capability. Each call has at most one outstanding request (its slot holds the id and the
//! deadline), so the id space and memory are bounded by the call slots. The client's
//! response (or error) is routed back to the call through [`Incoming::next_response`]; a
//! request that outlives its deadline (time passed in through `handle`/`handle_timeout`) is
//! cancelled with `notifications/cancelled` and reported as [`Event::RequestTimedOut`].
//! Responses with an unknown, late or repeated id are ignored.
//!
//! 2026-07-28 servers never send requests: stateless calls ask with `input_required`
//! results instead (see [`crate::model::input`]).
//!
//! [`Event::RequestTimedOut`]: super::Event::RequestTimedOut

use super::{Incoming, Route, Session, Transmit};
use crate::model::common::ClientCaps;
use crate::session::error::CallError;
use crate::session::inflight::{CallToken, OutState, SlotState};
use crate::wire::json::{JsonStr, JsonWriter, RawJson};
use crate::wire::jsonrpc::{self, RequestId};

/// A request the server may send to a legacy client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientMethod {
    /// `sampling/createMessage` (needs the client's `sampling` capability).
    CreateMessage,
    /// `elicitation/create` (needs `elicitation`; 2025-06-18+).
    Elicit,
    /// `roots/list` (needs `roots`).
    ListRoots,
}

impl ClientMethod {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientMethod::CreateMessage => "sampling/createMessage",
            ClientMethod::Elicit => "elicitation/create",
            ClientMethod::ListRoots => "roots/list",
        }
    }
    /// The client capability it needs.
    pub fn capability(self) -> ClientCaps {
        match self {
            ClientMethod::CreateMessage => ClientCaps::SAMPLING,
            ClientMethod::Elicit => ClientCaps::ELICITATION,
            ClientMethod::ListRoots => ClientCaps::ROOTS,
        }
    }
}

/// What the client answered to a call's request.
#[derive(Clone, Copy, Debug)]
pub enum ClientOutcome<'i> {
    /// `result`: a `CreateMessageResult`, `ElicitResult` or `ListRootsResult`.
    Result(RawJson<'i>),
    /// `error`: the client refused or failed.
    Error {
        /// The error code.
        code: i64,
        /// The error message.
        message: JsonStr<'i>,
    },
}

/// A client's response, routed to the deferred call whose request it answers.
#[derive(Clone, Copy, Debug)]
pub struct ClientResponse<'i> {
    /// The call that sent the request.
    pub call: CallToken,
    /// What the client answered.
    pub outcome: ClientOutcome<'i>,
}

impl<'i> Incoming<'i> {
    /// The next client response this message carried for a call's server-to-client request
    /// (a 2025-03-26 batch may carry several). Responses not taken before the next
    /// `handle_*` are reported as timed out.
    pub fn next_response(&mut self, session: &mut Session<'_>) -> Option<ClientResponse<'i>> {
        if self.responses == 0 {
            return None;
        }
        for (i, slot) in session.slots.iter_mut().enumerate() {
            let ok = match slot.out_state {
                OutState::Answered => true,
                OutState::Failed => false,
                _ => continue,
            };
            slot.out_state = OutState::Idle;
            slot.out_id = 0;
            self.responses -= 1;
            let (start, len) = (slot.out_reply.0 as usize, slot.out_reply.1 as usize);
            let value = RawJson {
                text: self
                    .msg
                    .get(start..start.saturating_add(len))
                    .unwrap_or("null"),
            };
            let outcome = if ok {
                ClientOutcome::Result(value)
            } else {
                ClientOutcome::Error {
                    code: value.get("code").and_then(|c| c.as_i64()).unwrap_or(0),
                    message: value
                        .get("message")
                        .and_then(|m| m.as_string())
                        .unwrap_or(JsonStr { raw: "" }),
                }
            };
            return Some(ClientResponse {
                call: slot.token(i),
                outcome,
            });
        }
        self.responses = 0;
        None
    }
}

impl Session<'_> {
    /// Sends a server-to-client request on behalf of a deferred call of a legacy session:
    /// `params` is the request's raw params object (on one line), answered by the time
    /// `timeout_ms` has passed on the session clock or cancelled. `Ok(None)` if the call
    /// was cancelled meanwhile.
    ///
    /// Refused with [`CallError::Stateless`] for 2026-07-28 calls, with
    /// [`CallError::ClientCapability`] when the client did not declare what the method
    /// needs (or its revision predates it: elicitation needs 2025-06-18), with [`CallError::RequestPending`] while the call's previous request is
    /// unanswered, and with [`CallError::InvalidParams`] for params that are not a one-line
    /// JSON object.
    pub fn request(
        &mut self,
        token: CallToken,
        method: ClientMethod,
        params: &str,
        timeout_ms: u64,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, CallError> {
        let id = self.next_out_id;
        let deadline = self.now_ms.saturating_add(timeout_ms);
        let Some(slot) = self.live_slot(token)? else {
            return Ok(None);
        };
        if slot.version.is_modern() {
            return Err(CallError::Stateless);
        }
        // Elicitation exists from 2025-06-18: an older session cannot have the capability.
        let too_old = method == ClientMethod::Elicit
            && slot.version < crate::wire::version::ProtocolVersion::V2025_06_18;
        if too_old || !slot.caps.contains(method.capability()) {
            return Err(CallError::ClientCapability);
        }
        if slot.out_state != OutState::Idle {
            return Err(CallError::RequestPending);
        }
        if crate::wire::json::check_embedded(params, true).is_err() {
            return Err(CallError::InvalidParams);
        }
        let mut w = JsonWriter::new(out);
        jsonrpc::begin_request(&mut w, u64::from(id), method.as_str());
        w.key("params");
        w.raw_value(params);
        w.end_object();
        let len = w.finish().map_err(|e| CallError::BufferTooSmall {
            required: e.required,
        })?;
        slot.out_id = id;
        slot.out_deadline = deadline;
        slot.out_state = OutState::Pending;
        // Ids 1..=u32::MAX, never 0 (the slot's "none").
        self.next_out_id = id.checked_add(1).unwrap_or(1);
        Ok(Some(Transmit {
            len,
            route: Route::Call(token),
        }))
    }

    /// Routes a response from the client to the call whose request it answers.
    pub(super) fn handle_response<'i>(
        &mut self,
        id: RequestId<'i>,
        outcome: Result<RawJson<'i>, RawJson<'i>>,
        text: &'i str,
        incoming: &mut Incoming<'i>,
    ) {
        let Ok(id) = id.as_raw().parse::<u32>() else {
            return; // Not an id we issue.
        };
        let Some(slot) = self
            .slots
            .iter_mut()
            .take(if self.occupied == 0 { 0 } else { usize::MAX })
            .find(|s| {
                s.state == SlotState::Active && s.out_state == OutState::Pending && s.out_id == id
            })
        else {
            return; // Unknown, late or repeated: ignored.
        };
        let (value, state) = match outcome {
            Ok(v) => (v, OutState::Answered),
            Err(e) => (e, OutState::Failed),
        };
        let start = (value.text.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
        slot.out_reply = (
            u32::try_from(start).unwrap_or(u32::MAX),
            u32::try_from(value.text.len()).unwrap_or(0),
        );
        slot.out_state = state;
        incoming.responses += 1;
    }

    /// The earliest deadline of an outstanding server-to-client request, if any.
    pub(super) fn outgoing_deadline(&self) -> Option<u64> {
        self.slots
            .iter()
            .take(if self.occupied == 0 { 0 } else { usize::MAX })
            .filter(|s| s.out_state == OutState::Pending)
            .map(|s| s.out_deadline)
            .min()
    }

    /// Expires requests whose deadline passed, and responses the application did not take.
    pub(super) fn expire(&mut self, now_ms: u64) {
        if self.occupied == 0 {
            return;
        }
        for slot in self.slots.iter_mut() {
            let expired = match slot.out_state {
                OutState::Pending => slot.out_deadline <= now_ms,
                OutState::Answered | OutState::Failed => true,
                _ => false,
            };
            if expired {
                slot.out_state = OutState::TimedOut;
            }
        }
    }

    /// `notifications/cancelled` for the next timed-out request, if any.
    pub(super) fn poll_request_cancel(
        &mut self,
        out: &mut [u8],
    ) -> Result<Option<Transmit>, crate::wire::json::BufferTooSmall> {
        let Some((i, slot)) = self
            .slots
            .iter_mut()
            .take(if self.occupied == 0 { 0 } else { usize::MAX })
            .enumerate()
            .find(|(_, s)| s.out_state == OutState::TimedOut)
        else {
            return Ok(None);
        };
        let mut w = JsonWriter::new(out);
        jsonrpc::write_cancelled(&mut w, u64::from(slot.out_id), Some("timed out"));
        let len = w.finish()?;
        slot.out_state = OutState::Expired;
        Ok(Some(Transmit {
            len,
            route: Route::Call(slot.token(i)),
        }))
    }

    /// The next call whose request timed out (after its cancellation was sent).
    pub(super) fn poll_request_timeout(&mut self) -> Option<CallToken> {
        let (i, slot) = self
            .slots
            .iter_mut()
            .take(if self.occupied == 0 { 0 } else { usize::MAX })
            .enumerate()
            .find(|(_, s)| s.out_state == OutState::Expired)?;
        slot.out_state = OutState::Idle;
        slot.out_id = 0;
        Some(slot.token(i))
    }
}
