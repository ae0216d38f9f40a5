//! Keyed message authentication shared by [`pagination`](crate::token::cursor) cursors and
//! [`seal`](crate::token::seal)ed request state: SipHash-2-4 under a [`SecretKey`], unambiguous
//! multi-field MACs, a constant-time comparison and unpadded base64url into caller buffers.
//!
//! The core has no random number generator and no clock: the key comes from the caller
//! (an entropy source, once per server instance or session).
//!
//! **Key rotation** (feature `rotation`): new values are always signed with the current key;
//! a `PreviousKey` is only accepted for verification, until its `not_after_ms` on the
//! clock the caller passes in ([`verify_any`] tries several keys). The session takes both from
//! [`Config`](crate::Config) (`key`, `previous_key`).
//!
//! [`mac_fields`] hashes this byte string, so that no two field lists (and no two
//! [`Domain`]s) share an input:
//!
//! | bytes            | content                                                      |
//! |------------------|--------------------------------------------------------------|
//! | 0                | [`Domain`] byte (`1` cursors, `2` request state)              |
//! | then, per field: |                                                              |
//! | 8                | field length in bytes, `u64` little-endian                   |
//! | length           | the field's bytes                                            |
//!
//! Every field carries its length, so `("ab", "c")` and `("a", "bc")` differ, and the domain
//! byte keeps a value minted for one purpose from verifying as another.
//!
//! ```
//! use mcp_rs_core::token::mac::{self, Domain, SecretKey};
//!
//! let key = SecretKey([7; 16]); // from the platform's entropy source
//! let tag = mac::mac_fields(&key, Domain::RequestState, &[b"tools/call", b"echo"]);
//! assert!(mac::verify(&key, Domain::RequestState, &[b"tools/call", b"echo"], &tag));
//! assert!(!mac::verify(&key, Domain::Cursor, &[b"tools/call", b"echo"], &tag));
//! assert!(!mac::verify(&key, Domain::RequestState, &[b"tools/cal", b"lecho"], &tag));
//!
//! let mut text = [0u8; mac::base64url_len(mac::TAG_LEN)];
//! let text = mac::base64url_encode(&tag, &mut text).unwrap();
//! let mut raw = [0u8; mac::TAG_LEN];
//! assert_eq!(mac::base64url_decode(text.as_bytes(), &mut raw), Ok(&tag[..]));
//! ```

use core::fmt;

/// 128-bit secret key for [`mac_fields`] and [`siphash24`].
///
/// Fill it from an entropy source; a fresh key per server instance or session makes values
/// minted by other instances fail verification.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SecretKey(pub [u8; 16]);

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Key material stays out of logs.
        f.write_str("SecretKey(..)")
    }
}

/// A key rotated out of signing, still accepted for verification until `not_after_ms`
/// (feature `rotation`; see [`Config::previous_key`](crate::Config::previous_key)).
///
/// The instant is on the clock the session is given (`Session::handle`'s `now_ms`: UNIX
/// milliseconds when instances share keys); a value is accepted at `not_after_ms` itself and
/// refused after it, so retiring the key needs nobody to touch the configuration.
#[cfg(feature = "rotation")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreviousKey {
    /// The key values were signed with before the current one.
    pub key: SecretKey,
    /// The last instant (milliseconds) at which values under `key` verify.
    pub not_after_ms: u64,
}

#[cfg(feature = "rotation")]
impl PreviousKey {
    /// Whether values under this key are still accepted at `now_ms`.
    pub const fn accepts_at(&self, now_ms: u64) -> bool {
        now_ms <= self.not_after_ms
    }
}

/// Length in bytes of a [`Tag`].
pub const TAG_LEN: usize = 8;

/// A MAC: the SipHash-2-4 value, little-endian.
pub type Tag = [u8; TAG_LEN];

/// What a MAC authenticates; its byte opens the hashed input (see the module table).
///
/// The byte values are part of the cursor and request-state wire formats and never change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Domain {
    /// [`pagination`](crate::token::cursor) cursors (byte `1`).
    Cursor,
    /// [`seal`](crate::token::seal)ed multi-round-trip request state (byte `2`).
    RequestState,
}

impl Domain {
    /// The domain-separation byte.
    pub const fn byte(self) -> u8 {
        match self {
            Domain::Cursor => 1,
            Domain::RequestState => 2,
        }
    }
}

/// MAC of `fields` under `key`, separated by `domain` (see the module table for the input).
pub fn mac_fields(key: &SecretKey, domain: Domain, fields: &[&[u8]]) -> Tag {
    let mut h = SipHasher24::new(key);
    h.write(&[domain.byte()]);
    for field in fields {
        let len = u64::try_from(field.len()).unwrap_or(u64::MAX);
        h.write(&len.to_le_bytes());
        h.write(field);
    }
    h.finish().to_le_bytes()
}

/// Whether `tag` is the MAC of `fields` under `key` and `domain`, compared in constant time.
pub fn verify(key: &SecretKey, domain: Domain, fields: &[&[u8]], tag: &[u8]) -> bool {
    ct_eq(&mac_fields(key, domain, fields), tag)
}

/// Whether `tag` is the MAC of `fields` under any of `keys` (the current key and, during a
/// rotation, the previous one).
///
/// Every key is tried, whatever the outcome of the others, and each comparison is
/// constant-time: the time taken depends on the number of keys, never on which one matched
/// or where a tag differs.
pub fn verify_any<'k>(
    keys: impl IntoIterator<Item = &'k SecretKey>,
    domain: Domain,
    fields: &[&[u8]],
    tag: &[u8],
) -> bool {
    // (First key apart: with one key, this compiles to exactly `verify`.)
    let mut keys = keys.into_iter();
    let Some(first) = keys.next() else {
        return false;
    };
    let mut ok = verify(first, domain, fields, tag);
    for key in keys {
        ok |= verify(key, domain, fields, tag);
    }
    ok
}

/// Byte-string equality without an early exit on the first difference.
///
/// The time taken depends on the lengths (which are not secret here), never on where the
/// contents differ.
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    core::hint::black_box(diff) == 0
}

// ---- SipHash-2-4 ------------------------------------------------------------------------

/// SipHash-2-4 (Aumasson & Bernstein) of `msg` under `key`.
pub fn siphash24(key: &SecretKey, msg: &[u8]) -> u64 {
    let mut h = SipHasher24::new(key);
    h.write(msg);
    h.finish()
}

/// Incremental SipHash-2-4: [`mac_fields`] hashes its framing without a buffer.
struct SipHasher24 {
    v: [u64; 4],
    /// Pending bytes of the current 8-byte block, little-endian.
    tail: u64,
    /// Number of pending bytes, `0..8`.
    ntail: u32,
    /// Message length so far (only its low byte is used).
    len: u64,
}

impl SipHasher24 {
    fn new(key: &SecretKey) -> Self {
        let k0 = le_u64(key.0.get(..8).unwrap_or_default());
        let k1 = le_u64(key.0.get(8..).unwrap_or_default());
        SipHasher24 {
            v: [
                k0 ^ 0x736f_6d65_7073_6575,
                k1 ^ 0x646f_7261_6e64_6f6d,
                k0 ^ 0x6c79_6765_6e65_7261,
                k1 ^ 0x7465_6462_7974_6573,
            ],
            tail: 0,
            ntail: 0,
            len: 0,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.tail |= u64::from(b) << (8 * (self.ntail & 7));
            self.ntail += 1;
            self.len = self.len.wrapping_add(1);
            if self.ntail == 8 {
                self.compress(self.tail);
                self.tail = 0;
                self.ntail = 0;
            }
        }
    }

    fn compress(&mut self, m: u64) {
        self.v[3] ^= m;
        sip_round(&mut self.v);
        sip_round(&mut self.v);
        self.v[0] ^= m;
    }

    fn finish(mut self) -> u64 {
        // Last block: remaining bytes, length (mod 256) in the top byte.
        self.compress(self.tail | ((self.len & 0xff) << 56));
        self.v[2] ^= 0xff;
        for _ in 0..4 {
            sip_round(&mut self.v);
        }
        self.v[0] ^ self.v[1] ^ self.v[2] ^ self.v[3]
    }
}

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

// ---- base64url, no padding --------------------------------------------------------------

/// Why [`base64url_encode`] or [`base64url_decode`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Base64Error {
    /// The output buffer is shorter than the `required` length.
    BufferTooSmall {
        /// Bytes the output needs.
        required: usize,
    },
    /// Not canonical unpadded base64url: an impossible length, a character outside the
    /// alphabet (`A`–`Z`, `a`–`z`, `0`–`9`, `-`, `_`; padding included) or nonzero unused
    /// bits in the last character.
    Malformed,
}

impl fmt::Display for Base64Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Base64Error::BufferTooSmall { required } => {
                write!(f, "output buffer too small ({required} bytes required)")
            }
            Base64Error::Malformed => f.write_str("malformed base64url"),
        }
    }
}

impl core::error::Error for Base64Error {}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Length of the unpadded base64url encoding of `raw_len` bytes (saturating at
/// `usize::MAX`, far beyond any buffer).
pub const fn base64url_len(raw_len: usize) -> usize {
    (raw_len / 3)
        .saturating_mul(4)
        .saturating_add((raw_len % 3 * 4).div_ceil(3))
}

/// Number of bytes that `text_len` characters of unpadded base64url decode to, or `None`
/// for a length no encoding has (`text_len % 4 == 1`).
pub const fn base64url_decoded_len(text_len: usize) -> Option<usize> {
    match text_len % 4 {
        1 => None,
        rem => Some(text_len / 4 * 3 + rem.saturating_sub(1)),
    }
}

fn b64_char(sextet: u32) -> u8 {
    ALPHABET
        .get((sextet & 63) as usize)
        .copied()
        .unwrap_or(b'A')
}

fn b64_value(c: u8) -> Option<u32> {
    crate::wire::sextet(c, b'-', b'_')
}

/// Encodes `raw` as unpadded base64url at the start of `out`; returns the encoded text.
pub fn base64url_encode<'o>(raw: &[u8], out: &'o mut [u8]) -> Result<&'o str, Base64Error> {
    let required = base64url_len(raw.len());
    let out = out
        .get_mut(..required)
        .ok_or(Base64Error::BufferTooSmall { required })?;
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
    // Only alphabet characters (ASCII) were written.
    Ok(core::str::from_utf8(out).unwrap_or_default())
}

/// Decodes canonical unpadded base64url `text` into the start of `out`; returns the bytes.
pub fn base64url_decode<'o>(text: &[u8], out: &'o mut [u8]) -> Result<&'o [u8], Base64Error> {
    let required = base64url_decoded_len(text.len()).ok_or(Base64Error::Malformed)?;
    let out = out
        .get_mut(..required)
        .ok_or(Base64Error::BufferTooSmall { required })?;
    let mut bytes = out.iter_mut();
    for group in text.chunks(4) {
        let mut n = 0u32;
        for (k, &c) in group.iter().enumerate() {
            n |= b64_value(c).ok_or(Base64Error::Malformed)? << (18 - 6 * k);
        }
        let produced = group.len().saturating_sub(1);
        // Bits beyond the produced bytes must be zero (canonical encoding).
        if n & (0x00ff_ffff >> (8 * produced)) != 0 {
            return Err(Base64Error::Malformed);
        }
        for k in 0..produced {
            if let Some(b) = bytes.next() {
                *b = (n >> (16 - 8 * k)) as u8;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn counting_key() -> SecretKey {
        let mut key = [0u8; 16];
        for (i, k) in key.iter_mut().enumerate() {
            *k = i as u8;
        }
        SecretKey(key)
    }

    #[test]
    fn siphash_reference_vector() {
        // SipHash paper, appendix A: key 00..0f, message 00..0e.
        let key = counting_key();
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
    fn siphash_reference_vectors_h() {
        // vectors.h of the reference implementation: key 00..0f, messages 00..(n-1), for
        // n = 1, 7, 8, 9 (one block boundary either side) and 63.
        let key = counting_key();
        let msg: [u8; 64] = core::array::from_fn(|i| i as u8);
        let cases: [(usize, [u8; 8]); 5] = [
            (1, [0xfd, 0x67, 0xdc, 0x93, 0xc5, 0x39, 0xf8, 0x74]),
            (7, [0x37, 0xd1, 0x01, 0x8b, 0xf5, 0x00, 0x02, 0xab]),
            (8, [0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93]),
            (9, [0xb0, 0xe4, 0xa9, 0x0b, 0xdf, 0x82, 0x00, 0x9e]),
            (63, [0x72, 0x45, 0x06, 0xeb, 0x4c, 0x32, 0x8a, 0x95]),
        ];
        for (n, expected) in cases {
            assert_eq!(
                siphash24(&key, &msg[..n]).to_le_bytes(),
                expected,
                "n = {n}"
            );
        }
    }

    #[test]
    fn incremental_matches_one_shot() {
        let key = counting_key();
        let msg: [u8; 40] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        for split in 0..=msg.len() {
            let mut h = SipHasher24::new(&key);
            h.write(&msg[..split]);
            h.write(&[]);
            h.write(&msg[split..]);
            assert_eq!(h.finish(), siphash24(&key, &msg), "split at {split}");
        }
    }

    #[test]
    fn fields_are_unambiguous() {
        let key = counting_key();
        let d = Domain::RequestState;
        let lists: [&[&[u8]]; 9] = [
            &[],
            &[b""],
            &[b"", b""],
            &[b"abc"],
            &[b"ab", b"c"],
            &[b"a", b"bc"],
            &[b"a", b"b", b"c"],
            &[b"abc", b""],
            &[b"", b"abc"],
        ];
        let mut seen = HashSet::new();
        for fields in lists {
            assert!(seen.insert(mac_fields(&key, d, fields)), "{fields:?}");
        }
        // The framing is what is hashed: domain byte, then length-prefixed fields.
        let mut framed = std::vec![2u8];
        for f in [&b"ab"[..], b"c"] {
            framed.extend_from_slice(&(f.len() as u64).to_le_bytes());
            framed.extend_from_slice(f);
        }
        assert_eq!(
            mac_fields(&key, d, &[b"ab", b"c"]),
            siphash24(&key, &framed).to_le_bytes()
        );
    }

    #[test]
    fn domains_and_keys_separate() {
        let key = counting_key();
        let fields: &[&[u8]] = &[b"tools/call", b"x"];
        let cursor = mac_fields(&key, Domain::Cursor, fields);
        let state = mac_fields(&key, Domain::RequestState, fields);
        assert_ne!(cursor, state);
        assert!(verify(&key, Domain::Cursor, fields, &cursor));
        assert!(!verify(&key, Domain::RequestState, fields, &cursor));
        assert!(!verify(
            &SecretKey([0; 16]),
            Domain::Cursor,
            fields,
            &cursor
        ));
        assert!(!verify(&key, Domain::Cursor, fields, &cursor[..7]));
        assert_ne!(Domain::Cursor.byte(), Domain::RequestState.byte());
    }

    #[test]
    fn verify_any_accepts_each_key() {
        let a = counting_key();
        let b = SecretKey([0xb0; 16]);
        let c = SecretKey([0xc0; 16]);
        let fields: &[&[u8]] = &[b"cursor"];
        let under_a = mac_fields(&a, Domain::Cursor, fields);
        assert!(verify_any([&b, &a], Domain::Cursor, fields, &under_a));
        assert!(verify_any([&a, &b], Domain::Cursor, fields, &under_a));
        assert!(verify_any([&a], Domain::Cursor, fields, &under_a));
        assert!(!verify_any([&b, &c], Domain::Cursor, fields, &under_a));
        assert!(!verify_any([], Domain::Cursor, fields, &under_a));
        assert!(!verify_any(
            [&b, &a],
            Domain::RequestState,
            fields,
            &under_a
        ));
    }

    #[cfg(feature = "rotation")]
    #[test]
    fn previous_key_window() {
        let p = PreviousKey {
            key: SecretKey([1; 16]),
            not_after_ms: 1_000,
        };
        assert!(p.accepts_at(0));
        assert!(p.accepts_at(1_000));
        assert!(!p.accepts_at(1_001));
        assert_eq!(
            std::format!("{p:?}"),
            "PreviousKey { key: SecretKey(..), not_after_ms: 1000 }"
        );
    }

    #[test]
    fn ct_eq_semantics() {
        assert!(ct_eq(b"", b""));
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"ab"));
        assert!(!ct_eq(b"\x00", b""));
    }

    #[test]
    fn base64url_known_values() {
        // RFC 4648 test vectors, unpadded, plus the url-safe characters.
        let cases: [(&[u8], &str); 8] = [
            (b"", ""),
            (b"f", "Zg"),
            (b"fo", "Zm8"),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg"),
            (b"fooba", "Zm9vYmE"),
            (b"foobar", "Zm9vYmFy"),
            (&[0xfb, 0xff, 0xbf], "-_-_"),
        ];
        for (raw, text) in cases {
            assert_eq!(base64url_len(raw.len()), text.len());
            assert_eq!(base64url_decoded_len(text.len()), Some(raw.len()));
            let mut out = [0u8; 10];
            assert_eq!(base64url_encode(raw, &mut out), Ok(text));
            let mut back = [0u8; 8];
            assert_eq!(base64url_decode(text.as_bytes(), &mut back), Ok(raw));
        }
        let mut two = [0u8; 2];
        assert_eq!(base64url_decode(b"Zm8", &mut two), Ok(&b"fo"[..]));
        // Non-canonical trailing bits.
        assert_eq!(
            base64url_decode(b"Zm9", &mut two),
            Err(Base64Error::Malformed)
        );
        assert_eq!(
            base64url_decode(b"Zh", &mut two),
            Err(Base64Error::Malformed)
        );
        // Impossible length, padding, standard alphabet.
        for bad in [&b"Zm9vY"[..], b"Zg==", b"Zm+v", b"Zm/v", b"Zm v"] {
            assert_eq!(
                base64url_decode(bad, &mut [0u8; 8]),
                Err(Base64Error::Malformed),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn base64url_buffers() {
        let mut small = [0u8; 3];
        assert_eq!(
            base64url_encode(b"foo", &mut small),
            Err(Base64Error::BufferTooSmall { required: 4 })
        );
        assert_eq!(
            base64url_decode(b"Zm9vYmFy", &mut small[..2]),
            Err(Base64Error::BufferTooSmall { required: 6 })
        );
        // A larger buffer is fine; only the prefix is written.
        let mut big = [b'#'; 8];
        assert_eq!(base64url_encode(b"f", &mut big), Ok("Zg"));
        assert_eq!(&big[2..], b"######");
        assert_eq!(base64url_len(usize::MAX), usize::MAX);
        assert_eq!(base64url_decoded_len(5), None);
    }

    #[test]
    fn base64url_roundtrip_all_lengths() {
        let raw: [u8; 40] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        for n in 0..=raw.len() {
            let mut text = [0u8; 64];
            let text = base64url_encode(&raw[..n], &mut text).unwrap();
            let mut back = [0u8; 40];
            assert_eq!(base64url_decode(text.as_bytes(), &mut back), Ok(&raw[..n]));
        }
    }

    #[test]
    fn display_and_debug() {
        assert_eq!(
            std::format!("{}", Base64Error::BufferTooSmall { required: 11 }),
            "output buffer too small (11 bytes required)"
        );
        assert_eq!(
            std::format!("{}", Base64Error::Malformed),
            "malformed base64url"
        );
        let e: &dyn core::error::Error = &Base64Error::Malformed;
        assert!(e.source().is_none());
        assert_eq!(std::format!("{:?}", SecretKey([1; 16])), "SecretKey(..)");
    }
}
