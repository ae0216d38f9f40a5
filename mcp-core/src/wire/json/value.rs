//! Borrowed views over validated JSON text.
//!
//! Every view borrows text that [`parse`](super::parse) already validated, so the accessors
//! and iterators here only *walk* it: nested values are skipped by counting brackets (string-
//! and escape-aware), never by recursion. They still never panic on unexpected text; they
//! return `None` (or stop iterating) instead.

use core::iter::FusedIterator;

use super::scan::{hex4, skip_plain, skip_ws, Word, HI, LO, WORD};
use super::BufferTooSmall;

/// The type of a JSON value, known from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `null`
    Null,
    /// `true` or `false`
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// One validated JSON value: the exact source text, without surrounding whitespace.
///
/// Only [`parse`](super::parse) and the iterators here create it, so the text is known valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawJson<'a> {
    pub(crate) text: &'a str,
}

impl<'a> RawJson<'a> {
    /// `text` taken as one JSON value without checking it: for JSON the program itself
    /// wrote (the derive's `default` literals). Not a public API: text that is not one
    /// JSON value reads as nonsense (no memory unsafety: every accessor re-reads the text).
    #[doc(hidden)]
    pub const fn __trusted(text: &'a str) -> Self {
        RawJson { text }
    }

    /// The value's JSON text, exactly as it appeared in the input.
    pub fn as_str(&self) -> &'a str {
        self.text
    }
    /// The value's kind.
    pub fn kind(&self) -> Kind {
        match self.text.as_bytes().first() {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'-' | b'0'..=b'9') => Kind::Number,
            _ => Kind::Null,
        }
    }
    /// `true` for `null`.
    pub fn is_null(&self) -> bool {
        crate::wire::bytes_eq(self.text.as_bytes(), b"null")
    }
    /// The boolean, if this is `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        let text = self.text.as_bytes();
        if crate::wire::bytes_eq(text, b"true") {
            Some(true)
        } else if crate::wire::bytes_eq(text, b"false") {
            Some(false)
        } else {
            None
        }
    }
    /// The string, if this is a string.
    pub fn as_string(&self) -> Option<JsonStr<'a>> {
        // Not `strip_prefix('"')`: a slice comparison, a call to `memcmp` (#21).
        let text = self.text;
        let bytes = text.as_bytes();
        if bytes.len() < 2 || bytes.first() != Some(&b'"') || bytes.last() != Some(&b'"') {
            return None;
        }
        let inner = text.get(1..text.len() - 1)?;
        Some(JsonStr { raw: inner })
    }
    /// The integer, if this is a number written without fraction/exponent that fits `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        let (negative, digits) = integer_digits(self.text)?;
        let mut value: i64 = 0;
        for &c in digits {
            let d = i64::from(c - b'0');
            value = value.checked_mul(10)?;
            value = if negative {
                value.checked_sub(d)?
            } else {
                value.checked_add(d)?
            };
        }
        Some(value)
    }
    /// The integer, if this is a number written without fraction/exponent that fits `u64`.
    ///
    /// `-0` is zero and yields `Some(0)`; every other negative number yields `None`.
    pub fn as_u64(&self) -> Option<u64> {
        let (negative, digits) = integer_digits(self.text)?;
        if negative {
            return digits.iter().all(|&c| c == b'0').then_some(0);
        }
        let mut value: u64 = 0;
        for &c in digits {
            value = value.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
        }
        Some(value)
    }
    /// The number as `f64` (nearest), if this is a number.
    ///
    /// Magnitudes beyond `f64::MAX` give an infinity (JSON itself has no range limit).
    pub fn as_f64(&self) -> Option<f64> {
        if self.kind() != Kind::Number {
            return None;
        }
        self.text.parse::<f64>().ok()
    }
    /// Iterator over `(key, value)` pairs in source order, if this is an object.
    pub fn members(&self) -> Option<Members<'a>> {
        if self.kind() != Kind::Object {
            return None;
        }
        Some(Members {
            rest: self.text.get(1..)?,
        })
    }
    /// Iterator over elements, if this is an array.
    pub fn elements(&self) -> Option<Elements<'a>> {
        if self.kind() != Kind::Array {
            return None;
        }
        Some(Elements {
            rest: self.text.get(1..)?,
        })
    }
    /// The value of the first member whose decoded key equals `key`, if this is an object.
    pub fn get(&self, key: &str) -> Option<RawJson<'a>> {
        self.members()?
            .find(|(k, _)| k.eq_str(key))
            .map(|(_, value)| value)
    }
    /// The element at `index`, if this is an array that long.
    pub fn index(&self, index: usize) -> Option<RawJson<'a>> {
        self.elements()?.nth(index)
    }
}

/// Splits an integer's text (no `.`, `e` or `E`) into its sign and non-empty digit run.
fn integer_digits(text: &str) -> Option<(bool, &[u8])> {
    let bytes = text.as_bytes();
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some((negative, digits))
}

/// Index of the first `"` at or after `i` (or `b.len()`), eight bytes per step.
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
fn skip_to_quote(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..).and_then(<[u8]>::first_chunk::<WORD>) {
        let quote = Word::from_le_bytes(*chunk) ^ (LO * Word::from(b'"'));
        let lanes = quote.wrapping_sub(LO) & !quote & HI;
        if lanes != 0 {
            return i + (lanes.trailing_zeros() / 8) as usize;
        }
        i += WORD;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' {
            break;
        }
        i += 1;
    }
    i
}

/// Index of the closing quote of the string whose content starts at `start` (validated
/// text). Jumps from quote to quote; a quote preceded by an odd number of backslashes is
/// escaped (in valid content backslashes only pair up or start escapes), so escape-dense
/// strings are skipped as fast as plain ones.
#[inline]
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    loop {
        i = skip_to_quote(b, i);
        b.get(i)?;
        let mut k = i;
        while k > start && b.get(k - 1) == Some(&b'\\') {
            k -= 1;
        }
        if (i - k) % 2 == 0 {
            return Some(i);
        }
        i += 1;
    }
}

/// Index of the first `"`, `[`, `]`, `{` or `}` at or after `i` (or `b.len()`), eight bytes
/// per step. `[`/`]` differ from `{`/`}` only in bit 0x20, so one OR folds them together.
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
fn skip_to_structural(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..).and_then(<[u8]>::first_chunk::<WORD>) {
        let x = Word::from_le_bytes(*chunk);
        let folded = x | (LO * 0x20);
        let quote = x ^ (LO * Word::from(b'"'));
        let open = folded ^ (LO * Word::from(b'{'));
        let close = folded ^ (LO * Word::from(b'}'));
        let lanes = (quote.wrapping_sub(LO) & !quote)
            | (open.wrapping_sub(LO) & !open)
            | (close.wrapping_sub(LO) & !close);
        let lanes = lanes & HI;
        if lanes != 0 {
            return i + (lanes.trailing_zeros() / 8) as usize;
        }
        i += WORD;
    }
    while let Some(&c) = b.get(i) {
        if matches!(c, b'"' | b'[' | b']' | b'{' | b'}') {
            break;
        }
        i += 1;
    }
    i
}

/// Index just past the value starting at `i` (validated text; `None` if it is not there).
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i + 1).map(|q| q + 1),
        b'{' | b'[' => {
            let mut depth: usize = 0;
            let mut j = i;
            loop {
                j = skip_to_structural(b, j);
                match *b.get(j)? {
                    b'"' => j = string_end(b, j + 1)?,
                    b'{' | b'[' => depth += 1,
                    _ => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while let Some(&c) = b.get(j) {
                if matches!(
                    c,
                    b',' | b':' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r' | b'"'
                ) {
                    break;
                }
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// After a member or element ending at `i`: the remaining text after a `,`, or `""` at the
/// end of the container.
#[inline]
fn after_item(text: &str, i: usize) -> &str {
    let b = text.as_bytes();
    let j = skip_ws(b, i);
    match b.get(j) {
        Some(b',') => text.get(j + 1..).unwrap_or(""),
        _ => "",
    }
}

/// Iterator over an object's members.
#[derive(Clone, Debug)]
pub struct Members<'a> {
    /// The object text after `{` or after the comma following the previous member.
    pub(crate) rest: &'a str,
}

impl<'a> Members<'a> {
    fn step(&mut self) -> Option<(JsonStr<'a>, RawJson<'a>)> {
        let s = self.rest;
        let b = s.as_bytes();
        let i = skip_ws(b, 0);
        if *b.get(i)? != b'"' {
            return None;
        }
        let close = string_end(b, i + 1)?;
        let key = JsonStr {
            raw: s.get(i + 1..close)?,
        };
        let colon = skip_ws(b, close + 1);
        if *b.get(colon)? != b':' {
            return None;
        }
        let start = skip_ws(b, colon + 1);
        let end = value_end(b, start)?;
        let value = RawJson {
            text: s.get(start..end)?,
        };
        self.rest = after_item(s, end);
        Some((key, value))
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (JsonStr<'a>, RawJson<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        let item = self.step();
        if item.is_none() {
            self.rest = "";
        }
        item
    }
}

impl FusedIterator for Members<'_> {}

/// Iterator over an array's elements.
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    /// The array text after `[` or after the comma following the previous element.
    pub(crate) rest: &'a str,
}

impl<'a> Elements<'a> {
    fn step(&mut self) -> Option<RawJson<'a>> {
        let s = self.rest;
        let b = s.as_bytes();
        let start = skip_ws(b, 0);
        if matches!(b.get(start)?, b']' | b'}' | b',') {
            return None;
        }
        let end = value_end(b, start)?;
        let value = RawJson {
            text: s.get(start..end)?,
        };
        self.rest = after_item(s, end);
        Some(value)
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = RawJson<'a>;
    fn next(&mut self) -> Option<Self::Item> {
        let item = self.step();
        if item.is_none() {
            self.rest = "";
        }
        item
    }
}

impl FusedIterator for Elements<'_> {}

/// A validated JSON string: the escaped source text between the quotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonStr<'a> {
    pub(crate) raw: &'a str,
}

impl<'a> JsonStr<'a> {
    /// The escaped content as in the source, without quotes. Writing `"` + this + `"` yields
    /// a valid JSON string with the same value.
    pub fn raw(&self) -> &'a str {
        self.raw
    }
    /// Whether the content contains a backslash escape.
    pub fn has_escapes(&self) -> bool {
        self.raw.as_bytes().contains(&b'\\')
    }
    /// The decoded content when it has no escapes (zero-copy).
    pub fn as_borrowed(&self) -> Option<&'a str> {
        (!self.has_escapes()).then_some(self.raw)
    }
    /// The decoded characters.
    pub fn chars(&self) -> Chars<'a> {
        Chars { rest: self.raw }
    }
    /// Length in bytes of the decoded (UTF-8) content.
    pub fn decoded_len(&self) -> usize {
        let b = self.raw.as_bytes();
        // Each escape shrinks by its source length minus its UTF-8 length; plain text stays.
        let mut i = 0;
        let mut shrink = 0;
        loop {
            i = skip_plain(b, i);
            match b.get(i) {
                None => return b.len() - shrink,
                Some(b'\\') => match b.get(i..).and_then(decode_escape) {
                    Some((c, len)) => {
                        shrink += len - c.len_utf8();
                        i += len;
                    }
                    // Like `chars`, stop at a malformed escape (never in validated text).
                    None => return i - shrink,
                },
                Some(_) => i += 1,
            }
        }
    }
    /// The decoded text: borrowed when there are no escapes, otherwise decoded into `buf`;
    /// `None` if it does not fit. For short protocol strings (method names, versions).
    pub fn text_in<'b>(&self, buf: &'b mut [u8]) -> Option<&'b str>
    where
        'a: 'b,
    {
        match self.as_borrowed() {
            Some(s) => Some(s),
            None => self.decode_into(buf).ok(),
        }
    }
    /// Whether the decoded content equals `s` (no allocation).
    pub fn eq_str(&self, s: &str) -> bool {
        let raw = self.raw.as_bytes();
        // Decoding never makes the content longer, and only an escape makes it shorter: of
        // the same length, equal means no escape and the same bytes (member names).
        if s.len() >= raw.len() {
            return s.len() == raw.len()
                && raw
                    .iter()
                    .zip(s.as_bytes())
                    .all(|(&a, &b)| a == b && a != b'\\');
        }
        let mut rest = s.as_bytes();
        let mut utf8 = [0u8; 4];
        for segment in self.segments() {
            let piece = match segment {
                Segment::Text(text) => text.as_bytes(),
                Segment::Char(c) => c.encode_utf8(&mut utf8).as_bytes(),
            };
            match rest.split_at_checked(piece.len()) {
                Some((head, tail)) if crate::wire::bytes_eq(head, piece) => rest = tail,
                _ => return false,
            }
        }
        rest.is_empty()
    }
    /// Whether the decoded content's UTF-8 bytes are exactly `bytes` (no allocation; for
    /// text that is itself decoded as it is read, such as a `=?base64?…?=` header value).
    pub fn eq_bytes(&self, mut bytes: impl Iterator<Item = u8>) -> bool {
        let mut utf8 = [0u8; 4];
        for segment in self.segments() {
            let piece = match segment {
                Segment::Text(text) => text.as_bytes(),
                Segment::Char(c) => c.encode_utf8(&mut utf8).as_bytes(),
            };
            if !piece.iter().all(|&b| bytes.next() == Some(b)) {
                return false;
            }
        }
        bytes.next().is_none()
    }
    /// Decodes into `buf`, returning the decoded text, or the size needed.
    pub fn decode_into<'b>(&self, buf: &'b mut [u8]) -> Result<&'b str, BufferTooSmall> {
        let mut len = 0usize;
        let mut utf8 = [0u8; 4];
        for segment in self.segments() {
            let piece = match segment {
                Segment::Text(text) => text.as_bytes(),
                Segment::Char(c) => c.encode_utf8(&mut utf8).as_bytes(),
            };
            let end = len + piece.len();
            match buf.get_mut(len..end) {
                Some(dst) => crate::wire::copy_bytes(dst, piece),
                None => {
                    return Err(BufferTooSmall {
                        required: self.decoded_len(),
                    })
                }
            }
            len = end;
        }
        let buf: &'b [u8] = buf;
        // Only whole UTF-8 sequences were copied, so this always succeeds.
        core::str::from_utf8(buf.get(..len).unwrap_or_default())
            .map_err(|_| BufferTooSmall { required: len })
    }

    /// Runs of unescaped text and single decoded escapes, in order.
    fn segments(&self) -> Segments<'a> {
        Segments { rest: self.raw }
    }
}

/// Writes the decoded text (escapes resolved).
impl core::fmt::Display for JsonStr<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.as_borrowed() {
            Some(s) => f.write_str(s),
            None => self
                .chars()
                .try_for_each(|c| core::fmt::Write::write_char(f, c)),
        }
    }
}

impl PartialEq<str> for JsonStr<'_> {
    fn eq(&self, other: &str) -> bool {
        self.eq_str(other)
    }
}

impl PartialEq<&str> for JsonStr<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.eq_str(other)
    }
}

/// Decodes the escape at the start of `b` (which begins with `\`): the character and the
/// number of bytes it spans. `None` for anything malformed.
#[inline]
fn decode_escape(b: &[u8]) -> Option<(char, usize)> {
    let c = match *b.get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(b, 2)?;
            if (0xD800..0xDC00).contains(&unit) {
                if b.get(6..8)? != b"\\u" {
                    return None;
                }
                let low = hex4(b, 8)?;
                if !(0xDC00..0xE000).contains(&low) {
                    return None;
                }
                let c = 0x1_0000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                return char::from_u32(c).map(|c| (c, 12));
            }
            // `from_u32` rejects a lone low surrogate.
            return char::from_u32(unit).map(|c| (c, 6));
        }
        _ => return None,
    };
    Some((c, 2))
}

/// A piece of a string's decoded content.
enum Segment<'a> {
    /// A run of text without escapes, borrowed as is.
    Text(&'a str),
    /// One decoded escape.
    Char(char),
}

/// Splits escaped string content into [`Segment`]s; stops at a malformed escape.
struct Segments<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Segments<'a> {
    type Item = Segment<'a>;
    #[inline]
    fn next(&mut self) -> Option<Segment<'a>> {
        let b = self.rest.as_bytes();
        if b.is_empty() {
            return None;
        }
        if b.first() == Some(&b'\\') {
            match decode_escape(b) {
                Some((c, len)) => {
                    self.rest = self.rest.get(len..).unwrap_or("");
                    Some(Segment::Char(c))
                }
                None => {
                    self.rest = "";
                    None
                }
            }
        } else {
            // Validated content stops `skip_plain` only at backslashes; step over anything
            // else (odd text) as plain.
            let mut end = 0;
            loop {
                end = skip_plain(b, end);
                match b.get(end) {
                    Some(b'\\') | None => break,
                    Some(_) => end += 1,
                }
            }
            let text = self.rest.get(..end)?;
            self.rest = self.rest.get(end..).unwrap_or("");
            Some(Segment::Text(text))
        }
    }
}

/// Iterator over the decoded characters of a [`JsonStr`].
#[derive(Clone, Debug)]
pub struct Chars<'a> {
    pub(crate) rest: &'a str,
}

impl Iterator for Chars<'_> {
    type Item = char;
    fn next(&mut self) -> Option<char> {
        if self.rest.as_bytes().first() == Some(&b'\\') {
            match decode_escape(self.rest.as_bytes()) {
                Some((c, len)) => {
                    self.rest = self.rest.get(len..).unwrap_or("");
                    Some(c)
                }
                None => {
                    self.rest = "";
                    None
                }
            }
        } else {
            let mut chars = self.rest.chars();
            let c = chars.next()?;
            self.rest = chars.as_str();
            Some(c)
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        // Every char takes 1..=12 source bytes (4 UTF-8 bytes at most / 12 for a pair).
        let len = self.rest.len();
        (len.div_ceil(12), Some(len))
    }
}

impl FusedIterator for Chars<'_> {}

#[cfg(test)]
mod tests {
    use super::super::{parse, Limits};
    use super::*;
    use std::format;
    use std::string::{String, ToString};
    use std::vec::Vec;

    fn p(text: &str) -> RawJson<'_> {
        parse(text.as_bytes(), Limits::default()).expect(text)
    }

    fn s(raw: &str) -> JsonStr<'_> {
        JsonStr { raw }
    }

    /// `scalars!` cases: input => (kind, is_null, as_bool, as_i64, as_u64, as_f64).
    macro_rules! scalars {
        ($($name:ident: $input:expr => ($kind:ident, $null:expr, $b:expr, $i:expr, $u:expr, $f:expr);)*) => {$(
            #[test]
            fn $name() {
                let v = p($input);
                assert_eq!(v.kind(), Kind::$kind, "kind");
                assert_eq!(v.is_null(), $null, "is_null");
                assert_eq!(v.as_bool(), $b, "as_bool");
                assert_eq!(v.as_i64(), $i, "as_i64");
                assert_eq!(v.as_u64(), $u, "as_u64");
                assert_eq!(v.as_f64(), $f, "as_f64");
                if Kind::$kind != Kind::String {
                    assert!(v.as_string().is_none());
                }
                if Kind::$kind != Kind::Object {
                    assert!(v.members().is_none() && v.get("a").is_none());
                }
                if Kind::$kind != Kind::Array {
                    assert!(v.elements().is_none());
                }
            }
        )*};
    }

    scalars! {
        sc_null: " null " => (Null, true, None, None, None, None);
        sc_true: "true" => (Bool, false, Some(true), None, None, None);
        sc_false: "false" => (Bool, false, Some(false), None, None, None);
        sc_zero: "0" => (Number, false, None, Some(0), Some(0), Some(0.0));
        sc_neg_zero: "-0" => (Number, false, None, Some(0), Some(0), Some(-0.0));
        sc_int: "42" => (Number, false, None, Some(42), Some(42), Some(42.0));
        sc_neg: "-42" => (Number, false, None, Some(-42), None, Some(-42.0));
        sc_i64_max: "9223372036854775807" =>
            (Number, false, None, Some(i64::MAX), Some(i64::MAX as u64), Some(9.223372036854776e18));
        sc_i64_min: "-9223372036854775808" =>
            (Number, false, None, Some(i64::MIN), None, Some(-9.223372036854776e18));
        sc_i64_over: "9223372036854775808" =>
            (Number, false, None, None, Some(1 << 63), Some(9.223372036854776e18));
        sc_i64_under: "-9223372036854775809" =>
            (Number, false, None, None, None, Some(-9.223372036854776e18));
        sc_u64_max: "18446744073709551615" =>
            (Number, false, None, None, Some(u64::MAX), Some(1.8446744073709552e19));
        sc_u64_over: "18446744073709551616" =>
            (Number, false, None, None, None, Some(1.8446744073709552e19));
        sc_frac: "1.5" => (Number, false, None, None, None, Some(1.5));
        sc_integral_frac: "2.0" => (Number, false, None, None, None, Some(2.0));
        sc_exp: "1e2" => (Number, false, None, None, None, Some(100.0));
        sc_neg_exp: "-25E-1" => (Number, false, None, None, None, Some(-2.5));
        sc_inf: "1e400" => (Number, false, None, None, None, Some(f64::INFINITY));
        sc_tiny: "1e-400" => (Number, false, None, None, None, Some(0.0));
        sc_string: r#""x""# => (String, false, None, None, None, None);
        sc_number_string: r#""12""# => (String, false, None, None, None, None);
        sc_array: "[1]" => (Array, false, None, None, None, None);
        sc_object: r#"{"a":1}"# => (Object, false, None, None, None, None);
    }

    /// `strings!` cases: JSON string text => (has_escapes, decoded).
    macro_rules! strings {
        ($($name:ident: $input:expr => ($esc:expr, $decoded:expr);)*) => {$(
            #[test]
            fn $name() {
                let js = p($input).as_string().expect("string");
                let decoded: &str = $decoded;
                assert_eq!(js.raw(), &$input[1..$input.len() - 1]);
                assert_eq!(js.has_escapes(), $esc);
                assert_eq!(js.as_borrowed(), if $esc { None } else { Some(decoded) });
                assert_eq!(js.chars().collect::<String>(), decoded);
                assert_eq!(js.decoded_len(), decoded.len());
                assert!(js.eq_str(decoded));
                assert!(js == decoded && js == *decoded);
                let mut buf = [0u8; 64];
                assert_eq!(js.decode_into(&mut buf), Ok(decoded));
                let mut exact = std::vec![0u8; decoded.len()];
                assert_eq!(js.decode_into(&mut exact), Ok(decoded));
                if !decoded.is_empty() {
                    let mut short = std::vec![0u8; decoded.len() - 1];
                    assert_eq!(
                        js.decode_into(&mut short),
                        Err(BufferTooSmall { required: decoded.len() })
                    );
                    // Mismatches: one char dropped, one added, last char changed.
                    let mut cs: Vec<char> = decoded.chars().collect();
                    let dropped: String = cs[..cs.len() - 1].iter().collect();
                    assert!(!js.eq_str(&dropped));
                    assert!(!js.eq_str(&format!("{decoded}x")));
                    let last = cs.last_mut().unwrap();
                    *last = if *last == 'z' { 'y' } else { 'z' };
                    assert!(!js.eq_str(&cs.iter().collect::<String>()));
                } else {
                    assert!(!js.eq_str("a"));
                }
            }
        )*};
    }

    strings! {
        st_empty: r#""""# => (false, "");
        st_plain: r#""hello world""# => (false, "hello world");
        st_utf8: "\"gr\u{fc}\u{df}e \u{1F600}\"" => (false, "gr\u{fc}\u{df}e \u{1F600}");
        st_quote: r#""say \"hi\"""# => (true, "say \"hi\"");
        st_all_simple: r#""\"\\\/\b\f\n\r\t""# => (true, "\"\\/\u{8}\u{c}\n\r\t");
        st_unicode: r#""\u0041\u00e9\u20AC""# => (true, "A\u{e9}\u{20ac}");
        st_nul: r#""a\u0000b""# => (true, "a\0b");
        st_pair: r#""\uD83D\uDE00""# => (true, "\u{1F600}");
        st_pair_lower: r#""x\ud834\udd1ey""# => (true, "x\u{1D11E}y");
        st_max_pair: r#""\uDBFF\uDFFF""# => (true, "\u{10FFFF}");
        st_bmp_edges: r#""\uD7FF\uE000\uFFFF""# => (true, "\u{D7FF}\u{E000}\u{FFFF}");
        st_mixed: "\"\u{e9}\\n\u{1F600}\\u00e9end\"" => (true, "\u{e9}\n\u{1F600}\u{e9}end");
        st_escaped_backslash_u: r#""\\u0041""# => (true, "\\u0041");
        st_trailing_escape: r#""abc\\""# => (true, "abc\\");
    }

    #[test]
    fn members_and_elements_walk_nested_data() {
        let v = p(r#" { "a" : [1, {"x":"]}"}, [[]], "q\"]"] ,
            "b":{"c":{"d":[true,false,null]}}, "e" : -1.5e3 ,"f":"" } "#);
        let keys: Vec<&str> = v.members().unwrap().map(|(k, _)| k.raw()).collect();
        assert_eq!(keys, ["a", "b", "e", "f"]);
        let a = v.get("a").unwrap();
        assert_eq!(a.as_str(), r#"[1, {"x":"]}"}, [[]], "q\"]"]"#);
        let items: Vec<&str> = a.elements().unwrap().map(|e| e.as_str()).collect();
        assert_eq!(items, ["1", r#"{"x":"]}"}"#, "[[]]", r#""q\"]""#]);
        assert_eq!(
            a.index(1)
                .unwrap()
                .get("x")
                .unwrap()
                .as_string()
                .unwrap()
                .raw(),
            "]}"
        );
        assert_eq!(
            a.index(2)
                .unwrap()
                .index(0)
                .unwrap()
                .elements()
                .unwrap()
                .count(),
            0
        );
        assert!(a.index(4).is_none());
        let d = v
            .get("b")
            .and_then(|b| b.get("c"))
            .and_then(|c| c.get("d"))
            .unwrap();
        let kinds: Vec<Kind> = d.elements().unwrap().map(|e| e.kind()).collect();
        assert_eq!(kinds, [Kind::Bool, Kind::Bool, Kind::Null]);
        assert_eq!(v.get("e").unwrap().as_f64(), Some(-1500.0));
        assert_eq!(v.get("f").unwrap().as_string().unwrap().raw(), "");
        assert!(v.get("g").is_none());
        assert!(v.get("").is_none());
        // Iterators are fused.
        let mut it = v.members().unwrap();
        assert_eq!(it.by_ref().count(), 4);
        assert!(it.next().is_none());
    }

    #[test]
    fn empty_containers() {
        assert_eq!(p("[]").elements().unwrap().count(), 0);
        assert_eq!(p("[ \n ]").elements().unwrap().count(), 0);
        assert_eq!(p("{}").members().unwrap().count(), 0);
        assert_eq!(p("{ \t }").members().unwrap().count(), 0);
        assert!(p("{}").get("a").is_none());
    }

    #[test]
    fn keys_with_escapes() {
        let v = p(r#"{"a\u0062":1,"\"q\"":2,"\uD83D\uDE00":3,"tab\t":4,"\/":5}"#);
        assert_eq!(v.get("ab").unwrap().as_i64(), Some(1));
        assert_eq!(v.get("\"q\"").unwrap().as_i64(), Some(2));
        assert_eq!(v.get("\u{1F600}").unwrap().as_i64(), Some(3));
        assert_eq!(v.get("tab\t").unwrap().as_i64(), Some(4));
        assert_eq!(v.get("/").unwrap().as_i64(), Some(5));
        assert!(v.get("a\\u0062").is_none());
        let (k, _) = v.members().unwrap().next().unwrap();
        assert!(k.has_escapes() && k.as_borrowed().is_none() && k == "ab");
    }

    #[test]
    fn get_returns_first_duplicate() {
        let v = p(r#"{"id":1,"x":{"id":9},"id":2,"i\u0064":3}"#);
        assert_eq!(v.get("id").unwrap().as_i64(), Some(1));
        assert_eq!(v.members().unwrap().filter(|(k, _)| k == "id").count(), 3);
    }

    #[test]
    fn large_and_deep_documents() {
        let big = format!("[{}0]", "1,".repeat(10_000));
        let v = p(&big);
        assert_eq!(v.elements().unwrap().count(), 10_001);
        assert_eq!(
            v.elements()
                .unwrap()
                .filter_map(|e| e.as_u64())
                .sum::<u64>(),
            10_000
        );

        let depth = 128;
        let mut text = "{\"k\":".repeat(depth - 1);
        text.push_str("[7]");
        text.push_str(&"}".repeat(depth - 1));
        let limits = Limits {
            max_depth: super::super::MAX_DEPTH_LIMIT,
        };
        let mut v = parse(text.as_bytes(), limits).unwrap();
        for _ in 0..depth - 1 {
            v = v.get("k").unwrap();
        }
        assert_eq!(v.index(0).unwrap().as_i64(), Some(7));

        let digits = "7".repeat(10_000);
        let n = p(&digits);
        assert_eq!(n.as_i64(), None);
        assert_eq!(n.as_u64(), None);
        assert_eq!(n.as_f64(), Some(f64::INFINITY));
    }

    #[test]
    fn skipping_at_every_alignment() {
        for pad in 0..20 {
            let ws = " ".repeat(pad);
            let digits = "1234567890".repeat(pad % 4);
            let text = format!(
                r#"[{ws}{{"a\"]":"]}}[{{\\","b":[{digits}0,{ws}"x"]}}{ws},{ws}[{ws}"{{"{ws}]{ws},-{digits}1{ws}]"#
            );
            let v = p(&text);
            let items: Vec<&str> = v.elements().unwrap().map(|e| e.as_str()).collect();
            assert_eq!(items.len(), 3, "{text}");
            assert_eq!(
                items[0],
                format!(r#"{{"a\"]":"]}}[{{\\","b":[{digits}0,{ws}"x"]}}"#)
            );
            assert_eq!(items[1], format!(r#"[{ws}"{{"{ws}]"#));
            assert_eq!(items[2], format!("-{digits}1"));
            let first = v.index(0).unwrap();
            assert_eq!(first.get("a\"]").unwrap().as_string().unwrap(), "]}[{\\");
            assert_eq!(first.get("b").unwrap().elements().unwrap().count(), 2);
        }
    }

    #[test]
    fn odd_text_never_panics() {
        let odd = [
            "",
            "[",
            "{",
            "[1,",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1,",
            "[\"abc",
            "{\"a\\",
            "[[[",
            "]]]",
            "[}",
            "{]",
            "{1:2}",
            "[,]",
            "{\"a\" 1}",
            "\"",
            "\"\\",
            "-",
            "x",
            "[\"\\\"]",
            "{\"a\":[}",
            "[1 2]",
        ];
        for text in odd {
            let v = RawJson { text };
            let _ = (
                v.kind(),
                v.as_bool(),
                v.as_i64(),
                v.as_u64(),
                v.as_f64(),
                v.is_null(),
            );
            let _ = v.as_string().map(|s| (s.chars().count(), s.decoded_len()));
            if let Some(m) = v.members() {
                assert!(m.take(10).count() <= 10);
            }
            if let Some(e) = v.elements() {
                assert!(e.take(10).count() <= 10);
            }
            let _ = v.get("a");
            let _ = v.index(3);
            // The same texts as object/array bodies.
            let _ = Members { rest: text }.take(10).count();
            let _ = Elements { rest: text }.take(10).count();
        }
        for raw in [
            "\\",
            "\\u12",
            "\\uD800",
            "\\uDC00",
            "\\uD800\\u0041",
            "a\\x",
            "\\uZZZZ",
        ] {
            let js = s(raw);
            assert!(js.chars().count() <= raw.len());
            assert!(js.decoded_len() <= raw.len());
            assert_eq!(
                js.decoded_len(),
                js.chars().map(char::len_utf8).sum::<usize>()
            );
            assert!(!js.eq_str("\u{fffd}"));
            let mut buf = [0u8; 16];
            let _ = js.decode_into(&mut buf);
            let _ = js.decode_into(&mut []);
        }
        assert_eq!(s("a\\x").chars().collect::<String>(), "a");
    }

    /// Walks every view of `v` (test only), returning the number of values seen.
    fn walk_all(v: RawJson<'_>, budget: &mut usize) -> usize {
        if *budget == 0 {
            return 0;
        }
        *budget -= 1;
        let _ = (v.kind(), v.as_bool(), v.as_i64(), v.as_u64(), v.as_f64());
        if let Some(js) = v.as_string() {
            let n: usize = js.chars().map(char::len_utf8).sum();
            assert_eq!(js.decoded_len(), n);
            let mut buf = [0u8; 64];
            if let Ok(decoded) = js.decode_into(&mut buf) {
                assert!(js.eq_str(decoded));
            }
        }
        let mut seen = 1;
        for (k, value) in v.members().into_iter().flatten() {
            let _ = k.decoded_len();
            seen += walk_all(value, budget);
        }
        for value in v.elements().into_iter().flatten() {
            seen += walk_all(value, budget);
        }
        seen
    }

    #[test]
    fn views_on_mutated_text_never_panic() {
        let doc = r#"{"a":[1,-2.5e3,"x\"y\\",{"b\u0063":null,"d":[true,false,[]]}],"e":"\uD83D\uDE00\u00e9","f":{}}"#;
        assert_eq!(walk_all(p(doc), &mut 1000), 13);
        let mut state: u32 = 12345;
        for _ in 0..3000 {
            let mut m = doc.as_bytes().to_vec();
            for _ in 0..3 {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let pos = (state >> 8) as usize % m.len();
                let c = b"[]{}\",:\\u x0"[(state >> 24) as usize % 12];
                if state & 1 == 0 {
                    m[pos] = c;
                } else {
                    m.remove(pos);
                }
            }
            let text = String::from_utf8_lossy(&m);
            // Straight into the views, without validation.
            walk_all(RawJson { text: &text }, &mut 1000);
        }
    }

    #[test]
    fn chars_size_hint_is_sound() {
        for raw in ["", "abc", "\\uD83D\\uDE00", "\u{1F600}", "\\n\\t"] {
            let it = s(raw).chars();
            let (lo, hi) = it.size_hint();
            let n = it.count();
            assert!(lo <= n && n <= hi.unwrap(), "{raw}");
        }
    }

    // ---- differential test against serde_json ----

    use serde_json::Value;

    /// Builds a `serde_json::Value` from our views (test only; recursion is fine here).
    fn to_value(v: RawJson<'_>) -> Value {
        match v.kind() {
            Kind::Null => {
                assert!(v.is_null());
                Value::Null
            }
            Kind::Bool => Value::Bool(v.as_bool().unwrap()),
            Kind::Number => {
                // Mirror serde_json: non-negative integers as u64, negative ones as i64,
                // `-0`, fractions, exponents and out-of-range integers as f64.
                let negative = v.as_str().starts_with('-');
                match (v.as_u64(), v.as_i64()) {
                    (Some(u), _) if !negative => Value::from(u),
                    (_, Some(i)) if i < 0 => Value::from(i),
                    _ => Value::from(v.as_f64().unwrap()),
                }
            }
            Kind::String => {
                let js = v.as_string().unwrap();
                let decoded: String = js.chars().collect();
                assert_eq!(js.decoded_len(), decoded.len());
                assert!(js.eq_str(&decoded));
                Value::String(decoded)
            }
            Kind::Array => Value::Array(v.elements().unwrap().map(to_value).collect()),
            Kind::Object => {
                let mut map = serde_json::Map::new();
                for (k, val) in v.members().unwrap() {
                    // Later duplicates win, as in serde_json.
                    map.insert(k.chars().collect(), to_value(val));
                }
                Value::Object(map)
            }
        }
    }

    fn differential_inputs() -> Vec<Vec<u8>> {
        let handwritten: &[&str] = &[
            "null",
            "true",
            "false",
            "0",
            "-0",
            "1",
            "-1",
            "0.0",
            "-0.0",
            "1.5",
            "1e5",
            "1E+5",
            "1e-5",
            "-1.25e-3",
            "123456789012345678901234567890",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "0.1",
            "2.2250738585072014e-308",
            "4.9e-324",
            "1.7976931348623157e308",
            "1e400",
            "-1e400",
            "1e-400",
            "[]",
            "{}",
            "[[]]",
            "[{}]",
            r#"{"a":[]}"#,
            r#""""#,
            r#""a""#,
            r#""\u0000""#,
            r#""\uD83D\uDE00""#,
            r#""\uD800""#,
            r#""\uDC00""#,
            r#""\uD800\uDC00""#,
            r#""\uDBFF\uDFFF""#,
            r#""\uD800\u0041""#,
            r#""\ud800\udc00""#,
            r#""\"\\\/\b\f\n\r\t""#,
            r#""\a""#,
            r#""\x00""#,
            r#""\u00""#,
            r#""\u00zz""#,
            "\"\t\"",
            "\"\n\"",
            "\"\u{1f}\"",
            "\"\u{7f}\"",
            "\"\u{e9}\u{1F600}\"",
            "01",
            "-01",
            "00",
            "-",
            "+1",
            ".5",
            "1.",
            "1.e1",
            "1e",
            "1e+",
            "-a",
            "0x1",
            "NaN",
            "Infinity",
            "-Infinity",
            "nul",
            "tru",
            "fals",
            "nulll",
            "True",
            "'a'",
            "[1,]",
            "[,1]",
            "[1,,2]",
            "{\"a\":1,}",
            "{,}",
            "{\"a\"}",
            "{\"a\":}",
            "{a:1}",
            "{1:1}",
            "[1 2]",
            "[1}",
            "{]",
            "[",
            "]",
            "{",
            "}",
            "",
            " ",
            "\t\n\r ",
            " 1 ",
            "\u{a0}1",
            "\u{feff}1",
            "1 2",
            "[] []",
            "[]x",
            "/*c*/1",
            "1//c",
            "[\"a\",\"b\"]",
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"b":{"c":[1,2,{"d":null}]}}}"#,
            r#"{"":""}"#,
            r#"{"\u0061":"\u0062"}"#,
            r#"[1.0,2.50,-3e0,4E2]"#,
            r#"{"k":"v","k2":[true,false,null]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}"#,
            "[\"\\u0041\\u0042\"]",
            "[-]",
            "[-1.]",
            "[1e]",
            "[01]",
            "{\"a\":01}",
            "[\"unterminated]",
            "\"\\",
            "\"\\u",
            "\"\\uD800\\",
            "\"\\uD800\\u",
            "[1]]",
            "[[1]",
            "{\"a\":1}}",
            "{\"a\":{}",
            "[true,false,null,0,\"\",[],{}]",
            "\"\u{2028}\u{2029}\"",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "-0e0",
            "0e-0",
            "1E00",
        ];
        let mut inputs: Vec<Vec<u8>> = handwritten.iter().map(|s| s.as_bytes().to_vec()).collect();
        inputs.push(b"\"\xff\"".to_vec());
        inputs.push(b"[\"\xc3\"]".to_vec());
        inputs.push(b"\xef\xbb\xbf1".to_vec());
        // Depth around serde_json's recursion limit (127 levels pass, 128 do not).
        for depth in [1usize, 2, 64, 126, 127, 129, 200] {
            inputs.push(format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes());
            inputs.push(format!("{}0{}", "{\"a\":".repeat(depth), "}".repeat(depth)).into_bytes());
        }
        // Seeded mutations of realistic documents.
        let seeds: &[&str] = &[
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Z\u00fcrich","days":[1,2,3],"metric":true}}}"#,
            r#"[{"a":-1.5e-3,"b":"x\ny\"z","c":null},[true,false],"\uD83D\uDE00",0,{}]"#,
            r#"{"s":"\u00e9\t\\","n":[0,-0,12.5E+2,99999999999999999999],"o":{"":[[[]]]}}"#,
            "[\"\u{e9}\u{1F600}\", 1 , \n {\"k\" : \"v\"}\t]",
        ];
        let alphabet: &[u8] = b"[]{},:\"\\ 0123456789-+.eEtrufalsn\t\nu/bDx\x01\xc3\xa9";
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rand = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for seed in seeds {
            inputs.push(seed.as_bytes().to_vec());
            for _ in 0..150 {
                let mut m = seed.as_bytes().to_vec();
                for _ in 0..1 + rand(3) {
                    let pos = rand(m.len());
                    let c = alphabet[rand(alphabet.len())];
                    match rand(4) {
                        0 => {
                            m.remove(pos);
                        }
                        1 => m.insert(pos, c),
                        2 => m[pos] = c,
                        _ => m.truncate(pos),
                    }
                    if m.is_empty() {
                        break;
                    }
                }
                inputs.push(m);
            }
        }
        inputs
    }

    #[test]
    fn differential_against_serde_json() {
        let limits = Limits {
            max_depth: super::super::MAX_DEPTH_LIMIT,
        };
        let inputs = differential_inputs();
        assert!(inputs.len() > 600);
        let (mut accepted, mut rejected, mut out_of_range) = (0, 0, 0);
        for input in &inputs {
            let ours = parse(input, limits);
            let theirs = serde_json::from_slice::<Value>(input);
            let shown = String::from_utf8_lossy(input);
            match (&ours, &theirs) {
                (Ok(v), Ok(expected)) => {
                    assert_eq!(&to_value(*v), expected, "values differ for {shown:?}");
                    accepted += 1;
                }
                (Err(_), Err(_)) => rejected += 1,
                // Documented differences: JSON has no number range, serde_json does.
                (Ok(_), Err(e)) if e.to_string().contains("number out of range") => {
                    out_of_range += 1;
                }
                // serde_json stops at 127 levels; we allow MAX_DEPTH_LIMIT (128).
                (Ok(_), Err(e)) if e.to_string().contains("recursion limit") => {}
                _ => panic!("disagreement on {shown:?}: ours {ours:?}, serde_json {theirs:?}"),
            }
        }
        assert!(accepted > 50, "only {accepted} accepted");
        assert!(rejected > 200, "only {rejected} rejected");
        assert!(out_of_range >= 2, "1e400 and -1e400 are valid JSON");
    }
}
