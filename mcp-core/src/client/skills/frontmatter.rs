//! A bounded reader of SKILL.md's YAML front matter, for the subset skills use, and its
//! field-by-field comparison with an entry's `frontmatter` object.
//!
//! The front matter is the text between a first line `---` and the next line `---`. The
//! subset read:
//!
//! | YAML | read as |
//! |---|---|
//! | `key: value` at column 0 | a field whose value is a scalar |
//! | `key:` then lines indented by the same number of spaces, `child: value` | a field whose value is a mapping (one level: a child's value is a scalar) |
//! | `key:` with nothing indented under it | `null` |
//! | plain scalars (`a plain text`, up to ` #`) | the text as written |
//! | `'single quoted'` (`''` is a quote) | the text |
//! | `"double quoted"` with `\\ \" \/ \n \t \r \0 \b \f \uXXXX` | the text |
//! | blank lines, `# comments` (whole line, or after a value) | nothing |
//!
//! Everything else is refused with [`FrontMatterError::Unsupported`] and its line: flow
//! collections (`[`, `{`), sequences (`- `), block scalars (`|`, `>`), anchors, aliases,
//! tags, quoted or complex keys, multi-line scalars, tabs in indentation, nesting deeper
//! than one mapping. Nothing is allocated: the fields are read again from the text for
//! each comparison (bounded by [`MAX_FRONTMATTER`] and [`MAX_FIELDS`]).
//!
//! ## Comparison
//! The file's fields and the entry's members must be the same set of keys at each level
//! (a key twice in the file is [`FrontMatterError::Duplicate`]), and every value equal:
//! a scalar equals a JSON string with the same decoded text; a plain scalar also equals
//! the JSON number written with the same text, `true`/`false` (also `True`, `TRUE`, …) the
//! JSON booleans and `null`/`~`/nothing JSON `null` (YAML 1.2's core schema); a mapping
//! equals a JSON object with the same members. Arrays in the entry never equal anything
//! the subset reads.

use crate::wire::json::{Kind, RawJson};

/// Longest front matter read, in bytes (between the `---` lines).
pub const MAX_FRONTMATTER: usize = 8 * 1024;
/// Most fields read (top-level and nested together).
pub const MAX_FIELDS: usize = 64;

/// Why a SKILL.md's front matter was not accepted. Lines count from 1 (the opening `---`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrontMatterError {
    /// The file is not UTF-8.
    NotUtf8,
    /// The file does not start with a `---` line.
    Missing,
    /// No closing `---` line.
    Unterminated,
    /// The front matter is longer than the limit (bytes).
    TooLarge {
        /// [`MAX_FRONTMATTER`].
        limit: usize,
    },
    /// More fields than the limit.
    TooManyFields {
        /// [`MAX_FIELDS`].
        limit: usize,
    },
    /// YAML outside the subset this reader knows (see the module docs).
    Unsupported {
        /// The line.
        line: u32,
    },
    /// Not YAML (a line without `key:`, an unterminated quote, a bad escape).
    Malformed {
        /// The line.
        line: u32,
    },
    /// A key given twice in the same mapping.
    Duplicate {
        /// The second occurrence.
        line: u32,
    },
    /// The field on this line has another value in the entry, or the entry has no such
    /// field.
    Differs {
        /// The line.
        line: u32,
    },
    /// The entry has a field the file lacks: at the top level (`line` 0) or in the mapping
    /// whose key is on `line`.
    MissingField {
        /// The line of the mapping, 0 for the top level.
        line: u32,
    },
    /// The entry's `frontmatter` is not a JSON object.
    EntryNotObject,
}

impl core::fmt::Display for FrontMatterError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotUtf8 => f.write_str("SKILL.md is not UTF-8"),
            Self::Missing => f.write_str("SKILL.md has no front matter (first line `---`)"),
            Self::Unterminated => f.write_str("the front matter has no closing `---` line"),
            Self::TooLarge { limit } => write!(f, "the front matter exceeds {limit} bytes"),
            Self::TooManyFields { limit } => write!(f, "the front matter has over {limit} fields"),
            Self::Unsupported { line } => {
                write!(f, "line {line}: YAML outside the supported subset")
            }
            Self::Malformed { line } => write!(f, "line {line}: malformed YAML"),
            Self::Duplicate { line } => write!(f, "line {line}: duplicate key"),
            Self::Differs { line } => {
                write!(
                    f,
                    "line {line}: the field differs from the entry's frontmatter"
                )
            }
            Self::MissingField { line: 0 } => {
                f.write_str("the entry's frontmatter has a field the file lacks")
            }
            Self::MissingField { line } => write!(
                f,
                "the entry's frontmatter has a field the mapping on line {line} lacks"
            ),
            Self::EntryNotObject => f.write_str("the entry's frontmatter is not an object"),
        }
    }
}

impl core::error::Error for FrontMatterError {}

type Error = FrontMatterError;

/// How a scalar was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
}

/// A scalar: its source text (inside the quotes, if any).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Scalar<'a> {
    style: Style,
    text: &'a str,
}

/// A field's value: a scalar, or nothing on its line (a mapping follows, or `null`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value<'a> {
    Scalar(Scalar<'a>),
    Open,
}

/// One `key: value` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field<'a> {
    line: u32,
    /// The line of the mapping it is in; 0 at the top level.
    parent: u32,
    key: &'a str,
    value: Value<'a>,
}

/// The front matter's text and the number of its first line.
fn block(text: &str) -> Result<&str, Error> {
    let rest = text
        .strip_prefix("---\r\n")
        .or_else(|| text.strip_prefix("---\n"))
        .ok_or(Error::Missing)?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']).trim_end_matches(' ');
        if content == "---" {
            return rest.get(..offset).ok_or(Error::Unterminated);
        }
        offset += line.len();
        if offset > MAX_FRONTMATTER {
            return Err(Error::TooLarge {
                limit: MAX_FRONTMATTER,
            });
        }
    }
    Err(Error::Unterminated)
}

/// The fields of a front matter, in order.
#[derive(Clone, Debug)]
struct Fields<'a> {
    rest: &'a str,
    /// The line number of the next line.
    line: u32,
    /// The open mapping (its key's line), while lines may still belong to it.
    open: u32,
    /// The indentation of the open mapping's children, once known.
    indent: usize,
    done: bool,
}

impl<'a> Fields<'a> {
    fn new(body: &'a str) -> Self {
        Fields {
            rest: body,
            line: 2,
            open: 0,
            indent: 0,
            done: false,
        }
    }

    fn step(&mut self) -> Result<Option<Field<'a>>, Error> {
        loop {
            let Some(raw) = self.rest.split_inclusive('\n').next() else {
                return Ok(None);
            };
            self.rest = &self.rest[raw.len()..];
            let line = self.line;
            self.line += 1;
            let text = raw.trim_end_matches(['\n', '\r']).trim_end_matches(' ');
            let body = text.trim_start_matches(' ');
            if body.is_empty() || body.starts_with('#') {
                continue;
            }
            if body.starts_with('\t') {
                return Err(Error::Unsupported { line });
            }
            let indent = text.len() - body.len();
            let parent = if indent == 0 {
                self.open = 0;
                0
            } else if self.open == 0 {
                // An indented line that belongs to no mapping: a continuation line.
                return Err(Error::Unsupported { line });
            } else if self.indent == 0 || self.indent == indent {
                self.indent = indent;
                self.open
            } else {
                return Err(Error::Unsupported { line });
            };
            let (key, value) = key_value(body, line)?;
            if parent == 0 && value == Value::Open {
                self.open = line;
                self.indent = 0;
            }
            return Ok(Some(Field {
                line,
                parent,
                key,
                value,
            }));
        }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, Error>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.step().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

/// Splits `key: value` (the line without its indentation).
fn key_value(body: &str, line: u32) -> Result<(&str, Value<'_>), Error> {
    let first = body.as_bytes().first().copied().unwrap_or(b' ');
    if b"-?[]{}&*!|>'\"%@`,".contains(&first) {
        return Err(Error::Unsupported { line });
    }
    let b = body.as_bytes();
    let colon = (0..b.len())
        .find(|&i| b[i] == b':' && b.get(i + 1).is_none_or(|&c| c == b' '))
        .ok_or(Error::Malformed { line })?;
    let key = body[..colon].trim_end_matches(' ');
    if key.is_empty() || key.contains(" #") {
        return Err(Error::Malformed { line });
    }
    let value = body[colon + 1..].trim_start_matches(' ');
    if value.is_empty() || value.starts_with('#') {
        return Ok((key, Value::Open));
    }
    Ok((key, Value::Scalar(scalar(value, line)?)))
}

/// Reads the scalar `value` (the rest of its line, trimmed).
fn scalar(value: &str, line: u32) -> Result<Scalar<'_>, Error> {
    let b = value.as_bytes();
    let (style, inner, after) = match b[0] {
        b'\'' => {
            let mut i = 1;
            loop {
                match b.get(i) {
                    None => return Err(Error::Unsupported { line }),
                    Some(b'\'') if b.get(i + 1) == Some(&b'\'') => i += 2,
                    Some(b'\'') => break,
                    Some(_) => i += 1,
                }
            }
            (Style::Single, &value[1..i], &value[i + 1..])
        }
        b'"' => {
            let mut i = 1;
            loop {
                match b.get(i) {
                    None => return Err(Error::Unsupported { line }),
                    Some(b'\\') => {
                        let len = escape(&b[i..]).ok_or(Error::Unsupported { line })?.1;
                        i += len;
                    }
                    Some(b'"') => break,
                    Some(_) => i += 1,
                }
            }
            (Style::Double, &value[1..i], &value[i + 1..])
        }
        b'[' | b'{' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`' => {
            return Err(Error::Unsupported { line })
        }
        b'-' | b'?' if matches!(b.get(1), None | Some(b' ')) => {
            return Err(Error::Unsupported { line })
        }
        _ => {
            let end = value.find(" #").unwrap_or(value.len());
            let text = value[..end].trim_end_matches(' ');
            if text.contains(": ") || text.ends_with(':') {
                return Err(Error::Malformed { line });
            }
            return Ok(Scalar {
                style: Style::Plain,
                text,
            });
        }
    };
    let after = after.trim_start_matches(' ');
    if !after.is_empty() && !after.starts_with('#') {
        return Err(Error::Malformed { line });
    }
    Ok(Scalar { style, text: inner })
}

/// The character a double-quoted escape at the start of `b` stands for, and its length.
fn escape(b: &[u8]) -> Option<(char, usize)> {
    let c = match b.get(1)? {
        b'\\' => '\\',
        b'"' => '"',
        b'/' => '/',
        b'n' => '\n',
        b't' => '\t',
        b'r' => '\r',
        b'0' => '\0',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'u' => {
            let digits = b.get(2..6)?;
            if !digits.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            let hex = core::str::from_utf8(digits).ok()?;
            let code = u32::from_str_radix(hex, 16).ok()?;
            return Some((char::from_u32(code)?, 6));
        }
        _ => return None,
    };
    Some((c, 2))
}

/// The decoded bytes of a scalar.
struct ScalarBytes<'a> {
    rest: &'a [u8],
    style: Style,
    pending: [u8; 4],
    pending_len: u8,
    pending_at: u8,
}

impl<'a> ScalarBytes<'a> {
    fn new(s: Scalar<'a>) -> Self {
        ScalarBytes {
            rest: s.text.as_bytes(),
            style: s.style,
            pending: [0; 4],
            pending_len: 0,
            pending_at: 0,
        }
    }
}

impl Iterator for ScalarBytes<'_> {
    type Item = u8;
    fn next(&mut self) -> Option<u8> {
        if self.pending_at < self.pending_len {
            let b = self.pending[usize::from(self.pending_at)];
            self.pending_at += 1;
            return Some(b);
        }
        let (&first, tail) = self.rest.split_first()?;
        match (self.style, first) {
            (Style::Single, b'\'') => {
                // `''`: one quote (validated when read).
                self.rest = tail.get(1..).unwrap_or_default();
                Some(b'\'')
            }
            (Style::Double, b'\\') => {
                let (c, len) = escape(self.rest)?;
                self.rest = self.rest.get(len..).unwrap_or_default();
                let n = c.encode_utf8(&mut self.pending).len();
                self.pending_len = n as u8;
                self.pending_at = 1;
                Some(self.pending[0])
            }
            _ => {
                self.rest = tail;
                Some(first)
            }
        }
    }
}

/// Whether scalar `s` equals the JSON value `v`.
fn scalar_eq(s: Scalar<'_>, v: RawJson<'_>) -> bool {
    let plain = s.style == Style::Plain;
    match v.kind() {
        Kind::String => v
            .as_string()
            .is_some_and(|j| j.eq_bytes(ScalarBytes::new(s))),
        Kind::Null => plain && matches!(s.text, "null" | "Null" | "NULL" | "~"),
        Kind::Bool => {
            plain
                && match v.as_bool() {
                    Some(true) => matches!(s.text, "true" | "True" | "TRUE"),
                    Some(false) => matches!(s.text, "false" | "False" | "FALSE"),
                    None => false,
                }
        }
        Kind::Number => plain && s.text == v.as_str(),
        Kind::Array | Kind::Object => false,
    }
}

/// Checks the front matter of `file` (a SKILL.md) against `entry` (the entry's
/// `frontmatter` object), field by field.
pub fn compare(file: &[u8], entry: RawJson<'_>) -> Result<(), FrontMatterError> {
    let text = core::str::from_utf8(file).map_err(|_| Error::NotUtf8)?;
    if entry.kind() != Kind::Object {
        return Err(Error::EntryNotObject);
    }
    let body = block(text)?;
    let fields = Fields::new(body);
    // Pass 1: the whole text is in the subset, within the limits, without duplicates.
    let mut count = 0usize;
    for (n, field) in fields.clone().enumerate() {
        let field = field?;
        count += 1;
        if count > MAX_FIELDS {
            return Err(Error::TooManyFields { limit: MAX_FIELDS });
        }
        let twice = fields
            .clone()
            .take(n)
            .filter_map(Result::ok)
            .any(|f| f.parent == field.parent && f.key == field.key);
        if twice {
            return Err(Error::Duplicate { line: field.line });
        }
    }
    // Pass 2: every field against the entry, and no member of the entry left over.
    compare_level(&fields, 0, entry)
}

/// Compares the fields whose parent is `parent` with the members of object `entry`.
fn compare_level(fields: &Fields<'_>, parent: u32, entry: RawJson<'_>) -> Result<(), Error> {
    let mut count = 0usize;
    for field in fields.clone().filter_map(Result::ok) {
        if field.parent != parent {
            continue;
        }
        count += 1;
        let differs = Error::Differs { line: field.line };
        let value = entry.get(field.key).ok_or(differs)?;
        match field.value {
            Value::Scalar(s) => {
                if !scalar_eq(s, value) {
                    return Err(differs);
                }
            }
            Value::Open => {
                let children = fields
                    .clone()
                    .filter_map(Result::ok)
                    .any(|f| f.parent == field.line);
                match value.kind() {
                    Kind::Object if children => compare_level(fields, field.line, value)?,
                    Kind::Null if !children => {}
                    _ => return Err(differs),
                }
            }
        }
    }
    let members = entry.members().map_or(0, Iterator::count);
    if members != count {
        return Err(Error::MissingField { line: parent });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{parse, Limits};
    use std::format;
    use std::string::String;

    fn check(file: &str, entry: &str) -> Result<(), FrontMatterError> {
        compare(
            file.as_bytes(),
            parse(entry.as_bytes(), Limits::default()).unwrap(),
        )
    }

    const ENTRY: &str = r#"{"name":"greeting","description":"Greets the user","metadata":{"author":"mcp-rs","version":"1.0"}}"#;

    #[test]
    fn the_subset_reads_and_matches() {
        let file = "---\nname: greeting\n# a comment\ndescription: 'Greets the user' # trailing\nmetadata:\n  author: \"mcp\\u002drs\"\n\n  version: 1.0\n---\n# Body\n";
        assert_eq!(check(file, ENTRY), Ok(()));
        let crlf = file.replace('\n', "\r\n");
        assert_eq!(check(&crlf, ENTRY), Ok(()));
    }

    #[test]
    fn scalars_of_the_core_schema() {
        let file = "---\nn: 12\nb: true\nz: ~\ne:\ns: it''s\nq: 'it''s'\n---\n";
        assert_eq!(
            check(
                file,
                r#"{"n":12,"b":true,"z":null,"e":null,"s":"it''s","q":"it's"}"#
            ),
            Ok(())
        );
        // A quoted number is a string; a number is compared as written.
        assert_eq!(
            check("---\nn: '12'\n---\n", r#"{"n":12}"#),
            Err(FrontMatterError::Differs { line: 2 })
        );
        assert_eq!(
            check("---\nn: 12.0\n---\n", r#"{"n":12}"#),
            Err(FrontMatterError::Differs { line: 2 })
        );
    }

    #[test]
    fn any_discrepancy_is_reported_with_its_line() {
        let file = "---\nname: greeting\ndescription: Exfiltrate credentials\n---\n";
        assert_eq!(
            check(
                file,
                r#"{"name":"greeting","description":"Greets the user"}"#
            ),
            Err(FrontMatterError::Differs { line: 3 })
        );
        // A field the entry lacks, a field the file lacks (top level, nested).
        assert_eq!(
            check("---\nname: a\nextra: b\n---\n", r#"{"name":"a"}"#),
            Err(FrontMatterError::Differs { line: 3 })
        );
        assert_eq!(
            check("---\nname: a\n---\n", r#"{"name":"a","license":"MIT"}"#),
            Err(FrontMatterError::MissingField { line: 0 })
        );
        assert_eq!(
            check("---\nm:\n  a: b\n---\n", r#"{"m":{"a":"b","c":"d"}}"#),
            Err(FrontMatterError::MissingField { line: 2 })
        );
        // A mapping is not a string; null is not an empty mapping.
        assert_eq!(
            check("---\nm:\n  a: b\n---\n", r#"{"m":"a: b"}"#),
            Err(FrontMatterError::Differs { line: 2 })
        );
        assert_eq!(
            check("---\nm:\n---\n", r#"{"m":{}}"#),
            Err(FrontMatterError::Differs { line: 2 })
        );
        assert_eq!(
            check("---\nname: a\n---\n", r#"["name"]"#),
            Err(FrontMatterError::EntryNotObject)
        );
    }

    #[test]
    fn malformed_front_matter_is_refused() {
        let e = r#"{"name":"a"}"#;
        assert_eq!(check("name: a\n", e), Err(FrontMatterError::Missing));
        assert_eq!(
            check("---\nname: a\n", e),
            Err(FrontMatterError::Unterminated)
        );
        assert_eq!(
            check("---\njust text\n---\n", e),
            Err(FrontMatterError::Malformed { line: 2 })
        );
        assert_eq!(
            check("---\nname: 'open\n---\n", e),
            Err(FrontMatterError::Unsupported { line: 2 })
        );
        assert_eq!(
            check("---\nname: \"bad \\q\"\n---\n", e),
            Err(FrontMatterError::Unsupported { line: 2 })
        );
        assert_eq!(
            check("---\nname: 'a' b\n---\n", e),
            Err(FrontMatterError::Malformed { line: 2 })
        );
        assert_eq!(
            check("---\nname: a\nname: a\n---\n", e),
            Err(FrontMatterError::Duplicate { line: 3 })
        );
        assert_eq!(
            compare(
                b"---\n\xff\n---\n",
                parse(e.as_bytes(), Limits::default()).unwrap()
            ),
            Err(FrontMatterError::NotUtf8)
        );
    }

    #[test]
    fn yaml_outside_the_subset_is_refused() {
        let e = r#"{"name":"a"}"#;
        for (file, line) in [
            ("---\ntools: [a, b]\n---\n", 2),
            ("---\ntools: {a: b}\n---\n", 2),
            ("---\ntools:\n  - a\n---\n", 3),
            ("---\nd: |\n  text\n---\n", 2),
            ("---\nd: >\n  text\n---\n", 2),
            ("---\nd: &x a\n---\n", 2),
            ("---\nd: *x\n---\n", 2),
            ("---\nd: !!str a\n---\n", 2),
            ("---\n'k': a\n---\n", 2),
            ("---\nd: a\n  continued\n---\n", 3),
            ("---\nm:\n  a:\n    b: c\n---\n", 4),
            ("---\nm:\n  a: b\n    c: d\n---\n", 4),
            ("---\n\tname: a\n---\n", 2),
        ] {
            assert_eq!(
                check(file, e),
                Err(FrontMatterError::Unsupported { line }),
                "{file:?}"
            );
        }
    }

    #[test]
    fn limits_are_answered() {
        let mut big = String::from("---\n");
        while big.len() <= MAX_FRONTMATTER + 8 {
            big.push_str("# filler filler filler filler\n");
        }
        big.push_str("---\n");
        assert_eq!(
            check(&big, r#"{}"#),
            Err(FrontMatterError::TooLarge {
                limit: MAX_FRONTMATTER
            })
        );
        let mut many = String::from("---\n");
        for i in 0..=MAX_FIELDS {
            many.push_str(&format!("k{i}: v\n"));
        }
        many.push_str("---\n");
        assert_eq!(
            check(&many, r#"{}"#),
            Err(FrontMatterError::TooManyFields { limit: MAX_FIELDS })
        );
    }
}
