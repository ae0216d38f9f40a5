//! The model: what the client was asked to do and what it wrote, and the checks of every
//! frame and event against it (the invariants are listed in `mod.rs`).

use std::collections::VecDeque;

use mcp_rs_core::client::{
    Answers, Client, ClientError, Event, HandshakeError, InvalidFrame, Options, Reference, Request,
    RequestHandle,
};
use mcp_rs_core::wire::jsonrpc::StoredId;
use mcp_rs_core::wire::method::{Eras, Method};
use mcp_rs_core::{LogLevel, ProtocolVersion};
use serde_json::{json, Value};

use super::grammar::{Body, IdForm, Note, Op, Req, SMethod, RAW};

/// What a run did (for the replay test's statistics).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// Requests the client wrote (retries and the handshake included).
    pub requests: usize,
    /// Outcomes reported (results, errors, rounds, malformed results, timeouts).
    pub outcomes: usize,
    /// Frames the server sent.
    pub frames: usize,
    /// Whether a handshake completed.
    pub connected: bool,
}

const LEVELS: [LogLevel; 8] = [
    LogLevel::Debug,
    LogLevel::Info,
    LogLevel::Notice,
    LogLevel::Warning,
    LogLevel::Error,
    LogLevel::Critical,
    LogLevel::Alert,
    LogLevel::Emergency,
];

/// A request the client wrote.
struct Sent {
    id: u32,
    handle: RequestHandle,
    method: Method,
    state: St,
    req: Req,
    progress: bool,
    deadline: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Pending,
    Awaiting,
    /// Past its deadline: the cancellation and the event are owed.
    TimingOut {
        cancel: bool,
        event: bool,
    },
    Ended,
}

impl St {
    /// Holds a slot (a timed-out request does until its cancellation and event are taken).
    fn live(self) -> bool {
        matches!(self, St::Pending | St::Awaiting | St::TimingOut { .. })
    }
}

/// An answer the client owes on its own.
#[derive(Clone, Copy, Debug)]
enum Owed {
    /// `{}` to a `ping`.
    Pong,
    /// -32601.
    NotFound,
    /// -32600 without an id (the id was too long to echo).
    TooLong,
}

/// The handshake request in flight.
#[derive(Clone, Copy, Debug)]
struct Hs {
    id: u32,
    method: Method,
    handle: Option<RequestHandle>,
    deadline: u64,
}

/// What one response in a frame owes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// An outcome naming this request.
    Outcome(RequestHandle, Method),
    /// `Invalid(UnknownResponse)`.
    Unknown,
    /// The handshake's answer: no event or `Handshake`.
    Handshake,
    /// An id that is not ours (a string, a float, null): one `Invalid`.
    Foreign,
}

/// The client under test, its buffers and the model.
pub struct Run<'c> {
    client: Client<'c>,
    out: Vec<u8>,
    big: Vec<u8>,
    now: u64,
    reqs: Vec<Sent>,
    /// Every request id written, in order (answers pick from them).
    ids: Vec<u32>,
    hs: Option<Hs>,
    /// Server requests in frames the model did not write (raw bytes): answers or reports
    /// it cannot predict, allowed up to this many until the end of the op.
    wild: usize,
    /// `initialize` was accepted: `notifications/initialized` is owed.
    initialized_owed: bool,
    /// `Connected` is owed.
    connected_owed: Option<bool>,
    version: Option<ProtocolVersion>,
    connected_once: bool,
    /// A handshake timeout was seen by the model: `HandshakeFailed(TimedOut)` is owed.
    hs_timeout_owed: bool,
    /// Server requests reported to the application.
    inbound: Vec<StoredId>,
    /// Answers the client owes on its own: the id and what.
    owed: VecDeque<(Value, Owed)>,
    report: Report,
}

impl<'c> Run<'c> {
    pub fn new(client: Client<'c>, out_len: usize) -> Self {
        Run {
            client,
            out: vec![0; out_len],
            big: vec![0; 1 << 20],
            now: 0,
            reqs: Vec::new(),
            ids: Vec::new(),
            hs: None,
            wild: 0,
            initialized_owed: false,
            connected_owed: None,
            version: None,
            connected_once: false,
            hs_timeout_owed: false,
            inbound: Vec::new(),
            owed: VecDeque::new(),
            report: Report::default(),
        }
    }

    /// The end of the run: the last invariants.
    pub fn finish(mut self) -> Report {
        self.drain();
        self.report
    }

    fn live(&self) -> usize {
        self.reqs.iter().filter(|r| r.state.live()).count() + usize::from(self.hs.is_some())
    }

    fn modern_now(&self) -> bool {
        match self.version {
            Some(v) => v.is_modern(),
            None => self.hs.is_some_and(|h| h.method == Method::Discover),
        }
    }

    /// What the client's `advance(now)` does, in the model: requests past their deadline
    /// time out, a handshake past its deadline fails.
    fn pre_advance(&mut self) {
        let now = self.now;
        for r in &mut self.reqs {
            if r.state == St::Pending && r.deadline <= now {
                r.state = St::TimingOut {
                    cancel: false,
                    event: false,
                };
            }
        }
        if self.hs.is_some_and(|h| h.deadline <= now) {
            self.hs = None;
            self.hs_timeout_owed = true;
        }
    }

    pub fn op(&mut self, op: &Op) {
        match op {
            Op::Connect => self.connect(),
            Op::Send {
                request,
                progress,
                timeout,
                level,
            } => self.send(request, *progress, *timeout, *level),
            Op::Answer { pick, id, body } => self.answer(*pick, *id, body),
            Op::Handshake(body) => {
                self.pre_advance();
                let id = self.hs.map(|h| h.id).unwrap_or(1);
                let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},{}}}"#, body.render());
                let expect = self.expect_for(id, IdForm::Exact);
                let expects = [expect];
                let one = !matches!(body, super::grammar::HandshakeBody::Any(s) if serde_json::from_str::<Value>(s).is_err());
                self.frame(frame.as_bytes(), if one { &expects } else { &[] });
            }
            Op::Notify(note) => {
                let frame = self.render_note(note);
                self.frame(frame.as_bytes(), &[]);
            }
            Op::ServerRequest { method, id } => self.server_request(*method, &id.render()),
            Op::Raw(bytes) => self.frame(bytes, &[]),
            Op::Batch(items) => self.batch(items),
            Op::Advance(ms) => {
                self.now += u64::from(*ms);
                self.pre_advance();
                self.client.handle_timeout(self.now);
            }
            Op::Cancel(pick) => self.cancel(*pick),
            Op::Retry {
                pick,
                same,
                answers,
                state,
            } => self.retry(*pick, *same, *answers, *state),
            Op::Respond { pick, error } => self.respond(*pick, *error),
        }
        self.drain();
    }

    fn connect(&mut self) {
        self.pre_advance();
        let before = self.live();
        match self.client.connect(self.now, &mut self.out) {
            Ok(sent) => {
                assert!(!self.connected_once, "connect succeeded twice");
                self.connected_once = true;
                let frame = self.out[..sent.len].to_vec();
                let v = self.request_frame(&frame);
                let method = v["method"].as_str().unwrap().to_string();
                let expected = if self.client.config().mode == mcp_rs_core::client::Mode::Legacy {
                    "initialize"
                } else {
                    "server/discover"
                };
                assert_eq!(method, expected);
                self.hs = Some(Hs {
                    id: id_of(&v),
                    method: if expected == "initialize" {
                        Method::Initialize
                    } else {
                        Method::Discover
                    },
                    handle: Some(sent.handle),
                    deadline: self.deadline(None),
                });
            }
            Err(ClientError::AlreadyConnected) => assert!(self.connected_once),
            Err(ClientError::TooManyRequests { capacity }) => assert_eq!(capacity, before),
            Err(ClientError::BufferTooSmall { .. }) => {}
            Err(e) => panic!("connect: unexpected {e:?}"),
        }
        assert_eq!(self.client.requests_in_flight(), self.live());
    }

    fn deadline(&self, own: Option<u16>) -> u64 {
        let t = own.map_or(self.client.config().request_timeout_ms, u64::from);
        self.now.saturating_add(t)
    }

    fn send(&mut self, req: &Req, progress: bool, timeout: Option<u16>, level: bool) {
        self.pre_advance();
        let before = self.live();
        let request = request_of(req, None);
        let mut options = Options {
            timeout_ms: timeout.map(u64::from),
            progress,
            log_level: None,
            ..Options::default()
        };
        if level {
            options.log_level = Some(LEVELS[usize::from(timeout.unwrap_or(3)) % 8]);
        }
        let invalid_raw = raw_of(req).is_some_and(|i| i >= 4);
        match self.client.send(&request, options, self.now, &mut self.out) {
            Ok(sent) => {
                assert!(!invalid_raw, "{req:?}: invalid raw JSON was written");
                let frame = self.out[..sent.len].to_vec();
                let v = self.request_frame(&frame);
                assert_eq!(v["method"], request.method().as_str());
                let version = self.version.expect("a request was sent before Connected");
                if version.is_modern() {
                    assert_eq!(
                        v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
                        version.as_str()
                    );
                }
                if progress {
                    assert_eq!(v["params"]["_meta"]["progressToken"], json!(id_of(&v)));
                }
                assert!(
                    self.reqs
                        .iter()
                        .all(|r| !r.state.live() || r.handle != sent.handle),
                    "a live handle was handed out again"
                );
                let deadline = self.deadline(timeout);
                self.reqs.push(Sent {
                    id: id_of(&v),
                    handle: sent.handle,
                    method: request.method(),
                    state: St::Pending,
                    req: req.clone(),
                    progress,
                    deadline,
                });
            }
            Err(ClientError::NotConnected) => assert!(self.version.is_none()),
            Err(ClientError::NotInRevision { method, version }) => {
                assert_eq!(Some(version), self.version);
                assert_eq!(method, request.method());
                let allowed = match method.eras() {
                    Eras::Both => true,
                    Eras::Legacy => !version.is_modern(),
                    Eras::Modern => version.is_modern(),
                };
                assert!(!allowed, "{method:?} refused in {version:?}");
            }
            Err(ClientError::TooManyRequests { capacity }) => assert_eq!(capacity, before),
            Err(ClientError::InvalidJson) => assert!(invalid_raw, "{req:?}: valid JSON refused"),
            Err(ClientError::BufferTooSmall { .. }) => {}
            Err(e) => panic!("send: unexpected {e:?}"),
        }
        assert_eq!(self.client.requests_in_flight(), self.live());
    }

    /// What a response with `id` written as `form` owes.
    fn expect_for(&self, id: u32, form: IdForm) -> Expect {
        if !matches!(form, IdForm::Exact) {
            return Expect::Foreign;
        }
        if self.hs.is_some_and(|h| h.id == id) {
            return Expect::Handshake;
        }
        match self
            .reqs
            .iter()
            .find(|r| r.id == id && r.state == St::Pending)
        {
            Some(r) => Expect::Outcome(r.handle, r.method),
            None => Expect::Unknown,
        }
    }

    fn answer(&mut self, pick: u8, form: IdForm, body: &Body) {
        let id = match self.ids.len() {
            0 => u32::from(pick),
            n => self.ids[usize::from(pick) % n],
        };
        let written = match form {
            IdForm::Exact => id.to_string(),
            IdForm::Quoted => format!("\"{id}\""),
            IdForm::Float => format!("{id}.0"),
            IdForm::Null => "null".to_string(),
        };
        let frame = format!(r#"{{"jsonrpc":"2.0","id":{written},{}}}"#, body.render());
        // The same id after `advance` (a deadline at `now` times out first).
        self.pre_advance();
        let expect = self.expect_for(id, form);
        if body.is_one_value() {
            self.frame(frame.as_bytes(), &[expect]);
        } else {
            self.frame(frame.as_bytes(), &[]); // any text: it may add members
        }
    }

    fn batch(&mut self, items: &[(u8, Body)]) {
        let ids: Vec<u32> = self
            .reqs
            .iter()
            .map(|r| r.id)
            .chain(std::iter::once(u32::MAX))
            .collect();
        let chosen: Vec<(u32, Body)> = items
            .iter()
            .take(8)
            .map(|(pick, body)| {
                let body = match body {
                    Body::AnyResult(_) => Body::Result(0),
                    b => b.clone(),
                };
                (ids[usize::from(*pick) % ids.len()], body)
            })
            .collect();
        let parts: Vec<String> = chosen
            .iter()
            .map(|(id, body)| format!(r#"{{"jsonrpc":"2.0","id":{id},{}}}"#, body.render()))
            .collect();
        let frame = format!("[{}]", parts.join(","));
        self.pre_advance();
        // Each item in turn: a request answered earlier in the batch is no longer pending.
        let mut expects = Vec::new();
        let mut answered: Vec<u32> = Vec::new();
        for (id, body) in &chosen {
            let pending = self
                .reqs
                .iter()
                .find(|r| r.id == *id && r.state == St::Pending && !answered.contains(id));
            expects.push(match pending {
                Some(r) => {
                    // An input_required round leaves it waiting: not pending either way.
                    let _ = body;
                    answered.push(*id);
                    Expect::Outcome(r.handle, r.method)
                }
                None => Expect::Unknown,
            });
        }
        if expects.is_empty() {
            self.frame(frame.as_bytes(), &[Expect::Foreign]);
        } else {
            self.frame(frame.as_bytes(), &expects);
        }
    }

    fn render_note(&self, note: &Note) -> String {
        let (method, params) = match note {
            Note::Progress(pick, valid) => {
                let token = match self.ids.len() {
                    0 => json!(u32::from(*pick)),
                    n => json!(self.ids[usize::from(*pick) % n]),
                };
                let params = if *valid {
                    json!({"progressToken": token, "progress": 1, "total": 3, "message": "m"})
                } else {
                    json!({"progressToken": token, "progress": "x"})
                };
                ("notifications/progress".to_string(), Some(params))
            }
            Note::ListChanged(k) => (
                ["tools", "prompts", "resources"][usize::from(*k) % 3].to_string(),
                None,
            ),
            Note::Updated(uri) => (
                "notifications/resources/updated".to_string(),
                Some(json!({ "uri": uri.get() })),
            ),
            Note::Log(l) => (
                "notifications/message".to_string(),
                Some(if *l < 200 {
                    json!({"level": LEVELS[usize::from(*l) % 8].as_str(), "data": {"x": [1]}, "logger": "l"})
                } else {
                    json!({"level": "loud"})
                }),
            ),
            Note::Cancelled(id) => (
                "notifications/cancelled".to_string(),
                Some(
                    json!({"requestId": serde_json::from_str::<Value>(&id.render()).unwrap(), "reason": "r"}),
                ),
            ),
            Note::Other(m, params) => {
                let params = params
                    .as_ref()
                    .and_then(|p| serde_json::from_str::<Value>(p).ok());
                (m.get().to_string(), params)
            }
        };
        let method = match note {
            Note::ListChanged(_) => format!("notifications/{method}/list_changed"),
            _ => method,
        };
        let mut v = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            v["params"] = p;
        }
        v.to_string()
    }

    fn server_request(&mut self, method: SMethod, id: &str) {
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{}","params":{{}}}}"#,
            method.name()
        );
        self.report.frames += 1;
        self.pre_advance();
        let owed_before = self.owed.len();
        let legacy = !self.modern_now();
        let served = legacy
            && match method {
                SMethod::Sampling => self.client.config().capabilities.0 & 1 != 0,
                SMethod::Elicit => self.client.config().capabilities.0 & 2 != 0,
                SMethod::Roots => self.client.config().capabilities.0 & 4 != 0,
                _ => false,
            };
        let mut received = self.client.handle(self.now, frame.as_bytes());
        let mut events = 0;
        while let Some(event) = received.next_event(&mut self.client) {
            events += 1;
            match event {
                Event::Request(r) => {
                    assert!(served, "{method:?} reported, not answered by the client");
                    assert_eq!(r.id.as_raw(), id);
                    self.inbound.push(r.id);
                }
                Event::Invalid(InvalidFrame::IdTooLong) => {
                    assert!(id.len() > 64);
                    self.owed.push_back((Value::Null, Owed::TooLong));
                }
                Event::Invalid(InvalidFrame::RepliesFull) => assert!(!served),
                Event::Invalid(InvalidFrame::Json(_)) => {} // deeper than the bound
                other => panic!("a server request gave {other:?}"),
            }
        }
        assert!(events <= 1);
        if events == 0 {
            assert!(
                id.len() <= 64,
                "an id longer than 64 bytes answered as if kept"
            );
            assert!(!served, "{method:?} was not reported");
            let kind = if legacy && matches!(method, SMethod::Ping) {
                Owed::Pong
            } else {
                Owed::NotFound
            };
            let id: Value = serde_json::from_str(id).unwrap();
            self.owed.push_back((id, kind));
        }
        assert!(self.owed.len() <= owed_before + 1);
    }

    fn cancel(&mut self, pick: u8) {
        let n = self.reqs.len();
        let index = usize::from(pick) % (n + 1);
        if index == n {
            if let Some(handle) = self.hs.and_then(|h| h.handle) {
                assert_eq!(
                    self.client.cancel(handle, None, &mut self.out),
                    Err(ClientError::CannotCancel)
                );
            }
            return;
        }
        let (handle, state, id) = {
            let r = &self.reqs[index];
            (r.handle, r.state, r.id)
        };
        let result = self.client.cancel(handle, Some("bye"), &mut self.out);
        match (state, result) {
            (St::Pending, Ok(Some(tx))) => {
                let v = self.any_frame(&self.out[..tx.len]);
                assert_eq!(v["method"], "notifications/cancelled");
                assert_eq!(v["params"]["requestId"], json!(id));
                self.reqs[index].state = St::Ended;
            }
            (St::Pending, Err(ClientError::BufferTooSmall { .. })) => {}
            (St::Awaiting, Ok(None)) => self.reqs[index].state = St::Ended,
            (St::Ended, Err(ClientError::UnknownRequest)) => {}
            (s, r) => panic!("cancel of a {s:?} request: {r:?}"),
        }
        assert_eq!(self.client.requests_in_flight(), self.live());
    }

    fn retry(&mut self, pick: u8, same: bool, answers: u8, state: bool) {
        if self.reqs.is_empty() {
            return;
        }
        self.pre_advance();
        let index = usize::from(pick) % self.reqs.len();
        let (handle, st, req) = {
            let r = &self.reqs[index];
            (r.handle, r.state, r.req.clone())
        };
        let other = "zz-other-target";
        let request = if same {
            request_of(&req, None)
        } else {
            request_of(&req, Some(other))
        };
        let mismatch = !same && request_of(&req, None) != request;
        let raw = RAW[usize::from(answers) % RAW.len()];
        let invalid = usize::from(answers) % RAW.len() >= 4 || raw_of(&req).is_some_and(|i| i >= 4);
        let given = Answers {
            input_responses: Some(raw),
            request_state: state.then_some("s1"),
        };
        let result = self.client.retry(
            handle,
            &request,
            given,
            Options::default(),
            self.now,
            &mut self.out,
        );
        match (st, result) {
            (_, Err(ClientError::NotConnected)) => assert!(self.version.is_none()),
            (St::Awaiting, Ok(sent)) => {
                assert!(
                    !mismatch && !invalid,
                    "a retry that should be refused was sent"
                );
                assert_eq!(sent.handle, handle, "a retry keeps its handle");
                let frame = self.out[..sent.len].to_vec();
                let v = self.request_frame(&frame);
                assert_eq!(
                    v["params"]["inputResponses"],
                    serde_json::from_str::<Value>(raw).unwrap()
                );
                if state {
                    assert_eq!(v["params"]["requestState"], "s1");
                } else {
                    assert!(v["params"].get("requestState").is_none());
                }
                let deadline = self.deadline(None);
                let r = &mut self.reqs[index];
                r.id = id_of(&v);
                r.state = St::Pending;
                r.deadline = deadline;
            }
            (St::Awaiting, Err(ClientError::RetryMismatch)) => assert!(mismatch),
            (St::Awaiting, Err(ClientError::InvalidJson)) => assert!(invalid && !mismatch),
            (St::Awaiting, Err(ClientError::BufferTooSmall { .. })) => {}
            (St::Pending | St::TimingOut { .. }, Err(ClientError::NotAwaitingInput)) => {}
            (St::Ended, Err(ClientError::UnknownRequest)) => {}
            (s, r) => panic!("retry of a {s:?} request: {r:?}"),
        }
        assert_eq!(self.client.requests_in_flight(), self.live());
    }

    fn respond(&mut self, pick: u8, error: bool) {
        if self.inbound.is_empty() {
            return;
        }
        let id = self.inbound[usize::from(pick) % self.inbound.len()];
        let result = if error {
            self.client
                .respond_error(&id, -1, "declined \"no\"", &mut self.out)
        } else {
            self.client.respond(&id, r#"{"roots":[]}"#, &mut self.out)
        };
        match result {
            Ok(tx) => {
                let v = self.any_frame(&self.out[..tx.len]);
                assert_eq!(v["id"], serde_json::from_str::<Value>(id.as_raw()).unwrap());
                if error {
                    assert_eq!(v["error"]["code"], -1);
                } else {
                    assert_eq!(v["result"], json!({"roots": []}));
                }
            }
            Err(ClientError::BufferTooSmall { .. }) => {}
            Err(e) => panic!("respond: {e:?}"),
        }
    }

    /// Hands `frame` to the client and checks its events: `expects` (one per response in
    /// it, in order) when the op knows them, else only against the model.
    fn frame(&mut self, frame: &[u8], expects: &[Expect]) {
        self.report.frames += 1;
        self.pre_advance();
        let serde: Option<Value> = serde_json::from_slice(frame).ok();
        // Server requests in it (by the JSON-RPC shape): the model does not predict them.
        let is_request = |m: &Value| m.get("method").is_some() && m.get("id").is_some();
        self.wild += match &serde {
            Some(Value::Array(items)) => items.iter().filter(|m| is_request(m)).count(),
            Some(m) => usize::from(is_request(m)),
            None => 0,
        };
        let max_depth = usize::from(self.client.config().max_depth);
        let mut received = self.client.handle(self.now, frame);
        let mut events = Vec::new();
        while let Some(event) = received.next_event(&mut self.client) {
            events.push(format!("{event:?}"));
            let index = events.len() - 1;
            if let Event::Invalid(InvalidFrame::Json(_)) = event {
                assert_eq!(index, 0, "a JSON error after other events");
                let refused = match &serde {
                    None => true,
                    Some(v) => super::super::depth_of(v) > max_depth,
                };
                assert!(
                    refused,
                    "the scanner refused what serde_json reads within the depth bound: {}",
                    String::from_utf8_lossy(frame)
                );
                return;
            }
            let expect = expects.get(index).copied();
            self.observe(event, expect);
        }
        if !expects.is_empty() {
            let owed = expects
                .iter()
                .filter(|e| !matches!(e, Expect::Handshake))
                .count();
            let handshake = expects.contains(&Expect::Handshake);
            if handshake {
                assert!(events.len() <= 1, "a handshake answer gave {events:?}");
            } else {
                assert_eq!(events.len(), owed, "{expects:?} gave {events:?}");
            }
        }
    }

    /// Checks one event of a received frame against the model (and `expect`, if known).
    fn observe(&mut self, event: Event<'_>, expect: Option<Expect>) {
        let outcome = match event {
            Event::Result(r) => Some((r.handle, r.method, St::Ended)),
            Event::Error { handle, method, .. } => Some((handle, method, St::Ended)),
            Event::InputRequired(round) => {
                assert!(
                    self.version.is_some_and(|v| v.is_modern()),
                    "input_required outside 2026-07-28"
                );
                Some((round.handle, round.method, St::Awaiting))
            }
            Event::Invalid(InvalidFrame::MalformedResult { handle, method, .. }) => {
                Some((handle, method, St::Ended))
            }
            _ => None,
        };
        if let Some((handle, method, next)) = outcome {
            self.report.outcomes += 1;
            if let Some(e) = expect {
                assert_eq!(e, Expect::Outcome(handle, method), "{event:?}");
            }
            let r = self
                .reqs
                .iter_mut()
                .find(|r| r.handle == handle && r.state == St::Pending)
                .unwrap_or_else(|| panic!("an outcome for no pending request: {event:?}"));
            assert_eq!(r.method, method);
            r.state = next;
            return;
        }
        match event {
            Event::Invalid(InvalidFrame::UnknownResponse) => {
                if let Some(e) = expect {
                    assert!(
                        matches!(e, Expect::Unknown | Expect::Foreign),
                        "{e:?}: unknown"
                    );
                }
            }
            Event::Handshake(h) => {
                if let Some(e) = expect {
                    assert_eq!(e, Expect::Handshake);
                }
                let hs = self
                    .hs
                    .take()
                    .expect("a Handshake event without a handshake");
                assert_eq!(h.method, hs.method);
                match hs.method {
                    Method::Initialize => self.initialized_owed = true,
                    _ => self.connected_owed = Some(true),
                }
            }
            Event::Progress(p) => {
                assert!(expect.is_none());
                let r = self
                    .reqs
                    .iter()
                    .find(|r| r.handle == p.handle)
                    .expect("progress for an unknown handle");
                assert!(
                    r.progress && r.state == St::Pending,
                    "progress for {:?}",
                    r.state
                );
            }
            Event::Request(r) => {
                assert!(self.wild > 0, "a server request the model did not send");
                self.wild -= 1;
                self.inbound.push(r.id);
            }
            Event::Connected { .. } | Event::HandshakeFailed(_) | Event::TimedOut { .. } => {
                panic!("{event:?} from a frame")
            }
            Event::Invalid(_) => {
                if let Some(e) = expect {
                    assert!(matches!(e, Expect::Foreign), "{e:?} got {event:?}");
                }
            }
            _ => assert!(
                expect.is_none() || expect == Some(Expect::Foreign),
                "{event:?}"
            ),
        }
    }

    /// Drains `poll_transmit` (a small buffer first, then a big one) and `poll_event`,
    /// then checks the timers and counts.
    fn drain(&mut self) {
        // A handshake answered with no Handshake event either failed (HandshakeFailed) or
        // fell back (initialize is written now).
        loop {
            let len = match self.client.poll_transmit(&mut self.out) {
                Ok(Some(tx)) => Some(self.out[..tx.len].to_vec()),
                Ok(None) => None,
                Err(ClientError::BufferTooSmall {
                    required: needed, ..
                }) => {
                    assert!(needed > self.out.len());
                    match self.client.poll_transmit(&mut self.big) {
                        Ok(Some(tx)) => {
                            assert!(tx.len <= needed, "needed {needed}, wrote {}", tx.len);
                            Some(self.big[..tx.len].to_vec())
                        }
                        other => panic!("a frame kept for a bigger buffer: {other:?}"),
                    }
                }
                Err(e) => panic!("poll_transmit: {e:?}"),
            };
            let Some(frame) = len else { break };
            self.transmitted(&frame);
        }
        while let Some(event) = self.client.poll_event() {
            match event {
                Event::Connected { version, .. } => {
                    assert!(self.connected_owed.take().is_some(), "Connected not owed");
                    assert_eq!(self.client.version(), Some(version));
                    self.version = Some(version);
                    self.report.connected = true;
                }
                Event::HandshakeFailed(e) => {
                    if e == HandshakeError::TimedOut {
                        assert!(
                            self.hs_timeout_owed,
                            "a handshake timeout the model did not see"
                        );
                        self.hs_timeout_owed = false;
                    } else {
                        // The answer was refused or unusable.
                        assert!(
                            self.hs.take().is_some(),
                            "HandshakeFailed without a handshake"
                        );
                    }
                    assert!(self.client.version().is_none());
                }
                Event::TimedOut { handle, method } => {
                    self.report.outcomes += 1;
                    let r = self
                        .reqs
                        .iter_mut()
                        .find(|r| r.handle == handle && matches!(r.state, St::TimingOut { .. }))
                        .unwrap_or_else(|| panic!("TimedOut for no timed-out request"));
                    assert_eq!(r.method, method);
                    if let St::TimingOut { event, .. } = &mut r.state {
                        assert!(!*event, "TimedOut twice");
                        *event = true;
                    }
                }
                other => panic!("poll_event gave {other:?}"),
            }
        }
        // Every timeout was reported both ways.
        for r in &mut self.reqs {
            if let St::TimingOut { cancel, event } = r.state {
                assert!(
                    cancel && event,
                    "a timeout owes its cancellation and its event ({cancel}, {event})"
                );
                r.state = St::Ended;
            }
        }
        assert!(
            !self.hs_timeout_owed,
            "the handshake timed out without HandshakeFailed"
        );
        assert!(
            !self.initialized_owed,
            "notifications/initialized not written"
        );
        assert!(self.connected_owed.is_none(), "Connected not reported");
        self.wild = 0;
        assert!(
            self.owed.is_empty(),
            "answers owed to the server: {:?}",
            self.owed
        );
        assert_eq!(self.client.requests_in_flight(), self.live());
        let earliest = self
            .reqs
            .iter()
            .filter(|r| r.state == St::Pending)
            .map(|r| r.deadline)
            .chain(self.hs.map(|h| h.deadline))
            .min();
        assert_eq!(self.client.poll_timeout(), earliest);
    }

    /// A frame from `poll_transmit`.
    fn transmitted(&mut self, frame: &[u8]) {
        let v = self.any_frame(frame);
        match (v.get("method").and_then(Value::as_str), v.get("id")) {
            (Some("initialize"), Some(_)) => {
                // The fallback after a refused discover.
                let id = id_of(&v);
                self.check_fresh(id);
                self.ids.push(id);
                self.report.requests += 1;
                assert!(self.hs.is_none_or(|h| h.method == Method::Discover));
                self.hs = Some(Hs {
                    id,
                    method: Method::Initialize,
                    handle: None,
                    deadline: self.deadline(None),
                });
            }
            (Some("notifications/initialized"), None) => {
                assert!(self.initialized_owed, "initialized not owed");
                self.initialized_owed = false;
                self.connected_owed = Some(false);
            }
            (Some("notifications/cancelled"), None) => {
                let id = v["params"]["requestId"]
                    .as_u64()
                    .expect("a numeric requestId");
                let r = self
                    .reqs
                    .iter_mut()
                    .find(|r| u64::from(r.id) == id && matches!(r.state, St::TimingOut { .. }))
                    .unwrap_or_else(|| panic!("a cancellation for no timed-out request {id}"));
                if let St::TimingOut { cancel, .. } = &mut r.state {
                    assert!(!*cancel, "cancelled twice");
                    *cancel = true;
                }
            }
            (None, id) if self.owed.is_empty() && self.wild > 0 => {
                self.wild -= 1;
                let pong = v.get("result") == Some(&json!({}));
                let too_long = id.is_none() && v["error"]["code"] == -32600;
                assert!(pong || too_long || v["error"]["code"] == -32601, "{v}");
            }
            (None, id) => {
                let id = id.unwrap_or(&Value::Null);
                let (want, kind) = self
                    .owed
                    .pop_front()
                    .unwrap_or_else(|| panic!("an answer nobody asked for: {v}"));
                assert_eq!(id, &want, "answers in the order of the requests");
                match kind {
                    Owed::Pong => assert_eq!(v["result"], json!({})),
                    Owed::NotFound => assert_eq!(v["error"]["code"], -32601),
                    Owed::TooLong => {
                        assert_eq!(v["error"]["code"], -32600);
                        assert_eq!(v["error"]["data"]["limit"], 64);
                    }
                }
            }
            _ => panic!("poll_transmit wrote {v}"),
        }
    }

    /// A request frame the client wrote: checked and recorded.
    fn request_frame(&mut self, frame: &[u8]) -> Value {
        let v = self.any_frame(frame);
        assert!(v["method"].is_string(), "{v}");
        let id = id_of(&v);
        self.check_fresh(id);
        self.ids.push(id);
        self.report.requests += 1;
        v
    }

    fn check_fresh(&self, id: u32) {
        assert!(id > 0, "id 0");
        assert!(
            self.reqs.iter().all(|r| !(r.id == id && r.state.live()))
                && self.hs.is_none_or(|h| h.id != id),
            "id {id} reused while live"
        );
    }

    /// Any frame the client wrote: one JSON-RPC 2.0 object on one line.
    fn any_frame(&self, frame: &[u8]) -> Value {
        assert!(!frame.contains(&b'\n'), "a newline inside a frame");
        let v: Value = serde_json::from_slice(frame).unwrap_or_else(|e| {
            panic!(
                "the client wrote invalid JSON ({e}): {}",
                String::from_utf8_lossy(frame)
            )
        });
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        v
    }
}

fn id_of(v: &Value) -> u32 {
    let id = v["id"].as_u64().expect("a numeric id");
    u32::try_from(id).expect("an id within u32")
}

/// The index into `RAW` a request embeds, if any.
fn raw_of(req: &Req) -> Option<usize> {
    match req {
        Req::CallTool(_, Some(i)) | Req::GetPrompt(_, Some(i)) => Some(usize::from(*i) % RAW.len()),
        Req::Complete {
            context: Some(i), ..
        } => Some(usize::from(*i) % RAW.len()),
        _ => None,
    }
}

/// The core request for `req`; `target` replaces its target (for a mismatched retry).
fn request_of<'a>(req: &'a Req, target: Option<&'a str>) -> Request<'a> {
    let raw = |i: &Option<u8>| i.map(|i| RAW[usize::from(i) % RAW.len()]);
    let cursor = |c: &'a Option<super::grammar::Text>| c.as_ref().map(|t| t.get());
    match req {
        Req::ListTools(c) => match target {
            Some(t) => Request::ReadResource { uri: t },
            None => Request::ListTools { cursor: cursor(c) },
        },
        Req::CallTool(n, a) => Request::CallTool {
            name: target.unwrap_or(n.get()),
            arguments: raw(a),
        },
        Req::ListPrompts(c) => match target {
            Some(t) => Request::ReadResource { uri: t },
            None => Request::ListPrompts { cursor: cursor(c) },
        },
        Req::GetPrompt(n, a) => Request::GetPrompt {
            name: target.unwrap_or(n.get()),
            arguments: raw(a),
        },
        Req::ListResources(c) => match target {
            Some(t) => Request::ReadResource { uri: t },
            None => Request::ListResources { cursor: cursor(c) },
        },
        Req::ListTemplates(c) => match target {
            Some(t) => Request::ReadResource { uri: t },
            None => Request::ListResourceTemplates { cursor: cursor(c) },
        },
        Req::Read(u) => Request::ReadResource {
            uri: target.unwrap_or(u.get()),
        },
        Req::Subscribe(u) => Request::Subscribe {
            uri: target.unwrap_or(u.get()),
        },
        Req::Unsubscribe(u) => Request::Unsubscribe {
            uri: target.unwrap_or(u.get()),
        },
        Req::Complete {
            prompt,
            target: t,
            argument,
            value,
            context,
        } => match target {
            Some(other) => Request::ReadResource { uri: other },
            None => Request::Complete {
                reference: if *prompt {
                    Reference::Prompt(t.get())
                } else {
                    Reference::Resource(t.get())
                },
                argument: argument.get(),
                value: value.get(),
                context: raw(context),
            },
        },
        Req::Ping => match target {
            Some(t) => Request::ReadResource { uri: t },
            None => Request::Ping,
        },
        Req::SetLevel(l) => match target {
            Some(t) => Request::ReadResource { uri: t },
            None => Request::SetLevel(LEVELS[usize::from(*l) % 8]),
        },
    }
}
