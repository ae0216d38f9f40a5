//! One header value as the 2026-07-28 checks read it: optional white space trimmed, visible
//! ASCII only, literal or `=?base64?…?=`, and compared with a body value as it decodes,
//! never copied into a buffer. The comparison rules are the parent module's second table.

use crate::wire::json::{JsonStr, Kind, RawJson};

use super::HeaderError;

/// The form of an encoded value: `=?base64?` + text + `?=`.
const OPEN: &[u8] = b"=?base64?";
const CLOSE: &[u8] = b"?=";

/// A checked header value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Value<'h> {
    /// Sent as is.
    Literal(&'h [u8]),
    /// Valid base64 (the text between the markers), compared decoded.
    Base64(&'h [u8]),
}

/// `raw` with optional white space (SP, HTAB) removed from both ends.
pub(super) fn trim(raw: &[u8]) -> &[u8] {
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = raw.iter().position(|b| !is_ows(b)).unwrap_or(raw.len());
    let end = raw
        .iter()
        .rposition(|b| !is_ows(b))
        .map_or(start, |i| i + 1);
    raw.get(start..end).unwrap_or_default()
}

/// Whether a trimmed value is visible ASCII (SP and HTAB allowed inside).
pub(super) fn is_text(v: &[u8]) -> bool {
    v.iter()
        .all(|&b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b))
}

impl<'h> Value<'h> {
    /// Reads a value as sent (untrimmed): [`HeaderError::NotText`] when it is not visible
    /// ASCII, [`HeaderError::BadBase64`] when the encoded form holds no valid base64.
    pub(super) fn read(raw: &'h [u8]) -> Result<Self, HeaderError> {
        let v = trim(raw);
        if !is_text(v) {
            return Err(HeaderError::NotText);
        }
        let encoded = v.strip_prefix(OPEN).and_then(|r| r.strip_suffix(CLOSE));
        match encoded {
            None => Ok(Value::Literal(v)),
            Some(e) if is_base64(e) => Ok(Value::Base64(e)),
            Some(_) => Err(HeaderError::BadBase64),
        }
    }

    /// The bytes the value stands for.
    pub(super) fn bytes(self) -> Bytes<'h> {
        match self {
            Value::Literal(v) => Bytes::Literal(v.iter()),
            Value::Base64(e) => Bytes::Base64 {
                quads: e.chunks_exact(4),
                out: [0; 3],
                at: 0,
                len: 0,
            },
        }
    }

    /// Whether the value equals the JSON string `s` (its decoded UTF-8 bytes).
    pub(super) fn matches_str(self, s: JsonStr<'_>) -> bool {
        s.eq_bytes(self.bytes())
    }

    /// Whether the value equals the JSON value `body` (see the module table).
    pub(super) fn matches(self, body: RawJson<'_>) -> bool {
        if let Some(s) = body.as_string() {
            return self.matches_str(s);
        }
        let text = body.as_str().as_bytes().iter().copied();
        if body.kind() == Kind::Number && integer(text.clone()).is_some() {
            return int_eq(self.bytes(), text);
        }
        self.bytes().eq(text)
    }
}

/// The decoded bytes of a [`Value`].
#[derive(Clone, Debug)]
pub(super) enum Bytes<'h> {
    Literal(core::slice::Iter<'h, u8>),
    Base64 {
        quads: core::slice::ChunksExact<'h, u8>,
        out: [u8; 3],
        at: u8,
        len: u8,
    },
}

impl Iterator for Bytes<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        match self {
            Bytes::Literal(it) => it.next().copied(),
            Bytes::Base64 {
                quads,
                out,
                at,
                len,
            } => {
                if at >= len {
                    let quad = quads.next()?;
                    let (v, n) = quad_value(quad)?;
                    let [_, a, b, c] = v.to_be_bytes();
                    *out = [a, b, c];
                    *at = 0;
                    *len = n;
                }
                let b = out.get(usize::from(*at)).copied();
                *at += 1;
                b
            }
        }
    }
}

/// A standard base64 character's 6 bits.
fn sextet(b: u8) -> Option<u32> {
    crate::wire::sextet(b, b'+', b'/')
}

/// A quad's 24 bits and how many bytes they hold (3, or 2 / 1 with padding); `None` for a
/// character outside the alphabet, padding that is not at the end of the quad, or set
/// bits after the last byte.
fn quad_value(quad: &[u8]) -> Option<(u32, u8)> {
    let pad = quad.iter().rev().take_while(|&&b| b == b'=').count();
    if pad > 2 || quad.len() != 4 {
        return None;
    }
    let mut v = 0u32;
    for &b in quad.get(..4 - pad)? {
        v = (v << 6) | sextet(b)?;
    }
    v <<= 6 * pad as u32;
    // 8 bits of padding per missing byte must be zero (canonical encoding).
    let spare = 8 * pad as u32;
    if spare > 0 && v & ((1 << spare) - 1) != 0 {
        return None;
    }
    Some((v, 3 - pad as u8))
}

/// Whether `e` is standard, padded, canonical base64 (padding only in the last quad).
fn is_base64(e: &[u8]) -> bool {
    if e.len() % 4 != 0 {
        return false;
    }
    let quads = e.len() / 4;
    e.chunks_exact(4)
        .enumerate()
        .all(|(i, q)| quad_value(q).is_some_and(|(_, n)| n == 3 || i + 1 == quads))
}

/// Whether `text` is an integer (`-`? digits); then `Some(negative)`.
fn integer(mut text: impl Iterator<Item = u8>) -> Option<bool> {
    let mut first = text.next()?;
    let negative = first == b'-';
    if negative {
        first = text.next()?;
    }
    (first.is_ascii_digit() && text.all(|b| b.is_ascii_digit())).then_some(negative)
}

/// Whether two integer texts name the same number; `false` when `a` is no integer.
fn int_eq<A, B>(a: A, b: B) -> bool
where
    A: Iterator<Item = u8> + Clone,
    B: Iterator<Item = u8> + Clone,
{
    let (Some(na), Some(nb)) = (integer(a.clone()), integer(b.clone())) else {
        return false;
    };
    let digits = |it: A| it.skip_while(|&b| b == b'-' || b == b'0');
    let other = |it: B| it.skip_while(|&b| b == b'-' || b == b'0');
    let zero = digits(a.clone()).next().is_none();
    (na == nb || zero) && digits(a).eq(other(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{parse, Limits};

    fn read(raw: &str) -> Result<Value<'_>, HeaderError> {
        Value::read(raw.as_bytes())
    }

    fn decoded(raw: &str) -> std::vec::Vec<u8> {
        read(raw).unwrap().bytes().collect()
    }

    fn json(text: &str) -> RawJson<'_> {
        parse(text.as_bytes(), Limits::default()).unwrap()
    }

    #[test]
    fn trimming_and_text() {
        assert_eq!(trim(b" \t a b\t "), b"a b");
        assert_eq!(trim(b" \t "), b"");
        assert_eq!(read(" x\t"), Ok(Value::Literal(b"x")));
        assert_eq!(Value::read(b"caf\xc3\xa9"), Err(HeaderError::NotText));
        assert_eq!(Value::read(b"a\x7fb"), Err(HeaderError::NotText));
        assert_eq!(Value::read(b"a\x01"), Err(HeaderError::NotText));
    }

    #[test]
    fn base64_forms() {
        assert_eq!(decoded("=?base64?SGk=?="), b"Hi");
        assert_eq!(decoded("=?base64?SGVsbG8h?="), b"Hello!");
        assert_eq!(decoded("=?base64?SA==?="), b"H");
        assert_eq!(decoded("=?base64??="), b"");
        assert_eq!(decoded("=?base64?w6k=?="), "é".as_bytes());
        // Not the encoded form: literal text.
        assert_eq!(decoded("SGk="), b"SGk=");
        assert_eq!(decoded("=?base64?SGk="), b"=?base64?SGk=");
        assert_eq!(decoded("=?base64?="), b"=?base64?=");
        for bad in [
            "=?base64?SGk?=",      // unpadded
            "=?base64?S=k=?=",     // padding inside a quad
            "=?base64?SGk=SGk=?=", // padding before the end
            "=?base64?SGVs!!!bG8=?=",
            "=?base64?SGl=?=", // bits after the last byte
            "=?base64?SB==?=",
            "=?base64?S===?=",
            "=?base64?====?=",
            "=?base64?SGVsbG8?=",
        ] {
            assert_eq!(read(bad), Err(HeaderError::BadBase64), "{bad}");
        }
    }

    #[test]
    fn comparisons() {
        let m = |h: &str, body: &str| read(h).unwrap().matches(json(body));
        assert!(m("Hello", r#""Hello""#));
        assert!(m("=?base64?SGVsbG8=?=", r#""Hello""#));
        assert!(m("=?base64?w6k=?=", r#""\u00e9""#));
        assert!(!m("=?base64?SGVsbG8=?=", r#""Hello!""#));
        assert!(!m("=?base64?SGVsbG8h?=", r#""Hello""#));
        assert!(!m("=?base64?/w==?=", r#""\ufffd""#));
        assert!(!m("hello", r#""Hello""#));
        assert!(!m("", r#""x""#));
        assert!(m("", r#""""#));
        assert!(m("12", "12"));
        assert!(m("012", "12"));
        assert!(m("000", "0"));
        assert!(m("-0", "0"));
        assert!(m("0", "-0"));
        assert!(m("-7", "-7"));
        assert!(m("=?base64?MTI=?=", "12"));
        assert!(!m("-12", "12"));
        assert!(!m("12", "-12"));
        assert!(!m("120", "12"));
        assert!(!m("1", "12"));
        assert!(!m("+12", "12"));
        assert!(!m("12.0", "12"));
        assert!(!m("", "0"));
        assert!(!m("-", "0"));
        assert!(m("1.5", "1.5"));
        assert!(m("true", "true"));
        assert!(!m("True", "true"));
        assert!(!m("1", "true"));
    }
}
