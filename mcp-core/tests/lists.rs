//! The list engine across its four lists (tools, prompts, resources, resource templates):
//! kind-tagged cursors (another list's cursor, garbage, foreign keys and stale cursors are
//! -32602), 2026-07-28 cache hints (`ttlMs`, `cacheScope`) on every cacheable result, and
//! legacy `list_changed` notifications per list. Every frame is schema-validated.

mod pair;

use mcp_rs_core::{CacheScope, Config, ListKind, SecretKey};
use pair::*;
use serde_json::{json, Value};

const LISTS: [&str; 4] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

fn paged(key: u8) -> Config {
    Config {
        page_size: 1,
        ..Config::new(SecretKey([key; 16]))
    }
}

fn req(legacy: bool, id: Value, method: &str, params: Value) -> String {
    if legacy {
        request(id, method, params)
    } else {
        modern(id, method, params)
    }
}

/// The first page's `nextCursor` of every list.
fn first_cursors(p: &mut Pair, legacy: bool) -> Vec<String> {
    LISTS
        .iter()
        .map(|m| {
            let r = p.ask(&req(legacy, json!(m), m, json!({})));
            r["result"]["nextCursor"]
                .as_str()
                .unwrap_or_else(|| panic!("{m}: {r}"))
                .to_string()
        })
        .collect()
}

#[test]
fn a_cursor_only_pages_its_own_list() {
    for legacy in [true, false] {
        let mut p = Pair::full_with(paged(3));
        if legacy {
            p.init("2025-11-25", json!({}));
        }
        let cursors = first_cursors(&mut p, legacy);
        for (i, minted_for) in LISTS.iter().enumerate() {
            for (j, method) in LISTS.iter().enumerate() {
                let r = p.ask(&req(
                    legacy,
                    json!(1),
                    method,
                    json!({"cursor": cursors[i]}),
                ));
                if i == j {
                    assert!(r.get("result").is_some(), "{method}: {r}");
                } else {
                    assert_eq!(error_code(&r), -32602, "{minted_for} cursor on {method}");
                    assert_eq!(r["error"]["message"], "Cursor of another list");
                }
            }
        }
    }
}

#[test]
fn garbage_and_foreign_cursors_are_invalid_params() {
    let mut p = Pair::full_with(paged(3));
    // A well-formed cursor of a server with another key.
    let mut other = Pair::full_with(paged(4));
    let foreign = first_cursors(&mut other, false);
    let garbage = [
        json!("garbage"),
        json!(""),
        json!("AgEAAAAAAwAAAN1-bTsoLmE7AgEAAAAAAwAAAN1-bTsoLmE7"),
        json!(7),
        json!({"offset": 1}),
        json!("\u{00e9}\u{00e9}\u{00e9}"),
    ];
    for method in LISTS {
        for (id, cursor) in garbage.iter().enumerate() {
            let r = p.ask(&modern(json!(id), method, json!({ "cursor": cursor })));
            assert_eq!(error_code(&r), -32602, "{method} {cursor}: {r}");
            assert_eq!(r["error"]["message"], "Invalid cursor");
        }
    }
    for (method, cursor) in LISTS.iter().zip(&foreign) {
        let r = p.ask(&modern(json!(9), method, json!({ "cursor": cursor })));
        assert_eq!(error_code(&r), -32602, "{method}: {r}");
    }
    // A null cursor is the first page.
    let r = p.ask(&modern(json!(10), "prompts/list", json!({"cursor": null})));
    assert_eq!(r["result"]["prompts"][0]["name"], "greet");
}

#[test]
fn a_change_stales_only_that_lists_cursors() {
    let mut p = Pair::full_with(paged(3));
    let cursors = first_cursors(&mut p, false);
    p.session.list_changed(ListKind::Prompts);
    for (method, cursor) in LISTS.iter().zip(&cursors) {
        let r = p.ask(&modern(json!(1), method, json!({ "cursor": cursor })));
        if *method == "prompts/list" {
            assert_eq!(error_code(&r), -32602, "{r}");
            assert_eq!(
                r["error"]["message"],
                "Stale cursor: the list changed, list again from the start"
            );
        } else {
            assert!(r.get("result").is_some(), "{method}: {r}");
        }
    }
}

#[test]
fn modern_cacheable_results_carry_cache_hints() {
    let config = Config {
        list_ttl_ms: 30_000,
        cache_scope: CacheScope::Private,
        ..Config::new(SecretKey([1; 16]))
    };
    let mut p = Pair::full_with(config);
    let cacheable = [
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "test://static/text"})),
        ("server/discover", json!({})),
    ];
    for (method, params) in &cacheable {
        let r = p.ask(&modern(json!(1), method, params.clone()));
        assert_eq!(r["result"]["ttlMs"], 30_000, "{method}: {r}");
        assert_eq!(r["result"]["cacheScope"], "private", "{method}");
        assert_eq!(r["result"]["resultType"], "complete", "{method}");
    }
    // Not cacheable: calls, prompts/get, completion.
    for (method, params) in [
        ("tools/call", json!({"name": "echo"})),
        ("prompts/get", json!({"name": "media"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": ""}}),
        ),
    ] {
        let r = p.ask(&modern(json!(2), method, params));
        assert!(r["result"].get("ttlMs").is_none(), "{method}: {r}");
        assert!(r["result"].get("cacheScope").is_none(), "{method}: {r}");
    }
    // Legacy results have neither.
    p.init("2025-11-25", json!({}));
    for (method, params) in cacheable.iter().take(5) {
        let r = p.ask(&request(json!(3), method, params.clone()));
        assert!(r["result"].get("ttlMs").is_none(), "{method}: {r}");
        assert!(r["result"].get("resultType").is_none(), "{method}: {r}");
    }
}

#[test]
fn legacy_list_changes_are_notified_per_list() {
    let mut p = Pair::full();
    p.init("2025-06-18", json!({}));
    p.session.list_changed(ListKind::Prompts);
    p.session.list_changed(ListKind::ResourceTemplates);
    p.session.list_changed(ListKind::Resources);
    p.session.list_changed(ListKind::Prompts);
    p.session.tools_changed();
    let methods: Vec<Value> = p
        .pending()
        .into_iter()
        .map(|f| {
            assert_eq!(f.route, mcp_rs_core::Route::Session);
            assert_eq!(f.value["params"], json!({}));
            f.value["method"].clone()
        })
        .collect();
    // One per list (templates ride on the resource list's), coalesced.
    assert_eq!(
        methods,
        [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed"
        ]
    );
    assert!(p.pending().is_empty());
    // Without list_changed nothing is declared or sent.
    let mut quiet = Pair::full_with(Config {
        list_changed: false,
        ..Config::new(SecretKey([1; 16]))
    });
    let init = quiet.ask(&initialize(0, "2025-06-18"));
    assert_eq!(init["result"]["capabilities"]["prompts"], json!({}));
    quiet.send(INITIALIZED);
    quiet.session.list_changed(ListKind::Prompts);
    assert!(quiet.pending().is_empty());
}
