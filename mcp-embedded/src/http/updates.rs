//! Resource updates ([`Server::resource_updated`]): the last few updated URIs, numbered,
//! for every open stream to send what concerns it (a `subscriptions/listen` stream
//! subscribed to the URI, a legacy session's GET stream when the session subscribed), and
//! each legacy session's subscriptions, kept as URI hashes.
//!
//! [`Server::resource_updated`]: super::Server::resource_updated

/// Longest URI [`Server::resource_updated`](super::Server::resource_updated) takes.
pub const MAX_UPDATED_URI: usize = 128;

/// Resource subscriptions (`resources/subscribe`) a legacy session keeps.
pub const MAX_SUBSCRIPTIONS: usize = 8;

/// Updates kept for streams that have not sent them yet (one slower than this loses the
/// oldest, counted in [`HttpStats::dropped`](super::HttpStats::dropped)).
pub(super) const KEPT: usize = 4;

/// The last [`KEPT`] updated URIs; update `n` (counted from 1) is at `n % KEPT`.
#[derive(Debug)]
pub(super) struct Updates {
    uris: [[u8; MAX_UPDATED_URI]; KEPT],
    lens: [usize; KEPT],
    /// Updates so far.
    count: u32,
}

impl Updates {
    pub(super) const fn new() -> Self {
        Updates {
            uris: [[0; MAX_UPDATED_URI]; KEPT],
            lens: [0; KEPT],
            count: 0,
        }
    }

    /// Keeps `uri` as the next update; `false` (nothing kept) when it is too long.
    pub(super) fn push(&mut self, uri: &str) -> bool {
        if uri.len() > MAX_UPDATED_URI {
            return false;
        }
        self.count = self.count.wrapping_add(1);
        let at = self.count as usize % KEPT;
        if let (Some(dst), Some(len)) = (self.uris.get_mut(at), self.lens.get_mut(at)) {
            if let Some(d) = dst.get_mut(..uri.len()) {
                d.copy_from_slice(uri.as_bytes());
            }
            *len = uri.len();
        }
        true
    }

    /// Update `n` copied into `out` (its length); `None` when it is no longer kept (or
    /// not made yet).
    pub(super) fn get(&self, n: u32, out: &mut [u8; MAX_UPDATED_URI]) -> Option<usize> {
        let behind = self.count.wrapping_sub(n);
        if n == 0 || behind as usize >= KEPT {
            return None;
        }
        let at = n as usize % KEPT;
        let len = *self.lens.get(at)?;
        let src = self.uris.get(at)?.get(..len)?;
        out.get_mut(..len)?.copy_from_slice(src);
        Some(len)
    }
}

/// A URI's hash for the subscription sets: the core's, which its listen streams use.
pub(super) use mcp_rs_core::session::uri_hash;

/// A legacy session's subscriptions, as URI hashes (0: a free place).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Subscriptions([u64; MAX_SUBSCRIPTIONS]);

impl Subscriptions {
    pub(super) fn contains(&self, hash: u64) -> bool {
        self.0.contains(&hash)
    }

    /// Whether `hash` can be added (it is there, or a place is free).
    pub(super) fn has_room_for(&self, hash: u64) -> bool {
        self.contains(hash) || self.0.contains(&0)
    }

    pub(super) fn add(&mut self, hash: u64) {
        if !self.contains(hash) {
            if let Some(free) = self.0.iter_mut().find(|h| **h == 0) {
                *free = hash;
            }
        }
    }

    pub(super) fn remove(&mut self, hash: u64) {
        for h in self.0.iter_mut().filter(|h| **h == hash) {
            *h = 0;
        }
    }

    pub(super) fn clear(&mut self) {
        self.0 = [0; MAX_SUBSCRIPTIONS];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_updates_are_kept() {
        let mut u = Updates::new();
        let mut out = [0u8; MAX_UPDATED_URI];
        assert_eq!(u.get(1, &mut out), None);
        for i in 0..6u8 {
            let uri = [b'a' + i];
            assert!(u.push(core::str::from_utf8(&uri).unwrap()));
        }
        assert_eq!(u.get(2, &mut out), None); // Pushed out.
        assert_eq!(u.get(3, &mut out), Some(1));
        assert_eq!(&out[..1], b"c");
        assert_eq!(u.get(6, &mut out), Some(1));
        assert_eq!(&out[..1], b"f");
        assert_eq!(u.get(7, &mut out), None); // Not made yet.
        assert!(!u.push(&"x".repeat(MAX_UPDATED_URI + 1)));
        assert_eq!(u.get(7, &mut out), None);
    }

    #[test]
    fn subscription_sets_are_bounded() {
        let mut s = Subscriptions::default();
        for h in 1..=MAX_SUBSCRIPTIONS as u64 {
            assert!(s.has_room_for(h));
            s.add(h);
        }
        assert!(s.has_room_for(1));
        assert!(!s.has_room_for(99));
        s.remove(1);
        assert!(s.has_room_for(99));
        assert_eq!(uri_hash("a".chars()), uri_hash("a".chars()));
        assert_ne!(uri_hash("a".chars()), uri_hash("b".chars()));
    }
}
