//! The text of an [`ArgError`], written piece by piece without `core::fmt` (which costs
//! kilobytes of flash on a microcontroller).

use core::fmt;

use super::{ArgError, PathSegment, Problem};
use crate::json::JsonStr;

/// Most characters of an unknown member's name that a message quotes.
const NAME_CHARS: usize = 64;

impl ArgError<'_> {
    /// Writes the message (the text of `Display`) to `out`, piece by piece, without
    /// `core::fmt`: ``argument `points[2].x`: must be a number``.
    ///
    /// An unknown member's name is quoted with its first 64 characters, escaped as Rust's
    /// `char::escape_debug` escapes ASCII (`\n`, `\"`, `\u{1b}`, ...); other characters
    /// are written as they are, except C1 controls and the invisible formatting characters
    /// that could hide or reorder text (zero-width spaces and joiners, bidirectional
    /// controls, the byte order mark), which are written `\u{200b}`. (`escape_debug` itself
    /// would link kilobytes of Unicode tables.) The bound of [`Problem::BelowMinimum`] /
    /// [`Problem::AboveMaximum`] is printed as Rust's `Display` for `f64` prints it
    /// (shortest round-trip form, no exponent), which does use `core::fmt`'s float
    /// printing: that code is reached through the error itself, chosen by
    /// [`ArgError::new`] where a range error is built, so a program that never builds one
    /// (a firmware whose arguments have no primitive number fields) does not link it.
    pub fn write_message(&self, out: &mut dyn FnMut(&str)) {
        let path = self.path();
        out(if path.is_empty() {
            "arguments"
        } else {
            "argument `"
        });
        let mut dot = "";
        for segment in path {
            match *segment {
                PathSegment::Key(key) => {
                    out(dot);
                    out(key);
                }
                PathSegment::Index(n) => {
                    out("[");
                    write_usize(n, out);
                    out("]");
                }
            }
            dot = ".";
        }
        if self.path_elided() {
            out("…");
        }
        if !path.is_empty() {
            out("`");
        }
        // The text before the problem's detail, the detail, the text after it: one table
        // rather than a sequence of writes per problem (code size).
        let (before, detail, after) = match self.problem {
            Problem::NotAnObject => (": must be an object", Detail::None, ""),
            Problem::Missing => (": is required", Detail::None, ""),
            Problem::Unknown(name) => (": unknown member \"", Detail::Name(name), "\""),
            Problem::Duplicate => (": appears twice", Detail::None, ""),
            Problem::Type(expected) => (": must be ", Detail::Text(expected), ""),
            Problem::NotInEnum(allowed) => (": must be one of ", Detail::Text(allowed), ""),
            Problem::BelowMinimum(min) => (": must be at least ", Detail::Bound(min), ""),
            Problem::AboveMaximum(max) => (": must be at most ", Detail::Bound(max), ""),
            Problem::NotAnInteger => (": must be a whole number in range", Detail::None, ""),
            Problem::TooShort(n) => (
                ": must have at least ",
                Detail::Count(n),
                " characters or items",
            ),
            Problem::TooLong(n) => (
                ": must have at most ",
                Detail::Count(n),
                " characters or items",
            ),
            Problem::Pattern(pattern) => (": must match the pattern ", Detail::Text(pattern), ""),
            Problem::Invalid(why) => (": ", Detail::Text(why), ""),
        };
        out(before);
        match detail {
            Detail::None => {}
            Detail::Text(text) => out(text),
            Detail::Count(n) => write_usize(n, out),
            Detail::Name(name) => write_escaped(name, out),
            Detail::Bound(x) => (self.bound.0)(x, out),
        }
        out(after);
    }
}

/// The variable part of a problem's message.
enum Detail<'i> {
    None,
    Text(&'static str),
    Count(usize),
    Name(JsonStr<'i>),
    Bound(f64),
}

/// Decimal digits of `n`.
fn write_usize(mut n: usize, out: &mut dyn FnMut(&str)) {
    let mut buf = [0u8; 20];
    let mut start = buf.len();
    loop {
        start -= 1;
        if let Some(slot) = buf.get_mut(start) {
            // `n % 10` < 10, so the cast is lossless.
            *slot = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || start == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out(core::str::from_utf8(buf.get(start..).unwrap_or_default()).unwrap_or_default());
}

/// The first [`NAME_CHARS`] characters of `name`, escaped (see
/// [`ArgError::write_message`]).
fn write_escaped(name: JsonStr<'_>, out: &mut dyn FnMut(&str)) {
    for c in name.chars().take(NAME_CHARS) {
        let short = match c {
            '\0' => "\\0",
            '\t' => "\\t",
            '\r' => "\\r",
            '\n' => "\\n",
            '\\' => "\\\\",
            '"' => "\\\"",
            '\'' => "\\'",
            _ => "",
        };
        if !short.is_empty() {
            out(short);
        } else if is_hidden(c) {
            write_unicode_escape(c, out);
        } else {
            let mut utf8 = [0u8; 4];
            out(c.encode_utf8(&mut utf8));
        }
    }
}

/// Characters quoted as `\u{..}`: ASCII and C1 control characters, and the invisible
/// formatting characters that would hide or reorder text (zero-width spaces and joiners,
/// bidirectional controls, word joiners, byte order mark).
fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\0'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{ad}'
            | '\u{61c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
    )
}

/// `\u{hex}`, lowercase, without leading zeros (as `char::escape_unicode`).
fn write_unicode_escape(c: char, out: &mut dyn FnMut(&str)) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // At most six hex digits (`10ffff`), filled from the end.
    let mut digits = [0u8; 6];
    let mut code = u32::from(c);
    let mut start = digits.len();
    while let Some(at) = start.checked_sub(1) {
        if let Some(slot) = digits.get_mut(at) {
            *slot = HEX.get((code & 0xf) as usize).copied().unwrap_or(b'0');
        }
        start = at;
        code >>= 4;
        if code == 0 {
            break;
        }
    }
    out("\\u{");
    out(core::str::from_utf8(digits.get(start..).unwrap_or_default()).unwrap_or_default());
    out("}");
}

/// How an error prints the `f64` bound of a range problem: chosen by [`ArgError::new`]
/// from the problem's variant, so that only programs that build range errors link the
/// float printing.
#[derive(Clone, Copy)]
pub(super) struct BoundWriter(pub(super) fn(f64, &mut dyn FnMut(&str)));

impl BoundWriter {
    /// The writer for `problem`'s bound (a placeholder for problems without one).
    #[inline(always)]
    pub(super) const fn for_problem(problem: &Problem<'_>) -> Self {
        match problem {
            Problem::BelowMinimum(_) | Problem::AboveMaximum(_) => BoundWriter(write_f64),
            _ => BoundWriter(write_no_bound),
        }
    }
}

/// `x` as Rust's `Display` prints it.
fn write_f64(x: f64, out: &mut dyn FnMut(&str)) {
    struct Out<'a>(&'a mut dyn FnMut(&str));
    impl fmt::Write for Out<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            (self.0)(s);
            Ok(())
        }
    }
    let _ = fmt::write(&mut Out(out), format_args!("{x}"));
}

/// The writer of an error built without a range problem whose `problem` field was later
/// set to one (not through [`ArgError::new`]): its number is unknown to the writer.
fn write_no_bound(_: f64, out: &mut dyn FnMut(&str)) {
    out("the schema's bound");
}
