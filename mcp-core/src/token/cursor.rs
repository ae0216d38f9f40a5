//! Opaque, stateless list cursors: list kind + epoch + offset + keyed check.
//!
//! A cursor carries the list it pages through ([`ListKind`]: MCP paginates `tools/list`,
//! `prompts/list`, `resources/list` and `resources/templates/list`), the position it continues
//! from (`offset`) and the `epoch` of the list it was minted for, authenticated with a keyed
//! MAC ([`mac`], domain [`Domain::Cursor`]) so that clients can neither forge
//! positions, nor replay cursors minted under another key (another server instance or
//! session), nor hand one list's cursor to another list ([`CursorError::WrongList`]). Nothing
//! is stored server-side.
//!
//! Wire format, before encoding (18 bytes):
//!
//! | bytes  | content                                                                    |
//! |--------|----------------------------------------------------------------------------|
//! | 0      | format version, currently `2` (`1` had no list kind and is rejected)        |
//! | 1      | [`ListKind`]: `1` tools, `2` prompts, `3` resources, `4` resource templates |
//! | 2..6   | `epoch`, `u32` little-endian                                               |
//! | 6..10  | `offset`, `u32` little-endian                                              |
//! | 10..18 | [`mac_fields`] of the one field bytes `0..10`, domain [`Domain::Cursor`]   |
//!
//! The 18 bytes are encoded as unpadded base64url ([`CURSOR_LEN`] = 24 characters, no unused
//! bits), which is safe to embed in JSON strings without escaping.
//!
//! Whether a decoded epoch is still current is the caller's decision, not this module's.
//! During a key rotation, [`decode_any`] accepts cursors minted under the previous key too.
//!
//! ```
//! use mcp_rs_core::token::cursor::{decode, encode, CursorError, CursorKey, ListKind, Position};
//!
//! let key = CursorKey([7; 16]); // from the platform's entropy source
//! let cursor = encode(&key, ListKind::Tools, 3, 50);
//! assert_eq!(cursor.as_str().len(), mcp_rs_core::token::cursor::CURSOR_LEN);
//! assert_eq!(
//!     decode(&key, ListKind::Tools, cursor.as_str().as_bytes()),
//!     Ok(Position { epoch: 3, offset: 50 })
//! );
//! assert_eq!(
//!     decode(&key, ListKind::Prompts, cursor.as_str().as_bytes()),
//!     Err(CursorError::WrongList)
//! );
//! assert_eq!(
//!     decode(&CursorKey([8; 16]), ListKind::Tools, cursor.as_str().as_bytes()),
//!     Err(CursorError::BadCheck)
//! );
//! ```

use core::fmt;

use crate::token::mac::{self, mac_fields, Domain, TAG_LEN};

/// Secret key for cursor MACs: the shared [`SecretKey`](crate::token::mac::SecretKey) under its
/// historical name (a re-export, so `CursorKey([..])` still constructs one).
///
/// The core has no random number generator: the session receives this from its caller, who
/// should fill it from an entropy source (a fresh key per server instance or session makes
/// cursors from other instances [`CursorError::BadCheck`]).
pub use crate::token::mac::SecretKey as CursorKey;

/// Format version byte.
const VERSION: u8 = 2;
/// Bytes covered by the MAC: version + kind + epoch + offset.
const SIGNED_LEN: usize = 1 + 1 + 4 + 4;
/// Length of the raw (binary) cursor: the signed bytes + MAC.
const RAW_LEN: usize = SIGNED_LEN + TAG_LEN;

/// Length in bytes (ASCII characters) of an encoded cursor string.
pub const CURSOR_LEN: usize = mac::base64url_len(RAW_LEN);

/// Which paginated MCP list a cursor belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    ResourceTemplates,
}

impl ListKind {
    /// The JSON-RPC method that lists this kind.
    pub const fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Prompts => "prompts/list",
            ListKind::Resources => "resources/list",
            ListKind::ResourceTemplates => "resources/templates/list",
        }
    }

    /// Wire byte (see the module table).
    const fn byte(self) -> u8 {
        match self {
            ListKind::Tools => 1,
            ListKind::Prompts => 2,
            ListKind::Resources => 3,
            ListKind::ResourceTemplates => 4,
        }
    }

    const fn from_byte(b: u8) -> Option<Self> {
        match b {
            1 => Some(ListKind::Tools),
            2 => Some(ListKind::Prompts),
            3 => Some(ListKind::Resources),
            4 => Some(ListKind::ResourceTemplates),
            _ => None,
        }
    }
}

/// An encoded cursor: [`CURSOR_LEN`] base64url characters, no padding.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cursor {
    buf: [u8; CURSOR_LEN],
}

impl Cursor {
    /// A cursor before [`encode_into`] writes it.
    pub(crate) const BLANK: Cursor = Cursor {
        buf: [0; CURSOR_LEN],
    };

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
    /// Epoch of the list the cursor was minted for; the caller rejects stale epochs.
    pub epoch: u32,
    /// Index of the first item of the next page.
    pub offset: u32,
}

/// Why a cursor was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CursorError {
    /// Not a cursor of this format: wrong length, characters outside the base64url alphabet,
    /// non-canonical encoding, unknown version or unknown list kind.
    Malformed,
    /// Well-formed, but the check value does not verify: tampered with, or minted under a
    /// different key.
    BadCheck,
    /// Well-formed and authentic, but minted for another list (a `tools/list` cursor sent to
    /// `prompts/list`, say).
    WrongList,
}

impl fmt::Display for CursorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CursorError::Malformed => "malformed cursor",
            CursorError::BadCheck => "cursor check failed",
            CursorError::WrongList => "cursor belongs to another list",
        })
    }
}

impl core::error::Error for CursorError {}

/// Mints the cursor of the `kind` list for `(epoch, offset)` under `key`.
pub fn encode(key: &CursorKey, kind: ListKind, epoch: u32, offset: u32) -> Cursor {
    let mut cursor = Cursor::BLANK;
    encode_into(key, kind, epoch, offset, &mut cursor);
    cursor
}

/// [`encode`] into `cursor`, which nothing moves afterwards (a returned `Cursor` is built
/// on the stack and copied, a call to `memcpy` on RISC-V, #21).
#[inline(never)]
pub(crate) fn encode_into(
    key: &CursorKey,
    kind: ListKind,
    epoch: u32,
    offset: u32,
    cursor: &mut Cursor,
) {
    let mut raw = [0u8; RAW_LEN];
    let e = epoch.to_le_bytes();
    let o = offset.to_le_bytes();
    let signed = core::iter::once(VERSION)
        .chain(core::iter::once(kind.byte()))
        .chain(e)
        .chain(o);
    for (dst, src) in raw.iter_mut().zip(signed) {
        *dst = src;
    }
    let tag = mac_fields(
        key,
        Domain::Cursor,
        &[raw.get(..SIGNED_LEN).unwrap_or_default()],
    );
    for (dst, src) in raw.iter_mut().skip(SIGNED_LEN).zip(tag) {
        *dst = src;
    }
    // `buf` has exactly the encoded length: this cannot fail.
    let _ = mac::base64url_encode(&raw, &mut cursor.buf);
}

/// Checks and decodes a cursor received from a client for the `kind` list.
///
/// Returns [`CursorError::Malformed`] for anything that is not an encoded cursor of this
/// format, [`CursorError::BadCheck`] when the MAC does not verify under `key` and
/// [`CursorError::WrongList`] for an authentic cursor of another list. Does not judge
/// whether the epoch is current.
pub fn decode(key: &CursorKey, kind: ListKind, cursor: &[u8]) -> Result<Position, CursorError> {
    decode_any([key], kind, cursor)
}

/// [`decode`] for a server that accepts several keys: during a key rotation, the current
/// key and the previous one ([`Config::verification_keys`](crate::Config::verification_keys)).
/// Cursors are always minted ([`encode`]) under the current key.
///
/// The MAC is checked under every key ([`mac::verify_any`]): the time taken does not tell
/// which key matched.
pub fn decode_any<'k>(
    keys: impl IntoIterator<Item = &'k CursorKey>,
    kind: ListKind,
    cursor: &[u8],
) -> Result<Position, CursorError> {
    if cursor.len() != CURSOR_LEN {
        return Err(CursorError::Malformed);
    }
    let mut raw = [0u8; RAW_LEN];
    mac::base64url_decode(cursor, &mut raw).map_err(|_| CursorError::Malformed)?;
    let [version, k, e0, e1, e2, e3, o0, o1, o2, o3, m0, m1, m2, m3, m4, m5, m6, m7] = raw;
    if version != VERSION {
        return Err(CursorError::Malformed);
    }
    let minted_for = ListKind::from_byte(k).ok_or(CursorError::Malformed)?;
    let signed = [version, k, e0, e1, e2, e3, o0, o1, o2, o3];
    let tag = [m0, m1, m2, m3, m4, m5, m6, m7];
    if !mac::verify_any(keys, Domain::Cursor, &[&signed], &tag) {
        return Err(CursorError::BadCheck);
    }
    if minted_for != kind {
        return Err(CursorError::WrongList);
    }
    Ok(Position {
        epoch: u32::from_le_bytes([e0, e1, e2, e3]),
        offset: u32::from_le_bytes([o0, o1, o2, o3]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::mac::{base64url_decode, base64url_encode, SecretKey};
    use std::collections::HashSet;
    use std::string::String;

    const KEY: CursorKey = CursorKey([
        0x4d, 0x43, 0x50, 0x21, 0x10, 0x20, 0x30, 0x40, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb,
        0xcc,
    ]);

    const KINDS: [ListKind; 4] = [
        ListKind::Tools,
        ListKind::Prompts,
        ListKind::Resources,
        ListKind::ResourceTemplates,
    ];

    fn raw_of(c: &Cursor) -> [u8; RAW_LEN] {
        let mut raw = [0u8; RAW_LEN];
        base64url_decode(c.as_str().as_bytes(), &mut raw).unwrap();
        raw
    }

    fn text_of(raw: &[u8; RAW_LEN]) -> [u8; CURSOR_LEN] {
        let mut text = [0u8; CURSOR_LEN];
        base64url_encode(raw, &mut text).unwrap();
        text
    }

    #[test]
    fn cursor_len_is_unpadded_base64_of_raw() {
        assert_eq!(RAW_LEN, 18);
        assert_eq!(CURSOR_LEN, 24);
        assert_eq!(
            encode(&KEY, ListKind::Tools, 0, 0).as_str().len(),
            CURSOR_LEN
        );
    }

    #[test]
    fn layout_matches_the_table() {
        let c = encode(&KEY, ListKind::Resources, 0x0102_0304, 0xa0b0_c0d0);
        let raw = raw_of(&c);
        assert_eq!(
            raw[..SIGNED_LEN],
            [2, 3, 0x04, 0x03, 0x02, 0x01, 0xd0, 0xc0, 0xb0, 0xa0]
        );
        let tag = mac_fields(&KEY, Domain::Cursor, &[&raw[..SIGNED_LEN]]);
        assert_eq!(raw[SIGNED_LEN..], tag);
        // Not the request-state domain.
        assert_ne!(
            raw[SIGNED_LEN..],
            mac_fields(&KEY, Domain::RequestState, &[&raw[..SIGNED_LEN]])
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
        for kind in KINDS {
            for (epoch, offset) in cases {
                let c = encode(&KEY, kind, epoch, offset);
                assert!(c
                    .as_str()
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
                assert_eq!(
                    decode(&KEY, kind, c.as_str().as_bytes()),
                    Ok(Position { epoch, offset })
                );
            }
        }
    }

    #[test]
    fn other_lists_reject_with_wrong_list() {
        for minted in KINDS {
            let c = encode(&KEY, minted, 4, 100);
            for asked in KINDS {
                let got = decode(&KEY, asked, c.as_str().as_bytes());
                if asked == minted {
                    assert_eq!(
                        got,
                        Ok(Position {
                            epoch: 4,
                            offset: 100
                        })
                    );
                } else {
                    assert_eq!(got, Err(CursorError::WrongList), "{minted:?} → {asked:?}");
                }
            }
        }
        // Relabelling the kind byte without the key breaks the MAC: no WrongList, no Ok.
        let c = encode(&KEY, ListKind::Tools, 4, 100);
        let mut raw = raw_of(&c);
        raw[1] = ListKind::Prompts.byte();
        let text = text_of(&raw);
        assert_eq!(
            decode(&KEY, ListKind::Prompts, &text),
            Err(CursorError::BadCheck)
        );
        assert_eq!(
            decode(&KEY, ListKind::Tools, &text),
            Err(CursorError::BadCheck)
        );
    }

    #[test]
    fn method_names() {
        let methods = KINDS.map(ListKind::method);
        assert_eq!(
            methods,
            [
                "tools/list",
                "prompts/list",
                "resources/list",
                "resources/templates/list"
            ]
        );
        for kind in KINDS {
            assert_eq!(ListKind::from_byte(kind.byte()), Some(kind));
        }
        assert_eq!(ListKind::from_byte(0), None);
        assert_eq!(ListKind::from_byte(5), None);
    }

    #[test]
    fn every_single_byte_mutation_is_rejected() {
        for kind in KINDS {
            let c = encode(&KEY, kind, 42, 1000);
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
                    for asked in KINDS {
                        assert!(
                            decode(&KEY, asked, &m).is_err(),
                            "mutation at {i} to {v:#x} accepted"
                        );
                    }
                    checked += 1;
                }
            }
            assert_eq!(checked, CURSOR_LEN * 255);
        }
    }

    #[test]
    fn tampered_payload_is_bad_check() {
        // Re-encode the raw bytes with a changed offset but the old MAC.
        let c = encode(&KEY, ListKind::Tools, 1, 10);
        let mut raw = raw_of(&c);
        raw[6] ^= 1;
        assert_eq!(
            decode(&KEY, ListKind::Tools, &text_of(&raw)),
            Err(CursorError::BadCheck)
        );
        raw[6] ^= 1;
        // Versions other than 2 (including the kind-less 1) and unknown kinds are malformed.
        for version in [0, 1, 3, 255] {
            let mut r = raw;
            r[0] = version;
            assert_eq!(
                decode(&KEY, ListKind::Tools, &text_of(&r)),
                Err(CursorError::Malformed)
            );
        }
        for k in [0, 5, 255] {
            let mut r = raw;
            r[1] = k;
            assert_eq!(
                decode(&KEY, ListKind::Tools, &text_of(&r)),
                Err(CursorError::Malformed)
            );
        }
        assert_eq!(
            decode(&KEY, ListKind::Tools, &text_of(&raw)),
            Ok(Position {
                epoch: 1,
                offset: 10
            })
        );
    }

    #[test]
    fn foreign_key_rejected() {
        let c = encode(&KEY, ListKind::Tools, 5, 20);
        let mut other = KEY;
        other.0[15] ^= 0x80;
        assert_eq!(
            decode(&other, ListKind::Tools, c.as_str().as_bytes()),
            Err(CursorError::BadCheck)
        );
        // A foreign cursor of another list is BadCheck too: the kind is not trusted unsigned.
        assert_eq!(
            decode(
                &SecretKey([0; 16]),
                ListKind::Prompts,
                c.as_str().as_bytes()
            ),
            Err(CursorError::BadCheck)
        );
    }

    #[test]
    fn rotation_accepts_the_previous_key_only_while_listed() {
        let a = KEY;
        let b = SecretKey([0xb5; 16]);
        let minted_a = encode(&a, ListKind::Tools, 1, 50);
        let text = minted_a.as_str().as_bytes();
        let at = Position {
            epoch: 1,
            offset: 50,
        };
        // B current, A previous: A's cursor still continues the walk.
        assert_eq!(decode_any([&b, &a], ListKind::Tools, text), Ok(at));
        // A retired: only B is left.
        assert_eq!(
            decode_any([&b], ListKind::Tools, text),
            Err(CursorError::BadCheck)
        );
        assert_eq!(
            decode_any([], ListKind::Tools, text),
            Err(CursorError::BadCheck)
        );
        // The kind check still applies to a cursor under the previous key, and garbage stays
        // garbage whatever the keys.
        assert_eq!(
            decode_any([&b, &a], ListKind::Prompts, text),
            Err(CursorError::WrongList)
        );
        assert_eq!(
            decode_any([&b, &a], ListKind::Tools, b"short"),
            Err(CursorError::Malformed)
        );
        // Under B, B's own cursors verify with or without A.
        let minted_b = encode(&b, ListKind::Tools, 1, 50);
        assert_eq!(
            decode_any([&b], ListKind::Tools, minted_b.as_str().as_bytes()),
            Ok(at)
        );
        assert_eq!(
            decode(&a, ListKind::Tools, minted_b.as_str().as_bytes()),
            Err(CursorError::BadCheck)
        );
    }

    #[test]
    fn empty_and_garbage_rejected() {
        let c = encode(&KEY, ListKind::Tools, 5, 20);
        let s = c.as_str();
        let longer = [s, "A"].concat();
        let padded = [s, "="].concat();
        let huge = "A".repeat(60_000);
        let cases: [&[u8]; 11] = [
            b"",
            b"x",
            b"null",
            b"not a cursor at all!!!!!",
            b"AAAAAAAAAAAAAAAAAAAAAAAA",
            b"AAAAAAAAAAAAAAAAAAAAAA==",
            &s.as_bytes()[..CURSOR_LEN - 1],
            longer.as_bytes(),
            padded.as_bytes(),
            huge.as_bytes(),
            // A version-1 cursor (23 characters) from before list kinds.
            b"AQAAAAAyAAAAo3c1V9Hk5Qw",
        ];
        for garbage in cases {
            assert!(
                decode(&KEY, ListKind::Tools, garbage).is_err(),
                "{garbage:?} accepted"
            );
        }
        assert_eq!(
            decode(&KEY, ListKind::Tools, b""),
            Err(CursorError::Malformed)
        );
        assert_eq!(
            decode(&KEY, ListKind::Tools, b"not a cursor at all!!!!!"),
            Err(CursorError::Malformed)
        );
        // Standard-alphabet characters are not base64url.
        let std_alpha = s.replace('-', "+").replace('_', "/");
        if std_alpha != s {
            assert_eq!(
                decode(&KEY, ListKind::Tools, std_alpha.as_bytes()),
                Err(CursorError::Malformed)
            );
        }
    }

    #[test]
    fn distinct_positions_give_distinct_cursors() {
        let mut seen = HashSet::new();
        for kind in KINDS {
            for epoch in 0..10u32 {
                for offset in (0..2000u32).step_by(7) {
                    let c = encode(&KEY, kind, epoch, offset);
                    assert!(seen.insert(String::from(c.as_str())), "duplicate cursor");
                }
            }
        }
        assert_ne!(
            encode(&KEY, ListKind::Tools, 1, 0),
            encode(&KEY, ListKind::Tools, 0, 1)
        );
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
        assert_eq!(
            std::format!("{}", CursorError::WrongList),
            "cursor belongs to another list"
        );
        let e: &dyn core::error::Error = &CursorError::BadCheck;
        assert!(e.source().is_none());
        assert_eq!(std::format!("{:?}", KEY), "SecretKey(..)");
    }
}
