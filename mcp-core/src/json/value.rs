//! Borrowed views over validated JSON text.

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
    /// The value's JSON text, exactly as it appeared in the input.
    pub fn as_str(&self) -> &'a str {
        self.text
    }
    /// The value's kind.
    pub fn kind(&self) -> Kind {
        unimplemented!()
    }
    /// `true` for `null`.
    pub fn is_null(&self) -> bool {
        unimplemented!()
    }
    /// The boolean, if this is `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        unimplemented!()
    }
    /// The string, if this is a string.
    pub fn as_string(&self) -> Option<JsonStr<'a>> {
        unimplemented!()
    }
    /// The integer, if this is a number written without fraction/exponent that fits `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        unimplemented!()
    }
    /// The integer, if this is a number written without fraction/exponent that fits `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        unimplemented!()
    }
    /// The number as `f64` (nearest), if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        unimplemented!()
    }
    /// Iterator over `(key, value)` pairs in source order, if this is an object.
    pub fn members(&self) -> Option<Members<'a>> {
        unimplemented!()
    }
    /// Iterator over elements, if this is an array.
    pub fn elements(&self) -> Option<Elements<'a>> {
        unimplemented!()
    }
    /// The value of the first member whose decoded key equals `key`, if this is an object.
    pub fn get(&self, _key: &str) -> Option<RawJson<'a>> {
        unimplemented!()
    }
}

/// Iterator over an object's members.
#[derive(Clone, Debug)]
pub struct Members<'a> {
    pub(crate) rest: &'a str,
}

impl<'a> Iterator for Members<'a> {
    type Item = (JsonStr<'a>, RawJson<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        unimplemented!()
    }
}

/// Iterator over an array's elements.
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    pub(crate) rest: &'a str,
}

impl<'a> Iterator for Elements<'a> {
    type Item = RawJson<'a>;
    fn next(&mut self) -> Option<Self::Item> {
        unimplemented!()
    }
}

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
        unimplemented!()
    }
    /// The decoded content when it has no escapes (zero-copy).
    pub fn as_borrowed(&self) -> Option<&'a str> {
        unimplemented!()
    }
    /// The decoded characters.
    pub fn chars(&self) -> Chars<'a> {
        unimplemented!()
    }
    /// Length in bytes of the decoded (UTF-8) content.
    pub fn decoded_len(&self) -> usize {
        unimplemented!()
    }
    /// Whether the decoded content equals `s` (no allocation).
    pub fn eq_str(&self, _s: &str) -> bool {
        unimplemented!()
    }
    /// Decodes into `buf`, returning the decoded text, or the size needed.
    pub fn decode_into<'b>(&self, _buf: &'b mut [u8]) -> Result<&'b str, super::BufferTooSmall> {
        unimplemented!()
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
        unimplemented!()
    }
}
