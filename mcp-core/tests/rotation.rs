//! Key rotation (feature `rotation`): a server configured with key B and the previous key A
//! (`Config::previous_key`, accepted until `not_after_ms`) continues the page walks and
//! `input_required` round trips that a server under A started, signs everything new under
//! B, and refuses A's values once A is retired, on every list, on tools, prompts and
//! resources, inline and deferred. Every frame is schema-validated by the pair.

mod pair;

use mcp_rs_core::token::mac::{siphash24, PreviousKey};
use mcp_rs_core::token::seal;
use mcp_rs_core::{Config, SecretKey};
use pair::*;
use serde_json::{json, Value};

const A: SecretKey = SecretKey([0xa1; 16]);
const B: SecretKey = SecretKey([0xb2; 16]);
/// A is accepted up to and including this instant (ms on the session clock).
const NOT_AFTER: u64 = 5_000;

const LISTS: [&str; 4] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

fn config(key: SecretKey, previous: Option<SecretKey>) -> Config {
    Config {
        page_size: 1,
        previous_key: previous.map(|key| PreviousKey {
            key,
            not_after_ms: NOT_AFTER,
        }),
        ..Config::new(key)
    }
}

/// An instance under A alone, one under B with A previous, one under B alone.
fn instances() -> (Pair, Pair, Pair) {
    (
        Pair::full_with(config(A, None)),
        Pair::full_with(config(B, Some(A))),
        Pair::full_with(config(B, None)),
    )
}

fn list(p: &mut Pair, legacy: bool, method: &str, cursor: Option<&str>) -> Value {
    let params = cursor.map_or(json!({}), |c| json!({ "cursor": c }));
    if legacy {
        p.ask(&request(json!(7), method, params))
    } else {
        p.ask(&modern(json!(7), method, params))
    }
}

fn next_cursor(r: &Value) -> String {
    r["result"]["nextCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("no nextCursor: {r}"))
        .to_string()
}

#[test]
fn cursors_of_the_previous_key_verify_until_it_is_retired() {
    for (legacy, method) in [false, true]
        .into_iter()
        .flat_map(|l| LISTS.map(|m| (l, m)))
    {
        // Fresh instances each time: a session's clock never goes backwards.
        let (mut a, mut ba, mut b) = instances();
        if legacy {
            for p in [&mut a, &mut ba, &mut b] {
                p.init("2025-11-25", json!({}));
            }
        }
        {
            a.now = 1_000;
            let under_a = next_cursor(&list(&mut a, legacy, method, None));

            // B with A previous continues the walk, and mints its next cursor under B.
            ba.now = NOT_AFTER;
            let r = list(&mut ba, legacy, method, Some(&under_a));
            assert!(r.get("result").is_some(), "{method}: {r}");
            let under_b = r["result"]["nextCursor"].as_str().map(str::to_string);
            if let Some(under_b) = &under_b {
                let r = list(&mut b, legacy, method, Some(under_b));
                assert!(r.get("result").is_some(), "{method}: B's own cursor: {r}");
                let r = list(&mut a, legacy, method, Some(under_b));
                assert_eq!(error_code(&r), -32602, "{method}: A cannot read B's: {r}");
            }

            // B alone never knew A.
            let r = list(&mut b, legacy, method, Some(&under_a));
            assert_eq!(error_code(&r), -32602, "{method}: {r}");
            assert_eq!(r["error"]["message"], "Invalid cursor");

            // One millisecond after `not_after_ms`, A is retired.
            ba.now = NOT_AFTER + 1;
            let r = list(&mut ba, legacy, method, Some(&under_a));
            assert_eq!(error_code(&r), -32602, "{method}: {r}");
            assert_eq!(r["error"]["message"], "Invalid cursor");
        }
    }
}

/// A modern request declaring every client capability.
fn call(id: i64, method: &str, mut params: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
    });
    request(json!(id), method, params)
}

/// The first round of `method` on `target` (`{"name": ..}` or `{"uri": ..}`): the state.
fn first_round(p: &mut Pair, method: &str, target: Value) -> String {
    let r = p.ask(&call(1, method, target));
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    r["result"]["requestState"].as_str().unwrap().to_string()
}

fn retry(p: &mut Pair, method: &str, target: &Value, state: &str) -> Value {
    let mut params = target.clone();
    params["requestState"] = json!(state);
    params["inputResponses"] = json!({
        "confirm": {"action": "accept", "content": {"ok": true}},
    });
    p.ask(&call(2, method, params))
}

#[test]
fn request_state_of_the_previous_key_opens_until_it_is_retired() {
    let targets = [
        ("tools/call", json!({"name": "confirm", "arguments": {}})),
        ("prompts/get", json!({"name": "ask", "arguments": {}})),
        ("resources/read", json!({"uri": "test://ask"})),
    ];
    for (method, target) in targets {
        let (mut a, mut ba, mut b) = instances();
        a.now = 1_000;
        let state = first_round(&mut a, method, target.clone());

        ba.now = NOT_AFTER;
        let r = retry(&mut ba, method, &target, &state);
        assert!(r.get("result").is_some(), "{method}: {r}");
        assert_ne!(r["result"]["resultType"], "input_required", "{method}: {r}");

        // State minted now is sealed under B: B alone opens it, A does not.
        let fresh = first_round(&mut ba, method, target.clone());
        b.now = NOT_AFTER;
        let r = retry(&mut b, method, &target, &fresh);
        assert!(r.get("result").is_some(), "{method}: B's own state: {r}");
        let r = retry(&mut a, method, &target, &fresh);
        assert_eq!(error_code(&r), -32602, "{method}: {r}");

        // B alone, and B after A's grace period, refuse A's state.
        let r = retry(&mut b, method, &target, &state);
        assert_eq!(error_code(&r), -32602, "{method}: {r}");
        ba.now = NOT_AFTER + 1;
        let r = retry(&mut ba, method, &target, &state);
        assert_eq!(error_code(&r), -32602, "{method}: {r}");
    }
}

/// A state sealed by hand under `key` for a `tools/call` of `tool`, the way the session
/// seals it (the target is the keyed digest of the name's raw JSON text, in hex).
fn sealed_for(key: &SecretKey, tool: &str, payload: &str, expires: u64) -> String {
    let digest = siphash24(key, tool.as_bytes());
    let mut buf = [0u8; seal::MAX_SEALED_LEN];
    seal::seal(
        key,
        "tools/call",
        &format!("{digest:016x}"),
        payload,
        expires,
        &mut buf,
    )
    .unwrap()
    .to_string()
}

#[test]
fn deferred_calls_open_state_of_the_previous_key() {
    let (mut a, mut ba, _) = instances();
    let state = sealed_for(&A, "slow", "deferred:1", 60_000);
    // The hand-made state is what the session itself accepts under A.
    a.now = 1_000;
    a.send(&call(
        1,
        "tools/call",
        json!({"name": "slow", "requestState": state}),
    ));
    assert_eq!(a.call_states, [Some("deferred:1".to_string())]);

    ba.now = NOT_AFTER;
    ba.send(&call(
        1,
        "tools/call",
        json!({"name": "slow", "requestState": state}),
    ));
    assert_eq!(ba.call_states, [Some("deferred:1".to_string())]);

    ba.now = NOT_AFTER + 1;
    let replies = ba.send(&call(
        2,
        "tools/call",
        json!({"name": "slow", "requestState": state}),
    ));
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(error_code(&replies[0]), -32602, "{replies:?}");
    assert_eq!(
        ba.call_states.len(),
        1,
        "the retired state reached the tool"
    );
}

#[test]
fn verification_keys_follow_the_clock() {
    let c = config(B, Some(A));
    assert_eq!(c.verification_keys(0).collect::<Vec<_>>(), [&B, &A]);
    assert_eq!(c.verification_keys(NOT_AFTER).collect::<Vec<_>>(), [&B, &A]);
    assert_eq!(c.verification_keys(NOT_AFTER + 1).collect::<Vec<_>>(), [&B]);
    assert_eq!(
        config(B, None).verification_keys(0).collect::<Vec<_>>(),
        [&B]
    );
}
