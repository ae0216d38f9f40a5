//! The client against a scripted server: handshake fallbacks and failures, malformed frames
//! of every kind (typed events, never a panic or an `Err`), typed readers on results of the
//! wrong shape, buffers too small (the size needed, state unchanged) and local misuse.
//! Every frame the client writes is schema-validated under its revision.

mod client_link;
mod pair;

use client_link::{info, own, Ev};
use mcp_rs_core::client::{
    Client, ClientConfig, ClientError, ClientStorage, HandshakeError, InvalidFrame, Mode, Options,
    Request, RequestHandle, ResultError,
};
use mcp_rs_core::wire::json::ScanError;
use mcp_rs_core::wire::method::{Method, ServerNotification};
use mcp_rs_core::ProtocolVersion;
use pair::harness;
use serde_json::{json, Value};

struct Scripted {
    client: Client<'static>,
    out: Vec<u8>,
    /// Frames the client wrote, parsed and validated.
    sent: Vec<Value>,
}

impl Scripted {
    fn new(mode: Mode) -> Self {
        Self::with(ClientConfig {
            mode,
            ..ClientConfig::new(info())
        })
    }

    fn with(config: ClientConfig<'static>) -> Self {
        let storage: &'static mut ClientStorage<4> = Box::leak(Box::new(ClientStorage::new()));
        Scripted {
            client: Client::new(config, storage),
            out: vec![0; 4096],
            sent: Vec::new(),
        }
    }

    fn record(&mut self, len: usize) -> Value {
        let msg: Value = serde_json::from_slice(&self.out[..len]).expect("client JSON");
        let rev = match msg["method"].as_str() {
            Some("server/discover") => "2026-07-28".to_string(),
            Some("initialize") => msg["params"]["protocolVersion"].as_str().unwrap().into(),
            _ => self
                .client
                .version()
                .unwrap_or(ProtocolVersion::LATEST_LEGACY)
                .as_str()
                .into(),
        };
        let answered = msg
            .get("result")
            .map(|_| "ping")
            .filter(|_| msg["result"] == json!({}));
        if let Err(e) = harness::validate_client_message(&rev, answered, &msg) {
            panic!("client schema violation for {msg}:\n{e}");
        }
        self.sent.push(msg.clone());
        msg
    }

    fn connect(&mut self) -> Value {
        let sent = self.client.connect(0, &mut self.out).unwrap();
        self.record(sent.len)
    }

    /// Handles a frame; returns its events, then the client's own frames and events.
    fn feed(&mut self, frame: &str) -> Vec<Ev> {
        let mut events = Vec::new();
        let mut received = self.client.handle(1, frame.as_bytes());
        while let Some(ev) = received.next_event(&mut self.client) {
            events.push(own(ev));
        }
        while let Some(tx) = self.client.poll_transmit(&mut self.out).unwrap() {
            self.record(tx.len);
        }
        while let Some(ev) = self.client.poll_event() {
            events.push(own(ev));
        }
        events
    }

    /// A connected client (legacy 2025-11-25 or modern).
    fn connected(mode: Mode) -> Self {
        let mut s = Scripted::new(mode);
        s.connect();
        let reply = match mode {
            Mode::Legacy => {
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#
            }
            _ => {
                r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete","cacheScope":"public"}}"#
            }
        };
        assert!(matches!(
            s.feed(reply).as_slice(),
            [Ev::Handshake { .. }, Ev::Connected(..)]
        ));
        s
    }

    fn send(&mut self, request: &Request<'_>) -> (RequestHandle, Value) {
        let sent = self
            .client
            .send(request, Options::default(), 1, &mut self.out)
            .unwrap();
        (sent.handle, self.record(sent.len))
    }
}

const INIT_RESULT: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}"#;

#[test]
fn discover_refusals_that_name_the_method_or_version_fall_back_to_initialize() {
    let refusals = [
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"2026-07-28","supported":["2025-06-18"]}}}"#,
        // A discover result that lists only revisions of the legacy era.
        r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-06-18","2099-01-01"],"capabilities":{},"resultType":"complete","cacheScope":"public"}}"#,
    ];
    for refusal in refusals {
        let mut s = Scripted::new(Mode::Auto);
        assert_eq!(s.connect()["method"], "server/discover");
        assert!(s.feed(refusal).is_empty(), "{refusal}");
        assert_eq!(s.sent[1]["method"], "initialize");
        assert_eq!(s.sent[1]["id"], 2);
        assert_eq!(s.sent[1]["params"]["protocolVersion"], "2025-11-25");
        assert_eq!(s.client.version(), None);
        let events = s.feed(INIT_RESULT);
        assert!(
            matches!(
                events.as_slice(),
                [
                    Ev::Handshake {
                        method: Method::Initialize,
                        ..
                    },
                    Ev::Connected(ProtocolVersion::V2025_06_18, _)
                ]
            ),
            "{events:?}"
        );
        assert_eq!(s.sent[2]["method"], "notifications/initialized");
        assert_eq!(s.client.version(), Some(ProtocolVersion::V2025_06_18));
    }
}

#[test]
fn handshake_failures_are_reported_and_requests_refused() {
    let cases: [(Mode, &str, HandshakeError); 6] = [
        (
            Mode::Auto,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}"#,
            HandshakeError::Refused { code: -32603 },
        ),
        (
            Mode::Auto,
            r#"{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}"#,
            HandshakeError::Malformed,
        ),
        (
            Mode::Legacy,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
            HandshakeError::UnsupportedVersion,
        ),
        (
            Mode::Legacy,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2026-07-28","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
            HandshakeError::UnsupportedVersion,
        ),
        (
            Mode::Legacy,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":20251125}}"#,
            HandshakeError::Malformed,
        ),
        (
            Mode::Legacy,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#,
            HandshakeError::Refused { code: -32602 },
        ),
    ];
    for (mode, reply, expected) in cases {
        let mut s = Scripted::new(mode);
        s.connect();
        let events = s.feed(reply);
        assert!(
            matches!(events.as_slice(), [Ev::HandshakeFailed(e)] if *e == expected),
            "{reply}: {events:?}"
        );
        assert_eq!(s.sent.len(), 1, "nothing more is sent");
        let refused = s
            .client
            .request_tools_list(None, 2, &mut s.out)
            .unwrap_err();
        assert_eq!(refused, ClientError::NotConnected);
        assert_eq!(s.client.requests_in_flight(), 0);
    }
}

#[test]
fn a_handshake_that_times_out_fails_without_cancelling_initialize() {
    let mut config = ClientConfig::new(info());
    config.mode = Mode::Legacy;
    config.request_timeout_ms = 5_000;
    let mut s = Scripted::with(config);
    s.connect();
    assert_eq!(s.client.poll_timeout(), Some(5_000));
    s.client.handle_timeout(5_000);
    assert!(s.client.poll_transmit(&mut s.out).unwrap().is_none());
    assert!(matches!(
        s.client.poll_event().map(own),
        Some(Ev::HandshakeFailed(HandshakeError::TimedOut))
    ));
    assert_eq!(s.client.poll_timeout(), None);
    // The late answer is nobody's.
    let late = s.feed(INIT_RESULT.replace("\"id\":2", "\"id\":1").as_str());
    assert!(matches!(
        late.as_slice(),
        [Ev::Invalid(InvalidFrame::UnknownResponse)]
    ));
}

#[test]
fn malformed_frames_become_invalid_events() {
    let mut s = Scripted::connected(Mode::Legacy);
    let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
    type Check = fn(&InvalidFrame) -> bool;
    let cases: Vec<(String, Check)> = vec![
        ("not json".into(), |e| {
            matches!(
                e,
                InvalidFrame::Json(ScanError::UnexpectedByte { offset: 1 })
            )
        }),
        ("".into(), |e| {
            matches!(e, InvalidFrame::Json(ScanError::Empty))
        }),
        ("{\"jsonrpc\":\"2.0\"".into(), |e| {
            matches!(e, InvalidFrame::Json(ScanError::UnexpectedEnd))
        }),
        (deep, |e| {
            matches!(e, InvalidFrame::Json(ScanError::TooDeep { .. }))
        }),
        ("[]".into(), |e| {
            *e == InvalidFrame::NotJsonRpc("empty batch")
        }),
        ("42".into(), |e| matches!(e, InvalidFrame::NotJsonRpc(_))),
        (r#"{"jsonrpc":"1.0","id":1,"result":{}}"#.into(), |e| {
            matches!(e, InvalidFrame::NotJsonRpc(_))
        }),
        (r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#.into(), |e| {
            matches!(e, InvalidFrame::NotJsonRpc(_))
        }),
        (r#"{"jsonrpc":"2.0","id":99,"result":{}}"#.into(), |e| {
            *e == InvalidFrame::UnknownResponse
        }),
        (r#"{"jsonrpc":"2.0","id":"2","result":{}}"#.into(), |e| {
            *e == InvalidFrame::UnknownResponse
        }),
        (
            r#"{"jsonrpc":"2.0","id":-1,"error":{"code":1,"message":"x"}}"#.into(),
            |e| *e == InvalidFrame::UnknownResponse,
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
                "x".repeat(70)
            ),
            |e| *e == InvalidFrame::IdTooLong,
        ),
    ];
    for (frame, check) in cases {
        let events = s.feed(&frame);
        match events.as_slice() {
            [Ev::Invalid(e)] if check(e) => {}
            other => panic!("{frame}: {other:?}"),
        }
    }
    // The request whose id could not be kept was answered too: -32600 without an id.
    assert_eq!(s.sent.len(), 3, "{:?}", s.sent);
    let answer = &s.sent[2];
    assert!(answer.get("id").is_none(), "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["error"]["data"]["limit"], 64, "{answer}");
}

#[test]
fn unusable_responses_end_their_request_with_a_typed_event() {
    for mode in [Mode::Legacy, Mode::Auto] {
        let mut s = Scripted::connected(mode);
        let replies: &[(&str, &str)] = &[
            (r#""result":[1]"#, "result must be an object"),
            (r#""result":"ok""#, "result must be an object"),
            (
                r#""error":{"code":"x","message":"m"}"#,
                "error must have an integer code and a string message",
            ),
            (
                r#""error":{"code":1}"#,
                "error must have an integer code and a string message",
            ),
        ];
        for (body, reason) in replies {
            let (h, sent) = s.send(&Request::ListTools { cursor: None });
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{},{body}}}"#, sent["id"]);
            match s.feed(&frame).as_slice() {
                [Ev::Invalid(InvalidFrame::MalformedResult {
                    handle,
                    method: Method::ToolsList,
                    reason: r,
                })] if *handle == h && r == reason => {}
                other => panic!("{mode:?} {frame}: {other:?}"),
            }
            assert_eq!(s.client.requests_in_flight(), 0);
        }
    }
    // 2026-07-28 only: `resultType` is read.
    let mut s = Scripted::connected(Mode::Auto);
    for (result, reason) in [
        (r#"{"resultType":"weird"}"#, "unknown resultType"),
        (r#"{"resultType":7}"#, "unknown resultType"),
        (
            r#"{"resultType":"input_required"}"#,
            "input_required result without inputRequests or requestState",
        ),
        (
            r#"{"resultType":"input_required","inputRequests":[]}"#,
            "inputRequests must be an object of request objects",
        ),
        (
            r#"{"resultType":"input_required","inputRequests":{"a":1}}"#,
            "inputRequests must be an object of request objects",
        ),
        (
            r#"{"resultType":"input_required","requestState":5}"#,
            "requestState must be a string",
        ),
    ] {
        let (h, sent) = s.send(&Request::CallTool {
            name: "t",
            arguments: None,
        });
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
            sent["id"]
        );
        match s.feed(&frame).as_slice() {
            [Ev::Invalid(InvalidFrame::MalformedResult {
                handle, reason: r, ..
            })] if *handle == h && *r == reason => {}
            other => panic!("{frame}: {other:?}"),
        }
    }
    // A round with only a state is a round.
    let (h, sent) = s.send(&Request::CallTool {
        name: "t",
        arguments: None,
    });
    let frame = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"resultType":"input_required","requestState":"s"}}}}"#,
        sent["id"]
    );
    assert!(matches!(
        s.feed(&frame).as_slice(),
        [Ev::InputRequired { handle, requests, state: Some(st), .. }]
            if *handle == h && requests.is_empty() && st == "s"
    ));
}

#[test]
fn typed_readers_report_what_is_missing_or_mistyped() {
    let mut s = Scripted::connected(Mode::Legacy);
    let mut respond = |request: Request<'static>, result: &str| -> Vec<Result<(), ResultError>> {
        let sent = s
            .client
            .send(&request, Options::default(), 1, &mut s.out)
            .unwrap();
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
            s.client_id(sent.len)
        );
        let mut received = s.client.handle(1, frame.as_bytes());
        let Some(mcp_rs_core::client::Event::Result(r)) = received.next_event(&mut s.client) else {
            panic!("{frame}");
        };
        vec![
            r.page().map(|_| ()),
            r.tool_call().map(|_| ()),
            r.prompt_messages().map(|_| ()),
            r.contents().map(|_| ()),
            r.completion_values().map(|_| ()),
        ]
    };
    use ResultError::{Missing, WrongMethod, WrongType};
    let list = Request::ListTools { cursor: None };
    assert_eq!(respond(list, "{}")[0], Err(Missing("tools")));
    assert_eq!(respond(list, r#"{"tools":{}}"#)[0], Err(WrongType("tools")));
    assert_eq!(
        respond(list, r#"{"tools":[],"nextCursor":5}"#)[0],
        Err(WrongType("nextCursor"))
    );
    let all = respond(list, r#"{"tools":[]}"#);
    assert_eq!(
        all,
        [
            Ok(()),
            Err(WrongMethod),
            Err(WrongMethod),
            Err(WrongMethod),
            Err(WrongMethod)
        ]
    );
    let call = Request::CallTool {
        name: "t",
        arguments: None,
    };
    assert_eq!(
        respond(call, r#"{"content":{}}"#)[1],
        Err(WrongType("content"))
    );
    assert_eq!(
        respond(call, r#"{"content":[],"isError":"yes"}"#)[1],
        Err(WrongType("isError"))
    );
    let complete = Request::Complete {
        reference: mcp_rs_core::client::Reference::Prompt("p"),
        argument: "a",
        value: "",
        context: None,
    };
    assert_eq!(
        respond(complete, r#"{"completion":[]}"#)[4],
        Err(WrongType("completion"))
    );
    assert_eq!(
        respond(complete, r#"{"completion":{}}"#)[4],
        Err(Missing("values"))
    );
}

impl Scripted {
    /// The id of the request just written into `out[..len]`.
    fn client_id(&self, len: usize) -> u64 {
        let v: Value = serde_json::from_slice(&self.out[..len]).unwrap();
        v["id"].as_u64().unwrap()
    }
}

#[test]
fn malformed_notifications_are_reported_and_unknown_ones_ignored() {
    let mut s = Scripted::connected(Mode::Legacy);
    let cases = [
        (
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":"half"}}"#,
            ServerNotification::Progress,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            ServerNotification::Progress,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":"x"}}"#,
            ServerNotification::Progress,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":1}}"#,
            ServerNotification::Message,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}"#,
            ServerNotification::Message,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1,"logger":2}}"#,
            ServerNotification::Message,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":3}}"#,
            ServerNotification::ResourceUpdated,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/resources/updated"}"#,
            ServerNotification::ResourceUpdated,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}"#,
            ServerNotification::Cancelled,
        ),
    ];
    for (frame, which) in cases {
        match s.feed(frame).as_slice() {
            [Ev::Invalid(InvalidFrame::MalformedNotification { notification, .. })]
                if *notification == which => {}
            other => panic!("{frame}: {other:?}"),
        }
    }
    for ignored in [
        r#"{"jsonrpc":"2.0","method":"notifications/unknown","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":123456,"progress":1}}"#,
    ] {
        assert!(s.feed(ignored).is_empty(), "{ignored}");
    }
    // An escaped method name is still the notification.
    let escaped = r#"{"jsonrpc":"2.0","method":"notifications\/tools\/list_changed"}"#;
    assert!(matches!(s.feed(escaped).as_slice(), [Ev::ListChanged(_)]));
}

#[test]
fn batches_are_taken_message_by_message_and_the_reply_queue_is_bounded() {
    let mut s = Scripted::connected(Mode::Legacy);
    let (h, sent) = s.send(&Request::ListTools { cursor: None });
    let batch = format!(
        r#"[{{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}},{{"jsonrpc":"2.0","id":{},"result":{{"tools":[]}}}},7]"#,
        sent["id"]
    );
    let events = s.feed(&batch);
    assert!(
        matches!(
            events.as_slice(),
            [Ev::ListChanged(_), Ev::Result { handle, .. }, Ev::Invalid(InvalidFrame::NotJsonRpc(_))] if *handle == h
        ),
        "{events:?}"
    );
    // Five pings in one frame: four answers fit the queue, the fifth is reported.
    let pings: Vec<String> = (1..=5)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":"p{i}","method":"ping"}}"#))
        .collect();
    let before = s.sent.len();
    let events = s.feed(&format!("[{}]", pings.join(",")));
    assert!(
        matches!(events.as_slice(), [Ev::Invalid(InvalidFrame::RepliesFull)]),
        "{events:?}"
    );
    let answered: Vec<&Value> = s.sent[before..].iter().map(|m| &m["id"]).collect();
    assert_eq!(
        answered,
        [&json!("p1"), &json!("p2"), &json!("p3"), &json!("p4")]
    );
}

/// Runs every reader an application might run on an event (whatever they answer).
fn poke(ev: mcp_rs_core::client::Event<'_>) {
    use mcp_rs_core::client::Event;
    match ev {
        Event::Result(r) => {
            if let Ok(page) = r.page() {
                let _ = (page.items().count(), page.names().count());
            }
            if let Ok(call) = r.tool_call() {
                let _ = call.text();
            }
            let _ = (r.prompt_messages(), r.contents(), r.completion_values());
        }
        Event::InputRequired(round) => {
            let _ = round.requests().count();
        }
        other => {
            let _ = format!("{other:?}");
        }
    }
}

#[test]
fn no_frame_panics_the_client() {
    // Every prefix and every single-byte corruption of frames that exercise each path.
    let seeds = [
        r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}],"nextCursor":"c"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"}},"requestState":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":"x","method":"sampling/createMessage","params":{"messages":[]}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":4,"progress":1e308,"total":-0.0,"message":"\ud83d\ude00"}}"#,
        r#"[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"a":[1,2]}}},{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"m","data":null}}]"#,
    ];
    let mut total = 0;
    for mode in [Mode::Legacy, Mode::Auto] {
        let mut config = ClientConfig::new(info());
        config.mode = mode;
        config.capabilities = mcp_rs_core::ClientCaps::SAMPLING;
        for seed in seeds {
            let bytes = seed.as_bytes();
            let mut variants: Vec<Vec<u8>> =
                (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
            for i in 0..bytes.len() {
                for b in [b'"', b'{', b'}', b'\\', 0xff, b'0'] {
                    let mut v = bytes.to_vec();
                    v[i] = b;
                    variants.push(v);
                }
            }
            for v in variants {
                // A fresh client with requests 2..=5 in flight (one with progress).
                let mut storage = ClientStorage::<8>::new();
                let mut client = Client::new(config, &mut storage);
                let mut out = [0u8; 2048];
                let _ = client.connect(0, &mut out).unwrap();
                let ok = match mode {
                    Mode::Legacy => {
                        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}"#
                    }
                    _ => {
                        r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}"#
                    }
                };
                let mut r = client.handle(1, ok.as_bytes());
                while r.next_event(&mut client).is_some() {}
                while client.poll_transmit(&mut out).unwrap().is_some() {}
                while client.poll_event().is_some() {}
                for _ in 0..3 {
                    let _ = client
                        .send(
                            &Request::ListTools { cursor: None },
                            Options::default(),
                            1,
                            &mut out,
                        )
                        .unwrap();
                }
                let _ = client
                    .send(
                        &Request::ListTools { cursor: None },
                        Options::default().with_progress(),
                        1,
                        &mut out,
                    )
                    .unwrap();
                let mut r = client.handle(2, &v);
                let mut n = 0;
                while let Some(ev) = r.next_event(&mut client) {
                    poke(ev);
                    n += 1;
                    assert!(n < 16);
                }
                while client.poll_transmit(&mut out).unwrap().is_some() {}
                while client.poll_event().is_some() {}
                assert!(client.requests_in_flight() <= 4);
                total += 1;
            }
        }
    }
    assert!(total > 1000, "{total}");
}

#[test]
fn a_buffer_too_small_reports_the_size_needed_and_changes_nothing() {
    let mut s = Scripted::new(Mode::Auto);
    let mut small = [0u8; 16];
    let Err(ClientError::BufferTooSmall { required }) = s.client.connect(0, &mut small) else {
        panic!("connect fits 16 bytes?");
    };
    assert_eq!(s.client.requests_in_flight(), 0);
    let mut exact = vec![0u8; required];
    let sent = s.client.connect(0, &mut exact).unwrap();
    assert_eq!(sent.len, required);
    s.out[..required].copy_from_slice(&exact);
    assert_eq!(s.record(required)["id"], 1, "the failed attempt used no id");

    // A fallback `initialize` too big for the buffer stays queued.
    let refusal = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#;
    let mut r = s.client.handle(1, refusal);
    assert!(r.next_event(&mut s.client).is_none());
    let Err(ClientError::BufferTooSmall { required }) = s.client.poll_transmit(&mut small) else {
        panic!("initialize fits 16 bytes?");
    };
    let tx = s.client.poll_transmit(&mut s.out).unwrap().unwrap();
    assert_eq!(tx.len, required);
    assert_eq!(s.record(tx.len)["method"], "initialize");
    let mut s = Scripted::connected(Mode::Legacy);
    let request = Request::CallTool {
        name: "echo",
        arguments: Some(r#"{"text":"a fairly long argument string"}"#),
    };
    let Err(ClientError::BufferTooSmall { required }) =
        s.client.send(&request, Options::default(), 1, &mut small)
    else {
        panic!("fits?");
    };
    assert_eq!(s.client.requests_in_flight(), 0);
    let mut exact = vec![0u8; required];
    let sent = s
        .client
        .send(&request, Options::default(), 1, &mut exact)
        .unwrap();
    assert_eq!(sent.len, required);
    let v: Value = serde_json::from_slice(&exact).unwrap();
    assert_eq!(v["id"], 2);

    // An owed answer stays owed.
    let mut r = s
        .client
        .handle(1, br#"{"jsonrpc":"2.0","id":"ping-1","method":"ping"}"#);
    assert!(r.next_event(&mut s.client).is_none());
    let Err(ClientError::BufferTooSmall { required }) = s.client.poll_transmit(&mut small) else {
        panic!("fits?");
    };
    let tx = s
        .client
        .poll_transmit(&mut vec![0u8; required])
        .unwrap()
        .unwrap();
    assert_eq!(tx.len, required);
    assert!(s.client.poll_transmit(&mut s.out).unwrap().is_none());

    // Cancelling with no room keeps the request.
    let Err(ClientError::BufferTooSmall { .. }) =
        s.client.cancel(sent.handle, Some("stop"), &mut small)
    else {
        panic!("fits?");
    };
    assert_eq!(s.client.requests_in_flight(), 1);
    let id = mcp_rs_core::wire::jsonrpc::StoredId::new("\"abc\"").unwrap();
    let Err(ClientError::BufferTooSmall { .. }) =
        s.client.respond(&id, r#"{"roots":[]}"#, &mut small)
    else {
        panic!("fits?");
    };
    let Err(ClientError::BufferTooSmall { .. }) = s.client.respond_error(&id, -1, "no", &mut small)
    else {
        panic!("fits?");
    };
}

#[test]
fn local_misuse_gets_typed_errors() {
    let mut s = Scripted::new(Mode::Auto);
    let discover = s.client.connect(0, &mut s.out).unwrap();
    assert_eq!(
        s.client
            .cancel(discover.handle, None, &mut s.out)
            .unwrap_err(),
        ClientError::CannotCancel
    );
    let mut s = Scripted::connected(Mode::Legacy);
    for bad in ["[1]", "{\"a\":\n1}", "nope", "{} {}"] {
        let request = Request::CallTool {
            name: "t",
            arguments: Some(bad),
        };
        let e = s
            .client
            .send(&request, Options::default(), 1, &mut s.out)
            .unwrap_err();
        assert_eq!(e, ClientError::InvalidJson, "{bad}");
    }
    let mut handles = Vec::new();
    for _ in 0..4 {
        handles.push(s.send(&Request::ListTools { cursor: None }).0);
    }
    let full = s
        .client
        .request_tools_list(None, 1, &mut s.out)
        .unwrap_err();
    assert_eq!(full, ClientError::TooManyRequests { capacity: 4 });
    let stale = handles[0];
    assert!(s.client.cancel(stale, None, &mut s.out).unwrap().is_some());
    assert_eq!(
        s.client.cancel(stale, None, &mut s.out).unwrap_err(),
        ClientError::UnknownRequest
    );
    // The freed slot serves a new request; the old handle still names nothing.
    let fresh = s.send(&Request::ListTools { cursor: None }).0;
    assert_eq!(fresh.slot(), stale.slot());
    assert_eq!(
        s.client.cancel(stale, None, &mut s.out).unwrap_err(),
        ClientError::UnknownRequest
    );
    // Errors print what was needed.
    assert_eq!(
        ClientError::BufferTooSmall { required: 42 }.to_string(),
        "output buffer too small: 42 bytes required"
    );
}

#[test]
fn the_schema_check_of_client_frames_has_teeth() {
    // A 2026-07-28 request without its `_meta` is not valid there.
    let bare = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}});
    assert!(harness::validate_client_message("2026-07-28", None, &bare).is_err());
    assert!(harness::validate_client_message("2025-11-25", None, &bare).is_ok());
    // A sampling answer needs a model.
    let answer = json!({"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"x"}}});
    assert!(harness::validate_client_message(
        "2025-11-25",
        Some("sampling/createMessage"),
        &answer
    )
    .is_err());
}
