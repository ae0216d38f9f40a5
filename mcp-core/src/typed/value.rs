//! Value-level traits: what a field of a derived (or hand-written) arguments or output
//! struct must implement, and their implementations for the primitive types.

use core::cmp::Ordering;
use core::marker::PhantomData;

use super::{ArgError, PathSegment, Problem, Rejected};
use crate::wire::json::{Elements, JsonStr, JsonWriter, RawJson};

/// Schema text assembled from `&'static str` pieces, possibly nested: how generic types
/// (`Vec<T>`, `Option<T>`, [`ArgList`]) splice their element's schema into their own without
/// knowing its length (a generic `const` cannot size an array on stable Rust).
///
/// [`len`](Self::len) and [`to_bytes`](Self::to_bytes) flatten it inside a concrete `const`
/// item; [`schema_str!`](crate::schema_str) does both and yields the `&'static str`.
#[derive(Clone, Copy, Debug)]
pub enum SchemaText {
    /// A piece of text.
    Text(&'static str),
    /// Pieces joined in order.
    Parts(&'static [SchemaText]),
}

impl SchemaText {
    /// The length in bytes of the flattened text.
    pub const fn len(&self) -> usize {
        match *self {
            SchemaText::Text(s) => s.len(),
            SchemaText::Parts(parts) => {
                let mut total = 0;
                let mut i = 0;
                while i < parts.len() {
                    total += parts[i].len();
                    i += 1;
                }
                total
            }
        }
    }

    /// Whether the flattened text is empty.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The flattened text as exactly `N` bytes, `N` being [`len`](Self::len). Meant for
    /// `const` items (a wrong `N` fails the build there).
    pub const fn to_bytes<const N: usize>(&self) -> [u8; N] {
        let mut out = [0u8; N];
        let at = self.write_at(&mut out, 0);
        assert!(at == N, "SchemaText::to_bytes: N is not the text's length");
        out
    }

    #[allow(clippy::indexing_slicing)] // const fn: a panic is a compile error
    const fn write_at(&self, out: &mut [u8], mut at: usize) -> usize {
        match *self {
            SchemaText::Text(s) => {
                let bytes = s.as_bytes();
                let mut j = 0;
                while j < bytes.len() {
                    out[at] = bytes[j];
                    at += 1;
                    j += 1;
                }
                at
            }
            SchemaText::Parts(parts) => {
                let mut i = 0;
                while i < parts.len() {
                    at = parts[i].write_at(out, at);
                    i += 1;
                }
                at
            }
        }
    }
}

/// Flattens a [`SchemaText`] constant expression into a `&'static str` constant expression.
///
/// The expression must not name generic parameters (it is evaluated in a nested `const`
/// item); write lifetimes as `'static` there.
///
/// ```
/// use mcp_rs_core::typed::{ArgList, ArgValue, SchemaText};
///
/// const SCHEMA: &str = mcp_rs_core::schema_str!(SchemaText::Parts(&[
///     SchemaText::Text("{"),
///     <ArgList<'static, u8> as ArgValue<'static>>::SCHEMA_BODY,
///     SchemaText::Text("}"),
/// ]));
/// assert_eq!(
///     SCHEMA,
///     r#"{"type":"array","items":{"type":"integer","minimum":0,"maximum":255}}"#
/// );
/// ```
#[macro_export]
macro_rules! schema_str {
    ($text:expr) => {{
        const TEXT: $crate::typed::SchemaText = $text;
        const BYTES: [u8; TEXT.len()] = TEXT.to_bytes();
        match ::core::str::from_utf8(&BYTES) {
            ::core::result::Result::Ok(s) => s,
            ::core::result::Result::Err(_) => ::core::panic!("schema pieces are UTF-8"),
        }
    }};
}

/// A value that can be an argument (a member of a [`ToolArgs`](super::ToolArgs) object, an
/// array element, ...): its schema and its borrowing parser, which accepts exactly what the
/// schema accepts.
///
/// `#[derive(ToolArgs)]` implements it for structs (so they nest) and for unit-only enums.
pub trait ArgValue<'i>: Sized {
    /// The members of the value's schema object, without braces
    /// (`"type":"integer","minimum":0,"maximum":255`).
    const SCHEMA_BODY: SchemaText;
    /// Whether the member may be absent from its object (only `Option<T>`): it is then left
    /// out of `required` and [`absent`](Self::absent) gives its value.
    const OPTIONAL: bool = false;
    /// Parses the value, borrowing from the input. A refusal is recorded in `error`
    /// ([`ArgError::set`], and [`ArgError::at`] for the path of a nested value's refusal)
    /// and only the marker [`Rejected`] is returned (code size: see [`Rejected`]).
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected>;
    /// The value of an absent member: `Some` only when [`OPTIONAL`](Self::OPTIONAL).
    fn absent() -> Option<Self> {
        None
    }
}

/// A value that can be written as structured output: its schema and its writer.
///
/// `#[derive(ToolOutput)]` implements it for structs (so they nest) and unit-only enums.
pub trait OutputValue {
    /// The members of the value's schema object, without braces.
    const SCHEMA_BODY: SchemaText;
    /// Writes the value (matching the schema) as one JSON value.
    fn write_value(&self, w: &mut JsonWriter<'_>);
}

/// A number that `minimum` / `maximum` apply to (used by derived parsers).
pub trait ArgNumber {
    /// How the value compares to `bound`, exactly (integers are not rounded to `f64`
    /// first when `bound` is a whole number).
    fn compare_to(&self, bound: f64) -> Ordering;
}

/// A value that `minLength` / `maxLength` (strings, counted in Unicode scalar values like
/// JSON Schema) or `minItems` / `maxItems` (arrays) apply to.
pub trait ArgLength {
    /// The schema keyword for a lower bound, with quotes and colon (`"minLength":`).
    const MIN_KEYWORD: &'static str;
    /// The schema keyword for an upper bound, with quotes and colon (`"maxLength":`).
    const MAX_KEYWORD: &'static str;
    /// The length the keywords constrain.
    fn arg_len(&self) -> usize;
}

/// `Err` with `problem` recorded when `refused` (the checks below). Inlined so that
/// [`ArgError::set`] still picks the writer of `f64` bounds at compile time.
#[inline(always)]
fn refuse<'i>(
    refused: bool,
    problem: Problem<'i>,
    error: &mut ArgError<'i>,
) -> Result<(), Rejected> {
    match refused {
        true => Err(error.set(problem)),
        false => Ok(()),
    }
}

/// Checks `minimum` (`exclusive == false`) for derived parsers.
#[doc(hidden)]
pub fn check_minimum<'i, T: ArgNumber + ?Sized>(
    v: &T,
    min: f64,
    error: &mut ArgError<'i>,
) -> Result<(), Rejected> {
    let below = v.compare_to(min) == Ordering::Less;
    refuse(below, Problem::BelowMinimum(min), error)
}

/// Checks `maximum` for derived parsers.
#[doc(hidden)]
pub fn check_maximum<'i, T: ArgNumber + ?Sized>(
    v: &T,
    max: f64,
    error: &mut ArgError<'i>,
) -> Result<(), Rejected> {
    let above = v.compare_to(max) == Ordering::Greater;
    refuse(above, Problem::AboveMaximum(max), error)
}

/// Checks `minLength` / `minItems` for derived parsers.
#[doc(hidden)]
pub fn check_min_length<'i, T: ArgLength + ?Sized>(
    v: &T,
    min: usize,
    error: &mut ArgError<'i>,
) -> Result<(), Rejected> {
    refuse(v.arg_len() < min, Problem::TooShort(min), error)
}

/// Checks `maxLength` / `maxItems` for derived parsers.
#[doc(hidden)]
pub fn check_max_length<'i, T: ArgLength + ?Sized>(
    v: &T,
    max: usize,
    error: &mut ArgError<'i>,
) -> Result<(), Rejected> {
    refuse(v.arg_len() > max, Problem::TooLong(max), error)
}

/// Reads an object's members into `slots` for derived parsers: the value of the member
/// named `names[i]` goes to `slots[i]` (an absent member's default is the derived parser's:
/// [`read_field`]'s caller passes it). Refuses a non-object ([`Problem::NotAnObject`]), a
/// repeated member ([`Problem::Duplicate`], at its name) and a member not in `names`
/// ([`Problem::Unknown`], `additionalProperties: false`; [`collect_known_members`] ignores
/// those): the first of these in member order. One function for every derived type, driven
/// by its static table of names, so that each parser holds only its own fields' code
/// (flash on microcontrollers).
#[doc(hidden)]
pub fn collect_members<'i>(
    v: RawJson<'i>,
    names: &'static [&'static str],
    slots: &mut [Option<RawJson<'i>>],
    error: &mut ArgError<'i>,
) -> Result<(), Rejected> {
    collect(v, names, true, slots, error)
}

/// [`collect_members`] for a struct that allows unknown members (`#[arg(allow_unknown)]`).
#[doc(hidden)]
pub fn collect_known_members<'i>(
    v: RawJson<'i>,
    names: &'static [&'static str],
    slots: &mut [Option<RawJson<'i>>],
    error: &mut ArgError<'i>,
) -> Result<(), Rejected> {
    collect(v, names, false, slots, error)
}

/// Both of the above (each program links the one its structs use).
#[inline(always)]
fn collect<'i>(
    v: RawJson<'i>,
    names: &'static [&'static str],
    deny_unknown: bool,
    slots: &mut [Option<RawJson<'i>>],
    error: &mut ArgError<'i>,
) -> Result<(), Rejected> {
    let Some(members) = v.members() else {
        return Err(error.set(Problem::NotAnObject));
    };
    'members: for (key, value) in members {
        for (name, slot) in names.iter().zip(slots.iter_mut()) {
            if key.eq_str(name) {
                if slot.is_some() {
                    error.set(Problem::Duplicate);
                    return Err(error.at(PathSegment::Key(name)));
                }
                *slot = Some(value);
                continue 'members;
            }
        }
        if deny_unknown {
            return Err(error.set(Problem::Unknown(key)));
        }
    }
    Ok(())
}

/// One field's value for derived parsers: parsed from its member, or
/// [`ArgValue::absent`] ([`Problem::Missing`] for a required field).
#[doc(hidden)]
#[inline]
pub fn read_field<'i, T: ArgValue<'i>>(
    member: Option<RawJson<'i>>,
    error: &mut ArgError<'i>,
) -> Result<T, Rejected> {
    match member {
        Some(raw) => T::from_json(raw, error),
        None => T::absent().ok_or_else(|| error.set(Problem::Missing)),
    }
}

/// Puts field `at` of `names` in front of the recorded error's path (derived parsers: one
/// call per struct, after whichever field failed).
#[doc(hidden)]
#[inline(never)]
pub fn field_failed(
    error: &mut ArgError<'_>,
    names: &'static [&'static str],
    at: usize,
) -> Rejected {
    error.at(PathSegment::Key(names.get(at).copied().unwrap_or_default()))
}

/// The position of a string in `names` (a derived unit enum's values), or
/// [`Problem::Type`] / [`Problem::NotInEnum`] listing `allowed`.
#[doc(hidden)]
#[inline(never)]
pub fn enum_index<'i>(
    v: RawJson<'i>,
    names: &[&str],
    allowed: &'static str,
    error: &mut ArgError<'i>,
) -> Result<usize, Rejected> {
    let Some(s) = v.as_string() else {
        return Err(error.set(Problem::Type("a string")));
    };
    names
        .iter()
        .position(|name| s.eq_str(name))
        .ok_or_else(|| error.set(Problem::NotInEnum(allowed)))
}

/// The position of a string among the names quoted in `allowed`, a derived unit enum's
/// `must be one of` list (`"a", "b"`: names JSON writes without escapes, so every `"`
/// opens or closes one), or [`Problem::Type`] / [`Problem::NotInEnum`] listing `allowed`.
/// The list is the only table (code size: no array of names beside it); enums with a
/// name that needs escapes use [`enum_index`].
#[doc(hidden)]
#[inline(never)]
pub fn enum_position<'i>(
    v: RawJson<'i>,
    allowed: &'static str,
    error: &mut ArgError<'i>,
) -> Result<usize, Rejected> {
    let Some(s) = v.as_string() else {
        return Err(error.set(Problem::Type("a string")));
    };
    let (mut index, mut open) = (0, None);
    for (at, b) in allowed.bytes().enumerate() {
        if b == b'"' {
            match open.take() {
                None => open = Some(at + 1),
                Some(from) => {
                    if s.eq_str(allowed.get(from..at).unwrap_or_default()) {
                        return Ok(index);
                    }
                    index += 1;
                }
            }
        }
    }
    Err(error.set(Problem::NotInEnum(allowed)))
}

impl<'i> ArgValue<'i> for bool {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"boolean""#);
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        v.as_bool()
            .ok_or_else(|| error.set(Problem::Type("a boolean")))
    }
}

impl OutputValue for bool {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"boolean""#);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        w.bool(*self);
    }
}

/// An integral number too large or small for any integer type: which bound it broke.
fn out_of_range<'i>(f: f64, min: f64, max: f64) -> Problem<'i> {
    if f < 0.0 {
        Problem::BelowMinimum(min)
    } else {
        Problem::AboveMaximum(max)
    }
}

/// The number as a whole `f64` when written with a fraction or exponent (`2.0`, `1e3`):
/// JSON Schema counts those as integers.
fn integral_f64<'i>(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<f64, Rejected> {
    let f = v
        .as_f64()
        .ok_or_else(|| error.set(Problem::Type("an integer")))?;
    if f.is_finite() && f != crate::wire::json::trunc(f) {
        return Err(error.set(Problem::NotAnInteger));
    }
    Ok(f)
}

macro_rules! integers {
    ($($t:ty: $min:literal, $max:literal, $signed:tt;)*) => {$(
        impl<'i> ArgValue<'i> for $t {
            const SCHEMA_BODY: SchemaText = SchemaText::Text(concat!(
                r#""type":"integer","minimum":"#, $min, r#","maximum":"#, $max
            ));
            fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
                let (min, max) = (<$t>::MIN as f64, <$t>::MAX as f64);
                integers!(@exact $signed, $t, v, error, min, max);
                let f = integral_f64(v, error)?;
                // Exact for every whole `f64` up to 2^127 (`max as f64` may round up to
                // 2^63 or 2^64, which is out of range).
                let wide = f as i128;
                if !f.is_finite() || wide < <$t>::MIN as i128 || wide > <$t>::MAX as i128 {
                    return Err(error.set(out_of_range(f, min, max)));
                }
                Ok(wide as $t)
            }
        }

        impl OutputValue for $t {
            const SCHEMA_BODY: SchemaText = <$t as ArgValue<'static>>::SCHEMA_BODY;
            fn write_value(&self, w: &mut JsonWriter<'_>) {
                integers!(@write $signed, w, *self);
            }
        }

        impl ArgNumber for $t {
            fn compare_to(&self, bound: f64) -> Ordering {
                compare_integer(integers!(@wide $signed, *self), bound)
            }
        }
    )*};
    (@exact signed, $t:ty, $v:ident, $error:ident, $min:ident, $max:ident) => {
        if let Some(n) = $v.as_i64() {
            return <$t>::try_from(n).map_err(|_| $error.set(out_of_range(n as f64, $min, $max)));
        }
        if $v.as_u64().is_some() {
            return Err($error.set(Problem::AboveMaximum($max)));
        }
    };
    (@exact unsigned, $t:ty, $v:ident, $error:ident, $min:ident, $max:ident) => {
        if let Some(n) = $v.as_u64() {
            return <$t>::try_from(n).map_err(|_| $error.set(out_of_range(n as f64, $min, $max)));
        }
        if $v.as_i64().is_some() {
            return Err($error.set(Problem::BelowMinimum($min)));
        }
    };
    (@write signed, $w:ident, $x:expr) => { $w.i64(i64::from($x)) };
    (@write unsigned, $w:ident, $x:expr) => { $w.u64(u64::from($x)) };
    (@wide signed, $x:expr) => { Wide::Signed(i64::from($x)) };
    (@wide unsigned, $x:expr) => { Wide::Unsigned(u64::from($x)) };
}

/// An integer widened for comparison.
#[derive(Clone, Copy)]
enum Wide {
    Signed(i64),
    Unsigned(u64),
}

/// Compares an integer with an `f64` bound without rounding the integer.
fn compare_integer(x: Wide, bound: f64) -> Ordering {
    if bound.is_nan() {
        return Ordering::Equal;
    }
    let whole = crate::wire::json::trunc(bound);
    // `x` vs `whole` exactly, then a fraction of the bound breaks a tie.
    let cmp = if whole >= 18_446_744_073_709_551_616.0 {
        Ordering::Less
    } else if whole < -9_223_372_036_854_775_808.0 {
        Ordering::Greater
    } else if whole >= 0.0 {
        let b = whole as u64;
        match x {
            Wide::Signed(n) if n < 0 => Ordering::Less,
            Wide::Signed(n) => n.unsigned_abs().cmp(&b),
            Wide::Unsigned(n) => n.cmp(&b),
        }
    } else {
        let b = whole as i64;
        match x {
            Wide::Signed(n) => n.cmp(&b),
            Wide::Unsigned(_) => Ordering::Greater,
        }
    };
    match cmp {
        Ordering::Equal if bound > whole => Ordering::Less,
        Ordering::Equal if bound < whole => Ordering::Greater,
        other => other,
    }
}

integers! {
    i8: "-128", "127", signed;
    i16: "-32768", "32767", signed;
    i32: "-2147483648", "2147483647", signed;
    i64: "-9223372036854775808", "9223372036854775807", signed;
    u8: "0", "255", unsigned;
    u16: "0", "65535", unsigned;
    u32: "0", "4294967295", unsigned;
    u64: "0", "18446744073709551615", unsigned;
}

impl<'i> ArgValue<'i> for f64 {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"number""#);
    /// Any JSON number; magnitudes beyond `f64::MAX` (which would read as infinities) are
    /// rejected.
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        let f = v
            .as_f64()
            .ok_or_else(|| error.set(Problem::Type("a number")))?;
        if f.is_finite() {
            Ok(f)
        } else {
            Err(error.set(out_of_range(f, f64::MIN, f64::MAX)))
        }
    }
}

impl<'i> ArgValue<'i> for f32 {
    /// `±f32::MAX`, written as the shortest `f64` form of its exact value.
    const SCHEMA_BODY: SchemaText = SchemaText::Text(
        r#""type":"number","minimum":-3.4028234663852886e38,"maximum":3.4028234663852886e38"#,
    );
    /// A JSON number within `±f32::MAX`, rounded to the nearest `f32`.
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        let f = v
            .as_f64()
            .ok_or_else(|| error.set(Problem::Type("a number")))?;
        let max = f64::from(f32::MAX);
        if f < -max {
            Err(error.set(Problem::BelowMinimum(-max)))
        } else if f > max {
            Err(error.set(Problem::AboveMaximum(max)))
        } else {
            Ok(f as f32)
        }
    }
}

impl OutputValue for f64 {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"number""#);
    /// NaN and infinities are written as `null` (which the schema does not allow: keep
    /// output finite).
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        w.f64(*self);
    }
}

impl OutputValue for f32 {
    const SCHEMA_BODY: SchemaText = <f32 as ArgValue<'static>>::SCHEMA_BODY;
    /// Written through `f64` (exact, though not always the shortest form of the `f32`).
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        w.f64(f64::from(*self));
    }
}

impl ArgNumber for f64 {
    fn compare_to(&self, bound: f64) -> Ordering {
        self.partial_cmp(&bound).unwrap_or(Ordering::Equal)
    }
}

impl ArgNumber for f32 {
    fn compare_to(&self, bound: f64) -> Ordering {
        f64::from(*self)
            .partial_cmp(&bound)
            .unwrap_or(Ordering::Equal)
    }
}

impl<'i> ArgValue<'i> for JsonStr<'i> {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"string""#);
    /// Zero-copy: the string as escaped in the input ([`JsonStr::chars`],
    /// [`JsonStr::eq_str`], [`JsonStr::decode_into`] read it).
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        v.as_string()
            .ok_or_else(|| error.set(Problem::Type("a string")))
    }
}

impl ArgLength for JsonStr<'_> {
    const MIN_KEYWORD: &'static str = r#""minLength":"#;
    const MAX_KEYWORD: &'static str = r#""maxLength":"#;
    fn arg_len(&self) -> usize {
        self.chars().count()
    }
}

impl OutputValue for JsonStr<'_> {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"string""#);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        w.string_raw_escaped(self.raw());
    }
}

impl OutputValue for str {
    const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"string""#);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        w.string(self);
    }
}

impl<T: OutputValue + ?Sized> OutputValue for &T {
    const SCHEMA_BODY: SchemaText = T::SCHEMA_BODY;
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        (**self).write_value(w);
    }
}

impl<T: OutputValue> OutputValue for [T] {
    const SCHEMA_BODY: SchemaText = SchemaText::Parts(&[
        SchemaText::Text(r#""type":"array","items":{"#),
        T::SCHEMA_BODY,
        SchemaText::Text("}"),
    ]);
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        w.begin_array();
        for item in self {
            item.write_value(w);
        }
        w.end_array();
    }
}

impl<T: OutputValue, const N: usize> OutputValue for [T; N] {
    const SCHEMA_BODY: SchemaText = <[T] as OutputValue>::SCHEMA_BODY;
    fn write_value(&self, w: &mut JsonWriter<'_>) {
        self.as_slice().write_value(w);
    }
}

impl<'i, T: ArgValue<'i>> ArgValue<'i> for Option<T> {
    const SCHEMA_BODY: SchemaText = T::SCHEMA_BODY;
    const OPTIONAL: bool = true;
    /// A present member is parsed as `T` (`null` is not accepted: the schema does not
    /// allow it); an absent one is `None`.
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        T::from_json(v, error).map(Some)
    }
    fn absent() -> Option<Self> {
        Some(None)
    }
}

/// A borrowed, typed view of a JSON array: every element was checked as a `T` when the
/// list was parsed; [`iter`](Self::iter) parses them again, lazily, as they are read. The
/// allocation-free counterpart of `Vec<T>` (schema `"type":"array","items":{...}`).
#[derive(Clone, Copy, Debug)]
pub struct ArgList<'i, T> {
    raw: RawJson<'i>,
    len: usize,
    _item: PhantomData<fn() -> T>,
}

impl<'i, T: ArgValue<'i>> ArgList<'i, T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The array's JSON text.
    pub fn raw(&self) -> RawJson<'i> {
        self.raw
    }
    /// The elements, parsed in order (each was validated already, so none is skipped).
    pub fn iter(&self) -> ArgIter<'i, T> {
        ArgIter {
            elements: self.raw.elements(),
            _item: PhantomData,
        }
    }
}

impl<'i, T: ArgValue<'i>> IntoIterator for &ArgList<'i, T> {
    type Item = T;
    type IntoIter = ArgIter<'i, T>;
    fn into_iter(self) -> ArgIter<'i, T> {
        self.iter()
    }
}

/// Iterator over an [`ArgList`]'s elements.
#[derive(Clone, Debug)]
pub struct ArgIter<'i, T> {
    elements: Option<Elements<'i>>,
    _item: PhantomData<fn() -> T>,
}

impl<'i, T: ArgValue<'i>> Iterator for ArgIter<'i, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        let elements = self.elements.as_mut()?;
        loop {
            // Every element parsed when the list was built; a failure cannot happen.
            if let Ok(item) = T::from_json(elements.next()?, &mut ArgError::blank()) {
                return Some(item);
            }
        }
    }
}

/// Checks every element of an array as a `T`, returning the count.
fn check_elements<'i, T: ArgValue<'i>>(
    v: RawJson<'i>,
    error: &mut ArgError<'i>,
) -> Result<usize, Rejected> {
    let elements = v
        .elements()
        .ok_or_else(|| error.set(Problem::Type("an array")))?;
    let mut len = 0;
    for (i, element) in elements.enumerate() {
        T::from_json(element, error).map_err(|_| error.at(PathSegment::Index(i)))?;
        len += 1;
    }
    Ok(len)
}

impl<'i, T: ArgValue<'i>> ArgValue<'i> for ArgList<'i, T> {
    const SCHEMA_BODY: SchemaText = SchemaText::Parts(&[
        SchemaText::Text(r#""type":"array","items":{"#),
        T::SCHEMA_BODY,
        SchemaText::Text("}"),
    ]);
    fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        let len = check_elements::<T>(v, error)?;
        Ok(ArgList {
            raw: v,
            len,
            _item: PhantomData,
        })
    }
}

impl<T> ArgLength for ArgList<'_, T> {
    const MIN_KEYWORD: &'static str = r#""minItems":"#;
    const MAX_KEYWORD: &'static str = r#""maxItems":"#;
    fn arg_len(&self) -> usize {
        self.len
    }
}

#[cfg(feature = "alloc")]
mod owned {
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::*;

    impl<'i> ArgValue<'i> for String {
        const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"string""#);
        fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
            let s = v
                .as_string()
                .ok_or_else(|| error.set(Problem::Type("a string")))?;
            Ok(match s.as_borrowed() {
                Some(text) => String::from(text),
                None => s.chars().collect(),
            })
        }
    }

    impl ArgLength for String {
        const MIN_KEYWORD: &'static str = r#""minLength":"#;
        const MAX_KEYWORD: &'static str = r#""maxLength":"#;
        fn arg_len(&self) -> usize {
            self.chars().count()
        }
    }

    impl OutputValue for String {
        const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"string""#);
        fn write_value(&self, w: &mut JsonWriter<'_>) {
            w.string(self);
        }
    }

    impl<'i, T: ArgValue<'i>> ArgValue<'i> for Vec<T> {
        const SCHEMA_BODY: SchemaText = <ArgList<'i, T> as ArgValue<'i>>::SCHEMA_BODY;
        fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
            let elements = v
                .elements()
                .ok_or_else(|| error.set(Problem::Type("an array")))?;
            let mut out = Vec::new();
            for (i, element) in elements.enumerate() {
                out.push(
                    T::from_json(element, error).map_err(|_| error.at(PathSegment::Index(i)))?,
                );
            }
            Ok(out)
        }
    }

    impl<T> ArgLength for Vec<T> {
        const MIN_KEYWORD: &'static str = r#""minItems":"#;
        const MAX_KEYWORD: &'static str = r#""maxItems":"#;
        fn arg_len(&self) -> usize {
            self.len()
        }
    }

    impl<T: OutputValue> OutputValue for Vec<T> {
        const SCHEMA_BODY: SchemaText = <[T] as OutputValue>::SCHEMA_BODY;
        fn write_value(&self, w: &mut JsonWriter<'_>) {
            self.as_slice().write_value(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{parse, Limits};

    fn int<T: for<'i> ArgValue<'i>>(text: &str) -> Result<T, Problem<'static>> {
        let raw = parse(text.as_bytes(), Limits::default()).unwrap();
        let mut e = ArgError::blank();
        T::from_json(raw, &mut e).map_err(|_| match e.problem {
            Problem::Unknown(_) => Problem::Invalid("unknown"),
            Problem::BelowMinimum(x) => Problem::BelowMinimum(x),
            Problem::AboveMaximum(x) => Problem::AboveMaximum(x),
            Problem::NotAnInteger => Problem::NotAnInteger,
            Problem::Type(t) => Problem::Type(t),
            _ => Problem::Invalid("other"),
        })
    }

    #[test]
    fn enum_values_are_found_in_their_must_be_one_of_list() {
        const ALLOWED: &str = r#""add", "sub", "times", "x""#;
        fn find(json: &str) -> Result<usize, Problem<'_>> {
            let raw = parse(json.as_bytes(), Limits::default()).unwrap();
            let mut e = ArgError::blank();
            enum_position(raw, ALLOWED, &mut e).map_err(|_| e.problem)
        }
        assert_eq!(find(r#""add""#), Ok(0));
        assert_eq!(find(r#""sub""#), Ok(1));
        assert_eq!(find(r#""\u0074imes""#), Ok(2));
        assert_eq!(find(r#""x""#), Ok(3));
        for other in [r#""ad""#, r#""adds""#, r#""""#, r#"", ""#, r#""add\"""#] {
            assert_eq!(find(other), Err(Problem::NotInEnum(ALLOWED)), "{other}");
        }
        assert_eq!(find("1"), Err(Problem::Type("a string")));
    }

    #[test]
    fn integers_take_integral_numbers_in_range_only() {
        assert_eq!(int::<u8>("255"), Ok(255));
        assert_eq!(int::<u8>("2.0"), Ok(2));
        assert_eq!(int::<u8>("2.5"), Err(Problem::NotAnInteger));
        assert_eq!(int::<u8>("2.5e1"), Ok(25));
        assert_eq!(int::<u8>("256"), Err(Problem::AboveMaximum(255.0)));
        assert_eq!(int::<u8>("-1"), Err(Problem::BelowMinimum(0.0)));
        assert_eq!(int::<u8>("-0"), Ok(0));
        assert_eq!(int::<u64>("18446744073709551615"), Ok(u64::MAX));
        // 2^64 written as a float must not saturate into u64::MAX.
        assert!(int::<u64>("1.8446744073709552e19").is_err());
        assert!(int::<i64>("9.223372036854775808e18").is_err());
        assert_eq!(int::<i64>("-9.223372036854775808e18"), Ok(i64::MIN));
        assert!(int::<i64>("9223372036854775808").is_err());
        assert!(int::<i32>("1e400").is_err());
        assert_eq!(int::<i8>("\"1\""), Err(Problem::Type("an integer")));
        assert!(int::<f64>("1e400").is_err());
        assert!(int::<f32>("3.5e38").is_err());
    }

    #[test]
    fn integer_comparisons_are_exact() {
        assert_eq!(
            u64::MAX.compare_to(18_446_744_073_709_551_615.0),
            Ordering::Less
        );
        assert_eq!(3u8.compare_to(2.5), Ordering::Greater);
        assert_eq!(2u8.compare_to(2.5), Ordering::Less);
        assert_eq!((-3i8).compare_to(-2.5), Ordering::Less);
        assert_eq!((-2i8).compare_to(-2.5), Ordering::Greater);
        assert_eq!(5i64.compare_to(5.0), Ordering::Equal);
        assert_eq!(0u32.compare_to(-1.0), Ordering::Greater);
        assert_eq!((i64::MAX).compare_to(9.3e18), Ordering::Less);
    }
}
