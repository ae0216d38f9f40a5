//! `#[derive(ToolArgs)]`: generated schemas are valid JSON Schema 2020-12, and the generated
//! parser accepts exactly the instances the schema accepts (the `jsonschema` crate judges).
//!
//! Instances are generated from each schema by a small deterministic PRNG: valid ones built
//! from the schema's shape, and mutations of them (wrong types, out of range, missing
//! required members, unknown keys, wrong enum strings, integral floats like `2.0`, huge
//! numbers, strings around length limits). Duplicate keys cannot be judged (serde_json keeps
//! the last one), so they are checked separately: the parser always rejects them.
#![allow(missing_docs)]

use mcp_rs_core::typed::{ArgList, ToolArgs};
use mcp_rs_core::wire::json::{parse, JsonStr, Limits, RawJson};
use mcp_rs_core::ToolArgs;
use serde_json::{json, Map, Value};

/// A calculator operation.
#[derive(ToolArgs, Debug, Clone, Copy, PartialEq, Eq)]
#[arg(rename_all = "lowercase")]
pub enum Op {
    Add,
    Sub,
    #[arg(rename = "times")]
    Mul,
    Div,
}

/// Flat numbers and an enum.
#[derive(ToolArgs, Debug)]
pub struct Calc {
    /// The left operand.
    pub a: f64,
    /// The right
    /// operand.
    pub b: f64,
    /// What to do.
    pub op: Op,
}

/// Every integer width and `f32`.
#[derive(ToolArgs, Debug)]
pub struct Widths {
    pub a: i8,
    pub b: u8,
    pub c: i16,
    pub d: u16,
    pub e: i32,
    pub f: u32,
    pub g: i64,
    pub h: u64,
    pub x: f32,
}

/// Strings, lengths, defaults, a header parameter, options and a zero-copy list.
#[derive(ToolArgs, Debug)]
#[arg(rename_all = "camelCase")]
pub struct Search<'a> {
    /// What to look for.
    #[arg(min_length = 1, max_length = 12, title = "Query")]
    pub query_text: JsonStr<'a>,
    /// How many results.
    #[arg(minimum = 1, maximum = 100)]
    pub max_results: Option<u32>,
    /// Where to search ("eu" or "us").
    #[arg(header = "X-Region")]
    pub region: Option<JsonStr<'a>>,
    #[arg(default = 3, maximum = 5)]
    pub retries: u8,
    #[arg(default = false)]
    pub exact: bool,
    #[arg(max_length = 3)]
    pub tags: Option<ArgList<'a, JsonStr<'a>>>,
    #[arg(minimum = -1.5, maximum = 2.5, default = 0.5)]
    pub weight: f64,
}

/// A point.
#[derive(ToolArgs, Debug, PartialEq)]
pub struct Point {
    pub x: i32,
    #[arg(minimum = -10, maximum = 10)]
    pub y: i16,
}

/// Nested structs and arrays of them.
#[derive(ToolArgs, Debug)]
pub struct Move {
    pub from: Point,
    pub to: Option<Point>,
    #[arg(min_length = 1, max_length = 4)]
    pub path: Vec<Point>,
    pub speeds: Vec<u8>,
}

/// Log levels, named by serde attributes.
#[derive(ToolArgs, Debug, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Level {
    Debug,
    WarnOnly,
    #[serde(rename = "err")]
    Error,
}

/// serde-style names, owned strings, unknown keys allowed.
#[derive(ToolArgs, Debug)]
#[serde(rename_all = "kebab-case")]
#[arg(allow_unknown)]
pub struct Logging {
    pub min_level: Level,
    #[serde(rename = "msg")]
    #[arg(max_length = 5)]
    pub message: String,
    pub levels: Option<Vec<Level>>,
    pub r#type: Option<bool>,
}

/// An empty object.
#[derive(ToolArgs, Debug)]
pub struct Nothing {}

/// A tiny deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'v, T>(&mut self, items: &'v [T]) -> &'v T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const CHARS: &[&str] = &[
    "a", "Z", "é", "😀", "\"", "\\", "\n", "\u{1}", " ", "/", "中",
];

fn random_string(rng: &mut Rng, len: usize) -> String {
    (0..len).map(|_| *rng.pick(CHARS)).collect()
}

/// A value of a random JSON type (for wrong-type mutations).
fn wrong_value(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(rng.below(1000)),
        3 => json!(-2.5),
        4 => json!(random_string(rng, 3)),
        5 => json!([1, "x"]),
        _ => json!({"k": 1}),
    }
}

fn num(schema: &Value, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

/// A number near the bounds or inside them (integral when `integer`).
fn number(rng: &mut Rng, schema: &Value, integer: bool, mutate: u64) -> Value {
    let min = num(schema, "minimum");
    let max = num(schema, "maximum");
    let lo = min.unwrap_or(-1e6).max(-1e15);
    let hi = max.unwrap_or(1e6).min(1e15);
    let exact = |bound: &str| schema.get(bound).cloned().unwrap_or(json!(0));
    // Out-of-range picks (2..=5, 7) only when mutating.
    let choice = if rng.chance(mutate * 2) {
        *rng.pick(&[2, 3, 4, 5, 7])
    } else {
        *rng.pick(&[0, 1, 6, 8, 9, 10, 11])
    };
    match choice {
        0 => exact("minimum"),
        1 => exact("maximum"),
        2 => json!(min.unwrap_or(0.0) - 1.0),
        3 => json!(max.unwrap_or(0.0) + 1.0),
        4 => json!(1e30),
        5 => json!(-1e30),
        6 => json!(((lo + hi) / 2.0).trunc()), // an integral float: `2.0`
        7 if integer => json!(lo.trunc() + 0.5),
        8 if integer => {
            let x = schema.get("maximum").and_then(Value::as_u64);
            match x {
                Some(m) if m > 1 << 53 => json!(m - rng.below(3)),
                _ => json!(hi.trunc() as i64),
            }
        }
        8 => json!(hi),
        _ => {
            let x = lo + (hi - lo) * (rng.below(10_001) as f64 / 10_000.0);
            if integer {
                if x >= 0.0 {
                    json!(x.trunc() as u64)
                } else {
                    json!(x.trunc() as i64)
                }
            } else {
                json!(x)
            }
        }
    }
}

/// An instance generated from `schema`; each node is mutated with probability `mutate`%.
fn generate(rng: &mut Rng, schema: &Value, mutate: u64) -> Value {
    if rng.chance(mutate) {
        return wrong_value(rng);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if rng.chance(mutate) {
            let v = rng.pick(values).as_str().unwrap_or("");
            return json!(match rng.below(3) {
                0 => v.to_uppercase(),
                1 => format!("{v} "),
                _ => "other".to_owned(),
            });
        }
        return rng.pick(values).clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => json!(rng.chance(50)),
        Some("integer") => number(rng, schema, true, mutate),
        Some("number") => number(rng, schema, false, mutate),
        Some("string") => {
            let min = num(schema, "minLength").unwrap_or(0.0) as usize;
            let max = num(schema, "maxLength").unwrap_or(8.0) as usize;
            let len = match rng.below(4) {
                0 => min,
                1 => max,
                2 if rng.chance(mutate * 2) => max + 1,
                _ => min + rng.below((max - min + 1) as u64) as usize,
            };
            json!(random_string(rng, len))
        }
        Some("array") => {
            let min = num(schema, "minItems").unwrap_or(0.0) as usize;
            let max = num(schema, "maxItems").unwrap_or(4.0) as usize;
            let len = match rng.below(4) {
                0 => min,
                1 => max,
                2 if rng.chance(mutate * 2) => max + 1,
                _ => min + rng.below((max - min + 1) as u64) as usize,
            };
            let items = &schema["items"];
            Value::Array((0..len).map(|_| generate(rng, items, mutate)).collect())
        }
        Some("object") => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (key, sub) in props {
                    let required = required.contains(&key.as_str());
                    let include = if required {
                        !rng.chance(mutate / 2)
                    } else {
                        rng.chance(60)
                    };
                    if include {
                        out.insert(key.clone(), generate(rng, sub, mutate));
                    }
                }
            }
            if rng.chance(mutate) {
                out.insert("unknownKey".to_owned(), json!(1));
            }
            Value::Object(out)
        }
        _ => wrong_value(rng),
    }
}

/// Asserts the parser and the judge agree on generated instances; returns
/// `(instances, valid ones)`.
fn agree(
    schema_text: &str,
    parse_args: impl Fn(RawJson<'_>) -> Result<(), String>,
    seed: u64,
    count: usize,
) -> (usize, usize) {
    let schema: Value = serde_json::from_str(schema_text).expect("the schema is JSON");
    jsonschema::draft202012::meta::validator()
        .validate(&schema)
        .unwrap_or_else(|e| panic!("{schema_text} is not a valid 2020-12 schema: {e}"));
    let judge = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    let mut rng = Rng(seed);
    let mut valid = 0;
    for i in 0..count {
        // A third of the instances are built unmutated (valid unless a bound is hit).
        let mutate = match i % 3 {
            0 => 0,
            1 => 5,
            _ => 20,
        };
        let instance = generate(&mut rng, &schema, mutate);
        let text = serde_json::to_string(&instance).unwrap();
        let raw = parse(text.as_bytes(), Limits::default()).expect("serde_json writes JSON");
        let parsed = parse_args(raw);
        let expected = judge.is_valid(&instance);
        assert_eq!(
            parsed.is_ok(),
            expected,
            "instance {text}: parser said {:?}, the judge said {expected}",
            parsed.err()
        );
        valid += usize::from(expected);

        // The same instance with a duplicated member: always rejected by the parser.
        if let Value::Object(map) = &instance {
            if let Some((key, value)) = map.iter().next() {
                let dup = format!(
                    "{{{}:{},{}",
                    serde_json::to_string(key).unwrap(),
                    value,
                    &text[1..]
                );
                let raw = parse(dup.as_bytes(), Limits::default()).unwrap();
                assert!(parse_args(raw).is_err(), "duplicate accepted: {dup}");
            }
        }
    }
    // Both outcomes must be well represented for the comparison to mean anything.
    assert!(valid > count / 10, "only {valid} of {count} valid");
    assert!(valid < count * 9 / 10, "{valid} of {count} valid");
    (count, valid)
}

const N: usize = 3000;

#[test]
fn calc_parser_matches_schema() {
    let (n, valid) = agree(
        Calc::SCHEMA,
        |raw| Calc::parse(raw).map(|_| ()).map_err(|e| e.to_string()),
        1,
        N,
    );
    println!("Calc: {n} instances, {valid} valid");
}

#[test]
fn widths_parser_matches_schema() {
    let (n, valid) = agree(
        Widths::SCHEMA,
        |raw| Widths::parse(raw).map(|_| ()).map_err(|e| e.to_string()),
        2,
        N,
    );
    println!("Widths: {n} instances, {valid} valid");
}

#[test]
fn search_parser_matches_schema() {
    let (n, valid) = agree(
        Search::SCHEMA,
        |raw| Search::parse(raw).map(|_| ()).map_err(|e| e.to_string()),
        3,
        N,
    );
    println!("Search: {n} instances, {valid} valid");
}

#[test]
fn move_parser_matches_schema() {
    let (n, valid) = agree(
        Move::SCHEMA,
        |raw| Move::parse(raw).map(|_| ()).map_err(|e| e.to_string()),
        4,
        N,
    );
    println!("Move: {n} instances, {valid} valid");
}

#[test]
fn logging_parser_matches_schema() {
    let (n, valid) = agree(
        Logging::SCHEMA,
        |raw| Logging::parse(raw).map(|_| ()).map_err(|e| e.to_string()),
        5,
        N,
    );
    println!("Logging: {n} instances, {valid} valid");
}

#[test]
fn empty_struct_parser_matches_schema() {
    let schema: Value = serde_json::from_str(Nothing::SCHEMA).unwrap();
    assert!(jsonschema::draft202012::meta::validator().is_valid(&schema));
    let judge = jsonschema::draft202012::new(&schema).unwrap();
    for text in ["{}", "{\"a\":1}", "[]", "null", "3"] {
        let instance: Value = serde_json::from_str(text).unwrap();
        let raw = parse(text.as_bytes(), Limits::default()).unwrap();
        assert_eq!(
            Nothing::parse(raw).is_ok(),
            judge.is_valid(&instance),
            "{text}"
        );
    }
}

#[test]
fn schemas_read_as_designed() {
    assert_eq!(
        Calc::SCHEMA,
        r#"{"type":"object","properties":{"a":{"type":"number","description":"The left operand."},"b":{"type":"number","description":"The right operand."},"op":{"type":"string","enum":["add","sub","times","div"],"description":"What to do."}},"required":["a","b","op"],"additionalProperties":false}"#
    );
    let search: Value = serde_json::from_str(Search::SCHEMA).unwrap();
    assert_eq!(
        search["properties"]["queryText"],
        json!({"type":"string","title":"Query","description":"What to look for.","minLength":1,"maxLength":12})
    );
    assert_eq!(
        search["properties"]["maxResults"],
        json!({"type":"integer","description":"How many results.","minimum":1,"maximum":100})
    );
    assert_eq!(
        search["properties"]["region"]["x-mcp-header"],
        json!("X-Region")
    );
    assert_eq!(
        search["properties"]["retries"],
        json!({"type":"integer","minimum":0,"maximum":5,"default":3})
    );
    assert_eq!(
        search["properties"]["tags"],
        json!({"type":"array","items":{"type":"string"},"maxItems":3})
    );
    assert_eq!(search["required"], json!(["queryText"]));
    let widths: Value = serde_json::from_str(Widths::SCHEMA).unwrap();
    assert_eq!(
        widths["properties"]["h"],
        json!({"type":"integer","minimum":0,"maximum":18446744073709551615u64})
    );
    let logging: Value = serde_json::from_str(Logging::SCHEMA).unwrap();
    assert_eq!(
        logging["properties"]["min-level"]["enum"],
        json!(["DEBUG", "WARN_ONLY", "err"])
    );
    assert!(logging["properties"]["type"].is_object());
    assert!(logging.get("additionalProperties").is_none());
    let mv: Value = serde_json::from_str(Move::SCHEMA).unwrap();
    assert_eq!(
        mv["properties"]["path"]["items"]["properties"]["y"]["minimum"],
        json!(-10)
    );
    assert_eq!(mv["properties"]["path"]["minItems"], json!(1));
}

fn parse_str<'i, T: ToolArgs<'i>>(text: &'i str) -> Result<T, String> {
    let raw = parse(text.as_bytes(), Limits::default()).unwrap();
    T::parse(raw).map_err(|e| e.to_string())
}

#[test]
fn values_parse_borrowing_with_defaults() {
    let s: Search<'_> =
        parse_str(r#"{"queryText":"caf\u00e9","tags":["a","b\n"],"region":"eu"}"#).unwrap();
    assert!(s.query_text.eq_str("café"));
    assert_eq!(s.retries, 3);
    assert!(!s.exact);
    assert_eq!(s.weight, 0.5);
    assert_eq!(s.max_results, None);
    let tags: Vec<String> = s.tags.unwrap().iter().map(|t| t.to_string()).collect();
    assert_eq!(tags, ["a", "b\n"]);

    let w: Widths = parse_str(
        r#"{"a":-128,"b":2.0,"c":1e3,"d":65535,"e":-5,"f":7,"g":-9223372036854775808,"h":18446744073709551615,"x":1.5}"#,
    )
    .unwrap();
    assert_eq!(
        (w.a, w.b, w.c, w.g, w.h, w.x),
        (-128, 2, 1000, i64::MIN, u64::MAX, 1.5)
    );

    let m: Move =
        parse_str(r#"{"from":{"x":1,"y":2},"path":[{"x":0,"y":0}],"speeds":[]}"#).unwrap();
    assert_eq!(m.from, Point { x: 1, y: 2 });
    assert_eq!(m.path.len(), 1);

    let l: Logging = parse_str(r#"{"min-level":"WARN_ONLY","msg":"hi","extra":[1]}"#).unwrap();
    assert_eq!(l.min_level, Level::WarnOnly);
    assert_eq!(l.message, "hi");
}

#[test]
fn errors_name_the_field() {
    let cases: &[(&str, Result<(), &str>)] = &[
        (r#"{"a":1,"b":2}"#, Err("argument `op`: is required")),
        (
            r#"{"a":1,"b":2,"op":"mod"}"#,
            Err(r#"argument `op`: must be one of "add", "sub", "times", "div""#),
        ),
        (
            r#"{"a":"1","b":2,"op":"add"}"#,
            Err("argument `a`: must be a number"),
        ),
        (
            r#"{"a":1,"b":2,"op":"add","c":3}"#,
            Err(r#"arguments: unknown member "c""#),
        ),
        (
            r#"{"a":1,"a":2,"b":2,"op":"add"}"#,
            Err("argument `a`: appears twice"),
        ),
        ("[1]", Err("arguments: must be an object")),
        (r#"{"a":1,"b":2,"op":"times"}"#, Ok(())),
    ];
    for (text, expected) in cases {
        let got = parse_str::<Calc>(text).map(|_| ());
        assert_eq!(got, expected.map_err(str::to_owned), "{text}");
    }
    let e = parse_str::<Move>(
        r#"{"from":{"x":1,"y":2},"path":[{"x":0,"y":0},{"x":0,"y":11}],"speeds":[]}"#,
    )
    .unwrap_err();
    assert_eq!(e, "argument `path[1].y`: must be at most 10");
    let e = parse_str::<Move>(r#"{"from":{"x":1,"y":2},"path":[],"speeds":[]}"#).unwrap_err();
    assert_eq!(
        e,
        "argument `path`: must have at least 1 characters or items"
    );
    let e = parse_str::<Move>(r#"{"from":{"x":1.5,"y":2},"path":[],"speeds":[]}"#).unwrap_err();
    assert_eq!(e, "argument `from.x`: must be a whole number in range");
    let e = parse_str::<Move>(r#"{"from":{"x":1,"y":2},"path":[{"x":0,"y":0}],"speeds":[256]}"#)
        .unwrap_err();
    assert_eq!(e, "argument `speeds[0]`: must be at most 255");
    let e = parse_str::<Search<'_>>(r#"{"queryText":""}"#).unwrap_err();
    assert_eq!(
        e,
        "argument `queryText`: must have at least 1 characters or items"
    );
    let e = parse_str::<Search<'_>>(r#"{"queryText":"x","tags":[1]}"#).unwrap_err();
    assert_eq!(e, "argument `tags[0]`: must be a string");
}
