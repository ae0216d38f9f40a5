//! Typed tool arguments and structured output: the traits `mcp-macros` derives, written by
//! hand just as well.
//!
//! | trait | what it gives | used for |
//! |---|---|---|
//! | [`ToolArgs`] | `SCHEMA` (an object schema, JSON Schema 2020-12, `&'static str`) and a borrowing, allocation-free `parse` that accepts exactly what `SCHEMA` accepts | `inputSchema`, and the arguments of `tools/call` |
//! | [`ToolOutput`] | `SCHEMA` (an object schema) and a `write` into a [`JsonWriter`] | `outputSchema`, and `structuredContent` |
//!
//! Schemas are `&'static str` assembled at compile time: [`concat_len`] and [`concat_bytes`]
//! join `&'static str` pieces (literals and other types' schema constants) inside a `const`
//! item, so a heap-free firmware gets the same schemas as a server with an allocator:
//!
//! ```
//! use mcp_core::args::{concat_bytes, concat_len};
//!
//! const BODY: &str = r#""type":"number""#;
//! const SCHEMA: &str = {
//!     const PARTS: &[&str] = &[r#"{"type":"object","properties":{"x":{"#, BODY, "}}}"];
//!     const BYTES: [u8; concat_len(PARTS)] = concat_bytes(PARTS);
//!     match core::str::from_utf8(&BYTES) {
//!         Ok(s) => s,
//!         Err(_) => panic!("schema pieces are UTF-8"),
//!     }
//! };
//! assert_eq!(SCHEMA, r#"{"type":"object","properties":{"x":{"type":"number"}}}"#);
//! ```
//!
//! A failed parse is an [`ArgError`]: the path of the offending member (`options.retries`,
//! `points[2].x`) and what was wrong with it, formatted without allocation. Tool dispatch
//! turns it into an `isError` result naming the field, as the spec asks for invalid
//! arguments.

use core::fmt;

use crate::json::{JsonStr, JsonWriter, RawJson};

mod value;

pub use value::{
    check_max_length, check_maximum, check_min_length, check_minimum, parse_default, ArgIter,
    ArgLength, ArgList, ArgNumber, ArgValue, OutputValue, SchemaText,
};

/// The arguments of a tool: an object schema and the parser that enforces it.
///
/// Implementations must keep the two in step: `parse` accepts an arguments object exactly
/// when `SCHEMA` does (the derive guarantees this by generating both from one definition,
/// and its tests check it with a JSON Schema validator as the judge).
pub trait ToolArgs<'i>: Sized {
    /// The JSON Schema (2020-12) of the arguments object: `{"type":"object",...}`.
    const SCHEMA: &'static str;
    /// Parses an arguments object (`{}` when the request had none), borrowing from it.
    #[allow(clippy::result_large_err)] // the path is kept inline: no allocation
    fn parse(args: RawJson<'i>) -> Result<Self, ArgError<'i>>;
}

/// Structured tool output: an object schema and the writer of a matching value.
pub trait ToolOutput {
    /// The JSON Schema (2020-12) of `structuredContent`: `{"type":"object",...}`.
    const SCHEMA: &'static str;
    /// Writes the value (an object matching `SCHEMA`) as one JSON value.
    fn write(&self, w: &mut JsonWriter<'_>);
}

/// The total length of `parts` (for sizing [`concat_bytes`]'s array in a `const`).
pub const fn concat_len(parts: &[&str]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < parts.len() {
        total += parts[i].len();
        i += 1;
    }
    total
}

/// `parts` joined into an array of exactly `N` bytes, `N` being [`concat_len`]`(parts)`.
/// Meant for `const` items (a wrong `N` fails the build there).
#[allow(clippy::indexing_slicing)] // const fn: a panic is a compile error, never a runtime one
pub const fn concat_bytes<const N: usize>(parts: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut i = 0;
    while i < parts.len() {
        let bytes = parts[i].as_bytes();
        let mut j = 0;
        while j < bytes.len() {
            out[at] = bytes[j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(
        at == N,
        "concat_bytes: N is not the total length of the parts"
    );
    out
}

/// Maximum number of path segments an [`ArgError`] keeps (deeper ones are elided as `…`).
pub const MAX_PATH: usize = 6;

/// One step of the path to an offending value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSegment {
    /// An object member.
    Key(&'static str),
    /// An array element.
    Index(usize),
}

/// What was wrong with an argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Problem<'i> {
    /// The arguments (or a nested value declared an object) are not a JSON object.
    NotAnObject,
    /// A required member is missing.
    Missing,
    /// A member the schema does not declare (the schema says `additionalProperties: false`).
    Unknown(JsonStr<'i>),
    /// A member appears twice.
    Duplicate,
    /// The value has the wrong JSON type; the expected one is named (`"a number"`).
    Type(&'static str),
    /// A string outside the declared `enum`; the allowed values are listed (`"a, b"`).
    NotInEnum(&'static str),
    /// Below `minimum`.
    BelowMinimum(f64),
    /// Above `maximum`.
    AboveMaximum(f64),
    /// A number that is not a whole number where an integer is declared, or out of range
    /// of the integer type.
    NotAnInteger,
    /// Fewer characters (or items) than `minLength` (`minItems`).
    TooShort(usize),
    /// More characters (or items) than `maxLength` (`maxItems`).
    TooLong(usize),
    /// A string not matching `pattern`; the pattern is given.
    Pattern(&'static str),
    /// A check of the type's own (a message for the model).
    Invalid(&'static str),
}

/// A rejected arguments object: where and why. `Display` writes a sentence for the model,
/// e.g. ``argument `options.retries`: must be at most 10``.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArgError<'i> {
    path: [PathSegment; MAX_PATH],
    depth: usize,
    /// What was wrong.
    pub problem: Problem<'i>,
}

impl<'i> ArgError<'i> {
    /// An error about the value itself (an empty path: the arguments object).
    pub const fn new(problem: Problem<'i>) -> Self {
        ArgError {
            path: [PathSegment::Index(0); MAX_PATH],
            depth: 0,
            problem,
        }
    }

    /// The same error one level further out: `segment` is prepended to the path. Parsers of
    /// nested values call this as the error travels up.
    #[must_use]
    pub fn within(mut self, segment: PathSegment) -> Self {
        let kept = self.depth.min(MAX_PATH - 1);
        self.path.copy_within(0..kept, 1);
        self.path[0] = segment;
        self.depth = self.depth.saturating_add(1);
        self
    }

    /// The path from the arguments object to the offending value (at most [`MAX_PATH`]
    /// segments; [`path_elided`](Self::path_elided) says whether deeper ones were dropped).
    pub fn path(&self) -> &[PathSegment] {
        self.path
            .get(..self.depth.min(MAX_PATH))
            .unwrap_or_default()
    }

    /// Whether the path was deeper than [`MAX_PATH`].
    pub fn path_elided(&self) -> bool {
        self.depth > MAX_PATH
    }
}

impl fmt::Display for ArgError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        if path.is_empty() {
            f.write_str("arguments")?;
        } else {
            f.write_str("argument `")?;
            for (i, segment) in path.iter().enumerate() {
                match segment {
                    PathSegment::Key(k) if i == 0 => f.write_str(k)?,
                    PathSegment::Key(k) => write!(f, ".{k}")?,
                    PathSegment::Index(n) => write!(f, "[{n}]")?,
                }
            }
            if self.path_elided() {
                f.write_str("…")?;
            }
            f.write_str("`")?;
        }
        match self.problem {
            Problem::NotAnObject => f.write_str(": must be an object"),
            Problem::Missing => f.write_str(": is required"),
            Problem::Unknown(name) => {
                f.write_str(": unknown member \"")?;
                for c in name.chars().take(64) {
                    write!(f, "{}", c.escape_debug())?;
                }
                f.write_str("\"")
            }
            Problem::Duplicate => f.write_str(": appears twice"),
            Problem::Type(expected) => write!(f, ": must be {expected}"),
            Problem::NotInEnum(allowed) => write!(f, ": must be one of {allowed}"),
            Problem::BelowMinimum(min) => write!(f, ": must be at least {min}"),
            Problem::AboveMaximum(max) => write!(f, ": must be at most {max}"),
            Problem::NotAnInteger => f.write_str(": must be a whole number in range"),
            Problem::TooShort(n) => write!(f, ": must have at least {n} characters or items"),
            Problem::TooLong(n) => write!(f, ": must have at most {n} characters or items"),
            Problem::Pattern(p) => write!(f, ": must match the pattern {p}"),
            Problem::Invalid(why) => write!(f, ": {why}"),
        }
    }
}

impl core::error::Error for ArgError<'_> {}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;

    #[test]
    fn paths_read_like_rust_expressions() {
        let e = ArgError::new(Problem::AboveMaximum(10.0))
            .within(PathSegment::Key("retries"))
            .within(PathSegment::Index(2))
            .within(PathSegment::Key("options"));
        assert_eq!(
            e.to_string(),
            "argument `options[2].retries`: must be at most 10"
        );
        assert_eq!(
            ArgError::new(Problem::NotAnObject).to_string(),
            "arguments: must be an object"
        );
    }

    #[test]
    fn deep_paths_keep_the_outermost_segments() {
        let mut e = ArgError::new(Problem::Missing);
        for _ in 0..10 {
            e = e.within(PathSegment::Key("a"));
        }
        assert_eq!(e.path().len(), MAX_PATH);
        assert!(e.path_elided());
        assert_eq!(e.to_string(), "argument `a.a.a.a.a.a…`: is required");
    }
}
