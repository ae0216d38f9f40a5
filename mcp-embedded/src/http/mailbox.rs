//! Client responses to a running call's requests (legacy sessions, feature `requests`).
//!
//! A call of a legacy session sends its request (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`) on its POST's SSE response, on its slot; the
//! client answers with a separate POST, which any slot may serve. That slot hands the
//! answer to the call through the session's mailbox: one answer at a time per session, in
//! caller-owned bytes ([`Server::with_responses`](super::Server::with_responses)), and the
//! call's slot copies it out ([`CallContext::request`](super::CallContext::request)).

use core::task::Waker;

use mcp_rs_core::{CallToken, ClientOutcome};

/// An answer the mailbox holds for a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Held {
    /// `result`: `len` bytes of JSON.
    Result(usize),
    /// `error`: its code and `len` bytes of its (escaped) message.
    Error(i64, usize),
    /// The answer did not fit the mailbox.
    TooLarge,
}

/// One session's mailbox.
#[derive(Debug, Default)]
pub(super) struct Mailbox<'a> {
    pub(super) buf: &'a mut [u8],
    /// The call the held answer is for, and the answer.
    pub(super) held: Option<(CallToken, Held)>,
    /// The call waiting for its answer.
    pub(super) waker: Option<Waker>,
}

impl Mailbox<'_> {
    /// Keeps `outcome` for `call`; `false` when the mailbox holds another answer still
    /// (the new one is dropped).
    pub(super) fn deliver(&mut self, call: CallToken, outcome: &ClientOutcome<'_>) -> bool {
        if self.held.is_some() {
            return false;
        }
        let (text, code) = match outcome {
            ClientOutcome::Result(raw) => (raw.as_str(), None),
            ClientOutcome::Error { code, message } => (message.raw(), Some(*code)),
        };
        let held = match self.buf.get_mut(..text.len()) {
            Some(dst) => {
                dst.copy_from_slice(text.as_bytes());
                match code {
                    None => Held::Result(text.len()),
                    Some(c) => Held::Error(c, text.len()),
                }
            }
            None => Held::TooLarge,
        };
        self.held = Some((call, held));
        self.wake();
        true
    }

    fn wake(&mut self) {
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    /// Empties it (the session ended), waking a call that waits.
    pub(super) fn clear(&mut self) {
        self.held = None;
        self.wake();
    }
}
