//! 2026-07-28 multi-round-trip requests (`input_required` results).
//!
//! A `tools/call`, `prompts/get` or `resources/read` handler that needs something from the
//! client (an elicitation, a sampling completion, the client's roots) answers with
//! `resultType: "input_required"`, a map of `inputRequests` and an optional opaque
//! `requestState`. The client fulfils the requests and retries the same method and target
//! with a new id, `inputResponses` (same keys) and the `requestState` echoed.
//!
//! The state is attacker-controlled input on the retry, so the session seals it
//! ([`crate::token::seal`]: MAC over method, target, payload and expiry with the configured key)
//! and opens it before the handler runs: a tampered, foreign or expired state is answered
//! with -32602 and the handler never sees it. Behind a load balancer, any instance sharing
//! the key opens it (during a rotation, also under the previous key until it retires). Handlers see the payload they chose
//! ([`InputContext::state`]) and the responses ([`InputContext::response`]).
//!
//! Requests are only written for client capabilities the request declared: an
//! [`InputRequests`] entry for an undeclared capability is skipped and reported by
//! [`InputRequests::skipped`], so the handler can fall back.

use crate::model::common::ClientCaps;
use crate::wire::json::{JsonWriter, RawJson};

/// What the retry of an `input_required` round carried. Empty on a first request.
#[derive(Clone, Copy, Debug, Default)]
pub struct InputContext<'i> {
    pub(crate) responses: Option<RawJson<'i>>,
    pub(crate) state: Option<&'i str>,
}

impl<'i> InputContext<'i> {
    /// The client's response for `key` (an `ElicitResult`, `CreateMessageResult` or
    /// `ListRootsResult`), if the request carried one.
    pub fn response(&self, key: &str) -> Option<RawJson<'i>> {
        self.responses.and_then(|r| r.get(key))
    }
    /// All responses (`inputResponses`), if any.
    pub fn responses(&self) -> Option<RawJson<'i>> {
        self.responses
    }
    /// The payload this server sealed into the previous round's `requestState`, verified.
    pub fn state(&self) -> Option<&'i str> {
        self.state
    }
    /// Whether this request is a retry (it carried responses or state).
    pub fn is_retry(&self) -> bool {
        self.responses.is_some() || self.state.is_some()
    }
}

/// The `inputRequests` map of an `input_required` result, written as it is built.
pub struct InputRequests<'w, 'b> {
    pub(crate) w: &'w mut JsonWriter<'b>,
    pub(crate) caps: ClientCaps,
    pub(crate) written: usize,
    pub(crate) skipped: usize,
    /// Raw JSON given to a request was invalid or not on one line.
    pub(crate) invalid: bool,
}

impl core::fmt::Debug for InputRequests<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("InputRequests")
            .field("written", &self.written)
            .finish()
    }
}

impl InputRequests<'_, '_> {
    fn entry(
        &mut self,
        key: &str,
        need: ClientCaps,
        method: &str,
        params: &dyn Fn(&mut JsonWriter<'_>),
    ) -> &mut Self {
        if !self.caps.contains(need) {
            self.skipped += 1;
            return self;
        }
        self.w.key(key);
        self.w.begin_object();
        self.w.key("method");
        self.w.string(method);
        self.w.key("params");
        params(self.w);
        self.w.end_object();
        self.written += 1;
        self
    }

    /// A form-mode `elicitation/create` (`mode` left out: form is the default): `message` for the user, `requested_schema` (raw JSON,
    /// a flat object schema of primitive properties, on one line).
    pub fn elicit(&mut self, key: &str, message: &str, requested_schema: &str) -> &mut Self {
        self.invalid |= crate::wire::json::check_embedded(requested_schema, true).is_err();
        self.entry(key, ClientCaps::ELICITATION, "elicitation/create", &|w| {
            w.begin_object();
            w.key("message");
            w.string(message);
            w.key("requestedSchema");
            w.raw_value(requested_schema);
            w.end_object();
        })
    }

    /// A `sampling/createMessage` with raw `CreateMessageRequest` params (`messages`,
    /// `maxTokens`, ...; raw JSON on one line).
    pub fn sample(&mut self, key: &str, params: &str) -> &mut Self {
        self.invalid |= crate::wire::json::check_embedded(params, true).is_err();
        self.entry(key, ClientCaps::SAMPLING, "sampling/createMessage", &|w| {
            w.raw_value(params)
        })
    }

    /// A `roots/list`.
    pub fn list_roots(&mut self, key: &str) -> &mut Self {
        self.entry(key, ClientCaps::ROOTS, "roots/list", &|w| {
            w.begin_object();
            w.end_object();
        })
    }

    /// Requests written so far.
    pub fn written(&self) -> usize {
        self.written
    }
    /// Requests left out because the client did not declare the capability they need.
    pub fn skipped(&self) -> usize {
        self.skipped
    }
}

/// Why an `input_required` result could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputError {
    /// The state payload is not sealable (see [`crate::token::seal::SealError`]).
    State,
    /// Neither requests nor state: the result would be empty.
    Empty,
    /// Raw JSON given to a request was invalid or spanned lines.
    Invalid,
    /// This revision has no `input_required` results (legacy sessions).
    Unsupported,
}

/// Writes the members of an `input_required` result (`inputRequests`, `requestState`)
/// into an open result object.
pub(crate) fn write_input_required(
    w: &mut JsonWriter<'_>,
    seal: Option<&crate::model::common::SealCtx<'_>>,
    state: Option<&str>,
    requests: &mut dyn FnMut(&mut InputRequests<'_, '_>),
) -> Result<(), InputError> {
    let Some(seal) = seal else {
        return Err(InputError::Unsupported);
    };
    let before = w.checkpoint();
    w.key("inputRequests");
    w.begin_object();
    let mut reqs = InputRequests {
        w,
        caps: seal.caps,
        written: 0,
        skipped: 0,
        invalid: false,
    };
    requests(&mut reqs);
    if reqs.invalid {
        return Err(InputError::Invalid);
    }
    let written = reqs.written;
    w.end_object();
    if written == 0 {
        w.rewind(before);
    }
    if let Some(payload) = state {
        let mut buf = [0u8; crate::token::seal::MAX_SEALED_LEN];
        let sealed = crate::token::seal::seal(
            seal.key,
            seal.method,
            seal.target,
            payload,
            seal.expires_at_ms,
            &mut buf,
        )
        .map_err(|_| InputError::State)?;
        w.key("requestState");
        w.string(sealed);
    } else if written == 0 {
        return Err(InputError::Empty);
    }
    Ok(())
}
