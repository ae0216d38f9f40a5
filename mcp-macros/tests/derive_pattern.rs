//! `#[arg(pattern = "...")]` and `#[arg(examples = [...])]`: schemas with `pattern` are valid
//! JSON Schema 2020-12, and the generated parser accepts a string exactly when the `jsonschema`
//! crate (the judge) does.
//!
//! For each pattern, strings are generated from a few valid seeds and an alphabet of the
//! characters that matter to it (plus some that do not): seeds as they are, seeds mutated
//! by one to three edits (near misses: a character inserted, dropped, replaced, doubled;
//! whitespace around), and random strings. They are written as JSON with random escapes
//! (`\u0064` for `d`, surrogate pairs for emoji), so the zero-copy parser matches decoded
//! text while the judge sees the value.
#![allow(missing_docs)]

use mcp_rs_core::typed::ToolArgs;
use mcp_rs_core::wire::json::{parse, JsonStr, Limits, RawJson};
use mcp_rs_core::ToolArgs;
use serde_json::{json, Value};

/// The dice notation of the calculator's `roll_dice`.
#[derive(ToolArgs, Debug)]
pub struct Roll<'a> {
    /// Dice notation, e.g. 2d6+3.
    #[arg(
        pattern = r"^\s*[0-9]*[dD][0-9]+\s*([+-]\s*[0-9]+)?\s*$",
        examples = ["2d6+3", "d20", "4d8-1"]
    )]
    pub notation: JsonStr<'a>,
}

/// One optional field per pattern shape.
#[derive(ToolArgs, Debug)]
pub struct Shapes<'a> {
    /// Alternation, anchored.
    #[arg(pattern = "^(red|green|blue)$", default = "red")]
    pub color: JsonStr<'a>,
    /// Classes and bounded repetition.
    #[arg(pattern = r"^[A-Z]{2,3}-\d{1,4}$", examples = ["AB-1", "XYZ-2024"])]
    pub code: Option<JsonStr<'a>>,
    /// A prefix: no `$`, so anything may follow.
    #[arg(pattern = "^x-")]
    pub prefix: Option<JsonStr<'a>>,
    /// Unicode text: accented letters, emoji, `\w` and `\s`.
    #[arg(pattern = r"^[À-ÿ\u{1F600}-\u{1F64F}]+\s?\w*$")]
    pub unicode: Option<JsonStr<'a>>,
    /// Unanchored, with `.`.
    #[arg(pattern = "b|c.d")]
    pub anywhere: Option<JsonStr<'a>>,
    /// Nested bounded repetition and alternation (dotted quads).
    #[arg(pattern = r"^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$")]
    pub ipv4: Option<JsonStr<'a>>,
    /// Negated classes and `$` without `^`, with a length bound too.
    #[arg(pattern = r"[^\s@]+@[^\s@]+\.\w+$", max_length = 16)]
    pub email: Option<String>,
}

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
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// Characters most patterns care about, and some they do not.
const COMMON: &[char] = &[
    ' ', '\t', '\n', '\u{a0}', '\u{3000}', '\u{feff}', '\u{85}', '\u{200b}', 'a', 'Z', '0', '9',
    '٣', '-', '+', '.', '"', '\\', 'é', '😀',
];

/// A string near the seeds: a seed as is, mutated, or random.
fn generate(rng: &mut Rng, seeds: &[&str], alphabet: &[char]) -> String {
    let random_char = |rng: &mut Rng| {
        if rng.chance(70) {
            rng.pick(alphabet)
        } else {
            rng.pick(COMMON)
        }
    };
    match rng.below(10) {
        0 => {
            let len = rng.below(8);
            (0..len).map(|_| random_char(rng)).collect()
        }
        1..=3 => rng.pick(seeds).to_owned(),
        _ => {
            let mut chars: Vec<char> = rng.pick(seeds).chars().collect();
            for _ in 0..=rng.below(3) {
                let at = rng.below(chars.len() + 1);
                match rng.below(6) {
                    0 => chars.insert(at, random_char(rng)),
                    1 if at < chars.len() => {
                        chars.remove(at);
                    }
                    2 if at < chars.len() => chars[at] = random_char(rng),
                    3 if at < chars.len() => chars.insert(at, chars[at]),
                    4 => chars.insert(0, rng.pick(&[' ', '\n', 'x'])),
                    _ => chars.push(rng.pick(&[' ', '\n', 'x', '0'])),
                }
            }
            chars.into_iter().collect()
        }
    }
}

/// `s` as a JSON string literal, escaping characters at random (always the ones JSON
/// requires).
fn json_string(rng: &mut Rng, s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        let must = c == '"' || c == '\\' || (c as u32) < 0x20;
        if !must && !rng.chance(15) {
            out.push(c);
            continue;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' if rng.chance(50) => out.push_str("\\n"),
            '/' => out.push_str("\\/"),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

/// Generates `count` strings for `field` and asserts that the parser and the judge agree on
/// each; returns how many were valid.
fn agree(
    schema_text: &str,
    parse_args: impl Fn(RawJson<'_>) -> Result<(), String>,
    field: &str,
    seeds: &[&str],
    alphabet: &[char],
    seed: u64,
) -> usize {
    let schema: Value = serde_json::from_str(schema_text).expect("the schema is JSON");
    jsonschema::draft202012::meta::validator()
        .validate(&schema)
        .unwrap_or_else(|e| panic!("{schema_text} is not a valid 2020-12 schema: {e}"));
    let judge = jsonschema::draft202012::new(&schema).expect("the judge compiles the schema");
    let pattern = schema["properties"][field]["pattern"]
        .as_str()
        .expect("the field has a pattern")
        .to_owned();
    let mut rng = Rng(seed);
    let count = 3000;
    let mut valid = 0;
    for _ in 0..count {
        let s = generate(&mut rng, seeds, alphabet);
        let text = format!("{{\"{field}\":{}}}", json_string(&mut rng, &s));
        let instance = json!({ field: s });
        let raw = parse(text.as_bytes(), Limits::default()).expect("the generator writes JSON");
        let parsed = parse_args(raw);
        let expected = judge.is_valid(&instance);
        assert_eq!(
            parsed.is_ok(),
            expected,
            "{field} = {s:?} (sent as {text}): the parser said {parsed:?}, the judge {expected}"
        );
        if let Err(e) = &parsed {
            // A pattern failure names the field and the pattern.
            if !e.contains("characters or items") {
                assert_eq!(
                    *e,
                    format!("argument `{field}`: must match the pattern {pattern}")
                );
            }
        }
        valid += usize::from(expected);
    }
    // Both outcomes must be well represented for the comparison to mean anything.
    assert!(valid > count / 10, "{field}: only {valid} of {count} valid");
    assert!(valid < count * 9 / 10, "{field}: {valid} of {count} valid");
    println!("{field}: {count} strings, {valid} valid");
    valid
}

fn roll(raw: RawJson<'_>) -> Result<(), String> {
    Roll::parse(raw).map(|_| ()).map_err(|e| e.to_string())
}

fn shapes(raw: RawJson<'_>) -> Result<(), String> {
    Shapes::parse(raw).map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn dice_notation() {
    agree(
        Roll::SCHEMA,
        roll,
        "notation",
        &["2d6+3", "d20", "4d8-1", " 10D12 - 4 ", "d6\n", "1d1+0"],
        &[
            'd', 'D', '0', '1', '2', '6', '+', '-', ' ', '\t', 'x', '\u{2003}',
        ],
        1,
    );
}

#[test]
fn alternation() {
    agree(
        Shapes::SCHEMA,
        shapes,
        "color",
        &["red", "green", "blue"],
        &['r', 'e', 'd', 'g', 'n', 'b', 'l', 'u', 'R', '|'],
        2,
    );
}

#[test]
fn classes_and_bounded_repetition() {
    agree(
        Shapes::SCHEMA,
        shapes,
        "code",
        &["AB-1", "XYZ-2024", "QQ-0000", "ABC-99"],
        &['A', 'B', 'Z', 'a', '-', '0', '1', '9', '٣', '_'],
        3,
    );
}

#[test]
fn prefix_without_dollar() {
    agree(
        Shapes::SCHEMA,
        shapes,
        "prefix",
        &["x-", "x-y", "x-\n", "x-😀"],
        &['x', 'X', '-', 'y', '\n'],
        4,
    );
}

#[test]
fn unicode_text() {
    agree(
        Shapes::SCHEMA,
        shapes,
        "unicode",
        &["éà", "😀 abc", "ÿÀ\u{3000}x_1", "😀😇\u{feff}"],
        &[
            'é', 'À', 'ÿ', '¿', '😀', '🙏', '🚀', ' ', '\u{3000}', '\u{85}', 'a', '_', 'ß',
        ],
        5,
    );
}

#[test]
fn unanchored_with_dot() {
    // Not `\r`, U+2028 or U+2029 after `c`: see `dot_excludes_every_line_terminator`.
    agree(
        Shapes::SCHEMA,
        shapes,
        "anywhere",
        &["b", "cxd", "abc", "c😀d"],
        &['a', 'b', 'c', 'd', 'x', '\n', '\u{85}'],
        6,
    );
}

#[test]
fn nested_bounded_repetition() {
    agree(
        Shapes::SCHEMA,
        shapes,
        "ipv4",
        &["192.168.0.1", "255.255.255.255", "0.0.0.0", "10.249.200.9"],
        &['1', '2', '5', '6', '9', '0', '.'],
        7,
    );
}

#[test]
fn owned_strings_with_a_length_bound() {
    agree(
        Shapes::SCHEMA,
        shapes,
        "email",
        &["a@b.cc", "x.y@example.org", "é@ü.de"],
        &['a', '@', '.', 'b', ' ', '_', '1'],
        8,
    );
}

/// ECMAScript's `.` matches no line terminator: `\n`, `\r`, U+2028 and U+2029. The judge
/// (the `jsonschema` crate, through Rust's `regex`) excludes only `\n`; the derive follows
/// ECMAScript, as JSON Schema says. This is the one known difference.
#[test]
fn dot_excludes_every_line_terminator() {
    let schema: Value = serde_json::from_str(Shapes::SCHEMA).unwrap();
    let judge = jsonschema::draft202012::new(&schema).unwrap();
    for (terminator, judge_accepts) in [
        ("\\n", false),
        ("\\r", true),
        ("\\u2028", true),
        ("\\u2029", true),
    ] {
        let text = format!(r#"{{"anywhere":"c{terminator}d"}}"#);
        let raw = parse(text.as_bytes(), Limits::default()).unwrap();
        assert_eq!(
            shapes(raw).unwrap_err(),
            "argument `anywhere`: must match the pattern b|c.d"
        );
        let instance: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(judge.is_valid(&instance), judge_accepts, "{text}");
    }
}

#[test]
fn schemas_carry_pattern_and_examples() {
    assert_eq!(
        Roll::SCHEMA,
        r#"{"type":"object","properties":{"notation":{"type":"string","description":"Dice notation, e.g. 2d6+3.","examples":["2d6+3","d20","4d8-1"],"pattern":"^\\s*[0-9]*[dD][0-9]+\\s*([+-]\\s*[0-9]+)?\\s*$"}},"required":["notation"],"additionalProperties":false}"#
    );
    let shapes: Value = serde_json::from_str(Shapes::SCHEMA).unwrap();
    assert_eq!(
        shapes["properties"]["color"],
        json!({"type":"string","description":"Alternation, anchored.","default":"red","pattern":"^(red|green|blue)$"})
    );
    assert_eq!(
        shapes["properties"]["email"],
        json!({"type":"string","description":"Negated classes and `$` without `^`, with a length bound too.","maxLength":16,"pattern":"[^\\s@]+@[^\\s@]+\\.\\w+$"})
    );
    assert_eq!(
        shapes["properties"]["unicode"]["pattern"],
        json!("^[À-ÿ\\u{1F600}-\\u{1F64F}]+\\s?\\w*$")
    );
    assert!(jsonschema::draft202012::meta::validator().is_valid(&shapes));
    // The examples satisfy the schema they annotate.
    let roll: Value = serde_json::from_str(Roll::SCHEMA).unwrap();
    let judge = jsonschema::draft202012::new(&roll).unwrap();
    for example in roll["properties"]["notation"]["examples"]
        .as_array()
        .unwrap()
    {
        assert!(judge.is_valid(&json!({ "notation": example })));
    }
}

#[test]
fn values_and_errors() {
    let text = r#"{"notation":"2\u0064\u0036 + 3"}"#;
    let raw = parse(text.as_bytes(), Limits::default()).unwrap();
    let r = Roll::parse(raw).unwrap();
    assert_eq!(r.notation.to_string(), "2d6 + 3");

    let raw = parse(br#"{"notation":"2d6+"}"#, Limits::default()).unwrap();
    assert_eq!(
        Roll::parse(raw).unwrap_err().to_string(),
        r"argument `notation`: must match the pattern ^\s*[0-9]*[dD][0-9]+\s*([+-]\s*[0-9]+)?\s*$"
    );

    // A missing member takes the default, which matched the pattern at compile time.
    let raw = parse(b"{}", Limits::default()).unwrap();
    let s = Shapes::parse(raw).unwrap();
    assert!(s.color.eq_str("red"));
    assert!(s.code.is_none() && s.email.is_none());

    let raw = parse(
        br#"{"email":"a@b.cc","ipv4":"10.0.0.256"}"#,
        Limits::default(),
    )
    .unwrap();
    assert_eq!(
        Shapes::parse(raw).unwrap_err().to_string(),
        r"argument `ipv4`: must match the pattern ^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$"
    );
    let raw = parse(
        br#"{"email":"a@b.cc","ipv4":"10.0.0.255"}"#,
        Limits::default(),
    )
    .unwrap();
    let s = Shapes::parse(raw).unwrap();
    assert_eq!(s.email.as_deref(), Some("a@b.cc"));
}

/// On output, `pattern` and `examples` only shape the schema (promises of the tool).
#[derive(mcp_rs_core::ToolOutput)]
pub struct Rolled<'a> {
    #[arg(pattern = r"^\d+d\d+$", examples = ["2d6"])]
    pub notation: &'a str,
    pub total: i64,
}

#[test]
fn output_schemas_carry_pattern_and_examples() {
    use mcp_rs_core::typed::ToolOutput;
    let schema: Value = serde_json::from_str(<Rolled<'_> as ToolOutput>::SCHEMA).unwrap();
    assert!(jsonschema::draft202012::meta::validator().is_valid(&schema));
    assert_eq!(
        schema["properties"]["notation"],
        json!({"type":"string","examples":["2d6"],"pattern":"^\\d+d\\d+$"})
    );
}
