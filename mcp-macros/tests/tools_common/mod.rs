//! Hand-written `ToolArgs` / `ToolOutput` types (the derives are tested elsewhere) and a
//! small driver around a real `mcp_rs_core::Session`.
#![allow(dead_code, clippy::result_large_err)] // ArgError is kept inline (no allocation)

use mcp_rs_core::typed::{ArgError, PathSegment, Problem, ToolArgs, ToolOutput};
use mcp_rs_core::wire::json::{JsonStr, JsonWriter, RawJson};
use mcp_rs_core::{Config, ServerInfo, Session, SessionStorage, ToolSet};
use serde_json::Value;

/// Reads a required number member.
fn number<'i>(args: RawJson<'i>, key: &'static str) -> Result<f64, ArgError<'i>> {
    let value = args
        .get(key)
        .ok_or(ArgError::new(Problem::Missing).within(PathSegment::Key(key)))?;
    value
        .as_f64()
        .ok_or(ArgError::new(Problem::Type("a number")).within(PathSegment::Key(key)))
}

/// Refuses members other than `known`.
fn only<'i>(args: RawJson<'i>, known: &[&str]) -> Result<(), ArgError<'i>> {
    let members = args.members().ok_or(ArgError::new(Problem::NotAnObject))?;
    for (k, _) in members {
        if !known.iter().any(|n| k.eq_str(n)) {
            return Err(ArgError::new(Problem::Unknown(k)));
        }
    }
    Ok(())
}

/// `{a: number, b: number}`.
pub(crate) struct Pair {
    pub a: f64,
    pub b: f64,
}

impl<'i> ToolArgs<'i> for Pair {
    const SCHEMA: &'static str = concat!(
        r#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"#,
        r#""required":["a","b"],"additionalProperties":false}"#
    );
    fn parse(args: RawJson<'i>) -> Result<Self, ArgError<'i>> {
        only(args, &["a", "b"])?;
        Ok(Pair {
            a: number(args, "a")?,
            b: number(args, "b")?,
        })
    }
}

/// `{text: string}`, borrowed from the request.
pub(crate) struct Text<'i> {
    pub text: JsonStr<'i>,
}

impl<'i> ToolArgs<'i> for Text<'i> {
    const SCHEMA: &'static str = concat!(
        r#"{"type":"object","properties":{"text":{"type":"string"}},"#,
        r#""required":["text"],"additionalProperties":false}"#
    );
    fn parse(args: RawJson<'i>) -> Result<Self, ArgError<'i>> {
        only(args, &["text"])?;
        let text = args
            .get("text")
            .ok_or(ArgError::new(Problem::Missing).within(PathSegment::Key("text")))?
            .as_string()
            .ok_or(ArgError::new(Problem::Type("a string")).within(PathSegment::Key("text")))?;
        Ok(Text { text })
    }
}

/// `{value: number}`.
#[derive(Debug, PartialEq)]
pub(crate) struct Number {
    pub value: f64,
}

impl ToolOutput for Number {
    const SCHEMA: &'static str = concat!(
        r#"{"type":"object","properties":{"value":{"type":"number"}},"#,
        r#""required":["value"],"additionalProperties":false}"#
    );
    fn write(&self, w: &mut JsonWriter<'_>) {
        w.begin_object();
        w.key("value");
        w.f64(self.value);
        w.end_object();
    }
}

/// `{text: string, length: integer}` with a borrowed string.
pub(crate) struct Echoed<'a> {
    pub text: &'a str,
}

impl ToolOutput for Echoed<'_> {
    const SCHEMA: &'static str = concat!(
        r#"{"type":"object","properties":{"text":{"type":"string"},"length":{"type":"integer"}},"#,
        r#""required":["text","length"],"additionalProperties":false}"#
    );
    fn write(&self, w: &mut JsonWriter<'_>) {
        w.begin_object();
        w.key("text");
        w.string(self.text);
        w.key("length");
        w.u64(self.text.chars().count() as u64);
        w.end_object();
    }
}

/// Feeds `lines` to a fresh session serving `tools` (no `initialize` added) and returns every
/// message the server sent, parsed. Deferred calls are failed loudly (the tests' tools are
/// synchronous unless they say otherwise).
pub(crate) fn run<T: ToolSet + ?Sized>(tools: &mut T, lines: &[&str]) -> Vec<Value> {
    let info = ServerInfo {
        name: "tools-test",
        version: "1.0.0",
        ..Default::default()
    };
    let mut storage = SessionStorage::<4>::new();
    let mut session = Session::new(
        &info,
        Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        &mut storage,
    );
    let mut out = vec![0u8; 64 * 1024];
    let mut sent = Vec::new();
    let parse = |bytes: &[u8]| -> Value { serde_json::from_slice(bytes).expect("server JSON") };
    for line in lines {
        let mut incoming = session
            .handle_message(tools, line.as_bytes(), &mut out)
            .expect("handled");
        if let Some(tx) = incoming.transmit() {
            sent.push(parse(&out[..tx.len]));
        }
        while let Some(call) = incoming.next_call(&mut session) {
            let tx = session
                .complete(call.token(), &mut out, |r| {
                    r.fail(format_args!("deferred"));
                })
                .expect("completed")
                .expect("not cancelled");
            sent.push(parse(&out[..tx.len]));
        }
        while let Some(tx) = session.poll_transmit(&mut out).expect("polled") {
            sent.push(parse(&out[..tx.len]));
        }
        while session.poll_event().is_some() {}
    }
    sent
}

/// The `initialize` request and `initialized` notification for `version`.
pub(crate) fn handshake(version: &str) -> [String; 2] {
    [
        format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
    ]
}

/// Runs `handshake(version)` then `requests` (one JSON-RPC request each, ids from 1) and
/// returns the responses to `requests`, in order.
pub(crate) fn session<T: ToolSet + ?Sized>(
    tools: &mut T,
    version: &str,
    requests: &[Value],
) -> Vec<Value> {
    let [init, initialized] = handshake(version);
    let mut lines = vec![init, initialized];
    for (i, r) in requests.iter().enumerate() {
        let mut r = r.clone();
        r["jsonrpc"] = "2.0".into();
        r["id"] = (i + 1).into();
        lines.push(r.to_string());
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let sent = run(tools, &refs);
    let mut replies = Vec::new();
    for i in 1..=requests.len() {
        let reply = sent
            .iter()
            .find(|m| m["id"] == i)
            .unwrap_or_else(|| panic!("no reply to request {i}: {sent:#?}"));
        replies.push(reply.clone());
    }
    replies
}

/// A `tools/call` request.
pub(crate) fn call(name: &str, arguments: Value) -> Value {
    serde_json::json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

/// The text of every text block of a `CallToolResult`.
pub(crate) fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter(|c| c["type"] == "text")
        .map(|c| c["text"].as_str().expect("text").to_owned())
        .collect()
}
