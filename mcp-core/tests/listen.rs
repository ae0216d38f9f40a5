//! 2026-07-28 `subscriptions/listen`: the acknowledgement comes first and names the honoured
//! subset (only lists the server has), each stream gets only the list changes it opted in
//! to, tagged with its subscription id and coalesced, and a cancelled stream ends silently
//! (no response). Every frame is schema-validated by the pair.

mod pair;

use mcp_rs_core::{Config, Event, ListKind, Route, SecretKey};
use pair::*;
use serde_json::{json, Value};

const SUB: &str = "io.modelcontextprotocol/subscriptionId";

fn listen(p: &mut Pair, id: Value, filter: Value) -> Vec<pair::Frame> {
    let msg = modern(
        id,
        "subscriptions/listen",
        json!({ "notifications": filter }),
    );
    p.send_bytes(msg.as_bytes())
}

/// (subscription id, method) of every pending frame; checks each is routed to its stream.
fn changes(p: &mut Pair) -> Vec<(Value, String)> {
    p.pending()
        .into_iter()
        .map(|f| {
            assert!(matches!(f.route, Route::Call(_)), "{f:?}");
            assert!(f.value.get("id").is_none(), "not a notification: {f:?}");
            (
                f.value["params"]["_meta"][SUB].clone(),
                f.value["method"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const ALL: [&str; 3] = [
    "toolsListChanged",
    "promptsListChanged",
    "resourcesListChanged",
];

#[test]
fn the_acknowledgement_comes_first() {
    let mut p = Pair::full();
    // Changes before the stream opened are not replayed on it.
    p.session.list_changed(ListKind::Tools);
    p.session.list_changed(ListKind::Prompts);
    let frames = listen(
        &mut p,
        json!("s1"),
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}),
    );
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0].route, Route::Reply);
    assert_eq!(
        frames[0].value,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "notifications": {"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true},
            "_meta": {SUB: "s1"}
        }})
    );
    assert_eq!(p.subscriptions.len(), 1);
    assert_eq!(p.session.calls_in_flight(), 1);
    assert!(p.pending().is_empty());
    // A numeric id is echoed as a number.
    let frames = listen(&mut p, json!(42), json!({"toolsListChanged": true}));
    assert_eq!(frames[0].value["params"]["_meta"][SUB], 42);
}

#[test]
fn only_offered_lists_are_honoured() {
    // A tools-only server honours only the tool list.
    let mut p = Pair::new();
    let all: serde_json::Map<String, Value> =
        ALL.iter().map(|k| (k.to_string(), json!(true))).collect();
    let frames = listen(&mut p, json!(1), Value::Object(all.clone()));
    assert_eq!(
        frames[0].value["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    // false, non-booleans and unknown members opt in to nothing.
    let mut p = Pair::full();
    let frames = listen(
        &mut p,
        json!(1),
        json!({"toolsListChanged": false, "promptsListChanged": "yes", "rootsListChanged": true, "resourcesListChanged": 1}),
    );
    assert_eq!(frames[0].value["params"]["notifications"], json!({}));
    p.session.list_changed(ListKind::Tools);
    p.session.list_changed(ListKind::Prompts);
    assert!(p.pending().is_empty());
    // A server that never announces list changes honours none.
    let mut p = Pair::full_with(Config {
        list_changed: false,
        ..Config::new(SecretKey([1; 16]))
    });
    let frames = listen(&mut p, json!(1), Value::Object(all));
    assert_eq!(frames[0].value["params"]["notifications"], json!({}));
    let discover = p.ask(&modern(json!(2), "server/discover", json!({})));
    assert!(discover["result"]["capabilities"]["prompts"]
        .get("listChanged")
        .is_none());
}

#[test]
fn each_stream_gets_the_kinds_it_asked_for() {
    let mut p = Pair::full();
    listen(&mut p, json!("tools"), json!({"toolsListChanged": true}));
    listen(
        &mut p,
        json!("prompts"),
        json!({"promptsListChanged": true}),
    );
    listen(
        &mut p,
        json!("resources"),
        json!({"resourcesListChanged": true}),
    );
    listen(
        &mut p,
        json!("all"),
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}),
    );
    p.session.list_changed(ListKind::Prompts);
    let mut got = changes(&mut p);
    got.sort_by_key(|(s, m)| (s.to_string(), m.clone()));
    assert_eq!(
        got,
        [
            (json!("all"), "notifications/prompts/list_changed".into()),
            (
                json!("prompts"),
                "notifications/prompts/list_changed".into()
            ),
        ]
    );
    // Templates are announced with the resource list's notification.
    p.session.list_changed(ListKind::ResourceTemplates);
    let mut got = changes(&mut p);
    got.sort_by_key(|(s, m)| (s.to_string(), m.clone()));
    assert_eq!(
        got,
        [
            (json!("all"), "notifications/resources/list_changed".into()),
            (
                json!("resources"),
                "notifications/resources/list_changed".into()
            ),
        ]
    );
    p.session.tools_changed();
    let mut got = changes(&mut p);
    got.sort_by_key(|(s, m)| (s.to_string(), m.clone()));
    assert_eq!(
        got,
        [
            (json!("all"), "notifications/tools/list_changed".into()),
            (json!("tools"), "notifications/tools/list_changed".into()),
        ]
    );
    // Changes are coalesced per stream and kind: templates and resources together are one.
    p.session.list_changed(ListKind::Resources);
    p.session.list_changed(ListKind::ResourceTemplates);
    p.session.list_changed(ListKind::Prompts);
    p.session.list_changed(ListKind::Prompts);
    let mut got = changes(&mut p);
    got.sort_by_key(|(s, m)| (s.to_string(), m.clone()));
    assert_eq!(
        got,
        [
            (json!("all"), "notifications/prompts/list_changed".into()),
            (json!("all"), "notifications/resources/list_changed".into()),
            (
                json!("prompts"),
                "notifications/prompts/list_changed".into()
            ),
            (
                json!("resources"),
                "notifications/resources/list_changed".into()
            ),
        ]
    );
    assert!(p.pending().is_empty());
}

#[test]
fn cancellation_ends_a_stream_without_a_response() {
    let mut p = Pair::full();
    listen(&mut p, json!("a"), json!({"promptsListChanged": true}));
    listen(&mut p, json!("b"), json!({"promptsListChanged": true}));
    let (a, b) = (p.subscriptions[0], p.subscriptions[1]);
    // A change is pending on both when "a" is cancelled: "a" gets nothing more.
    p.session.list_changed(ListKind::Prompts);
    let frames = p
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#);
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0]["params"]["_meta"][SUB], "b");
    assert_eq!(p.events, [Event::Cancelled(a)]);
    assert_eq!(p.session.calls_in_flight(), 1);
    p.session.list_changed(ListKind::Prompts);
    assert_eq!(
        changes(&mut p),
        [(json!("b"), "notifications/prompts/list_changed".into())]
    );
    // The cancelled stream cannot be closed (nothing is sent); the other one can.
    let mut out = vec![0u8; 512];
    assert_eq!(p.session.close_subscription(a, &mut out), Ok(None));
    let tx = p.session.close_subscription(b, &mut out).unwrap().unwrap();
    assert_eq!(tx.route, Route::Call(b));
    let v: Value = serde_json::from_slice(&out[..tx.len]).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "id": "b", "result": {"resultType": "complete", "_meta": {SUB: "b"}}})
    );
    pair::harness::validate_server_message(MODERN, Some("subscriptions/listen"), &v).unwrap();
    p.session.list_changed(ListKind::Prompts);
    assert!(p.pending().is_empty());
    assert_eq!(p.session.calls_in_flight(), 0);
    // The id can be used again once its stream is gone.
    let frames = listen(&mut p, json!("a"), json!({"promptsListChanged": true}));
    assert_eq!(
        frames[0].value["method"],
        "notifications/subscriptions/acknowledged"
    );
}

#[test]
fn listen_errors() {
    let mut p = Pair::full();
    for params in [
        json!({}),
        json!({"notifications": true}),
        json!({"notifications": null}),
    ] {
        let r = p.ask(&modern(json!(1), "subscriptions/listen", params.clone()));
        assert_eq!(error_code(&r), -32602, "{params}: {r}");
    }
    // An id already streaming is refused.
    listen(&mut p, json!("x"), json!({}));
    let frames = listen(&mut p, json!("x"), json!({}));
    assert_eq!(error_code(&frames[0].value), -32600, "{frames:?}");
    // Streams share the call slots (4 in the pair).
    for id in 2..5 {
        listen(&mut p, json!(id), json!({}));
    }
    let frames = listen(&mut p, json!(9), json!({}));
    assert_eq!(error_code(&frames[0].value), -32603);
    assert_eq!(frames[0].value["error"]["data"]["limit"], 4);
    // Legacy sessions have no listen.
    let mut legacy = Pair::full();
    legacy.init("2025-11-25", json!({}));
    let r = legacy.ask(&request(
        json!(1),
        "subscriptions/listen",
        json!({"notifications": {}}),
    ));
    assert_eq!(error_code(&r), -32601);
}
