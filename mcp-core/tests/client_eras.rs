//! The client against our own server `Session`, in both eras: the handshakes, then every
//! request kind (lists over several pages, synchronous tool calls, prompts, resources,
//! completion, ping, logging/setLevel). Every client frame is schema-validated under the
//! revision it is sent in, every server frame by the pair, and every result read by the
//! typed reader of its method.

mod client_link;
mod pair;

use client_link::{info, Ev, Link};
use mcp_rs_core::client::{
    ClientConfig, ClientError, Event, Mode, Options, Reference, Request, ServerCaps,
};
use mcp_rs_core::wire::method::Method;
use mcp_rs_core::{ClientCaps, Config, LogLevel, ProtocolVersion, SecretKey};
use pair::Pair;
use serde_json::{json, Value};

fn config(mode: Mode) -> ClientConfig<'static> {
    ClientConfig {
        mode,
        capabilities: ClientCaps::SAMPLING
            .with(ClientCaps::ELICITATION)
            .with(ClientCaps::ROOTS),
        ..ClientConfig::new(info())
    }
}

/// A server with every capability, `page_size` items a page and 4 extra tools.
fn server(page_size: u16) -> Pair {
    let mut config = Config::new(SecretKey([0x5a; 16]));
    config.page_size = page_size;
    let mut p = Pair::with(config, 4, 65536);
    p.enable_full();
    p
}

const ERAS: [Mode; 2] = [Mode::Legacy, Mode::Auto];

fn expected_version(mode: Mode) -> ProtocolVersion {
    match mode {
        Mode::Legacy => ProtocolVersion::LATEST_LEGACY,
        _ => ProtocolVersion::LATEST,
    }
}

#[test]
fn legacy_handshake_initializes_then_announces_initialized() {
    let mut link = Link::new(config(Mode::Legacy), server(50));
    let early = link
        .client
        .request_tools_list(None, link.now, &mut link.out)
        .unwrap_err();
    assert_eq!(early, ClientError::NotConnected);
    link.connect();

    let init = &link.sent[0];
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        init["params"]["capabilities"],
        json!({"sampling": {}, "elicitation": {}, "roots": {}})
    );
    assert_eq!(
        init["params"]["clientInfo"],
        json!({"name": "link-client", "version": "0.1.0", "title": "Link Client"})
    );
    assert_eq!(link.sent[1]["method"], "notifications/initialized");
    assert_eq!(link.sent.len(), 2);
    let all = ServerCaps::TOOLS
        .with(ServerCaps::PROMPTS)
        .with(ServerCaps::RESOURCES)
        .with(ServerCaps::SUBSCRIBE)
        .with(ServerCaps::COMPLETIONS)
        .with(ServerCaps::LOGGING);
    match link.take().as_slice() {
        [Ev::Handshake {
            method: Method::Initialize,
            server_name: Some(name),
            instructions: Some(instructions),
        }, Ev::Connected(v, caps)] => {
            assert_eq!(name, "pair-server");
            assert_eq!(instructions, "Use the tools.");
            assert_eq!(*v, ProtocolVersion::V2025_11_25);
            assert_eq!(*caps, all);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(link.client.version(), Some(ProtocolVersion::V2025_11_25));
    assert_eq!(link.client.server_capabilities(), all);
    assert_eq!(
        link.pair.events,
        [mcp_rs_core::Event::Initialized(
            ProtocolVersion::V2025_11_25
        )]
    );
    assert_eq!(link.client.requests_in_flight(), 0);
    let again = link.client.connect(link.now, &mut link.out).unwrap_err();
    assert_eq!(again, ClientError::AlreadyConnected);
}

#[test]
fn requests_wait_until_notifications_initialized_is_sent() {
    let mut link = Link::new(config(Mode::Legacy), server(50));
    let sent = link.client.connect(0, &mut link.out).unwrap();
    let init = String::from_utf8(link.out[..sent.len].to_vec()).unwrap();
    let reply = link.pair.ask(&init).to_string();
    // The result is handled, but the notification is not out yet: requests are refused.
    let mut received = link.client.handle(1, reply.as_bytes());
    let Some(mcp_rs_core::client::Event::Handshake(h)) = received.next_event(&mut link.client)
    else {
        panic!("the initialize result is shown");
    };
    assert_eq!(
        h.server_info().unwrap().get("version").unwrap().as_str(),
        "\"1.2.3\""
    );
    assert!(received.next_event(&mut link.client).is_none());
    assert!(link.client.poll_event().is_none());
    let early = link.client.request_ping(1, &mut link.out).unwrap_err();
    assert_eq!(early, ClientError::NotConnected);
    let tx = link.client.poll_transmit(&mut link.out).unwrap().unwrap();
    assert_eq!(
        &link.out[..tx.len],
        br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#
    );
    assert!(link.client.poll_transmit(&mut link.out).unwrap().is_none());
    assert!(matches!(
        link.client.poll_event().map(client_link::own),
        Some(Ev::Connected(ProtocolVersion::V2025_11_25, _))
    ));
    assert!(link.client.request_ping(2, &mut link.out).is_ok());
}

#[test]
fn modern_handshake_discovers_and_sends_no_initialize() {
    let mut link = Link::new(config(Mode::Auto), server(50));
    link.connect();
    assert_eq!(link.sent.len(), 1, "{:?}", link.sent);
    let discover = &link.sent[0];
    assert_eq!(discover["method"], "server/discover");
    let meta = &discover["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"sampling": {}, "elicitation": {}, "roots": {}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "link-client"
    );
    assert!(matches!(
        link.take().as_slice(),
        [
            Ev::Handshake { method: Method::Discover, server_name: Some(name), instructions: Some(i) },
            Ev::Connected(ProtocolVersion::V2026_07_28, caps),
        ] if name == "pair-server" && i == "Use the tools."
            && caps.contains(ServerCaps::TOOLS.with(ServerCaps::PROMPTS).with(ServerCaps::RESOURCES))
                // Subscribable resources: listen streams honour resourceSubscriptions.
                && caps.contains(ServerCaps::SUBSCRIBE)
    ));
    // Stateless: the server holds no session.
    assert_eq!(link.pair.session.negotiated_version(), None);
    // Every later request carries the per-request `_meta` (also checked by the schema).
    let h = link.send(&Request::ListTools { cursor: None }, Options::default());
    let _ = link.result_of(h);
    let list = link.sent_with("tools/list")[0];
    assert_eq!(
        list["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(list["params"]["_meta"].get("progressToken").is_none());
}

/// Walks a list from the first page to the last, returning the names and the number of
/// pages; checks each request carries the previous page's cursor.
fn walk(link: &mut Link, make: fn(Option<&str>) -> Request<'_>) -> (Vec<String>, usize) {
    let (mut names, mut pages) = (Vec::new(), 0);
    let mut cursor: Option<String> = None;
    loop {
        let h = link.send(&make(cursor.as_deref()), Options::default());
        let sent = link.sent.last().unwrap().clone();
        assert_eq!(
            sent["params"].get("cursor").and_then(Value::as_str),
            cursor.as_deref()
        );
        let read = match link.take().as_slice() {
            [Ev::Result { handle, read, .. }] if *handle == h => read.clone(),
            other => panic!("{other:?}"),
        };
        pages += 1;
        names.extend(read.names);
        match read.next_cursor {
            Some(c) => cursor = Some(c),
            None => return (names, pages),
        }
        assert!(pages < 20, "runaway pagination");
    }
}

#[test]
fn lists_paginate_over_several_pages_in_both_eras() {
    for mode in ERAS {
        let mut link = Link::connected(config(mode), server(3));
        let expected: Vec<String> = link
            .pair
            .tools
            .defs
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        let (tools, pages) = walk(&mut link, |cursor| Request::ListTools { cursor });
        assert_eq!(tools, expected, "{mode:?}");
        assert_eq!(pages, expected.len().div_ceil(3), "{mode:?}");
        assert!(pages >= 4);

        let (prompts, pages) = walk(&mut link, |cursor| Request::ListPrompts { cursor });
        assert_eq!(
            prompts,
            ["greet", "media", "slow_prompt", "ask"],
            "{mode:?}"
        );
        assert_eq!(pages, 2);
        let (resources, pages) = walk(&mut link, |cursor| Request::ListResources { cursor });
        assert_eq!(resources, ["text", "blob", "multi", "empty", "slow"]);
        assert_eq!(pages, 2);
        let (templates, pages) = walk(&mut link, |cursor| Request::ListResourceTemplates {
            cursor,
        });
        assert_eq!(templates, ["item", "deferred"]);
        assert_eq!(pages, 1);
        assert_eq!(link.client.requests_in_flight(), 0);
    }
}

#[test]
fn synchronous_tool_calls_in_both_eras() {
    for mode in ERAS {
        let mut link = Link::connected(config(mode), server(50));
        let call = |link: &mut Link, name: &str, args: Option<&str>| {
            let h = link.send(
                &Request::CallTool {
                    name,
                    arguments: args,
                },
                Options::default(),
            );
            match link.take().as_slice() {
                [Ev::Result {
                    handle,
                    method: Method::ToolsCall,
                    result,
                    read,
                }] if *handle == h => (result.clone(), read.clone()),
                other => panic!("{mode:?} {name}: {other:?}"),
            }
        };
        let (_, read) = call(&mut link, "echo", Some(r#"{"text":"hi"}"#));
        assert_eq!(read.text.as_deref(), Some(r#"{"text":"hi"}"#));
        let (result, read) = call(&mut link, "add", Some(r#"{"a":1,"b":2}"#));
        assert_eq!(result["structuredContent"], json!({"sum": 3.0}));
        assert!(!read.is_error);
        let (_, read) = call(&mut link, "fail", None);
        assert!(read.is_error);
        assert_eq!(read.text.as_deref(), Some("This tool intentionally fails"));
        if mode == Mode::Auto {
            assert_eq!(result["resultType"], "complete");
        }
        // An unknown tool is a protocol error, reported with the request's handle.
        let h = link.send(
            &Request::CallTool {
                name: "nope",
                arguments: None,
            },
            Options::default(),
        );
        match link.take().as_slice() {
            [Ev::Error {
                handle,
                method: Method::ToolsCall,
                code: -32602,
                ..
            }] if *handle == h => {}
            other => panic!("{mode:?}: {other:?}"),
        }
    }
}

#[test]
fn prompts_resources_and_completion_in_both_eras() {
    for mode in ERAS {
        let mut link = Link::connected(config(mode), server(50));
        let h = link.send(
            &Request::GetPrompt {
                name: "greet",
                arguments: Some(r#"{"name":"Ada","style":"formal"}"#),
            },
            Options::default(),
        );
        let result = link.result_of(h);
        assert_eq!(result["messages"][0]["content"]["text"], "Good day, Ada.");

        let h = link.send(
            &Request::ReadResource {
                uri: "test://static/text",
            },
            Options::default(),
        );
        let result = link.result_of(h);
        assert_eq!(result["contents"][0]["text"], "hello");
        let h = link.send(
            &Request::ReadResource {
                uri: "test://items/7",
            },
            Options::default(),
        );
        assert_eq!(link.result_of(h)["contents"][0]["text"], "item 7");

        let h = link.send(
            &Request::Complete {
                reference: Reference::Prompt("greet"),
                argument: "name",
                value: "al",
                context: Some(r#"{"style":"formal"}"#),
            },
            Options::default(),
        );
        assert_eq!(
            link.result_of(h)["completion"]["values"],
            json!(["ALICE", "ALBERT"])
        );
        let sent = link.client.request_complete(
            Reference::Resource("test://items/{id}"),
            "id",
            "1",
            link.now,
            &mut link.out,
        );
        let sent = sent.unwrap();
        link.transmit(sent.len);
        link.run();
        assert_eq!(
            link.result_of(sent.handle)["completion"]["values"],
            json!(["1", "12", "123"])
        );

        // A resource the server does not know: its era's not-found error.
        let h = link.send(
            &Request::ReadResource {
                uri: "test://missing",
            },
            Options::default(),
        );
        let expected = if mode == Mode::Legacy { -32002 } else { -32602 };
        match link.take().as_slice() {
            [Ev::Error { handle, code, .. }] if *handle == h && *code == expected => {}
            other => panic!("{mode:?}: {other:?}"),
        }
    }
}

#[test]
fn ping_and_set_level_exist_only_in_the_legacy_era() {
    let mut link = Link::connected(config(Mode::Legacy), server(50));
    let sent = link.client.request_ping(link.now, &mut link.out).unwrap();
    link.transmit(sent.len);
    link.run();
    assert_eq!(link.result_of(sent.handle), json!({}));
    let sent = link
        .client
        .request_set_level(LogLevel::Debug, link.now, &mut link.out)
        .unwrap();
    link.transmit(sent.len);
    link.run();
    assert_eq!(link.result_of(sent.handle), json!({}));
    assert!(link
        .pair
        .events
        .contains(&mcp_rs_core::Event::LogLevel(LogLevel::Debug)));

    let mut link = Link::connected(config(Mode::Auto), server(50));
    for (request, method) in [
        (Request::Ping, Method::Ping),
        (Request::SetLevel(LogLevel::Info), Method::SetLevel),
    ] {
        let refused = link
            .client
            .send(&request, Options::default(), link.now, &mut link.out)
            .unwrap_err();
        assert_eq!(
            refused,
            ClientError::NotInRevision {
                method,
                version: ProtocolVersion::V2026_07_28
            }
        );
    }
    // The modern way to get logs: a level on the request.
    let options = Options {
        log_level: Some(LogLevel::Warning),
        ..Options::default()
    };
    let h = link.send(&Request::ListTools { cursor: None }, options);
    let _ = link.result_of(h);
    let meta = &link.sent.last().unwrap()["params"]["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/logLevel"], "warning");
}

#[test]
fn ids_count_up_and_handles_are_reused_with_a_new_generation() {
    let mut link = Link::connected(config(Mode::Legacy), server(50));
    let a = link.send(&Request::ListTools { cursor: None }, Options::default());
    let _ = link.result_of(a);
    let b = link.send(&Request::ListTools { cursor: None }, Options::default());
    let _ = link.result_of(b);
    assert_eq!(a.slot(), b.slot(), "a freed slot is reused");
    assert_ne!(a, b, "with a new generation");
    let ids: Vec<&Value> = link.sent.iter().filter_map(|m| m.get("id")).collect();
    assert_eq!(ids, [&json!(1), &json!(2), &json!(3)]);
    assert_eq!(
        expected_version(Mode::Legacy),
        link.client.version().unwrap()
    );
}

#[test]
fn next_request_walks_a_list_inside_the_event_loop() {
    for mode in ERAS {
        let mut link = Link::connected(config(mode), server(2));
        let sent = link
            .client
            .request_prompts_list(None, link.now, &mut link.out)
            .unwrap();
        link.transmit(sent.len);
        let mut frame = link.next_from_server().unwrap();
        let (mut names, mut pages) = (Vec::new(), 0);
        loop {
            let mut received = link.client.handle(link.now, frame.as_bytes());
            let Some(Event::Result(response)) = received.next_event(&mut link.client) else {
                panic!("{frame}");
            };
            let page = response.page().unwrap();
            names.extend(page.names().map(|n| n.to_string()));
            pages += 1;
            let mut buf = [0u8; 512];
            let Some(next) = page.next_request(&mut buf) else {
                break;
            };
            let sent = link
                .client
                .send(&next, Options::default(), link.now, &mut link.out)
                .unwrap();
            link.transmit(sent.len);
            frame = link.next_from_server().unwrap();
        }
        assert_eq!(names, ["greet", "media", "slow_prompt", "ask"], "{mode:?}");
        assert_eq!(pages, 2);
        assert_eq!(link.client.requests_in_flight(), 0);
    }
}
