//! The JSON Schema `pattern` keyword without a regex engine: `#[derive(ToolArgs)]` compiles
//! `#[arg(pattern = "...")]` at build time into a [`Pattern`], a Thompson NFA as a `static`
//! table of [`Inst`]s, and this module runs it.
//!
//! Matching is a breadth-first simulation of the automaton over the decoded characters
//! (JSON escapes resolved, Unicode scalar values as JSON Schema's `u`-flag semantics ask):
//! no backtracking, no allocation, four bitsets of [`MAX_STATES`] bits (128 bytes) on the
//! stack, and time linear in the length of the string (at most a few passes over the
//! program per character). The search is unanchored, as JSON Schema says: `"b"` matches
//! `"abc"`; `^` and `$` anchor at the start and end of the whole string (there is no
//! multiline mode).
//!
//! The supported subset of ECMA-262 (documented with the derive; anything else is a compile
//! error naming the construct): literals and escapes, `.`, classes with ranges and
//! negation, `\d \D \w \W \s \S`, `^`, `$`, groups, alternation and the quantifiers `* + ?
//! {n} {n,} {n,m}` (greedy or lazy: the same for a yes/no answer). Meanings are
//! ECMAScript's: `\d` is `[0-9]`, `\w` is `[A-Za-z0-9_]`, `\s` is [`SPACE`] and `.` is any
//! character but the line terminators ([`LINE_TERMINATORS`]).

use super::{ArgError, Problem, Rejected};
use crate::wire::json::JsonStr;

/// The most instructions a [`Pattern`] may have (the derive refuses larger patterns at
/// compile time; [`Pattern::new`] refuses them in any `const` or `static`).
pub const MAX_STATES: usize = 256;

const WORDS: usize = MAX_STATES / 32;

/// ECMAScript's `\s`: `WhiteSpace` (tab, vertical tab, form feed, U+FEFF and every `Zs`
/// space separator: U+0020, U+00A0, U+1680, U+2000..U+200A, U+202F, U+205F, U+3000) and
/// `LineTerminator` (line feed, carriage return, U+2028, U+2029). U+0085 (next line) is not
/// one, unlike Unicode's `White_Space`.
#[doc(hidden)]
pub const SPACE: &[(char, char)] = &[
    ('\t', '\r'),
    (' ', ' '),
    ('\u{a0}', '\u{a0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{205f}', '\u{205f}'),
    ('\u{3000}', '\u{3000}'),
    ('\u{feff}', '\u{feff}'),
];

/// ECMAScript's line terminators, which `.` does not match: line feed, carriage return,
/// U+2028 and U+2029.
#[doc(hidden)]
pub const LINE_TERMINATORS: &[(char, char)] =
    &[('\n', '\n'), ('\r', '\r'), ('\u{2028}', '\u{2029}')];

/// A set of characters: sorted, inclusive ranges, possibly negated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub struct Class {
    negated: bool,
    ranges: &'static [(char, char)],
}

impl Class {
    /// The characters in `ranges` (inclusive, sorted, not overlapping), or all others when
    /// `negated`. Unsorted or empty ranges fail the build in a `const` or `static`.
    #[allow(clippy::indexing_slicing)] // const fn: a panic is a compile error
    pub const fn new(negated: bool, ranges: &'static [(char, char)]) -> Self {
        let mut i = 0;
        while i < ranges.len() {
            assert!(
                ranges[i].0 as u32 <= ranges[i].1 as u32,
                "pattern class: a range is out of order"
            );
            assert!(
                i == 0 || (ranges[i - 1].1 as u32) < ranges[i].0 as u32,
                "pattern class: ranges must be sorted and disjoint"
            );
            i += 1;
        }
        Class { negated, ranges }
    }

    /// Whether `c` is in the set.
    pub fn contains(&self, c: char) -> bool {
        let mut inside = false;
        for &(lo, hi) in self.ranges {
            if c < lo {
                break;
            }
            if c <= hi {
                inside = true;
                break;
            }
        }
        inside != self.negated
    }

    /// Whether the set is everything outside `ranges`.
    pub fn negated(&self) -> bool {
        self.negated
    }

    /// The ranges.
    pub fn ranges(&self) -> &'static [(char, char)] {
        self.ranges
    }
}

/// One instruction of a [`Pattern`] program. Instructions are numbered from 0; unless it
/// says otherwise, an instruction continues with the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub enum Inst {
    /// Consumes this character.
    Char(char),
    /// Consumes a character of the class.
    Class(&'static Class),
    /// Continues with both instructions.
    Split(u16, u16),
    /// Continues with that instruction.
    Jump(u16),
    /// Passes at the start of the string only (`^`).
    Start,
    /// Passes at the end of the string only (`$`).
    End,
    /// The pattern matched (the search is over).
    Match,
}

/// A compiled `pattern`: its source (for the schema and error messages) and the program
/// that matches it. Built by `#[derive(ToolArgs)]` for `#[arg(pattern = "...")]`.
#[derive(Clone, Copy, Debug)]
pub struct Pattern {
    source: &'static str,
    program: &'static [Inst],
}

impl Pattern {
    /// A pattern from its source text and program. The program must have at most
    /// [`MAX_STATES`] instructions and jump only to its own instructions; otherwise a
    /// `const` or `static` using this fails to build.
    #[allow(clippy::indexing_slicing)] // const fn: a panic is a compile error
    pub const fn new(source: &'static str, program: &'static [Inst]) -> Self {
        assert!(
            program.len() <= MAX_STATES,
            "pattern: more instructions than MAX_STATES"
        );
        let mut i = 0;
        while i < program.len() {
            match program[i] {
                Inst::Split(a, b) => {
                    assert!(
                        (a as usize) < program.len() && (b as usize) < program.len(),
                        "pattern: a split leads outside the program"
                    );
                }
                Inst::Jump(a) => {
                    assert!(
                        (a as usize) < program.len(),
                        "pattern: a jump leads outside the program"
                    );
                }
                Inst::Match => {}
                _ => assert!(
                    i + 1 < program.len(),
                    "pattern: the program runs off its end"
                ),
            }
            i += 1;
        }
        Pattern { source, program }
    }

    /// The pattern as written in the schema.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// The program.
    pub fn program(&self) -> &'static [Inst] {
        self.program
    }

    /// Whether `text` contains a match (JSON Schema's unanchored search).
    pub fn is_match(&self, text: &str) -> bool {
        self.is_match_chars(text.chars())
    }

    /// Whether the characters contain a match (JSON Schema's unanchored search). Time is
    /// linear in the number of characters; nothing is allocated.
    pub fn is_match_chars(&self, chars: impl Iterator<Item = char>) -> bool {
        let mut chars = chars.peekable();
        let mut current = Set::EMPTY;
        let mut at_start = true;
        loop {
            let at_end = chars.peek().is_none();
            // Threads that consumed the previous character are in `current`; a new one
            // starts at every position (the search is unanchored).
            let mut seen = Set::EMPTY;
            let mut next = Set::EMPTY;
            for state in current.iter() {
                if self.follow(state + 1, at_start, at_end, &mut next, &mut seen) {
                    return true;
                }
            }
            if self.follow(0, at_start, at_end, &mut next, &mut seen) {
                return true;
            }
            let Some(c) = chars.next() else {
                return false;
            };
            current = Set::EMPTY;
            for state in next.iter() {
                let consumed = match self.program.get(state) {
                    Some(Inst::Char(want)) => *want == c,
                    Some(Inst::Class(class)) => class.contains(c),
                    _ => false,
                };
                if consumed {
                    current.insert(state);
                }
            }
            at_start = false;
        }
    }

    /// Adds to `out` the consuming instructions reachable from `pc` without consuming;
    /// `true` when [`Inst::Match`] is reachable. `seen` holds the instructions visited at
    /// this position (each is handled once per position).
    fn follow(
        &self,
        pc: usize,
        at_start: bool,
        at_end: bool,
        out: &mut Set,
        seen: &mut Set,
    ) -> bool {
        let mut pending = Set::EMPTY;
        pending.insert(pc);
        while let Some(i) = pending.pop_lowest() {
            if !seen.insert(i) {
                continue;
            }
            match self.program.get(i) {
                Some(Inst::Char(_) | Inst::Class(_)) => {
                    out.insert(i);
                }
                Some(Inst::Split(a, b)) => {
                    pending.insert(usize::from(*a));
                    pending.insert(usize::from(*b));
                }
                Some(Inst::Jump(a)) => {
                    pending.insert(usize::from(*a));
                }
                Some(Inst::Start) if at_start => {
                    pending.insert(i + 1);
                }
                Some(Inst::End) if at_end => {
                    pending.insert(i + 1);
                }
                Some(Inst::Match) => return true,
                Some(Inst::Start | Inst::End) | None => {}
            }
        }
        false
    }
}

/// A set of instruction numbers below [`MAX_STATES`] (larger ones are never members).
#[derive(Clone, Copy)]
struct Set([u32; WORDS]);

impl Set {
    const EMPTY: Set = Set([0; WORDS]);

    /// Adds `i`; `true` when it was not there.
    fn insert(&mut self, i: usize) -> bool {
        match self.0.get_mut(i / 32) {
            Some(word) => {
                let bit = 1 << (i % 32);
                let new = *word & bit == 0;
                *word |= bit;
                new
            }
            None => false,
        }
    }

    /// Removes and returns the smallest member.
    fn pop_lowest(&mut self) -> Option<usize> {
        for (w, word) in self.0.iter_mut().enumerate() {
            if *word != 0 {
                let bit = word.trailing_zeros() as usize;
                *word &= *word - 1;
                return Some(w * 32 + bit);
            }
        }
        None
    }

    /// The members, smallest first.
    fn iter(self) -> impl Iterator<Item = usize> {
        let mut set = self;
        core::iter::from_fn(move || set.pop_lowest())
    }
}

/// A string value that `pattern` applies to. `#[derive(ToolArgs)]` requires it of fields
/// with `#[arg(pattern = "...")]` (JSON Schema ignores `pattern` on anything but strings,
/// so on another type it would be a promise nothing keeps).
#[diagnostic::on_unimplemented(
    message = "`pattern` applies to strings only, and `{Self}` is not one",
    label = "`#[arg(pattern = ...)]` on a field of this type",
    note = "string fields are `JsonStr<'_>` or `String` (feature `alloc`)"
)]
pub trait ArgText {
    /// The schema keyword with quotes and colon: `"pattern":`.
    const PATTERN_KEYWORD: &'static str;
    /// Whether the decoded string contains a match of `pattern`.
    fn matches(&self, pattern: &Pattern) -> bool;
}

impl ArgText for JsonStr<'_> {
    const PATTERN_KEYWORD: &'static str = r#""pattern":"#;
    /// Matched against the decoded characters (escapes resolved), without copying them.
    fn matches(&self, pattern: &Pattern) -> bool {
        pattern.is_match_chars(self.chars())
    }
}

impl ArgText for str {
    const PATTERN_KEYWORD: &'static str = r#""pattern":"#;
    fn matches(&self, pattern: &Pattern) -> bool {
        pattern.is_match(self)
    }
}

impl<T: ArgText + ?Sized> ArgText for &T {
    const PATTERN_KEYWORD: &'static str = T::PATTERN_KEYWORD;
    fn matches(&self, pattern: &Pattern) -> bool {
        (**self).matches(pattern)
    }
}

#[cfg(feature = "alloc")]
impl ArgText for alloc::string::String {
    const PATTERN_KEYWORD: &'static str = r#""pattern":"#;
    fn matches(&self, pattern: &Pattern) -> bool {
        pattern.is_match(self)
    }
}

/// Checks `pattern` for derived parsers: [`Problem::Pattern`] naming the pattern when the
/// string has no match.
pub fn check_pattern<'i, T: ArgText + ?Sized>(
    v: &T,
    pattern: &'static Pattern,
    error: &mut ArgError<'i>,
) -> Result<(), Rejected> {
    if v.matches(pattern) {
        Ok(())
    } else {
        Err(error.set(Problem::Pattern(pattern.source())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{parse, Limits};

    const DIGIT: Class = Class::new(false, &[('0', '9')]);
    const NOT_NL: Class = Class::new(true, LINE_TERMINATORS);
    const WS: Class = Class::new(false, SPACE);

    /// `^a[0-9]+$`
    static ANCHORED: Pattern = Pattern::new(
        "^a[0-9]+$",
        &[
            Inst::Start,
            Inst::Char('a'),
            Inst::Class(&DIGIT),
            Inst::Split(2, 4),
            Inst::End,
            Inst::Match,
        ],
    );

    /// `b|c.d` (unanchored)
    static ALTERNATION: Pattern = Pattern::new(
        "b|c.d",
        &[
            Inst::Split(1, 3),
            Inst::Char('b'),
            Inst::Jump(6),
            Inst::Char('c'),
            Inst::Class(&NOT_NL),
            Inst::Char('d'),
            Inst::Match,
        ],
    );

    /// `^\s*$|x` : blank, or anything with an `x`.
    static BLANK_OR_X: Pattern = Pattern::new(
        "^\\s*$|x",
        &[
            Inst::Split(1, 7),
            Inst::Start,
            Inst::Split(3, 5),
            Inst::Class(&WS),
            Inst::Jump(2),
            Inst::End,
            Inst::Jump(8),
            Inst::Char('x'),
            Inst::Match,
        ],
    );

    /// `(?:)*` : an empty loop matches everything and terminates.
    static EMPTY_LOOP: Pattern =
        Pattern::new("(?:)*", &[Inst::Split(1, 2), Inst::Jump(0), Inst::Match]);

    /// `$` alone, and `a$b` (never matches).
    static END: Pattern = Pattern::new("$", &[Inst::End, Inst::Match]);
    static NEVER: Pattern = Pattern::new(
        "a$b",
        &[Inst::Char('a'), Inst::End, Inst::Char('b'), Inst::Match],
    );

    #[test]
    fn anchors_hold_at_the_ends_of_the_whole_string() {
        for (text, expected) in [
            ("a1", true),
            ("a123", true),
            ("a", false),
            ("xa1", false),
            ("a1x", false),
            ("", false),
            ("a1\n", false),
        ] {
            assert_eq!(ANCHORED.is_match(text), expected, "{text:?}");
        }
        assert!(END.is_match(""));
        assert!(END.is_match("anything"));
        for text in ["", "a", "ab", "a\nb", "b"] {
            assert!(!NEVER.is_match(text), "{text:?}");
        }
    }

    #[test]
    fn the_search_is_unanchored() {
        for (text, expected) in [
            ("b", true),
            ("abc", true),
            ("cxd", true),
            ("zzcxdzz", true),
            ("c\nd", false),
            ("c\rd", false),
            ("c\u{2028}d", false),
            ("c\u{85}d", true),
            ("cd", false),
            ("c😀d", true),
            ("", false),
        ] {
            assert_eq!(ALTERNATION.is_match(text), expected, "{text:?}");
        }
    }

    #[test]
    fn assertions_inside_alternatives() {
        for (text, expected) in [
            ("", true),
            ("  \t", true),
            ("\u{3000}\u{feff}", true),
            ("\u{85}", false),
            (" a ", false),
            (" x ", true),
            ("x", true),
        ] {
            assert_eq!(BLANK_OR_X.is_match(text), expected, "{text:?}");
        }
        assert!(EMPTY_LOOP.is_match(""));
        assert!(EMPTY_LOOP.is_match("abc"));
    }

    #[test]
    fn classes_negate_and_respect_ranges() {
        let c = Class::new(false, &[('0', '9'), ('A', 'Z'), ('é', 'é')]);
        assert!(c.contains('0') && c.contains('9') && c.contains('M') && c.contains('é'));
        assert!(!c.contains('/') && !c.contains(':') && !c.contains('a'));
        let n = Class::new(true, &[('a', 'a')]);
        assert!(n.contains('b') && !n.contains('a'));
        assert!(WS.contains('\u{b}') && !WS.contains('\u{200b}'));
    }

    #[test]
    fn json_strings_are_matched_decoded() {
        let raw = parse(br#""a\u0031\u0032""#, Limits::default()).unwrap();
        let s = raw.as_string().unwrap();
        let mut e = ArgError::blank();
        assert!(check_pattern(&s, &ANCHORED, &mut e).is_ok());
        let raw = parse(br#""a1\n""#, Limits::default()).unwrap();
        assert_eq!(
            check_pattern(&raw.as_string().unwrap(), &ANCHORED, &mut e),
            Err(Rejected)
        );
        assert_eq!(e.problem, Problem::Pattern("^a[0-9]+$"));
        assert!(check_pattern("a9", &ANCHORED, &mut e).is_ok());
    }

    #[test]
    fn large_programs_run_in_linear_time() {
        // `(a|a)*b`-style blowups are quadratic or worse for backtracking engines; here
        // every character costs at most one pass over the program.
        const A: Class = Class::new(false, &[('a', 'a')]);
        static P: Pattern = Pattern::new(
            "^(?:a|a)*$",
            &[
                Inst::Start,
                Inst::Split(2, 7),
                Inst::Split(3, 5),
                Inst::Class(&A),
                Inst::Jump(1),
                Inst::Char('a'),
                Inst::Jump(1),
                Inst::End,
                Inst::Match,
            ],
        );
        let mut text = [b'a'; 4096];
        let all_a = core::str::from_utf8(&text).unwrap();
        assert!(P.is_match(all_a));
        text[4095] = b'b';
        assert!(!P.is_match(core::str::from_utf8(&text).unwrap()));
    }
}
