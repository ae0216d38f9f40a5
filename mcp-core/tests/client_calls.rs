//! The client against our own server `Session` while calls are in flight: deferred tools
//! with progress, cancellation, timeouts, a server-to-client sampling request answered by
//! the caller, the server's pings and notifications, and 2026-07-28 `input_required`
//! rounds. Every client frame is schema-validated under its revision, every server frame by
//! the pair.

mod client_link;
mod pair;

use client_link::{info, Ev, Link};
use mcp_rs_core::client::{Answers, ClientConfig, ClientError, Mode, Options, Request};
use mcp_rs_core::wire::method::{Method, ServerMethod};
use mcp_rs_core::{ClientCaps, ClientMethod, Event, ListKind, LogLevel};
use pair::Pair;
use serde_json::{json, Value};

fn config(mode: Mode, capabilities: ClientCaps) -> ClientConfig<'static> {
    ClientConfig {
        mode,
        capabilities,
        ..ClientConfig::new(info())
    }
}

fn all_caps() -> ClientCaps {
    ClientCaps::SAMPLING
        .with(ClientCaps::ELICITATION)
        .with(ClientCaps::ROOTS)
}

const ERAS: [Mode; 2] = [Mode::Legacy, Mode::Auto];

const SLOW: Request<'static> = Request::CallTool {
    name: "slow",
    arguments: Some(r#"{"n":1}"#),
};

/// Sends `slow` and returns its handle and the server's call token.
fn start_slow(
    link: &mut Link,
    options: Options,
) -> (mcp_rs_core::client::RequestHandle, mcp_rs_core::CallToken) {
    let h = link.send(&SLOW, options);
    assert!(link.take().is_empty(), "a deferred call has no answer yet");
    let (token, name, args) = link.pair.calls.pop().expect("the call was deferred");
    assert_eq!((name.as_str(), args), ("slow", json!({"n": 1})));
    (h, token)
}

#[test]
fn a_deferred_tool_reports_progress_then_its_result() {
    for mode in ERAS {
        let mut link = Link::connected(config(mode, ClientCaps::NONE), Pair::full());
        let (h, token) = start_slow(&mut link, Options::default().with_progress());
        let sent = link.sent.last().unwrap().clone();
        assert_eq!(
            sent["params"]["_meta"]["progressToken"], sent["id"],
            "{mode:?}"
        );

        for (done, message) in [(1.0, "a quarter"), (3.0, "three quarters")] {
            let tx = link
                .pair
                .session
                .progress(token, done, Some(4.0), Some(message), &mut link.pair.out)
                .unwrap()
                .expect("progress was asked for");
            link.deliver(tx);
            link.run();
            match link.take().as_slice() {
                [Ev::Progress {
                    handle,
                    progress,
                    total: Some(total),
                    message: Some(m),
                }] if *handle == h && *progress == done && *total == 4.0 && m == message => {}
                other => panic!("{mode:?}: {other:?}"),
            }
        }
        let done = link.pair.complete_text(token, "finished").unwrap();
        link.inject(&done.to_string());
        link.run();
        match link.take().as_slice() {
            [Ev::Result { handle, read, .. }] if *handle == h => {
                assert_eq!(read.text.as_deref(), Some("finished"))
            }
            other => panic!("{mode:?}: {other:?}"),
        }
        // Progress that arrives after the response is ignored.
        let id = &sent["id"];
        link.inject(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":4}}}}"#
        ));
        link.run();
        assert!(link.take().is_empty());
        assert_eq!(link.client.requests_in_flight(), 0);
    }
}

#[test]
fn progress_is_only_routed_to_requests_that_asked_for_it() {
    let mut link = Link::connected(config(Mode::Legacy, ClientCaps::NONE), Pair::full());
    let (_, token) = start_slow(&mut link, Options::default());
    assert!(link.sent.last().unwrap()["params"].get("_meta").is_none());
    // The server sends none (no token); one forged with the request's id is ignored.
    let none = link
        .pair
        .session
        .progress(token, 1.0, None, None, &mut link.pair.out)
        .unwrap();
    assert!(none.is_none());
    let id = link.sent.last().unwrap()["id"].clone();
    link.inject(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":1}}}}"#
    ));
    link.run();
    assert!(link.take().is_empty());
}

#[test]
fn cancelling_sends_notifications_cancelled_and_forgets_the_request() {
    for mode in ERAS {
        let mut link = Link::connected(config(mode, ClientCaps::NONE), Pair::full());
        let (h, token) = start_slow(&mut link, Options::default());
        let id = link.sent.last().unwrap()["id"].clone();
        let tx = link
            .client
            .cancel(h, Some("user pressed stop"), &mut link.out)
            .unwrap()
            .expect("a frame for the server");
        link.transmit(tx.len);
        link.run();
        let cancel = link.sent.last().unwrap();
        assert_eq!(
            cancel["params"],
            json!({"requestId": id, "reason": "user pressed stop"})
        );
        assert!(
            link.pair.events.contains(&Event::Cancelled(token)),
            "{mode:?}"
        );
        assert!(link
            .pair
            .session
            .complete(token, &mut link.pair.out, |r| {
                r.text("late");
            })
            .unwrap()
            .is_none());
        assert_eq!(link.client.requests_in_flight(), 0);
        assert_eq!(
            link.client.cancel(h, None, &mut link.out).unwrap_err(),
            ClientError::UnknownRequest
        );
        // A response that crosses the cancellation is not the request's any more.
        link.inject(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#
        ));
        link.run();
        assert!(matches!(
            link.take().as_slice(),
            [Ev::Invalid(
                mcp_rs_core::client::InvalidFrame::UnknownResponse
            )]
        ));
    }
}

#[test]
fn a_request_times_out_at_its_deadline() {
    for mode in ERAS {
        let mut link = Link::connected(config(mode, ClientCaps::NONE), Pair::full());
        let start = link.now;
        let (h, token) = start_slow(&mut link, Options::default().with_timeout(500));
        let id = link.sent.last().unwrap()["id"].clone();
        assert_eq!(link.client.poll_timeout(), Some(start + 500));

        link.now = start + 499;
        link.client.handle_timeout(link.now);
        link.run();
        assert!(link.take().is_empty());
        assert_eq!(link.sent.last().unwrap()["method"], "tools/call");

        link.now = start + 500;
        link.client.handle_timeout(link.now);
        link.run();
        let cancel = link.sent.last().unwrap();
        assert_eq!(cancel["method"], "notifications/cancelled");
        assert_eq!(
            cancel["params"],
            json!({"requestId": id, "reason": "timed out"})
        );
        match link.take().as_slice() {
            [Ev::TimedOut {
                handle,
                method: Method::ToolsCall,
            }] if *handle == h => {}
            other => panic!("{mode:?}: {other:?}"),
        }
        assert!(link.pair.events.contains(&Event::Cancelled(token)));
        assert_eq!(link.client.poll_timeout(), None);
        assert_eq!(link.client.requests_in_flight(), 0);
    }
}

#[test]
fn the_config_timeout_applies_when_a_request_sets_none() {
    let mut config = config(Mode::Legacy, ClientCaps::NONE);
    config.request_timeout_ms = 2_000;
    let mut link = Link::connected(config, Pair::full());
    let start = link.now;
    let _ = start_slow(&mut link, Options::default());
    assert_eq!(link.client.poll_timeout(), Some(start + 2_000));
    // Draining events before frames still reports the timeout once, then sends the cancel.
    link.client.handle_timeout(start + 2_000);
    assert!(matches!(
        link.client.poll_event().map(client_link::own),
        Some(Ev::TimedOut { .. })
    ));
    assert!(link.client.poll_event().is_none());
    assert_eq!(
        link.client.requests_in_flight(),
        1,
        "the cancellation is still owed"
    );
    link.run();
    assert_eq!(
        link.sent.last().unwrap()["method"],
        "notifications/cancelled"
    );
    assert_eq!(link.client.requests_in_flight(), 0);
}

#[test]
fn a_sampling_request_is_answered_by_the_caller() {
    let mut link = Link::connected(config(Mode::Legacy, all_caps()), Pair::full());
    let h = link.send(
        &Request::CallTool {
            name: "needs_sampling",
            arguments: None,
        },
        Options::default(),
    );
    let (token, ..) = link.pair.calls.pop().expect("deferred");
    let params = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}],"maxTokens":20}"#;
    let tx = link
        .pair
        .session
        .request(
            token,
            ClientMethod::CreateMessage,
            params,
            5_000,
            &mut link.pair.out,
        )
        .unwrap()
        .unwrap();
    link.deliver(tx);
    link.run();
    let id = match link.take().as_slice() {
        [Ev::Request {
            id,
            method: ServerMethod::CreateMessage,
            params: p,
        }] => {
            assert_eq!(p["maxTokens"], 20);
            *id
        }
        other => panic!("{other:?}"),
    };
    let answer =
        r#"{"role":"assistant","content":{"type":"text","text":"hi"},"model":"test-model"}"#;
    let tx = link.client.respond(&id, answer, &mut link.out).unwrap();
    link.transmit(tx.len);
    link.run();
    let outcome = link.pair.responses.pop().expect("routed to the call");
    assert_eq!(outcome.0, token);
    assert_eq!(outcome.1.unwrap()["content"]["text"], "hi");

    // A second request, declined by the user.
    let tx = link
        .pair
        .session
        .request(
            token,
            ClientMethod::ListRoots,
            "{}",
            5_000,
            &mut link.pair.out,
        )
        .unwrap()
        .unwrap();
    link.deliver(tx);
    link.run();
    let id = match link.take().as_slice() {
        [Ev::Request {
            id,
            method: ServerMethod::ListRoots,
            ..
        }] => *id,
        other => panic!("{other:?}"),
    };
    let tx = link
        .client
        .respond_error(&id, -1, "User declined", &mut link.out)
        .unwrap();
    link.transmit(tx.len);
    link.run();
    assert_eq!(link.pair.responses.pop().unwrap().1, Err(-1));
    assert_eq!(
        link.client.respond(&id, "[]", &mut link.out).unwrap_err(),
        ClientError::InvalidJson
    );

    let done = link.pair.complete_text(token, "sampled").unwrap();
    link.inject(&done.to_string());
    link.run();
    assert!(matches!(link.take().as_slice(), [Ev::Result { handle, .. }] if *handle == h));
}

#[test]
fn the_client_answers_pings_and_refuses_what_it_does_not_serve() {
    // Legacy, with no capability declared.
    let mut link = Link::connected(config(Mode::Legacy, ClientCaps::NONE), Pair::full());
    link.inject(r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#);
    link.inject(r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}"#);
    link.inject(r#"{"jsonrpc":"2.0","id":8,"method":"bogus/thing"}"#);
    link.run();
    assert!(link.take().is_empty(), "nothing for the application");
    let answers: Vec<&Value> = link.sent.iter().rev().take(3).rev().collect();
    assert_eq!(answers[0], &json!({"jsonrpc":"2.0","id":"p1","result":{}}));
    assert_eq!(answers[1]["id"], 7);
    assert_eq!(answers[1]["error"]["code"], -32601);
    assert_eq!(answers[2]["id"], 8);
    assert_eq!(answers[2]["error"]["code"], -32601);

    // 2026-07-28 servers send no requests: even a ping is refused.
    let mut link = Link::connected(config(Mode::Auto, all_caps()), Pair::full());
    link.inject(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    link.inject(r#"{"jsonrpc":"2.0","id":2,"method":"roots/list"}"#);
    link.run();
    assert!(link.take().is_empty());
    let last: Vec<i64> = link.sent[link.sent.len() - 2..]
        .iter()
        .map(|m| m["error"]["code"].as_i64().unwrap())
        .collect();
    assert_eq!(last, [-32601, -32601]);
}

#[test]
fn server_notifications_become_events() {
    let mut link = Link::connected(config(Mode::Legacy, ClientCaps::NONE), Pair::full());
    link.pair.session.tools_changed();
    link.pair.session.list_changed(ListKind::Prompts);
    for frame in link.pair.pending() {
        link.inject(&frame.value.to_string());
    }
    let tx = link
        .pair
        .session
        .resource_updated("test://static/text", &mut link.pair.out)
        .unwrap()
        .unwrap();
    link.deliver(tx);
    let tx = link
        .pair
        .session
        .log(
            None,
            LogLevel::Warning,
            Some("core"),
            "disk almost full",
            &mut link.pair.out,
        )
        .unwrap()
        .unwrap();
    link.deliver(tx);
    link.inject(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s-1","reason":"no longer needed"}}"#);
    link.inject(r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}"#);
    link.inject(r#"{"jsonrpc":"2.0","method":"notifications/some/extension","params":{}}"#);
    link.run();
    let events = link.take();
    assert!(
        matches!(
            events.as_slice(),
            [
                Ev::ListChanged(ListKind::Tools),
                Ev::ListChanged(ListKind::Prompts),
                Ev::ResourceUpdated(uri),
                Ev::Log { level: LogLevel::Warning, logger: Some(logger), data },
                Ev::Cancelled { request_id, reason: Some(reason) },
                Ev::ListChanged(ListKind::Resources),
            ] if uri == "test://static/text"
                && logger == "core"
                && data == "disk almost full"
                && request_id == "\"s-1\""
                && reason == "no longer needed"
        ),
        "{events:?}"
    );
}

#[test]
fn an_input_required_round_trip() {
    let mut link = Link::connected(config(Mode::Auto, all_caps()), Pair::full());
    let confirm = Request::CallTool {
        name: "confirm",
        arguments: Some("{}"),
    };
    let h = link.send(&confirm, Options::default());
    let state = match link.take().as_slice() {
        [Ev::InputRequired {
            handle,
            method: Method::ToolsCall,
            requests,
            state: Some(state),
        }] if *handle == h => {
            let keys: Vec<(&str, Option<ServerMethod>)> =
                requests.iter().map(|(k, m, _)| (k.as_str(), *m)).collect();
            assert_eq!(
                keys,
                [
                    ("confirm", Some(ServerMethod::Elicit)),
                    ("draft", Some(ServerMethod::CreateMessage)),
                    ("roots", Some(ServerMethod::ListRoots)),
                ]
            );
            assert_eq!(requests[0].2["message"], "Proceed?");
            state.clone()
        }
        other => panic!("{other:?}"),
    };
    // The round waits without a deadline.
    assert_eq!(link.client.requests_in_flight(), 1);
    assert_eq!(link.client.poll_timeout(), None);

    let responses = r#"{"confirm":{"action":"accept","content":{"ok":true}},"draft":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"},"roots":{"roots":[]}}"#;
    let answers = Answers {
        input_responses: Some(responses),
        request_state: Some(&state),
    };
    let other = Request::CallTool {
        name: "echo",
        arguments: None,
    };
    let mismatch = link
        .client
        .retry(
            h,
            &other,
            answers,
            Options::default(),
            link.now,
            &mut link.out,
        )
        .unwrap_err();
    assert_eq!(mismatch, ClientError::RetryMismatch);
    let sent = link
        .client
        .retry(
            h,
            &confirm,
            answers,
            Options::default(),
            link.now,
            &mut link.out,
        )
        .unwrap();
    assert_eq!(sent.handle, h, "the same request, the same handle");
    link.transmit(sent.len);
    link.run();
    let retried = link.sent.last().unwrap();
    assert_eq!(retried["params"]["requestState"], state.as_str());
    assert_eq!(
        retried["params"]["inputResponses"]["roots"],
        json!({"roots": []})
    );
    assert_ne!(retried["id"], link.sent[link.sent.len() - 2]["id"]);
    match link.take().as_slice() {
        [Ev::Result { handle, read, .. }] if *handle == h => {
            let text = read.text.as_deref().unwrap();
            assert!(text.starts_with("state=step:1 confirm="), "{text}");
        }
        other => panic!("{other:?}"),
    }
    let (seen_state, seen) = link.pair.tools.last_input.clone().unwrap();
    assert_eq!(seen_state, "step:1");
    assert_eq!(seen.unwrap()["confirm"]["action"], "accept");
    assert_eq!(
        link.client
            .retry(
                h,
                &confirm,
                answers,
                Options::default(),
                link.now,
                &mut link.out
            )
            .unwrap_err(),
        ClientError::UnknownRequest
    );
}

#[test]
fn a_prompt_round_and_an_abandoned_round() {
    let mut link = Link::connected(config(Mode::Auto, all_caps()), Pair::full());
    let ask = Request::GetPrompt {
        name: "ask",
        arguments: None,
    };
    let h = link.send(&ask, Options::default());
    let state = match link.take().as_slice() {
        [Ev::InputRequired {
            handle,
            method: Method::PromptsGet,
            state: Some(state),
            ..
        }] if *handle == h => state.clone(),
        other => panic!("{other:?}"),
    };
    let answers = Answers {
        input_responses: Some(r#"{"topic":{"action":"accept","content":{"topic":"rust"}}}"#),
        request_state: Some(&state),
    };
    let sent = link
        .client
        .retry(
            h,
            &ask,
            answers,
            Options::default(),
            link.now,
            &mut link.out,
        )
        .unwrap();
    link.transmit(sent.len);
    link.run();
    let result = link.result_of(h);
    assert_eq!(
        result["messages"][0]["content"]["text"],
        "state=prompt:1 topic=rust"
    );

    // A round the application gives up on: nothing to send, the slot is free.
    let h = link.send(&ask, Options::default());
    assert!(matches!(link.take().as_slice(), [Ev::InputRequired { .. }]));
    assert_eq!(link.client.cancel(h, None, &mut link.out).unwrap(), None);
    assert_eq!(link.client.requests_in_flight(), 0);
    // Only a round waiting for input can be retried.
    let (h, _) = start_slow(&mut link, Options::default());
    let refused = link
        .client
        .retry(
            h,
            &SLOW,
            Answers::default(),
            Options::default(),
            link.now,
            &mut link.out,
        )
        .unwrap_err();
    assert_eq!(refused, ClientError::NotAwaitingInput);
}

#[test]
fn legacy_sessions_see_plain_results_even_with_a_result_type() {
    // A legacy result's `resultType` is not read: only 2026-07-28 has rounds.
    let mut link = Link::connected(config(Mode::Legacy, ClientCaps::NONE), Pair::full());
    let (h, _) = start_slow(&mut link, Options::default());
    let id = link.sent.last().unwrap()["id"].clone();
    link.inject(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"resultType":"input_required"}}}}"#
    ));
    link.run();
    assert!(matches!(link.take().as_slice(), [Ev::Result { handle, .. }] if *handle == h));
}

#[test]
fn subscriptions_bring_resource_updates_in_the_legacy_era() {
    let mut link = Link::connected(config(Mode::Legacy, ClientCaps::NONE), Pair::full());
    let uri = "test://static/text";
    let h = link.send(&Request::Subscribe { uri }, Options::default());
    assert_eq!(link.result_of(h), json!({}));
    let tx = link
        .pair
        .session
        .resource_updated(uri, &mut link.pair.out)
        .unwrap()
        .unwrap();
    link.deliver(tx);
    link.run();
    assert!(matches!(link.take().as_slice(), [Ev::ResourceUpdated(u)] if u == uri));
    let h = link.send(&Request::Unsubscribe { uri }, Options::default());
    assert_eq!(link.result_of(h), json!({}));
    let seen = &link.pair.ext.resources.as_ref().unwrap().subscriptions;
    assert_eq!(seen, &[(uri.to_string(), true), (uri.to_string(), false)]);

    let mut link = Link::connected(config(Mode::Auto, ClientCaps::NONE), Pair::full());
    let refused = link
        .client
        .send(
            &Request::Subscribe { uri },
            Options::default(),
            link.now,
            &mut link.out,
        )
        .unwrap_err();
    assert!(matches!(
        refused,
        ClientError::NotInRevision {
            method: Method::Subscribe,
            ..
        }
    ));
}

#[test]
fn resource_subscriptions_on_a_listen_stream() {
    let mut link = Link::connected(config(Mode::Auto, ClientCaps::NONE), Pair::full());
    let uri = "test://static/text";
    let forever = Options {
        timeout_ms: Some(u64::MAX),
        ..Options::default()
    };
    let listen = Request::Listen {
        notifications: r#"{"resourceSubscriptions":["test://static/text","test://nope"]}"#,
    };
    let h = link.send(&listen, forever);
    // `resourceSubscriptions` went through as given; the acknowledgement names the subset
    // the server honours.
    assert_eq!(
        link.sent_with("subscriptions/listen")[0]["params"]["notifications"],
        json!({"resourceSubscriptions": [uri, "test://nope"]})
    );
    let events = link.take();
    assert!(
        matches!(events.as_slice(), [Ev::Subscribed { handle, notifications }]
            if *handle == h && *notifications == json!({"resourceSubscriptions": [uri]})),
        "{events:?}"
    );
    let other = link.send(&listen, forever);
    link.take();
    // One update per stream, each naming its stream.
    let mut from = 0;
    while let Some(tx) = link
        .pair
        .session
        .resource_updated_next(uri, &mut from, &mut link.pair.out)
        .unwrap()
    {
        link.deliver(tx);
    }
    link.run();
    let events = link.take();
    assert!(
        matches!(events.as_slice(), [Ev::StreamUpdated(a, u1), Ev::StreamUpdated(b, u2)]
            if *a == h && *b == other && u1 == uri && u2 == uri),
        "{events:?}"
    );
    // Cancelled: the server forgets the stream, and a late frame naming it is a plain
    // update.
    let tx = link.client.cancel(h, None, &mut link.out).unwrap().unwrap();
    link.transmit(tx.len);
    link.run();
    let mut from = 0;
    let tx = link
        .pair
        .session
        .resource_updated_next(uri, &mut from, &mut link.pair.out)
        .unwrap()
        .unwrap();
    link.deliver(tx);
    assert_eq!(
        link.pair
            .session
            .resource_updated_next(uri, &mut from, &mut link.pair.out),
        Ok(None)
    );
    link.inject(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{{"uri":"{uri}","_meta":{{"io.modelcontextprotocol/subscriptionId":{}}}}}}}"#,
        link.sent_with("subscriptions/listen")[0]["id"]
    ));
    // An acknowledgement for no stream of this client is ignored.
    link.inject(r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{},"_meta":{"io.modelcontextprotocol/subscriptionId":"x"}}}"#);
    link.run();
    let events = link.take();
    assert!(
        matches!(events.as_slice(), [Ev::StreamUpdated(b, u1), Ev::ResourceUpdated(u2)]
            if *b == other && u1 == uri && u2 == uri),
        "{events:?}"
    );
}
