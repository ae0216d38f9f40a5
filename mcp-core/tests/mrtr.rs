//! 2026-07-28 multi-round-trip requests: a tool answers `input_required` with
//! `inputRequests` (only for client capabilities the request declared) and a sealed
//! `requestState`; the retry hands the handler the verified payload and the responses; a
//! tampered, expired, foreign or misdirected state is -32602 before the handler runs; legacy
//! sessions cannot answer `input_required`. Every frame is schema-validated by the pair
//! (`InputRequiredResult` for `input_required` results).

mod pair;

use mcp_rs_core::{Config, SecretKey};
use pair::*;
use serde_json::{json, Value};

/// A modern request declaring `caps`.
fn with_caps(id: Value, method: &str, mut params: Value, caps: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    request(id, method, params)
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// Calls `confirm` declaring `caps`; returns the `input_required` result.
fn first_round(p: &mut Pair, caps: Value) -> Value {
    let r = p.ask(&with_caps(
        json!(1),
        "tools/call",
        json!({"name": "confirm", "arguments": {}}),
        caps,
    ));
    let result = r["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{r}");
    assert!(result.get("content").is_none(), "{r}");
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    result
}

fn retry(p: &mut Pair, id: i64, name: &str, state: &Value, responses: Value) -> Value {
    p.ask(&with_caps(
        json!(id),
        "tools/call",
        json!({"name": name, "inputResponses": responses, "requestState": state}),
        all_caps(),
    ))
}

fn accepted() -> Value {
    json!({"confirm": {"action": "accept", "content": {"ok": true}}})
}

#[test]
fn input_required_then_retry_with_the_state() {
    let mut p = Pair::full();
    let result = first_round(&mut p, all_caps());
    assert_eq!(p.tools.last_skipped, Some(0));
    let requests = &result["inputRequests"];
    assert_eq!(requests.as_object().unwrap().len(), 3, "{result}");
    assert_eq!(requests["confirm"]["method"], "elicitation/create");
    // Form mode is the default: it is not spelled out.
    assert!(requests["confirm"]["params"].get("mode").is_none());
    assert_eq!(requests["confirm"]["params"]["message"], "Proceed?");
    assert_eq!(
        requests["confirm"]["params"]["requestedSchema"]["required"],
        json!(["ok"])
    );
    assert_eq!(requests["draft"]["method"], "sampling/createMessage");
    assert_eq!(requests["draft"]["params"]["maxTokens"], 50);
    assert_eq!(
        requests["roots"],
        json!({"method": "roots/list", "params": {}})
    );
    let state = &result["requestState"];
    let text = state.as_str().expect("requestState");
    // Sealed: the payload travels in the clear after the MAC (see seal.rs).
    assert!(
        text.starts_with("s1.") && text.ends_with(CONFIRM_STATE),
        "{text}"
    );

    let r = retry(&mut p, 2, "confirm", state, accepted());
    let expected = format!(
        "state={CONFIRM_STATE} confirm={}",
        json!({"action": "accept", "content": {"ok": true}})
    );
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": expected}])
    );
    assert_eq!(r["result"]["resultType"], "complete");
    let (seen_state, seen_responses) = p.tools.last_input.clone().unwrap();
    assert_eq!(seen_state, CONFIRM_STATE);
    assert_eq!(seen_responses, Some(accepted()));
    // The state can be presented again until it expires (no replay protection by design).
    let r = retry(&mut p, 3, "confirm", state, json!({}));
    assert_eq!(
        r["result"]["content"][0]["text"],
        format!("state={CONFIRM_STATE} confirm=none")
    );
}

#[test]
fn requests_for_undeclared_capabilities_are_skipped() {
    let mut p = Pair::full();
    let result = first_round(&mut p, json!({"elicitation": {}}));
    assert_eq!(
        result["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["confirm"]
    );
    assert_eq!(p.tools.last_skipped, Some(2));
    let result = first_round(&mut p, json!({"sampling": {}, "roots": {}}));
    let keys: Vec<&String> = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["draft", "roots"]);
    assert_eq!(p.tools.last_skipped, Some(1));
    // Nothing declared: no inputRequests at all, only the state.
    let result = first_round(&mut p, json!({}));
    assert!(result.get("inputRequests").is_none(), "{result}");
    assert!(result["requestState"].is_string());
    assert_eq!(p.tools.last_skipped, Some(3));
}

#[test]
fn a_tampered_state_is_invalid_params() {
    let mut p = Pair::full();
    let state = first_round(&mut p, all_caps())["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let flip = |s: &str, at: usize| {
        let mut b = s.as_bytes().to_vec();
        b[at] = if b[at] == b'A' { b'B' } else { b'A' };
        String::from_utf8(b).unwrap()
    };
    let tampered = [
        json!(flip(&state, 5)),                   // expiry
        json!(flip(&state, 16)),                  // MAC
        json!(state.replace("step:1", "step:2")), // payload
        json!(&state[..state.len() - 1]),
        json!(format!("{state}x")),
        json!(""),
        json!("garbage"),
        json!(7),
        json!(null),
    ];
    for (id, bad) in tampered.iter().enumerate() {
        let r = retry(&mut p, 10 + id as i64, "confirm", bad, accepted());
        assert_eq!(error_code(&r), -32602, "{bad}: {r}");
        assert_eq!(
            r["error"]["message"],
            "Invalid requestState: tampered, expired or not issued by this server"
        );
    }
    // The same state with an escape in it: same value, but sealed state never has one.
    let escaped = format!(
        r#"{{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{{"name":"confirm","requestState":"\u0073{}","_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#,
        &state[1..]
    );
    assert_eq!(error_code(&p.ask(&escaped)), -32602);
    // The handler never saw any of them.
    assert!(p.tools.last_input.is_none());
    // inputResponses must be an object of result objects (not null, not an array, no
    // entry of another type).
    for (id, bad) in [
        (40, json!(["yes"])),
        (41, json!(null)),
        (42, json!({"confirm": 1})),
    ] {
        let r = retry(&mut p, id, "confirm", &json!(state), bad);
        assert_eq!(error_code(&r), -32602);
        assert_eq!(
            r["error"]["message"],
            "params.inputResponses must be an object of result objects"
        );
    }
}

#[test]
fn an_expired_state_is_invalid_params() {
    let mut p = Pair::full_with(Config {
        state_ttl_ms: 1_000,
        ..Config::new(SecretKey([0x5a; 16]))
    });
    p.now = 10_000;
    let state = first_round(&mut p, all_caps())["requestState"].clone();
    p.now = 10_999;
    let r = retry(&mut p, 2, "confirm", &state, accepted());
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    p.now = 11_001;
    p.tools.last_input = None;
    let r = retry(&mut p, 3, "confirm", &state, accepted());
    assert_eq!(error_code(&r), -32602, "{r}");
    assert!(p.tools.last_input.is_none());
    // A state issued now is good for another second.
    let fresh = first_round(&mut p, all_caps())["requestState"].clone();
    assert_ne!(fresh, state);
    let r = retry(&mut p, 4, "confirm", &fresh, accepted());
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
}

#[test]
fn a_state_only_opens_for_its_method_and_target() {
    let mut p = Pair::full();
    let state = first_round(&mut p, all_caps())["requestState"].clone();
    // Another tool.
    let r = retry(&mut p, 2, "echo", &state, json!({}));
    assert_eq!(error_code(&r), -32602, "{r}");
    // Another method with a target of the same name or any other.
    let r = p.ask(&modern(
        json!(3),
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "a"}, "requestState": state}),
    ));
    assert_eq!(error_code(&r), -32602, "{r}");
    let r = p.ask(&modern(
        json!(4),
        "resources/read",
        json!({"uri": "test://static/text", "requestState": state}),
    ));
    assert_eq!(error_code(&r), -32602, "{r}");
    // Another server key.
    let mut other = Pair::full_with(Config::new(SecretKey([0x11; 16])));
    let r = retry(&mut other, 5, "confirm", &state, accepted());
    assert_eq!(error_code(&r), -32602, "{r}");
    assert!(other.tools.last_input.is_none());
}

#[test]
fn legacy_sessions_cannot_answer_input_required() {
    for rev in ["2025-06-18", "2025-11-25"] {
        let mut p = Pair::full();
        p.init(rev, all_caps());
        let r = p.ask(&request(
            json!(1),
            "tools/call",
            json!({"name": "confirm", "arguments": {}}),
        ));
        assert_eq!(error_code(&r), -32603, "{rev}: {r}");
        assert_eq!(
            r["error"]["message"],
            "Tool handler misused the result builder"
        );
        // Nothing was sent to the client and the session goes on.
        assert!(p.pending().is_empty());
        let r = p.ask(&request(json!(2), "tools/call", json!({"name": "echo"})));
        assert_eq!(r["result"]["content"][0]["text"], "{}");
    }
}

#[test]
fn prompts_and_reads_answer_input_required_too() {
    let mut p = Pair::full();
    let ask = |p: &mut Pair, id: i64, params: Value| {
        p.ask(&with_caps(json!(id), "prompts/get", params, all_caps()))
    };
    let r = ask(&mut p, 1, json!({"name": "ask"}));
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert!(r["result"].get("messages").is_none());
    assert_eq!(
        r["result"]["inputRequests"]["topic"]["method"],
        "elicitation/create"
    );
    let state = r["result"]["requestState"].clone();
    let r = ask(
        &mut p,
        2,
        json!({"name": "ask", "requestState": state, "inputResponses":
            {"topic": {"action": "accept", "content": {"topic": "rust"}}}}),
    );
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"], "state=prompt:1 topic=rust",
        "{r}"
    );
    // A prompt's state is not a tool's.
    let r = retry(&mut p, 3, "confirm", &state, json!({}));
    assert_eq!(error_code(&r), -32602, "{r}");

    let read = |p: &mut Pair, id: i64, params: Value| {
        p.ask(&with_caps(json!(id), "resources/read", params, all_caps()))
    };
    let r = read(&mut p, 4, json!({"uri": "test://ask"}));
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert!(r["result"].get("contents").is_none());
    // Cache hints belong to complete results only.
    assert!(r["result"].get("ttlMs").is_none());
    assert_eq!(
        r["result"]["inputRequests"],
        json!({"roots": {"method": "roots/list", "params": {}}})
    );
    let state = r["result"]["requestState"].clone();
    let r = read(
        &mut p,
        5,
        json!({"uri": "test://ask", "requestState": state}),
    );
    assert_eq!(r["result"]["contents"][0]["text"], "state=read:1", "{r}");
    // Bound to the URI.
    let r = read(
        &mut p,
        6,
        json!({"uri": "test://unlisted", "requestState": state}),
    );
    assert_eq!(error_code(&r), -32602, "{r}");

    // Legacy sessions: refused as a misuse, like tools.
    let mut legacy = Pair::full();
    legacy.init("2025-11-25", all_caps());
    let r = legacy.ask(&request(json!(1), "prompts/get", json!({"name": "ask"})));
    assert_eq!(error_code(&r), -32603, "{r}");
    let r = legacy.ask(&request(
        json!(2),
        "resources/read",
        json!({"uri": "test://ask"}),
    ));
    assert_eq!(error_code(&r), -32603, "{r}");
}

#[test]
fn a_deferred_call_can_answer_input_required() {
    let mut p = Pair::full_with(Config {
        state_ttl_ms: 1_000,
        ..Config::new(SecretKey([0x5a; 16]))
    });
    let call = |id: i64, extra: Value| {
        let mut params = json!({"name": "slow"});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        with_caps(json!(id), "tools/call", params, json!({"elicitation": {}}))
    };
    assert!(p.send(&call(1, json!({}))).is_empty());
    assert_eq!(p.call_states[0], None);
    // Completed 5 s later: the state's lifetime starts at completion.
    p.session.handle_timeout(5_000);
    let tx = p.session.complete(p.calls[0].0, &mut p.out, |r| {
        r.input_required(Some("later:1"), |q| {
            q.elicit(
                "ok",
                "OK?",
                r#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#,
            );
            q.sample("s", r#"{"messages":[],"maxTokens":1}"#);
        });
    });
    let v = p.answered(tx).unwrap();
    assert_eq!(v["result"]["resultType"], "input_required", "{v}");
    // Only the declared capability's request.
    assert_eq!(
        v["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["ok"]
    );
    let state = v["result"]["requestState"].clone();
    p.now = 5_900;
    assert!(p.send(&call(2, json!({"requestState": state}))).is_empty());
    assert_eq!(p.call_states[1].as_deref(), Some("later:1"));
    let tx = p.session.complete(p.calls[1].0, &mut p.out, |r| {
        r.text("done");
    });
    assert_eq!(
        p.answered(tx).unwrap()["result"]["content"][0]["text"],
        "done"
    );
    p.now = 6_001;
    let r = p.ask(&call(3, json!({"requestState": state})));
    assert_eq!(error_code(&r), -32602, "{r}");
    // input_required after content is a misuse: nothing is sent, the call stays.
    p.send(&call(4, json!({})));
    let token = p.calls[2].0;
    let misuse = p.session.complete(token, &mut p.out, |r| {
        r.text("partial");
        r.input_required(Some("x"), |_| {});
    });
    assert_eq!(misuse, Err(mcp_rs_core::CallError::ResultMisused));
    assert_eq!(p.session.calls_in_flight(), 1);
}
