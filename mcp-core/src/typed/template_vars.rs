//! Typed resource template variables: the traits `#[derive(TemplateVars)]` implements,
//! written by hand just as well.
//!
//! | trait | what it gives | used for |
//! |---|---|---|
//! | [`TemplateVars`] | `VARIABLES` (the names) and the struct from the [`Captures`] of a URI matched against a template | `resources/read` of a templated URI |
//! | [`TemplateVar`] | one variable's value from its raw (still pct-encoded) text | the field types of a `TemplateVars` struct |
//!
//! Value types: `&str` (the raw text, still pct-encoded), [`PctStr`] (the same with
//! decoding helpers), integers (`u8` ... `u64`, `usize`, `i8` ... `i64`, `isize`: decimal
//! digits, a leading `-` for signed ones) and, with feature `alloc`, `String` (decoded).
//!
//! A value that does not parse is an [`ArgError`] naming the variable; the `#[resources]`
//! macro answers such a read as not found (the URI names no resource), and tries the next
//! template first.

use core::fmt;

use crate::typed::{ArgError, PathSegment, Problem};
use crate::wire::uri_template::{percent_decode, Captures, DecodeError};

/// Longest URI (after JSON unescaping) the `#[resources]` macro matches against templates.
pub const MAX_URI: usize = 512;

/// The variables of a resource template, as a struct.
pub trait TemplateVars<'u>: Sized {
    /// The variable names, in field order.
    const VARIABLES: &'static [&'static str];
    /// The struct from the captures of a matched URI, borrowing from the URI.
    #[allow(clippy::result_large_err)] // the path is kept inline: no allocation
    fn from_captures(captures: &Captures<'_, 'u>) -> Result<Self, ArgError<'u>>;
}

/// The value of one template variable, made from its raw text (a non-empty run of
/// unreserved characters and `%XX` triplets).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a URI template variable type",
    label = "not a template variable type",
    note = "template variables are `&str` (raw, pct-encoded), `PctStr<'_>`, integers or `String` (feature `alloc`, decoded)"
)]
pub trait TemplateVar<'u>: Sized {
    /// The value from the variable's raw text.
    fn from_var(raw: &'u str) -> Result<Self, Problem<'u>>;
}

impl<'u> TemplateVar<'u> for &'u str {
    fn from_var(raw: &'u str) -> Result<Self, Problem<'u>> {
        Ok(raw)
    }
}

/// A template variable's text as it appears in the URI (pct-encoded), with decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PctStr<'u>(pub &'u str);

impl<'u> PctStr<'u> {
    /// The raw text, still pct-encoded.
    pub fn raw(&self) -> &'u str {
        self.0
    }
    /// Whether decoding is needed (the text has a `%XX` triplet).
    pub fn has_escapes(&self) -> bool {
        self.0.contains('%')
    }
    /// The decoded text: borrowed when there are no escapes, otherwise decoded into `buf`.
    pub fn decode_into<'b>(&self, buf: &'b mut [u8]) -> Result<&'b str, DecodeError>
    where
        'u: 'b,
    {
        if self.has_escapes() {
            percent_decode(self.0, buf)
        } else {
            Ok(self.0)
        }
    }
    /// Whether the decoded text equals `s` (no allocation).
    pub fn eq_str(&self, s: &str) -> bool {
        let mut want = s.bytes();
        let mut bytes = self.0.bytes();
        while let Some(b) = bytes.next() {
            let got = if b == b'%' {
                let hi = bytes.next().and_then(|h| (h as char).to_digit(16));
                let lo = bytes.next().and_then(|l| (l as char).to_digit(16));
                match (hi, lo) {
                    (Some(h), Some(l)) => (h * 16 + l) as u8,
                    _ => return false,
                }
            } else {
                b
            };
            if want.next() != Some(got) {
                return false;
            }
        }
        want.next().is_none()
    }
    /// The decoded text, allocated.
    #[cfg(feature = "alloc")]
    pub fn decode(&self) -> Result<alloc::string::String, DecodeError> {
        let mut buf = alloc::vec![0u8; self.0.len()];
        self.decode_into(&mut buf).map(alloc::string::String::from)
    }
}

impl fmt::Display for PctStr<'_> {
    /// The raw text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl<'u> TemplateVar<'u> for PctStr<'u> {
    fn from_var(raw: &'u str) -> Result<Self, Problem<'u>> {
        Ok(PctStr(raw))
    }
}

#[cfg(feature = "alloc")]
impl<'u> TemplateVar<'u> for alloc::string::String {
    fn from_var(raw: &'u str) -> Result<Self, Problem<'u>> {
        PctStr(raw)
            .decode()
            .map_err(|_| Problem::Invalid("must be UTF-8 text, pct-encoded"))
    }
}

macro_rules! integer_var {
    ($($t:ty)*) => {$(
        impl<'u> TemplateVar<'u> for $t {
            fn from_var(raw: &'u str) -> Result<Self, Problem<'u>> {
                raw.parse().map_err(|_| Problem::NotAnInteger)
            }
        }
    )*};
}
integer_var!(u8 u16 u32 u64 usize i8 i16 i32 i64 isize);

/// One field from the captures (generated code).
#[doc(hidden)]
#[allow(clippy::result_large_err)]
pub fn __var<'u, T: TemplateVar<'u>>(
    captures: &Captures<'_, 'u>,
    name: &'static str,
) -> Result<T, ArgError<'u>> {
    let at = PathSegment::Key(name);
    let raw = captures
        .get(name)
        .ok_or(ArgError::new(Problem::Missing).within(at))?;
    T::from_var(raw).map_err(|p| ArgError::new(p).within(at))
}

/// Whether `names` has `name` (generated compile-time checks).
#[doc(hidden)]
#[allow(clippy::indexing_slicing)] // const fn: bounds are checked by the loop
pub const fn __has(names: &[&str], name: &str) -> bool {
    let mut i = 0;
    while i < names.len() {
        if crate::typed::str_eq(names[i], name) {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether every one of `names` is in `within` (generated compile-time checks).
#[doc(hidden)]
#[allow(clippy::indexing_slicing)] // const fn: bounds are checked by the loop
pub const fn __all_in(names: &[&str], within: &[&str]) -> bool {
    let mut i = 0;
    while i < names.len() {
        if !__has(within, names[i]) {
            return false;
        }
        i += 1;
    }
    true
}
