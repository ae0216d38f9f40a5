//! Throughput of `mcp_rs_core::wire::json::parse` (validation only, and validation plus a full walk of
//! the borrowed views) against `serde_json::from_slice::<serde_json::Value>` on the same
//! realistic MCP messages.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcp_rs_core::wire::json::{parse, Kind, Limits, RawJson};

/// A small `tools/call` request.
fn tools_call() -> String {
    r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Berlin","units":"metric","days":3},"_meta":{"progressToken":"p-42"}}}"#
        .to_string()
}

/// A client's `initialize` request.
fn initialize() -> String {
    r#"{
  "jsonrpc": "2.0",
  "id": 0,
  "method": "initialize",
  "params": {
    "protocolVersion": "2025-06-18",
    "capabilities": {
      "roots": { "listChanged": true },
      "sampling": {},
      "elicitation": {},
      "experimental": { "streaming": { "enabled": false, "chunkSize": 4096 } }
    },
    "clientInfo": {
      "name": "ExampleClient",
      "title": "Example Client Display Name",
      "version": "1.0.0"
    }
  }
}"#
    .to_string()
}

/// A `tools/list` result with 50 tools, each with a JSON schema.
fn tools_list() -> String {
    let mut s = String::from(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":["#);
    for i in 0..50 {
        if i > 0 {
            s.push(',');
        }
        write!(
            s,
            r#"{{"name":"tool_{i}","title":"Tool number {i}","description":"Performs operation {i} on the selected resource. Returns a \"summary\" and the raw data.\nUse with care.","inputSchema":{{"type":"object","properties":{{"path":{{"type":"string","description":"Absolute path of the resource"}},"limit":{{"type":"integer","minimum":1,"maximum":1000,"default":100}},"mode":{{"type":"string","enum":["fast","accurate","balanced"]}},"tags":{{"type":"array","items":{{"type":"string"}},"maxItems":16}},"threshold":{{"type":"number","minimum":0.0,"maximum":1.5e2}},"options":{{"type":"object","properties":{{"recursive":{{"type":"boolean"}},"depth":{{"type":"integer"}}}},"additionalProperties":false}}}},"required":["path","mode"],"additionalProperties":false}},"annotations":{{"readOnlyHint":{},"idempotentHint":true,"openWorldHint":false}}}}"#,
            i % 2 == 0
        )
        .unwrap();
    }
    s.push_str(r#"],"nextCursor":"eyJvZmZzZXQiOjUwfQ"}}"#);
    s
}

/// A `tools/call` request with a long argument full of escapes (a source file).
fn long_escaped() -> String {
    let line = r#"    if (x < 10) {\n\t\tprintf(\"value: %d \\n\", x); // caf\u00e9 \ud83d\ude00\n    }\n"#;
    format!(
        r#"{{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{{"name":"write_file","arguments":{{"path":"/src/main.c","content":"{}"}}}}}}"#,
        line.repeat(200)
    )
}

/// Visits every value, decoding strings and keys and converting numbers (test-only
/// recursion: the views themselves never recurse).
fn walk(v: RawJson<'_>) -> usize {
    match v.kind() {
        Kind::Object => v
            .members()
            .into_iter()
            .flatten()
            .map(|(k, v)| k.decoded_len() + walk(v))
            .sum(),
        Kind::Array => v.elements().into_iter().flatten().map(walk).sum(),
        Kind::String => v.as_string().map_or(0, |s| s.decoded_len()),
        Kind::Number => match v.as_i64() {
            Some(i) => i as usize & 1,
            None => v.as_f64().map_or(0, |f| f.to_bits() as usize & 1),
        },
        Kind::Bool | Kind::Null => 1,
    }
}

fn bench(c: &mut Criterion) {
    let limits = Limits::default();
    let messages = [
        ("tools_call_small", tools_call()),
        ("initialize", initialize()),
        ("tools_list_50", tools_list()),
        ("long_escaped_string", long_escaped()),
    ];
    for (name, text) in &messages {
        let input = text.as_bytes();
        assert!(parse(input, limits).is_ok(), "{name} must be valid");
        assert!(serde_json::from_slice::<serde_json::Value>(input).is_ok());
        let mut group = c.benchmark_group(format!("{name} ({} B)", input.len()));
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function("mcp_rs_core::parse", |b| {
            b.iter(|| parse(black_box(input), limits).map(|v| v.as_str().len()))
        });
        group.bench_function("mcp_rs_core::parse+walk", |b| {
            b.iter(|| parse(black_box(input), limits).map(walk))
        });
        group.bench_function("serde_json::Value", |b| {
            b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(input)).is_ok())
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    targets = bench
}
criterion_main!(benches);
