//! Typed tool arguments and structured output: the traits `mcp-macros` derives, written by
//! hand just as well.
//!
//! | trait | what it gives | used for |
//! |---|---|---|
//! | [`ToolArgs`] | `SCHEMA` (an object schema, JSON Schema 2020-12, `&'static str`) and a borrowing, allocation-free `parse` that accepts exactly what `SCHEMA` accepts | `inputSchema`, and the arguments of `tools/call` |
//! | [`ToolOutput`] | `SCHEMA` (an object schema) and a `write` into a [`JsonWriter`] | `outputSchema`, and `structuredContent` |
//!
//! Schemas are `&'static str` assembled at compile time: [`concat_len`] and [`concat_bytes()`]
//! join `&'static str` pieces (literals and other types' schema constants) inside a `const`
//! item, so a heap-free firmware gets the same schemas as a server with an allocator:
//!
//! ```
//! use mcp_rs_core::typed::{concat_bytes, concat_len};
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
//! Generic types (`Vec<T>`, [`ArgList`], `Option<T>`) cannot size an array from their
//! element's schema on stable Rust, so field-level schemas are [`SchemaText`] trees of
//! `&'static str` pieces, flattened into a `&'static str` by [`schema_str!`](crate::schema_str)
//! in a concrete `const` item.
//!
//! # Value traits
//!
//! A field of an arguments struct implements [`ArgValue`] (its schema body and a parser);
//! a field of an output struct implements [`OutputValue`] (its schema body and a writer).
//!
//! | Rust type | schema | notes |
//! |---|---|---|
//! | `bool` | `"type":"boolean"` | |
//! | `i8`..`i64`, `u8`..`u64` | `"type":"integer"` with the width's `minimum`/`maximum` | integral numbers written `2.0` or `1e3` are accepted, as JSON Schema does |
//! | `f32` | `"type":"number"`, `±f32::MAX` | rounded to the nearest `f32` |
//! | `f64` | `"type":"number"` | magnitudes beyond `f64::MAX` are rejected |
//! | [`JsonStr<'i>`](JsonStr) | `"type":"string"` | zero-copy; `&str` cannot be an argument (escapes cannot be borrowed) |
//! | [`ArgList<'i, T>`](ArgList) | `"type":"array","items":{..}` | zero-copy; every element checked at parse time |
//! | `Option<T>` | as `T`, not `required` | `null` is not accepted (the schema does not allow it) |
//! | `String`, `Vec<T>` (feature `alloc`) | string, array | |
//! | `&str`, `str`, `&T`, `[T]`, `[T; N]` (output only) | string, array | |
//! | derived structs / unit enums | object / `"type":"string","enum":[..]` | |
//!
//! # The derives (feature `macros`)
//!
//! `#[derive(ToolArgs)]` on a struct with named fields (at most one lifetime parameter)
//! implements [`ToolArgs`] and [`ArgValue`]; on a unit-only enum, [`ArgValue`].
//! `#[derive(ToolOutput)]` on a struct implements [`ToolOutput`] and [`OutputValue`]; on a
//! unit-only enum, [`OutputValue`]. For example (plain text: the doctests of this crate do
//! not enable the derive):
//!
//! ```text
//! use mcp_rs_core::{typed::ArgList, wire::json::JsonStr, ToolArgs};
//!
//! #[derive(ToolArgs)]
//! #[arg(rename_all = "lowercase")]
//! enum Unit { Celsius, Fahrenheit }
//!
//! /// Arguments of `forecast`.
//! #[derive(ToolArgs)]
//! #[arg(rename_all = "camelCase")]
//! struct Forecast<'a> {
//!     /// City name.                      // doc comments become "description"
//!     #[arg(min_length = 1, max_length = 64)]
//!     city: JsonStr<'a>,
//!     #[arg(minimum = 1, maximum = 14, default = 3)]
//!     days: u8,                           // missing: 3; schema {"type":"integer","minimum":1,"maximum":14,"default":3}
//!     unit: Option<Unit>,                 // not required
//!     #[arg(header = "X-Region")]         // "x-mcp-header":"X-Region"
//!     region: Option<JsonStr<'a>>,
//!     #[arg(max_length = 5)]              // on arrays: maxItems
//!     stations: Option<ArgList<'a, JsonStr<'a>>>,
//! }
//! // Forecast::SCHEMA: {"type":"object","properties":{...},"required":["city"],
//! //                    "additionalProperties":false}
//! // Forecast::parse(args) -> Result<Forecast<'_>, ArgError<'_>>
//! ```
//!
//! Container attributes: `#[arg(rename_all = "...")]` (`lowercase`, `UPPERCASE`,
//! `PascalCase`, `camelCase`, `snake_case`, `SCREAMING_SNAKE_CASE`, `kebab-case`,
//! `SCREAMING-KEBAB-CASE`; fields are taken as snake_case, variants as PascalCase, as serde
//! does), `#[arg(allow_unknown)]` (arguments structs: unknown members are ignored and the
//! schema leaves `additionalProperties` out; by default they are rejected and the schema says
//! `"additionalProperties":false`). `#[serde(rename_all = "...")]` and
//! `#[serde(rename = "...")]` are read too (serde itself is not needed); `#[arg]` wins.
//!
//! Field attributes (`#[arg(...)]`): `rename = "..."`, `description = "..."` (default: the
//! doc comment, lines trimmed and joined), `title = "..."`, `minimum = N`, `maximum = N`
//! (numbers; on an integer or `f32` field they replace the width's own bound and must lie
//! within it), `min_length = N`, `max_length = N` (strings: Unicode scalar values, like JSON
//! Schema; arrays: `minItems`/`maxItems`), `default = <number, bool or string literal>`
//! (the schema's `default`; the field is then not required, and a missing member is parsed
//! from the literal: a default the field rejects would make a missing member an error, so
//! numeric defaults are checked against the bounds at compile time), `header = "X-Name"`
//! (the 2026 `"x-mcp-header"` keyword), `pattern = "..."` (strings: an ECMA-262 regular
//! expression, see below), `examples = [...]` (literals, the schema's `examples`; each is
//! checked at compile time against the field's `pattern`, lengths and bounds, as a string
//! `default` is). Variants take only `rename`.
//!
//! `pattern` is compiled by the derive into a [`Pattern`]: a Thompson NFA of at most
//! [`pattern::MAX_STATES`] (256) instructions in a `static` table, matched against the
//! decoded string (escapes resolved, no copy) without allocation or backtracking, in time
//! linear in the string's length. The search is unanchored unless `^`/`$` say otherwise, as
//! in JSON Schema. The supported subset: literals and escapes (`\n`, `\t`, `\xHH`,
//! `\uHHHH`, `\u{H...}`, `\cX`, `\` before punctuation), `.`, classes `[...]`/`[^...]` with
//! ranges, `\d \D \w \W \s \S`, `^`, `$`, groups `(...)`, `(?:...)`, `(?<name>...)`, `|`,
//! and `* + ? {n} {n,} {n,m}` (lazy forms too). Meanings are ECMAScript's: `\d` is `[0-9]`,
//! `\w` is `[A-Za-z0-9_]`, `\s` is ECMAScript's white space and line terminators (all of
//! Unicode's space separators, U+FEFF, not U+0085: [`pattern::SPACE`]), and `.` matches any
//! character but `\n`, `\r`, U+2028 and U+2029 (the `jsonschema` crate's `.` matches the
//! last three: the one known difference in what matches). Backreferences, lookaround, `\b`,
//! `\p{..}`, inline flags, a pattern above the state cap (`{n,m}` copies its operand) and a
//! `pattern` on a non-string field are compile errors naming the problem.
//!
//! The parser reads the object's members once: unknown members (when denied), duplicated
//! members (always: JSON Schema cannot see them, serde_json keeps the last one), type
//! errors, enum values, ranges and lengths are errors naming the path of the member; a
//! missing required member is [`Problem::Missing`]. A field's `required` status is decided
//! from its written type (`Option<...>` literally: an alias of `Option` fails the build with
//! an explanation). On output, attribute keywords only shape the schema (they are promises
//! of the tool, not checked when writing); `Option` fields are omitted when `None`.
//!
//! A failed parse is an [`ArgError`]: the path of the offending member (`options.retries`,
//! `points[2].x`) and what was wrong with it, formatted without allocation. Tool dispatch
//! turns it into an `isError` result naming the field, as the spec asks for invalid
//! arguments.
//!
//! Inside the parsers the error is not returned but written in place: [`ArgValue::from_json`]
//! gets the `&mut ArgError` to fill ([`ArgError::set`], [`ArgError::at`]) and returns the
//! zero-sized [`Rejected`], so a `?` moves nothing and every derived struct shares one
//! member reader ([`collect_members`], driven by a static table of names) and one path
//! step (code size on microcontrollers). A custom value type:
//!
//! ```
//! use mcp_rs_core::typed::{ArgError, ArgValue, Problem, Rejected, SchemaText};
//! use mcp_rs_core::wire::json::RawJson;
//!
//! /// An even integer.
//! struct Even(u64);
//!
//! impl<'i> ArgValue<'i> for Even {
//!     const SCHEMA_BODY: SchemaText = SchemaText::Text(r#""type":"integer","multipleOf":2"#);
//!     fn from_json(v: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
//!         match u64::from_json(v, error)? {
//!             n if n % 2 == 0 => Ok(Even(n)),
//!             _ => Err(error.set(Problem::Invalid("must be even"))),
//!         }
//!     }
//! }
//!
//! let mut error = ArgError::blank();
//! let three = mcp_rs_core::wire::json::parse(b"3", Default::default()).unwrap();
//! assert!(Even::from_json(three, &mut error).is_err());
//! assert_eq!(error.to_string(), "arguments: must be even");
//! ```

use core::fmt;

use crate::wire::json::{JsonStr, JsonWriter, RawJson};

#[doc(hidden)]
pub mod __macro_support;
mod message;
pub mod pattern;
#[cfg(feature = "prompts")]
pub mod prompt_args;
#[cfg(feature = "resources")]
pub mod template_vars;
mod value;

pub use crate::schema_str;
pub use pattern::{check_pattern, ArgText, Pattern};
pub use value::{
    check_max_length, check_maximum, check_min_length, check_minimum, collect_known_members,
    collect_members, enum_index, enum_position, field_failed, read_field, ArgIter, ArgLength,
    ArgList, ArgNumber, ArgValue, OutputValue, SchemaText,
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
    /// [`parse`](Self::parse) with the error written to `error` (see [`Rejected`]): what
    /// `#[tools]` calls, so that only a marker travels back. The derive implements it
    /// directly; the default calls `parse`.
    fn parse_into(args: RawJson<'i>, error: &mut ArgError<'i>) -> Result<Self, Rejected> {
        Self::parse(args).map_err(|e| {
            *error = e;
            Rejected
        })
    }
}

/// The value was refused; why and where is in the [`ArgError`] the parser was given.
///
/// [`ArgValue::from_json`] and [`ToolArgs::parse_into`] return it instead of the error
/// itself: the error (a path and a problem, tens of bytes) is written once, in place, by
/// [`ArgError::set`], and every `?` on the way out moves a zero-sized marker (code size on
/// microcontrollers: no copies of the error, no per-type error paths).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rejected;

/// Structured tool output: an object schema and the writer of a matching value.
pub trait ToolOutput {
    /// The JSON Schema (2020-12) of `structuredContent`: `{"type":"object",...}`.
    const SCHEMA: &'static str;
    /// Writes the value (an object matching `SCHEMA`) as one JSON value.
    fn write(&self, w: &mut JsonWriter<'_>);
}

/// Whether `a` and `b` are the same text, in a `const`: e.g. a compile-time check that a
/// derived schema is byte for byte a hand-written one
/// (`const _: () = assert!(str_eq(<A as ToolArgs>::SCHEMA, FIXTURE));`).
#[allow(clippy::indexing_slicing)] // const fn: bounds are checked by the loop
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The total length of `parts` (for sizing [`concat_bytes()`]'s array in a `const`).
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

/// The unused path of a new [`ArgError`] (one function rather than the same stores at
/// every place an error is built: code size).
#[inline(never)]
const fn empty_path() -> [PathSegment; MAX_PATH] {
    [PathSegment::Index(0); MAX_PATH]
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

/// A rejected arguments object: where and why. `Display` (and
/// [`write_message`](Self::write_message), which writes the same text without `core::fmt`)
/// gives a sentence for the model, e.g. ``argument `options.retries`: must be at most 10``.
#[derive(Clone, Copy)]
pub struct ArgError<'i> {
    /// The path, outermost segment first, in the last `depth` slots (so that
    /// [`within`](Self::within) only writes one slot until the path is full).
    path: [PathSegment; MAX_PATH],
    depth: usize,
    /// What was wrong. Build a different problem with [`ArgError::new`] rather than assigning
    /// this field: `new` also picks how the problem's numbers are printed (see
    /// [`write_message`](Self::write_message)).
    pub problem: Problem<'i>,
    bound: Option<message::BoundWriter>,
}

impl<'i> ArgError<'i> {
    /// A blank error to parse with ([`ArgValue::from_json`] writes into it; until then it
    /// reads ``arguments: must be an object``). One out-of-line constructor (code size).
    #[inline(never)]
    pub fn blank() -> Self {
        ArgError {
            path: empty_path(),
            depth: 0,
            problem: Problem::NotAnObject,
            bound: None,
        }
    }

    /// Records `problem` (about the value being parsed: the path is emptied) and returns
    /// the marker to return: `return Err(error.set(Problem::Type("a number")))`.
    // Inlined only to pick the writer of `f64` bounds at compile time (see `new`); the
    // stores are one out-of-line function.
    #[inline(always)]
    pub fn set(&mut self, problem: Problem<'i>) -> Rejected {
        self.record(problem, message::BoundWriter::for_problem(&problem))
    }

    #[inline(never)]
    fn record(&mut self, problem: Problem<'i>, bound: Option<message::BoundWriter>) -> Rejected {
        self.problem = problem;
        self.bound = bound;
        self.depth = 0;
        Rejected
    }

    /// Prepends `segment` to the path of the recorded error (a nested value failed) and
    /// returns the marker: `T::from_json(v, error).map_err(|_| error.at(PathSegment::Index(i)))`.
    pub fn at(&mut self, segment: PathSegment) -> Rejected {
        self.prepend(segment);
        Rejected
    }

    /// An error about the value itself (an empty path: the arguments object).
    // Inlined so that the writer of `f64` bounds is chosen at compile time at each call
    // site (only programs that report range errors link float printing); the rest is one
    // out-of-line constructor (code size).
    #[inline(always)]
    pub const fn new(problem: Problem<'i>) -> Self {
        ArgError {
            path: empty_path(),
            depth: 0,
            problem,
            bound: message::BoundWriter::for_problem(&problem),
        }
    }

    /// The same error one level further out: `segment` is prepended to the path. Parsers of
    /// nested values call this as the error travels up.
    #[must_use]
    pub fn within(mut self, segment: PathSegment) -> Self {
        self.prepend(segment);
        self
    }

    /// [`within`](Self::within) in place (one out-of-line copy, no moves of the error:
    /// code size).
    #[inline(never)]
    fn prepend(&mut self, segment: PathSegment) {
        match MAX_PATH.checked_sub(self.depth + 1) {
            Some(free) => {
                if let Some(slot) = self.path.get_mut(free) {
                    *slot = segment;
                }
            }
            None => {
                // Full: keep the outermost segments, dropping the innermost. Swaps rather
                // than `copy_within`, which would link `memmove`.
                for i in (1..MAX_PATH).rev() {
                    self.path.swap(i, i - 1);
                }
                self.path[0] = segment;
            }
        }
        self.depth = self.depth.saturating_add(1);
    }

    /// The path from the arguments object to the offending value (at most [`MAX_PATH`]
    /// segments; [`path_elided`](Self::path_elided) says whether deeper ones were dropped).
    pub fn path(&self) -> &[PathSegment] {
        self.path
            .get(MAX_PATH - self.depth.min(MAX_PATH)..)
            .unwrap_or_default()
    }

    /// Whether the path was deeper than [`MAX_PATH`].
    pub fn path_elided(&self) -> bool {
        self.depth > MAX_PATH
    }
}

impl PartialEq for ArgError<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.path() == other.path() && self.depth == other.depth && self.problem == other.problem
    }
}

impl fmt::Debug for ArgError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgError")
            .field("path", &self.path())
            .field("path_elided", &self.path_elided())
            .field("problem", &self.problem)
            .finish()
    }
}

/// The text of [`ArgError::write_message`].
impl fmt::Display for ArgError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut result = Ok(());
        self.write_message(&mut |piece| {
            if result.is_ok() {
                result = f.write_str(piece);
            }
        });
        result
    }
}

impl core::error::Error for ArgError<'_> {}

impl crate::model::tools::ToolResult<'_, '_> {
    /// Ends the content list with `output` as a JSON text block and as `structuredContent`
    /// (see [`structured_with`](Self::structured_with)); `T::SCHEMA` is the tool's
    /// `outputSchema`.
    pub fn structured<T: ToolOutput + ?Sized>(&mut self, output: &T) {
        self.structured_dyn(&|w: &mut JsonWriter<'_>| output.write(w));
    }
}

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
    fn counts_are_printed_exactly() {
        for n in [0usize, 9, 10, 99, 100, 65_535, 4_294_967_295] {
            let e = ArgError::new(Problem::TooLong(n))
                .within(PathSegment::Index(n))
                .within(PathSegment::Key("x"));
            assert_eq!(
                e.to_string(),
                std::format!("argument `x[{n}]`: must have at most {n} characters or items")
            );
        }
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
        // The innermost segments are the ones dropped.
        let keys = ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"];
        let mut e = ArgError::new(Problem::Missing);
        for key in keys {
            e = e.within(PathSegment::Key(key));
        }
        assert_eq!(e.to_string(), "argument `k9.k8.k7.k6.k5.k4…`: is required");
        assert_eq!(e.path().first(), Some(&PathSegment::Key("k9")));
    }

    /// The message, as `write_message` writes it piece by piece.
    fn pieces(e: &ArgError<'_>) -> std::string::String {
        let mut text = std::string::String::new();
        e.write_message(&mut |piece| text.push_str(piece));
        text
    }

    #[test]
    fn every_problem_has_its_sentence() {
        let at = |p: Problem<'static>| ArgError::new(p).within(PathSegment::Key("x"));
        let cases = [
            (at(Problem::Missing), "argument `x`: is required"),
            (at(Problem::Duplicate), "argument `x`: appears twice"),
            (at(Problem::NotAnObject), "argument `x`: must be an object"),
            (
                at(Problem::Type("a string")),
                "argument `x`: must be a string",
            ),
            (
                at(Problem::NotInEnum(r#""a", "b""#)),
                r#"argument `x`: must be one of "a", "b""#,
            ),
            (
                at(Problem::BelowMinimum(-273.15)),
                "argument `x`: must be at least -273.15",
            ),
            (
                at(Problem::AboveMaximum(1e21)),
                "argument `x`: must be at most 1000000000000000000000",
            ),
            (
                at(Problem::AboveMaximum(9_223_372_036_854_775_807.0)),
                "argument `x`: must be at most 9223372036854776000",
            ),
            (
                at(Problem::BelowMinimum(1e-7)),
                "argument `x`: must be at least 0.0000001",
            ),
            (
                at(Problem::NotAnInteger),
                "argument `x`: must be a whole number in range",
            ),
            (
                at(Problem::TooShort(0)),
                "argument `x`: must have at least 0 characters or items",
            ),
            (
                at(Problem::TooLong(1234)),
                "argument `x`: must have at most 1234 characters or items",
            ),
            (
                at(Problem::Pattern("^a$")),
                "argument `x`: must match the pattern ^a$",
            ),
            (
                at(Problem::Invalid("roll 1 to 100 dice")),
                "argument `x`: roll 1 to 100 dice",
            ),
            (
                ArgError::new(Problem::Missing)
                    .within(PathSegment::Index(0))
                    .within(PathSegment::Index(10))
                    .within(PathSegment::Key("grid")),
                "argument `grid[10][0]`: is required",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
            assert_eq!(pieces(&e), text);
        }
    }

    #[test]
    fn unknown_members_are_quoted_as_written_at_most_64_characters() {
        let unknown = |json: &'static str| -> std::string::String {
            let raw =
                crate::wire::json::parse(json.as_bytes(), crate::wire::json::Limits::default())
                    .unwrap();
            let (key, _) = raw.members().unwrap().next().unwrap();
            ArgError::new(Problem::Unknown(key)).to_string()
        };
        assert_eq!(unknown(r#"{"c":1}"#), r#"arguments: unknown member "c""#);
        assert_eq!(
            unknown(r#"{"a\"b\\c\n\u00e9é":1}"#),
            r#"arguments: unknown member "a\"b\\c\n\u00e9é""#
        );
        let long = std::format!(r#"{{"{}":1}}"#, "x".repeat(70));
        let long: &'static str = std::boxed::Box::leak(long.into_boxed_str());
        assert_eq!(
            unknown(long),
            std::format!(r#"arguments: unknown member "{}""#, "x".repeat(64))
        );
        // An escape counts as one character and is never cut.
        let cut = std::format!(r#"{{"{}\u00e9yz":1}}"#, "x".repeat(63));
        let cut: &'static str = std::boxed::Box::leak(cut.into_boxed_str());
        assert_eq!(
            unknown(cut),
            std::format!(r#"arguments: unknown member "{}\u00e9""#, "x".repeat(63))
        );
    }

    #[test]
    fn a_range_problem_set_by_hand_still_reads() {
        let mut e = ArgError::new(Problem::Missing).within(PathSegment::Key("n"));
        e.problem = Problem::AboveMaximum(3.0);
        assert_eq!(
            e.to_string(),
            "argument `n`: must be at most the schema's bound"
        );
        // Equality ignores how the bound is printed.
        let mut same = ArgError::new(Problem::AboveMaximum(3.0)).within(PathSegment::Key("n"));
        assert_ne!(e.to_string(), same.to_string());
        assert_eq!(e, same);
        same.problem = Problem::Missing;
        assert_ne!(e, same);
    }
}
