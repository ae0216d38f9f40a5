//! `#[derive(ToolOutput)]`: the schema is valid JSON Schema 2020-12 and what `write` produces
//! validates against it.
#![allow(missing_docs)]

use mcp_rs_core::typed::ToolOutput;
use mcp_rs_core::wire::json::{JsonStr, JsonWriter};
use mcp_rs_core::{ToolArgs, ToolOutput};
use serde_json::{json, Value};

/// How a computation ended.
#[derive(ToolOutput, ToolArgs, Debug, Clone, Copy)]
#[arg(rename_all = "snake_case")]
pub enum Status {
    Done,
    TimedOut,
}

/// A point.
#[derive(ToolOutput)]
pub struct Point {
    pub x: i32,
    pub y: f32,
}

/// The result of a calculation.
#[derive(ToolOutput)]
#[arg(rename_all = "camelCase")]
pub struct Report<'a> {
    /// The value computed.
    pub value: f64,
    /// Steps taken.
    pub step_count: u32,
    pub status: Status,
    pub label: &'a str,
    pub echo: JsonStr<'a>,
    pub note: Option<String>,
    pub points: Vec<Point>,
    pub corners: [Point; 2],
    pub flags: &'a [bool],
    pub origin: Option<Point>,
}

fn render(out: &impl ToolOutput) -> Value {
    let mut buf = [0u8; 1024];
    let mut w = JsonWriter::new(&mut buf);
    out.write(&mut w);
    let n = w.finish().expect("fits");
    serde_json::from_slice(&buf[..n]).expect("the writer writes JSON")
}

#[test]
fn output_validates_against_its_schema() {
    let schema: Value = serde_json::from_str(Report::SCHEMA).unwrap();
    jsonschema::draft202012::meta::validator()
        .validate(&schema)
        .unwrap_or_else(|e| panic!("{}: {e}", Report::SCHEMA));
    let judge = jsonschema::draft202012::new(&schema).unwrap();
    let echo_src = mcp_rs_core::wire::json::parse(br#""a\"b""#, Default::default()).unwrap();
    let echo = echo_src.as_string().unwrap();
    let flags = [true, false];
    let mut count = 0;
    for i in 0..200u32 {
        let report = Report {
            value: f64::from(i) * 0.37 - 20.0,
            step_count: i * 1_000_003,
            status: if i % 2 == 0 {
                Status::Done
            } else {
                Status::TimedOut
            },
            label: ["", "x\n\"y\"", "é😀"][i as usize % 3],
            echo,
            note: (i % 3 == 0).then(|| format!("note {i}")),
            points: (0..i % 4)
                .map(|k| Point {
                    x: -(k as i32),
                    y: k as f32 * 1.5,
                })
                .collect(),
            corners: [Point { x: 0, y: 0.0 }, Point { x: 1, y: f32::MAX }],
            flags: &flags[..(i % 3) as usize],
            origin: (i % 5 == 0).then_some(Point { x: 3, y: -0.25 }),
        };
        let value = render(&report);
        assert!(
            judge.is_valid(&value),
            "{value} does not match {}",
            Report::SCHEMA
        );
        count += 1;
    }
    assert_eq!(count, 200);
    let sample = render(&Report {
        value: 1.5,
        step_count: 2,
        status: Status::TimedOut,
        label: "l",
        echo,
        note: None,
        points: vec![],
        corners: [Point { x: 0, y: 0.0 }, Point { x: 1, y: 2.0 }],
        flags: &[],
        origin: None,
    });
    assert_eq!(
        sample,
        json!({"value":1.5,"stepCount":2,"status":"timed_out","label":"l","echo":"a\"b",
               "points":[],"corners":[{"x":0,"y":0.0},{"x":1,"y":2.0}],"flags":[]})
    );
    assert_eq!(
        schema["required"],
        json!([
            "value",
            "stepCount",
            "status",
            "label",
            "echo",
            "points",
            "corners",
            "flags"
        ])
    );
    assert_eq!(
        schema["properties"]["value"]["description"],
        json!("The value computed.")
    );
    assert_eq!(schema["additionalProperties"], json!(false));
}
