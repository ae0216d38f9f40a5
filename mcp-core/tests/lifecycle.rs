//! Lifecycle of both eras: initialize and version negotiation, requests before initialize,
//! ping, logging/setLevel, server/discover and per-request `_meta` validation.

mod pair;

use mcp_rs_core::{Event, LogLevel, ProtocolVersion};
use pair::*;
use serde_json::{json, Value};

#[test]
fn initialize_echoes_every_legacy_version() {
    for v in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut p = Pair::new();
        let r = p.ask(&initialize(1, v));
        assert_eq!(r["id"], 1);
        assert_eq!(r["result"]["protocolVersion"], v);
        assert_eq!(r["result"]["capabilities"]["tools"]["listChanged"], true);
        assert!(r["result"]["capabilities"]["logging"].is_object());
        assert_eq!(r["result"]["serverInfo"]["name"], "pair-server");
        assert_eq!(r["result"]["instructions"], "Use the tools.");
        // Fields appear only in the revisions that define them.
        let info = &r["result"]["serverInfo"];
        assert_eq!(
            info.get("title").is_some(),
            v >= "2025-06-18",
            "{v}: {info}"
        );
        assert_eq!(
            info.get("description").is_some(),
            v >= "2025-11-25",
            "{v}: {info}"
        );
        assert!(r["result"].get("resultType").is_none());
        assert!(p.send(INITIALIZED).is_empty());
        assert_eq!(
            p.events,
            vec![Event::Initialized(ProtocolVersion::from_wire(v).unwrap())]
        );
    }
}

#[test]
fn unknown_or_modern_version_gets_latest_legacy() {
    for requested in ["1900-01-01", "2026-07-28", ""] {
        let mut p = Pair::new();
        let r = p.ask(&initialize(1, requested));
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{requested}");
    }
}

#[test]
fn initialize_needs_a_version_string() {
    let mut p = Pair::new();
    let r = p.ask(&request(
        json!(1),
        "initialize",
        json!({"protocolVersion": 5}),
    ));
    assert_eq!(error_code(&r), -32602);
    // The session is still fresh: a proper initialize works.
    assert_eq!(
        p.ask(&initialize(2, "2025-06-18"))["result"]["protocolVersion"],
        "2025-06-18"
    );
}

#[test]
fn second_initialize_is_rejected() {
    let mut p = Pair::initialized("2025-06-18");
    let r = p.ask(&initialize(9, "2025-03-26"));
    assert_eq!(error_code(&r), -32600);
    assert_eq!(r["id"], 9);
    assert_eq!(
        p.session.negotiated_version(),
        ProtocolVersion::from_wire("2025-06-18")
    );
}

#[test]
fn requests_before_initialize_get_a_clear_error() {
    let mut p = Pair::new();
    for method in ["tools/list", "tools/call", "logging/setLevel"] {
        let r = p.ask(&request(json!("a"), method, json!({})));
        assert_eq!(error_code(&r), -32600, "{method}");
        assert_eq!(r["id"], "a");
        let msg = r["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("initialize") && msg.contains("2026-07-28"),
            "{msg}"
        );
    }
    // A method the table does not know is -32601 whatever the phase.
    assert_eq!(
        error_code(&p.ask(&request(json!(1), "resources/lists", json!({})))),
        -32601
    );
    // ping is allowed before initialize.
    assert_eq!(
        p.ask(&request(json!(2), "ping", json!({})))["result"],
        json!({})
    );
}

#[test]
fn ping_and_unknown_methods() {
    let mut p = Pair::initialized("2025-11-25");
    assert_eq!(
        p.ask(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#),
        json!({"jsonrpc":"2.0","id":"p","result":{}})
    );
    let r = p.ask(&request(json!(3), "prompts/list", json!({})));
    assert_eq!(error_code(&r), -32601);
    assert_eq!(r["error"]["message"], "Method not found: prompts/list");
}

#[test]
fn set_level_filters_session_logs() {
    let mut p = Pair::initialized("2025-06-18");
    let mut out = vec![0u8; 1024];
    // Default level is info: debug is filtered, warning passes.
    assert!(p
        .session
        .log(None, LogLevel::Debug, None, "d", &mut out)
        .unwrap()
        .is_none());
    assert!(p
        .session
        .log(None, LogLevel::Warning, Some("core"), "w", &mut out)
        .unwrap()
        .is_some());
    let r = p.ask(&request(
        json!(1),
        "logging/setLevel",
        json!({"level": "error"}),
    ));
    assert_eq!(r["result"], json!({}));
    p.drain(&mut Vec::new());
    assert!(p.events.contains(&Event::LogLevel(LogLevel::Error)));
    assert!(p
        .session
        .log(None, LogLevel::Warning, None, "w", &mut out)
        .unwrap()
        .is_none());
    let tx = p
        .session
        .log(None, LogLevel::Critical, Some("core"), "boom", &mut out)
        .unwrap()
        .unwrap();
    let v: Value = serde_json::from_slice(&out[..tx.len]).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"critical","logger":"core","data":"boom"}})
    );
    pair::harness::validate_server_message("2025-06-18", None, &v).unwrap();
    let bad = p.ask(&request(
        json!(2),
        "logging/setLevel",
        json!({"level": "loud"}),
    ));
    assert_eq!(error_code(&bad), -32602);
}

#[test]
fn no_session_logs_before_initialize() {
    let mut p = Pair::new();
    let mut out = vec![0u8; 512];
    assert!(p
        .session
        .log(None, LogLevel::Emergency, None, "x", &mut out)
        .unwrap()
        .is_none());
}

#[test]
fn discover_lists_every_version() {
    let mut p = Pair::new();
    let r = p.ask(&modern(json!("d"), "server/discover", json!({})));
    let res = &r["result"];
    assert_eq!(res["resultType"], "complete");
    assert_eq!(
        res["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert!(res["capabilities"]["tools"].is_object());
    assert_eq!(res["ttlMs"], 0);
    assert_eq!(res["cacheScope"], "public");
    assert_eq!(
        res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "pair-server"
    );
    assert_eq!(res["instructions"], "Use the tools.");
    // Without `_meta` discovery is a malformed 2026-07-28 request (conformance
    // sep-2575-request-meta-invalid-missing-meta), with or without params.
    let probe = p.ask(&request(json!(2), "server/discover", json!({})));
    assert_eq!(error_code(&probe), -32602);
    assert_eq!(probe["id"], 2);
    let bare = p.ask(&json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover"}).to_string());
    assert_eq!(error_code(&bare), -32602);
    // Discovery does not start a legacy session.
    assert_eq!(p.session.negotiated_version(), None);
}

#[test]
fn modern_meta_validation() {
    let mut p = Pair::new();
    let caps_only = request(
        json!(1),
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(error_code(&p.ask(&caps_only)), -32602);
    let version_only = request(
        json!(2),
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
    );
    let r = p.ask(&version_only);
    assert_eq!(error_code(&r), -32602);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("clientCapabilities"));
    let not_object = request(json!(3), "tools/list", json!({"_meta": 7}));
    assert_eq!(error_code(&p.ask(&not_object)), -32602);
    let bad_level = request(
        json!(4),
        "tools/list",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/logLevel": "chatty"
        }}),
    );
    assert_eq!(error_code(&p.ask(&bad_level)), -32602);
}

#[test]
fn unsupported_modern_version() {
    let mut p = Pair::new();
    for requested in ["1900-01-01", "2025-11-25"] {
        let msg = request(
            json!(1),
            "tools/list",
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": requested,
                "io.modelcontextprotocol/clientCapabilities": {}
            }}),
        );
        let r = p.ask(&msg);
        assert_eq!(error_code(&r), -32022);
        assert_eq!(r["error"]["data"]["requested"], requested);
        assert_eq!(r["error"]["data"]["supported"][0], "2026-07-28");
    }
}

#[test]
fn legacy_only_methods_are_not_found_in_modern_requests() {
    let mut p = Pair::new();
    for method in [
        "ping",
        "logging/setLevel",
        "initialize",
        "resources/subscribe",
    ] {
        let r = p.ask(&modern(json!(1), method, json!({})));
        assert_eq!(error_code(&r), -32601, "{method}");
    }
    assert_eq!(
        error_code(&p.ask(&modern(json!(2), "prompts/list", json!({})))),
        -32601
    );
}

#[test]
fn both_eras_on_one_connection() {
    let mut p = Pair::initialized("2025-03-26");
    let legacy = p.ask(&request(json!(1), "tools/list", json!({})));
    assert!(legacy["result"].get("resultType").is_none());
    let modern_list = p.ask(&modern(json!(2), "tools/list", json!({})));
    assert_eq!(modern_list["result"]["resultType"], "complete");
    assert!(modern_list["result"]["ttlMs"].is_u64());
    // 2025-03-26 has no titles; 2026-07-28 does.
    assert!(legacy["result"]["tools"][0].get("title").is_none());
    assert_eq!(modern_list["result"]["tools"][0]["title"], "Echo");
}

#[test]
fn subscriptions_listen_delivers_list_changes() {
    let mut p = Pair::new();
    let listen = modern(
        json!("L1"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
    );
    let frames = p.send_bytes(listen.as_bytes());
    assert_eq!(frames.len(), 1);
    let ack = &frames[0].value;
    assert_eq!(
        ack,
        &json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{
            "notifications":{"toolsListChanged":true},
            "_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}})
    );
    pair::harness::validate_def(MODERN, "SubscriptionsAcknowledgedNotification", ack).unwrap();
    // A second listen that does not opt in gets nothing on changes.
    p.send(&modern(
        json!("L2"),
        "subscriptions/listen",
        json!({"notifications": {}}),
    ));
    p.session.tools_changed();
    let mut frames = Vec::new();
    p.drain(&mut frames);
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(
        frames[0].value,
        json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}})
    );
    assert!(matches!(frames[0].route, mcp_rs_core::Route::Call(_)));
    pair::harness::validate_def(MODERN, "ToolListChangedNotification", &frames[0].value).unwrap();
    // Cancelling the subscription stops delivery; closing the other one answers it.
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}}"#);
    p.session.tools_changed();
    let mut frames = Vec::new();
    p.drain(&mut frames);
    assert!(frames.is_empty(), "{frames:?}");
    let discover = p.ask(&modern(json!(9), "server/discover", json!({})));
    assert_eq!(
        discover["result"]["capabilities"]["tools"]["listChanged"],
        true
    );
    // Bad filters are invalid params.
    assert_eq!(
        error_code(&p.ask(&modern(json!("L3"), "subscriptions/listen", json!({})))),
        -32602
    );
    // Legacy sessions do not have it.
    let mut legacy = Pair::initialized("2025-11-25");
    assert_eq!(
        error_code(&legacy.ask(&request(
            json!(1),
            "subscriptions/listen",
            json!({"notifications": {}})
        ))),
        -32601
    );
}

#[test]
fn close_subscription_answers_the_listen_request() {
    let mut p = Pair::new();
    let mut out = vec![0u8; 1024];
    let mut tools = TestTools::new(0);
    let msg = modern(
        json!(5),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let inc = p
        .session
        .handle_message(&mut tools, msg.as_bytes(), &mut out)
        .unwrap();
    let token = inc.subscription().expect("subscription token");
    let tx = p
        .session
        .close_subscription(token, &mut out)
        .unwrap()
        .unwrap();
    let v: Value = serde_json::from_slice(&out[..tx.len]).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc":"2.0","id":5,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":5}}})
    );
    pair::harness::validate_server_message(MODERN, Some("subscriptions/listen"), &v).unwrap();
    assert_eq!(p.session.calls_in_flight(), 0);
    assert!(p.session.close_subscription(token, &mut out).is_err());
}

#[test]
fn reset_starts_a_new_session_over_the_same_slots() {
    let mut p = Pair::initialized("2025-06-18");
    assert!(p.session.negotiated_version().is_some());
    // A listen stream holds a slot; reset forgets it.
    p.send(&modern(
        json!("L"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    ));
    assert_eq!(p.session.calls_in_flight(), 1);
    p.session.reset();
    assert_eq!(p.session.negotiated_version(), None);
    assert_eq!(p.session.calls_in_flight(), 0);
    // Not initialized any more: a legacy request is refused until `initialize` again.
    let refused = p.ask(&request(json!(2), "tools/list", json!({})));
    assert!(refused.get("error").is_some(), "{refused}");
    p.init("2025-11-25", json!({}));
    assert_eq!(
        p.session.negotiated_version().map(|v| v.as_str()),
        Some("2025-11-25")
    );
}
