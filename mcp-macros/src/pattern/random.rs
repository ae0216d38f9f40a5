//! Random patterns of the supported subset and random strings: the compile-time matcher and
//! the runtime of `mcp_rs_core::typed::pattern` (given the same program) must both agree with
//! the `jsonschema` crate on every string, and the judge must compile every pattern the
//! derive accepts.
//!
//! Strings avoid `\r`, U+2028 and U+2029: ECMAScript's `.` refuses them and the judge's does
//! not (the documented difference, tested in `tests/derive_pattern.rs`).

use serde_json::json;

use super::{compile, Inst, Program};

/// A tiny deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const ATOMS: &[&str] = &[
    "a",
    "b",
    "c",
    "0",
    "-",
    "\\.",
    "\\-",
    "\\d",
    "\\D",
    "\\w",
    "\\W",
    "\\s",
    "\\S",
    ".",
    "[ab]",
    "[^a]",
    "[a-c0]",
    "[^\\s\\d]",
    "[\\w-]",
    "[é-ü]",
    "\\u00e9",
    "\\x41",
    "\\t",
    "[\\n ]",
    "\\u{3000}",
];

const TEXT: &[char] = &[
    'a', 'b', 'c', '0', '5', ' ', '\n', '\t', '-', '.', '_', 'A', 'é', 'ü', '\u{3000}', '\u{85}',
    '\u{feff}', '😀',
];

fn node(rng: &mut Rng, depth: usize) -> String {
    let mut out = match rng.below(if depth == 0 { 3 } else { 6 }) {
        0..=2 => rng.pick(ATOMS).to_owned(),
        3 => format!("({})", alternation(rng, depth - 1)),
        4 => format!("(?:{})", alternation(rng, depth - 1)),
        _ => {
            return rng.pick(&["^", "$"]).to_owned();
        }
    };
    if out == "()" || out == "(?:)" {
        return out;
    }
    let quantifier = match rng.below(10) {
        0 => "*".to_owned(),
        1 => "+".to_owned(),
        2 => "?".to_owned(),
        3 => format!("{{{}}}", rng.below(3)),
        4 => format!("{{{},}}", rng.below(3)),
        5 => {
            let n = rng.below(3);
            format!("{{{n},{}}}", n + rng.below(3))
        }
        _ => String::new(),
    };
    if !quantifier.is_empty() {
        out += &quantifier;
        if rng.below(4) == 0 {
            out.push('?');
        }
    }
    out
}

fn sequence(rng: &mut Rng, depth: usize) -> String {
    (0..rng.below(4)).map(|_| node(rng, depth)).collect()
}

fn alternation(rng: &mut Rng, depth: usize) -> String {
    let mut out = sequence(rng, depth);
    while rng.below(4) == 0 {
        out.push('|');
        out += &sequence(rng, depth);
    }
    out
}

/// The program as `mcp_rs_core` instructions (leaked: `Pattern` wants `'static` tables).
fn runtime(source: &str, program: &Program) -> mcp_rs_core::typed::Pattern {
    use mcp_rs_core::typed::pattern as rt;
    let insts: Vec<rt::Inst> = program
        .insts
        .iter()
        .map(|inst| match inst {
            Inst::Char(c) => rt::Inst::Char(*c),
            Inst::Class(set) => {
                let ranges: &'static [(char, char)] =
                    Box::leak(set.ranges.clone().into_boxed_slice());
                rt::Inst::Class(Box::leak(Box::new(rt::Class::new(set.negated, ranges))))
            }
            Inst::Split(a, b) => rt::Inst::Split(*a as u16, *b as u16),
            Inst::Jump(a) => rt::Inst::Jump(*a as u16),
            Inst::Start => rt::Inst::Start,
            Inst::End => rt::Inst::End,
            Inst::Match => rt::Inst::Match,
        })
        .collect();
    let source: &'static str = Box::leak(source.to_owned().into_boxed_str());
    rt::Pattern::new(source, Box::leak(insts.into_boxed_slice()))
}

#[test]
fn random_patterns_agree_with_the_judge() {
    let mut rng = Rng(0x5eed);
    let (mut patterns, mut refused, mut strings, mut matched) = (0, 0, 0, 0);
    while patterns < 600 {
        let source = if rng.below(3) == 0 {
            format!("^{}$", alternation(&mut rng, 2))
        } else {
            alternation(&mut rng, 2)
        };
        let program = match compile(&source) {
            Ok(program) => program,
            Err(e) => {
                // Only the constructs the generator may produce by accident.
                assert!(
                    e.contains("empty group") || e.contains("too large"),
                    "{source}: {e}"
                );
                refused += 1;
                continue;
            }
        };
        patterns += 1;
        let schema = json!({"type": "string", "pattern": source});
        let judge = jsonschema::draft202012::new(&schema).unwrap_or_else(|e| {
            panic!("the judge refuses {source:?}, which the derive accepts: {e}")
        });
        let runtime = runtime(&source, &program);
        for _ in 0..60 {
            let len = rng.below(7);
            let text: String = (0..len).map(|_| rng.pick(TEXT)).collect();
            let expected = judge.is_valid(&json!(text));
            assert_eq!(program.is_match(&text), expected, "{source:?} on {text:?}");
            assert_eq!(
                runtime.is_match(&text),
                expected,
                "runtime: {source:?} on {text:?}"
            );
            strings += 1;
            matched += usize::from(expected);
        }
    }
    println!("{patterns} patterns ({refused} refused), {strings} strings, {matched} matched");
    assert!(matched > strings / 10 && matched < strings * 9 / 10);
}
