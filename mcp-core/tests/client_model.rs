//! The client against a model: seeded random sequences of commands (send, cancel, retry,
//! the clock) and server frames (results, errors, `input_required` rounds, progress,
//! pings, sampling requests, notifications, stray ids and garbage), in both eras. After
//! every step the loop drains the client, and these hold:
//!
//! - every request ends exactly once: with a result, an error, a timeout, an unusable
//!   result, or the caller's cancellation; an `input_required` round does not end it, and
//!   no event names a request that is not in flight;
//! - `requests_in_flight` and `poll_timeout` agree with the model;
//! - every frame is one line of valid JSON; request ids are never reused;
//!   `notifications/cancelled` names only a request that was waiting at the server;
//! - progress reaches only requests that asked for it and are waiting; every `ping` is
//!   answered once, every sampling request is reported once.

mod client_link;
mod pair;

use std::collections::{BTreeMap, BTreeSet};

use client_link::{info, own, Ev};
use mcp_rs_core::client::{
    Answers, Client, ClientConfig, ClientError, ClientStorage, InvalidFrame, Mode, Options,
    Request, RequestHandle,
};
use mcp_rs_core::ClientCaps;
use serde_json::Value;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len() as u64) as usize)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Waiting at the server, with its wire id.
    Pending(u64),
    /// An `input_required` round waits for `retry`.
    Awaiting,
}

#[derive(Clone, Copy, Debug)]
struct Live {
    state: State,
    progress: bool,
    deadline: u64,
    request: Request<'static>,
}

struct World {
    client: Client<'static>,
    modern: bool,
    out: Vec<u8>,
    now: u64,
    live: BTreeMap<RequestHandle, Live>,
    /// Every request ever sent.
    handles: Vec<RequestHandle>,
    ids: BTreeSet<u64>,
    /// Server requests (raw id) sent and not yet answered.
    asked: BTreeSet<String>,
    pings_answered: usize,
    next_server_id: u64,
    /// How often each path was taken (the run must take them all).
    seen: BTreeMap<&'static str, usize>,
}

const TIMEOUT: u64 = 1_000;
const REQUESTS: [Request<'static>; 5] = [
    Request::ListTools { cursor: None },
    Request::ListTools { cursor: Some("c") },
    Request::CallTool {
        name: "t",
        arguments: Some(r#"{"x":1}"#),
    },
    Request::GetPrompt {
        name: "p",
        arguments: None,
    },
    Request::ReadResource { uri: "test://r" },
];

impl World {
    fn new(modern: bool) -> Self {
        let storage: &'static mut ClientStorage<6> = Box::leak(Box::new(ClientStorage::new()));
        let config = ClientConfig {
            mode: if modern { Mode::Auto } else { Mode::Legacy },
            capabilities: ClientCaps::SAMPLING,
            request_timeout_ms: TIMEOUT,
            ..ClientConfig::new(info())
        };
        let mut w = World {
            client: Client::new(config, storage),
            modern,
            out: vec![0; 4096],
            now: 0,
            live: BTreeMap::new(),
            handles: Vec::new(),
            ids: BTreeSet::new(),
            asked: BTreeSet::new(),
            pings_answered: 0,
            next_server_id: 1,
            seen: BTreeMap::new(),
        };
        let sent = w.client.connect(0, &mut w.out).unwrap();
        w.frame(sent.len);
        let reply = if modern {
            r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}"#
        } else {
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}"#
        };
        let events = w.feed(reply);
        assert!(
            matches!(events.as_slice(), [Ev::Handshake { .. }, Ev::Connected(..)]),
            "{events:?}"
        );
        w
    }

    /// Checks a frame the client wrote; returns it parsed.
    fn frame(&mut self, len: usize) -> Value {
        let bytes = &self.out[..len];
        assert!(!bytes.contains(&b'\n'));
        let v: Value = serde_json::from_slice(bytes).expect("one JSON frame");
        match (v.get("id"), v.get("method").and_then(Value::as_str)) {
            (Some(id), Some(_)) => {
                let id = id.as_u64().expect("integer ids");
                assert!(self.ids.insert(id), "id {id} reused");
            }
            (None, Some("notifications/cancelled")) => {
                let id = v["params"]["requestId"].as_u64().unwrap();
                let waiting = self.live.values().any(|l| l.state == State::Pending(id));
                assert!(waiting, "cancelled {id}, which waits for nothing");
            }
            (None, Some(_)) => {}
            (Some(id), None) => {
                let id = id.to_string();
                if v["result"] == serde_json::json!({}) {
                    self.pings_answered += 1;
                }
                assert!(self.asked.remove(&id), "answered {id} twice or unasked");
            }
            (None, None) => panic!("neither request, notification nor response: {v}"),
        }
        v
    }

    /// Handles a frame and drains everything.
    fn feed(&mut self, frame: &str) -> Vec<Ev> {
        let mut events = Vec::new();
        let mut received = self.client.handle(self.now, frame.as_bytes());
        while let Some(ev) = received.next_event(&mut self.client) {
            events.push(own_loose(ev));
        }
        self.drain(&mut events);
        events
    }

    fn drain(&mut self, events: &mut Vec<Ev>) {
        let mut frames = Vec::new();
        while let Some(tx) = self.client.poll_transmit(&mut self.out).unwrap() {
            frames.push(self.frame(tx.len));
            assert!(frames.len() < 64, "poll_transmit terminates");
        }
        while let Some(ev) = self.client.poll_event() {
            events.push(own(ev));
            assert!(events.len() < 64, "poll_event terminates");
        }
        // Cancellations are sent before the model forgets the timed-out requests.
        for ev in events.iter() {
            self.account(ev);
        }
    }

    fn saw(&mut self, what: &'static str) {
        *self.seen.entry(what).or_default() += 1;
    }

    /// Applies an event to the model, checking it names a live request.
    fn account(&mut self, ev: &Ev) {
        self.saw(match ev {
            Ev::Result { .. } => "result",
            Ev::Error { .. } => "error",
            Ev::TimedOut { .. } => "timeout",
            Ev::Invalid(InvalidFrame::MalformedResult { .. }) => "malformed result",
            Ev::Invalid(InvalidFrame::UnknownResponse) => "unknown response",
            Ev::Invalid(_) => "invalid frame",
            Ev::InputRequired { .. } => "input required",
            Ev::Progress { .. } => "progress",
            Ev::Request { .. } => "server request",
            Ev::ListChanged(_) => "list changed",
            _ => "other",
        });
        let ended = match ev {
            Ev::Result { handle, .. }
            | Ev::Error { handle, .. }
            | Ev::TimedOut { handle, .. }
            | Ev::Invalid(InvalidFrame::MalformedResult { handle, .. }) => Some(*handle),
            Ev::InputRequired { handle, .. } => {
                let live = self.live.get_mut(handle).expect("round of a live request");
                assert!(matches!(live.state, State::Pending(_)));
                live.state = State::Awaiting;
                None
            }
            Ev::Progress { handle, .. } => {
                let live = self.live.get(handle).expect("progress of a live request");
                assert!(live.progress && matches!(live.state, State::Pending(_)));
                None
            }
            Ev::Request { id, .. } => {
                let tx = self
                    .client
                    .respond(
                        id,
                        r#"{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}"#,
                        &mut self.out,
                    )
                    .unwrap();
                self.frame(tx.len);
                None
            }
            _ => None,
        };
        if let Some(h) = ended {
            assert!(
                self.live.remove(&h).is_some(),
                "{ev:?} ends a request that is not in flight"
            );
        }
    }

    fn check(&self) {
        assert_eq!(self.client.requests_in_flight(), self.live.len());
        let earliest = self
            .live
            .values()
            .filter(|l| matches!(l.state, State::Pending(_)))
            .map(|l| l.deadline)
            .min();
        assert_eq!(self.client.poll_timeout(), earliest);
    }

    fn pending_ids(&self) -> Vec<u64> {
        self.live
            .values()
            .filter_map(|l| match l.state {
                State::Pending(id) => Some(id),
                State::Awaiting => None,
            })
            .collect()
    }

    fn step(&mut self, rng: &mut Rng) {
        let mut events = Vec::new();
        match rng.below(14) {
            0..=2 => {
                let request = *rng.pick(&REQUESTS).unwrap();
                let options = Options {
                    progress: rng.below(2) == 0,
                    ..Options::default()
                };
                match self.client.send(&request, options, self.now, &mut self.out) {
                    Ok(sent) => {
                        let v = self.frame(sent.len);
                        let id = v["id"].as_u64().unwrap();
                        self.handles.push(sent.handle);
                        let live = Live {
                            state: State::Pending(id),
                            progress: options.progress,
                            deadline: self.now + TIMEOUT,
                            request,
                        };
                        assert!(self.live.insert(sent.handle, live).is_none());
                    }
                    Err(ClientError::TooManyRequests { capacity: 6 }) => {
                        self.saw("full");
                        assert_eq!(self.live.len(), 6)
                    }
                    Err(e) => panic!("{e:?}"),
                }
            }
            3 => {
                // Cancel a live or an ended request.
                let Some(&h) = rng.pick(&self.handles) else {
                    return;
                };
                match (
                    self.client.cancel(h, None, &mut self.out),
                    self.live.get(&h).copied(),
                ) {
                    (Ok(Some(tx)), Some(live)) => {
                        self.saw("cancel");
                        assert!(matches!(live.state, State::Pending(_)));
                        self.frame(tx.len);
                        self.live.remove(&h);
                    }
                    (Ok(None), Some(live)) => {
                        self.saw("abandon round");
                        assert_eq!(live.state, State::Awaiting);
                        self.live.remove(&h);
                    }
                    (Err(ClientError::UnknownRequest), None) => self.saw("stale cancel"),
                    other => panic!("cancel: {other:?}"),
                }
            }
            4 => {
                // Retry a round (or try on a request that is not one).
                let entries: Vec<(RequestHandle, Live)> =
                    self.live.iter().map(|(h, l)| (*h, *l)).collect();
                let Some(&(h, live)) = rng.pick(&entries) else {
                    return;
                };
                let answers = Answers {
                    input_responses: Some(r#"{"a":{"roots":[]}}"#),
                    request_state: Some("s"),
                };
                let r = self.client.retry(
                    h,
                    &live.request,
                    answers,
                    Options::default(),
                    self.now,
                    &mut self.out,
                );
                match (r, live.state) {
                    (Ok(sent), State::Awaiting) => {
                        self.saw("retry");
                        assert_eq!(sent.handle, h);
                        let id = self.frame(sent.len)["id"].as_u64().unwrap();
                        let l = self.live.get_mut(&h).unwrap();
                        l.state = State::Pending(id);
                        l.progress = false;
                        l.deadline = self.now + TIMEOUT;
                    }
                    (Err(ClientError::NotAwaitingInput), State::Pending(_)) => {}
                    other => panic!("retry: {other:?}"),
                }
            }
            5 => {
                self.now += rng.below(TIMEOUT * 2 / 3);
                self.client.handle_timeout(self.now);
                // Timeouts are reported by the drain below.
                let due: Vec<_> = self
                    .live
                    .iter()
                    .filter(|(_, l)| matches!(l.state, State::Pending(_)) && l.deadline <= self.now)
                    .map(|(k, _)| *k)
                    .collect();
                self.drain(&mut events);
                for k in due {
                    assert!(!self.live.contains_key(&k), "{k:?} did not time out");
                }
                return self.check();
            }
            n => {
                let frame = self.server_frame(n, rng);
                self.feed(&frame);
                return self.check();
            }
        }
        self.drain(&mut events);
        self.check();
    }

    /// Something the server sends.
    fn server_frame(&mut self, n: u64, rng: &mut Rng) -> String {
        let pending = self.pending_ids();
        let id = rng.pick(&pending).copied().unwrap_or(9_999);
        match n {
            6 | 7 => {
                let result = match rng.below(4) {
                    0 if self.modern => {
                        r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"s"}"#
                    }
                    1 => r#"{"tools":[],"content":[],"messages":[],"contents":[]}"#,
                    2 => "[1]",
                    _ => "{}",
                };
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
            }
            8 => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"x"}}}}"#)
            }
            9 => format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":{}}}}}"#,
                rng.below(100)
            ),
            10 if !self.modern => {
                let sid = format!("\"s{}\"", self.next_server_id);
                self.next_server_id += 1;
                self.asked.insert(sid.clone());
                let method = if rng.below(2) == 0 {
                    "ping"
                } else {
                    "sampling/createMessage"
                };
                format!(
                    r#"{{"jsonrpc":"2.0","id":{sid},"method":"{method}","params":{{"messages":[],"maxTokens":1}}}}"#
                )
            }
            11 => r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into(),
            12 => {
                let garbage = [
                    r#"{"jsonrpc":"2.0","id":"#,
                    "[",
                    "{}",
                    "\u{0}",
                    r#"{"jsonrpc":"2.0","id":123456789,"result":{}}"#,
                ];
                rng.pick(&garbage).unwrap().to_string()
            }
            _ => {
                // A stale id: one that was used and ended.
                let used: Vec<u64> = self.ids.iter().copied().collect();
                let stale = rng.pick(&used).copied().unwrap_or(1);
                if pending.contains(&stale) {
                    return "{}".into();
                }
                format!(r#"{{"jsonrpc":"2.0","id":{stale},"result":{{}}}}"#)
            }
        }
    }
}

/// `own` without the typed readers' assertions (results here are deliberately odd).
fn own_loose(ev: mcp_rs_core::client::Event<'_>) -> Ev {
    match ev {
        mcp_rs_core::client::Event::Result(r) => Ev::Result {
            handle: r.handle,
            method: r.method,
            result: serde_json::from_str(r.result.as_str()).unwrap(),
            read: Default::default(),
        },
        other => own(other),
    }
}

#[test]
fn random_sequences_keep_every_invariant() {
    let mut steps = 0;
    let mut seen: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut pings = 0;
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut world = World::new(seed % 2 == 0);
        for _ in 0..60 {
            world.step(&mut rng);
            steps += 1;
        }
        // Everything still in flight ends by a timeout once the clock runs out.
        world.now += 10 * TIMEOUT;
        world.client.handle_timeout(world.now);
        let mut events = Vec::new();
        world.drain(&mut events);
        assert!(
            world.live.values().all(|l| l.state == State::Awaiting),
            "seed {seed}: {:?}",
            world.live
        );
        assert!(
            world.asked.is_empty(),
            "seed {seed}: unanswered {:?}",
            world.asked
        );
        for (k, n) in world.seen {
            *seen.entry(k).or_default() += n;
        }
        pings += world.pings_answered;
    }
    assert_eq!(steps, 300 * 60);
    let every = [
        "result",
        "error",
        "timeout",
        "malformed result",
        "unknown response",
        "invalid frame",
        "input required",
        "progress",
        "server request",
        "list changed",
        "cancel",
        "abandon round",
        "stale cancel",
        "retry",
        "full",
    ];
    for path in every {
        assert!(
            seen.get(path).copied().unwrap_or(0) >= 5,
            "{path}: {seen:?}"
        );
    }
    assert!(pings >= 5, "{pings}");
}
