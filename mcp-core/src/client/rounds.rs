//! 2026-07-28 multi-round-trip requests, from the client's side.
//!
//! A server that needs something from the client (a sampling, an elicitation, the roots)
//! answers a request with an `input_required` result instead of sending requests of its
//! own:
//!
//! ```json
//! {"resultType":"input_required",
//!  "inputRequests":{"confirm":{"method":"elicitation/create","params":{…}}},
//!  "requestState":"…opaque…"}
//! ```
//!
//! The client reports it as [`Event::InputRequired`](super::Event::InputRequired); the
//! request stays in its slot, without a deadline, until the application retries it with
//! [`Client::retry`]: the same request again (same method and target, new JSON-RPC id,
//! same handle) plus `inputResponses` (one result object per key of `inputRequests`) and
//! the `requestState` echoed verbatim. The retry may end in another `input_required`
//! round.

use super::error::ClientError;
use super::requests::{Answers, Options, Request};
use super::slots::{target_digest, RequestHandle, SlotState};
use super::{Client, Sent};
use crate::wire::json::{JsonStr, Members, RawJson};
use crate::wire::method::{Method, ServerMethod};

/// An `input_required` result.
#[derive(Clone, Copy, Debug)]
pub struct InputRound<'i> {
    /// The request waiting for input.
    pub handle: RequestHandle,
    /// Its method.
    pub method: Method,
    /// `inputRequests` (an object), if any.
    pub input_requests: Option<RawJson<'i>>,
    /// `requestState`, to echo in the retry, if any.
    pub request_state: Option<JsonStr<'i>>,
}

/// One entry of `inputRequests`.
#[derive(Clone, Copy, Debug)]
pub struct InputRequest<'i> {
    /// Its key: the key of the answer in `inputResponses`.
    pub key: JsonStr<'i>,
    /// What the server asks for (`None`: a method this client does not know).
    pub method: Option<ServerMethod>,
    /// The request's `params`, if any.
    pub params: Option<RawJson<'i>>,
}

impl<'i> InputRound<'i> {
    /// The input requests, in the order the server wrote them.
    pub fn requests(&self) -> impl Iterator<Item = InputRequest<'i>> {
        let members = self.input_requests.and_then(|r| r.members());
        members
            .unwrap_or(Members { rest: "" })
            .map(|(key, request)| {
                let mut buf = [0u8; 32];
                let method = request
                    .get("method")
                    .and_then(|m| m.as_string())
                    .and_then(|m| m.text_in(&mut buf).and_then(ServerMethod::lookup));
                InputRequest {
                    key,
                    method,
                    params: request.get("params"),
                }
            })
    }

    /// Reads an `input_required` result; `Err` names what is malformed.
    pub(super) fn read(
        handle: RequestHandle,
        method: Method,
        result: RawJson<'i>,
    ) -> Result<Self, &'static str> {
        let input_requests = result.get("inputRequests");
        if input_requests.is_some_and(|r| {
            r.members()
                .is_none_or(|mut m| m.any(|(_, v)| v.members().is_none()))
        }) {
            return Err("inputRequests must be an object of request objects");
        }
        let request_state = match result.get("requestState") {
            None => None,
            Some(s) => Some(s.as_string().ok_or("requestState must be a string")?),
        };
        if input_requests.is_none() && request_state.is_none() {
            return Err("input_required result without inputRequests or requestState");
        }
        Ok(InputRound {
            handle,
            method,
            input_requests,
            request_state,
        })
    }
}

impl Client<'_> {
    /// Answers an `input_required` round: sends `request` again (it must have the method
    /// and target of the one that asked; the client keeps no copy of it) with the
    /// [`Answers`]: `inputResponses` and the round's `requestState`. The outcome arrives
    /// under the same handle.
    pub fn retry(
        &mut self,
        handle: RequestHandle,
        request: &Request<'_>,
        answers: Answers<'_>,
        options: Options,
        now_ms: u64,
        out: &mut [u8],
    ) -> Result<Sent, ClientError> {
        self.advance(now_ms);
        let version = self.version().ok_or(ClientError::NotConnected)?;
        let slot = self.live_slot(handle)?;
        if slot.state != SlotState::AwaitingInput {
            return Err(ClientError::NotAwaitingInput);
        }
        let method = request.method();
        if slot.method != method || slot.target != target_digest(method, request.target()) {
            return Err(ClientError::RetryMismatch);
        }
        self.write_and_track(handle.slot(), request, options, version, answers, out)
    }
}
