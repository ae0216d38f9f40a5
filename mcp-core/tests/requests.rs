//! Legacy server-to-client requests from deferred calls: routing of responses, errors,
//! late and wrong ids, timeouts through the session clock, and every refusal.

mod pair;

use mcp_rs_core::{CallError, ClientMethod, Event};
use pair::*;
use serde_json::{json, Value};

const SAMPLING_PARAMS: &str =
    r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100}"#;

/// A 2025-06-18 session whose client declared sampling and elicitation (not roots), with
/// one deferred `needs_sampling` call in flight.
fn session_with_call() -> (Pair, mcp_rs_core::CallToken) {
    session_at("2025-06-18")
}

/// The same at another revision.
fn session_at(version: &str) -> (Pair, mcp_rs_core::CallToken) {
    let mut p = Pair::new();
    p.send(
        &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":version,
            "capabilities":{"sampling":{},"elicitation":{}},
            "clientInfo":{"name":"t","version":"1"}}})
        .to_string(),
    );
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(p
        .send(&request(
            json!(7),
            "tools/call",
            json!({"name":"needs_sampling"})
        ))
        .is_empty());
    let token = p.calls.last().expect("deferred").0;
    p.events.clear();
    (p, token)
}

fn send_request(p: &mut Pair, token: mcp_rs_core::CallToken, timeout: u64) -> Value {
    let tx = p
        .session
        .request(
            token,
            ClientMethod::CreateMessage,
            SAMPLING_PARAMS,
            timeout,
            &mut p.out,
        )
        .expect("request")
        .expect("call live");
    assert_eq!(tx.route, mcp_rs_core::Route::Call(token));
    p.frame(tx)
}

#[test]
fn a_response_is_routed_to_the_call_that_asked() {
    let (mut p, token) = session_with_call();
    let req = send_request(&mut p, token, 10_000);
    assert_eq!(req["method"], "sampling/createMessage");
    assert_eq!(req["params"]["maxTokens"], 100);
    let id = req["id"].clone();
    assert!(id.is_u64());
    // A wrong id is ignored; the right one is routed.
    p.send(&json!({"jsonrpc":"2.0","id":999,"result":{}}).to_string());
    assert!(p.responses.is_empty());
    let result = json!({"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"});
    assert!(p
        .send(&json!({"jsonrpc":"2.0","id":id,"result":result}).to_string())
        .is_empty());
    assert_eq!(p.responses, vec![(token, Ok(result))]);
    // A late repeat of the same response is ignored.
    p.send(&json!({"jsonrpc":"2.0","id":id,"result":{}}).to_string());
    assert_eq!(p.responses.len(), 1);
    // The call can ask again, and finish.
    let again = send_request(&mut p, token, 10_000);
    assert_ne!(again["id"], id, "ids are not reused");
    let done = p.complete_text(token, "LLM response: Paris").expect("sent");
    assert_eq!(done["id"], 7);
    // Its pending request is forgotten with it.
    p.send(&json!({"jsonrpc":"2.0","id":again["id"],"result":{}}).to_string());
    assert_eq!(p.responses.len(), 1);
}

#[test]
fn an_error_response_reaches_the_call() {
    let (mut p, token) = session_with_call();
    let id = send_request(&mut p, token, 10_000)["id"].clone();
    p.send(
        &json!({"jsonrpc":"2.0","id":id,"error":{"code":-1,"message":"User rejected"}}).to_string(),
    );
    assert_eq!(p.responses, vec![(token, Err(-1))]);
}

#[test]
fn a_request_without_answer_times_out_and_is_cancelled() {
    let (mut p, token) = session_with_call();
    p.session.handle_timeout(1_000);
    let id = send_request(&mut p, token, 500)["id"].clone();
    assert_eq!(p.session.poll_timeout(), Some(1_500));
    p.session.handle_timeout(1_499);
    let mut frames = Vec::new();
    p.drain(&mut frames);
    assert!(frames.is_empty());
    p.session.handle_timeout(1_500);
    p.drain(&mut frames);
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].value["method"], "notifications/cancelled");
    assert_eq!(frames[0].value["params"]["requestId"], id);
    assert_eq!(p.events, vec![Event::RequestTimedOut(token)]);
    assert_eq!(p.session.poll_timeout(), None);
    // The answer after the deadline is ignored.
    p.send(&json!({"jsonrpc":"2.0","id":id,"result":{}}).to_string());
    assert!(p.responses.is_empty());
}

#[test]
fn refusals() {
    let (mut p, token) = session_with_call();
    let roots = p
        .session
        .request(token, ClientMethod::ListRoots, "{}", 1_000, &mut p.out);
    assert_eq!(roots, Err(CallError::ClientCapability));
    let bad = p
        .session
        .request(token, ClientMethod::Elicit, "{\n}", 1_000, &mut p.out);
    assert_eq!(bad, Err(CallError::InvalidParams));
    send_request(&mut p, token, 1_000);
    let second = p
        .session
        .request(token, ClientMethod::Elicit, "{}", 1_000, &mut p.out);
    assert_eq!(second, Err(CallError::RequestPending));

    // A 2026-07-28 call never sends requests.
    let mut m = Pair::new();
    let caps = json!({"sampling":{}});
    let mut params = json!({"name":"needs_sampling"});
    params["_meta"] = modern_meta();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
    m.send(&request(json!(1), "tools/call", params));
    let modern_token = m.calls.last().expect("deferred").0;
    let stateless = m.session.request(
        modern_token,
        ClientMethod::CreateMessage,
        SAMPLING_PARAMS,
        1_000,
        &mut m.out,
    );
    assert_eq!(stateless, Err(CallError::Stateless));
}

#[test]
fn elicitation_needs_a_revision_that_has_it() {
    let form = r#"{"message":"?","requestedSchema":{"type":"object","properties":{}}}"#;
    for (version, allowed) in [("2025-03-26", false), ("2025-06-18", true)] {
        let (mut p, token) = session_at(version);
        let r = p
            .session
            .request(token, ClientMethod::Elicit, form, 1000, &mut p.out);
        assert_eq!(r.is_ok(), allowed, "{version}: {r:?}");
        if !allowed {
            assert_eq!(r, Err(CallError::ClientCapability));
        }
    }
}
