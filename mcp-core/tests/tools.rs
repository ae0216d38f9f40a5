//! tools/list (pagination, per-revision fields, raw schemas) and tools/call (sync and
//! deferred calls, content types, structured output, progress, cancellation, bounds).

mod pair;

use std::collections::HashSet;

use mcp_rs_core::{CallError, Config, Event, LogLevel};
use pair::*;
use serde_json::{json, Value};

fn list_all(p: &mut Pair, modern_era: bool) -> (Vec<String>, Vec<String>) {
    let (mut names, mut cursors) = (Vec::new(), Vec::new());
    let mut cursor: Option<String> = None;
    for id in 0..100 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let msg = if modern_era {
            modern(json!(id), "tools/list", params)
        } else {
            request(json!(id), "tools/list", params)
        };
        let r = p.ask(&msg);
        let res = &r["result"];
        for t in res["tools"].as_array().unwrap_or_else(|| panic!("{r}")) {
            names.push(t["name"].as_str().unwrap().to_string());
        }
        match res.get("nextCursor") {
            Some(c) => {
                let c = c.as_str().unwrap().to_string();
                cursors.push(c.clone());
                cursor = Some(c);
            }
            None => return (names, cursors),
        }
    }
    panic!("pagination did not terminate");
}

#[test]
fn pagination_walk_visits_every_tool_once() {
    for modern_era in [false, true] {
        let mut p = Pair::with(
            Config {
                page_size: 50,
                ..Config::new(mcp_rs_core::SecretKey([0x5a; 16]))
            },
            120,
            1 << 20,
        );
        if !modern_era {
            p.send(&initialize(0, "2025-11-25"));
            p.send(INITIALIZED);
        }
        let (names, cursors) = list_all(&mut p, modern_era);
        assert_eq!(names.len(), 127);
        assert_eq!(
            names.iter().collect::<HashSet<_>>().len(),
            127,
            "duplicates"
        );
        assert_eq!(cursors.len(), 2, "3 pages of 50 → 2 cursors");
        assert_eq!(
            cursors.iter().collect::<HashSet<_>>().len(),
            cursors.len(),
            "a cursor repeated"
        );
        // Deterministic order.
        assert_eq!(names[0], "echo");
        assert_eq!(names[126], "extra_119");
    }
}

#[test]
fn page_ends_early_when_the_output_buffer_is_small() {
    // A 2 KiB buffer cannot hold 50 tools: pages shrink to fit and still cover everything.
    let mut p = Pair::with(Config::new(mcp_rs_core::SecretKey([0x5a; 16])), 40, 2048);
    p.send(&initialize(0, "2025-06-18"));
    let (names, cursors) = list_all(&mut p, false);
    assert_eq!(names.len(), 47);
    assert!(
        cursors.len() >= 2,
        "expected several pages, got {}",
        cursors.len() + 1
    );
}

#[test]
fn bad_cursors_are_invalid_params() {
    let mut p = Pair::with(
        Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        120,
        1 << 20,
    );
    p.send(&initialize(0, "2025-11-25"));
    let first = p.ask(&request(json!(1), "tools/list", json!({})));
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_string();
    let mut tampered = cursor.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    for bad in [
        json!(tampered),
        json!(""),
        json!("not-a-cursor"),
        json!(42),
        json!({}),
    ] {
        let r = p.ask(&request(json!(2), "tools/list", json!({"cursor": bad})));
        assert_eq!(error_code(&r), -32602, "{bad}");
    }
    // A cursor minted by another server (another key) is foreign.
    let mut other = Pair::with(
        Config {
            key: mcp_rs_core::token::cursor::CursorKey([9; 16]),
            ..Config::new(mcp_rs_core::SecretKey([0x5a; 16]))
        },
        120,
        1 << 20,
    );
    other.send(&initialize(0, "2025-11-25"));
    let foreign =
        other.ask(&request(json!(1), "tools/list", json!({})))["result"]["nextCursor"].clone();
    assert_eq!(
        error_code(&p.ask(&request(json!(3), "tools/list", json!({"cursor": foreign})))),
        -32602
    );
    // The genuine cursor still works.
    assert!(
        p.ask(&request(json!(4), "tools/list", json!({"cursor": cursor})))["result"]["tools"]
            .is_array()
    );
}

#[test]
fn tools_changed_stales_cursors_and_notifies() {
    let mut p = Pair::with(
        Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        120,
        1 << 20,
    );
    p.send(&initialize(0, "2025-11-25"));
    p.send(INITIALIZED);
    let cursor = p.ask(&request(json!(1), "tools/list", json!({})))["result"]["nextCursor"].clone();
    p.tools.defs.pop();
    p.session.tools_changed();
    let mut frames = Vec::new();
    p.drain(&mut frames);
    assert_eq!(frames.len(), 1);
    assert_eq!(
        frames[0].value,
        json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}})
    );
    assert_eq!(frames[0].route, mcp_rs_core::Route::Session);
    let r = p.ask(&request(json!(2), "tools/list", json!({"cursor": cursor})));
    assert_eq!(error_code(&r), -32602);
    assert!(r["error"]["message"].as_str().unwrap().contains("Stale"));
    // Coalesced: two changes before a drain give one notification.
    p.session.tools_changed();
    p.session.tools_changed();
    let mut frames = Vec::new();
    p.drain(&mut frames);
    assert_eq!(frames.len(), 1);
}

#[test]
fn no_list_changed_without_a_legacy_session() {
    let mut p = Pair::new();
    p.session.tools_changed();
    let mut frames = Vec::new();
    p.drain(&mut frames);
    assert!(frames.is_empty());
}

#[test]
fn tool_fields_follow_the_revision() {
    let expect = [
        ("2024-11-05", false, false, false, false),
        ("2025-03-26", true, false, false, false),
        ("2025-06-18", true, true, true, false),
        ("2025-11-25", true, true, true, true),
    ];
    for (v, annotations, title, output_schema, icons) in expect {
        let mut p = Pair::initialized(v);
        let tools = p.ask(&request(json!(1), "tools/list", json!({})))["result"]["tools"].clone();
        let echo = &tools[0];
        let add = &tools[1];
        assert_eq!(echo.get("annotations").is_some(), annotations, "{v}");
        assert_eq!(echo.get("title").is_some(), title, "{v}");
        assert_eq!(add.get("outputSchema").is_some(), output_schema, "{v}");
        assert_eq!(add.get("_meta").is_some(), title, "{v}");
        assert_eq!(add.get("icons").is_some(), icons, "{v}");
        assert_eq!(echo["annotations"].get("destructiveHint"), None);
    }
}

#[test]
fn schemas_are_emitted_byte_for_byte() {
    let mut p = Pair::initialized("2025-11-25");
    let r = p.send_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let raw = serde_json::to_string(&r[0].value).unwrap();
    let parsed: Value = serde_json::from_str(SCHEMA_2020).unwrap();
    let tool = r[0].value["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "schema_2020")
        .unwrap()
        .clone();
    assert_eq!(tool["inputSchema"], parsed);
    // Byte-level: the exact text appears in the output.
    let mut out = vec![0u8; 65536];
    let mut tools = TestTools::new(0);
    let info = server_info();
    let mut storage = mcp_rs_core::SessionStorage::<1>::new();
    let mut s = mcp_rs_core::Session::new(
        info,
        Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        &mut storage,
    );
    let _ = s
        .handle_message(&mut tools, initialize(0, "2025-11-25").as_bytes(), &mut out)
        .unwrap();
    let inc = s
        .handle_message(
            &mut tools,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            &mut out,
        )
        .unwrap();
    let text = std::str::from_utf8(&out[..inc.transmit().unwrap().len]).unwrap();
    assert!(text.contains(SCHEMA_2020), "{raw}");
}

#[test]
fn sync_calls_and_arguments() {
    let mut p = Pair::initialized("2025-06-18");
    let r = p.ask(&request(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"x": [1, "two"]}}),
    ));
    assert_eq!(
        r["result"]["content"],
        json!([{"type":"text","text":"{\"x\":[1,\"two\"]}"}])
    );
    // Missing or null arguments mean {}.
    let r = p.ask(&request(json!(2), "tools/call", json!({"name": "echo"})));
    assert_eq!(r["result"]["content"][0]["text"], "{}");
    let r = p.ask(&request(
        json!(3),
        "tools/call",
        json!({"name": "echo", "arguments": null}),
    ));
    assert_eq!(r["result"]["content"][0]["text"], "{}");
    // Arguments of the wrong JSON type fail the request schema: -32602.
    let r = p.ask(&request(
        json!(4),
        "tools/call",
        json!({"name": "echo", "arguments": [1]}),
    ));
    assert_eq!(error_code(&r), -32602);
    // Unknown tool: -32602 naming it.
    let r = p.ask(&request(
        json!(5),
        "tools/call",
        json!({"name": "nope", "arguments": {}}),
    ));
    assert_eq!(error_code(&r), -32602);
    assert_eq!(r["error"]["message"], "Unknown tool: nope");
    // No name / params.
    assert_eq!(
        error_code(&p.ask(&request(json!(6), "tools/call", json!({"arguments": {}})))),
        -32602
    );
    assert_eq!(
        error_code(&p.ask(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#)),
        -32602
    );
    assert_eq!(
        error_code(&p.ask(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":[1]}"#)),
        -32602
    );
}

#[test]
fn structured_output_and_typed_argument_errors() {
    let mut p = Pair::initialized("2025-06-18");
    let r = p.ask(&request(
        json!(1),
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 0.5}}),
    ));
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 2.5}));
    assert_eq!(
        r["result"]["content"],
        json!([{"type":"text","text":"{\"sum\":2.5}"}])
    );
    assert!(r["result"].get("isError").is_none());
    // Argument validation failures are isError results, not protocol errors.
    let r = p.ask(&request(
        json!(2),
        "tools/call",
        json!({"name": "add", "arguments": {"a": "x", "b": 1}}),
    ));
    assert_eq!(r["result"]["isError"], true);
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Invalid arguments for tool add: invalid type"),
        "{text}"
    );
    let r = p.ask(&request(
        json!(3),
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1}}),
    ));
    assert!(r["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("missing field `b`"));
    // Before 2025-06-18 only the text block is sent.
    let mut old = Pair::initialized("2025-03-26");
    let r = old.ask(&request(
        json!(1),
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
    ));
    assert!(r["result"].get("structuredContent").is_none());
    assert_eq!(r["result"]["content"][0]["text"], "{\"sum\":2.0}");
}

#[test]
fn every_content_type_per_revision() {
    for v in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut p = Pair::initialized(v);
        let r = p.ask(&request(
            json!(1),
            "tools/call",
            json!({"name": "all_content"}),
        ));
        let types: Vec<&str> = r["result"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        let (audio, link) = (v >= "2025-03-26", v >= "2025-06-18");
        let expected = [
            "text",
            "text",
            "image",
            if audio { "audio" } else { "text" },
            if link { "resource_link" } else { "text" },
            "resource",
            "resource",
        ];
        assert_eq!(types, expected, "{v}");
        let annotated = &r["result"]["content"][1];
        assert_eq!(
            annotated["annotations"]["audience"],
            json!(["user", "assistant"])
        );
        assert_eq!(
            annotated["annotations"].get("lastModified").is_some(),
            link,
            "{v}"
        );
        assert_eq!(r["result"]["content"][6]["resource"]["blob"], "AAEC");
    }
    let mut p = Pair::new();
    let r = p.ask(&modern(
        json!(1),
        "tools/call",
        json!({"name": "all_content"}),
    ));
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["content"][4]["type"], "resource_link");
}

#[test]
fn tool_failures_are_results() {
    let mut p = Pair::new();
    let r = p.ask(&modern(
        json!(1),
        "tools/call",
        json!({"name": "fail", "arguments": {}}),
    ));
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["resultType"], "complete");
}

#[test]
fn deferred_calls_complete_out_of_order() {
    let mut p = Pair::initialized("2025-11-25");
    for id in 1..=3 {
        assert!(p
            .send(&request(
                json!(id),
                "tools/call",
                json!({"name": "slow", "arguments": {"n": id}})
            ))
            .is_empty());
    }
    assert_eq!(p.calls.len(), 3);
    assert_eq!(p.session.calls_in_flight(), 3);
    assert_eq!(p.calls[1].1, "slow");
    assert_eq!(p.calls[1].2, json!({"n": 2}));
    // A slow call never blocks other requests.
    assert_eq!(
        p.ask(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#)["result"],
        json!({})
    );
    let tokens: Vec<_> = p.calls.iter().map(|c| c.0).collect();
    let r3 = p.complete_text(tokens[2], "three").unwrap();
    let r1 = p.complete_text(tokens[0], "one").unwrap();
    let r2 = p.complete_text(tokens[1], "two").unwrap();
    assert_eq!(
        (r3["id"].clone(), r1["id"].clone(), r2["id"].clone()),
        (json!(3), json!(1), json!(2))
    );
    assert_eq!(r2["result"]["content"][0]["text"], "two");
    assert_eq!(p.session.calls_in_flight(), 0);
    // A token cannot be used twice.
    let err = p.session.complete(tokens[0], &mut p.out, |r| {
        r.text("again");
    });
    assert_eq!(err, Err(CallError::UnknownCall));
}

#[test]
fn deferred_call_ids_are_echoed_exactly() {
    let mut p = Pair::initialized("2025-11-25");
    p.send(r#"{"jsonrpc":"2.0","id":"a\"b\u00e9","method":"tools/call","params":{"name":"slow"}}"#);
    p.send(
        r#"{"jsonrpc":"2.0","id":-12345678901234,"method":"tools/call","params":{"name":"slow"}}"#,
    );
    let (t1, t2) = (p.calls[0].0, p.calls[1].0);
    assert_eq!(p.calls[0].2, json!({}));
    let tx = p
        .session
        .complete(t1, &mut p.out, |r| {
            r.text("x");
        })
        .unwrap()
        .unwrap();
    let text = std::str::from_utf8(&p.out[..tx.len]).unwrap().to_string();
    assert!(text.contains(r#""id":"a\"b\u00e9""#), "{text}");
    let r = p.complete_text(t2, "y").unwrap();
    assert_eq!(r["id"], json!(-12345678901234i64));
}

#[test]
fn calls_in_flight_are_bounded() {
    let mut p = Pair::initialized("2025-11-25"); // storage has 4 slots
    for id in 0..4 {
        assert!(p
            .send(&request(json!(id), "tools/call", json!({"name": "slow"})))
            .is_empty());
    }
    let r = p.ask(&request(json!(99), "tools/call", json!({"name": "slow"})));
    assert_eq!(error_code(&r), -32603);
    assert_eq!(r["error"]["data"]["limit"], 4);
    // Sync tools still work while every slot is taken.
    assert!(
        p.ask(&request(json!(100), "tools/call", json!({"name": "echo"})))["result"].is_object()
    );
    // Completing one frees a slot.
    let t = p.calls[0].0;
    p.complete_text(t, "done");
    assert!(p
        .send(&request(json!(101), "tools/call", json!({"name": "slow"})))
        .is_empty());
}

#[test]
fn duplicate_in_flight_id_is_rejected() {
    let mut p = Pair::initialized("2025-11-25");
    p.send(&request(json!(7), "tools/call", json!({"name": "slow"})));
    let r = p.ask(&request(json!(7), "tools/call", json!({"name": "slow"})));
    assert_eq!(error_code(&r), -32600);
}

#[test]
fn progress_notifications() {
    let mut p = Pair::initialized("2025-11-25");
    p.send(&request(
        json!(1),
        "tools/call",
        json!({"name": "slow", "_meta": {"progressToken": "tok"}}),
    ));
    p.send(&request(json!(2), "tools/call", json!({"name": "slow"})));
    let (with, without) = (p.calls[0].0, p.calls[1].0);
    let mut out = vec![0u8; 1024];
    let tx = p
        .session
        .progress(with, 0.0, Some(100.0), Some("starting"), &mut out)
        .unwrap()
        .unwrap();
    p.out[..tx.len].copy_from_slice(&out[..tx.len]);
    let v = p.frame(tx);
    assert_eq!(
        v,
        json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":0.0,"total":100.0,"message":"starting"}})
    );
    let tx = p
        .session
        .progress(with, 50.5, None, None, &mut out)
        .unwrap()
        .unwrap();
    assert_eq!(tx.route, mcp_rs_core::Route::Call(with));
    assert_eq!(
        p.session.progress(with, 50.5, None, None, &mut out),
        Err(CallError::ProgressNotIncreasing)
    );
    assert_eq!(
        p.session.progress(with, f64::NAN, None, None, &mut out),
        Err(CallError::ProgressNotIncreasing)
    );
    // No token, no notification.
    assert_eq!(
        p.session.progress(without, 1.0, None, None, &mut out),
        Ok(None)
    );
    // Integer tokens are echoed as integers; 2024-11-05 has no message.
    let mut old = Pair::initialized("2024-11-05");
    old.send(&request(
        json!(1),
        "tools/call",
        json!({"name": "slow", "_meta": {"progressToken": 77}}),
    ));
    let t = old.calls[0].0;
    let tx = old
        .session
        .progress(t, 1.0, Some(2.0), Some("dropped"), &mut out)
        .unwrap()
        .unwrap();
    old.out[..tx.len].copy_from_slice(&out[..tx.len]);
    let v = old.frame(tx);
    assert_eq!(
        v["params"],
        json!({"progressToken":77,"progress":1.0,"total":2.0})
    );
}

#[test]
fn integer_progress_is_written_as_integers() {
    let mut p = Pair::initialized("2025-11-25");
    p.send(&request(
        json!(1),
        "tools/call",
        json!({"name": "slow", "_meta": {"progressToken": "tok"}}),
    ));
    let t = p.calls[0].0;
    let mut out = vec![0u8; 1024];
    let tx = p
        .session
        .progress(t, 2u32, Some(5u32), None, &mut out)
        .unwrap()
        .unwrap();
    let text = std::str::from_utf8(&out[..tx.len]).unwrap();
    assert!(
        text.contains(r#""progress":2,"total":5"#),
        "integers without a fraction: {text}"
    );
    // Integers and floats share the increasing check (compared as f64).
    assert_eq!(
        p.session.progress(t, 2.0, None, None, &mut out),
        Err(CallError::ProgressNotIncreasing)
    );
    assert_eq!(
        p.session.progress(t, 2u64, None, None, &mut out),
        Err(CallError::ProgressNotIncreasing)
    );
    let tx = p
        .session
        .progress(t, 2.5, None, None, &mut out)
        .unwrap()
        .unwrap();
    assert!(std::str::from_utf8(&out[..tx.len])
        .unwrap()
        .contains(r#""progress":2.5}"#));
    // Signed values, and u64 beyond i64.
    let tx = p
        .session
        .progress(t, 3i64, Some(-1i64), None, &mut out)
        .unwrap()
        .unwrap();
    assert!(std::str::from_utf8(&out[..tx.len])
        .unwrap()
        .contains(r#""progress":3,"total":-1"#));
    let tx = p
        .session
        .progress(t, u64::MAX, None, None, &mut out)
        .unwrap()
        .unwrap();
    assert!(std::str::from_utf8(&out[..tx.len])
        .unwrap()
        .contains(r#""progress":18446744073709551615}"#));
}

#[test]
fn cancellation_frees_the_call() {
    let mut p = Pair::initialized("2025-11-25");
    p.send(&request(json!("c1"), "tools/call", json!({"name": "slow"})));
    let t = p.calls[0].0;
    // Unknown ids and malformed cancellations are ignored silently.
    assert!(p
        .send(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}"#
        )
        .is_empty());
    assert!(p
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#)
        .is_empty());
    assert!(p
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#)
        .is_empty());
    assert_eq!(p.session.calls_in_flight(), 1);
    // A numeric id does not match the string id "c1"... and 1 vs "1" are different ids.
    let frames = p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}}"#);
    assert!(frames.is_empty());
    assert_eq!(p.session.calls_in_flight(), 0);
    assert!(p.events.contains(&Event::Cancelled(t)));
    // Completing a cancelled call sends nothing.
    assert_eq!(
        p.session.complete(t, &mut p.out, |r| {
            r.text("late");
        }),
        Ok(None)
    );
    let mut out = vec![0u8; 512];
    assert_eq!(p.session.progress(t, 1.0, None, None, &mut out), Ok(None));
}

#[test]
fn abandoned_calls_are_answered() {
    let mut p = Pair::initialized("2025-11-25");
    let mut tools = TestTools::new(0);
    // Take the Incoming but never call next_call.
    let msg = request(json!(5), "tools/call", json!({"name": "slow"}));
    let inc = p
        .session
        .handle_message(&mut tools, msg.as_bytes(), &mut p.out)
        .unwrap();
    assert_eq!(inc.pending_calls(), 1);
    drop(inc);
    let frames = p.send(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#);
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0]["id"], 6);
    assert_eq!(frames[1]["id"], 5);
    assert_eq!(error_code(&frames[1]), -32603);
}

#[test]
fn missing_client_capability() {
    let mut p = Pair::new();
    let r = p.ask(&modern(
        json!(1),
        "tools/call",
        json!({"name": "needs_sampling"}),
    ));
    assert_eq!(error_code(&r), -32021);
    assert_eq!(
        r["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    let with_caps = request(
        json!(2),
        "tools/call",
        json!({"name": "needs_sampling", "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}
        }}),
    );
    assert!(p.send(&with_caps).is_empty());
    assert_eq!(p.calls.len(), 1);
    // Legacy: the capability comes from initialize, and its absence is a tool error (there
    // is no error code for it before 2026-07-28); the tool does not run.
    let mut legacy = Pair::initialized("2025-11-25");
    let r = legacy.ask(&request(
        json!(1),
        "tools/call",
        json!({"name": "needs_sampling"}),
    ));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Missing client capability: sampling"
    );
    assert!(legacy.calls.is_empty());
}

#[test]
fn modern_call_logs_need_a_log_level() {
    let mut p = Pair::new();
    let with_level = request(
        json!(1),
        "tools/call",
        json!({"name": "slow", "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/logLevel": "info"
        }}),
    );
    p.send(&with_level);
    p.send(&modern(json!(2), "tools/call", json!({"name": "slow"})));
    let (leveled, silent) = (p.calls[0].0, p.calls[1].0);
    let mut out = vec![0u8; 512];
    assert!(p
        .session
        .log(Some(leveled), LogLevel::Debug, None, "d", &mut out)
        .unwrap()
        .is_none());
    let tx = p
        .session
        .log(Some(leveled), LogLevel::Info, Some("t"), "i", &mut out)
        .unwrap()
        .unwrap();
    assert_eq!(tx.route, mcp_rs_core::Route::Call(leveled));
    let v: Value = serde_json::from_slice(&out[..tx.len]).unwrap();
    pair::harness::validate_server_message(MODERN, None, &v).unwrap();
    assert!(p
        .session
        .log(Some(silent), LogLevel::Emergency, None, "x", &mut out)
        .unwrap()
        .is_none());
    // Session-wide logs need a legacy session.
    assert!(p
        .session
        .log(None, LogLevel::Emergency, None, "x", &mut out)
        .unwrap()
        .is_none());
}

#[test]
fn results_too_large_for_the_buffer() {
    let mut p = Pair::with(Config::new(mcp_rs_core::SecretKey([0x5a; 16])), 0, 700);
    p.send(&initialize(0, "2025-11-25"));
    let big = "x".repeat(1000);
    let r = p.ask(&request(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"t": big}}),
    ));
    assert_eq!(error_code(&r), -32603);
    assert!(r["error"]["data"]["required"].as_u64().unwrap() > 1000);
    // Deferred completion reports the size and keeps the call alive for a retry.
    p.send(&request(json!(2), "tools/call", json!({"name": "slow"})));
    let t = p.calls[0].0;
    let err = p
        .session
        .complete(t, &mut p.out, |r| {
            r.text(&big);
        })
        .unwrap_err();
    let CallError::BufferTooSmall { required } = err else {
        panic!("{err:?}")
    };
    let mut bigger = vec![0u8; required];
    let tx = p
        .session
        .complete(t, &mut bigger, |r| {
            r.text(&big);
        })
        .unwrap()
        .unwrap();
    assert_eq!(tx.len, required);
}
