//! Resources in both eras: `resources/list`, `resources/templates/list`, `resources/read`
//! (text, blob, several contents, template matches, unlisted URIs, deferred reads) and the
//! legacy `resources/subscribe` / `resources/unsubscribe`; every not-found path answers with
//! the revision's error naming the URI, never with an empty `contents`. Every frame is
//! schema-validated for its revision by the pair.

mod pair;

use pair::*;
use serde_json::{json, Value};

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// A full pair for `rev`: a legacy session initialized at it, or a fresh one for 2026.
fn pair_for(rev: &str) -> Pair {
    let mut p = Pair::full();
    if rev != MODERN {
        p.init(rev, json!({}));
    }
    p
}

/// A request in `rev`'s era.
fn req(rev: &str, id: Value, method: &str, params: Value) -> String {
    if rev == MODERN {
        modern(id, method, params)
    } else {
        request(id, method, params)
    }
}

fn read(p: &mut Pair, rev: &str, id: i64, uri: &str) -> Value {
    p.ask(&req(
        rev,
        json!(id),
        "resources/read",
        json!({ "uri": uri }),
    ))
}

fn all_revisions() -> impl Iterator<Item = &'static str> {
    LEGACY.into_iter().chain([MODERN])
}

#[test]
fn initialize_and_discover_declare_resources() {
    let mut p = Pair::full();
    let init = p.ask(&initialize(1, "2025-06-18"));
    assert_eq!(
        init["result"]["capabilities"]["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    // 2026-07-28 has no resources/subscribe, but a listen stream's `resourceSubscriptions`
    // delivers the updates of a subscribable resource, so discover declares `subscribe` too.
    let discover = p.ask(&modern(json!(2), "server/discover", json!({})));
    assert_eq!(
        discover["result"]["capabilities"]["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    // A tools-only server declares no resources and answers their methods -32601.
    let mut tools_only = Pair::new();
    let discover = tools_only.ask(&modern(json!(1), "server/discover", json!({})));
    assert!(discover["result"]["capabilities"]
        .get("resources")
        .is_none());
    for method in [
        "resources/list",
        "resources/templates/list",
        "resources/read",
    ] {
        let r = tools_only.ask(&modern(json!(2), method, json!({"uri": "test://x"})));
        assert_eq!(error_code(&r), -32601, "{method}: {r}");
    }
}

#[test]
fn list_and_templates_follow_the_revision() {
    for rev in all_revisions() {
        let mut p = pair_for(rev);
        let r = p.ask(&req(rev, json!(1), "resources/list", json!({})));
        let list = r["result"]["resources"].as_array().expect("resources");
        let uris: Vec<&str> = list.iter().map(|r| r["uri"].as_str().unwrap()).collect();
        assert_eq!(
            uris,
            [
                "test://static/text",
                "test://static/blob",
                "test://static/multi",
                "test://static/empty",
                "test://static/slow"
            ],
            "{rev}"
        );
        assert!(r["result"].get("nextCursor").is_none());
        let first = &list[0];
        assert_eq!(first["name"], "text");
        assert_eq!(first["mimeType"], "text/plain");
        assert_eq!(first["size"], 5);
        assert_eq!(first["annotations"]["priority"], 0.25);
        // Titles and `_meta` from 2025-06-18, icons from 2025-11-25.
        let titled = rev >= "2025-06-18";
        assert_eq!(first.get("title").is_some(), titled, "{rev}: {first}");
        assert_eq!(first.get("_meta").is_some(), titled, "{rev}: {first}");
        assert_eq!(first.get("icons").is_some(), rev >= "2025-11-25", "{rev}");

        let t = p.ask(&req(rev, json!(2), "resources/templates/list", json!({})));
        let templates = t["result"]["resourceTemplates"]
            .as_array()
            .expect("resourceTemplates");
        assert_eq!(templates.len(), 2);
        assert_eq!(templates[0]["uriTemplate"], "test://items/{id}");
        assert_eq!(templates[0]["name"], "item");
        assert_eq!(templates[0].get("title").is_some(), titled);
        assert_eq!(templates[1]["uriTemplate"], "test://deferred/{name}");
        // Cache hints in 2026-07-28 only.
        for result in [&r["result"], &t["result"]] {
            assert_eq!(result.get("ttlMs").is_some(), rev == MODERN, "{rev}");
            assert_eq!(result.get("cacheScope").is_some(), rev == MODERN, "{rev}");
        }
    }
}

#[test]
fn resource_pages_walk_every_item_once() {
    let config = mcp_rs_core::Config {
        page_size: 2,
        ..mcp_rs_core::Config::new(mcp_rs_core::SecretKey([1; 16]))
    };
    for (method, key, total) in [
        ("resources/list", "resources", 5),
        ("resources/templates/list", "resourceTemplates", 2),
    ] {
        for rev in ["2025-11-25", MODERN] {
            let mut p = Pair::full_with(config);
            if rev != MODERN {
                p.init(rev, json!({}));
            }
            let (mut seen, mut cursor) = (Vec::new(), None::<Value>);
            for id in 1.. {
                let params = cursor.map_or(json!({}), |c| json!({ "cursor": c }));
                let r = p.ask(&req(rev, json!(id), method, params));
                for item in r["result"][key].as_array().unwrap() {
                    seen.push(item["name"].as_str().unwrap().to_string());
                }
                cursor = r["result"].get("nextCursor").cloned();
                if cursor.is_none() {
                    break;
                }
                assert!(id < 10, "pagination did not end");
            }
            let mut unique = seen.clone();
            unique.dedup();
            assert_eq!(seen.len(), total, "{method} {rev}: {seen:?}");
            assert_eq!(unique.len(), total);
        }
    }
}

#[test]
fn read_text_blob_several_contents_and_templates() {
    for rev in all_revisions() {
        let mut p = pair_for(rev);
        let r = read(&mut p, rev, 1, "test://static/text");
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://static/text", "mimeType": "text/plain", "text": "hello"}]),
            "{rev}"
        );
        let r = read(&mut p, rev, 2, "test://static/blob");
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://static/blob", "mimeType": "application/octet-stream", "blob": "AAECAw=="}])
        );
        let r = read(&mut p, rev, 3, "test://static/multi");
        assert_eq!(
            r["result"]["contents"],
            json!([
                {"uri": "test://static/multi", "mimeType": "text/markdown", "text": "# part 1"},
                {"uri": "test://static/multi#2", "text": "part 2"},
                {"uri": "test://static/multi#3", "mimeType": "image/png", "blob": "iVBORw0KGgo="}
            ])
        );
        // A template match reaches the handler with the template's index.
        let r = read(&mut p, rev, 4, "test://items/42");
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://items/42", "mimeType": "text/plain", "text": "item 42"}])
        );
        // An unlisted URI still reaches the handler.
        let r = read(&mut p, rev, 5, "test://unlisted");
        assert_eq!(r["result"]["contents"][0]["text"], "unlisted but readable");
        if rev == MODERN {
            assert_eq!(r["result"]["resultType"], "complete");
            assert_eq!(r["result"]["ttlMs"], 0);
            assert_eq!(r["result"]["cacheScope"], "public");
        } else {
            assert!(r["result"].get("resultType").is_none());
        }
    }
}

#[test]
fn an_escaped_uri_matches_and_is_echoed_decoded() {
    let mut p = Pair::full();
    // `\/` escapes: the listed resource and the template still match.
    let r = p.ask(r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test:\/\/static\/text","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#);
    assert_eq!(r["result"]["contents"][0]["uri"], "test://static/text");
    let r = p.ask(r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test:\/\/items\/7","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#);
    assert_eq!(r["result"]["contents"][0]["text"], "item 7");
    // The not-found error names the URI (escapes kept valid).
    let r = p.ask(r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test:\/\/nope\u00e9","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#);
    assert_eq!(error_code(&r), -32602);
    assert_eq!(r["error"]["data"]["uri"], "test://nopeé");
}

#[test]
fn unknown_uri_is_the_revisions_not_found_error() {
    for rev in all_revisions() {
        let mut p = pair_for(rev);
        // Unknown and unlisted: the handler calls `not_found`. Listed, but the read
        // writes nothing: also not found, never an empty `contents`.
        for (id, uri) in [(1, "test://nope"), (2, "test://static/empty")] {
            let r = read(&mut p, rev, id, uri);
            assert!(r.get("result").is_none(), "{rev}: {r}");
            let expected = if rev == MODERN { -32602 } else { -32002 };
            assert_eq!(error_code(&r), expected, "{rev}: {r}");
            assert_eq!(r["error"]["data"]["uri"], uri, "{rev}: {r}");
            assert_eq!(r["error"]["message"], "Resource not found");
        }
    }
}

#[test]
fn read_params_are_checked() {
    for rev in ["2025-06-18", MODERN] {
        let mut p = pair_for(rev);
        for params in [json!({}), json!({"uri": 7}), json!({"uri": null})] {
            let r = p.ask(&req(rev, json!(1), "resources/read", params.clone()));
            assert_eq!(error_code(&r), -32602, "{rev} {params}: {r}");
        }
    }
}

#[test]
fn subscribe_and_unsubscribe_in_legacy_sessions() {
    for rev in LEGACY {
        let mut p = pair_for(rev);
        let r = p.ask(&request(
            json!(1),
            "resources/subscribe",
            json!({"uri": "test://static/text"}),
        ));
        assert_eq!(r["result"], json!({}), "{rev}");
        let r = p.ask(&request(
            json!(2),
            "resources/subscribe",
            json!({"uri": "test://items/9"}),
        ));
        assert_eq!(r["result"], json!({}));
        let r = p.ask(&request(
            json!(3),
            "resources/unsubscribe",
            json!({"uri": "test://static/text"}),
        ));
        assert_eq!(r["result"], json!({}));
        let seen = &p.ext.resources.as_ref().unwrap().subscriptions;
        assert_eq!(
            seen,
            &[
                ("test://static/text".to_string(), true),
                ("test://items/9".to_string(), true),
                ("test://static/text".to_string(), false)
            ]
        );
        // Unknown URIs: not found, with the URI.
        for (id, method) in [(4, "resources/subscribe"), (5, "resources/unsubscribe")] {
            let r = p.ask(&request(json!(id), method, json!({"uri": "test://nope"})));
            assert_eq!(error_code(&r), -32002, "{rev} {method}: {r}");
            assert_eq!(r["error"]["data"]["uri"], "test://nope");
        }
        let r = p.ask(&request(json!(6), "resources/subscribe", json!({})));
        assert_eq!(error_code(&r), -32602);
        // The application reports an update of a subscribed resource.
        let mut out = vec![0u8; 256];
        let tx = p
            .session
            .resource_updated("test://items/9", &mut out)
            .unwrap()
            .expect("a legacy session gets updates");
        assert_eq!(tx.route, mcp_rs_core::Route::Session);
        let v: Value = serde_json::from_slice(&out[..tx.len]).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://items/9"}})
        );
        pair::harness::validate_server_message(rev, None, &v).unwrap();
    }
}

#[test]
fn subscribe_is_not_found_in_2026_and_without_the_capability() {
    let mut p = Pair::full();
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let r = p.ask(&modern(
            json!(1),
            method,
            json!({"uri": "test://static/text"}),
        ));
        assert_eq!(error_code(&r), -32601, "{method}: {r}");
    }
    assert!(p.ext.resources.as_ref().unwrap().subscriptions.is_empty());
    // No stateless updates either.
    let mut out = vec![0u8; 256];
    assert!(p
        .session
        .resource_updated("test://static/text", &mut out)
        .unwrap()
        .is_none());
    // A legacy server whose resources are not subscribable neither declares nor serves it.
    let mut p = Pair::full();
    p.ext.resources.as_mut().unwrap().no_subscribe = true;
    let init = p.ask(&initialize(0, "2025-11-25"));
    assert_eq!(
        init["result"]["capabilities"]["resources"],
        json!({"listChanged": true})
    );
    p.send(INITIALIZED);
    let r = p.ask(&request(
        json!(1),
        "resources/subscribe",
        json!({"uri": "test://static/text"}),
    ));
    assert_eq!(error_code(&r), -32601);
    // Nor does discover declare it for 2026-07-28 (listen streams would not honour it).
    let discover = p.ask(&modern(json!(2), "server/discover", json!({})));
    assert_eq!(
        discover["result"]["capabilities"]["resources"],
        json!({"listChanged": true})
    );
}

#[test]
fn deferred_reads_are_answered_later() {
    for rev in ["2024-11-05", "2025-11-25", MODERN] {
        let mut p = pair_for(rev);
        // A listed resource and a template match, both deferred by the handler.
        assert!(p
            .send(&req(
                rev,
                json!("a"),
                "resources/read",
                json!({"uri": "test://static/slow"})
            ))
            .is_empty());
        assert!(p
            .send(&req(
                rev,
                json!("b"),
                "resources/read",
                json!({"uri": "test://deferred/x"})
            ))
            .is_empty());
        assert_eq!(p.calls.len(), 2);
        assert_eq!(p.calls[0].1, "resources/read");
        assert_eq!(p.calls[0].2, json!({"uri": "test://static/slow"}));
        assert_eq!(p.calls[1].2, json!({"uri": "test://deferred/x"}));
        let (a, b) = (p.calls[0].0, p.calls[1].0);
        // Completed out of order.
        let tx = p.session.complete_read(b, &mut p.out, |r| {
            r.text("test://deferred/x", Some("text/plain"), "later")
                .blob("test://deferred/x#raw", None, "AA==");
        });
        let v = p.answered(tx).unwrap();
        assert_eq!(v["id"], "b");
        assert_eq!(
            v["result"]["contents"],
            json!([
                {"uri": "test://deferred/x", "mimeType": "text/plain", "text": "later"},
                {"uri": "test://deferred/x#raw", "blob": "AA=="}
            ])
        );
        assert_eq!(v["result"].get("ttlMs").is_some(), rev == MODERN);
        let tx = p.session.complete_read(a, &mut p.out, |r| {
            r.text("test://static/slow", None, "slow");
        });
        let v = p.answered(tx).unwrap();
        assert_eq!(v["id"], "a");
        assert_eq!(v["result"]["contents"][0]["text"], "slow");
        assert_eq!(p.session.calls_in_flight(), 0);
        // A finished call cannot be completed twice.
        assert!(p.session.complete_read(a, &mut p.out, |_| {}).is_err());
        // A read token is not a tool call token.
        p.send(&req(
            rev,
            json!("c"),
            "resources/read",
            json!({"uri": "test://static/slow"}),
        ));
        let c = p.calls[2].0;
        assert_eq!(
            p.session.complete(c, &mut p.out, |r| {
                r.text("x");
            }),
            Err(mcp_rs_core::CallError::WrongKind)
        );
        let tx = p.session.complete_read(c, &mut p.out, |r| {
            r.text("test://static/slow", None, "ok");
        });
        assert!(p.answered(tx).is_some());
    }
}

#[test]
fn deferred_not_found_names_the_uri() {
    for rev in ["2024-11-05", "2025-06-18", MODERN] {
        let mut p = pair_for(rev);
        let expected = if rev == MODERN { -32602 } else { -32002 };
        for (id, uri) in [(1, "test://deferred/gone"), (2, "test://static/slow")] {
            p.send(&req(
                rev,
                json!(id),
                "resources/read",
                json!({ "uri": uri }),
            ));
            let token = p.calls.last().unwrap().0;
            // `not_found` discards anything written; writing nothing is not found too.
            let tx = if id == 1 {
                p.session.complete_read(token, &mut p.out, |r| {
                    r.text(uri, None, "discarded");
                    r.not_found();
                })
            } else {
                p.session.complete_read(token, &mut p.out, |_| {})
            };
            let v = p.answered(tx).unwrap();
            assert_eq!(v["id"], id);
            assert!(v.get("result").is_none(), "{rev}: {v}");
            assert_eq!(error_code(&v), expected, "{rev}: {v}");
            assert_eq!(v["error"]["data"]["uri"], uri, "{rev}: {v}");
        }
        assert_eq!(p.session.calls_in_flight(), 0);
    }
    // An escaped URI is kept as sent and named decoded.
    let mut p = Pair::full();
    p.send(r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test:\/\/deferred\/\u0078","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#);
    assert_eq!(p.calls[0].2, json!({"uri": "test://deferred/x"}));
    let tx = p
        .session
        .complete_read(p.calls[0].0, &mut p.out, |r| r.not_found());
    let v = p.answered(tx).unwrap();
    assert_eq!(v["error"]["data"]["uri"], "test://deferred/x", "{v}");
    // A URI longer than a call slot keeps (64 bytes of JSON) is still not found, unnamed.
    let mut p = Pair::full();
    let long = format!("test://deferred/{}", "x".repeat(60));
    p.send(&modern(json!(1), "resources/read", json!({ "uri": long })));
    let tx = p
        .session
        .complete_read(p.calls[0].0, &mut p.out, |r| r.not_found());
    let v = p.answered(tx).unwrap();
    assert_eq!(error_code(&v), -32602);
    assert!(v["error"].get("data").is_none(), "{v}");
}

#[test]
fn a_cancelled_deferred_read_is_never_answered() {
    let mut p = Pair::full();
    p.send(&modern(
        json!(7),
        "resources/read",
        json!({"uri": "test://deferred/x"}),
    ));
    let token = p.calls[0].0;
    assert!(p
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#)
        .is_empty());
    assert_eq!(p.events, [mcp_rs_core::Event::Cancelled(token)]);
    let tx = p.session.complete_read(token, &mut p.out, |r| {
        r.text("test://deferred/x", None, "late");
    });
    assert_eq!(tx, Ok(None));
}
