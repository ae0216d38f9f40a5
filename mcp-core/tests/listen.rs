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

/// Every stream's `notifications/resources/updated` for `uri` (the cursor API), checked as
/// the pair checks every frame: (subscription id, route).
fn updated(p: &mut Pair, uri: &str) -> Vec<(Value, Route)> {
    let mut out = vec![0u8; 512];
    let mut from = 0;
    let mut got = Vec::new();
    while let Some(tx) = p
        .session
        .resource_updated_next(uri, &mut from, &mut out)
        .unwrap()
    {
        let v: Value = serde_json::from_slice(&out[..tx.len]).unwrap();
        pair::harness::validate_server_message(MODERN, None, &v).unwrap();
        assert_eq!(v["method"], "notifications/resources/updated");
        assert_eq!(v["params"]["uri"], uri);
        assert!(v.get("id").is_none());
        got.push((v["params"]["_meta"][SUB].clone(), tx.route));
    }
    // Exhausted: asking again yields nothing.
    assert_eq!(
        p.session.resource_updated_next(uri, &mut from, &mut out),
        Ok(None)
    );
    got
}

#[test]
fn resource_subscriptions_honour_known_uris_only() {
    let mut p = Pair::full();
    let frames = listen(
        &mut p,
        json!("r"),
        json!({"toolsListChanged": true, "resourceSubscriptions": [
            "test://static/text",
            "test://nope",
            "test://items/42",
            7,
            "test://static/text",
            "test://items/",
        ]}),
    );
    assert_eq!(frames.len(), 1, "{frames:?}");
    // The acknowledgement names the honoured subset, as the spec's example shows: a listed
    // resource and a URI matching a template; unknown URIs, repeats and non-strings are
    // left out.
    assert_eq!(
        frames[0].value,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "notifications": {
                "toolsListChanged": true,
                "resourceSubscriptions": ["test://static/text", "test://items/42"]
            },
            "_meta": {SUB: "r"}
        }})
    );
    let r = p.subscriptions[0];
    // The application's legacy subscribe hook is not called.
    assert!(p.ext.resources.as_ref().unwrap().subscriptions.is_empty());
    assert_eq!(
        updated(&mut p, "test://static/text"),
        [(json!("r"), Route::Call(r))]
    );
    assert_eq!(
        updated(&mut p, "test://items/42"),
        [(json!("r"), Route::Call(r))]
    );
    assert!(updated(&mut p, "test://nope").is_empty());
    assert!(updated(&mut p, "test://items/43").is_empty());
    assert!(updated(&mut p, "test://static/blob").is_empty());
    // Nothing is queued for poll_transmit, and a stateless connection has no legacy
    // session to tell.
    assert!(p.pending().is_empty());
    let mut out = vec![0u8; 512];
    assert_eq!(
        p.session.resource_updated("test://static/text", &mut out),
        Ok(None)
    );
    // Escaped URIs are the same URIs once decoded, and echoed as the client spelled them.
    let msg = modern(
        json!("e"),
        "subscriptions/listen",
        json!({"notifications": {}}),
    )
    .replace(
        r#""notifications":{}"#,
        r#""notifications":{"resourceSubscriptions":["test:\/\/static\/blob"]}"#,
    );
    let frames = p.send_bytes(msg.as_bytes());
    assert_eq!(
        frames[0].value["params"]["notifications"],
        json!({"resourceSubscriptions": ["test://static/blob"]})
    );
    assert_eq!(
        updated(&mut p, "test://static/blob"),
        [(json!("e"), Route::Call(p.subscriptions[1]))]
    );
}

#[test]
fn resource_subscriptions_need_subscribable_resources() {
    // Without subscriptions on offer, none is honoured and the member is left out.
    let mut p = Pair::full();
    p.ext.resources.as_mut().unwrap().no_subscribe = true;
    let frames = listen(
        &mut p,
        json!(1),
        json!({"resourceSubscriptions": ["test://static/text"]}),
    );
    assert_eq!(frames[0].value["params"]["notifications"], json!({}));
    assert!(updated(&mut p, "test://static/text").is_empty());
    // A tools-only server has no resources at all.
    let mut p = Pair::new();
    let frames = listen(
        &mut p,
        json!(1),
        json!({"resourceSubscriptions": ["test://static/text"]}),
    );
    assert_eq!(frames[0].value["params"]["notifications"], json!({}));
    assert!(updated(&mut p, "test://static/text").is_empty());
    // Not an array: nothing.
    let mut p = Pair::full();
    let frames = listen(
        &mut p,
        json!(1),
        json!({"resourceSubscriptions": "test://static/text"}),
    );
    assert_eq!(frames[0].value["params"]["notifications"], json!({}));
}

#[test]
fn resource_subscriptions_are_bounded_per_stream() {
    assert_eq!(mcp_rs_core::MAX_RESOURCE_SUBSCRIPTIONS, 4);
    let mut p = Pair::full();
    let uris: Vec<String> = (0..6).map(|i| format!("test://items/{i}")).collect();
    let frames = listen(&mut p, json!("b"), json!({ "resourceSubscriptions": uris }));
    // The first four in request order are kept.
    assert_eq!(
        frames[0].value["params"]["notifications"]["resourceSubscriptions"],
        json!(uris[..4])
    );
    for uri in &uris[..4] {
        assert_eq!(updated(&mut p, uri).len(), 1, "{uri}");
    }
    for uri in &uris[4..] {
        assert!(updated(&mut p, uri).is_empty(), "{uri}");
    }
}

#[test]
fn resource_updates_go_to_the_subscribed_streams_only() {
    let mut p = Pair::full();
    listen(
        &mut p,
        json!("a"),
        json!({"resourceSubscriptions": ["test://static/text", "test://items/1"]}),
    );
    listen(
        &mut p,
        json!("b"),
        json!({"resourceSubscriptions": ["test://items/1"]}),
    );
    listen(&mut p, json!("c"), json!({"resourcesListChanged": true}));
    listen(
        &mut p,
        json!(4),
        json!({"resourceSubscriptions": ["test://static/text"]}),
    );
    let (a, b, _, d) = (
        p.subscriptions[0],
        p.subscriptions[1],
        p.subscriptions[2],
        p.subscriptions[3],
    );
    assert_eq!(
        updated(&mut p, "test://static/text"),
        [(json!("a"), Route::Call(a)), (json!(4), Route::Call(d))]
    );
    assert_eq!(
        updated(&mut p, "test://items/1"),
        [(json!("a"), Route::Call(a)), (json!("b"), Route::Call(b))]
    );
    // A list change is not a resource update, nor the other way round.
    p.session.list_changed(ListKind::Resources);
    assert_eq!(
        changes(&mut p),
        [(json!("c"), "notifications/resources/list_changed".into())]
    );
    // A buffer too small leaves the cursor where it was.
    let mut from = 0;
    let mut small = [0u8; 16];
    assert!(p
        .session
        .resource_updated_next("test://items/1", &mut from, &mut small)
        .is_err());
    assert_eq!(from, 0);
    // A legacy session on the same connection gets the legacy frame, without an id.
    p.init("2025-11-25", json!({}));
    let mut out = vec![0u8; 512];
    let tx = p
        .session
        .resource_updated("test://items/1", &mut out)
        .unwrap()
        .unwrap();
    assert_eq!(tx.route, Route::Session);
    let v: Value = serde_json::from_slice(&out[..tx.len]).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://items/1"}})
    );
    assert_eq!(updated(&mut p, "test://items/1").len(), 2);
}

#[test]
fn an_ended_stream_gets_no_more_updates() {
    let mut p = Pair::full();
    let subscribe = json!({"resourceSubscriptions": ["test://static/text"]});
    listen(&mut p, json!("a"), subscribe.clone());
    listen(&mut p, json!("b"), subscribe.clone());
    let (a, b) = (p.subscriptions[0], p.subscriptions[1]);
    assert_eq!(updated(&mut p, "test://static/text").len(), 2);
    // Cancelled by the client.
    let frames = p
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#);
    assert!(frames.is_empty(), "{frames:?}");
    assert_eq!(p.events, [Event::Cancelled(a)]);
    assert_eq!(
        updated(&mut p, "test://static/text"),
        [(json!("b"), Route::Call(b))]
    );
    // Closed by the server.
    let mut out = vec![0u8; 512];
    assert!(p.session.close_subscription(b, &mut out).unwrap().is_some());
    assert!(updated(&mut p, "test://static/text").is_empty());
    // Slots freed by streams serve new streams and calls: nothing is inherited.
    listen(&mut p, json!("c"), json!({"toolsListChanged": true}));
    let frames = p.send(&modern(
        json!(9),
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    ));
    assert!(frames.is_empty(), "{frames:?}");
    assert_eq!(p.calls.len(), 1);
    assert!(updated(&mut p, "test://static/text").is_empty());
}
