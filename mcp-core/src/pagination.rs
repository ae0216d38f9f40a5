//! Opaque, stateless `tools/list` cursors: epoch + offset + keyed check.
//!
//! A cursor carries the list position it continues from (`offset`) and the `epoch` of the
//! tool list it was minted for, authenticated with a keyed MAC so that clients can neither
//! forge positions nor replay cursors minted under another key (another server instance or
//! session). Nothing is stored server-side.
//!
//! Wire format, before encoding (17 bytes):
//!
//! | bytes  | content                                                         |
//! |--------|-----------------------------------------------------------------|
//! | 0      | format version, currently `1`                                   |
//! | 1..5   | `epoch`, `u32` little-endian                                    |
//! | 5..9   | `offset`, `u32` little-endian                                   |
//! | 9..17  | SipHash-2-4 of bytes `0..9` keyed with the [`CursorKey`], LE    |
//!
//! The 17 bytes are encoded as unpadded base64url ([`CURSOR_LEN`] = 23 characters), which is
//! safe to embed in JSON strings without escaping.
//!
//! Whether a decoded epoch is still current is the caller's decision, not this module's.
//!
//! ```
//! use mcp_core::pagination::{decode, encode, CursorError, CursorKey, Position};
//!
//! let key = CursorKey([7; 16]); // from the platform's entropy source
//! let cursor = encode(&key, 3, 50);
//! assert_eq!(cursor.as_str().len(), mcp_core::pagination::CURSOR_LEN);
//! assert_eq!(
//!     decode(&key, cursor.as_str().as_bytes()),
//!     Ok(Position { epoch: 3, offset: 50 })
//! );
//! assert_eq!(
//!     decode(&CursorKey([8; 16]), cursor.as_str().as_bytes()),
//!     Err(CursorError::BadCheck)
//! );
//! ```

use core::fmt;

/// Secret key for cursor MACs.
///
/// The core has no random number generator: the session receives this from its caller, who
/// should fill it from an entropy source (a fresh key per server instance or session makes
/// cursors from other instances [`CursorError::BadCheck`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CursorKey(pub [u8; 16]);

impl fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Key material stays out of logs.
        f.write_str("CursorKey(..)")
    }
}

/// Format version byte.
const VERSION: u8 = 1;
/// Length of the raw (binary) cursor: version + epoch + offset + MAC.
const RAW_LEN: usize = 1 + 4 + 4 + 8;
/// Bytes covered by the MAC.
const SIGNED_LEN: usize = 1 + 4 + 4;

/// Length in bytes (ASCII characters) of an encoded cursor string.
pub const CURSOR_LEN: usize = RAW_LEN / 3 * 4 + (RAW_LEN % 3 * 4).div_ceil(3);

/// An encoded cursor: [`CURSOR_LEN`] base64url characters, no padding.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cursor {
    buf: [u8; CURSOR_LEN],
}

impl Cursor {
    /// The cursor as a string, ready to be sent as `nextCursor`.
    pub fn as_str(&self) -> &str {
        // The buffer only ever holds base64url alphabet characters (ASCII).
        core::str::from_utf8(&self.buf).unwrap_or("")
    }
}

impl AsRef<str> for Cursor {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Cursor").field(&self.as_str()).finish()
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The list position a cursor continues from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// Epoch of the tool list the cursor was minted for; the caller rejects stale epochs.
    pub epoch: u32,
    /// Index of the first item of the next page.
    pub offset: u32,
}

/// Why a cursor was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CursorError {
    /// Not a cursor of this format: wrong length, characters outside the base64url alphabet,
    /// non-canonical encoding or unknown version.
    Malformed,
    /// Well-formed, but the check value does not verify: tampered with, or minted under a
    /// different key.
    BadCheck,
}

impl fmt::Display for CursorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CursorError::Malformed => "malformed cursor",
            CursorError::BadCheck => "cursor check failed",
        })
    }
}

impl core::error::Error for CursorError {}

/// Mints the cursor for `(epoch, offset)` under `key`.
pub fn encode(key: &CursorKey, epoch: u32, offset: u32) -> Cursor {
    let mut raw = [0u8; RAW_LEN];
    let mut signed = [0u8; SIGNED_LEN];
    let e = epoch.to_le_bytes();
    let o = offset.to_le_bytes();
    let fields = core::iter::once(VERSION).chain(e).chain(o);
    for (dst, src) in signed.iter_mut().zip(fields) {
        *dst = src;
    }
    let mac = siphash24(&key.0, &signed).to_le_bytes();
    for (dst, src) in raw.iter_mut().zip(signed.into_iter().chain(mac)) {
        *dst = src;
    }
    let mut buf = [0u8; CURSOR_LEN];
    base64url_encode(&raw, &mut buf);
    Cursor { buf }
}

/// Checks and decodes a cursor received from a client.
///
/// Returns [`CursorError::Malformed`] for anything that is not an encoded cursor of this
/// format and [`CursorError::BadCheck`] when the MAC does not verify under `key`. Does not
/// judge whether the epoch is current.
pub fn decode(key: &CursorKey, cursor: &[u8]) -> Result<Position, CursorError> {
    let mut raw = [0u8; RAW_LEN];
    base64url_decode(cursor, &mut raw)?;
    let [version, e0, e1, e2, e3, o0, o1, o2, o3, m0, m1, m2, m3, m4, m5, m6, m7] = raw;
    if version != VERSION {
        return Err(CursorError::Malformed);
    }
    let signed = [version, e0, e1, e2, e3, o0, o1, o2, o3];
    let expected = siphash24(&key.0, &signed).to_le_bytes();
    let got = [m0, m1, m2, m3, m4, m5, m6, m7];
    // Compare without an early exit.
    let diff = expected
        .iter()
        .zip(got)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    if diff != 0 {
        return Err(CursorError::BadCheck);
    }
    Ok(Position {
        epoch: u32::from_le_bytes([e0, e1, e2, e3]),
        offset: u32::from_le_bytes([o0, o1, o2, o3]),
    })
}

// ---- SipHash-2-4 ------------------------------------------------------------------------

/// Little-endian `u64` from up to 8 bytes (missing bytes are zero).
fn le_u64(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .enumerate()
        .fold(0, |acc, (i, &b)| acc | (u64::from(b) << (8 * i)))
}

fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13);
    v[1] ^= v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16);
    v[3] ^= v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21);
    v[3] ^= v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17);
    v[1] ^= v[2];
    v[2] = v[2].rotate_left(32);
}

/// SipHash-2-4 (Aumasson & Bernstein) of `msg` under the 128-bit `key`.
fn siphash24(key: &[u8; 16], msg: &[u8]) -> u64 {
    let k0 = le_u64(key.get(..8).unwrap_or_default());
    let k1 = le_u64(key.get(8..).unwrap_or_default());
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let blocks = msg.chunks_exact(8);
    let tail = blocks.remainder();
    for block in blocks {
        let m = le_u64(block);
        v[3] ^= m;
        sip_round(&mut v);
        sip_round(&mut v);
        v[0] ^= m;
    }
    // Last block: remaining bytes, length (mod 256) in the top byte.
    let m = le_u64(tail) | ((msg.len() as u64 & 0xff) << 56);
    v[3] ^= m;
    sip_round(&mut v);
    sip_round(&mut v);
    v[0] ^= m;
    v[2] ^= 0xff;
    for _ in 0..4 {
        sip_round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

// ---- base64url, no padding --------------------------------------------------------------

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64_char(sextet: u32) -> u8 {
    ALPHABET
        .get((sextet & 63) as usize)
        .copied()
        .unwrap_or(b'A')
}

fn b64_value(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Encodes `raw` into `out`, which must be exactly its unpadded length (else a prefix).
fn base64url_encode(raw: &[u8], out: &mut [u8]) {
    let mut chars = out.iter_mut();
    for group in raw.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (16 - 8 * i)));
        // 1 byte → 2 chars, 2 → 3, 3 → 4.
        for k in 0..=group.len() {
            if let Some(c) = chars.next() {
                *c = b64_char(n >> (18 - 6 * k));
            }
        }
    }
}

/// Decodes exactly `out.len()` bytes from canonical unpadded base64url `text`.
fn base64url_decode(text: &[u8], out: &mut [u8]) -> Result<(), CursorError> {
    let full = out.len() / 3 * 4;
    let expected_len = full + (out.len() % 3 * 4).div_ceil(3);
    if text.len() != expected_len {
        return Err(CursorError::Malformed);
    }
    let mut bytes = out.iter_mut();
    for group in text.chunks(4) {
        let mut n = 0u32;
        for (k, &c) in group.iter().enumerate() {
            n |= b64_value(c).ok_or(CursorError::Malformed)? << (18 - 6 * k);
        }
        let produced = group.len().saturating_sub(1);
        // Bits beyond the produced bytes must be zero (canonical encoding).
        let used_bits = 8 * produced;
        if n & (0x00ff_ffff >> used_bits) != 0 {
            return Err(CursorError::Malformed);
        }
        for k in 0..produced {
            if let Some(b) = bytes.next() {
                *b = (n >> (16 - 8 * k)) as u8;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::string::String;

    const KEY: CursorKey = CursorKey([
        0x4d, 0x43, 0x50, 0x21, 0x10, 0x20, 0x30, 0x40, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb,
        0xcc,
    ]);

    #[test]
    fn siphash_reference_vector() {
        // SipHash paper, appendix A: key 00..0f, message 00..0e.
        let mut key = [0u8; 16];
        for (i, k) in key.iter_mut().enumerate() {
            *k = i as u8;
        }
        let mut msg = [0u8; 15];
        for (i, m) in msg.iter_mut().enumerate() {
            *m = i as u8;
        }
        assert_eq!(siphash24(&key, &msg), 0xa129_ca61_49be_45e5);
        assert_eq!(
            siphash24(&key, &msg).to_le_bytes(),
            [0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1]
        );
        // First entry of the reference implementation's vectors.h (empty message).
        assert_eq!(siphash24(&key, &[]), 0x726f_db47_dd0e_0e31);
    }

    #[test]
    fn cursor_len_is_unpadded_base64_of_raw() {
        assert_eq!(CURSOR_LEN, 23);
        assert_eq!(encode(&KEY, 0, 0).as_str().len(), CURSOR_LEN);
    }

    #[test]
    fn base64url_known_values() {
        // RFC 4648 test vectors, unpadded, plus the url-safe characters.
        let cases: [(&[u8], &str); 7] = [
            (b"f", "Zg"),
            (b"fo", "Zm8"),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg"),
            (b"fooba", "Zm9vYmE"),
            (b"foobar", "Zm9vYmFy"),
            (&[0xfb, 0xff, 0xbf], "-_-_"),
        ];
        for (raw, text) in cases {
            let mut out = [0u8; 8];
            let out = &mut out[..text.len()];
            base64url_encode(raw, out);
            assert_eq!(out, text.as_bytes());
            let mut back = [0u8; 6];
            let back = &mut back[..raw.len()];
            assert_eq!(base64url_decode(text.as_bytes(), back), Ok(()));
            assert_eq!(back, raw);
        }
        // Non-canonical trailing bits.
        let mut two = [0u8; 2];
        assert_eq!(base64url_decode(b"Zm8", &mut two), Ok(()));
        assert_eq!(
            base64url_decode(b"Zm9", &mut two),
            Err(CursorError::Malformed)
        );
        let mut one = [0u8; 1];
        assert_eq!(
            base64url_decode(b"Zh", &mut one),
            Err(CursorError::Malformed)
        );
    }

    #[test]
    fn roundtrip() {
        let cases = [
            (0, 0),
            (0, 1),
            (1, 0),
            (7, 50),
            (u32::MAX, u32::MAX),
            (0x0102_0304, 0xa0b0_c0d0),
        ];
        for (epoch, offset) in cases {
            let c = encode(&KEY, epoch, offset);
            assert!(c
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
            assert_eq!(
                decode(&KEY, c.as_str().as_bytes()),
                Ok(Position { epoch, offset })
            );
        }
    }

    #[test]
    fn every_single_byte_mutation_is_rejected() {
        let c = encode(&KEY, 42, 1000);
        let valid = c.as_str().as_bytes();
        let mut checked = 0;
        for i in 0..valid.len() {
            for v in 0..=255u8 {
                if v == valid[i] {
                    continue;
                }
                let mut m = [0u8; CURSOR_LEN];
                m.copy_from_slice(valid);
                m[i] = v;
                assert!(
                    decode(&KEY, &m).is_err(),
                    "mutation at {i} to {v:#x} accepted"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, CURSOR_LEN * 255);
    }

    #[test]
    fn tampered_payload_is_bad_check() {
        // Re-encode the raw bytes with a changed offset but the old MAC.
        let c = encode(&KEY, 1, 10);
        let mut raw = [0u8; RAW_LEN];
        base64url_decode(c.as_str().as_bytes(), &mut raw).unwrap();
        raw[5] ^= 1;
        let mut text = [0u8; CURSOR_LEN];
        base64url_encode(&raw, &mut text);
        assert_eq!(decode(&KEY, &text), Err(CursorError::BadCheck));
        raw[5] ^= 1;
        raw[0] = 2;
        base64url_encode(&raw, &mut text);
        assert_eq!(decode(&KEY, &text), Err(CursorError::Malformed));
    }

    #[test]
    fn foreign_key_rejected() {
        let c = encode(&KEY, 5, 20);
        let mut other = KEY;
        other.0[15] ^= 0x80;
        assert_eq!(
            decode(&other, c.as_str().as_bytes()),
            Err(CursorError::BadCheck)
        );
        assert_eq!(
            decode(&CursorKey([0; 16]), c.as_str().as_bytes()),
            Err(CursorError::BadCheck)
        );
    }

    #[test]
    fn empty_and_garbage_rejected() {
        let c = encode(&KEY, 5, 20);
        let s = c.as_str();
        let longer = [s, "A"].concat();
        let padded = [s, "="].concat();
        let cases: [&[u8]; 9] = [
            b"",
            b"x",
            b"null",
            b"not a cursor at all!!!!",
            b"AAAAAAAAAAAAAAAAAAAAAAA",
            b"AAAAAAAAAAAAAAAAAAAAAA=",
            &s.as_bytes()[..CURSOR_LEN - 1],
            longer.as_bytes(),
            padded.as_bytes(),
        ];
        for garbage in cases {
            assert!(decode(&KEY, garbage).is_err(), "{garbage:?} accepted");
        }
        assert_eq!(decode(&KEY, b""), Err(CursorError::Malformed));
        assert_eq!(
            decode(&KEY, b"not a cursor at all!!!!"),
            Err(CursorError::Malformed)
        );
        // Standard-alphabet characters are not base64url.
        let std_alpha = s.replace('-', "+").replace('_', "/");
        if std_alpha != s {
            assert_eq!(
                decode(&KEY, std_alpha.as_bytes()),
                Err(CursorError::Malformed)
            );
        }
    }

    #[test]
    fn distinct_positions_give_distinct_cursors() {
        let mut seen = HashSet::new();
        for epoch in 0..20u32 {
            for offset in (0..2000u32).step_by(7) {
                let c = encode(&KEY, epoch, offset);
                assert!(seen.insert(String::from(c.as_str())), "duplicate cursor");
            }
        }
        assert_ne!(encode(&KEY, 1, 0), encode(&KEY, 0, 1));
    }

    #[test]
    fn error_display() {
        assert_eq!(
            std::format!("{}", CursorError::Malformed),
            "malformed cursor"
        );
        assert_eq!(
            std::format!("{}", CursorError::BadCheck),
            "cursor check failed"
        );
        let e: &dyn core::error::Error = &CursorError::BadCheck;
        assert!(e.source().is_none());
        assert_eq!(std::format!("{:?}", KEY), "CursorKey(..)");
    }
}
