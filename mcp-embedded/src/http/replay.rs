//! Bounded stream resumption (legacy sessions): the SSE events of a session's POST
//! responses, kept in a caller-owned ring of bytes ([`Server::with_replay`]) so that a
//! client that lost a response stream reconnects with `GET` and `Last-Event-ID` and gets
//! the events it missed.
//!
//! Event ids are `<stream>-<seq>` as mcp-tokio writes them: `stream` numbers the session's
//! SSE responses from 1, `seq` its events (one counter per session, so a stream's ids
//! grow but are not consecutive). A stream opens with a priming event (`id: <stream>-<k>`,
//! `retry`, empty data), `k` the session's count of events before it. Each record in the
//! ring is `stream` (4 bytes LE), `seq` (4), `len` (4), then `len` bytes of the frame; a
//! record of length 0 marks the end of a stream (its response is complete). The oldest
//! records make room for new ones; `lost` is the `seq` of the newest record that did (or
//! of a frame too large for the ring): a resumption from an id older than it cannot be
//! complete.
//!
//! [`Server::with_replay`]: super::Server::with_replay

/// A record's header: stream, seq, len.
const HEADER: usize = 12;

/// One session's ring.
#[derive(Debug, Default)]
pub(super) struct Ring<'a> {
    pub(super) buf: &'a mut [u8],
    /// Bytes used, from the start of `buf` (records are moved down as old ones go).
    used: usize,
    /// The `seq` of the last event kept.
    seq: u32,
    /// Streams opened so far.
    streams: u32,
    /// The newest `seq` that is no longer kept (0: none lost).
    lost: u32,
}

/// What a `Last-Event-ID` names, seen from the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Resume {
    /// A stream of this session: replay its events after `seq`.
    From { stream: u32, seq: u32 },
    /// A stream of this session whose events after the id are no longer all kept.
    Lost,
    /// Not an id of this session's streams (or no ring): the GET is a plain one.
    Unknown,
}

/// A kept event, or the end of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kept {
    /// An event: its `seq` and the frame's range in the ring.
    Event { seq: u32, start: usize, len: usize },
    /// The stream's response is complete.
    End,
}

impl Ring<'_> {
    /// Whether the session keeps events at all.
    pub(super) fn on(&self) -> bool {
        self.buf.len() > HEADER
    }

    /// Forgets everything (the session ended).
    pub(super) fn clear(&mut self) {
        self.used = 0;
        self.seq = 0;
        self.streams = 0;
        self.lost = 0;
    }

    /// A new stream: its number and the id of its priming event's `seq` (`None` without a
    /// ring).
    pub(super) fn open(&mut self) -> Option<(u32, u32)> {
        if !self.on() {
            return None;
        }
        self.streams = self.streams.checked_add(1)?;
        Some((self.streams, self.seq))
    }

    /// Keeps `frame` as the next event of `stream` (empty: the end of the stream); its
    /// `seq`. A frame longer than the ring is not kept (and counts as lost).
    pub(super) fn push(&mut self, stream: u32, frame: &[u8]) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        let need = HEADER + frame.len();
        if need > self.buf.len() {
            self.lost = self.seq;
            return self.seq;
        }
        while self.buf.len() - self.used < need {
            self.drop_oldest();
        }
        let at = self.used;
        let mut header = [0u8; HEADER];
        header[..4].copy_from_slice(&stream.to_le_bytes());
        header[4..8].copy_from_slice(&self.seq.to_le_bytes());
        header[8..].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        if let Some(dst) = self.buf.get_mut(at..at + HEADER) {
            dst.copy_from_slice(&header);
        }
        if let Some(dst) = self.buf.get_mut(at + HEADER..at + need) {
            dst.copy_from_slice(frame);
        }
        self.used += need;
        self.seq
    }

    /// Removes the oldest record.
    fn drop_oldest(&mut self) {
        let Some((_, seq, len)) = self.record_at(0) else {
            self.used = 0;
            return;
        };
        let size = (HEADER + len).min(self.used);
        self.buf.copy_within(size..self.used, 0);
        self.used -= size;
        self.lost = seq;
    }

    /// The record at byte `at`: stream, seq, frame length.
    fn record_at(&self, at: usize) -> Option<(u32, u32, usize)> {
        let h = self.buf.get(at..at + HEADER)?;
        let word = |i: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(h.get(i..i + 4).unwrap_or(&[0; 4]));
            u32::from_le_bytes(b)
        };
        let len = word(8) as usize;
        let end = at.checked_add(HEADER)?.checked_add(len)?;
        (end <= self.used).then_some((word(0), word(4), len))
    }

    /// What `Last-Event-ID: id` names.
    pub(super) fn resume(&self, id: &str) -> Resume {
        let parsed = id
            .split_once('-')
            .and_then(|(s, n)| Some((s.parse::<u32>().ok()?, n.parse::<u32>().ok()?)));
        let Some((stream, seq)) = parsed else {
            return Resume::Unknown;
        };
        if !self.on() || stream == 0 || stream > self.streams || seq > self.seq {
            return Resume::Unknown;
        }
        if self.lost > seq {
            return Resume::Lost;
        }
        Resume::From { stream, seq }
    }

    /// The first record of `stream` after `seq` (`None`: none yet). A record lost since
    /// the caller's last one reads as `Err(())`.
    pub(super) fn next(&self, stream: u32, seq: u32) -> Result<Option<Kept>, ()> {
        if self.lost > seq {
            return Err(());
        }
        let mut at = 0;
        while let Some((s, n, len)) = self.record_at(at) {
            if s == stream && n > seq {
                return Ok(Some(if len == 0 {
                    Kept::End
                } else {
                    Kept::Event {
                        seq: n,
                        start: at + HEADER,
                        len,
                    }
                }));
            }
            at += HEADER + len;
        }
        Ok(None)
    }

    /// The bytes of a kept frame.
    pub(super) fn frame(&self, start: usize, len: usize) -> &[u8] {
        self.buf.get(start..start + len).unwrap_or_default()
    }
}

/// Writes `<stream>-<seq>` into `buf` (at most 21 bytes); its length.
pub(super) fn event_id(stream: u32, seq: u32, buf: &mut [u8; 24]) -> usize {
    let mut num = [0u8; 20];
    let mut n = 0;
    for part in [
        super::respond::digits(stream as usize, 10, &mut num),
        b"-",
        super::respond::digits(seq as usize, 10, &mut [0u8; 20]),
    ] {
        if let Some(dst) = buf.get_mut(n..n + part.len()) {
            dst.copy_from_slice(part);
            n += part.len();
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_make_room_and_losses_are_told() {
        let mut storage = [0u8; 64];
        let mut ring = Ring {
            buf: &mut storage,
            ..Ring::default()
        };
        assert_eq!(ring.open(), Some((1, 0)));
        assert_eq!(ring.push(1, b"aaaaaaaaaa"), 1); // 22 bytes
        assert_eq!(ring.push(1, b"bbbbbbbbbb"), 2); // 44
        assert_eq!(ring.resume("1-0"), Resume::From { stream: 1, seq: 0 });
        assert!(matches!(
            ring.next(1, 0),
            Ok(Some(Kept::Event { seq: 1, .. }))
        ));
        let Ok(Some(Kept::Event { start, len, .. })) = ring.next(1, 1) else {
            panic!("the second event");
        };
        assert_eq!(ring.frame(start, len), b"bbbbbbbbbb");
        assert_eq!(ring.next(1, 2), Ok(None));
        // A third event pushes the first out: resuming from before it cannot be complete.
        assert_eq!(ring.push(1, b"cccccccccc"), 3);
        assert_eq!(ring.resume("1-0"), Resume::Lost);
        assert_eq!(ring.resume("1-1"), Resume::From { stream: 1, seq: 1 });
        assert_eq!(ring.push(1, b""), 4);
        assert_eq!(ring.next(1, 3), Ok(Some(Kept::End)));
        // Ids of no stream of this session, or not ids at all.
        for id in ["2-0", "0-0", "1-99", "x", "1-", "-1", "1-2-3"] {
            assert_eq!(ring.resume(id), Resume::Unknown, "{id}");
        }
        // Too large for the ring: not kept, lost.
        assert_eq!(ring.push(1, &[b'd'; 60]), 5);
        assert_eq!(ring.resume("1-4"), Resume::Lost);
        let mut buf = [0u8; 24];
        let n = event_id(12, 345, &mut buf);
        assert_eq!(&buf[..n], b"12-345");
    }

    #[test]
    fn without_storage_nothing_is_kept() {
        let mut ring = Ring::default();
        assert_eq!(ring.open(), None);
        assert_eq!(ring.resume("1-0"), Resume::Unknown);
    }
}
