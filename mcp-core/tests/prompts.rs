//! Prompts in both eras: `prompts/list` (per-revision fields), `prompts/get` with
//! arguments, every content type in messages, deferred rendering, and the -32602 paths
//! (unknown prompt, missing required argument, bad argument values). Every frame is
//! schema-validated for its revision by the pair.

mod pair;

use mcp_rs_core::{CallError, Content, Role};
use pair::*;
use serde_json::{json, Value};

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

fn pair_for(rev: &str) -> Pair {
    let mut p = Pair::full();
    if rev != MODERN {
        p.init(rev, json!({}));
    }
    p
}

fn req(rev: &str, id: Value, method: &str, params: Value) -> String {
    if rev == MODERN {
        modern(id, method, params)
    } else {
        request(id, method, params)
    }
}

fn all_revisions() -> impl Iterator<Item = &'static str> {
    LEGACY.into_iter().chain([MODERN])
}

#[test]
fn list_follows_the_revision() {
    for rev in all_revisions() {
        let mut p = pair_for(rev);
        let r = p.ask(&req(rev, json!(1), "prompts/list", json!({})));
        let prompts = r["result"]["prompts"].as_array().expect("prompts");
        let names: Vec<&str> = prompts
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["greet", "media", "slow_prompt", "ask"]);
        let greet = &prompts[0];
        assert_eq!(greet["description"], "Greets someone");
        let titled = rev >= "2025-06-18";
        assert_eq!(greet.get("title").is_some(), titled, "{rev}: {greet}");
        assert_eq!(greet.get("_meta").is_some(), titled, "{rev}: {greet}");
        let args = greet["arguments"].as_array().unwrap();
        assert_eq!(args[0]["name"], "name");
        assert_eq!(args[0]["required"], true);
        assert_eq!(args[0].get("title").is_some(), titled);
        assert_eq!(args[1]["name"], "style");
        assert!(args[1].get("required").is_none());
        // A prompt without arguments lists none.
        assert!(prompts[1].get("arguments").is_none());
        assert_eq!(r["result"].get("ttlMs").is_some(), rev == MODERN);
    }
}

#[test]
fn get_with_arguments() {
    for rev in all_revisions() {
        let mut p = pair_for(rev);
        let r = p.ask(&req(
            rev,
            json!(1),
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        ));
        assert_eq!(r["result"]["description"], "A greeting", "{rev}: {r}");
        assert_eq!(
            r["result"]["messages"],
            json!([
                {"role": "user", "content": {"type": "text", "text": "Hi Ada!"}},
                {"role": "assistant", "content": {"type": "text", "text": "Hello!"}}
            ])
        );
        let r = p.ask(&req(
            rev,
            json!(2),
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada", "style": "formal"}}),
        ));
        assert_eq!(
            r["result"]["messages"][0]["content"]["text"],
            "Good day, Ada."
        );
        if rev == MODERN {
            assert_eq!(r["result"]["resultType"], "complete");
            // prompts/get is not cacheable.
            assert!(r["result"].get("ttlMs").is_none());
        }
    }
}

#[test]
fn every_content_type_in_messages() {
    for rev in all_revisions() {
        let mut p = pair_for(rev);
        let r = p.ask(&req(rev, json!(1), "prompts/get", json!({"name": "media"})));
        let messages = r["result"]["messages"].as_array().expect("messages");
        assert_eq!(messages.len(), 5, "{rev}: {r}");
        assert!(r["result"].get("description").is_none());
        assert_eq!(
            messages[0]["content"],
            json!({"type": "text", "text": "look"})
        );
        assert_eq!(
            messages[1]["content"],
            json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
        );
        // Audio exists from 2025-03-26 on; 2024-11-05 gets a text placeholder.
        if rev == "2024-11-05" {
            assert_eq!(messages[2]["content"]["type"], "text", "{r}");
            assert!(messages[2]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("audio"));
        } else {
            assert_eq!(
                messages[2]["content"],
                json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
            );
        }
        assert_eq!(
            messages[3],
            json!({"role": "assistant", "content": {"type": "resource", "resource":
                {"uri": "test://static/text", "mimeType": "text/plain", "text": "hello"}}})
        );
        let blob = &messages[4]["content"];
        assert_eq!(blob["type"], "resource");
        assert_eq!(
            blob["resource"],
            json!({"uri": "test://static/blob", "mimeType": "application/octet-stream", "blob": "AAECAw=="})
        );
        assert_eq!(blob["annotations"]["audience"], json!(["assistant"]));
        assert_eq!(blob["annotations"]["priority"], 1.0);
    }
}

#[test]
fn unknown_prompt_and_bad_arguments_are_invalid_params() {
    for rev in all_revisions() {
        let mut p = pair_for(rev);
        let cases = [
            (json!({"name": "nope"}), "Unknown prompt: nope"),
            (json!({"name": "greet"}), "Missing required argument: name"),
            (
                json!({"name": "greet", "arguments": {"style": "formal"}}),
                "Missing required argument: name",
            ),
            (
                json!({"name": "greet", "arguments": {"name": 5}}),
                "Prompt argument values must be strings: name",
            ),
            (
                json!({"name": "greet", "arguments": ["Ada"]}),
                "params.arguments must be an object",
            ),
            (json!({}), "params.name must be a string"),
            (json!({"name": 1}), "params.name must be a string"),
        ];
        for (id, (params, message)) in cases.into_iter().enumerate() {
            let r = p.ask(&req(rev, json!(id), "prompts/get", params.clone()));
            assert_eq!(error_code(&r), -32602, "{rev} {params}: {r}");
            assert_eq!(r["error"]["message"], message, "{rev} {params}");
        }
    }
}

#[test]
fn prompts_need_the_capability() {
    let mut p = Pair::new();
    let discover = p.ask(&modern(json!(1), "server/discover", json!({})));
    assert!(discover["result"]["capabilities"].get("prompts").is_none());
    for (method, params) in [
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "x"}}),
        ),
    ] {
        assert_eq!(
            error_code(&p.ask(&modern(json!(2), method, params))),
            -32601
        );
    }
    let mut p = Pair::initialized("2025-06-18");
    assert_eq!(
        error_code(&p.ask(&request(json!(1), "prompts/list", json!({})))),
        -32601
    );
    let mut full = Pair::full();
    let init = full.ask(&initialize(1, "2025-06-18"));
    assert_eq!(
        init["result"]["capabilities"]["prompts"],
        json!({"listChanged": true})
    );
}

#[test]
fn deferred_prompts_are_rendered_later() {
    for rev in ["2024-11-05", "2025-11-25", MODERN] {
        let mut p = pair_for(rev);
        let msg = req(
            rev,
            json!("p1"),
            "prompts/get",
            json!({"name": "slow_prompt", "arguments": {"topic": "rust"}}),
        );
        assert!(p.send(&msg).is_empty());
        assert_eq!(p.calls[0].1, "prompts/get");
        assert_eq!(
            p.calls[0].2,
            json!({"name": "slow_prompt", "arguments": {"topic": "rust"}})
        );
        let token = p.calls[0].0;
        // A tool completion does not fit a prompt call.
        assert_eq!(
            p.session.complete(token, &mut p.out, |r| {
                r.text("x");
            }),
            Err(CallError::WrongKind)
        );
        // Misuse (a description after a message) sends nothing and keeps the call.
        assert_eq!(
            p.session.complete_prompt(token, &mut p.out, |r| {
                r.message(Role::User, &Content::Text("a"));
                r.description("late");
            }),
            Err(CallError::ResultMisused)
        );
        let tx = p.session.complete_prompt(token, &mut p.out, |r| {
            r.description("About rust")
                .message(Role::User, &Content::Text("Tell me about rust"));
        });
        let v = p.answered(tx).unwrap();
        assert_eq!(v["id"], "p1");
        assert_eq!(v["result"]["description"], "About rust");
        assert_eq!(
            v["result"]["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Tell me about rust"}}])
        );
        assert_eq!(v["result"].get("resultType").is_some(), rev == MODERN);
        assert_eq!(p.session.calls_in_flight(), 0);
        // A prompt rendered with no messages is a valid, empty result.
        p.send(&req(
            rev,
            json!("p2"),
            "prompts/get",
            json!({"name": "slow_prompt"}),
        ));
        let tx = p.session.complete_prompt(p.calls[1].0, &mut p.out, |_| {});
        let v = p.answered(tx).unwrap();
        assert_eq!(v["result"]["messages"], json!([]));
    }
}
