//! Argument completion (`completion/complete`) in both eras: `ref/prompt` and
//! `ref/resource`, `context.arguments`, deferred completion, the value cap, and the error
//! paths (unknown prompt or template, malformed params: -32602; no completions capability:
//! -32601). Every frame is schema-validated for its revision by the pair.

mod pair;

use pair::*;
use serde_json::{json, Value};

fn pair_for(rev: &str) -> Pair {
    let mut p = Pair::full();
    if rev != MODERN {
        p.init(rev, json!({}));
    }
    p
}

fn req(rev: &str, id: Value, params: Value) -> String {
    if rev == MODERN {
        modern(id, "completion/complete", params)
    } else {
        request(id, "completion/complete", params)
    }
}

fn prompt_ref(name: &str, value: &str) -> Value {
    json!({"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": "name", "value": value}})
}

fn resource_ref(uri: &str, argument: &str, value: &str) -> Value {
    json!({"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": argument, "value": value}})
}

const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    MODERN,
];

#[test]
fn prompt_and_resource_references() {
    for rev in REVISIONS {
        let mut p = pair_for(rev);
        let r = p.ask(&req(rev, json!(1), prompt_ref("greet", "al")));
        assert_eq!(
            r["result"]["completion"],
            json!({"values": ["alice", "albert"], "total": 2}),
            "{rev}: {r}"
        );
        let r = p.ask(&req(
            rev,
            json!(2),
            resource_ref("test://items/{id}", "id", "1"),
        ));
        assert_eq!(
            r["result"]["completion"],
            json!({"values": ["1", "12", "123"], "total": 3})
        );
        // Nothing matches: an empty list, not an error.
        let r = p.ask(&req(rev, json!(3), prompt_ref("greet", "zz")));
        assert_eq!(r["result"]["completion"], json!({"values": [], "total": 0}));
        // A listed resource's URI is a valid reference too.
        let r = p.ask(&req(
            rev,
            json!(4),
            resource_ref("test://static/text", "x", ""),
        ));
        assert_eq!(r["result"]["completion"]["values"], json!([]));
        assert_eq!(r["result"].get("resultType").is_some(), rev == MODERN);
        // completion/complete is not cacheable.
        assert!(r["result"].get("ttlMs").is_none());
    }
}

#[test]
fn context_arguments_reach_the_handler() {
    for rev in ["2025-06-18", "2025-11-25", MODERN] {
        let mut p = pair_for(rev);
        let mut params = prompt_ref("greet", "b");
        params["context"] = json!({"arguments": {"style": "formal"}});
        let r = p.ask(&req(rev, json!(1), params));
        assert_eq!(r["result"]["completion"]["values"], json!(["BOB"]), "{rev}");
        let mut params = resource_ref("test://items/{id}", "id", "2");
        params["context"] = json!({"arguments": {"style": "formal", "other": 1}});
        let r = p.ask(&req(rev, json!(2), params));
        assert_eq!(r["result"]["completion"]["values"], json!(["2"]));
        // A context without `arguments` (or not an object) is ignored.
        let mut params = prompt_ref("greet", "b");
        params["context"] = json!({"arguments": "formal"});
        let r = p.ask(&req(rev, json!(3), params));
        assert_eq!(r["result"]["completion"]["values"], json!(["bob"]));
    }
}

#[test]
fn unknown_references_and_bad_params_are_invalid_params() {
    for rev in ["2024-11-05", "2025-11-25", MODERN] {
        let mut p = pair_for(rev);
        let r = p.ask(&req(rev, json!(1), prompt_ref("nope", "a")));
        assert_eq!(error_code(&r), -32602, "{rev}: {r}");
        assert_eq!(r["error"]["message"], "Unknown prompt: nope");
        let r = p.ask(&req(
            rev,
            json!(2),
            resource_ref("test://other/{x}", "x", ""),
        ));
        assert_eq!(error_code(&r), -32602);
        assert_eq!(r["error"]["data"]["uri"], "test://other/{x}");
        let bad = [
            json!({}),
            json!({"ref": "greet", "argument": {"name": "name", "value": ""}}),
            json!({"ref": {"type": "ref/tool", "name": "echo"}, "argument": {"name": "a", "value": ""}}),
            json!({"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": ""}}),
            json!({"ref": {"type": "ref/resource", "name": "x"}, "argument": {"name": "a", "value": ""}}),
            json!({"ref": {"type": "ref/prompt", "name": "greet"}}),
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name"}}),
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"value": "a"}}),
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": 1}}),
        ];
        for (id, params) in bad.into_iter().enumerate() {
            let r = p.ask(&req(rev, json!(10 + id), params.clone()));
            assert_eq!(error_code(&r), -32602, "{rev} {params}: {r}");
        }
    }
}

#[test]
fn a_prompt_reference_needs_the_prompt_capability() {
    // Completions without prompts: every prompt reference is unknown.
    let mut p = Pair::full();
    p.ext.prompts = None;
    let r = p.ask(&req(MODERN, json!(1), prompt_ref("greet", "a")));
    assert_eq!(error_code(&r), -32602, "{r}");
}

#[test]
fn no_completions_capability_is_method_not_found() {
    let mut p = Pair::full();
    p.ext.completions = None;
    let discover = p.ask(&modern(json!(0), "server/discover", json!({})));
    assert!(discover["result"]["capabilities"]
        .get("completions")
        .is_none());
    let r = p.ask(&req(MODERN, json!(1), prompt_ref("greet", "a")));
    assert_eq!(error_code(&r), -32601, "{r}");
    p.init("2025-06-18", json!({}));
    let r = p.ask(&req("2025-06-18", json!(2), prompt_ref("greet", "a")));
    assert_eq!(error_code(&r), -32601, "{r}");
    // The check comes first: even a malformed request gets -32601.
    let r = p.ask(&req("2025-06-18", json!(3), json!({})));
    assert_eq!(error_code(&r), -32601, "{r}");
    let mut tools_only = Pair::new();
    let r = tools_only.ask(&req(MODERN, json!(1), prompt_ref("greet", "a")));
    assert_eq!(error_code(&r), -32601);
}

#[test]
fn the_capability_is_declared_from_2025_03_26() {
    for (rev, declared) in [
        ("2024-11-05", false),
        ("2025-03-26", true),
        ("2025-11-25", true),
    ] {
        let mut p = Pair::full();
        let init = p.ask(&initialize(1, rev));
        assert_eq!(
            init["result"]["capabilities"].get("completions").is_some(),
            declared,
            "{rev}: {init}"
        );
    }
    let mut p = Pair::full();
    let discover = p.ask(&modern(json!(1), "server/discover", json!({})));
    assert_eq!(discover["result"]["capabilities"]["completions"], json!({}));
}

#[test]
fn deferred_completion_and_the_value_cap() {
    for rev in ["2025-03-26", MODERN] {
        let mut p = pair_for(rev);
        let params = resource_ref("test://deferred/{name}", "name", "f");
        assert!(p.send(&req(rev, json!("c1"), params)).is_empty());
        assert_eq!(p.calls[0].1, "completion/complete");
        assert_eq!(p.calls[0].2, json!({"argument": "name", "value": "f"}));
        let token = p.calls[0].0;
        // More than the spec's 100 values: the rest are dropped and hasMore is set.
        let names: Vec<String> = (0..150).map(|i| format!("f{i:03}")).collect();
        let tx = p.session.complete_completion(token, &mut p.out, |r| {
            for n in &names {
                r.value(n);
            }
            r.total(150);
        });
        let v = p.answered(tx).unwrap();
        assert_eq!(v["id"], "c1");
        let completion = &v["result"]["completion"];
        assert_eq!(completion["values"].as_array().unwrap().len(), 100);
        assert_eq!(completion["values"][99], "f099");
        assert_eq!(completion["total"], 150);
        assert_eq!(completion["hasMore"], true);
        assert_eq!(p.session.calls_in_flight(), 0);
    }
}
