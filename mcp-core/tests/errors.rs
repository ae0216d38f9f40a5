//! Malformed input and JSON-RPC envelope errors: each gets its spec-correct reply (or
//! documented silence for notifications), and the next valid request is served.

mod pair;

use mcp_rs_core::wire::framing::{Frame, LineFramer};
use mcp_rs_core::Config;
use pair::*;
use serde_json::{json, Value};

const PING: &str = r#"{"jsonrpc":"2.0","id":"next","method":"ping"}"#;

/// Sends `bad`, expects one error with `code` (and `id`), then checks the session still works.
fn expect_error(p: &mut Pair, bad: &[u8], code: i64, id: Option<Value>) -> Value {
    let frames = p.send_bytes(bad);
    assert_eq!(
        frames.len(),
        1,
        "expected one reply to {:?}",
        String::from_utf8_lossy(bad)
    );
    let r = frames[0].value.clone();
    assert_eq!(error_code(&r), code, "{r}");
    assert_eq!(r.get("id").cloned(), id, "{r}");
    assert_eq!(p.ask(PING)["id"], "next");
    r
}

#[test]
fn parse_errors_have_no_id() {
    let mut p = Pair::initialized("2025-11-25");
    let cases: &[&[u8]] = &[
        b"{",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}",
        b"[1,]",
        b"{\"a\":01}",
        b"\"\\ud800\"",
        b"\"\x01\"",
        b"\xff\xfe",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xc3\"}",
        b"nul",
        b"{} {}",
        b"'single'",
        b"NaN",
    ];
    for bad in cases {
        let r = expect_error(&mut p, bad, -32700, None);
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error"));
        assert!(r["error"]["data"]["reason"].is_string());
    }
}

#[test]
fn nesting_is_bounded() {
    let mut p = Pair::initialized("2025-11-25");
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    expect_error(&mut p, deep.as_bytes(), -32700, None);
    let open_only = "[".repeat(100_000);
    expect_error(&mut p, open_only.as_bytes(), -32700, None);
    // Arguments nested within the limit are fine; beyond it, the message is rejected.
    let ok_args = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"a":{}1{}}}}}}}"#,
        "[".repeat(20),
        "]".repeat(20)
    );
    assert!(p.ask(&ok_args)["result"].is_object());
    let mut shallow = Pair::with(
        Config {
            max_depth: 4,
            ..Config::new(mcp_rs_core::SecretKey([0x5a; 16]))
        },
        0,
        65536,
    );
    shallow.send(&initialize(0, "2025-11-25"));
    let too_deep = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":[[1]]}}}"#;
    expect_error(&mut shallow, too_deep.as_bytes(), -32700, None);
}

#[test]
fn invalid_requests() {
    let mut p = Pair::initialized("2025-11-25");
    let cases: &[(&str, Option<Value>)] = &[
        (
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            Some(json!(1)),
        ),
        (r#"{"id":2,"method":"ping"}"#, Some(json!(2))),
        (r#"{"jsonrpc":2.0,"id":3,"method":"ping"}"#, Some(json!(3))),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, None),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, None),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, None),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, None),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, None),
        (r#"{"jsonrpc":"2.0","id":4,"method":5}"#, Some(json!(4))),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}"#,
            Some(json!(5)),
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"id":7,"method":"ping"}"#,
            Some(json!(7)),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"ping","result":{}}"#,
            Some(json!(8)),
        ),
        (r#"{"jsonrpc":"2.0"}"#, None),
        (r#"[]"#, None),
        (r#"42"#, None),
        (r#""ping""#, None),
        (r#"null"#, None),
    ];
    for (bad, id) in cases {
        expect_error(&mut p, bad.as_bytes(), -32600, id.clone());
    }
}

#[test]
fn huge_numbers_and_duplicate_keys() {
    let mut p = Pair::initialized("2025-11-25");
    // A 10,000-digit number is valid JSON but not an integer id we can echo as a number of
    // the schema's range: it is still an integer, so it is echoed verbatim.
    let digits = "9".repeat(10_000);
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"n":{digits}}}}}}}"#
    );
    let r = p.send_bytes(msg.as_bytes());
    assert!(r[0].value["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains(&digits));
    // Duplicate keys inside params: the first one wins (documented), not an error.
    let r = p.ask(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","name":"nope"}}"#,
    );
    assert!(r["result"].is_object(), "{r}");
}

#[test]
fn notifications_are_never_answered() {
    let mut p = Pair::initialized("2025-11-25");
    for n in [
        r#"{"jsonrpc":"2.0","method":"notifications/unknown"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":"bad"}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"x"}}"#,
    ] {
        assert!(p.send(n).is_empty(), "answered {n}");
    }
    assert_eq!(p.ask(PING)["id"], "next");
}

#[test]
fn huge_ids_still_get_a_reply() {
    let mut p = Pair::with(Config::new(mcp_rs_core::SecretKey([0x5a; 16])), 0, 512);
    p.send(&initialize(0, "2025-11-25"));
    let id = "i".repeat(5000);
    let msg = format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping"}}"#);
    let frames = p.send_bytes(msg.as_bytes());
    assert_eq!(frames.len(), 1);
    assert!(frames[0].value.get("error").is_some());
    // A deferred call with an id longer than the slot can hold is refused with an error.
    let mut p = Pair::initialized("2025-11-25");
    let id = "j".repeat(100);
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"slow"}}}}"#
    );
    let r = p.ask(&msg);
    assert_eq!(error_code(&r), -32600);
    assert_eq!(r["id"], id);
}

#[test]
fn output_buffer_minimum() {
    let mut p = Pair::new();
    let mut small = [0u8; 64];
    let err = p
        .session
        .handle_message(&mut p.tools, PING.as_bytes(), &mut small)
        .unwrap_err();
    assert_eq!(
        err,
        mcp_rs_core::HandleError::OutputTooSmall {
            required: mcp_rs_core::MIN_OUTPUT
        }
    );
}

#[test]
fn oversized_frames_are_answered_once() {
    let mut p = Pair::initialized("2025-11-25");
    let mut buf = [0u8; 128];
    let mut framer = LineFramer::new(&mut buf);
    let mut input = Vec::new();
    input.extend_from_slice(&vec![b'x'; 100_000]);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(PING.as_bytes());
    input.extend_from_slice(b"\r\n\n");
    let mut replies = Vec::new();
    let mut rest = &input[..];
    while !rest.is_empty() {
        let n = framer.push(rest);
        rest = &rest[n..];
        while let Some(frame) = framer.next_frame() {
            match frame {
                Frame::Line(line) => {
                    let line = line.to_vec();
                    replies.extend(p.send_bytes(&line).into_iter().map(|f| f.value));
                }
                Frame::Oversized { .. } => {
                    let tx = p.session.handle_oversized(128, &mut p.out).unwrap();
                    let v: Value = serde_json::from_slice(&p.out[..tx.len]).unwrap();
                    replies.push(v);
                }
            }
        }
    }
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert_eq!(error_code(&replies[0]), -32600);
    assert_eq!(replies[0]["error"]["data"]["limit"], 128);
    assert!(replies[0].get("id").is_none());
    assert_eq!(replies[1]["id"], "next");
}

#[test]
fn batches_only_on_2025_03_26() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"k":1}}},{"jsonrpc":"2.0","id":3,"method":"nope"},7]"#;
    let mut p = Pair::initialized("2025-03-26");
    let r = p.ask(batch);
    let items = r.as_array().expect("batch reply is an array");
    assert_eq!(items.len(), 4, "{r}");
    assert_eq!(items[0], json!({"jsonrpc":"2.0","id":1,"result":{}}));
    assert_eq!(items[1]["result"]["content"][0]["text"], "{\"k\":1}");
    assert_eq!(error_code(&items[2]), -32601);
    assert_eq!(error_code(&items[3]), -32600);
    // Only notifications: no reply at all.
    assert!(p.send(r#"[{"jsonrpc":"2.0","method":"notifications/a"},{"jsonrpc":"2.0","method":"notifications/b"}]"#).is_empty());
    // Deferred calls inside a batch are handed out one by one and answered separately.
    let frames = p.send(r#"[{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"slow"}},{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"slow","arguments":{"z":1}}}]"#);
    assert!(frames.is_empty(), "{frames:?}");
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.calls[1].2, json!({"z": 1}));
    // Too large a batch is one error.
    let many = format!("[{}]", vec![PING; 17].join(","));
    assert_eq!(error_code(&p.ask(&many)), -32600);
    // Other revisions refuse batches.
    for v in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let mut p = Pair::initialized(v);
        let r = p.ask(batch);
        assert_eq!(error_code(&r), -32600, "{v}");
        assert!(r.get("id").is_none());
    }
    let mut fresh = Pair::new();
    assert_eq!(error_code(&fresh.ask(batch)), -32600);
}
