//! A serde `Deserializer` over [`RawJson`] views: typed tool arguments without allocation.
//!
//! The deserializer walks the borrowed views of an already validated text, so it never
//! re-checks syntax. Nesting is bounded: the input went through the scanner's depth limit
//! ([`Limits::max_depth`](super::Limits::max_depth), at most
//! [`MAX_DEPTH_LIMIT`](super::MAX_DEPTH_LIMIT)), so the recursion of nested `deserialize`
//! calls is bounded by that depth too.
//!
//! Mapping (the same as `serde_json` where it matters):
//!
//! * integers are range-checked against the requested type; as in JSON Schema (and the
//!   `ToolArgs` derive), a whole number written with a fraction or exponent (`2.0`, `1e3`)
//!   is an integer, one with a fractional part (`1.5`) is not;
//! * floats parse with correct rounding for the requested width; out-of-range magnitudes
//!   (`1e400`) are rejected;
//! * strings without escapes are lent zero-copy; escaped strings are decoded into the scratch
//!   buffer; `char` takes a one-character string; bytes are a string's UTF-8 bytes (or an
//!   array of numbers);
//! * `null` is `None` / `()`; arrays are sequences, tuples and (like `serde_json`) structs;
//!   objects are maps and structs; map keys deserialize as strings, or as integers/enums
//!   parsed from the key text;
//! * enums: a string is a unit variant, a single-key object `{"Variant": value}` is any
//!   variant (externally tagged); `deserialize_any` dispatches on [`Kind`].

// `DeError` is deliberately a fixed 161-byte value (no allocation); every `Result` here
// carries it, so clippy's size heuristic does not apply.
#![allow(clippy::result_large_err)]

use core::fmt;

use serde::de::{self, DeserializeSeed, Expected, Unexpected, Visitor};

use super::{Elements, JsonStr, Kind, Members, RawJson};

/// Capacity of [`DeError`]'s message buffer.
const MSG_CAP: usize = 160;

/// The message used when an escaped string does not fit the scratch buffer.
const TOO_LONG: &str = "string too long for the argument buffer";

/// Why arguments did not deserialize. Holds a short message (truncated to fit) naming the
/// field or the type mismatch, suitable for an `isError` tool result.
///
/// Messages longer than 160 bytes are cut at a character boundary and end in `...`.
#[derive(Clone)]
pub struct DeError {
    pub(crate) msg: [u8; 160],
    pub(crate) len: u8,
}

impl DeError {
    /// The message text.
    pub fn message(&self) -> &str {
        let n = usize::from(self.len).min(self.msg.len());
        let bytes = self.msg.get(..n).unwrap_or_default();
        // Always valid: the buffer is only ever filled with whole characters.
        core::str::from_utf8(bytes).unwrap_or_default()
    }

    /// An error with the given formatted message (truncated to 160 bytes).
    pub fn from_fmt(args: fmt::Arguments<'_>) -> Self {
        let mut w = MsgWriter {
            buf: [0; MSG_CAP],
            len: 0,
            full: false,
        };
        let _ = fmt::write(&mut w, args);
        DeError {
            msg: w.buf,
            len: u8::try_from(w.len).unwrap_or(u8::MAX),
        }
    }
}

/// Fills a fixed buffer, truncating at a character boundary and marking the cut with `...`.
struct MsgWriter {
    buf: [u8; MSG_CAP],
    len: usize,
    full: bool,
}

impl MsgWriter {
    fn push(&mut self, s: &str) {
        let end = self.len.saturating_add(s.len());
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(s.as_bytes());
            self.len = end;
        }
    }
}

impl fmt::Write for MsgWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.full {
            return Ok(());
        }
        let room = MSG_CAP.saturating_sub(self.len);
        if s.len() <= room {
            self.push(s);
            return Ok(());
        }
        // Does not fit: keep what fits before a `...` marker, at a char boundary.
        self.full = true;
        let mut take = room.saturating_sub(3);
        while take > 0 && !s.is_char_boundary(take) {
            take -= 1;
        }
        if let Some(head) = s.get(..take) {
            self.push(head);
        }
        self.push("...");
        Ok(())
    }
}

impl fmt::Debug for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DeError").field(&self.message()).finish()
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError::from_fmt(format_args!("{msg}"))
    }
}

/// Deserializes `T` from a validated value. Strings without escapes are lent zero-copy
/// (`&'a str` fields work); strings with escapes are decoded into `scratch` and offered as a
/// transient `&str` (owned/heapless string fields and enum variants work; a borrowed `&'a str`
/// field then fails with a clear message). `scratch` may be empty if no escaped strings occur.
///
/// ```
/// # #[derive(serde::Deserialize)]
/// # struct Args<'a> { op: &'a str, n: u32 }
/// use mcp_rs_core::wire::json::{from_json, parse, Limits};
///
/// let v = parse(br#"{"op":"add","n":2}"#, Limits::default()).unwrap();
/// let args: Args = from_json(v, &mut []).unwrap();
/// assert_eq!((args.op, args.n), ("add", 2));
/// ```
pub fn from_json<'a, T: serde::Deserialize<'a>>(
    value: RawJson<'a>,
    scratch: &mut [u8],
) -> Result<T, DeError> {
    T::deserialize(ValueDe { value, scratch })
}

// ---- numbers ----

/// A number literal, classified.
enum Num {
    /// An integer literal: sign and magnitude.
    Int { neg: bool, mag: u128 },
    /// An integer literal too large for `u128`.
    BigInt,
    /// A literal with a fraction or exponent.
    Float,
}

fn classify(text: &str) -> Num {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Num::Float;
    }
    let mut mag: u128 = 0;
    for b in digits.bytes() {
        let d = u128::from(b.wrapping_sub(b'0'));
        match mag.checked_mul(10).and_then(|m| m.checked_add(d)) {
            Some(m) => mag = m,
            None => return Num::BigInt,
        }
    }
    Num::Int { neg, mag }
}

/// The literal as a signed value, if it fits `i128`.
fn signed(neg: bool, mag: u128) -> Option<i128> {
    if neg {
        0i128.checked_sub_unsigned(mag)
    } else {
        i128::try_from(mag).ok()
    }
}

fn out_of_range(text: &str, exp: &dyn Expected) -> DeError {
    DeError::from_fmt(format_args!(
        "invalid value: integer `{text}`, expected {exp}"
    ))
}

fn too_long() -> DeError {
    DeError::from_fmt(format_args!("{TOO_LONG}"))
}

/// What a value is, for "invalid type" messages (the scratch decodes escaped strings).
fn unexpected<'u>(value: RawJson<'u>, scratch: &'u mut [u8]) -> Unexpected<'u> {
    match value.kind() {
        // Reads "null" rather than serde's "unit value", like serde_json.
        Kind::Null => Unexpected::Other("null"),
        Kind::Bool => Unexpected::Bool(value.as_str() == "true"),
        Kind::Number => match classify(value.as_str()) {
            Num::Int { neg: false, mag } if mag <= u128::from(u64::MAX) => {
                Unexpected::Unsigned(u64::try_from(mag).unwrap_or(u64::MAX))
            }
            Num::Int { neg: true, mag } if mag <= u128::from(i64::MIN.unsigned_abs()) => {
                let m = u64::try_from(mag).unwrap_or(u64::MAX);
                Unexpected::Signed(0i64.checked_sub_unsigned(m).unwrap_or(i64::MIN))
            }
            Num::Int { .. } | Num::BigInt => Unexpected::Other("integer"),
            Num::Float => match value.as_str().parse::<f64>() {
                Ok(f) => Unexpected::Float(f),
                Err(_) => Unexpected::Other("number"),
            },
        },
        Kind::String => match value.as_string() {
            Some(js) => match js.as_borrowed() {
                Some(s) => Unexpected::Str(s),
                None => match js.decode_into(scratch) {
                    Ok(s) => Unexpected::Str(s),
                    Err(_) => Unexpected::Other("string"),
                },
            },
            None => Unexpected::Other("string"),
        },
        Kind::Array => Unexpected::Seq,
        Kind::Object => Unexpected::Map,
    }
}

// ---- strings ----

/// Offers a string to `visitor`: borrowed if it has no escapes, else decoded into `scratch`.
fn visit_json_str<'de, V: Visitor<'de>>(
    js: JsonStr<'de>,
    scratch: &mut [u8],
    visitor: V,
) -> Result<V::Value, DeError> {
    match js.as_borrowed() {
        Some(s) => visitor.visit_borrowed_str(s),
        None => match js.decode_into(scratch) {
            Ok(s) => visitor.visit_str(s),
            Err(_) => Err(too_long()),
        },
    }
}

/// Offers a string's UTF-8 bytes to `visitor` (borrowed when possible).
fn visit_json_bytes<'de, V: Visitor<'de>>(
    js: JsonStr<'de>,
    scratch: &mut [u8],
    visitor: V,
) -> Result<V::Value, DeError> {
    match js.as_borrowed() {
        Some(s) => visitor.visit_borrowed_bytes(s.as_bytes()),
        None => match js.decode_into(scratch) {
            Ok(s) => visitor.visit_bytes(s.as_bytes()),
            Err(_) => Err(too_long()),
        },
    }
}

// ---- values ----

/// Deserializer for one value.
struct ValueDe<'a, 's> {
    value: RawJson<'a>,
    scratch: &'s mut [u8],
}

impl<'a> ValueDe<'a, '_> {
    fn invalid_type(self, exp: &dyn Expected) -> DeError {
        de::Error::invalid_type(unexpected(self.value, self.scratch), exp)
    }

    /// The value as an integer of type `T`, range-checked.
    fn integer<T>(self, exp: &dyn Expected) -> Result<T, DeError>
    where
        T: TryFrom<u128> + TryFrom<i128>,
    {
        if self.value.kind() != Kind::Number {
            return Err(self.invalid_type(exp));
        }
        let text = self.value.as_str();
        match classify(text) {
            Num::Int { neg: false, mag } => T::try_from(mag).map_err(|_| out_of_range(text, exp)),
            Num::Int { neg: true, mag } => signed(true, mag)
                .and_then(|i| T::try_from(i).ok())
                .ok_or_else(|| out_of_range(text, exp)),
            Num::BigInt => Err(out_of_range(text, exp)),
            Num::Float => {
                // JSON Schema's rule, shared with the derives: `2.0` and `1e3` are integers.
                let f = match text.parse::<f64>() {
                    Ok(f) if f.is_finite() => f,
                    _ => return Err(out_of_range(text, exp)),
                };
                if f != super::trunc(f) {
                    return Err(self.invalid_type(exp));
                }
                // Both bounds are powers of two, exact in f64; inside them the cast is exact.
                if (0.0..340_282_366_920_938_463_463_374_607_431_768_211_456.0).contains(&f) {
                    T::try_from(f as u128).map_err(|_| out_of_range(text, exp))
                } else if (-170_141_183_460_469_231_731_687_303_715_884_105_728.0..0.0).contains(&f)
                {
                    T::try_from(f as i128).map_err(|_| out_of_range(text, exp))
                } else {
                    Err(out_of_range(text, exp))
                }
            }
        }
    }

    /// The value as `f64` (integers included); magnitudes beyond `f64` are an error.
    fn float(self, exp: &dyn Expected) -> Result<f64, DeError> {
        if self.value.kind() != Kind::Number {
            return Err(self.invalid_type(exp));
        }
        let text = self.value.as_str();
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(f),
            _ => Err(DeError::from_fmt(format_args!(
                "invalid value: number `{text}` out of range, expected {exp}"
            ))),
        }
    }

    fn string(&self) -> Option<JsonStr<'a>> {
        self.value.as_string()
    }

    fn members(&self) -> Option<Members<'a>> {
        self.value.members()
    }

    fn elements(&self) -> Option<Elements<'a>> {
        self.value.elements()
    }
}

macro_rules! deserialize_int {
    ($($method:ident => $visit:ident,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            let n = self.integer(&visitor)?;
            visitor.$visit(n)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for ValueDe<'de, '_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value.kind() {
            Kind::Null => visitor.visit_unit(),
            Kind::Bool => visitor.visit_bool(self.value.as_str() == "true"),
            Kind::Number => {
                let text = self.value.as_str();
                match classify(text) {
                    Num::Int { neg: false, mag } if mag <= u128::from(u64::MAX) => {
                        visitor.visit_u64(u64::try_from(mag).unwrap_or(u64::MAX))
                    }
                    Num::Int { neg: true, mag } if mag <= u128::from(i64::MIN.unsigned_abs()) => {
                        let v = signed(true, mag)
                            .and_then(|i| i64::try_from(i).ok())
                            .unwrap_or(i64::MIN);
                        visitor.visit_i64(v)
                    }
                    _ => {
                        let f = self.float(&visitor)?;
                        visitor.visit_f64(f)
                    }
                }
            }
            Kind::String => self.deserialize_str(visitor),
            Kind::Array => self.deserialize_seq(visitor),
            Kind::Object => self.deserialize_map(visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value.as_str() {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    deserialize_int! {
        deserialize_i8 => visit_i8,
        deserialize_i16 => visit_i16,
        deserialize_i32 => visit_i32,
        deserialize_i64 => visit_i64,
        deserialize_i128 => visit_i128,
        deserialize_u8 => visit_u8,
        deserialize_u16 => visit_u16,
        deserialize_u32 => visit_u32,
        deserialize_u64 => visit_u64,
        deserialize_u128 => visit_u128,
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.value.kind() != Kind::Number {
            return Err(self.invalid_type(&visitor));
        }
        let text = self.value.as_str();
        match text.parse::<f32>() {
            Ok(f) if f.is_finite() => visitor.visit_f32(f),
            _ => Err(DeError::from_fmt(format_args!(
                "invalid value: number `{text}` out of range, expected {}",
                &visitor as &dyn Expected
            ))),
        }
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let f = self.float(&visitor)?;
        visitor.visit_f64(f)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.string() {
            Some(js) => visit_json_str(js, self.scratch, visitor),
            None => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value.kind() {
            Kind::String => match self.string() {
                Some(js) => visit_json_bytes(js, self.scratch, visitor),
                None => Err(self.invalid_type(&visitor)),
            },
            Kind::Array => self.deserialize_seq(visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.value.kind() == Kind::Null {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.value.kind() == Kind::Null {
            visitor.visit_unit()
        } else {
            Err(self.invalid_type(&visitor))
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let Some(iter) = self.elements() else {
            return Err(self.invalid_type(&visitor));
        };
        let mut seq = SeqDe {
            iter,
            scratch: self.scratch,
            count: 0,
        };
        let out = visitor.visit_seq(&mut seq)?;
        let rest = seq.iter.count();
        if rest == 0 {
            Ok(out)
        } else {
            Err(de::Error::invalid_length(
                seq.count.saturating_add(rest),
                &"fewer elements in array",
            ))
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let Some(iter) = self.members() else {
            return Err(self.invalid_type(&visitor));
        };
        visitor.visit_map(MapDe {
            iter,
            scratch: self.scratch,
            value: None,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.value.kind() {
            Kind::Array => self.deserialize_seq(visitor),
            _ => self.deserialize_map(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.value.kind() {
            Kind::String => match self.string() {
                Some(name) => visitor.visit_enum(UnitEnum {
                    name,
                    scratch: self.scratch,
                }),
                None => Err(self.invalid_type(&visitor)),
            },
            Kind::Object => {
                let Some(mut members) = self.members() else {
                    return Err(self.invalid_type(&visitor));
                };
                match (members.next(), members.next()) {
                    (Some((name, value)), None) => visitor.visit_enum(TaggedEnum {
                        name,
                        value,
                        scratch: self.scratch,
                    }),
                    _ => Err(DeError::from_fmt(format_args!(
                        "invalid value: object without exactly one key, expected {}",
                        &visitor as &dyn Expected
                    ))),
                }
            }
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        // The value was validated by the scanner: nothing to consume.
        visitor.visit_unit()
    }
}

// ---- arrays and objects ----

struct SeqDe<'a, 's> {
    iter: Elements<'a>,
    scratch: &'s mut [u8],
    count: usize,
}

impl<'de> de::SeqAccess<'de> for SeqDe<'de, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match self.iter.next() {
            Some(value) => {
                self.count = self.count.saturating_add(1);
                seed.deserialize(ValueDe {
                    value,
                    scratch: &mut *self.scratch,
                })
                .map(Some)
            }
            None => Ok(None),
        }
    }
}

struct MapDe<'a, 's> {
    iter: Members<'a>,
    scratch: &'s mut [u8],
    /// The value of the key just handed out.
    value: Option<RawJson<'a>>,
}

impl<'de> de::MapAccess<'de> for MapDe<'de, '_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.iter.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(KeyDe {
                    key,
                    scratch: &mut *self.scratch,
                })
                .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        match self.value.take() {
            Some(value) => seed.deserialize(ValueDe {
                value,
                scratch: &mut *self.scratch,
            }),
            None => Err(de::Error::custom("map value requested before its key")),
        }
    }
}

// ---- object keys ----

/// Deserializer for an object key (or an enum variant name): a string, or an integer /
/// bool parsed from the key text.
struct KeyDe<'a, 's> {
    key: JsonStr<'a>,
    scratch: &'s mut [u8],
}

impl<'a> KeyDe<'a, '_> {
    /// Parses the key text as `T`.
    fn parse<T: core::str::FromStr>(self, exp: &dyn Expected) -> Result<T, DeError> {
        let text = match self.key.as_borrowed() {
            Some(s) => s,
            None => self.key.decode_into(self.scratch).map_err(|_| too_long())?,
        };
        text.parse::<T>()
            .map_err(|_| de::Error::invalid_value(Unexpected::Str(text), exp))
    }
}

macro_rules! deserialize_key_parsed {
    ($($method:ident => $visit:ident,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            let v = self.parse(&visitor)?;
            visitor.$visit(v)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for KeyDe<'de, '_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visit_json_str(self.key, self.scratch, visitor)
    }

    deserialize_key_parsed! {
        deserialize_bool => visit_bool,
        deserialize_i8 => visit_i8,
        deserialize_i16 => visit_i16,
        deserialize_i32 => visit_i32,
        deserialize_i64 => visit_i64,
        deserialize_i128 => visit_i128,
        deserialize_u8 => visit_u8,
        deserialize_u16 => visit_u16,
        deserialize_u32 => visit_u32,
        deserialize_u64 => visit_u64,
        deserialize_u128 => visit_u128,
        deserialize_f32 => visit_f32,
        deserialize_f64 => visit_f64,
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visit_json_bytes(self.key, self.scratch, visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_enum(UnitEnum {
            name: self.key,
            scratch: self.scratch,
        })
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        char str string unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

// ---- enums ----

/// An enum given as a string: a unit variant.
struct UnitEnum<'a, 's> {
    name: JsonStr<'a>,
    scratch: &'s mut [u8],
}

impl<'de> de::EnumAccess<'de> for UnitEnum<'de, '_> {
    type Error = DeError;
    type Variant = UnitOnly;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, UnitOnly), DeError> {
        let v = seed.deserialize(KeyDe {
            key: self.name,
            scratch: self.scratch,
        })?;
        Ok((v, UnitOnly))
    }
}

/// Variant access for a variant named by a bare string: only unit variants fit.
struct UnitOnly;

impl<'de> de::VariantAccess<'de> for UnitOnly {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _seed: T) -> Result<T::Value, DeError> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"newtype variant",
        ))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, DeError> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"tuple variant",
        ))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, DeError> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"struct variant",
        ))
    }
}

/// An externally tagged enum: `{"Variant": value}`.
struct TaggedEnum<'a, 's> {
    name: JsonStr<'a>,
    value: RawJson<'a>,
    scratch: &'s mut [u8],
}

impl<'de, 's> de::EnumAccess<'de> for TaggedEnum<'de, 's> {
    type Error = DeError;
    type Variant = ValueDe<'de, 's>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, ValueDe<'de, 's>), DeError> {
        let v = seed.deserialize(KeyDe {
            key: self.name,
            scratch: &mut *self.scratch,
        })?;
        Ok((
            v,
            ValueDe {
                value: self.value,
                scratch: self.scratch,
            },
        ))
    }
}

impl<'de> de::VariantAccess<'de> for ValueDe<'de, '_> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        <() as de::Deserialize<'de>>::deserialize(self)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::wire::json::{parse, Limits};
    use serde::Deserialize;
    use std::collections::{BTreeMap, HashMap};
    use std::string::{String, ToString};
    use std::vec;
    use std::vec::Vec;

    fn raw(text: &str) -> RawJson<'_> {
        parse(text.as_bytes(), Limits::default()).expect("valid test JSON")
    }

    /// Deserializes with a generous scratch buffer.
    fn de<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, DeError> {
        let mut scratch = [0u8; 256];
        from_json(raw(text), &mut scratch)
    }

    fn err<'a, T: Deserialize<'a> + fmt::Debug>(text: &'a str) -> String {
        de::<T>(text)
            .expect_err("should fail")
            .message()
            .to_string()
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Borrowed<'a> {
        name: &'a str,
        n: u32,
    }

    #[test]
    fn borrowed_str_fields() {
        let v: Borrowed = from_json(raw(r#"{"n":5,"name":"abc é"}"#), &mut []).unwrap();
        assert_eq!(
            v,
            Borrowed {
                name: "abc é",
                n: 5
            }
        );
        // Escaped text cannot be lent out.
        let e = err::<Borrowed>(r#"{"name":"a\nb","n":1}"#);
        assert_eq!(
            e,
            "invalid type: string \"a\\nb\", expected a borrowed string"
        );
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Owned {
        text: String,
        c: char,
    }

    #[test]
    fn escaped_strings_into_owned() {
        let v: Owned =
            de(r#"{"text":"q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","c":"\u00e9"}"#).unwrap();
        assert_eq!(v.text, "q\"\\/\u{8}\u{c}\n\r\té😀");
        assert_eq!(v.c, 'é');
        // Scratch too small for the decoded text.
        let mut small = [0u8; 4];
        let e = from_json::<Owned>(raw(r#"{"text":"abc\ndef","c":"x"}"#), &mut small).unwrap_err();
        assert_eq!(e.message(), "string too long for the argument buffer");
        // Unescaped strings need no scratch at all.
        let v: Owned = from_json(raw(r#"{"text":"plain","c":"x"}"#), &mut []).unwrap();
        assert_eq!(v.text, "plain");
        assert_eq!(
            err::<Owned>(r#"{"text":"t","c":"xy"}"#),
            "invalid value: string \"xy\", expected a character"
        );
        assert_eq!(
            err::<Owned>(r#"{"text":5,"c":"x"}"#),
            "invalid type: integer `5`, expected a string"
        );
        // Escaped keys match field names through the scratch buffer.
        let v: Owned = de(r#"{"t\u0065xt":"k","c":"x"}"#).unwrap();
        assert_eq!(v.text, "k");
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Op {
        Add,
        Subtract,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Shape {
        Unit,
        Circle(f64),
        Rect { w: u32, h: u32 },
        Pair(i8, i8),
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Calc {
        op: Op,
        number1: f64,
        number2: f64,
    }

    #[test]
    fn enums() {
        let c: Calc = de(r#"{"op":"add","number1":1,"number2":2.5}"#).unwrap();
        assert_eq!(
            c,
            Calc {
                op: Op::Add,
                number1: 1.0,
                number2: 2.5
            }
        );
        assert_eq!(de::<Op>(r#""subtract""#).unwrap(), Op::Subtract);
        assert_eq!(de::<Op>(r#""sub\u0074ract""#).unwrap(), Op::Subtract);
        assert_eq!(de::<Op>(r#"{"add":null}"#).unwrap(), Op::Add);
        assert_eq!(
            err::<Calc>(r#"{"op":"pow","number1":1,"number2":2}"#),
            "unknown variant `pow`, expected `add` or `subtract`"
        );
        assert_eq!(
            err::<Op>("3"),
            "invalid type: integer `3`, expected enum Op"
        );
        assert_eq!(de::<Shape>(r#""Unit""#).unwrap(), Shape::Unit);
        assert_eq!(
            de::<Shape>(r#"{"Circle":1.5}"#).unwrap(),
            Shape::Circle(1.5)
        );
        assert_eq!(
            de::<Shape>(r#"{"Rect":{"h":2,"w":3}}"#).unwrap(),
            Shape::Rect { w: 3, h: 2 }
        );
        assert_eq!(
            de::<Shape>(r#"{"Pair":[-1,2]}"#).unwrap(),
            Shape::Pair(-1, 2)
        );
        assert_eq!(
            err::<Shape>(r#""Circle""#),
            "invalid type: unit variant, expected newtype variant"
        );
        assert_eq!(
            err::<Shape>(r#"{"Unit":1}"#),
            "invalid type: integer `1`, expected unit"
        );
        assert!(err::<Shape>(r#"{"Unit":null,"Circle":1}"#).contains("exactly one key"));
        assert!(err::<Shape>(r#"{}"#).contains("exactly one key"));
        assert_eq!(
            err::<Shape>(r#"{"Hex":1}"#),
            "unknown variant `Hex`, expected one of `Unit`, `Circle`, `Rect`, `Pair`"
        );
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(tag = "type", rename_all = "lowercase")]
    enum Content<'a> {
        Text {
            text: &'a str,
        },
        Image {
            data: String,
            #[serde(rename = "mimeType")]
            mime_type: String,
        },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(untagged)]
    enum IdLike {
        Num(i64),
        Str(String),
    }

    #[test]
    fn internally_tagged_and_untagged() {
        assert_eq!(
            de::<Content>(r#"{"type":"text","text":"hi"}"#).unwrap(),
            Content::Text { text: "hi" }
        );
        assert_eq!(
            de::<Content>(r#"{"mimeType":"image/png","type":"image","data":"AA\u003d"}"#).unwrap(),
            Content::Image {
                data: "AA=".into(),
                mime_type: "image/png".into()
            }
        );
        assert_eq!(de::<IdLike>("-3").unwrap(), IdLike::Num(-3));
        assert_eq!(
            de::<IdLike>(r#""x\ty""#).unwrap(),
            IdLike::Str("x\ty".into())
        );
    }

    fn seven() -> u32 {
        7
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Opts {
        a: Option<u32>,
        #[serde(default)]
        b: u32,
        #[serde(default = "seven")]
        c: u32,
        d: Option<Option<bool>>,
    }

    #[test]
    fn options_and_defaults() {
        assert_eq!(
            de::<Opts>("{}").unwrap(),
            Opts {
                a: None,
                b: 0,
                c: 7,
                d: None
            }
        );
        assert_eq!(
            de::<Opts>(r#"{"a":null,"b":2,"c":3,"d":true}"#).unwrap(),
            Opts {
                a: None,
                b: 2,
                c: 3,
                d: Some(Some(true))
            }
        );
        assert_eq!(de::<Opts>(r#"{"a":1,"d":null}"#).unwrap().a, Some(1));
        assert_eq!(
            err::<Opts>(r#"{"a":"1"}"#),
            "invalid type: string \"1\", expected u32"
        );
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner<'a> {
        #[serde(borrow)]
        tags: Vec<&'a str>,
        point: (i32, i32),
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Meters(f64);

    #[derive(Debug, Deserialize, PartialEq)]
    struct Marker;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Rgb(u8, u8, u8);

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer<'a> {
        #[serde(borrow)]
        inner: Inner<'a>,
        list: Vec<Inner<'a>>,
        dist: Meters,
        marker: Marker,
        color: Rgb,
        fixed: [u16; 3],
        unit: (),
        map: BTreeMap<String, i32>,
        by_id: HashMap<u32, bool>,
    }

    #[test]
    fn nested_structs_and_arrays() {
        let text = r#"{
            "inner": {"tags": ["a", "b"], "point": [1, -2]},
            "list": [{"tags": [], "point": [0, 0]}, {"point": [3, 4], "tags": ["z"]}],
            "dist": 2.5,
            "marker": null,
            "color": [255, 0, 7],
            "fixed": [1, 2, 3],
            "unit": null,
            "map": {"x": 1, "y\n": -1},
            "by_id": {"1": true, "42": false}
        }"#;
        let v: Outer = de(text).unwrap();
        assert_eq!(v.inner.tags, vec!["a", "b"]);
        assert_eq!(v.inner.point, (1, -2));
        assert_eq!(v.list.len(), 2);
        assert_eq!(v.list[1].tags, vec!["z"]);
        assert_eq!(v.dist, Meters(2.5));
        assert_eq!(v.marker, Marker);
        assert_eq!(v.color, Rgb(255, 0, 7));
        assert_eq!(v.fixed, [1, 2, 3]);
        assert_eq!(v.map.get("y\n"), Some(&-1));
        assert_eq!(v.by_id.get(&42), Some(&false));
        assert_eq!(
            err::<(u8, u8)>("[1,2,3]"),
            "invalid length 3, expected fewer elements in array"
        );
        assert_eq!(
            err::<(u8, u8, u8)>("[1,2]"),
            "invalid length 2, expected a tuple of size 3"
        );
        assert_eq!(
            err::<Vec<u8>>(r#"{"a":1}"#),
            "invalid type: map, expected a sequence"
        );
        assert_eq!(
            err::<HashMap<u32, bool>>(r#"{"x":true}"#),
            "invalid value: string \"x\", expected u32"
        );
        // Structs also accept arrays, like serde_json.
        let b: Borrowed = de(r#"["s", 4]"#).unwrap();
        assert_eq!(b, Borrowed { name: "s", n: 4 });
    }

    #[test]
    fn numbers() {
        assert_eq!(de::<u8>("255").unwrap(), 255);
        assert_eq!(de::<i8>("-128").unwrap(), -128);
        assert_eq!(de::<i64>("-9223372036854775808").unwrap(), i64::MIN);
        assert_eq!(de::<u64>("18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(
            de::<u128>("340282366920938463463374607431768211455").unwrap(),
            u128::MAX
        );
        assert_eq!(
            de::<i128>("-170141183460469231731687303715884105728").unwrap(),
            i128::MIN
        );
        assert_eq!(de::<u32>("-0").unwrap(), 0);
        assert_eq!(
            err::<u8>("256"),
            "invalid value: integer `256`, expected u8"
        );
        assert_eq!(
            err::<u32>("-1"),
            "invalid value: integer `-1`, expected u32"
        );
        assert_eq!(
            err::<i64>("9223372036854775808"),
            "invalid value: integer `9223372036854775808`, expected i64"
        );
        assert_eq!(
            err::<u128>("340282366920938463463374607431768211456"),
            "invalid value: integer `340282366920938463463374607431768211456`, expected u128"
        );
        assert_eq!(
            err::<i32>("1.5"),
            "invalid type: floating point `1.5`, expected i32"
        );
        // Whole numbers with a fraction or exponent are integers (JSON Schema, the derives).
        assert_eq!(de::<u64>("1e3").unwrap(), 1000);
        assert_eq!(de::<u8>("2.0").unwrap(), 2);
        assert_eq!(de::<u8>("2.5e1").unwrap(), 25);
        assert_eq!(de::<i64>("-9.223372036854775808e18").unwrap(), i64::MIN);
        assert_eq!(de::<u32>("-0.0").unwrap(), 0);
        assert_eq!(
            err::<u8>("2.56e2"),
            "invalid value: integer `2.56e2`, expected u8"
        );
        assert_eq!(
            err::<u64>("1.8446744073709552e19"),
            "invalid value: integer `1.8446744073709552e19`, expected u64"
        );
        assert_eq!(
            err::<i32>("1e400"),
            "invalid value: integer `1e400`, expected i32"
        );
        assert_eq!(
            err::<i32>("2.5e0"),
            "invalid type: floating point `2.5`, expected i32"
        );
        assert_eq!(
            err::<u16>("true"),
            "invalid type: boolean `true`, expected u16"
        );
        assert_eq!(de::<f64>("5e-324").unwrap(), 5e-324);
        assert_eq!(
            de::<f64>("1.7976931348623157e308").unwrap(),
            1.7976931348623157e308
        );
        assert_eq!(de::<f64>("0.30000000000000004").unwrap(), 0.1 + 0.2);
        assert_eq!(de::<f64>("-0").unwrap().to_bits(), (-0.0f64).to_bits());
        assert_eq!(de::<f64>("12").unwrap(), 12.0);
        assert_eq!(de::<f64>("1E2").unwrap(), 100.0);
        assert_eq!(de::<f32>("0.1").unwrap(), 0.1f32);
        assert_eq!(
            err::<f64>("1e400"),
            "invalid value: number `1e400` out of range, expected f64"
        );
        assert_eq!(
            err::<f32>("1e39"),
            "invalid value: number `1e39` out of range, expected f32"
        );
        assert_eq!(
            err::<f64>(r#""x""#),
            "invalid type: string \"x\", expected f64"
        );
        assert_eq!(err::<f64>(r#"{"a":1}"#), "invalid type: map, expected f64");
        assert_eq!(err::<f64>("null"), "invalid type: null, expected f64");
        assert_eq!(
            err::<u8>(r#""a\"b""#),
            "invalid type: string \"a\\\"b\", expected u8"
        );
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        number1: f64,
        number2: f64,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Lenient {
        keep: bool,
    }

    #[test]
    fn field_errors_and_unknown_fields() {
        assert_eq!(err::<Strict>(r#"{"number2":1}"#), "missing field `number1`");
        assert_eq!(
            err::<Strict>(r#"{"number1":1,"number2":2,"extra":3}"#),
            "unknown field `extra`, expected `number1` or `number2`"
        );
        assert_eq!(
            err::<Strict>(r#"{"number1":"x","number2":2}"#),
            "invalid type: string \"x\", expected f64"
        );
        assert_eq!(
            err::<Strict>("[1]"),
            "invalid length 1, expected struct Strict with 2 elements"
        );
        assert_eq!(
            err::<Strict>("7"),
            "invalid type: integer `7`, expected struct Strict"
        );
        // Unknown fields, however deep, are skipped (ignored_any).
        let v: Lenient =
            de(r#"{"x":{"y":[1,{"z":"\u0041"}]},"keep":true,"w":null,"v":"s\n"}"#).unwrap();
        assert_eq!(v, Lenient { keep: true });
        // Escaped unknown keys do not need scratch space unless they are decoded.
        let v: Lenient = from_json(raw(r#"{"keep":false}"#), &mut []).unwrap();
        assert!(!v.keep);
    }

    #[test]
    fn deserialize_any_matches_serde_json() {
        let text = r#"{"a":[1,-2,3.5,"s\u00e9\n",true,false,null,{}],"b":{"c":[[]]},
            "big":18446744073709551615,"neg":-9223372036854775808,"huge":1e300,
            "bigint":123456789012345678901234567890,"e":"","f":0.1}"#;
        let ours: serde_json::Value = de(text).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn bytes_unit_and_misc() {
        let b: &[u8] = de(r#""abc""#).unwrap();
        assert_eq!(b, b"abc");
        let b: serde_bytes_like::Buf = de(r#""a\nb""#).unwrap();
        assert_eq!(b.0, b"a\nb");
        let b: serde_bytes_like::Buf = de("[1,2]").unwrap();
        assert_eq!(b.0, [1, 2]);
        de::<()>("null").unwrap();
        assert_eq!(err::<()>("0"), "invalid type: integer `0`, expected unit");
        assert!(de::<bool>("true").unwrap());
        assert_eq!(
            err::<bool>("1"),
            "invalid type: integer `1`, expected a boolean"
        );
        de::<serde::de::IgnoredAny>(r#"{"a":[1,2]}"#).unwrap();
        assert_eq!(de::<Option<&str>>("null").unwrap(), None);
        assert_eq!(de::<Option<&str>>(r#""v""#).unwrap(), Some("v"));
        let s: String = de(r#""\u2028""#).unwrap();
        assert_eq!(s, "\u{2028}");
    }

    /// A minimal byte-buffer type driving `deserialize_byte_buf`.
    mod serde_bytes_like {
        use serde::de::{Deserializer, SeqAccess, Visitor};
        use std::vec::Vec;

        pub(super) struct Buf(pub(super) Vec<u8>);

        impl<'de> serde::Deserialize<'de> for Buf {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Buf;
                    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                        f.write_str("bytes")
                    }
                    fn visit_bytes<E>(self, v: &[u8]) -> Result<Buf, E> {
                        Ok(Buf(v.to_vec()))
                    }
                    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Buf, A::Error> {
                        let mut out = Vec::new();
                        while let Some(b) = seq.next_element()? {
                            out.push(b);
                        }
                        Ok(Buf(out))
                    }
                }
                d.deserialize_byte_buf(V)
            }
        }
    }

    #[test]
    fn error_message_truncates_at_char_boundary() {
        let long: String = "é".repeat(200);
        let e = <DeError as de::Error>::custom(&long);
        let m = e.message();
        assert!(m.len() <= 160);
        assert!(m.ends_with("..."));
        assert!(m.starts_with("éé"));
        let exact: String = "a".repeat(160);
        assert_eq!(<DeError as de::Error>::custom(&exact).message(), exact);
        let e = <DeError as de::Error>::custom("short");
        assert_eq!(e.to_string(), "short");
        assert_eq!(std::format!("{e:?}"), "DeError(\"short\")");
        // A long unknown variant name in a message is cut, not a panic.
        let text = std::format!("\"{}\"", "€".repeat(100));
        let m = err::<Op>(&text);
        assert!(m.starts_with("unknown variant `€€"));
        assert!(m.len() <= 160);
    }
}
