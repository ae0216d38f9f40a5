//! 2026-07-28 custom headers from tool parameters (SEP-2243): a property of a tool's
//! `inputSchema` marked `"x-mcp-header": "Region"` is mirrored by an HTTP client into an
//! `Mcp-Param-Region` header on every `tools/call` of that tool.
//!
//! [`param_headers`] reads the marked properties of a schema without allocating, and
//! refuses a schema whose marks break the rules; a client must then exclude the tool:
//!
//! | rule | [`HeaderMarkError`] |
//! |---|---|
//! | the name is not empty | [`Empty`](HeaderMarkError::Empty) |
//! | it is an HTTP token (visible ASCII, no separators such as space or `:`) | [`Charset`](HeaderMarkError::Charset) |
//! | the property's `type` is `string`, `integer` or `boolean` | [`NotPrimitive`](HeaderMarkError::NotPrimitive) |
//! | no two properties share a name, ignoring ASCII case | [`Duplicate`](HeaderMarkError::Duplicate) |
//!
//! ```
//! use mcp_rs_core::wire::headers::marks::param_headers;
//! use mcp_rs_core::wire::json::{parse, Limits};
//!
//! let schema = br#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"q":{"type":"string"}}}"#;
//! let schema = parse(schema, Limits::default()).unwrap();
//! let marks = param_headers(schema).unwrap();
//! let names: Vec<_> = marks.map(|m| (m.property.raw(), m.header.raw())).collect();
//! assert_eq!(names, [("region", "Region")]);
//! ```

use crate::wire::json::{JsonStr, Members, RawJson};

/// The schema keyword that marks a property.
pub const KEYWORD: &str = "x-mcp-header";

/// The prefix of the header a marked property is sent in.
pub const PREFIX: &str = "Mcp-Param-";

/// One marked property.
#[derive(Clone, Copy, Debug)]
pub struct HeaderMark<'i> {
    /// The property (a key of `properties`, and of the call's `arguments`).
    pub property: JsonStr<'i>,
    /// The header name after [`PREFIX`].
    pub header: JsonStr<'i>,
}

/// Why a schema's `x-mcp-header` marks are invalid (the tool must be excluded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderMarkError {
    /// A mark is not a non-empty string.
    Empty,
    /// A mark holds a character not allowed in an HTTP header name.
    Charset,
    /// A marked property is not of type `string`, `integer` or `boolean`.
    NotPrimitive,
    /// Two marks name the same header (ASCII case ignored).
    Duplicate,
}

impl core::fmt::Display for HeaderMarkError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            HeaderMarkError::Empty => "an x-mcp-header mark is empty or not a string",
            HeaderMarkError::Charset => "an x-mcp-header mark is not an HTTP token",
            HeaderMarkError::NotPrimitive => {
                "x-mcp-header marks a property that is not a string, integer or boolean"
            }
            HeaderMarkError::Duplicate => "two x-mcp-header marks name the same header",
        })
    }
}

impl core::error::Error for HeaderMarkError {}

/// The marked properties of `properties`, in schema order.
#[derive(Clone, Debug)]
pub struct HeaderMarks<'i> {
    members: Option<Members<'i>>,
}

impl<'i> Iterator for HeaderMarks<'i> {
    type Item = HeaderMark<'i>;

    fn next(&mut self) -> Option<HeaderMark<'i>> {
        let members = self.members.as_mut()?;
        members.find_map(|(property, schema)| {
            let header = schema.get(KEYWORD)?.as_string()?;
            Some(HeaderMark { property, header })
        })
    }
}

/// The marked properties of a tool's `inputSchema` (top-level `properties` only), checked
/// against the rules of the [module docs](self).
pub fn param_headers(input_schema: RawJson<'_>) -> Result<HeaderMarks<'_>, HeaderMarkError> {
    let members = input_schema.get("properties").and_then(|p| p.members());
    for (_, schema) in members.clone().into_iter().flatten() {
        let Some(mark) = schema.get(KEYWORD) else {
            continue;
        };
        let header = mark.as_string().ok_or(HeaderMarkError::Empty)?;
        if header.raw().is_empty() {
            return Err(HeaderMarkError::Empty);
        }
        // A token has no escapes: any backslash means a character outside the set.
        if header.has_escapes() || !header.raw().bytes().all(is_tchar) {
            return Err(HeaderMarkError::Charset);
        }
        let kind = schema.get("type").and_then(|t| t.as_string());
        if !kind.is_some_and(|k| ["string", "integer", "boolean"].iter().any(|t| k.eq_str(t))) {
            return Err(HeaderMarkError::NotPrimitive);
        }
    }
    let marks = HeaderMarks { members };
    for (i, a) in marks.clone().enumerate() {
        if marks
            .clone()
            .skip(i + 1)
            .any(|b| a.header.raw().eq_ignore_ascii_case(b.header.raw()))
        {
            return Err(HeaderMarkError::Duplicate);
        }
    }
    Ok(marks)
}

/// Whether the JSON text `schema` may hold an [`KEYWORD`] mark: it has the keyword written
/// out, or a `\u` escape (the only way to spell one of its characters otherwise). `false`
/// means [`param_headers`] of it finds no mark, and costs one pass over the bytes instead of
/// a parse and a walk of every property (the per-request cost of a `tools/call` over
/// 2026-07-28 HTTP).
pub fn may_mark(schema: &[u8]) -> bool {
    let word = KEYWORD.as_bytes();
    let mut i = 0;
    while let Some(&b) = schema.get(i) {
        let found = match b {
            b'x' => schema.get(i..i + word.len()) == Some(word),
            b'\\' => schema.get(i + 1) == Some(&b'u'),
            _ => false,
        };
        if found {
            return true;
        }
        // (`\\` is one escape: skipping its second byte keeps `\\u` from counting.)
        i += if b == b'\\' { 2 } else { 1 };
    }
    false
}

/// Whether `b` may appear in an HTTP header name (RFC 9110 `tchar`).
pub fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{parse, Limits};

    fn check(schema: &str) -> Result<usize, HeaderMarkError> {
        let v = parse(schema.as_bytes(), Limits::default()).unwrap();
        param_headers(v).map(|m| m.count())
    }

    #[test]
    fn marks_are_checked() {
        let prop = |t: &str, h: &str| {
            std::format!(r#"{{"properties":{{"a":{{"type":"{t}","x-mcp-header":"{h}"}}}}}}"#)
        };
        assert_eq!(check(&prop("string", "Region")), Ok(1));
        assert_eq!(check(&prop("integer", "P")), Ok(1));
        assert_eq!(check(&prop("string", "")), Err(HeaderMarkError::Empty));
        assert_eq!(
            check(&prop("object", "D")),
            Err(HeaderMarkError::NotPrimitive)
        );
        assert_eq!(
            check(&prop("number", "D")),
            Err(HeaderMarkError::NotPrimitive)
        );
        assert_eq!(
            check(&prop("string", "My R")),
            Err(HeaderMarkError::Charset)
        );
        assert_eq!(check(&prop("string", "R:1")), Err(HeaderMarkError::Charset));
        assert_eq!(
            check(&prop("string", "R\\t1")),
            Err(HeaderMarkError::Charset)
        );
        assert_eq!(
            check(&prop("string", "Régi")),
            Err(HeaderMarkError::Charset)
        );
        let dup = r#"{"properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}"#;
        assert_eq!(check(dup), Err(HeaderMarkError::Duplicate));
        assert_eq!(check(r#"{"type":"object"}"#), Ok(0));
        let bad = r#"{"properties":{"a":{"type":"string","x-mcp-header":3}}}"#;
        assert_eq!(check(bad), Err(HeaderMarkError::Empty));
    }

    #[test]
    fn may_mark_finds_every_spelling_of_the_keyword() {
        let mark = |key: &str| {
            std::format!(r#"{{"properties":{{"a":{{"type":"string","{key}":"Region"}}}}}}"#)
        };
        for key in ["x-mcp-header", r"x-mcp-header", r"x-mcp-header"] {
            let text = mark(key);
            assert!(may_mark(text.as_bytes()), "{key}");
            assert_eq!(check(&text), Ok(1), "{key}");
        }
        for text in [
            r#"{"type":"object","properties":{"a":{"type":"number"}}}"#,
            r#"{"description":"a\\u0078-mcp-header \n\"x-mcp-heade\"","x":1}"#,
            r#"{"x-mcp-heade":"R"}"#,
            "x-mcp-heade",
            "",
        ] {
            assert!(!may_mark(text.as_bytes()), "{text}");
            if let Ok(v) = parse(text.as_bytes(), Limits::default()) {
                assert_eq!(param_headers(v).map(|m| m.count()), Ok(0), "{text}");
            }
        }
    }
}
