//! RFC 6570 **level 1** URI templates, for MCP resource templates.
//!
//! `resources/templates/list` advertises templates such as `test://template/{id}/data`; a
//! later `resources/read` of `test://template/123/data` is routed by [`UriTemplate::matches`],
//! which yields `id = "123"`. [`UriTemplate::expand`] goes the other way.
//!
//! Template syntax (level 1 only):
//!
//! | piece       | written as                                   | expands to                         | matches in a URI                                     |
//! |-------------|----------------------------------------------|------------------------------------|------------------------------------------------------|
//! | literal     | an RFC 6570 literal character (see below)    | itself                             | itself, byte for byte (case-sensitive)               |
//! | literal     | `%` HEXDIG HEXDIG                            | itself                             | itself, byte for byte (hex case included)            |
//! | expression  | `{` varname `}`                              | the value, pct-encoding all but unreserved bytes | a non-empty run of unreserved characters and `%XX` triplets |
//! | varname     | varchar *( `.` varchar )                     |                                    |                                                      |
//! | varchar     | ALPHA / DIGIT / `_` / `%` HEXDIG HEXDIG      |                                    |                                                      |
//!
//! Unreserved characters are `A-Z a-z 0-9 - . _ ~`. Literal characters are those RFC 6570
//! allows: any printable ASCII character except space and `"`, `'`, `%` (unless part of a
//! `%XX` triplet), `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}`; and the non-ASCII `ucschar` and
//! `iprivate` ranges of RFC 3987. Non-ASCII literals are kept as they are (IRI form) when
//! expanding and matched as they are; RFC 6570 would pct-encode them on expansion.
//!
//! Rejected by [`UriTemplate::validate`] (see [`TemplateError`]): operators (`{+x}`, `{#x}`,
//! `{.x}`, `{/x}`, `{;x}`, `{?x}`, `{&x}` and the reserved `= , ! @ |`), modifiers (`{x*}`,
//! `{x:3}`), variable lists (`{x,y}`), empty, unclosed or nested braces, two expressions with
//! no literal between them (`{a}{b}` cannot be split when matching), more than [`MAX_VARS`]
//! variables, and a variable name used twice.
//!
//! ## Matching rule
//!
//! A URI matches when it is the template's literals with each expression replaced by a
//! non-empty run of unreserved characters and `%XX` triplets (either hex case). Reserved
//! characters (`/`, `?`, `#`, `:` …), bare `%` and non-ASCII characters therefore end a
//! value. When a literal between two expressions could also be part of the value before it
//! (`{a}-{b}` and `x-y-z`), each value is the **shortest** non-empty run, not splitting a
//! `%XX` triplet, that is followed by the next literal (`a = "x"`, `b = "y-z"`); the value
//! of the last expression extends to where the template's final literal is a suffix of the
//! URI.
//!
//! This rule never needs backtracking, and it never misses a match:
//! - a literal that contains a byte no value can hold (anything but unreserved and `%`) can
//!   follow a given value's start at one position only, so there is no choice;
//! - a literal made of value bytes only is itself a run of unreserved characters and `%XX`
//!   triplets, so whatever follows a later occurrence of it can equally follow the earliest
//!   one: the next value just starts earlier and absorbs the difference.
//!
//! Invariants:
//! - `matches` returns `Some` exactly when the URI is of the form above (the tests compare it
//!   with an exhaustive backtracking matcher), and never panics;
//! - for a valid template and non-empty values, `matches(expand(values))` is `Some`, the
//!   [`percent_decode`]d captures expand to the same URI, and they equal the values whenever
//!   every literal between two expressions has a character encoded values never contain
//!   (such as `/`), which makes the split unique;
//! - each variable costs one forward [`str::find`] (linear Two-Way search) over its run,
//!   restarted only after an occurrence inside a `%XX` triplet;
//! - an invalid template has no [`variables`](UriTemplate::variables), matches nothing and
//!   does not expand.
//!
//! ```
//! use mcp_rs_core::wire::uri_template::{percent_decode, UriTemplate};
//!
//! let template = UriTemplate::new("test://template/{id}/data");
//! assert_eq!(template.validate(), Ok(()));
//! assert_eq!(template.variables().collect::<Vec<_>>(), ["id"]);
//!
//! let captures = template.matches("test://template/123/data").unwrap();
//! assert_eq!(captures.get("id"), Some("123"));
//! assert!(template.matches("test://template/1/2/data").is_none());
//! assert!(template.matches("test://template//data").is_none());
//!
//! // Values are pct-encoded on expansion and captured raw; decode them before use.
//! let mut out = [0u8; 64];
//! let uri = template.expand(&[("id", "a/b c")], &mut out).unwrap();
//! assert_eq!(uri, "test://template/a%2Fb%20c/data");
//! let raw = template.matches(uri).unwrap().get("id").unwrap();
//! assert_eq!(raw, "a%2Fb%20c");
//! let mut buf = [0u8; 16];
//! assert_eq!(percent_decode(raw, &mut buf), Ok("a/b c"));
//! ```

use core::fmt;
use core::iter::FusedIterator;

/// Most variables a template may have (and so the capacity of [`Captures`]).
pub const MAX_VARS: usize = 8;

/// Why a template is not a level 1 URI template this module accepts.
///
/// `at` is the byte offset in the template text where the problem was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TemplateError {
    /// A `{` without its `}`; `at` is the `{`.
    Unclosed {
        /// Byte offset of the `{`.
        at: usize,
    },
    /// A `}` outside an expression.
    UnmatchedClose {
        /// Byte offset of the `}`.
        at: usize,
    },
    /// A `{` inside an expression.
    Nested {
        /// Byte offset of the inner `{`.
        at: usize,
    },
    /// `{}`; `at` is the `{`.
    EmptyExpression {
        /// Byte offset of the `{`.
        at: usize,
    },
    /// Above level 1: an operator (`+ # . / ; ? &`, or the reserved `= , ! @ |`), a modifier
    /// (`*`, `:n`) or a variable list (`,`).
    Unsupported {
        /// Byte offset of the operator or modifier character.
        at: usize,
    },
    /// A variable name that is not `varchar *( "." varchar )`.
    InvalidVarName {
        /// Byte offset of the offending character.
        at: usize,
    },
    /// Two expressions with no literal between them (`{a}{b}`), which cannot be split when
    /// matching; `at` is the second `{`.
    AdjacentExpressions {
        /// Byte offset of the second expression's `{`.
        at: usize,
    },
    /// A character that may not appear in a literal (space, control, `"`, `'`, `<`, `>`,
    /// `\`, `^`, `` ` ``, `|`, non-character code points) or a `%` not starting a `%XX`
    /// triplet.
    InvalidLiteral {
        /// Byte offset of the offending character.
        at: usize,
    },
    /// More than [`MAX_VARS`] expressions; `at` is the first one too many.
    TooManyVariables {
        /// Byte offset of the `{` of the expression beyond the limit.
        at: usize,
    },
    /// A variable name used twice; `at` is the second use.
    DuplicateVariable {
        /// Byte offset of the `{` of the repeated expression.
        at: usize,
    },
}

impl TemplateError {
    /// Byte offset in the template text where the problem was found.
    pub fn offset(&self) -> usize {
        match *self {
            TemplateError::Unclosed { at }
            | TemplateError::UnmatchedClose { at }
            | TemplateError::Nested { at }
            | TemplateError::EmptyExpression { at }
            | TemplateError::Unsupported { at }
            | TemplateError::InvalidVarName { at }
            | TemplateError::AdjacentExpressions { at }
            | TemplateError::InvalidLiteral { at }
            | TemplateError::TooManyVariables { at }
            | TemplateError::DuplicateVariable { at } => at,
        }
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            TemplateError::Unclosed { .. } => "unclosed expression",
            TemplateError::UnmatchedClose { .. } => "unmatched '}'",
            TemplateError::Nested { .. } => "nested '{'",
            TemplateError::EmptyExpression { .. } => "empty expression",
            TemplateError::Unsupported { .. } => "operator or modifier beyond level 1",
            TemplateError::InvalidVarName { .. } => "invalid variable name",
            TemplateError::AdjacentExpressions { .. } => "adjacent expressions",
            TemplateError::InvalidLiteral { .. } => "invalid literal character",
            TemplateError::TooManyVariables { .. } => "too many variables",
            TemplateError::DuplicateVariable { .. } => "duplicate variable",
        };
        write!(f, "URI template: {what} at byte {}", self.offset())
    }
}

impl core::error::Error for TemplateError {}

/// Why [`percent_decode`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeError {
    /// A `%` not followed by two hex digits.
    InvalidEscape {
        /// Byte offset of the `%` in the input.
        at: usize,
    },
    /// The decoded bytes are not UTF-8.
    InvalidUtf8 {
        /// Length of the longest valid UTF-8 prefix of the decoded bytes.
        valid_up_to: usize,
    },
    /// The output buffer is too small (checked before UTF-8 validity, which needs the bytes).
    BufferTooSmall {
        /// Bytes needed for the decoded text.
        required: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::InvalidEscape { at } => write!(f, "invalid percent escape at byte {at}"),
            DecodeError::InvalidUtf8 { valid_up_to } => write!(
                f,
                "percent-decoded text is not UTF-8 after {valid_up_to} bytes"
            ),
            DecodeError::BufferTooSmall { required } => {
                write!(f, "output buffer too small: {required} bytes required")
            }
        }
    }
}

impl core::error::Error for DecodeError {}

/// Why [`UriTemplate::expand`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExpandError {
    /// The template is invalid.
    Template(TemplateError),
    /// No value was given for a variable. RFC 6570 would expand it to nothing, which the
    /// result could then not be matched against: refused instead.
    MissingValue {
        /// Position of the variable among the template's variables, from 0.
        index: usize,
    },
    /// A variable's value is empty (refused for the same reason as a missing one).
    EmptyValue {
        /// Position of the variable among the template's variables, from 0.
        index: usize,
    },
    /// The output buffer is too small.
    BufferTooSmall {
        /// Bytes needed for the whole expansion.
        required: usize,
    },
}

impl From<TemplateError> for ExpandError {
    fn from(e: TemplateError) -> Self {
        ExpandError::Template(e)
    }
}

impl fmt::Display for ExpandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpandError::Template(e) => fmt::Display::fmt(e, f),
            ExpandError::MissingValue { index } => write!(f, "no value for variable {index}"),
            ExpandError::EmptyValue { index } => write!(f, "empty value for variable {index}"),
            ExpandError::BufferTooSmall { required } => {
                write!(f, "output buffer too small: {required} bytes required")
            }
        }
    }
}

impl core::error::Error for ExpandError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ExpandError::Template(e) => Some(e),
            _ => None,
        }
    }
}

/// A level 1 URI template, borrowed. Construction does not check it; see
/// [`validate`](Self::validate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UriTemplate<'a> {
    text: &'a str,
}

impl<'a> UriTemplate<'a> {
    /// Wraps template text (unchecked; usable in `static`s).
    pub const fn new(text: &'a str) -> Self {
        UriTemplate { text }
    }

    /// The template text.
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// Checks that this is a level 1 template this module accepts (see the module docs).
    pub fn validate(&self) -> Result<(), TemplateError> {
        let bytes = self.text.as_bytes();
        let mut names = [""; MAX_VARS];
        let mut count = 0usize;
        // Offset just past the previous expression's `}`.
        let mut after_expr = None;
        let mut i = 0usize;
        while let Some(&c) = bytes.get(i) {
            match c {
                b'{' => {
                    if after_expr == Some(i) {
                        return Err(TemplateError::AdjacentExpressions { at: i });
                    }
                    let (name_end, end) = parse_expression(bytes, i)?;
                    let name = self.text.get(i + 1..name_end).unwrap_or_default();
                    let seen = names.get(..count).unwrap_or_default();
                    if seen.contains(&name) {
                        return Err(TemplateError::DuplicateVariable { at: i });
                    }
                    match names.get_mut(count) {
                        Some(slot) => *slot = name,
                        None => return Err(TemplateError::TooManyVariables { at: i }),
                    }
                    count += 1;
                    after_expr = Some(end);
                    i = end;
                }
                b'}' => return Err(TemplateError::UnmatchedClose { at: i }),
                b'%' => {
                    if !is_triplet(bytes, i) {
                        return Err(TemplateError::InvalidLiteral { at: i });
                    }
                    i += 3;
                }
                0..=0x7f => {
                    if !is_literal_ascii(c) {
                        return Err(TemplateError::InvalidLiteral { at: i });
                    }
                    i += 1;
                }
                _ => {
                    // `i` is a char boundary: only whole characters were stepped over.
                    let ch = self.text.get(i..).and_then(|rest| rest.chars().next());
                    match ch {
                        Some(ch) if is_literal_non_ascii(ch) => i += ch.len_utf8(),
                        _ => return Err(TemplateError::InvalidLiteral { at: i }),
                    }
                }
            }
        }
        Ok(())
    }

    /// The variable names, in template order (for completing template arguments). Nothing
    /// for an invalid template.
    pub fn variables(&self) -> Variables<'a> {
        let rest = if self.validate().is_ok() {
            self.text
        } else {
            ""
        };
        Variables {
            parts: Parts { rest },
        }
    }

    /// Whether the (valid) template has a variable called `name` (exact comparison).
    pub fn has_variable(&self, name: &str) -> bool {
        self.variables().any(|v| v == name)
    }

    /// Matches `uri` against the template (see the module docs for the rule). `None` if it
    /// does not match or the template is invalid.
    ///
    /// The captured values are raw, still pct-encoded; see [`percent_decode`].
    pub fn matches<'u>(&self, uri: &'u str) -> Option<Captures<'a, 'u>> {
        self.validate().ok()?;
        let bytes = uri.as_bytes();
        let mut captures = Captures::new();
        let mut parts = Parts { rest: self.text }.peekable();
        let mut pos = 0usize;
        // The variable whose value starts at `pos`, waiting for the literal that ends it.
        let mut open: Option<&'a str> = None;
        while let Some(part) = parts.next() {
            match part {
                Part::Var(name) => open = Some(name),
                Part::Literal(lit) => {
                    let lit_len = lit.len();
                    match open.take() {
                        None => {
                            // Leading literal.
                            if !bytes.get(pos..)?.starts_with(lit.as_bytes()) {
                                return None;
                            }
                            pos = pos.checked_add(lit_len)?;
                        }
                        Some(name) => {
                            let end = if parts.peek().is_none() {
                                // Final literal: the value runs up to where it is a suffix.
                                let end = bytes.len().checked_sub(lit_len)?;
                                if !bytes.get(end..)?.starts_with(lit.as_bytes()) {
                                    return None;
                                }
                                end
                            } else {
                                find_value_end(uri, pos, lit)?
                            };
                            if end <= pos || scan_units(bytes, pos, end) != end {
                                return None;
                            }
                            captures.push(name, uri.get(pos..end)?);
                            pos = end.checked_add(lit_len)?;
                        }
                    }
                }
            }
        }
        match open {
            // The template ends with an expression: its value is the rest of the URI.
            Some(name) => {
                let end = bytes.len();
                if end <= pos || scan_units(bytes, pos, end) != end {
                    return None;
                }
                captures.push(name, uri.get(pos..)?);
            }
            None => {
                if pos != bytes.len() {
                    return None;
                }
            }
        }
        Some(captures)
    }

    /// Level 1 expansion into `out`: literals are copied, each `{name}` is replaced by the
    /// value paired with `name` in `vars` (the first such pair), every byte of it but
    /// unreserved ones written as `%XX` (uppercase hex). Pairs for names the template does
    /// not use are ignored.
    ///
    /// Every variable needs a non-empty value, so that the result [`matches`](Self::matches).
    /// On [`ExpandError::BufferTooSmall`], `required` is the exact length of the expansion.
    pub fn expand<'b>(
        &self,
        vars: &[(&str, &str)],
        out: &'b mut [u8],
    ) -> Result<&'b str, ExpandError> {
        self.validate()?;
        let mut w = Writer { buf: out, len: 0 };
        let mut index = 0usize;
        for part in (Parts { rest: self.text }) {
            match part {
                Part::Literal(lit) => w.extend(lit.as_bytes()),
                Part::Var(name) => {
                    let value = match vars.iter().find(|(n, _)| *n == name) {
                        None => return Err(ExpandError::MissingValue { index }),
                        Some((_, "")) => return Err(ExpandError::EmptyValue { index }),
                        Some((_, value)) => value,
                    };
                    for &b in value.as_bytes() {
                        if is_unreserved(b) {
                            w.push(b);
                        } else {
                            w.push(b'%');
                            w.push(hex_digit(b >> 4));
                            w.push(hex_digit(b & 0x0f));
                        }
                    }
                    index += 1;
                }
            }
        }
        w.finish()
    }
}

impl fmt::Display for UriTemplate<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text)
    }
}

/// Iterator over a template's variable names, from [`UriTemplate::variables`].
#[derive(Clone, Debug)]
pub struct Variables<'a> {
    parts: Parts<'a>,
}

impl<'a> Iterator for Variables<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.parts.by_ref().find_map(|part| match part {
            Part::Var(name) => Some(name),
            Part::Literal(_) => None,
        })
    }
}

impl FusedIterator for Variables<'_> {}

/// The variables of a matched URI: up to [`MAX_VARS`] `(name, raw value)` pairs in template
/// order, stored inline. Values are slices of the URI, still pct-encoded.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Captures<'a, 'u> {
    pairs: [(&'a str, &'u str); MAX_VARS],
    len: usize,
}

impl<'a, 'u> Captures<'a, 'u> {
    fn new() -> Self {
        Captures {
            pairs: [("", ""); MAX_VARS],
            len: 0,
        }
    }

    fn push(&mut self, name: &'a str, value: &'u str) {
        // A valid template has at most MAX_VARS variables, so this always has room.
        if let Some(slot) = self.pairs.get_mut(self.len) {
            *slot = (name, value);
            self.len += 1;
        }
    }

    /// The raw (pct-encoded) value of variable `name`, if the template has it.
    pub fn get(&self, name: &str) -> Option<&'u str> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The `(name, raw value)` pairs, in template order.
    pub fn as_slice(&self) -> &[(&'a str, &'u str)] {
        self.pairs.get(..self.len).unwrap_or_default()
    }

    /// Iterates over the `(name, raw value)` pairs, in template order.
    pub fn iter(&self) -> core::iter::Copied<core::slice::Iter<'_, (&'a str, &'u str)>> {
        self.as_slice().iter().copied()
    }

    /// Number of captured variables (the template's variable count).
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether nothing was captured (a template without variables).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'c, 'a, 'u> IntoIterator for &'c Captures<'a, 'u> {
    type Item = (&'a str, &'u str);
    type IntoIter = core::iter::Copied<core::slice::Iter<'c, (&'a str, &'u str)>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for Captures<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Decodes `%XX` escapes (either hex case) in `raw` into `buf`; other characters are copied
/// unchanged (`+` stays `+`). Fails on a `%` not followed by two hex digits, on a result
/// that is not UTF-8, or when `buf` is too small (reporting the decoded length, before
/// UTF-8 validity is known).
pub fn percent_decode<'b>(raw: &str, buf: &'b mut [u8]) -> Result<&'b str, DecodeError> {
    let bytes = raw.as_bytes();
    let mut len = 0usize;
    let mut i = 0usize;
    while let Some(&c) = bytes.get(i) {
        let byte = if c == b'%' {
            let hi = bytes.get(i + 1).copied().and_then(hex_value);
            let lo = bytes.get(i + 2).copied().and_then(hex_value);
            match (hi, lo) {
                (Some(hi), Some(lo)) => {
                    i += 3;
                    (hi << 4) | lo
                }
                _ => return Err(DecodeError::InvalidEscape { at: i }),
            }
        } else {
            i += 1;
            c
        };
        if let Some(dst) = buf.get_mut(len) {
            *dst = byte;
        }
        // At most one output byte per input byte: cannot overflow.
        len += 1;
    }
    if len > buf.len() {
        return Err(DecodeError::BufferTooSmall { required: len });
    }
    let buf: &'b [u8] = buf;
    core::str::from_utf8(buf.get(..len).unwrap_or_default()).map_err(|e| DecodeError::InvalidUtf8 {
        valid_up_to: e.valid_up_to(),
    })
}

// ---- internals ---------------------------------------------------------------------------

/// A piece of a *valid* template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part<'a> {
    Literal(&'a str),
    Var(&'a str),
}

/// Splits a template into literals and expressions. Only meaningful on valid templates, but
/// never panics on others.
#[derive(Clone, Debug)]
struct Parts<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Parts<'a> {
    type Item = Part<'a>;

    fn next(&mut self) -> Option<Part<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        if let Some(body) = self.rest.strip_prefix('{') {
            let Some(close) = body.find('}') else {
                self.rest = "";
                return None;
            };
            let name = body.get(..close).unwrap_or_default();
            self.rest = body.get(close + 1..).unwrap_or_default();
            Some(Part::Var(name))
        } else {
            let end = self.rest.find('{').unwrap_or(self.rest.len());
            let lit = self.rest.get(..end).unwrap_or_default();
            self.rest = self.rest.get(end..).unwrap_or_default();
            Some(Part::Literal(lit))
        }
    }
}

impl FusedIterator for Parts<'_> {}

/// Parses the expression whose `{` is at `open`: where its variable name ends (it starts at
/// `open + 1`) and the offset just past the `}`.
fn parse_expression(bytes: &[u8], open: usize) -> Result<(usize, usize), TemplateError> {
    let start = open + 1;
    match bytes.get(start) {
        None => return Err(TemplateError::Unclosed { at: open }),
        Some(b'}') => return Err(TemplateError::EmptyExpression { at: open }),
        Some(b'{') => return Err(TemplateError::Nested { at: start }),
        Some(b'+' | b'#' | b'.' | b'/' | b';' | b'?' | b'&' | b'=' | b',' | b'!' | b'@' | b'|') => {
            return Err(TemplateError::Unsupported { at: start })
        }
        Some(_) => {}
    }
    // Whether a varchar must come next (at the start and after a dot).
    let mut need_char = true;
    let mut j = start;
    loop {
        match bytes.get(j) {
            None => return Err(TemplateError::Unclosed { at: open }),
            Some(b'}') if !need_char => return Ok((j, j + 1)),
            Some(b'.') if !need_char => {
                need_char = true;
                j += 1;
            }
            Some(&c) if c.is_ascii_alphanumeric() || c == b'_' => {
                need_char = false;
                j += 1;
            }
            Some(b'%') if is_triplet(bytes, j) => {
                need_char = false;
                j += 3;
            }
            Some(b'*' | b':' | b',') if !need_char => {
                return Err(TemplateError::Unsupported { at: j })
            }
            Some(b'{') => return Err(TemplateError::Nested { at: j }),
            Some(_) => return Err(TemplateError::InvalidVarName { at: j }),
        }
    }
}

/// Whether `bytes[i..]` starts with `%` HEXDIG HEXDIG.
fn is_triplet(bytes: &[u8], i: usize) -> bool {
    matches!(bytes.get(i..).and_then(|t| t.get(..3)), Some([b'%', h, l]) if h.is_ascii_hexdigit() && l.is_ascii_hexdigit())
}

/// `ALPHA / DIGIT / "-" / "." / "_" / "~"`.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// RFC 6570 `literals`, ASCII part (`%` is handled as pct-encoded separately).
fn is_literal_ascii(c: u8) -> bool {
    matches!(c, 0x21 | 0x23..=0x24 | 0x26 | 0x28..=0x3b | 0x3d | 0x3f..=0x5b | 0x5d | 0x5f | 0x61..=0x7a | 0x7e)
}

/// RFC 6570 `literals`, non-ASCII part: RFC 3987 `ucschar` / `iprivate`.
fn is_literal_non_ascii(ch: char) -> bool {
    let c = u32::from(ch);
    let (plane, low) = (c >> 16, c & 0xffff);
    if plane == 0 {
        matches!(low, 0xa0..=0xd7ff | 0xe000..=0xf8ff | 0xf900..=0xfdcf | 0xfdf0..=0xffef)
    } else {
        // Planes 1-16 without each plane's last two code points; plane 14 from E1000.
        low <= 0xfffd && !(plane == 0xe && low < 0x1000)
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn hex_digit(nibble: u8) -> u8 {
    b"0123456789ABCDEF"
        .get(usize::from(nibble & 0x0f))
        .copied()
        .unwrap_or(b'0')
}

/// Reads value units (an unreserved byte or a `%XX` triplet) from `start` while they end at
/// or before `limit`; returns where that stops. `[start, limit)` is a valid value exactly
/// when the result is `limit`.
fn scan_units(bytes: &[u8], start: usize, limit: usize) -> usize {
    let mut i = start;
    while i < limit {
        let step = match bytes.get(i) {
            Some(&b) if is_unreserved(b) => 1,
            Some(b'%') if is_triplet(bytes, i) => 3,
            _ => break,
        };
        match i.checked_add(step) {
            Some(next) if next <= limit => i = next,
            _ => break,
        }
    }
    i
}

/// For a value starting at `start` and followed by the non-empty literal `lit` (not the
/// template's last piece): the end of the shortest non-empty value, not splitting a `%XX`
/// triplet, after which `lit` occurs.
fn find_value_end(uri: &str, start: usize, lit: &str) -> Option<usize> {
    let bytes = uri.as_bytes();
    let run_end = scan_units(bytes, start, bytes.len());
    // Occurrences of `lit` that can follow the value lie within [start + 1, run_end + len).
    let mut window_end = run_end.saturating_add(lit.len()).min(bytes.len());
    while !uri.is_char_boundary(window_end) {
        window_end += 1;
    }
    let mut from = start.checked_add(1)?;
    while from <= run_end {
        // `from` is a char boundary: bytes of the run are ASCII.
        let at = from.checked_add(uri.get(from..window_end)?.find(lit)?)?;
        if at > run_end {
            return None;
        }
        // In a valid run every `%` starts a triplet; `at` must not fall inside one.
        let inside_triplet = (1..=2).any(|back| {
            at.checked_sub(back)
                .filter(|&p| p >= start)
                .and_then(|p| bytes.get(p))
                == Some(&b'%')
        });
        if !inside_triplet {
            return Some(at);
        }
        from = at.checked_add(1)?;
    }
    None
}

/// Writes into a buffer, counting on past its end.
struct Writer<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl<'b> Writer<'b> {
    fn push(&mut self, b: u8) {
        if let Some(dst) = self.buf.get_mut(self.len) {
            *dst = b;
        }
        self.len = self.len.saturating_add(1);
    }

    fn extend(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push(b);
        }
    }

    fn finish(self) -> Result<&'b str, ExpandError> {
        let Writer { buf, len } = self;
        if len > buf.len() {
            return Err(ExpandError::BufferTooSmall { required: len });
        }
        let buf: &'b [u8] = buf;
        // Whole literals (UTF-8) and ASCII escapes were written, so this always succeeds.
        core::str::from_utf8(buf.get(..len).unwrap_or_default())
            .map_err(|_| ExpandError::BufferTooSmall { required: len })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::test_rng::XorShift;
    use std::string::String;
    use std::vec::Vec;
    use std::{format, vec};

    /// (template, URI, expected captures or `None`).
    type MatchCase = (
        &'static str,
        &'static str,
        Option<&'static [(&'static str, &'static str)]>,
    );

    fn t(text: &str) -> UriTemplate<'_> {
        UriTemplate::new(text)
    }

    fn caps<'u>(template: &str, uri: &'u str) -> Option<Vec<(String, &'u str)>> {
        t(template)
            .matches(uri)
            .map(|c| c.iter().map(|(n, v)| (String::from(n), v)).collect())
    }

    fn pairs<'u>(expected: &[(&str, &'u str)]) -> Vec<(String, &'u str)> {
        expected
            .iter()
            .map(|&(n, v)| (String::from(n), v))
            .collect()
    }

    fn decode(raw: &str) -> Result<String, DecodeError> {
        let mut buf = [0u8; 256];
        percent_decode(raw, &mut buf).map(String::from)
    }

    fn expand(template: &str, vars: &[(&str, &str)]) -> Result<String, ExpandError> {
        let mut out = [0u8; 1024];
        t(template).expand(vars, &mut out).map(String::from)
    }

    #[test]
    fn mcp_example() {
        let template = t("test://template/{id}/data");
        assert_eq!(template.validate(), Ok(()));
        assert_eq!(template.as_str(), "test://template/{id}/data");
        assert_eq!(format!("{template}"), "test://template/{id}/data");
        let c = template.matches("test://template/123/data").unwrap();
        assert_eq!(c.get("id"), Some("123"));
        assert_eq!(c.len(), 1);
        assert!(!c.is_empty());
        assert_eq!(c.get("ID"), None);
        assert_eq!(c.get("other"), None);
        assert_eq!(c.as_slice(), &[("id", "123")]);
        assert_eq!(format!("{c:?}"), r#"{"id": "123"}"#);
        assert!(template.has_variable("id"));
        assert!(!template.has_variable("data"));
        assert_eq!(template.variables().collect::<Vec<_>>(), ["id"]);
    }

    #[test]
    fn match_table() {
        let cases: &[MatchCase] = &[
            (
                "file:///{path}",
                "file:///notes.txt",
                Some(&[("path", "notes.txt")]),
            ),
            ("file:///{path}", "file:///a/b", None),
            (
                "file:///{path}",
                "file:///a%2Fb",
                Some(&[("path", "a%2Fb")]),
            ),
            ("file:///{path}", "file:///", None),
            ("file:///{path}", "file://", None),
            (
                "file:///{dir}/{name}.txt",
                "file:///docs/readme.txt",
                Some(&[("dir", "docs"), ("name", "readme")]),
            ),
            (
                "file:///{dir}/{name}.txt",
                "file:///docs/read.me.txt",
                Some(&[("dir", "docs"), ("name", "read.me")]),
            ),
            ("file:///{dir}/{name}.txt", "file:///docs/.txt", None),
            ("file:///{dir}/{name}.txt", "file:///docs/readme.md", None),
            ("{a}", "abc", Some(&[("a", "abc")])),
            ("{a}", "A-Z.a_z~09", Some(&[("a", "A-Z.a_z~09")])),
            ("{a}", "", None),
            ("{a}", "%41", Some(&[("a", "%41")])),
            ("{a}", "%4a%4A", Some(&[("a", "%4a%4A")])),
            ("{a}", "%4", None),
            ("{a}", "%", None),
            ("{a}", "%zz", None),
            ("{a}", "a%", None),
            ("{a}", "a b", None),
            // Literal mismatches: case, prefix only, extra text, empty value.
            ("test://template/{id}/data", "Test://template/1/data", None),
            ("test://template/{id}/data", "test://template/1/DATA", None),
            ("test://template/{id}/data", "test://template/1/data/", None),
            ("test://template/{id}/data", "test://template/1/dat", None),
            ("test://template/{id}/data", "xtest://template/1/data", None),
            ("test://template/{id}/data", "test://template//data", None),
            ("test://template/{id}/data", "test://template/data", None),
            ("test://template/{id}/data", "", None),
            // No variables: exact comparison.
            ("", "", Some(&[])),
            ("", "x", None),
            ("res://fixed", "res://fixed", Some(&[])),
            ("res://fixed", "res://fixe", None),
            // Several variables, separated by reserved characters.
            (
                "db://{table}/{row}?x",
                "db://users/42?x",
                Some(&[("table", "users"), ("row", "42")]),
            ),
            ("db://{table}/{row}?x", "db://users/42", None),
            ("a{x}b{y}c", "a1b2c", Some(&[("x", "1"), ("y", "2")])),
            // Non-ASCII literals are matched as written; values cannot hold raw non-ASCII.
            (
                "file:///données/{f}",
                "file:///données/a",
                Some(&[("f", "a")]),
            ),
            ("file:///données/{f}", "file:///donn%C3%A9es/a", None),
            ("x/{f}", "x/é", None),
            ("x/{f}", "x/%C3%A9", Some(&[("f", "%C3%A9")])),
            // Pct-encoded literals are compared byte for byte.
            ("a%2F{x}", "a%2Fy", Some(&[("x", "y")])),
            ("a%2F{x}", "a%2fy", None),
            ("a%2F{x}", "a/y", None),
            ("{v.x}", "1", Some(&[("v.x", "1")])),
        ];
        for &(template, uri, expected) in cases {
            assert_eq!(t(template).validate(), Ok(()), "{template}");
            assert_eq!(
                caps(template, uri),
                expected.map(pairs),
                "{template} ~ {uri}"
            );
        }
    }

    #[test]
    fn reserved_and_other_characters_end_values() {
        let stops = [
            ":", "/", "?", "#", "[", "]", "@", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";",
            "=", " ", "\"", "<", ">", "\\", "^", "`", "{", "|", "}", "%", "é", "\u{7f}", "\n",
        ];
        for stop in stops {
            for uri in [
                format!("x/a{stop}b"),
                format!("x/{stop}"),
                format!("x/{stop}b"),
            ] {
                assert_eq!(t("x/{v}").matches(&uri), None, "{uri:?}");
            }
        }
        for ok in ["-", ".", "_", "~", "A", "z", "0", "9", "%20", "%7e"] {
            let uri = format!("x/a{ok}b");
            assert!(t("x/{v}").matches(&uri).is_some(), "{uri}");
        }
    }

    #[test]
    fn ambiguous_literals_take_the_shortest_value() {
        // The documented rule: each value is the shortest non-empty run (not splitting a
        // %XX) followed by the next literal; the last value reaches the final literal.
        let cases: &[MatchCase] = &[
            ("x{a}-{b}y", "x1-2-3y", Some(&[("a", "1"), ("b", "2-3")])),
            ("x{a}-{b}y", "x1-2-3", None),
            ("x{a}-{b}y", "x-1y", None),
            ("x{a}-{b}y", "x1-y", None),
            ("x{a}-{b}y", "x1--y", Some(&[("a", "1"), ("b", "-")])),
            ("{a}.{b}", "a.b.c", Some(&[("a", "a"), ("b", "b.c")])),
            ("{a}.{b}", "a.", None),
            ("{a}.{b}", ".a.b", Some(&[("a", ".a"), ("b", "b")])),
            ("{a}--{b}", "x---y", Some(&[("a", "x"), ("b", "-y")])),
            ("{a}--{b}", "x----", Some(&[("a", "x"), ("b", "--")])),
            ("{a}-", "x-y-", Some(&[("a", "x-y")])),
            ("{a}-", "-", None),
            ("{a}-", "--", Some(&[("a", "-")])),
            ("{a}ab{b}c", "1ab2abc", Some(&[("a", "1"), ("b", "2ab")])),
            (
                "{a}%2F{b}",
                "x%2Fy%2Fz",
                Some(&[("a", "x"), ("b", "y%2Fz")]),
            ),
            ("{a}%2F{b}", "%2F%2Fz", Some(&[("a", "%2F"), ("b", "z")])),
            // "1" occurs inside %41 and %31 first: those are not value boundaries.
            ("{a}1{b}", "%41%311b", Some(&[("a", "%41%31"), ("b", "b")])),
            ("{a}1{b}", "%411b", Some(&[("a", "%41"), ("b", "b")])),
            ("{a}1{b}", "%41b", None),
            // The value before a literal with a reserved character has one possible end.
            ("{a}-/{b}", "x-y-/z", Some(&[("a", "x-y"), ("b", "z")])),
            ("{a}-/{b}", "x-/-/z", None),
            // Three ways to split; the earliest ends win, later values absorb the rest.
            (
                "{a}-{b}-{c}",
                "1-2-3-4-5",
                Some(&[("a", "1"), ("b", "2"), ("c", "3-4-5")]),
            ),
            ("{a}-{b}-{c}", "1--2", None),
            (
                "{a}-{b}-{c}",
                "1---2",
                Some(&[("a", "1"), ("b", "-"), ("c", "2")]),
            ),
            ("{a}-{b}-{c}", "1-2-", None),
            ("{a}-{b}-{c}", "1---", None),
            (
                "{a}-{b}-{c}",
                "1----",
                Some(&[("a", "1"), ("b", "-"), ("c", "-")]),
            ),
            ("{a}-{b}-{c}-", "1---", None),
        ];
        for &(template, uri, expected) in cases {
            assert_eq!(t(template).validate(), Ok(()), "{template}");
            assert_eq!(
                caps(template, uri),
                expected.map(pairs),
                "{template} ~ {uri}"
            );
        }
    }

    #[test]
    fn invalid_templates() {
        use TemplateError::*;
        let cases: &[(&str, TemplateError)] = &[
            ("x{a", Unclosed { at: 1 }),
            ("{", Unclosed { at: 0 }),
            ("{a.", Unclosed { at: 0 }),
            ("x}a", UnmatchedClose { at: 1 }),
            ("{a}}", UnmatchedClose { at: 3 }),
            ("{{a}}", Nested { at: 1 }),
            ("{a{b}}", Nested { at: 2 }),
            ("x{}", EmptyExpression { at: 1 }),
            ("{+a}", Unsupported { at: 1 }),
            ("{#a}", Unsupported { at: 1 }),
            ("{.a}", Unsupported { at: 1 }),
            ("{/a}", Unsupported { at: 1 }),
            ("{;a}", Unsupported { at: 1 }),
            ("{?a}", Unsupported { at: 1 }),
            ("{&a}", Unsupported { at: 1 }),
            ("{=a}", Unsupported { at: 1 }),
            ("{,a}", Unsupported { at: 1 }),
            ("{!a}", Unsupported { at: 1 }),
            ("{@a}", Unsupported { at: 1 }),
            ("{|a}", Unsupported { at: 1 }),
            ("{a*}", Unsupported { at: 2 }),
            ("{ab:3}", Unsupported { at: 3 }),
            ("{a,b}", Unsupported { at: 2 }),
            ("{*}", InvalidVarName { at: 1 }),
            ("{-a}", InvalidVarName { at: 1 }),
            ("{a-b}", InvalidVarName { at: 2 }),
            ("{a b}", InvalidVarName { at: 2 }),
            ("{a.}", InvalidVarName { at: 3 }),
            ("{a..b}", InvalidVarName { at: 3 }),
            ("{a.*}", InvalidVarName { at: 3 }),
            ("{a%2}", InvalidVarName { at: 2 }),
            ("{a%zz}", InvalidVarName { at: 2 }),
            ("{é}", InvalidVarName { at: 1 }),
            ("{a}{b}", AdjacentExpressions { at: 3 }),
            ("x/{a}{b}/y", AdjacentExpressions { at: 5 }),
            ("a b{x}", InvalidLiteral { at: 1 }),
            ("a\"", InvalidLiteral { at: 1 }),
            ("a'", InvalidLiteral { at: 1 }),
            ("a<", InvalidLiteral { at: 1 }),
            ("a>", InvalidLiteral { at: 1 }),
            ("a\\", InvalidLiteral { at: 1 }),
            ("a^", InvalidLiteral { at: 1 }),
            ("a`", InvalidLiteral { at: 1 }),
            ("a|", InvalidLiteral { at: 1 }),
            ("a\t", InvalidLiteral { at: 1 }),
            ("a\u{7f}", InvalidLiteral { at: 1 }),
            ("a\u{85}", InvalidLiteral { at: 1 }),
            ("a\u{fdd0}", InvalidLiteral { at: 1 }),
            ("a\u{fffe}", InvalidLiteral { at: 1 }),
            ("a\u{1fffe}", InvalidLiteral { at: 1 }),
            ("a\u{e0001}", InvalidLiteral { at: 1 }),
            ("a%", InvalidLiteral { at: 1 }),
            ("a%4", InvalidLiteral { at: 1 }),
            ("a%4g{x}", InvalidLiteral { at: 1 }),
            ("{a}/{a}", DuplicateVariable { at: 4 }),
            ("{a}/{b}/{a}", DuplicateVariable { at: 8 }),
        ];
        for &(template, error) in cases {
            let tpl = t(template);
            assert_eq!(tpl.validate(), Err(error), "{template:?}");
            assert_eq!(error.offset(), tpl.validate().unwrap_err().offset());
            // An invalid template has no variables, matches nothing, does not expand.
            assert_eq!(tpl.variables().count(), 0, "{template:?}");
            assert!(!tpl.has_variable("a"));
            assert!(tpl.matches(template).is_none());
            assert!(tpl.matches("a").is_none());
            assert_eq!(
                tpl.expand(&[("a", "1"), ("b", "2"), ("x", "3")], &mut [0u8; 64]),
                Err(ExpandError::Template(error))
            );
        }
    }

    #[test]
    fn valid_templates() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("no-variables:/?#[]@!$&()*+,;=", &[]),
            ("%41%2f", &[]),
            ("{a}", &["a"]),
            ("{A_1.b2.c}", &["A_1.b2.c"]),
            ("{%41x}", &["%41x"]),
            ("{a}b{a.b}", &["a", "a.b"]),
            ("{a}B{A}", &["a", "A"]),
            ("x://ünï\u{10000}\u{e000}\u{10fffd}/{a}", &["a"]),
        ];
        for &(template, vars) in cases {
            let tpl = t(template);
            assert_eq!(tpl.validate(), Ok(()), "{template:?}");
            assert_eq!(tpl.variables().collect::<Vec<_>>(), vars, "{template:?}");
            for v in vars {
                assert!(tpl.has_variable(v));
            }
        }
        assert!(!t("{a}").has_variable("A"));
    }

    #[test]
    fn variable_limit() {
        let eight = "x/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}";
        let nine = "x/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}";
        assert_eq!(t(eight).validate(), Ok(()));
        assert_eq!(t(eight).variables().count(), MAX_VARS);
        assert_eq!(
            t(nine).validate(),
            Err(TemplateError::TooManyVariables { at: nine.len() - 3 })
        );
        let c = t(eight).matches("x/1/2/3/4/5/6/7/8").unwrap();
        assert_eq!(c.len(), 8);
        assert_eq!(c.get("h"), Some("8"));
        let names: String = c.iter().map(|(n, _)| n).collect();
        assert_eq!(names, "abcdefgh");
        let values: String = (&c).into_iter().map(|(_, v)| v).collect();
        assert_eq!(values, "12345678");
        assert_eq!(t(nine).matches("x/1/2/3/4/5/6/7/8/9"), None);
    }

    #[test]
    fn percent_decoding() {
        let ok = [
            ("", ""),
            ("abc", "abc"),
            ("a%20b", "a b"),
            ("%2F%2f", "//"),
            ("%C3%A9t%C3%A9", "été"),
            ("%e2%82%ac", "€"),
            ("a+b", "a+b"),
            ("é/%25", "é/%"),
            ("%2541", "%41"),
        ];
        for (raw, text) in ok {
            assert_eq!(decode(raw).as_deref(), Ok(text), "{raw}");
        }
        let bad = [
            ("%", DecodeError::InvalidEscape { at: 0 }),
            ("ab%4", DecodeError::InvalidEscape { at: 2 }),
            ("a%g0", DecodeError::InvalidEscape { at: 1 }),
            ("%20%0g", DecodeError::InvalidEscape { at: 3 }),
            ("%FF", DecodeError::InvalidUtf8 { valid_up_to: 0 }),
            ("ab%C3", DecodeError::InvalidUtf8 { valid_up_to: 2 }),
            ("%C3%28", DecodeError::InvalidUtf8 { valid_up_to: 0 }),
        ];
        for (raw, error) in bad {
            assert_eq!(decode(raw), Err(error), "{raw}");
        }
        // Buffer sizes: exact fits, one short reports the decoded length.
        let mut buf = [0u8; 3];
        assert_eq!(percent_decode("a%20b", &mut buf), Ok("a b"));
        let mut small = [0u8; 2];
        assert_eq!(
            percent_decode("a%20b", &mut small),
            Err(DecodeError::BufferTooSmall { required: 3 })
        );
        assert_eq!(percent_decode("", &mut []), Ok(""));
        assert_eq!(
            percent_decode("x", &mut []),
            Err(DecodeError::BufferTooSmall { required: 1 })
        );
        // Escapes are checked before the size.
        assert_eq!(
            percent_decode("aaaa%", &mut small),
            Err(DecodeError::InvalidEscape { at: 4 })
        );
    }

    #[test]
    fn expansion() {
        let tpl = "test://template/{id}/data";
        let cases = [
            ("123", "test://template/123/data"),
            ("a-b.c_d~e", "test://template/a-b.c_d~e/data"),
            ("a/b", "test://template/a%2Fb/data"),
            ("a b", "test://template/a%20b/data"),
            ("100%", "test://template/100%25/data"),
            ("%41", "test://template/%2541/data"),
            ("é", "test://template/%C3%A9/data"),
            (":/?#[]@", "test://template/%3A%2F%3F%23%5B%5D%40/data"),
            (
                "!$&'()*+,;=",
                "test://template/%21%24%26%27%28%29%2A%2B%2C%3B%3D/data",
            ),
            (
                "\"<>\\^`{|}",
                "test://template/%22%3C%3E%5C%5E%60%7B%7C%7D/data",
            ),
        ];
        for (value, uri) in cases {
            assert_eq!(expand(tpl, &[("id", value)]).as_deref(), Ok(uri));
            // And back.
            let c = t(tpl).matches(uri).unwrap();
            assert_eq!(decode(c.get("id").unwrap()).as_deref(), Ok(value));
        }
        assert_eq!(expand("", &[]).as_deref(), Ok(""));
        assert_eq!(
            expand(
                "x://{a}/{b}",
                &[("b", "2"), ("z", "?"), ("a", "1"), ("a", "3")]
            )
            .as_deref(),
            Ok("x://1/2")
        );
        assert_eq!(
            expand("x://{a}/{b}", &[("a", "1")]),
            Err(ExpandError::MissingValue { index: 1 })
        );
        assert_eq!(
            expand("x://{a}/{b}", &[("a", ""), ("b", "2")]),
            Err(ExpandError::EmptyValue { index: 0 })
        );
        assert_eq!(
            expand("{a}{b}", &[]),
            Err(ExpandError::Template(TemplateError::AdjacentExpressions {
                at: 3
            }))
        );
        // Buffer sizes: exact fits; shorter reports the exact total.
        let full = "x://%2F/y";
        let mut exact = [0u8; 9];
        assert_eq!(t("x://{a}/y").expand(&[("a", "/")], &mut exact), Ok(full));
        for n in 0..full.len() {
            let mut out = vec![0u8; n];
            assert_eq!(
                t("x://{a}/y").expand(&[("a", "/")], &mut out),
                Err(ExpandError::BufferTooSmall { required: 9 })
            );
        }
    }

    #[test]
    fn error_display() {
        assert_eq!(
            format!("{}", TemplateError::AdjacentExpressions { at: 3 }),
            "URI template: adjacent expressions at byte 3"
        );
        assert_eq!(
            format!("{}", TemplateError::Unsupported { at: 1 }),
            "URI template: operator or modifier beyond level 1 at byte 1"
        );
        assert_eq!(
            format!("{}", DecodeError::InvalidEscape { at: 2 }),
            "invalid percent escape at byte 2"
        );
        assert_eq!(
            format!("{}", DecodeError::InvalidUtf8 { valid_up_to: 1 }),
            "percent-decoded text is not UTF-8 after 1 bytes"
        );
        assert_eq!(
            format!("{}", DecodeError::BufferTooSmall { required: 7 }),
            "output buffer too small: 7 bytes required"
        );
        assert_eq!(
            format!("{}", ExpandError::MissingValue { index: 0 }),
            "no value for variable 0"
        );
        assert_eq!(
            format!("{}", ExpandError::EmptyValue { index: 2 }),
            "empty value for variable 2"
        );
        assert_eq!(
            format!("{}", ExpandError::BufferTooSmall { required: 7 }),
            "output buffer too small: 7 bytes required"
        );
        let inner = TemplateError::Nested { at: 4 };
        let e: &dyn core::error::Error = &ExpandError::from(inner);
        assert_eq!(format!("{e}"), "URI template: nested '{' at byte 4");
        assert_eq!(e.source().map(|s| format!("{s}")), Some(format!("{inner}")));
        let e: &dyn core::error::Error = &inner;
        assert!(e.source().is_none());
        let e: &dyn core::error::Error = &DecodeError::InvalidEscape { at: 0 };
        assert!(e.source().is_none());
        let e: &dyn core::error::Error = &ExpandError::EmptyValue { index: 0 };
        assert!(e.source().is_none());
    }

    // ---- randomised checks -------------------------------------------------------------

    /// The shared test generator, plus picking from alphabets.
    struct Rng(XorShift);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0.below(n)
        }

        fn pick<'x>(&mut self, from: &[&'x str]) -> &'x str {
            from[self.below(from.len())]
        }

        fn string(&mut self, alphabet: &[&str], min: usize, max: usize) -> String {
            let n = min + self.below(max - min + 1);
            (0..n).map(|_| self.pick(alphabet)).collect()
        }
    }

    /// Literal pieces that overlap the value alphabet (and some that do not).
    const LIT_PIECES: &[&str] = &["-", ".", "a", "1", "/", "%41", "~", "ab", "-a", "é", ":"];

    /// A random valid template of up to `max_vars` variables; also returns the names.
    fn random_template(rng: &mut Rng, max_vars: usize) -> (String, Vec<String>) {
        let n = rng.below(max_vars + 1);
        let mut text = rng.string(LIT_PIECES, 0, 2);
        let mut names = Vec::new();
        for i in 0..n {
            let name = format!("v{i}");
            text.push('{');
            text.push_str(&name);
            text.push('}');
            names.push(name);
            let min = usize::from(i + 1 < n);
            text.push_str(&rng.string(LIT_PIECES, min, 2));
        }
        (text, names)
    }

    /// Whether `s` is a non-empty run of unreserved bytes and %XX triplets.
    fn is_value(s: &[u8]) -> bool {
        !s.is_empty() && scan_units(s, 0, s.len()) == s.len()
    }

    /// Exhaustive backtracking matcher, trying the shortest value first: the reference for
    /// both whether a URI matches and which captures the documented rule yields.
    fn reference<'u>(parts: &[Part<'_>], uri: &'u str, at: usize, out: &mut Vec<&'u str>) -> bool {
        let rest = &uri.as_bytes()[at..];
        match parts.split_first() {
            None => rest.is_empty(),
            Some((Part::Literal(lit), tail)) => {
                rest.starts_with(lit.as_bytes()) && reference(tail, uri, at + lit.len(), out)
            }
            Some((Part::Var(_), tail)) => {
                for len in 1..=rest.len() {
                    if is_value(&rest[..len]) {
                        out.push(&uri[at..at + len]);
                        if reference(tail, uri, at + len, out) {
                            return true;
                        }
                        out.pop();
                    }
                }
                false
            }
        }
    }

    #[test]
    fn matches_agrees_with_exhaustive_backtracking() {
        let mut rng = Rng(XorShift(0x9e37_79b9_7f4a_7c15));
        let uri_pieces = &[
            "-", ".", "a", "1", "/", "%41", "%4", "%", "~", "b", "é", ":", "4",
        ];
        let mut matched = 0;
        for _ in 0..30_000 {
            let (text, names) = random_template(&mut rng, 4);
            let tpl = t(&text);
            assert_eq!(tpl.validate(), Ok(()), "{text}");
            let parts: Vec<Part<'_>> = Parts { rest: &text }.collect();
            // Half the URIs follow the template's shape (literals kept or damaged, values
            // from the URI alphabet, bad escapes included), half are free-form.
            let uri = if rng.below(2) == 0 {
                rng.string(uri_pieces, 0, 10)
            } else {
                parts
                    .iter()
                    .map(|p| match p {
                        Part::Literal(l) if rng.below(8) != 0 => String::from(*l),
                        _ => rng.string(uri_pieces, 0, 3),
                    })
                    .collect()
            };
            let mut expected = Vec::new();
            let found = reference(&parts, &uri, 0, &mut expected);
            let got = tpl.matches(&uri);
            assert_eq!(got.is_some(), found, "{text} ~ {uri}");
            if let Some(c) = got {
                matched += 1;
                let values: Vec<&str> = c.iter().map(|(_, v)| v).collect();
                assert_eq!(values, expected, "{text} ~ {uri}");
                let got_names: Vec<&str> = c.iter().map(|(n, _)| n).collect();
                assert_eq!(got_names, names);
            }
        }
        // The generator must exercise the positive side too.
        assert!(matched > 3_000, "only {matched} matches");
    }

    #[test]
    fn expand_then_match_round_trips() {
        let mut rng = Rng(XorShift(0x0123_4567_89ab_cdef));
        let value_pieces = &[
            "a", "Z", "0", "-", ".", "_", "~", "/", "?", "#", "%", "%41", " ", "é", "{", "}", ":",
            "ab", "1",
        ];
        let mut exact = 0;
        for _ in 0..20_000 {
            let (text, names) = random_template(&mut rng, MAX_VARS);
            let tpl = t(&text);
            let values: Vec<String> = names
                .iter()
                .map(|_| rng.string(value_pieces, 1, 4))
                .collect();
            let vars: Vec<(&str, &str)> = names
                .iter()
                .map(String::as_str)
                .zip(values.iter().map(String::as_str))
                .collect();
            let mut out = [0u8; 512];
            let uri = tpl.expand(&vars, &mut out).unwrap();
            let c = tpl.matches(uri).unwrap_or_else(|| panic!("{text} ~ {uri}"));
            assert_eq!(c.len(), names.len());
            // The decoded captures expand to the same URI ...
            let decoded: Vec<String> = c.iter().map(|(_, v)| decode(v).unwrap()).collect();
            let again: Vec<(&str, &str)> = names
                .iter()
                .map(String::as_str)
                .zip(decoded.iter().map(String::as_str))
                .collect();
            let mut out2 = [0u8; 512];
            assert_eq!(tpl.expand(&again, &mut out2), Ok(uri), "{text}");
            // ... and are the values whenever every literal between two expressions holds a
            // byte no encoded value can contain (the split is then unique).
            let unambiguous =
                Parts { rest: &text }
                    .collect::<Vec<_>>()
                    .windows(3)
                    .all(|w| match w {
                        [Part::Var(_), Part::Literal(lit), Part::Var(_)] => {
                            lit.bytes().any(|b| !is_unreserved(b) && b != b'%')
                        }
                        _ => true,
                    });
            if unambiguous {
                assert_eq!(decoded, values, "{text} ~ {uri}");
                exact += 1;
            }
        }
        assert!(exact > 2_000, "only {exact} unambiguous cases");
    }

    #[test]
    fn random_input_never_panics() {
        let mut rng = Rng(XorShift(0xdead_beef_cafe_f00d));
        let alphabet = &[
            "{",
            "}",
            "%",
            "/",
            "-",
            ".",
            "_",
            "~",
            "a",
            "b",
            "Z",
            "0",
            "4",
            "1",
            "F",
            ":",
            "*",
            "+",
            ",",
            "#",
            " ",
            "é",
            "\u{10000}",
            "%41",
            "{a}",
            "{b}",
        ];
        let fixed = [
            "test://template/{id}/data",
            "{a}",
            "{a}-{b}",
            "{a}%41{b}.",
            "x{a}1{b}-",
            "{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}",
        ];
        let mut valid = 0;
        for i in 0..50_000 {
            let text = rng.string(alphabet, 0, 16);
            let uri = rng.string(alphabet, 0, 24);
            let tpl = t(&text);
            let ok = tpl.validate().is_ok();
            let names: Vec<&str> = tpl.variables().collect();
            assert_eq!(names.is_empty(), !ok || !text.contains('{'));
            assert!(names.len() <= MAX_VARS);
            let _ = tpl.has_variable("a");
            if let Some(c) = tpl.matches(&uri) {
                assert!(ok);
                // Substituting the raw captures into the template gives the URI back.
                let rebuilt: String = Parts { rest: &text }
                    .map(|p| match p {
                        Part::Literal(l) => l,
                        Part::Var(n) => c.get(n).unwrap(),
                    })
                    .collect();
                assert_eq!(rebuilt, uri);
            }
            let mut out = vec![0u8; rng.below(32)];
            let _ = tpl.expand(&[("a", "x/y"), ("b", "")], &mut out);
            let mut buf = vec![0u8; rng.below(32)];
            let _ = percent_decode(&uri, &mut buf);
            let _ = t(fixed[i % fixed.len()]).matches(&uri);
            valid += usize::from(ok);
        }
        assert!(valid > 1_000, "only {valid} valid random templates");
    }

    #[test]
    fn long_inputs_stay_linear() {
        // Hits of the literal inside %XX triplets and a long run without the literal.
        let tpl = t("{a}1{b}");
        let uri = "%31".repeat(20_000) + "1b";
        let c = tpl.matches(&uri).unwrap();
        assert_eq!(c.get("b"), Some("b"));
        let uri = "a-".repeat(50_000);
        assert!(t("{a}-/{b}").matches(&uri).is_none());
        assert!(t("{a}/{b}").matches(&uri).is_none());
        let c = t("{a}-{b}").matches(&uri).unwrap();
        assert_eq!(c.get("a"), Some("a"));
        assert_eq!(c.get("b").map(str::len), Some(uri.len() - 2));
        let long = "-".repeat(100_000);
        let c = t("{a}-{b}-{c}").matches(&long).unwrap();
        assert_eq!((c.get("a"), c.get("b")), (Some("-"), Some("-")));
    }
}
