//! A parser for the supported subset of ECMA-262 regular expressions (with the `u` flag's
//! strictness, as JSON Schema 2020-12 asks): everything outside the subset is an error that
//! names the construct.

use super::{LINE_TERMINATORS, SPACE};

/// A parsed pattern.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    /// Matches the empty string.
    Empty,
    /// One character.
    Char(char),
    /// One character of a set.
    Class(CharSet),
    /// `^`
    Start,
    /// `$`
    End,
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        /// `None`: unbounded.
        max: Option<u32>,
    },
}

/// A character set: sorted, disjoint inclusive ranges, possibly negated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CharSet {
    pub(crate) negated: bool,
    pub(crate) ranges: Vec<(char, char)>,
}

impl CharSet {
    pub(crate) fn of(negated: bool, ranges: &[(char, char)]) -> Self {
        CharSet {
            negated,
            ranges: normalize(ranges.to_vec()),
        }
    }

    pub(crate) fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }

    /// The same set without negation (its ranges complemented when negated).
    fn positive(&self) -> Vec<(char, char)> {
        if self.negated {
            complement(&self.ranges)
        } else {
            self.ranges.clone()
        }
    }
}

/// The most nested groups (the parser recurses on them).
const MAX_DEPTH: usize = 32;

/// What the error messages list as supported.
pub(crate) const SUPPORTED: &str = "supported: literals and escapes, `.`, classes `[...]` and \
    `[^...]`, `\\d \\D \\w \\W \\s \\S`, `^`, `$`, groups `(...)`, `(?:...)`, `(?<name>...)`, \
    `|`, and the quantifiers `* + ? {n} {n,} {n,m}`";

/// A syntax error or an unsupported construct, at a byte offset of the pattern.
#[derive(Debug)]
pub(crate) struct Error {
    pub(crate) offset: usize,
    pub(crate) message: String,
}

pub(crate) fn parse(source: &str) -> Result<Node, Error> {
    let mut p = Parser {
        src: source,
        pos: 0,
        depth: 0,
        names: Vec::new(),
    };
    let node = p.disjunction()?;
    match p.peek() {
        None => Ok(node),
        Some(_) => Err(p.error_at(p.pos, "unmatched `)`: escape it as `\\)`")),
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    depth: usize,
    names: Vec<String>,
}

/// One atom of a class: a character, or a whole set (`\d`, ...).
enum ClassAtom {
    Char(char),
    Set(CharSet),
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.src.get(self.pos..)?.chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.src.get(self.pos..)?.chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn rest_starts_with(&self, s: &str) -> bool {
        self.src.get(self.pos..).is_some_and(|r| r.starts_with(s))
    }

    fn error_at(&self, offset: usize, message: impl Into<String>) -> Error {
        Error {
            offset,
            message: message.into(),
        }
    }

    fn unsupported(&self, offset: usize, construct: &str) -> Error {
        self.error_at(
            offset,
            format!("{construct} is not supported ({SUPPORTED})"),
        )
    }

    fn disjunction(&mut self) -> Result<Node, Error> {
        let mut alternatives = vec![self.alternative()?];
        while self.eat('|') {
            alternatives.push(self.alternative()?);
        }
        Ok(if alternatives.len() == 1 {
            alternatives.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(alternatives)
        })
    }

    fn alternative(&mut self) -> Result<Node, Error> {
        let mut terms = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            terms.push(self.term()?);
        }
        Ok(match terms.len() {
            0 => Node::Empty,
            1 => terms.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(terms),
        })
    }

    fn term(&mut self) -> Result<Node, Error> {
        let start = self.pos;
        let Some(c) = self.bump() else {
            return Ok(Node::Empty);
        };
        let atom = match c {
            '^' => return self.assertion(Node::Start, start, "`^`"),
            '$' => return self.assertion(Node::End, start, "`$`"),
            '.' => Node::Class(CharSet::of(true, LINE_TERMINATORS)),
            '[' => Node::Class(self.class(start)?),
            '(' => self.group(start)?,
            '\\' => self.atom_escape(start)?,
            '*' | '+' | '?' => {
                return Err(self.error_at(start, format!("`{c}` has nothing to repeat")))
            }
            '{' => {
                self.pos = start;
                if self.quantifier()?.is_some() {
                    return Err(self.error_at(start, "a quantifier `{...}` has nothing to repeat"));
                }
                return Err(self.error_at(
                    start,
                    "a `{` that does not start a quantifier: escape it as `\\{`",
                ));
            }
            '}' | ']' => {
                return Err(self.error_at(
                    start,
                    format!("an unescaped `{c}` (ECMAScript's `u` mode refuses it): write `\\{c}`"),
                ))
            }
            c => Node::Char(c),
        };
        let quantifier_at = self.pos;
        let Some((min, max)) = self.quantifier()? else {
            return Ok(atom);
        };
        if atom == Node::Empty {
            return Err(self.error_at(
                quantifier_at,
                "a quantifier on an empty group repeats nothing (and common validators refuse \
                 it): remove it",
            ));
        }
        // Lazy and greedy quantifiers accept the same strings.
        self.eat('?');
        if matches!(self.peek(), Some('*' | '+' | '?' | '{')) && self.quantifier_follows()? {
            return Err(self.error_at(
                self.pos,
                "a quantifier cannot follow a quantifier: use a group, `(?:a*)*`",
            ));
        }
        if let Some(max) = max {
            if min > max {
                return Err(self.error_at(
                    quantifier_at,
                    format!("the quantifier `{{{min},{max}}}` has its bounds out of order"),
                ));
            }
        }
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
        })
    }

    /// `^` or `$`, which no quantifier may follow.
    fn assertion(&mut self, node: Node, start: usize, name: &str) -> Result<Node, Error> {
        if self.quantifier_follows()? {
            return Err(self.error_at(start, format!("an assertion ({name}) cannot be repeated")));
        }
        Ok(node)
    }

    /// Whether a quantifier starts here (without consuming it).
    fn quantifier_follows(&mut self) -> Result<bool, Error> {
        let at = self.pos;
        let found = self.quantifier()?.is_some();
        self.pos = at;
        Ok(found)
    }

    /// `* + ? {n} {n,} {n,m}` (without the lazy `?`), or `None` (nothing consumed).
    fn quantifier(&mut self) -> Result<Option<(u32, Option<u32>)>, Error> {
        match self.peek() {
            Some('*') => {
                self.pos += 1;
                Ok(Some((0, None)))
            }
            Some('+') => {
                self.pos += 1;
                Ok(Some((1, None)))
            }
            Some('?') => {
                self.pos += 1;
                Ok(Some((0, Some(1))))
            }
            Some('{') => {
                let start = self.pos;
                self.pos += 1;
                let Some(min) = self.decimal() else {
                    self.pos = start;
                    return Ok(None);
                };
                let max = if self.eat(',') {
                    if self.peek() == Some('}') {
                        None
                    } else {
                        match self.decimal() {
                            Some(max) => Some(max),
                            None => {
                                self.pos = start;
                                return Ok(None);
                            }
                        }
                    }
                } else {
                    Some(min)
                };
                if !self.eat('}') {
                    self.pos = start;
                    return Ok(None);
                }
                Ok(Some((min, max)))
            }
            _ => Ok(None),
        }
    }

    /// Decimal digits (saturating at `u32::MAX`), or `None` when there are none.
    fn decimal(&mut self) -> Option<u32> {
        let mut value: Option<u32> = None;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            self.pos += 1;
            value = Some(value.unwrap_or(0).saturating_mul(10).saturating_add(d));
        }
        value
    }

    /// A group; the `(` is consumed.
    fn group(&mut self, start: usize) -> Result<Node, Error> {
        if self.eat('?') {
            if self.eat(':') {
                // non-capturing
            } else if self.rest_starts_with("=") || self.rest_starts_with("!") {
                return Err(self.unsupported(start, "lookahead `(?=...)` / `(?!...)`"));
            } else if self.rest_starts_with("<=") || self.rest_starts_with("<!") {
                return Err(self.unsupported(start, "lookbehind `(?<=...)` / `(?<!...)`"));
            } else if self.eat('<') {
                self.group_name(start)?;
            } else {
                return Err(self.unsupported(
                    start,
                    "this group syntax (inline flags such as `(?i:...)` included)",
                ));
            }
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_at(start, format!("groups nested more than {MAX_DEPTH} deep")));
        }
        let inner = self.disjunction()?;
        self.depth -= 1;
        if !self.eat(')') {
            return Err(self.error_at(start, "unclosed group: `(` without `)`"));
        }
        Ok(inner)
    }

    /// `name>` of a named group (ASCII identifiers, unique); the `<` is consumed.
    fn group_name(&mut self, start: usize) -> Result<(), Error> {
        let name_start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += 1;
        }
        let name = self.src.get(name_start..self.pos).unwrap_or_default();
        let valid_start = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !valid_start || !self.eat('>') {
            return Err(self.error_at(
                start,
                "a group name must be an ASCII identifier (letters, digits, `_`) closed by `>`",
            ));
        }
        if self.names.iter().any(|n| n == name) {
            return Err(self.error_at(start, format!("the group name `{name}` is used twice")));
        }
        self.names.push(name.to_owned());
        Ok(())
    }

    /// An escape outside a class; the `\` is consumed.
    fn atom_escape(&mut self, start: usize) -> Result<Node, Error> {
        Ok(match self.class_or_char_escape(start, false)? {
            ClassAtom::Char(c) => Node::Char(c),
            ClassAtom::Set(set) => Node::Class(set),
        })
    }

    /// An escape; the `\` is consumed. `in_class` changes `\b` (a word boundary outside,
    /// backspace inside). `\-` is accepted outside classes too (ECMAScript's `u` mode allows
    /// it in classes only; every engine reads it as `-`).
    fn class_or_char_escape(&mut self, start: usize, in_class: bool) -> Result<ClassAtom, Error> {
        let Some(c) = self.bump() else {
            return Err(self.error_at(start, "the pattern ends with a lone `\\`"));
        };
        let set =
            |negated, ranges: &[(char, char)]| Ok(ClassAtom::Set(CharSet::of(negated, ranges)));
        const DIGIT: &[(char, char)] = &[('0', '9')];
        const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];
        let c = match c {
            'd' => return set(false, DIGIT),
            'D' => return set(true, DIGIT),
            'w' => return set(false, WORD),
            'W' => return set(true, WORD),
            's' => return set(false, SPACE),
            'S' => return set(true, SPACE),
            'b' if in_class => {
                return Err(self.error_at(
                    start,
                    "`[\\b]` (backspace) is refused by common validators: write `\\x08`",
                ))
            }
            'b' | 'B' => return Err(self.unsupported(start, &format!("the word boundary `\\{c}`"))),
            '1'..='9' => return Err(self.unsupported(start, &format!("the backreference `\\{c}`"))),
            'k' => return Err(self.unsupported(start, "the named backreference `\\k<...>`")),
            'p' | 'P' => {
                return Err(self.unsupported(
                    start,
                    &format!("the Unicode property escape `\\{c}{{...}}`"),
                ))
            }
            '0' => {
                return Err(self.error_at(
                    start,
                    "`\\0` is refused by common validators (the `jsonschema` crate among them): \
                     write `\\x00`",
                ))
            }
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            'c' => match self.bump() {
                Some(letter) if letter.is_ascii_alphabetic() => char::from(letter as u8 % 32),
                _ => return Err(self.error_at(start, "`\\c` must be followed by an ASCII letter")),
            },
            'x' => {
                let value = self.hex_digits(start, 2)?;
                char::from_u32(value).unwrap_or('\0')
            }
            'u' => self.unicode_escape(start)?,
            '<' | '>' => {
                return Err(self.error_at(
                    start,
                    format!(
                        "`\\{c}` means `{c}` in ECMAScript but a word boundary to other \
                         engines: write `{c}` unescaped"
                    ),
                ))
            }
            c if c.is_ascii_punctuation() => c,
            c => {
                return Err(self.error_at(
                    start,
                    format!(
                        "unknown escape `\\{c}` (ECMAScript's `u` mode allows escaping \
                         punctuation only)"
                    ),
                ))
            }
        };
        Ok(ClassAtom::Char(c))
    }

    /// Exactly `n` hex digits.
    fn hex_digits(&mut self, start: usize, n: usize) -> Result<u32, Error> {
        let mut value = 0;
        for _ in 0..n {
            match self.bump().and_then(|c| c.to_digit(16)) {
                Some(d) => value = value * 16 + d,
                None => {
                    return Err(
                        self.error_at(start, format!("this escape needs {n} hexadecimal digits"))
                    )
                }
            }
        }
        Ok(value)
    }

    /// `\uXXXX` or `\u{X...}` after `\u`.
    fn unicode_escape(&mut self, start: usize) -> Result<char, Error> {
        let value = if self.eat('{') {
            let mut value: u32 = 0;
            let mut digits = 0;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                self.pos += 1;
                value = value.saturating_mul(16).saturating_add(d);
                digits += 1;
            }
            if digits == 0 || !self.eat('}') {
                return Err(self.error_at(start, "`\\u{...}` needs hexadecimal digits and `}`"));
            }
            value
        } else {
            self.hex_digits(start, 4)?
        };
        if (0xD800..0xE000).contains(&value) {
            return Err(self.error_at(
                start,
                "surrogate escapes (`\\uD83D\\uDE00`) are refused by common validators and a \
                 lone surrogate never matches: write the code point, `\\u{1F600}`",
            ));
        }
        char::from_u32(value).ok_or_else(|| self.error_at(start, "`\\u{...}` beyond U+10FFFF"))
    }

    /// A class; the `[` is consumed.
    fn class(&mut self, start: usize) -> Result<CharSet, Error> {
        let negated = self.eat('^');
        if self.peek() == Some(']') {
            return Err(self.error_at(
                start,
                if negated {
                    "`[^]` is refused by common validators: write `[\\s\\S]` for any character"
                } else {
                    "the empty class `[]` matches nothing (and common validators refuse it)"
                },
            ));
        }
        let mut ranges = Vec::new();
        loop {
            let atom_start = self.pos;
            let Some(c) = self.bump() else {
                return Err(self.error_at(start, "unclosed class: `[` without `]`"));
            };
            if c == ']' {
                break;
            }
            let first = self.class_atom(c, atom_start)?;
            // `-` between two atoms makes a range, unless it closes the class.
            if self.peek() == Some('-') && !matches!(self.peek_at(1), Some(']') | None) {
                let dash = self.pos;
                self.pos += 1;
                let end_start = self.pos;
                let Some(end) = self.bump() else {
                    return Err(self.error_at(start, "unclosed class: `[` without `]`"));
                };
                let last = self.class_atom(end, end_start)?;
                let (ClassAtom::Char(lo), ClassAtom::Char(hi)) = (first, last) else {
                    return Err(self.error_at(
                        dash,
                        "a class escape (`\\d`, `\\w`, `\\s`, ...) cannot bound a range: \
                         escape the `-` as `\\-`",
                    ));
                };
                if lo > hi {
                    return Err(
                        self.error_at(atom_start, format!("the range `{lo}-{hi}` is out of order"))
                    );
                }
                ranges.push((lo, hi));
                continue;
            }
            match first {
                ClassAtom::Char(c) => ranges.push((c, c)),
                ClassAtom::Set(set) => ranges.extend(set.positive()),
            }
        }
        Ok(CharSet {
            negated,
            ranges: normalize(ranges),
        })
    }

    fn class_atom(&mut self, c: char, start: usize) -> Result<ClassAtom, Error> {
        if c == '\\' {
            self.class_or_char_escape(start, true)
        } else {
            Ok(ClassAtom::Char(c))
        }
    }
}

/// Sorts and merges ranges (adjacent ones too).
pub(crate) fn normalize(mut ranges: Vec<(char, char)>) -> Vec<(char, char)> {
    ranges.sort_unstable();
    let mut out: Vec<(char, char)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        if let Some(last) = out.last_mut() {
            if lo as u32 <= next_char(last.1).map_or(u32::MAX, |c| c as u32) {
                last.1 = last.1.max(hi);
                continue;
            }
        }
        out.push((lo, hi));
    }
    out
}

/// The character after `c` (skipping the surrogate gap).
fn next_char(c: char) -> Option<char> {
    match c as u32 {
        0xD7FF => Some('\u{E000}'),
        n => char::from_u32(n + 1),
    }
}

/// The character before `c` (skipping the surrogate gap).
fn prev_char(c: char) -> Option<char> {
    match c as u32 {
        0 => None,
        0xE000 => Some('\u{D7FF}'),
        n => char::from_u32(n - 1),
    }
}

/// Every character not in the (normalized) ranges.
fn complement(ranges: &[(char, char)]) -> Vec<(char, char)> {
    let mut out = Vec::new();
    let mut from = Some('\0');
    for &(lo, hi) in ranges {
        if let (Some(start), Some(end)) = (from, prev_char(lo)) {
            if start <= end {
                out.push((start, end));
            }
        }
        from = next_char(hi);
    }
    if let Some(start) = from {
        out.push((start, char::MAX));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(pattern: &str) -> String {
        parse(pattern).expect_err(pattern).message
    }

    #[test]
    fn ranges_merge_and_complement() {
        assert_eq!(
            normalize(vec![('c', 'e'), ('a', 'b'), ('x', 'x'), ('d', 'f')]),
            vec![('a', 'f'), ('x', 'x')]
        );
        assert_eq!(
            complement(&[('\0', '/'), (':', char::MAX)]),
            vec![('0', '9')]
        );
        assert_eq!(
            complement(&[('a', '\u{D7FF}')]),
            vec![('\0', '`'), ('\u{E000}', char::MAX)]
        );
        assert_eq!(complement(&[]), vec![('\0', char::MAX)]);
    }

    #[test]
    fn classes_read_as_ecmascript_does() {
        let Node::Class(set) = parse("[a-z-9]").unwrap() else {
            panic!()
        };
        assert_eq!(set.ranges, vec![('-', '-'), ('9', '9'), ('a', 'z')]);
        let Node::Class(set) = parse("[---]").unwrap() else {
            panic!()
        };
        assert_eq!(set.ranges, vec![('-', '-')]);
        let Node::Class(set) = parse("[^\\d\\s]").unwrap() else {
            panic!()
        };
        assert!(set.negated && !set.contains('5') && !set.contains(' ') && set.contains('a'));
        let Node::Class(set) = parse("[\\D]").unwrap() else {
            panic!()
        };
        assert!(!set.negated && set.contains('a') && !set.contains('0'));
        let Node::Class(set) = parse("[[\\]\\-]").unwrap() else {
            panic!()
        };
        assert_eq!(set.ranges, vec![('-', '-'), ('[', '['), (']', ']')]);
    }

    #[test]
    fn escapes_decode() {
        assert_eq!(parse("\\x41").unwrap(), Node::Char('A'));
        assert_eq!(parse("\\u00e9").unwrap(), Node::Char('é'));
        assert_eq!(parse("\\u{1F600}").unwrap(), Node::Char('😀'));
        assert_eq!(parse("\\cJ").unwrap(), Node::Char('\n'));
        assert_eq!(parse("\\/").unwrap(), Node::Char('/'));
        assert_eq!(parse("\\-").unwrap(), Node::Char('-'));
    }

    #[test]
    fn unsupported_constructs_are_named() {
        assert!(err("(?=a)").contains("lookahead"));
        assert!(err("(?<!a)").contains("lookbehind"));
        assert!(err("(a)\\1").contains("backreference"));
        assert!(err("\\bx").contains("word boundary"));
        assert!(err("\\p{L}").contains("property"));
        assert!(err("(?i:a)").contains("inline flags"));
        assert!(err("a**").contains("cannot follow a quantifier"));
        assert!(err("^*").contains("cannot be repeated"));
        assert!(err("*a").contains("nothing to repeat"));
        assert!(err("a{2,1}").contains("out of order"));
        assert!(err("a{").contains("escape it"));
        assert!(err("a]").contains("`\\]`"));
        assert!(err("(a").contains("unclosed group"));
        assert!(err("a)").contains("unmatched"));
        assert!(err("[a").contains("unclosed class"));
        assert!(err("[z-a]").contains("out of order"));
        assert!(err("[\\d-z]").contains("cannot bound a range"));
        assert!(err("\\a").contains("unknown escape"));
        assert!(err("\\<").contains("word boundary"));
        assert!(err("\\0").contains("\\x00"));
        assert!(err("\\uD83D\\uDE00").contains("surrogate"));
        assert!(err("[]").contains("empty class"));
        assert!(err("[^]").contains("[\\s\\S]"));
        assert!(err("(?<a>x)(?<a>y)").contains("twice"));
        assert!(err(&"(".repeat(40)).contains("nested"));
        assert!(err("\\").contains("lone"));
        assert!(err("(?:)*").contains("empty group"));
        assert!(err("(){2}").contains("empty group"));
    }

    #[test]
    fn lazy_quantifiers_are_greedy_ones() {
        assert_eq!(parse("a+?").unwrap(), parse("a+").unwrap());
        assert_eq!(parse("a{2,3}?").unwrap(), parse("a{2,3}").unwrap());
    }
}
