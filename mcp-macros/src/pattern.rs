//! `#[arg(pattern = "...")]`: the JSON Schema `pattern` keyword, compiled at build time.
//!
//! The pattern (ECMA-262, as JSON Schema says) is parsed here ([`parse`]), turned into a
//! Thompson NFA ([`compile`]) and emitted as a `static` `mcp_rs_core::typed::Pattern`: a table
//! of instructions that `mcp_rs_core::typed::pattern` runs without allocation, without
//! backtracking and in time linear in the string. The same program runs here too
//! ([`Program::is_match`]), to check `default` and `examples` values at compile time.
//!
//! The supported subset, with ECMAScript meanings (`u` flag, as JSON Schema 2020-12 asks:
//! characters are Unicode scalar values):
//! - literal characters; escapes `\f \n \r \t \v`, `\cA`..`\cZ`, `\xHH`, `\uHHHH`,
//!   `\u{H...}`, and `\` before ASCII punctuation;
//! - `.` (any character except `\n`, `\r`, U+2028, U+2029);
//! - classes `[...]` and `[^...]` with ranges and escapes;
//! - `\d` (`[0-9]`), `\w` (`[A-Za-z0-9_]`), `\s` (ECMAScript's white space and line
//!   terminators: `\t`..`\r`, space, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029,
//!   U+202F, U+205F, U+3000, U+FEFF; not U+0085) and their negations `\D \W \S`;
//! - `^` and `$` (start and end of the whole string: there is no multiline flag);
//! - groups `(...)`, `(?:...)`, `(?<name>...)`, alternation `|`;
//! - quantifiers `* + ? {n} {n,} {n,m}`, greedy or lazy (the same for a yes/no answer).
//!
//! Everything else is a compile error naming the construct: backreferences, lookaround,
//! word boundaries, `\p{...}`, inline flags; also a few forms valid in ECMAScript that
//! common validators (the `jsonschema` crate among them) refuse to compile: `[]`, `[^]`,
//! `[\b]`, `\0`, surrogate-pair escapes. A pattern that would need more than
//! [`MAX_STATES`] instructions is refused too.

mod compile;
mod parse;
#[cfg(test)]
mod random;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::attrs::{json_string, FieldAttrs, JsonLiteral};
use parse::CharSet;

/// Must equal `mcp_rs_core::typed::pattern::MAX_STATES` (a test checks).
pub(crate) const MAX_STATES: usize = 256;

/// Must equal `mcp_rs_core::typed::pattern::SPACE` (a test checks): ECMAScript's `\s`.
pub(crate) const SPACE: &[(char, char)] = &[
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

/// Must equal `mcp_rs_core::typed::pattern::LINE_TERMINATORS` (a test checks).
pub(crate) const LINE_TERMINATORS: &[(char, char)] =
    &[('\n', '\n'), ('\r', '\r'), ('\u{2028}', '\u{2029}')];

/// An instruction (as `mcp_rs_core::typed::pattern::Inst`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Inst {
    Char(char),
    Class(CharSet),
    Split(usize, usize),
    Jump(usize),
    Start,
    End,
    Match,
}

/// A compiled pattern.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    insts: Vec<Inst>,
}

/// Compiles a pattern; the error message names the construct and its byte offset.
pub(crate) fn compile(source: &str) -> Result<Program, String> {
    let node = parse::parse(source).map_err(|e| {
        let near: String = source
            .get(e.offset..)
            .unwrap_or_default()
            .chars()
            .take(12)
            .collect();
        format!(
            "invalid `pattern` at byte {} (`{}`): {}",
            e.offset,
            near.escape_debug(),
            e.message
        )
    })?;
    let insts = compile::compile(&node).map_err(|e| format!("`pattern` too large: {e}"))?;
    Ok(Program { insts })
}

impl Program {
    /// The number of instructions.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.insts.len()
    }

    /// Whether `text` contains a match: the same simulation as
    /// `mcp_rs_core::typed::Pattern::is_match_chars`.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        let n = self.insts.len();
        let mut current = vec![false; n];
        let mut chars = text.chars().peekable();
        let mut at_start = true;
        loop {
            let at_end = chars.peek().is_none();
            let mut seen = vec![false; n];
            let mut next = vec![false; n];
            let threads: Vec<usize> = (0..n).filter(|&i| current[i]).map(|i| i + 1).collect();
            for pc in threads.into_iter().chain([0]) {
                if self.follow(pc, at_start, at_end, &mut next, &mut seen) {
                    return true;
                }
            }
            let Some(c) = chars.next() else {
                return false;
            };
            current = vec![false; n];
            for (i, inst) in self.insts.iter().enumerate() {
                current[i] = next[i]
                    && match inst {
                        Inst::Char(want) => *want == c,
                        Inst::Class(set) => set.contains(c),
                        _ => false,
                    };
            }
            at_start = false;
        }
    }

    fn follow(
        &self,
        pc: usize,
        at_start: bool,
        at_end: bool,
        out: &mut [bool],
        seen: &mut [bool],
    ) -> bool {
        let mut pending = vec![pc];
        while let Some(i) = pending.pop() {
            if i >= self.insts.len() || std::mem::replace(&mut seen[i], true) {
                continue;
            }
            match &self.insts[i] {
                Inst::Char(_) | Inst::Class(_) => out[i] = true,
                Inst::Split(a, b) => pending.extend([*b, *a]),
                Inst::Jump(a) => pending.push(*a),
                Inst::Start if at_start => pending.push(i + 1),
                Inst::End if at_end => pending.push(i + 1),
                Inst::Match => return true,
                Inst::Start | Inst::End => {}
            }
        }
        false
    }

    /// `::mcp_rs_core::typed::Pattern::new(source, &[...])`, for a `static`.
    pub(crate) fn to_tokens(&self, source: &str) -> TokenStream {
        let p = quote!(::mcp_rs_core::typed::pattern);
        let index = |i: usize| Literal::u16_unsuffixed(i as u16);
        let insts = self.insts.iter().map(|inst| match inst {
            Inst::Char(c) => {
                let c = Literal::character(*c);
                quote!(#p::Inst::Char(#c))
            }
            Inst::Class(set) => {
                let negated = set.negated;
                let ranges = if set.ranges == SPACE {
                    quote!(#p::SPACE)
                } else if set.ranges == LINE_TERMINATORS {
                    quote!(#p::LINE_TERMINATORS)
                } else {
                    let pairs = set.ranges.iter().map(|&(lo, hi)| {
                        let (lo, hi) = (Literal::character(lo), Literal::character(hi));
                        quote!((#lo, #hi))
                    });
                    quote!(&[#(#pairs),*])
                };
                quote!(#p::Inst::Class(&#p::Class::new(#negated, #ranges)))
            }
            Inst::Split(a, b) => {
                let (a, b) = (index(*a), index(*b));
                quote!(#p::Inst::Split(#a, #b))
            }
            Inst::Jump(a) => {
                let a = index(*a);
                quote!(#p::Inst::Jump(#a))
            }
            Inst::Start => quote!(#p::Inst::Start),
            Inst::End => quote!(#p::Inst::End),
            Inst::Match => quote!(#p::Inst::Match),
        });
        quote!(#p::Pattern::new(#source, &[#(#insts),*]))
    }
}

/// Rejects a `default` or an element of `examples` that the field's parser would reject:
/// a string must match the `pattern` and fit `min_length`/`max_length` (in Unicode scalar
/// values); with a `pattern`, the value must be a string. (Numbers are checked by the caller.)
pub(crate) fn check_literal(lit: &JsonLiteral, attrs: &FieldAttrs, what: &str) -> syn::Result<()> {
    let err = |msg: String| Err(syn::Error::new(lit.span, msg));
    let Some(s) = &lit.string else {
        if attrs.pattern.is_some() {
            return err(format!(
                "the {what} of a field with a `pattern` must be a string"
            ));
        }
        return Ok(());
    };
    let len = s.chars().count() as u64;
    if let Some((min, _)) = attrs.min_length {
        if len < min {
            return err(format!(
                "the {what} has {len} characters, fewer than `min_length` ({min})"
            ));
        }
    }
    if let Some((max, _)) = attrs.max_length {
        if len > max {
            return err(format!(
                "the {what} has {len} characters, more than `max_length` ({max})"
            ));
        }
    }
    if let Some(pattern) = &attrs.pattern {
        if !pattern.program.is_match(s) {
            return err(format!(
                "the {what} {} does not match the `pattern` {}",
                json_string(s),
                json_string(&pattern.source)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shared_constants_agree_with_mcp_core() {
        assert_eq!(MAX_STATES, mcp_rs_core::typed::pattern::MAX_STATES);
        assert_eq!(SPACE, mcp_rs_core::typed::pattern::SPACE);
        assert_eq!(
            LINE_TERMINATORS,
            mcp_rs_core::typed::pattern::LINE_TERMINATORS
        );
    }

    /// The compile-time matcher (used for `default` and `examples`) against the `jsonschema`
    /// crate on hand-picked cases, near misses included.
    #[test]
    fn the_compile_time_matcher_agrees_with_the_judge() {
        let cases: &[(&str, &[&str])] = &[
            (
                r"^\s*[0-9]*[dD][0-9]+\s*([+-]\s*[0-9]+)?\s*$",
                &[
                    "2d6+3",
                    "d20",
                    "4d8-1",
                    " 2 d6",
                    "2d6 + 3 ",
                    "2d",
                    "d",
                    "2x6",
                    "2d6+",
                    "2d6+3+1",
                    "\u{3000}d4\u{feff}",
                    "d4\u{85}",
                    "٣d6",
                    "",
                    "2D6-10",
                ],
            ),
            (
                "^(red|green|blue)$",
                &[
                    "red", "green", "blue", "", "redgreen", "Red", "re", "blue\n",
                ],
            ),
            ("b|c", &["", "abc", "a", "xcx", "B"]),
            (
                r"^[A-Z]{2,3}-\d{1,4}$",
                &[
                    "AB-1", "ABC-1234", "A-1", "ABCD-1", "AB-12345", "AB-", "ab-1", "AB-٣",
                ],
            ),
            ("^x-", &["x-", "x-y", "xx-", " x-", "x"]),
            (
                r"^[^\s@]+@[^\s@]+\.\w+$",
                &["a@b.c", "a b@c.d", "@b.c", "a@b", "é@ü.de", "a@b.c!"],
            ),
            (
                "^(?:a|ab)(?:c|bcd)(?:d*)$",
                &["abcd", "acd", "abcdd", "ab", "abd", "abbcd"],
            ),
            (r"^\W\D\S$", &["!a!", "a!!", "!1!", "! !", "_x-"]),
            (
                "^[\\u{1F600}-\\u{1F64F}]+$",
                &["😀", "😀🙏", "😀x", "", "🚀"],
            ),
            ("^(|a)*$", &["", "a", "aa", "b"]),
            ("(a*)*", &["", "b"]),
            ("^(?:a?){3}$", &["", "aaa", "aaaa"]),
            ("^$", &["", " ", "\n"]),
            ("a$b", &["ab", "a", "a\nb"]),
            ("^a{0}$", &["", "a"]),
            (r"^\x41\u0042\cJ\/$", &["AB\n/", "AB\r/"]),
        ];
        for (pattern, texts) in cases {
            let program = compile(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            let schema = json!({"type": "string", "pattern": pattern});
            let judge = jsonschema::draft202012::new(&schema).expect("the judge compiles it");
            for text in *texts {
                assert_eq!(
                    program.is_match(text),
                    judge.is_valid(&json!(text)),
                    "{pattern} on {text:?}"
                );
            }
        }
    }

    #[test]
    fn errors_carry_the_offset_and_the_construct() {
        let e = compile("ab(?=c)").unwrap_err();
        assert!(
            e.starts_with("invalid `pattern` at byte 2 (`(?=c)`): lookahead"),
            "{e}"
        );
        let e = compile("[a-z]{300}").unwrap_err();
        assert!(
            e.starts_with("`pattern` too large: the pattern needs 301 states"),
            "{e}"
        );
    }

    #[test]
    fn only_fields_with_a_pattern_generate_matching_code() {
        let plain = crate::args::derive(quote! {
            struct Plain<'a> {
                #[arg(max_length = 3, examples = ["abc"])]
                s: JsonStr<'a>,
                n: Option<u8>,
            }
        })
        .to_string();
        assert!(!plain.contains("compile_error"), "{plain}");
        assert!(!plain.to_lowercase().contains("pattern"), "{plain}");
        let with = crate::args::derive(quote! {
            struct With<'a> {
                #[arg(pattern = "^a")]
                s: JsonStr<'a>,
                t: JsonStr<'a>,
            }
        })
        .to_string();
        assert!(!with.contains("compile_error"), "{with}");
        assert_eq!(with.matches("static PATTERN").count(), 1, "{with}");
        assert_eq!(with.matches("check_pattern").count(), 1, "{with}");
    }

    #[test]
    fn the_dice_pattern_is_small() {
        let p = compile(r"^\s*[0-9]*[dD][0-9]+\s*([+-]\s*[0-9]+)?\s*$").unwrap();
        assert_eq!(p.len(), 25);
    }
}
