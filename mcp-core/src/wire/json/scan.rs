//! The validating scanner: one pass over a complete JSON text.

use core::fmt;

use super::RawJson;

/// Default maximum nesting depth of arrays and objects.
pub const DEFAULT_MAX_DEPTH: u8 = 32;
/// Largest depth [`Limits::max_depth`] may be set to (the bit stack's size).
pub const MAX_DEPTH_LIMIT: u8 = 128;

/// Bounds applied while scanning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum nesting depth of arrays/objects; `[[1]]` has depth 2, a scalar depth 0.
    /// Values above [`MAX_DEPTH_LIMIT`] are clamped to it.
    pub max_depth: u8,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// Why a text is not accepted. `offset` is the byte offset of the problem.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanError {
    /// The input is empty or only whitespace.
    Empty,
    /// The input is not valid UTF-8.
    InvalidUtf8 {
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// The text ended inside a value.
    UnexpectedEnd,
    /// A byte that cannot start or continue a value here.
    UnexpectedByte {
        /// Offset of the byte.
        offset: usize,
    },
    /// A comma directly before `]` or `}`.
    TrailingComma {
        /// Offset of the comma.
        offset: usize,
    },
    /// A malformed number (leading zero, missing digits, bare `-`, ...).
    InvalidNumber {
        /// Offset where the number starts.
        offset: usize,
    },
    /// An unknown escape or a malformed `\u` escape.
    InvalidEscape {
        /// Offset of the backslash.
        offset: usize,
    },
    /// A `\uD800`-`\uDFFF` escape that is not a high/low surrogate pair.
    LoneSurrogate {
        /// Offset of the backslash.
        offset: usize,
    },
    /// An unescaped control character (U+0000..U+001F) inside a string.
    ControlCharacter {
        /// Offset of the character.
        offset: usize,
    },
    /// Nesting deeper than [`Limits::max_depth`].
    TooDeep {
        /// Offset of the bracket that went too deep.
        offset: usize,
        /// The limit in force.
        limit: u8,
    },
    /// Non-whitespace after the top-level value.
    TrailingCharacters {
        /// Offset of the first extra byte.
        offset: usize,
    },
}

impl ScanError {
    /// The byte offset the error refers to, if it has one ([`Empty`](Self::Empty) and
    /// [`UnexpectedEnd`](Self::UnexpectedEnd) do not).
    pub fn offset(&self) -> Option<usize> {
        match *self {
            ScanError::Empty | ScanError::UnexpectedEnd => None,
            ScanError::InvalidUtf8 { offset }
            | ScanError::UnexpectedByte { offset }
            | ScanError::TrailingComma { offset }
            | ScanError::InvalidNumber { offset }
            | ScanError::InvalidEscape { offset }
            | ScanError::LoneSurrogate { offset }
            | ScanError::ControlCharacter { offset }
            | ScanError::TooDeep { offset, .. }
            | ScanError::TrailingCharacters { offset } => Some(offset),
        }
    }
}

impl ScanError {
    /// The message as parts (no `core::fmt` needed to write it; see
    /// [`JsonWriter::string_parts`](super::JsonWriter::string_parts)).
    pub fn message_parts(&self) -> [super::StrPart<'static>; 4] {
        use super::StrPart::{Number, Text};
        let at = |prefix, offset: usize| [Text(prefix), Number(offset as u64), Text(""), Text("")];
        match *self {
            ScanError::Empty => [
                Text("empty JSON text (no value, only whitespace)"),
                Text(""),
                Text(""),
                Text(""),
            ],
            ScanError::UnexpectedEnd => [
                Text("unexpected end of JSON text inside a value"),
                Text(""),
                Text(""),
                Text(""),
            ],
            ScanError::InvalidUtf8 { offset } => at("invalid UTF-8 at byte offset ", offset),
            ScanError::UnexpectedByte { offset } => at("unexpected byte at offset ", offset),
            ScanError::TrailingComma { offset } => at("trailing comma at offset ", offset),
            ScanError::InvalidNumber { offset } => {
                at("malformed number starting at offset ", offset)
            }
            ScanError::InvalidEscape { offset } => at("invalid escape sequence at offset ", offset),
            ScanError::LoneSurrogate { offset } => {
                at("unpaired UTF-16 surrogate escape at offset ", offset)
            }
            ScanError::ControlCharacter { offset } => {
                at("unescaped control character in string at offset ", offset)
            }
            ScanError::TooDeep { offset, limit } => [
                Text("nesting deeper than the limit of "),
                Number(u64::from(limit)),
                Text(" levels at offset "),
                Number(offset as u64),
            ],
            ScanError::TrailingCharacters { offset } => at(
                "unexpected characters after the JSON value at offset ",
                offset,
            ),
        }
    }
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in self.message_parts() {
            match part {
                super::StrPart::Text(t) | super::StrPart::Escaped(t) => f.write_str(t)?,
                super::StrPart::Number(n) => write!(f, "{n}")?,
            }
        }
        Ok(())
    }
}

impl core::error::Error for ScanError {}

/// Validates `input` as exactly one JSON value (surrounding whitespace allowed) and returns a
/// view of the value without that whitespace.
///
/// The input must be UTF-8 (checked first). Validation is strict RFC 8259: no trailing
/// commas, comments, single quotes, `NaN`/`Infinity`, leading zeros, unknown or malformed
/// escapes, unpaired surrogate escapes or raw control characters in strings. Arrays and
/// objects may nest at most `min(limits.max_depth, MAX_DEPTH_LIMIT)` levels. The scan is a
/// single iterative pass (no recursion) and never panics.
pub fn parse(input: &[u8], limits: Limits) -> Result<RawJson<'_>, ScanError> {
    let text = core::str::from_utf8(input).map_err(|e| ScanError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })?;
    let bytes = text.as_bytes();
    let start = skip_ws(bytes, 0);
    if start >= bytes.len() {
        return Err(ScanError::Empty);
    }
    let max_depth = if limits.max_depth > MAX_DEPTH_LIMIT {
        MAX_DEPTH_LIMIT
    } else {
        limits.max_depth
    };
    let end = scan_value(bytes, start, max_depth)?;
    let after = skip_ws(bytes, end);
    if after < bytes.len() {
        return Err(ScanError::TrailingCharacters { offset: after });
    }
    // `start` and `end` sit on ASCII bytes (or the end), so this never fails.
    match text.get(start..end) {
        Some(text) => Ok(RawJson { text }),
        None => Err(ScanError::UnexpectedEnd),
    }
}

/// Returns the index of the first non-whitespace byte at or after `i` (or `b.len()`).
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// The machine word the byte-parallel (SWAR) scans work in: eight bytes on 64-bit hosts,
/// four on 32-bit microcontrollers (where 64-bit arithmetic would cost code and cycles).
pub(crate) type Word = usize;
/// Bytes per [`Word`].
pub(crate) const WORD: usize = core::mem::size_of::<Word>();
/// `0x01` in every byte lane.
pub(crate) const LO: Word = Word::MAX / 0xFF;
/// `0x80` in every byte lane.
pub(crate) const HI: Word = LO << 7;

/// For a word of bytes packed little-endian: high bit set in each byte lane that may hold `"`,
/// `\` or a control byte (< 0x20). The lowest flagged lane is always a real match.
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
fn special_lanes(x: Word) -> Word {
    let quote = x ^ (LO * b'"' as Word);
    let backslash = x ^ (LO * b'\\' as Word);
    let has_quote = quote.wrapping_sub(LO) & !quote;
    let has_backslash = backslash.wrapping_sub(LO) & !backslash;
    let has_control = x.wrapping_sub(LO * 0x20) & !x;
    (has_quote | has_backslash | has_control) & HI
}

/// Returns the index of the first byte at or after `i` that is `"`, `\` or a control byte
/// (< 0x20), or `b.len()` if there is none. Skips eight bytes per step.
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
pub(crate) fn skip_plain(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..).and_then(<[u8]>::first_chunk::<WORD>) {
        let lanes = special_lanes(Word::from_le_bytes(*chunk));
        if lanes != 0 {
            return i + (lanes.trailing_zeros() / 8) as usize;
        }
        i += WORD;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            break;
        }
        i += 1;
    }
    i
}

/// Value of one ASCII hex digit.
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
fn hex_val(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some(u32::from(c - b'0')),
        b'a'..=b'f' => Some(u32::from(c - b'a') + 10),
        b'A'..=b'F' => Some(u32::from(c - b'A') + 10),
        _ => None,
    }
}

/// The code unit written as four hex digits at `b[i..i + 4]`.
#[inline]
pub(crate) fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let digits = b.get(i..)?.first_chunk::<4>()?;
    let mut v = 0u32;
    for &c in digits {
        v = (v << 4) | hex_val(c)?;
    }
    Some(v)
}

/// Validates the escape whose backslash is at `i`; returns the index after it.
#[inline(never)]
fn scan_escape(b: &[u8], i: usize) -> Result<usize, ScanError> {
    match b.get(i + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(i + 2),
        Some(b'u') => {
            let unit = match hex4(b, i + 2) {
                Some(unit) => unit,
                None => return Err(truncated_or(b, i, i + 2)),
            };
            match unit {
                0xD800..=0xDBFF => {
                    let low = i + 6;
                    match (b.get(low), b.get(low + 1)) {
                        (Some(b'\\'), Some(b'u')) => match hex4(b, low + 2) {
                            Some(0xDC00..=0xDFFF) => Ok(i + 12),
                            Some(_) => Err(ScanError::LoneSurrogate { offset: i }),
                            None => Err(truncated_or(b, low, low + 2)),
                        },
                        (None, _) | (Some(b'\\'), None) => Err(ScanError::UnexpectedEnd),
                        _ => Err(ScanError::LoneSurrogate { offset: i }),
                    }
                }
                0xDC00..=0xDFFF => Err(ScanError::LoneSurrogate { offset: i }),
                _ => Ok(i + 6),
            }
        }
        Some(_) => Err(ScanError::InvalidEscape { offset: i }),
        None => Err(ScanError::UnexpectedEnd),
    }
}

/// Error for a `\u` escape (backslash at `backslash`) whose hex digits start at `digits` and
/// are not four valid hex digits: `UnexpectedEnd` if the input simply stops early.
#[cold]
fn truncated_or(b: &[u8], backslash: usize, digits: usize) -> ScanError {
    let rest = b.get(digits..).unwrap_or(&[]);
    if rest.len() < 4 && rest.iter().all(|&c| hex_val(c).is_some()) {
        ScanError::UnexpectedEnd
    } else {
        ScanError::InvalidEscape { offset: backslash }
    }
}

/// Validates the string whose opening quote is at `start`; returns the index after the
/// closing quote.
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
fn scan_string(b: &[u8], start: usize) -> Result<usize, ScanError> {
    let mut i = start + 1;
    loop {
        i = skip_plain(b, i);
        match b.get(i) {
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => i = scan_escape(b, i)?,
            Some(_) => return Err(ScanError::ControlCharacter { offset: i }),
            None => return Err(ScanError::UnexpectedEnd),
        }
    }
}

/// Index of the first non-digit at or after `i`.
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
fn skip_digits(b: &[u8], mut i: usize) -> usize {
    while let Some(b'0'..=b'9') = b.get(i) {
        i += 1;
    }
    i
}

/// Validates the number starting at `start` (a `-` or digit); returns the index after it.
#[inline]
fn scan_number(b: &[u8], start: usize) -> Result<usize, ScanError> {
    let err = ScanError::InvalidNumber { offset: start };
    let mut i = start;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => {
            i += 1;
            if let Some(b'0'..=b'9') = b.get(i) {
                return Err(err);
            }
        }
        Some(b'1'..=b'9') => i = skip_digits(b, i + 1),
        _ => return Err(err),
    }
    if b.get(i) == Some(&b'.') {
        let digits = i + 1;
        i = skip_digits(b, digits);
        if i == digits {
            return Err(err);
        }
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let digits = i;
        i = skip_digits(b, digits);
        if i == digits {
            return Err(err);
        }
    }
    Ok(i)
}

/// Matches the literal `lit` at `i`; returns the index after it.
#[inline]
fn scan_literal(b: &[u8], i: usize, lit: &[u8]) -> Result<usize, ScanError> {
    // Byte by byte (no slice comparison: that is a call to `memcmp`, #21).
    let end = i + lit.len();
    for (k, &expected) in lit.iter().enumerate() {
        match b.get(i + k) {
            Some(&c) if c == expected => {}
            Some(_) => return Err(ScanError::UnexpectedByte { offset: i + k }),
            None => return Err(ScanError::UnexpectedEnd),
        }
    }
    Ok(end)
}

/// Validates an object key (opening quote at `i`), the following `:` and whitespace; returns
/// the index of the member's value.
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
fn scan_key_colon(b: &[u8], i: usize) -> Result<usize, ScanError> {
    let i = skip_ws(b, scan_string(b, i)?);
    match b.get(i) {
        Some(b':') => Ok(skip_ws(b, i + 1)),
        Some(_) => Err(ScanError::UnexpectedByte { offset: i }),
        None => Err(ScanError::UnexpectedEnd),
    }
}

/// Validates one value starting at `i` (a non-whitespace byte); returns the index after it.
///
/// An explicit state machine: `stack` holds one bit per open container (1 = object), the
/// innermost in bit 0, so `max_depth <= 128` levels fit in the `u128`.
fn scan_value(b: &[u8], mut i: usize, max_depth: u8) -> Result<usize, ScanError> {
    let mut stack: u128 = 0;
    let mut depth: u8 = 0;
    'value: loop {
        // `i` is at the first byte of a value.
        match b.get(i) {
            Some(&open @ (b'{' | b'[')) => {
                if depth >= max_depth {
                    return Err(ScanError::TooDeep {
                        offset: i,
                        limit: max_depth,
                    });
                }
                let is_object = open == b'{';
                depth += 1;
                stack = (stack << 1) | u128::from(is_object);
                i = skip_ws(b, i + 1);
                match b.get(i) {
                    Some(b'}') if is_object => {
                        i += 1;
                        depth -= 1;
                        stack >>= 1;
                    }
                    Some(b']') if !is_object => {
                        i += 1;
                        depth -= 1;
                        stack >>= 1;
                    }
                    Some(b'"') if is_object => {
                        i = scan_key_colon(b, i)?;
                        continue 'value;
                    }
                    Some(_) if is_object => return Err(ScanError::UnexpectedByte { offset: i }),
                    // An array element (or the end of input, reported at the loop head).
                    _ => continue 'value,
                }
            }
            Some(b'"') => i = scan_string(b, i)?,
            Some(b'-' | b'0'..=b'9') => i = scan_number(b, i)?,
            Some(b't') => i = scan_literal(b, i, b"true")?,
            Some(b'f') => i = scan_literal(b, i, b"false")?,
            Some(b'n') => i = scan_literal(b, i, b"null")?,
            Some(_) => return Err(ScanError::UnexpectedByte { offset: i }),
            None => return Err(ScanError::UnexpectedEnd),
        }
        // A value just ended at `i`: continue or close the enclosing containers.
        loop {
            if depth == 0 {
                return Ok(i);
            }
            let in_object = stack & 1 == 1;
            i = skip_ws(b, i);
            match b.get(i) {
                Some(b',') => {
                    let comma = i;
                    i = skip_ws(b, i + 1);
                    match b.get(i) {
                        Some(b'"') if in_object => i = scan_key_colon(b, i)?,
                        Some(b'}') if in_object => {
                            return Err(ScanError::TrailingComma { offset: comma })
                        }
                        Some(_) if in_object => {
                            return Err(ScanError::UnexpectedByte { offset: i })
                        }
                        Some(b']') => return Err(ScanError::TrailingComma { offset: comma }),
                        _ => {}
                    }
                    continue 'value;
                }
                Some(b'}') if in_object => {
                    i += 1;
                    depth -= 1;
                    stack >>= 1;
                }
                Some(b']') if !in_object => {
                    i += 1;
                    depth -= 1;
                    stack >>= 1;
                }
                Some(_) => return Err(ScanError::UnexpectedByte { offset: i }),
                None => return Err(ScanError::UnexpectedEnd),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::{String, ToString};
    use std::vec::Vec;

    fn bytes<T: AsRef<[u8]> + ?Sized>(input: &T) -> &[u8] {
        input.as_ref()
    }

    fn run(input: &[u8]) -> Result<&str, ScanError> {
        parse(input, Limits::default()).map(|v| v.as_str())
    }

    /// `ok!` cases must be accepted and yield the given trimmed text.
    macro_rules! ok {
        ($($name:ident: $input:expr => $text:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(run(bytes($input)), Ok($text), "input {:?}", $input);
            }
        )*};
    }

    /// `err!` cases must be rejected with exactly the given error.
    macro_rules! err {
        ($($name:ident: $input:expr => $err:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(run(bytes($input)), Err($err), "input {:?}", $input);
            }
        )*};
    }

    use ScanError::*;

    ok! {
        ok_null: "null" => "null";
        ok_true: "true" => "true";
        ok_false: "false" => "false";
        ok_zero: "0" => "0";
        ok_neg_zero: "-0" => "-0";
        ok_int: "12345" => "12345";
        ok_neg_int: "-987" => "-987";
        ok_frac: "3.25" => "3.25";
        ok_zero_frac: "0.5" => "0.5";
        ok_exp: "1e10" => "1e10";
        ok_exp_upper_signed: "-1.5E-7" => "-1.5E-7";
        ok_exp_plus: "2e+3" => "2e+3";
        ok_exp_leading_zero: "1e007" => "1e007";
        ok_huge_exp: "1e99999" => "1e99999";
        ok_empty_string: r#""""# => r#""""#;
        ok_string: r#""hello""# => r#""hello""#;
        ok_all_escapes: r#""\" \\ \/ \b \f \n \r \t""# => r#""\" \\ \/ \b \f \n \r \t""#;
        ok_unicode_escape: r#""\u00e9\u20AC""# => r#""\u00e9\u20AC""#;
        ok_surrogate_pair: r#""\uD83D\uDE00""# => r#""\uD83D\uDE00""#;
        ok_utf8_raw: "\"h\u{e9}llo \u{1F600} \u{7f}\"" => "\"h\u{e9}llo \u{1F600} \u{7f}\"";
        ok_long_string: "\"abcdefghijklmnopqrstuvwxyz0123456789 with spaces\"" =>
            "\"abcdefghijklmnopqrstuvwxyz0123456789 with spaces\"";
        ok_escape_at_chunk_edge: r#""1234567\"890""# => r#""1234567\"890""#;
        ok_empty_array: "[]" => "[]";
        ok_empty_object: "{}" => "{}";
        ok_ws_inside_empty: "[ \n ]" => "[ \n ]";
        ok_ws_inside_empty_obj: "{\t\r\n }" => "{\t\r\n }";
        ok_array: "[1, \"a\", true, null, {}, []]" => "[1, \"a\", true, null, {}, []]";
        ok_object: r#"{"a":1,"b":[2,3],"c":{"d":null}}"# => r#"{"a":1,"b":[2,3],"c":{"d":null}}"#;
        ok_object_ws: " { \"a\" : 1 , \"b\" : 2 } " => "{ \"a\" : 1 , \"b\" : 2 }";
        ok_surrounding_ws: " \t\r\n[1]\n " => "[1]";
        ok_duplicate_keys: r#"{"a":1,"a":2}"# => r#"{"a":1,"a":2}"#;
        ok_nested_mixed: r#"[{"a":[{"b":[]}]}]"# => r#"[{"a":[{"b":[]}]}]"#;
        ok_number_in_array_end: "[1.5e3]" => "[1.5e3]";
        ok_del_in_string: "\"\u{7f}\"" => "\"\u{7f}\"";
        ok_bom_free_utf8_key: "{\"\u{fc}\":1}" => "{\"\u{fc}\":1}";
        ok_escaped_solidus_key: r#"{"\/":0}"# => r#"{"\/":0}"#;
    }

    err! {
        err_empty: "" => Empty;
        err_whitespace_only: " \n\t\r " => Empty;
        err_invalid_utf8: b"[\"a\xff\"]" => InvalidUtf8 { offset: 3 };
        err_invalid_utf8_truncated: b"\"\xe2\x82" => InvalidUtf8 { offset: 1 };
        err_overlong_utf8: b"\"\xc0\xaf\"" => InvalidUtf8 { offset: 1 };
        err_surrogate_utf8: b"\"\xed\xa0\x80\"" => InvalidUtf8 { offset: 1 };
        err_trailing_comma_array: "[1,2,]" => TrailingComma { offset: 4 };
        err_trailing_comma_ws: "[1 , ]" => TrailingComma { offset: 3 };
        err_trailing_comma_object: r#"{"a":1,}"# => TrailingComma { offset: 6 };
        err_leading_comma: "[,1]" => UnexpectedByte { offset: 1 };
        err_double_comma: "[1,,2]" => UnexpectedByte { offset: 3 };
        err_missing_comma: "[1 2]" => UnexpectedByte { offset: 3 };
        err_object_missing_colon: r#"{"a" 1}"# => UnexpectedByte { offset: 5 };
        err_object_missing_value: r#"{"a":}"# => UnexpectedByte { offset: 5 };
        err_object_number_key: "{1:2}" => UnexpectedByte { offset: 1 };
        err_object_bare_key: "{a:2}" => UnexpectedByte { offset: 1 };
        err_object_comma_only: "{,}" => UnexpectedByte { offset: 1 };
        err_object_after_comma: r#"{"a":1,2}"# => UnexpectedByte { offset: 7 };
        err_mismatched_close: "[1}" => UnexpectedByte { offset: 2 };
        err_mismatched_close_obj: r#"{"a":1]"# => UnexpectedByte { offset: 6 };
        err_close_empty_array_brace: "[}" => UnexpectedByte { offset: 1 };
        err_close_empty_obj_bracket: "{]" => UnexpectedByte { offset: 1 };
        err_leading_zero: "01" => InvalidNumber { offset: 0 };
        err_leading_zero_neg: "-01" => InvalidNumber { offset: 0 };
        err_leading_zeros_in_array: "[00]" => InvalidNumber { offset: 1 };
        err_bare_minus: "-" => InvalidNumber { offset: 0 };
        err_minus_letter: "-a" => InvalidNumber { offset: 0 };
        err_minus_space: "- 1" => InvalidNumber { offset: 0 };
        err_dot_end: "1." => InvalidNumber { offset: 0 };
        err_dot_exp: "1.e5" => InvalidNumber { offset: 0 };
        err_leading_dot: ".5" => UnexpectedByte { offset: 0 };
        err_exp_no_digits: "1e" => InvalidNumber { offset: 0 };
        err_exp_sign_no_digits: "1e+" => InvalidNumber { offset: 0 };
        err_exp_in_array: "[1E-]" => InvalidNumber { offset: 1 };
        err_plus: "+1" => UnexpectedByte { offset: 0 };
        err_hex_number: "0x10" => TrailingCharacters { offset: 1 };
        err_double_dot: "1.2.3" => TrailingCharacters { offset: 3 };
        err_nan: "NaN" => UnexpectedByte { offset: 0 };
        err_infinity: "Infinity" => UnexpectedByte { offset: 0 };
        err_neg_infinity: "-Infinity" => InvalidNumber { offset: 0 };
        err_unknown_escape: r#""\x41""# => InvalidEscape { offset: 1 };
        err_escape_apostrophe: r#""\'""# => InvalidEscape { offset: 1 };
        err_escape_short_u: r#""\u12""# => InvalidEscape { offset: 1 };
        err_escape_bad_hex: r#""\u12G4""# => InvalidEscape { offset: 1 };
        err_escape_uppercase_u: r#""\U0041""# => InvalidEscape { offset: 1 };
        err_lone_high: r#""\uD800""# => LoneSurrogate { offset: 1 };
        err_lone_high_then_text: r#""\uDBFFabcdef""# => LoneSurrogate { offset: 1 };
        err_high_then_non_low: r#""\uD800\u0041""# => LoneSurrogate { offset: 1 };
        err_high_high: r#""\uD800\uD800""# => LoneSurrogate { offset: 1 };
        err_high_then_other_escape: r#""\uD800\n""# => LoneSurrogate { offset: 1 };
        err_lone_low: r#""x\uDC00""# => LoneSurrogate { offset: 2 };
        err_high_then_bad_hex: r#""\uD800\uXYZW""# => InvalidEscape { offset: 7 };
        err_raw_newline: "\"a\nb\"" => ControlCharacter { offset: 2 };
        err_raw_tab: "\"\t\"" => ControlCharacter { offset: 1 };
        err_raw_nul: "[\"\0\"]" => ControlCharacter { offset: 2 };
        err_raw_control_late: "\"abcdefghijk\x1fl\"" => ControlCharacter { offset: 12 };
        err_single_quotes: "'a'" => UnexpectedByte { offset: 0 };
        err_single_quote_key: "{'a':1}" => UnexpectedByte { offset: 1 };
        err_line_comment: "[1] // c" => TrailingCharacters { offset: 4 };
        err_block_comment: "/* c */ 1" => UnexpectedByte { offset: 0 };
        err_comment_inside: "[1,/* c */2]" => UnexpectedByte { offset: 3 };
        err_trailing_value: "1 2" => TrailingCharacters { offset: 2 };
        err_trailing_bracket: "[1]]" => TrailingCharacters { offset: 3 };
        err_two_objects: "{}{}" => TrailingCharacters { offset: 2 };
        err_trailing_garbage_literal: "truex" => TrailingCharacters { offset: 4 };
        err_bad_literal: "tru" => UnexpectedEnd;
        err_bad_literal_byte: "nul1" => UnexpectedByte { offset: 3 };
        err_capital_true: "True" => UnexpectedByte { offset: 0 };
        err_unclosed_string: "\"abc" => UnexpectedEnd;
        err_unclosed_escape: "\"abc\\" => UnexpectedEnd;
        err_unclosed_unicode: "\"\\u00" => UnexpectedEnd;
        err_unclosed_pair: "\"\\uD800" => UnexpectedEnd;
        err_unclosed_pair_u: "\"\\uD800\\" => UnexpectedEnd;
        err_unclosed_array: "[1,2" => UnexpectedEnd;
        err_unclosed_array_comma: "[1," => UnexpectedEnd;
        err_unclosed_open: "[" => UnexpectedEnd;
        err_unclosed_object: r#"{"a":1"# => UnexpectedEnd;
        err_unclosed_object_key: r#"{"a""# => UnexpectedEnd;
        err_unclosed_object_colon: r#"{"a":"# => UnexpectedEnd;
        err_unclosed_object_open: "{" => UnexpectedEnd;
        err_vertical_tab_ws: "\x0b1" => UnexpectedByte { offset: 0 };
        err_form_feed_ws: "[1,\x0c2]" => UnexpectedByte { offset: 3 };
        err_nbsp_ws: "\u{a0}1" => UnexpectedByte { offset: 0 };
        err_bom: "\u{feff}1" => UnexpectedByte { offset: 0 };
        err_close_only: "]" => UnexpectedByte { offset: 0 };
    }

    fn nested(depth: usize, open: &str, close: &str, inner: &str) -> String {
        let mut s = open.repeat(depth);
        s.push_str(inner);
        s.push_str(&close.repeat(depth));
        s
    }

    #[test]
    fn depth_counting() {
        let limits = |max_depth| Limits { max_depth };
        assert!(parse(b"[[1]]", limits(2)).is_ok());
        assert_eq!(
            parse(b"[[1]]", limits(1)),
            Err(TooDeep {
                offset: 1,
                limit: 1
            })
        );
        assert!(parse(b"[1]", limits(1)).is_ok());
        assert!(parse(b"[[],[],{}]", limits(2)).is_ok());
        assert!(parse(b"1", limits(0)).is_ok());
        assert!(parse(b"\"[[[\"", limits(0)).is_ok());
        assert_eq!(
            parse(b"[]", limits(0)),
            Err(TooDeep {
                offset: 0,
                limit: 0
            })
        );
        // Siblings do not add depth.
        let wide = std::format!("[{}]", "[1],".repeat(1000) + "[2]");
        assert!(parse(wide.as_bytes(), limits(2)).is_ok());
    }

    #[test]
    fn depth_at_and_over_default_limit() {
        let d = usize::from(DEFAULT_MAX_DEPTH);
        let at = nested(d, "[", "]", "1");
        assert_eq!(run(at.as_bytes()), Ok(at.as_str()));
        let over = nested(d + 1, "[", "]", "1");
        assert_eq!(
            run(over.as_bytes()),
            Err(TooDeep {
                offset: d,
                limit: DEFAULT_MAX_DEPTH
            })
        );
        let objects = nested(d, "{\"k\":", "}", "null");
        assert!(run(objects.as_bytes()).is_ok());
        let objects = nested(d + 1, "{\"k\":", "}", "null");
        assert!(matches!(run(objects.as_bytes()), Err(TooDeep { .. })));
    }

    #[test]
    fn depth_at_and_over_hard_limit() {
        let max = Limits {
            max_depth: MAX_DEPTH_LIMIT,
        };
        let d = usize::from(MAX_DEPTH_LIMIT);
        // Alternate objects and arrays so every bit of the stack is exercised both ways.
        let mut s = String::new();
        for k in 0..d {
            s.push_str(if k % 3 == 0 { "{\"a\":" } else { "[0," });
        }
        s.push_str("true");
        for k in (0..d).rev() {
            s.push(if k % 3 == 0 { '}' } else { ']' });
        }
        assert!(parse(s.as_bytes(), max).is_ok());
        let over = std::format!("[{s}]");
        // The 129th opening bracket is the one that goes too deep.
        let offset = over
            .bytes()
            .enumerate()
            .filter(|&(_, c)| c == b'[' || c == b'{')
            .nth(d)
            .map(|(i, _)| i)
            .unwrap();
        assert_eq!(
            parse(over.as_bytes(), max),
            Err(TooDeep {
                offset,
                limit: MAX_DEPTH_LIMIT
            })
        );
        // Limits above the hard limit are clamped.
        let clamped = Limits { max_depth: 255 };
        assert!(parse(s.as_bytes(), clamped).is_ok());
        assert!(matches!(
            parse(over.as_bytes(), clamped),
            Err(TooDeep {
                limit: MAX_DEPTH_LIMIT,
                ..
            })
        ));
        // Closing brackets must still match the containers after a full stack.
        let bad = nested(d, "[", "]", "1").replacen(']', "}", 1);
        assert!(matches!(
            parse(bad.as_bytes(), max),
            Err(UnexpectedByte { .. })
        ));
    }

    #[test]
    fn ten_thousand_open_brackets() {
        let input = "[".repeat(10_000);
        assert_eq!(
            run(input.as_bytes()),
            Err(TooDeep {
                offset: usize::from(DEFAULT_MAX_DEPTH),
                limit: DEFAULT_MAX_DEPTH
            })
        );
        let max = Limits { max_depth: 200 };
        assert_eq!(
            parse(input.as_bytes(), max),
            Err(TooDeep {
                offset: 128,
                limit: 128
            })
        );
        let objects = "{\"a\":".repeat(10_000);
        assert!(matches!(run(objects.as_bytes()), Err(TooDeep { .. })));
    }

    #[test]
    fn big_numbers() {
        let digits = "9".repeat(10_000);
        assert_eq!(run(digits.as_bytes()), Ok(digits.as_str()));
        let neg = std::format!("-{digits}.{digits}e-{digits}");
        assert_eq!(run(neg.as_bytes()), Ok(neg.as_str()));
        let arr = std::format!("[{digits},{digits}]");
        assert!(run(arr.as_bytes()).is_ok());
        assert_eq!(
            run(std::format!("0{digits}").as_bytes()),
            Err(InvalidNumber { offset: 0 })
        );
        assert!(run(b"18446744073709551616").is_ok());
        assert!(run(b"-9223372036854775809").is_ok());
    }

    #[test]
    fn long_strings_every_alignment() {
        // Put one special byte at every position of a long string, so the eight-byte fast
        // path and the byte tail both see it in each lane.
        for len in 0..40 {
            for pos in 0..len {
                let mut s: Vec<u8> = std::vec![b'x'; len];
                s[pos] = b'"';
                let mut input = std::vec![b'"'];
                input.extend_from_slice(&s);
                input.push(b'"');
                // The quote at `pos` ends the string early.
                assert_eq!(
                    run(&input),
                    Err(TrailingCharacters { offset: pos + 2 }),
                    "len {len} pos {pos}"
                );
                s[pos] = 0x1f;
                let mut input = std::vec![b'"'];
                input.extend_from_slice(&s);
                input.push(b'"');
                assert_eq!(run(&input), Err(ControlCharacter { offset: pos + 1 }));
                s[pos] = b'\\';
                let mut input = std::vec![b'"'];
                input.extend_from_slice(&s);
                input.push(b'"');
                if pos + 1 < len {
                    assert_eq!(run(&input), Err(InvalidEscape { offset: pos + 1 }));
                } else {
                    // `\"` escapes the closing quote.
                    assert_eq!(run(&input), Err(UnexpectedEnd));
                }
            }
        }
        // Bytes >= 0x80 and characters next to special bytes never fool the fast path.
        let s = "\"\u{7f}\u{80}\u{ff}\u{ffff}\u{10ffff}!#[]\u{2028}\"";
        assert_eq!(run(s.as_bytes()), Ok(s));
    }

    #[test]
    fn every_escape_is_validated() {
        for b in 0u8..=127 {
            let input = [b'"', b'\\', b, b'"'];
            let expected = if b"\"\\/bfnrt".contains(&b) {
                Ok(core::str::from_utf8(&input).unwrap())
            } else {
                // Includes `\u` followed by a quote instead of four hex digits.
                Err(InvalidEscape { offset: 1 })
            };
            assert_eq!(run(&input), expected, "escape {b}");
        }
    }

    #[test]
    fn all_surrogate_boundaries() {
        for (text, ok) in [
            (r#""\uD7FF""#, true),
            (r#""\uE000""#, true),
            (r#""\uFFFF""#, true),
            (r#""\u0000""#, true),
            (r#""\uD800\uDC00""#, true),
            (r#""\uDBFF\uDFFF""#, true),
            (r#""\udbff\udfff""#, true),
            (r#""\uD800\uE000""#, false),
            (r#""\uDC00\uD800""#, false),
            (r#""\uDFFF""#, false),
        ] {
            assert_eq!(run(text.as_bytes()).is_ok(), ok, "{text}");
        }
    }

    #[test]
    fn never_panics_on_truncations_and_mutations() {
        let doc = r#" {"jsonrpc":"2.0","id":-1.5e3,"method":"x","params":{"a":[true,false,null,"\u00e9\uD83D\uDE00\n",{}],"b":"\u00fc"}} "#;
        let b = doc.as_bytes();
        assert!(run(b).is_ok());
        for end in 0..b.len() - 1 {
            let r = run(&b[..end]);
            assert!(r.is_err(), "prefix {end} accepted");
            let _ = r.unwrap_err().to_string();
        }
        for pos in 0..b.len() {
            for replacement in [b'"', b'\\', b'[', b'}', b',', b'0', 0u8, 0xff, b'u', b' '] {
                let mut m = b.to_vec();
                m[pos] = replacement;
                if let Err(e) = run(&m) {
                    if let Some(offset) = e.offset() {
                        assert!(offset <= m.len());
                    }
                }
            }
        }
    }

    #[test]
    fn display_messages() {
        assert_eq!(
            TooDeep {
                offset: 7,
                limit: 3
            }
            .to_string(),
            "nesting deeper than the limit of 3 levels at offset 7"
        );
        assert_eq!(
            InvalidUtf8 { offset: 2 }.to_string(),
            "invalid UTF-8 at byte offset 2"
        );
        assert!(TrailingComma { offset: 9 }.to_string().contains('9'));
        assert!(!Empty.to_string().is_empty());
        assert_eq!(Empty.offset(), None);
        assert_eq!(LoneSurrogate { offset: 4 }.offset(), Some(4));
    }
}
