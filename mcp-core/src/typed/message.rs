//! The text of an [`ArgError`], written piece by piece without `core::fmt` (which costs
//! kilobytes of flash on a microcontroller).

use core::fmt;

use super::{ArgError, PathSegment, Problem};
use crate::wire::json::JsonStr;

/// Most characters of an unknown member's name that a message quotes.
const NAME_CHARS: usize = 64;

impl ArgError<'_> {
    /// Writes the message (the text of `Display`) to `out`, piece by piece, without
    /// `core::fmt`: ``argument `points[2].x`: must be a number``.
    ///
    /// An unknown member's name is quoted as it was written in the request (its JSON
    /// source text: quotes, backslashes and control characters stay escaped, as `\"`,
    /// `\\`, `\n`, `\u001b`), at most 64 characters of it. (Re-escaping the decoded name,
    /// as `char::escape_debug` would, links kilobytes of Unicode tables.)
    ///
    /// The bound of [`Problem::BelowMinimum`] / [`Problem::AboveMaximum`] is printed as
    /// Rust's `Display` for `f64` prints it (shortest round-trip form, no exponent), which
    /// does use `core::fmt`'s float printing: that code is reached through the error
    /// itself, chosen by [`ArgError::new`] where a range error is built, so a program that
    /// never builds one (a firmware whose arguments have no primitive number fields) does
    /// not link it.
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
        // The text before the problem's detail from a table indexed by the variant (code
        // size: one load, not a sequence of writes per problem), then the detail.
        let index = self.problem.index();
        out(match index {
            0 | 4..=8 => ": must be ",
            9 | 10 => ": must have ",
            _ => ": ",
        });
        out(lead(index));
        match self.problem {
            Problem::Unknown(name) => {
                out(name_source(name));
                out("\"");
            }
            Problem::Type(text)
            | Problem::NotInEnum(text)
            | Problem::Pattern(text)
            | Problem::Invalid(text) => out(text),
            Problem::BelowMinimum(x) | Problem::AboveMaximum(x) => {
                BoundWriter::write(self.bound, x, out);
            }
            Problem::TooShort(n) | Problem::TooLong(n) => {
                write_usize(n, out);
                out(" characters or items");
            }
            Problem::NotAnObject
            | Problem::Missing
            | Problem::Duplicate
            | Problem::NotAnInteger => {}
        }
    }
}

/// The text of each problem before its detail (after `: `, `: must be ` or `: must have `:
/// see `write_message`), in [`Problem`]'s variant order.
const LEADS: [&str; 13] = [
    "an object",
    "is required",
    "unknown member \"",
    "appears twice",
    "",
    "one of ",
    "at least ",
    "at most ",
    "a whole number in range",
    "at least ",
    "at most ",
    "must match the pattern ",
    "",
];

/// [`LEADS`] joined, and where each one starts in it (then the end): one string and 14
/// bytes in flash rather than 13 string references of 8 bytes each.
const LEAD_TEXT: &str = {
    const BYTES: [u8; super::concat_len(&LEADS)] = super::concat_bytes(&LEADS);
    match core::str::from_utf8(&BYTES) {
        Ok(s) => s,
        Err(_) => panic!("LEADS are UTF-8"),
    }
};
const LEAD_STARTS: [u8; LEADS.len() + 1] = {
    let mut starts = [0u8; LEADS.len() + 1];
    let mut i = 0;
    while i < LEADS.len() {
        let end = starts[i] as usize + LEADS[i].len();
        assert!(end <= u8::MAX as usize, "LEADS must stay within 255 bytes");
        starts[i + 1] = end as u8;
        i += 1;
    }
    starts
};

/// The lead of the problem with variant index `i`.
fn lead(i: usize) -> &'static str {
    match (LEAD_STARTS.get(i), LEAD_STARTS.get(i + 1)) {
        (Some(&start), Some(&end)) => LEAD_TEXT.get(start as usize..end as usize),
        _ => None,
    }
    .unwrap_or_default()
}

impl Problem<'_> {
    /// The variant's position (for [`LEADS`]).
    fn index(&self) -> usize {
        match self {
            Problem::NotAnObject => 0,
            Problem::Missing => 1,
            Problem::Unknown(_) => 2,
            Problem::Duplicate => 3,
            Problem::Type(_) => 4,
            Problem::NotInEnum(_) => 5,
            Problem::BelowMinimum(_) => 6,
            Problem::AboveMaximum(_) => 7,
            Problem::NotAnInteger => 8,
            Problem::TooShort(_) => 9,
            Problem::TooLong(_) => 10,
            Problem::Pattern(_) => 11,
            Problem::Invalid(_) => 12,
        }
    }
}

/// Decimal digits of `n`, most significant first (a digit per call: small code). The
/// quotient by multiplication (exact for every `u32`): no division, which the Cortex-M0
/// does not have (its library routine is 0.4 KiB of flash).
fn write_usize(n: usize, out: &mut dyn FnMut(&str)) {
    let q = match u32::try_from(n) {
        Ok(n) => ((u64::from(n) * 0xCCCC_CCCD) >> 35) as usize,
        Err(_) => n / 10,
    };
    if q > 0 {
        write_usize(q, out);
    }
    let d = n - q * 10;
    out("0123456789".get(d..d + 1).unwrap_or_default());
}

/// The first [`NAME_CHARS`] characters of a name as written in the request: its JSON
/// source text, escapes kept (an escape counts as one character and is never cut, nor is a
/// surrogate pair; at most 4 bytes a character unless one escape is longer). The error
/// replies' truncation, shared (flash).
fn name_source(name: JsonStr<'_>) -> &str {
    crate::wire::json::truncate_escaped(name.raw(), NAME_CHARS).0
}

/// How an error prints the `f64` bound of a range problem: chosen by [`ArgError::new`]
/// from the problem's variant, so that only programs that build range errors link the
/// float printing.
#[derive(Clone, Copy)]
#[allow(clippy::type_complexity)] // a plain fn pointer: the sink is `write_message`'s
pub(super) struct BoundWriter(fn(f64, &mut dyn FnMut(&str)));

impl BoundWriter {
    /// The writer for `problem`'s bound, if it has one.
    #[inline(always)]
    pub(super) const fn for_problem(problem: &Problem<'_>) -> Option<Self> {
        match problem {
            Problem::BelowMinimum(_) | Problem::AboveMaximum(_) => Some(BoundWriter(write_f64)),
            _ => None,
        }
    }

    /// Writes `x` with `writer`; without one (an error built without a range problem whose
    /// `problem` field was later set to one, not through [`ArgError::new`]) the number is
    /// unknown to the error.
    fn write(writer: Option<BoundWriter>, x: f64, out: &mut dyn FnMut(&str)) {
        match writer {
            Some(BoundWriter(write)) => write(x, out),
            None => out("the schema's bound"),
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
