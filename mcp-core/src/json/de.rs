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
//! * integers are range-checked against the requested type; a number written with a fraction
//!   or exponent is rejected where an integer is expected;
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
        if let (Some(dst), Some(src)) = (self.buf.get_mut(self.len..end), s.as_bytes().get(..)) {
            dst.copy_from_slice(src);
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
/// use mcp_core::json::{from_json, parse, Limits};
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
        Kind::Null => Unexpected::Unit,
        Kind::Bool => Unexpected::Bool(value.as_str() == "true"),
        Kind::Number => match classify(value.as_str()) {
            Num::Int { neg: false, mag } if mag <= u128::from(u64::MAX) => {
                Unexpected::Unsigned(u64::try_from(mag).unwrap_or(u64::MAX))
            }
            Num::Int { neg: true, mag } if mag <= u128::from(i64::MIN.unsigned_abs()) => {
                Unexpected::Signed(0i64.checked_sub_unsigned(mag as u64).unwrap_or(i64::MIN))
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
            Num::Float => Err(self.invalid_type(exp)),
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
                    scratch: self.scratch,
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
                    scratch: self.scratch,
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
                scratch: self.scratch,
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
