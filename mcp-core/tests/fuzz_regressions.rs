//! Minimal reproductions of core bugs found by the fuzz targets (`fuzz/`) and the corpus
//! replay (`corpus_replay.rs`). Each test states the invariant it checks; a failing test
//! here is a core bug to fix, not a test to adjust.

mod pair;

use mcp_rs_core::{Config, ServerInfo, Session, SessionStorage, Tool, MIN_OUTPUT};
use pair::harness::validate_server_message;
use serde_json::Value;

static TOOLS: [Tool<'static>; 1] = [Tool::new("slow", r#"{"type":"object"}"#)];

const MODERN_META: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;

fn info() -> &'static ServerInfo<'static> {
    Box::leak(Box::new(ServerInfo {
        name: "s",
        version: "1",
        ..Default::default()
    }))
}

fn session() -> Session<'static> {
    let storage: &'static mut SessionStorage<4> = Box::leak(Box::new(SessionStorage::new()));
    Session::new(
        info(),
        Config::new(mcp_rs_core::SecretKey([0x5a; 16])),
        storage,
    )
}

/// Sends one message; returns the immediate reply (if any) and how many calls were deferred.
fn send(session: &mut Session<'_>, msg: &str, out: &mut [u8]) -> (Option<Value>, usize) {
    let mut tools = TOOLS;
    let mut incoming = session
        .handle_message(&mut tools[..], msg.as_bytes(), out)
        .expect("handle_message");
    let reply = incoming
        .transmit()
        .map(|tx| serde_json::from_slice(&out[..tx.len]).expect("reply is JSON"));
    let mut calls = 0;
    while incoming.next_call(session).is_some() {
        calls += 1;
    }
    (reply, calls)
}

/// Found by the session corpus replay (schema validation). With an output buffer of
/// `MIN_OUTPUT` bytes, the -32022 reply to a request whose id is as long as a deferrable id
/// (64 bytes) does not fit; the fallback drops `error.data`, which
/// `UnsupportedProtocolVersionError` requires (`data.supported`, `data.requested`).
/// Invariant: every frame the core writes is valid for its revision's schema.
#[test]
fn unsupported_version_error_keeps_data_in_min_output() {
    let mut s = session();
    let mut out = [0u8; MIN_OUTPUT];
    let id = format!("\"{}\"", "L".repeat(62));
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let (reply, _) = send(&mut s, &msg, &mut out);
    let reply = reply.expect("a reply");
    assert_eq!(reply["error"]["code"], -32022, "{reply}");
    if let Err(e) = validate_server_message("2026-07-28", Some("tools/list"), &reply) {
        panic!("{e}");
    }
}

/// Found by reasoning about the session model's raw-vs-decoded keys, confirmed here.
/// `"\u0069d"` *is* the key `id` (RFC 8259 compares member names after unescaping), so this
/// is a request and must get exactly one response; the core matches member names as
/// written, classifies the message as a notification and never answers it (a lost reply).
#[test]
fn escaped_id_key_is_still_a_request() {
    let mut s = session();
    let mut out = [0u8; 1024];
    let (reply, _) = send(
        &mut s,
        r#"{"jsonrpc":"2.0","\u0069d":5,"method":"ping"}"#,
        &mut out,
    );
    let reply = reply.expect("a request with an (escaped) id gets a reply");
    assert_eq!(reply["id"], 5, "{reply}");
}

/// Found by the session target's notification check. `progress` rejects a non-finite
/// `progress`, but a non-finite `total` is written as `"total":null`, which no schema allows
/// (`total` is a number). Invariant: every frame is schema-valid (reject the total, or leave
/// it out). Each case is sent with a larger `progress` than the one before, so that none is
/// refused as not increasing: every total below really reaches the writer.
#[test]
fn progress_total_is_a_number() {
    let mut s = session();
    let mut out = [0u8; 4096];
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{{"name":"slow","_meta":{{"progressToken":1,{MODERN_META}}}}}}}"#
    );
    let mut tools = TOOLS;
    let mut incoming = s
        .handle_message(&mut tools[..], msg.as_bytes(), &mut out)
        .expect("handle_message");
    let token = incoming.next_call(&mut s).expect("deferred call").token();
    let totals = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 10.0];
    let mut checked = 0;
    for (i, total) in totals.into_iter().enumerate() {
        let progress = (i + 1) as f64;
        let tx = s
            .progress(token, progress, Some(total), None, &mut out)
            .unwrap_or_else(|e| panic!("total {total}: progress refused: {e:?}"))
            .unwrap_or_else(|| panic!("total {total}: no notification for a call with a token"));
        let v: Value = serde_json::from_slice(&out[..tx.len]).unwrap_or_else(|e| {
            let text = String::from_utf8_lossy(&out[..tx.len]);
            panic!("total {total}: frame is not JSON ({e}): {text}")
        });
        assert_eq!(v["method"], "notifications/progress", "{v}");
        assert_eq!(v["params"]["progress"].as_f64(), Some(progress), "{v}");
        match v["params"].get("total") {
            // A non-finite total has no JSON form: it must be left out.
            None => assert!(!total.is_finite(), "finite total {total} was left out: {v}"),
            Some(t) => {
                let t = t
                    .as_f64()
                    .unwrap_or_else(|| panic!("total {total} written as a non-number: {v}"));
                assert!(total.is_finite(), "total {total} written as {t}: {v}");
                assert_eq!(t, total, "{v}");
            }
        }
        if let Err(e) = validate_server_message("2026-07-28", None, &v) {
            panic!("total {total}: {e}");
        }
        checked += 1;
    }
    assert_eq!(
        checked,
        totals.len(),
        "every total, INFINITY included, was written"
    );
}

/// Starts a deferred `slow` call in a fresh session at `rev` (2026-07-28: a modern request;
/// earlier: after the handshake).
fn deferred_call(rev: &str, out: &mut [u8]) -> (Session<'static>, mcp_rs_core::CallToken) {
    let mut s = session();
    let msg = if rev == "2026-07-28" {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"slow","_meta":{{{MODERN_META}}}}}}}"#
        )
    } else {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{rev}","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
        );
        let (reply, _) = send(&mut s, &init, out);
        let reply = reply.expect("initialize reply");
        assert_eq!(reply["result"]["protocolVersion"], rev, "{reply}");
        let ready = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(send(&mut s, ready, out).0.is_none());
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}"#.to_string()
    };
    let mut tools = TOOLS;
    let mut incoming = s
        .handle_message(&mut tools[..], msg.as_bytes(), out)
        .expect("handle_message");
    assert!(incoming.transmit().is_none(), "the call is deferred");
    let token = incoming.next_call(&mut s).expect("deferred call").token();
    drop(incoming);
    (s, token)
}

/// Found by the session corpus replay (schema validation). `ToolResult::structured_raw`
/// checks that its text is valid JSON but not that it is an object, so `structuredContent`
/// can be `[1]` or `5`; 2025-06-18 and 2025-11-25 require an object (2026-07-28 allows any
/// value). Invariant: such a completion is refused with `CallError::ResultMisused` (as
/// `structured_raw` documents), sends nothing and leaves the call in flight, so that it still
/// gets exactly one (schema-valid) reply; an object is accepted.
#[test]
fn structured_content_is_an_object_before_2026() {
    for rev in ["2025-06-18", "2025-11-25"] {
        for json in ["[1]", "5", r#""text""#, "null", "true"] {
            let mut out = [0u8; 4096];
            let (mut s, token) = deferred_call(rev, &mut out);
            match s.complete(token, &mut out, |r| r.structured_raw(json)) {
                Err(mcp_rs_core::CallError::ResultMisused) => {}
                other => panic!("{rev}, structuredContent {json}: {other:?}, not ResultMisused"),
            }
            assert_eq!(
                s.calls_in_flight(),
                1,
                "{rev}, {json}: the refusal ended the call"
            );
            assert!(
                s.poll_transmit(&mut out).expect("buffer").is_none(),
                "{rev}, {json}: the refusal sent something"
            );
            let tx = s
                .complete(token, &mut out, |r| {
                    r.text("ok");
                })
                .expect("a valid completion after the refusal")
                .expect("the call is still in flight");
            let v: Value = serde_json::from_slice(&out[..tx.len]).expect("JSON");
            assert_eq!(v["id"], 7, "{v}");
            if let Err(e) = validate_server_message(rev, Some("tools/call"), &v) {
                panic!("{rev}: {e}");
            }
            assert_eq!(s.calls_in_flight(), 0);
        }
        // An object is what these revisions allow: accepted and schema-valid.
        let mut out = [0u8; 4096];
        let (mut s, token) = deferred_call(rev, &mut out);
        let tx = s
            .complete(token, &mut out, |r| r.structured_raw(r#"{"a":[1]}"#))
            .expect("an object is accepted")
            .expect("in flight");
        let v: Value = serde_json::from_slice(&out[..tx.len]).expect("JSON");
        assert_eq!(
            v["result"]["structuredContent"],
            serde_json::json!({"a": [1]}),
            "{v}"
        );
        if let Err(e) = validate_server_message(rev, Some("tools/call"), &v) {
            panic!("{rev}: {e}");
        }
    }
    // The check is per revision: 2026-07-28 allows any JSON value.
    let mut out = [0u8; 4096];
    let (mut s, token) = deferred_call("2026-07-28", &mut out);
    let tx = s
        .complete(token, &mut out, |r| r.structured_raw("[1]"))
        .expect("2026-07-28 accepts a non-object")
        .expect("in flight");
    let v: Value = serde_json::from_slice(&out[..tx.len]).expect("JSON");
    assert_eq!(
        v["result"]["structuredContent"],
        serde_json::json!([1]),
        "{v}"
    );
    if let Err(e) = validate_server_message("2026-07-28", Some("tools/call"), &v) {
        panic!("2026-07-28: {e}");
    }
}

/// Found by the session target (reply accounting). Inside a 2025-03-26 batch, an error reply
/// (e.g. "Response exceeds the output buffer", or -32600 for an invalid element) that does
/// not fit the space left in the output buffer falls back to a reply *without its id*,
/// although the id is short and was read. The client cannot tell which request failed.
/// Invariant: every reply to a request with a readable id carries that id (or the whole
/// batch is answered with the single batch-level overflow error).
#[test]
fn batch_reply_keeps_ids() {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let batch = format!(
        r#"[{{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{meta}}},{{"jsonrpc":"2.0","id":2,"method":"nope"}},{{"jsonrpc":"2.0","id":"{long}","method":"server/discover","params":{meta}}}]"#,
        long = "L".repeat(63),
        // Discovery is a fixed-size reply (it cannot shrink to fit as a list page does).
        meta = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#,
    );
    let (mut arrays, mut overflows) = (0, 0);
    for len in MIN_OUTPUT..2048 {
        let mut s = session();
        let mut out = vec![0u8; len];
        let _ = send(&mut s, init, &mut out);
        let _ = send(
            &mut s,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            &mut out,
        );
        let (reply, _) = send(&mut s, &batch, &mut out);
        let reply = reply.expect("a reply");
        if let Some(items) = reply.as_array() {
            arrays += 1;
            assert_eq!(items.len(), 3, "{reply}");
            for item in items {
                assert!(
                    item.get("id").is_some(),
                    "output buffer of {len} bytes: reply without id in {reply}"
                );
            }
        } else {
            // Otherwise only the one batch-level error may answer the batch.
            overflows += 1;
            assert!(reply.get("id").is_none(), "{len} bytes: {reply}");
            assert_eq!(reply["error"]["code"], -32603, "{len} bytes: {reply}");
            assert_eq!(
                reply["error"]["message"], "Batch replies exceed the output buffer",
                "{len} bytes: {reply}"
            );
        }
    }
    // Both outcomes occur over this range, so each branch above really checked something.
    assert!(
        arrays > 0 && overflows > 0,
        "{arrays} arrays, {overflows} overflows"
    );
}

/// 100 emoji written as escaped surrogate pairs: 100 characters, 1,200 bytes of JSON text.
fn escaped_emoji(n: usize) -> String {
    "\\uD83D\\uDE00".repeat(n)
}

/// Found by the session target (seed `long-names-small`, reply accounting and schema).
/// The -32022 reply names the requested version in `data.requested`, truncated to 32
/// characters, but a character can be a 12-byte escaped surrogate pair: 384 bytes, which do
/// not fit `MIN_OUTPUT` with the required `data.supported`. The fallbacks then dropped the
/// short id (the client cannot match the reply) and finally `data` itself, which
/// `UnsupportedProtocolVersionError` requires. Invariant: with `MIN_OUTPUT` bytes, the reply
/// to a request with a short id carries that id and is schema-valid (fix: truncation is
/// also bounded to `4 * max` bytes, so the bounded `data` fits, as `write_fault` assumes).
#[test]
fn unsupported_escaped_version_keeps_id_and_data_in_min_output() {
    let mut s = session();
    let mut out = [0u8; MIN_OUTPUT];
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#,
        escaped_emoji(50)
    );
    let (reply, _) = send(&mut s, &msg, &mut out);
    let reply = reply.expect("a reply");
    assert_eq!(reply["id"], 3, "{reply}");
    assert_eq!(reply["error"]["code"], -32022, "{reply}");
    let requested = reply["error"]["data"]["requested"]
        .as_str()
        .unwrap_or_else(|| panic!("data.requested: {reply}"));
    assert!(
        !requested.is_empty() && requested.chars().all(|c| c == '\u{1F600}'),
        "{reply}"
    );
    if let Err(e) = validate_server_message("2026-07-28", Some("ping"), &reply) {
        panic!("{e}");
    }
}

/// Found by the session target (seed `resources-small`, reply accounting). A `resources/read`
/// of an unknown URI is answered "Resource not found" with `data.uri`, truncated to 256
/// characters: up to 3 KiB of escaped text. With `MIN_OUTPUT` bytes of output the reply
/// could not fit even without its message detail, so `write_fault` dropped the (short) id
/// and answered "Resource not found (request id too long to echo)". Invariant: the reply to
/// a request with a short id carries that id (fix: the optional `data.uri` goes with the
/// message detail, before the id).
#[test]
fn resource_not_found_keeps_its_id_in_min_output() {
    use mcp_rs_core::model::resources::{ReadRequest, ReadResult, Resource, ResourceSet};
    use mcp_rs_core::wire::json::JsonStr;
    use mcp_rs_core::{Dispatch, ServerHandler};

    struct NotFound;
    impl ResourceSet for NotFound {
        fn len(&self) -> usize {
            1
        }
        fn get(&self, _: usize) -> Option<Resource<'_>> {
            Some(Resource::new("test://a", "a"))
        }
        fn subscribe(&mut self, _: JsonStr<'_>, _: bool) -> bool {
            false
        }
        fn read(&mut self, _: &ReadRequest<'_>, r: &mut ReadResult<'_, '_>) -> Dispatch {
            r.not_found();
            Dispatch::Done
        }
    }
    struct Server(NotFound);
    impl ServerHandler for Server {
        fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
            Some(&mut self.0)
        }
    }

    for (rev, code) in [("2026-07-28", -32602), ("2025-06-18", -32002)] {
        let mut s = session();
        let mut server = Server(NotFound);
        let mut out = [0u8; MIN_OUTPUT];
        let meta = if rev == "2026-07-28" {
            format!(r#","_meta":{{{MODERN_META}}}"#)
        } else {
            let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
            let _ = s
                .handle(&mut server, 0, init.as_bytes(), &mut out)
                .expect("handle");
            String::new()
        };
        let msg = format!(
            r#"{{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{{"uri":"{}"{meta}}}}}"#,
            escaped_emoji(100)
        );
        let incoming = s
            .handle(&mut server, 0, msg.as_bytes(), &mut out)
            .expect("handle");
        let tx = incoming.transmit().expect("an immediate reply");
        let reply: Value = serde_json::from_slice(&out[..tx.len]).expect("JSON");
        assert_eq!(reply["id"], 13, "{rev}: {reply}");
        assert_eq!(reply["error"]["code"], code, "{rev}: {reply}");
        if let Err(e) = validate_server_message(rev, Some("resources/read"), &reply) {
            panic!("{rev}: {e}");
        }
    }
}
