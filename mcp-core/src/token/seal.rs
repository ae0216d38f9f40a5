//! Sealed opaque state for multi-round-trip requests (MCP 2026-07-28).
//!
//! A handler that needs more input answers `tools/call` (or `prompts/get`, `resources/read`)
//! with `resultType: "input_required"` and an opaque `requestState` string; the client
//! retries the same method and target, echoing `requestState`. Whatever comes back is
//! attacker-controlled, so the state is sealed: [`seal`] binds a payload to the method, the
//! target (tool or prompt name, resource URI) and an expiry with a keyed MAC
//! ([`mac`], domain [`Domain::RequestState`], so that neither a
//! [`pagination`](crate::token::cursor) cursor nor any other MAC of this crate verifies as
//! state), and [`open`] gives the payload back only if all of them match and the state has
//! not expired.
//!
//! **Integrity, not secrecy**: the payload travels in the clear and the client can read it.
//! Keep secrets out of it (or encrypt them before sealing). Sealing does not stop replay:
//! until it expires, a state opens for its method and target as often as it is presented; if
//! it must be tied to a session or user, put that in the target or payload (or use a key per
//! session). The core has no clock: the caller supplies `expires_at_ms` and `now_ms` from the
//! same clock (for several server instances sharing a key, a wall clock). During a key
//! rotation the session opens a state under each key it accepts
//! ([`Config::verification_keys`](crate::Config::verification_keys)) and always seals under
//! the current one.
//!
//! Wire format (ASCII; [`sealed_len`] = 27 + payload length characters):
//!
//! | chars  | content                                                                    |
//! |--------|----------------------------------------------------------------------------|
//! | 0..3   | `s1.`: format version 1                                                    |
//! | 3..14  | `expires_at_ms`, `u64` big-endian, unpadded base64url (11 characters)      |
//! | 14     | `.`                                                                        |
//! | 15..26 | [`mac_fields`] of (`s1`, method, target, expiry bytes 8 BE, payload), domain [`Domain::RequestState`]; unpadded base64url (11 characters) |
//! | 26     | `.`                                                                        |
//! | 27..   | the payload, verbatim: 0 to [`MAX_PAYLOAD`] characters, dots allowed       |
//!
//! Payload characters are restricted ([`is_payload_char`]) to printable ASCII that no common
//! JSON encoder escapes, so the string a client echoes arrives unescaped and [`open`] can
//! return the payload as a borrow of its input, without copying. Excluded: control characters
//! and DEL, non-ASCII, `"` and `\` (always escaped), `<` `>` `&` (HTML-safe encoders: Go's,
//! .NET's, Gson's), `'` (.NET, Gson), `=` (Gson's default), `+` and `` ` `` (.NET's default
//! encoder), `/` (PHP's default). The base64url alphabet, `.`, `~`, `:`, `,`, `;`, `!`, `*`,
//! `%`, space and the rest remain.
//!
//! ```
//! use mcp_rs_core::token::mac::SecretKey;
//! use mcp_rs_core::token::seal::{open, seal, sealed_len, OpenError};
//!
//! let key = SecretKey([7; 16]); // from the platform's entropy source
//! let mut buf = [0u8; sealed_len(16)];
//! let state = seal(&key, "tools/call", "book_flight", "step:2;seat:14C", 60_000, &mut buf)
//!     .unwrap();
//! // ... sent as `requestState`, echoed by the client with the retried call ...
//! assert_eq!(open(&key, "tools/call", "book_flight", state, 59_999), Ok("step:2;seat:14C"));
//! assert_eq!(open(&key, "tools/call", "cancel_flight", state, 0), Err(OpenError::BadCheck));
//! assert_eq!(open(&key, "tools/call", "book_flight", state, 60_001), Err(OpenError::Expired));
//! ```

use core::fmt;

use crate::token::mac::{self, mac_fields, Domain, SecretKey, TAG_LEN};

/// Version prefix, dot included.
const PREFIX: &[u8; 3] = b"s1.";
/// The version as MAC'ed (first field).
const VERSION_FIELD: &[u8] = b"s1";
/// Characters of one base64url-encoded 8-byte value (expiry or MAC).
const FIELD_CHARS: usize = mac::base64url_len(8);
/// Start of the expiry characters.
const EXPIRY_AT: usize = PREFIX.len();
/// Position of the dot after the expiry.
const DOT1_AT: usize = EXPIRY_AT + FIELD_CHARS;
/// Start of the MAC characters.
const MAC_AT: usize = DOT1_AT + 1;
/// Position of the dot after the MAC.
const DOT2_AT: usize = MAC_AT + FIELD_CHARS;
/// Characters before the payload.
const HEADER_LEN: usize = DOT2_AT + 1;

/// Longest payload [`seal`] accepts and [`open`] returns, in bytes (characters).
pub const MAX_PAYLOAD: usize = 1024;

/// Length of the sealed string for a payload of `payload_len` bytes.
pub const fn sealed_len(payload_len: usize) -> usize {
    HEADER_LEN.saturating_add(payload_len)
}

/// Longest string [`open`] considers: [`sealed_len`] of [`MAX_PAYLOAD`].
pub const MAX_SEALED_LEN: usize = sealed_len(MAX_PAYLOAD);

/// Whether `b` may appear in a payload: printable ASCII other than
/// `"` `\` `<` `>` `&` `'` `=` `+` `` ` `` `/` (see the module documentation).
pub const fn is_payload_char(b: u8) -> bool {
    matches!(b, b' '..=b'~')
        && !matches!(
            b,
            b'"' | b'\\' | b'<' | b'>' | b'&' | b'\'' | b'=' | b'+' | b'`' | b'/'
        )
}

/// Why [`seal`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SealError {
    /// The payload is longer than [`MAX_PAYLOAD`].
    PayloadTooLong,
    /// The payload byte at `index` is not allowed ([`is_payload_char`]).
    PayloadCharacter {
        /// Byte offset of the first disallowed character.
        index: usize,
    },
    /// The output buffer is shorter than the `required` [`sealed_len`].
    BufferTooSmall {
        /// Bytes the sealed string needs.
        required: usize,
    },
}

impl fmt::Display for SealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SealError::PayloadTooLong => f.write_str("request state payload too long"),
            SealError::PayloadCharacter { index } => {
                write!(
                    f,
                    "request state payload character not allowed at byte {index}"
                )
            }
            SealError::BufferTooSmall { required } => {
                write!(f, "output buffer too small ({required} bytes required)")
            }
        }
    }
}

impl core::error::Error for SealError {}

/// Why [`open`] rejected a request state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OpenError {
    /// Not a sealed state of this format: wrong prefix or length, missing separators,
    /// non-canonical base64url, a disallowed payload character or longer than
    /// [`MAX_SEALED_LEN`].
    Malformed,
    /// Well-formed, but the MAC does not verify: tampered with, sealed under another key, or
    /// for another method or target.
    BadCheck,
    /// Authentic, but `now_ms` is past its expiry.
    Expired,
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpenError::Malformed => "malformed request state",
            OpenError::BadCheck => "request state check failed",
            OpenError::Expired => "request state expired",
        })
    }
}

impl core::error::Error for OpenError {}

fn state_tag(
    key: &SecretKey,
    method: &str,
    target: &str,
    expiry: &[u8; 8],
    payload: &str,
) -> [u8; TAG_LEN] {
    mac_fields(
        key,
        Domain::RequestState,
        &[
            VERSION_FIELD,
            method.as_bytes(),
            target.as_bytes(),
            expiry,
            payload.as_bytes(),
        ],
    )
}

/// Copies `src` into `out` at `at`; `None` if it does not fit.
fn put(out: &mut [u8], at: usize, src: &[u8]) -> Option<()> {
    let end = at.checked_add(src.len())?;
    let dst = out.get_mut(at..end)?;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
    Some(())
}

/// Seals `payload` for a retry of `method` on `target` that arrives by `expires_at_ms`,
/// writing the state at the start of `out`; returns it.
///
/// `out` needs [`sealed_len`]`(payload.len())` bytes ([`MAX_SEALED_LEN`] always suffices).
pub fn seal<'b>(
    key: &SecretKey,
    method: &str,
    target: &str,
    payload: &str,
    expires_at_ms: u64,
    out: &'b mut [u8],
) -> Result<&'b str, SealError> {
    if payload.len() > MAX_PAYLOAD {
        return Err(SealError::PayloadTooLong);
    }
    if let Some(index) = payload.bytes().position(|b| !is_payload_char(b)) {
        return Err(SealError::PayloadCharacter { index });
    }
    let required = sealed_len(payload.len());
    let out = out
        .get_mut(..required)
        .ok_or(SealError::BufferTooSmall { required })?;
    let expiry = expires_at_ms.to_be_bytes();
    let tag = state_tag(key, method, target, &expiry, payload);
    let mut expiry_text = [0u8; FIELD_CHARS];
    let mut tag_text = [0u8; FIELD_CHARS];
    // Both buffers have exactly the encoded length of 8 bytes.
    let expiry_text = mac::base64url_encode(&expiry, &mut expiry_text).unwrap_or_default();
    let tag_text = mac::base64url_encode(&tag, &mut tag_text).unwrap_or_default();
    let written = put(out, 0, PREFIX)
        .and_then(|()| put(out, EXPIRY_AT, expiry_text.as_bytes()))
        .and_then(|()| put(out, DOT1_AT, b"."))
        .and_then(|()| put(out, MAC_AT, tag_text.as_bytes()))
        .and_then(|()| put(out, DOT2_AT, b"."))
        .and_then(|()| put(out, HEADER_LEN, payload.as_bytes()));
    // `out` is exactly `required` long, so every piece fits; all of it is ASCII.
    if written.is_none() {
        return Err(SealError::BufferTooSmall { required });
    }
    Ok(core::str::from_utf8(out).unwrap_or_default())
}

/// Opens a request state echoed by a client for a retry of `method` on `target` at
/// `now_ms`; returns the payload, a borrow of `sealed`.
///
/// The MAC is checked (in constant time) before the expiry is trusted: a state fails with
/// [`OpenError::Malformed`], then [`OpenError::BadCheck`], then [`OpenError::Expired`]
/// (when `now_ms > expires_at_ms`; a state opens at its expiry instant).
pub fn open<'s>(
    key: &SecretKey,
    method: &str,
    target: &str,
    sealed: &'s str,
    now_ms: u64,
) -> Result<&'s str, OpenError> {
    let bytes = sealed.as_bytes();
    if bytes.len() > MAX_SEALED_LEN || bytes.get(..EXPIRY_AT) != Some(&PREFIX[..]) {
        return Err(OpenError::Malformed);
    }
    if bytes.get(DOT1_AT) != Some(&b'.') || bytes.get(DOT2_AT) != Some(&b'.') {
        return Err(OpenError::Malformed);
    }
    let field = |at: usize| -> Result<[u8; 8], OpenError> {
        let text = bytes
            .get(at..at + FIELD_CHARS)
            .ok_or(OpenError::Malformed)?;
        let mut raw = [0u8; 8];
        mac::base64url_decode(text, &mut raw).map_err(|_| OpenError::Malformed)?;
        Ok(raw)
    };
    let expiry = field(EXPIRY_AT)?;
    let tag = field(MAC_AT)?;
    // The header is ASCII, so the payload starts on a character boundary.
    let payload = sealed.get(HEADER_LEN..).ok_or(OpenError::Malformed)?;
    if !payload.bytes().all(is_payload_char) {
        return Err(OpenError::Malformed);
    }
    if !mac::ct_eq(&state_tag(key, method, target, &expiry, payload), &tag) {
        return Err(OpenError::BadCheck);
    }
    if now_ms > u64::from_be_bytes(expiry) {
        return Err(OpenError::Expired);
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::ToOwned;
    use std::string::String;
    use std::vec::Vec;

    const KEY: SecretKey = SecretKey([
        0x53, 0x45, 0x41, 0x4c, 0x01, 0x02, 0x03, 0x04, 0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96,
        0x87,
    ]);
    const M: &str = "tools/call";
    const T: &str = "book_flight";
    const EXP: u64 = 1_780_000_000_000;

    fn sealed(payload: &str, expires: u64) -> String {
        let mut buf = [0u8; MAX_SEALED_LEN];
        String::from(seal(&KEY, M, T, payload, expires, &mut buf).unwrap())
    }

    /// Every allowed payload character, in order.
    fn allowed() -> String {
        (0..=255u8)
            .filter(|&b| is_payload_char(b))
            .map(char::from)
            .collect()
    }

    use crate::wire::test_rng::XorShift;

    #[test]
    fn lengths() {
        assert_eq!(FIELD_CHARS, 11);
        assert_eq!(HEADER_LEN, 27);
        assert_eq!(sealed_len(0), 27);
        assert_eq!(MAX_SEALED_LEN, 27 + 1024);
        assert_eq!(sealed_len(usize::MAX), usize::MAX);
    }

    #[test]
    fn roundtrip() {
        let long = "x".repeat(MAX_PAYLOAD);
        let all = allowed();
        let payloads = [
            "",
            "a",
            "step:2;seat:14C",
            "a.b.c",
            ".",
            "...",
            "s1.AAAAAAAAAAA.AAAAAAAAAAA.nested",
            " leading and trailing ",
            all.as_str(),
            long.as_str(),
        ];
        for payload in payloads {
            for expires in [0, 1, EXP, u64::MAX] {
                let s = sealed(payload, expires);
                assert_eq!(s.len(), sealed_len(payload.len()));
                assert!(s.bytes().all(is_payload_char), "{s}");
                assert_eq!(open(&KEY, M, T, &s, 0), Ok(payload));
                assert_eq!(open(&KEY, M, T, &s, expires), Ok(payload));
            }
        }
    }

    #[test]
    fn payload_is_borrowed_from_the_input() {
        let s = sealed("keep.me", EXP);
        let p = open(&KEY, M, T, &s, 0).unwrap();
        assert!(core::ptr::eq(
            p.as_ptr(),
            s.as_bytes()[HEADER_LEN..].as_ptr()
        ));
    }

    #[test]
    fn layout_matches_the_table() {
        let s = sealed("p.q", 0x0102_0304_0506_0708);
        let b = s.as_bytes();
        assert_eq!(&b[..3], b"s1.");
        assert_eq!(b[14], b'.');
        assert_eq!(b[26], b'.');
        assert_eq!(&s[27..], "p.q");
        let mut raw = [0u8; 8];
        mac::base64url_decode(&b[3..14], &mut raw).unwrap();
        assert_eq!(raw, [1, 2, 3, 4, 5, 6, 7, 8]);
        mac::base64url_decode(&b[15..26], &mut raw).unwrap();
        let fields: [&[u8]; 5] = [
            b"s1",
            M.as_bytes(),
            T.as_bytes(),
            &[1, 2, 3, 4, 5, 6, 7, 8],
            b"p.q",
        ];
        assert_eq!(raw, mac_fields(&KEY, Domain::RequestState, &fields));
        // The cursor domain gives another tag for the same fields.
        assert_ne!(raw, mac_fields(&KEY, Domain::Cursor, &fields));
    }

    #[test]
    fn json_encoders_leave_it_alone() {
        let s = sealed(&allowed(), EXP);
        assert_eq!(serde_json::to_string(&s).unwrap(), std::format!("\"{s}\""));
        // The excluded characters are exactly the ones some encoder escapes.
        let excluded: String = (b' '..=b'~')
            .filter(|&b| !is_payload_char(b))
            .map(char::from)
            .collect();
        assert_eq!(excluded, "\"&'+/<=>\\`");
    }

    #[test]
    fn every_single_character_tamper_fails() {
        let original = sealed("step:2.seat:14C", EXP);
        let mut replacements: Vec<char> = (b' '..=b'~').map(char::from).collect();
        replacements.extend(['\0', '\n', '\u{7f}', 'é', '\u{2028}']);
        let mut tried = 0;
        for (i, old) in original.char_indices() {
            let before = &original[..i];
            let after = &original[i + old.len_utf8()..];
            // Deletion.
            let deleted = [before, after].concat();
            assert!(open(&KEY, M, T, &deleted, 0).is_err(), "{deleted}");
            for &r in &replacements {
                let mut ch = [0u8; 4];
                let c = r.encode_utf8(&mut ch);
                // Insertion before position i, and substitution at i.
                let inserted = [before, c, &original[i..]].concat();
                assert!(open(&KEY, M, T, &inserted, 0).is_err(), "{inserted}");
                if r != old {
                    let replaced = [before, c, after].concat();
                    assert!(open(&KEY, M, T, &replaced, 0).is_err(), "{replaced}");
                    tried += 1;
                }
            }
        }
        assert_eq!(tried, original.len() * (replacements.len() - 1));
        // Appending is a payload change too.
        assert_eq!(
            open(&KEY, M, T, &[&original, "x"].concat(), 0),
            Err(OpenError::BadCheck)
        );
        assert_eq!(open(&KEY, M, T, &original, 0), Ok("step:2.seat:14C"));
    }

    #[test]
    fn payload_tamper_is_bad_check() {
        let s = sealed("seat:14C", EXP);
        let changed = s.replace("14C", "15C");
        assert_eq!(open(&KEY, M, T, &changed, 0), Err(OpenError::BadCheck));
        // A later expiry with the old MAC: BadCheck, never Ok or Expired.
        let later = sealed("seat:14C", EXP + 1);
        let spliced = [&later[..14], &s[14..]].concat();
        assert_eq!(open(&KEY, M, T, &spliced, 0), Err(OpenError::BadCheck));
        assert_eq!(
            open(&KEY, M, T, &spliced, u64::MAX),
            Err(OpenError::BadCheck)
        );
    }

    #[test]
    fn other_method_target_or_key_fails() {
        let s = sealed("x:1", EXP);
        let cases = [
            ("prompts/get", T),
            ("resources/read", T),
            (M, "cancel_flight"),
            (M, "book_flight "),
            (M, ""),
            ("", T),
            (T, M),
            // Moving the boundary between method and target.
            ("tools/callb", "ook_flight"),
            ("tools/cal", "lbook_flight"),
        ];
        for (method, target) in cases {
            assert_eq!(
                open(&KEY, method, target, &s, 0),
                Err(OpenError::BadCheck),
                "{method} {target}"
            );
        }
        let mut other = KEY;
        other.0[0] ^= 1;
        assert_eq!(open(&other, M, T, &s, 0), Err(OpenError::BadCheck));
        assert_eq!(
            open(&SecretKey([0; 16]), M, T, &s, 0),
            Err(OpenError::BadCheck)
        );
        // Moving bytes between target and payload changes the MAC as well.
        let mut buf = [0u8; MAX_SEALED_LEN];
        let a = seal(&KEY, M, "ab", "c", EXP, &mut buf).unwrap().to_owned();
        let b = seal(&KEY, M, "a", "bc", EXP, &mut buf).unwrap().to_owned();
        assert_ne!(a[15..26], b[15..26]);
    }

    #[test]
    fn expiry_boundary() {
        let s = sealed("x", EXP);
        assert_eq!(open(&KEY, M, T, &s, 0), Ok("x"));
        assert_eq!(open(&KEY, M, T, &s, EXP - 1), Ok("x"));
        assert_eq!(open(&KEY, M, T, &s, EXP), Ok("x"));
        assert_eq!(open(&KEY, M, T, &s, EXP + 1), Err(OpenError::Expired));
        assert_eq!(open(&KEY, M, T, &s, u64::MAX), Err(OpenError::Expired));
        let never = sealed("x", u64::MAX);
        assert_eq!(open(&KEY, M, T, &never, u64::MAX), Ok("x"));
        let born_dead = sealed("x", 0);
        assert_eq!(open(&KEY, M, T, &born_dead, 0), Ok("x"));
        assert_eq!(open(&KEY, M, T, &born_dead, 1), Err(OpenError::Expired));
        // The MAC is checked first: an expired state of another key is BadCheck.
        assert_eq!(
            open(&SecretKey([0; 16]), M, T, &born_dead, 1),
            Err(OpenError::BadCheck)
        );
    }

    #[test]
    fn malformed_inputs() {
        let s = sealed("pay.load", EXP);
        let huge = "A".repeat(1 << 20);
        let too_long = [&s[..HEADER_LEN], &"x".repeat(MAX_PAYLOAD + 1)].concat();
        let non_canonical = |at: usize| {
            // The 11th character of an 8-byte field carries 2 unused bits: set one.
            const ALPHA: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            let mut b = s.clone().into_bytes();
            let v = ALPHA.find(char::from(b[at])).unwrap();
            assert_eq!(v % 4, 0);
            b[at] = ALPHA.as_bytes()[v | 1];
            String::from_utf8(b).unwrap()
        };
        let cases: Vec<String> = std::vec![
            String::new(),
            "s".into(),
            "s1".into(),
            "s1.".into(),
            "s1..".into(),
            "s1...".into(),
            "s2".to_owned() + &s[2..],
            "S1".to_owned() + &s[2..],
            "s1:".to_owned() + &s[3..],
            " ".to_owned() + &s,
            s[..20].to_owned(),
            s[..HEADER_LEN - 1].to_owned(),
            s.replacen('.', "", 1),
            s.replacen('.', "_", 2),
            [&s[..3], "AAAAAAAAAA", &s[14..]].concat(),
            [&s[..3], "AAAAAAAAAA=", &s[14..]].concat(),
            [&s[..3], "AAAAAAAAA+A", &s[14..]].concat(),
            [&s[..15], "AAAAAAAAAA/", &s[26..]].concat(),
            [&s[..15], "AAAAAAAAAé", &s[26..]].concat(),
            [&s[..HEADER_LEN], "bad\"quote"].concat(),
            [&s[..HEADER_LEN], "new\nline"].concat(),
            [&s[..HEADER_LEN], "caf\u{e9}"].concat(),
            non_canonical(13),
            non_canonical(25),
            huge,
            too_long,
            "not a sealed state at all, not at all, no".into(),
        ];
        for bad in &cases {
            assert_eq!(
                open(&KEY, M, T, bad, 0),
                Err(OpenError::Malformed),
                "{bad:?}"
            );
        }
        // A pagination cursor is not a state.
        let c = crate::token::cursor::encode(&KEY, crate::token::cursor::ListKind::Tools, 1, 2);
        assert_eq!(open(&KEY, M, T, c.as_str(), 0), Err(OpenError::Malformed));
    }

    #[test]
    fn payload_restrictions() {
        let mut buf = [0u8; MAX_SEALED_LEN];
        for b in 0..=255u8 {
            let ok = (0x20..0x7f).contains(&b) && !b"\"\\<>&'=+`/".contains(&b);
            assert_eq!(is_payload_char(b), ok, "{b:#x}");
        }
        for bad in [
            "a\"b", "a\\b", "a<b", "a>b", "a&b", "a'b", "a=b", "a+b", "a`b", "a/b", "a\tb",
            "a\u{7f}b", "aéb",
        ] {
            assert_eq!(
                seal(&KEY, M, T, bad, EXP, &mut buf),
                Err(SealError::PayloadCharacter { index: 1 }),
                "{bad:?}"
            );
        }
        let max = "y".repeat(MAX_PAYLOAD);
        assert!(seal(&KEY, M, T, &max, EXP, &mut buf).is_ok());
        let over = "y".repeat(MAX_PAYLOAD + 1);
        assert_eq!(
            seal(&KEY, M, T, &over, EXP, &mut buf),
            Err(SealError::PayloadTooLong)
        );
        // Method and target are not restricted: they are never written out.
        let s = seal(&KEY, "tools/call", "a\"<é>/\n", "ok", EXP, &mut buf)
            .unwrap()
            .to_owned();
        assert_eq!(open(&KEY, "tools/call", "a\"<é>/\n", &s, 0), Ok("ok"));
    }

    #[test]
    fn buffer_too_small_reports_exact_size() {
        for payload in ["", "abc", "a.b.c.d.e"] {
            let required = sealed_len(payload.len());
            let mut buf = std::vec![0u8; required + 8];
            for short in 0..required {
                assert_eq!(
                    seal(&KEY, M, T, payload, EXP, &mut buf[..short]),
                    Err(SealError::BufferTooSmall { required })
                );
            }
            let exact = seal(&KEY, M, T, payload, EXP, &mut buf[..required])
                .unwrap()
                .to_owned();
            assert_eq!(exact.len(), required);
            assert_eq!(seal(&KEY, M, T, payload, EXP, &mut buf), Ok(exact.as_str()));
        }
    }

    #[test]
    fn random_inputs_never_panic_nor_open() {
        let original = sealed("round.trip:1", EXP);
        let alphabet: Vec<char> = "s1.AZaz09-_=+/\"\\ é\u{0}~".chars().collect();
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut opened = 0;
        for round in 0..20_000 {
            let candidate: String = match round % 3 {
                // Random strings over an alphabet of interesting characters.
                0 => {
                    let len = rng.below(HEADER_LEN + 16);
                    (0..len)
                        .map(|_| alphabet[rng.below(alphabet.len())])
                        .collect()
                }
                // The valid prefix with a random tail.
                1 => {
                    let cut = rng.below(original.len() + 1);
                    let tail: String = (0..rng.below(8))
                        .map(|_| alphabet[rng.below(alphabet.len())])
                        .collect();
                    [&original[..cut], &tail].concat()
                }
                // A few random substitutions in the valid state.
                _ => {
                    let mut chars: Vec<char> = original.chars().collect();
                    for _ in 0..=rng.below(3) {
                        let at = rng.below(chars.len());
                        chars[at] = alphabet[rng.below(alphabet.len())];
                    }
                    chars.into_iter().collect()
                }
            };
            let now = rng.next() >> rng.below(64);
            if let Ok(p) = open(&KEY, M, T, &candidate, now) {
                assert_eq!(candidate, original, "forged state opened");
                assert_eq!(p, "round.trip:1");
                opened += 1;
            }
        }
        // Sanity: substitutions sometimes restore the original; nothing else opens.
        assert!(opened < 20_000 / 3);
    }

    #[test]
    fn display() {
        assert_eq!(
            std::format!("{}", SealError::PayloadTooLong),
            "request state payload too long"
        );
        assert_eq!(
            std::format!("{}", SealError::PayloadCharacter { index: 3 }),
            "request state payload character not allowed at byte 3"
        );
        assert_eq!(
            std::format!("{}", SealError::BufferTooSmall { required: 30 }),
            "output buffer too small (30 bytes required)"
        );
        assert_eq!(
            std::format!("{}", OpenError::Malformed),
            "malformed request state"
        );
        assert_eq!(
            std::format!("{}", OpenError::BadCheck),
            "request state check failed"
        );
        assert_eq!(
            std::format!("{}", OpenError::Expired),
            "request state expired"
        );
        let e: &dyn core::error::Error = &OpenError::Expired;
        assert!(e.source().is_none());
        let e: &dyn core::error::Error = &SealError::PayloadTooLong;
        assert!(e.source().is_none());
    }
}
