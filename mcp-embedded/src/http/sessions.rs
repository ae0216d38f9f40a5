//! The fixed table of legacy sessions (`initialize`, then `Mcp-Session-Id`): each entry a
//! session over call slots the application gave once; an ended or idle session's entry is
//! reset ([`Session::reset`]) and reused.

use mcp_rs_core::token::mac::{ct_eq, siphash24};
use mcp_rs_core::{SecretKey, Session};

/// Length of a session id: 32 lowercase hex digits (128 bits).
pub const SESSION_ID_LEN: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Free,
    /// Taken by an `initialize` being answered.
    Reserved,
    Live,
}

#[derive(Debug)]
pub(super) struct Entry<'a> {
    pub(super) session: Session<'a>,
    pub(super) id: [u8; SESSION_ID_LEN],
    pub(super) state: State,
    pub(super) last_ms: u64,
    /// A GET stream is open (the session does not expire meanwhile).
    pub(super) stream: bool,
    /// The resources the session subscribed to.
    pub(super) subs: super::updates::Subscriptions,
    /// The events of the session's SSE responses, kept for resumption.
    pub(super) ring: super::replay::Ring<'a>,
    /// Client responses on their way to the session's calls.
    #[cfg(feature = "requests")]
    pub(super) mail: super::mailbox::Mailbox<'a>,
}

#[derive(Debug)]
pub(super) struct Table<'a, const N: usize> {
    pub(super) entries: [Option<Entry<'a>>; N],
    pub(super) idle_ms: u64,
    counter: u64,
}

impl<'a, const N: usize> Table<'a, N> {
    pub(super) const fn new() -> Self {
        Table {
            entries: [const { None }; N],
            idle_ms: 600_000,
            counter: 0,
        }
    }

    /// Frees the entries idle for longer than `idle_ms` at `now` (not those streaming).
    pub(super) fn expire(&mut self, now: u64) {
        let idle = self.idle_ms;
        for e in self.entries.iter_mut().flatten() {
            if e.state == State::Live && !e.stream && now.saturating_sub(e.last_ms) > idle {
                free(e);
            }
        }
    }

    /// A free entry for a new session, reserved and given a fresh id; `None` when full.
    pub(super) fn reserve(&mut self, key: &SecretKey, now: u64) -> Option<usize> {
        self.expire(now);
        let i = self
            .entries
            .iter()
            .position(|e| e.as_ref().is_some_and(|e| e.state == State::Free))?;
        self.counter = self.counter.wrapping_add(1);
        let id = new_id(key, self.counter, now);
        let e = self.entries.get_mut(i)?.as_mut()?;
        e.state = State::Reserved;
        e.id = id;
        e.last_ms = now;
        e.stream = false;
        Some(i)
    }

    /// The live session with id `id` at `now` (refreshing its idle time).
    pub(super) fn find(&mut self, id: &[u8], now: u64) -> Option<usize> {
        self.expire(now);
        let i = self.entries.iter().position(|e| {
            e.as_ref()
                .is_some_and(|e| e.state == State::Live && ct_eq(&e.id, id))
        })?;
        if let Some(e) = self.entries.get_mut(i).and_then(Option::as_mut) {
            e.last_ms = now;
        }
        Some(i)
    }

    pub(super) fn entry(&mut self, i: usize) -> Option<&mut Entry<'a>> {
        self.entries.get_mut(i).and_then(Option::as_mut)
    }

    /// Ends the session of entry `i`; its entry is free again.
    pub(super) fn free(&mut self, i: usize) {
        if let Some(e) = self.entry(i) {
            free(e);
        }
    }
}

fn free(e: &mut Entry<'_>) {
    e.state = State::Free;
    e.stream = false;
    e.session.reset();
    e.ring.clear();
    e.subs.clear();
    #[cfg(feature = "requests")]
    e.mail.clear();
}

/// 128 bits of SipHash under the server's secret key over a counter and the time: ids are
/// unguessable while the key is secret (give each device its own key).
fn new_id(key: &SecretKey, counter: u64, now: u64) -> [u8; SESSION_ID_LEN] {
    let mut msg = [0u8; 24];
    msg[..8].copy_from_slice(b"mcp-sess");
    msg[8..16].copy_from_slice(&counter.to_le_bytes());
    msg[16..].copy_from_slice(&now.to_le_bytes());
    let a = siphash24(key, &msg);
    msg[..8].copy_from_slice(b"mcp-sid2");
    let b = siphash24(key, &msg);
    let mut id = [0u8; SESSION_ID_LEN];
    for (i, byte) in a.to_le_bytes().iter().chain(&b.to_le_bytes()).enumerate() {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        id[2 * i] = HEX[usize::from(byte >> 4)];
        id[2 * i + 1] = HEX[usize::from(byte & 15)];
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_differ_and_are_hex() {
        let key = SecretKey([9; 16]);
        let a = new_id(&key, 1, 0);
        let b = new_id(&key, 2, 0);
        assert_ne!(a, b);
        assert!(a
            .iter()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(new_id(&SecretKey([8; 16]), 1, 0), a);
    }
}
