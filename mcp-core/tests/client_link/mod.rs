//! A `Client` talking to our own server `Session` (the test `Pair`) in-process: frames go
//! both ways through the same drive loop an adapter runs. Every frame the client sends is
//! validated against the official schema of the revision it is sent under, and every frame
//! the server sends by the pair. Events are kept as owned copies (`Ev`) for assertions.
#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};

use mcp_rs_core::client::{
    Client, ClientConfig, ClientInfo, ClientStorage, Event, HandshakeError, InvalidFrame, Options,
    Request, RequestHandle, ServerCaps,
};
use mcp_rs_core::wire::jsonrpc::StoredId;
use mcp_rs_core::wire::method::{Method, ServerMethod};
use mcp_rs_core::{ListKind, LogLevel, ProtocolVersion};
use serde_json::Value;

use crate::pair::{harness, Pair};

/// What a typed reader read from a result.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Read {
    pub names: Vec<String>,
    pub next_cursor: Option<String>,
    pub text: Option<String>,
    pub is_error: bool,
}

/// Runs the typed reader of the response's method: every result our server sends must
/// read.
fn read(r: &mcp_rs_core::client::Response<'_>) -> Read {
    let mut read = Read::default();
    match r.method {
        Method::ToolsList | Method::PromptsList | Method::ResourcesList | Method::TemplatesList => {
            let page = r.page().expect("a list page");
            read.names = page.names().map(|n| n.to_string()).collect();
            assert_eq!(
                read.names.len(),
                page.items().count(),
                "every item has a name"
            );
            read.next_cursor = page.next_cursor.map(|c| c.to_string());
        }
        // A created task (the tasks extension) reads as one.
        #[cfg(feature = "tasks")]
        Method::ToolsCall
            if r.result
                .get("resultType")
                .and_then(|t| t.as_string())
                .is_some_and(|t| t == "task") =>
        {
            let task = r.task().expect("a created task");
            read.text = Some(task.id.to_string());
        }
        #[cfg(feature = "tasks")]
        Method::TasksGet => {
            r.task().expect("a task");
        }
        Method::ToolsCall => {
            let call = r.tool_call().expect("a tool call result");
            read.text = call.text().map(|t| t.to_string());
            read.is_error = call.is_error;
        }
        Method::PromptsGet => {
            r.prompt_messages().expect("prompt messages");
        }
        Method::ResourcesRead => {
            r.contents().expect("resource contents");
        }
        Method::Complete => {
            r.completion_values().expect("completion values");
        }
        _ => {}
    }
    read
}

/// An owned copy of a client event.
#[derive(Debug, Clone)]
pub(crate) enum Ev {
    Connected(ProtocolVersion, ServerCaps),
    HandshakeFailed(HandshakeError),
    Handshake {
        method: Method,
        server_name: Option<String>,
        instructions: Option<String>,
    },
    Result {
        handle: RequestHandle,
        method: Method,
        result: Value,
        /// What the typed reader of the method read: a list page's item names and
        /// `nextCursor`, a tool call's first text.
        read: Read,
    },
    Error {
        handle: RequestHandle,
        method: Method,
        code: i64,
        message: String,
    },
    InputRequired {
        handle: RequestHandle,
        method: Method,
        /// (key, method, params) of each input request.
        requests: Vec<(String, Option<ServerMethod>, Value)>,
        state: Option<String>,
    },
    TimedOut {
        handle: RequestHandle,
        method: Method,
    },
    Progress {
        handle: RequestHandle,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Request {
        id: StoredId,
        method: ServerMethod,
        params: Value,
    },
    ListChanged(ListKind),
    /// A legacy session's `notifications/resources/updated`.
    ResourceUpdated(String),
    /// One that came on the `subscriptions/listen` stream `handle`.
    StreamUpdated(RequestHandle, String),
    Subscribed {
        handle: RequestHandle,
        notifications: Value,
    },
    Log {
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    },
    Cancelled {
        request_id: String,
        reason: Option<String>,
    },
    Invalid(InvalidFrame),
}

fn value(raw: Option<mcp_rs_core::wire::json::RawJson<'_>>) -> Value {
    raw.map_or(Value::Null, |r| {
        serde_json::from_str(r.as_str()).expect("borrowed JSON parses")
    })
}

/// An owned copy of `ev`.
pub(crate) fn own(ev: Event<'_>) -> Ev {
    match ev {
        Event::Connected {
            version,
            capabilities,
        } => Ev::Connected(version, capabilities),
        Event::HandshakeFailed(e) => Ev::HandshakeFailed(e),
        Event::Handshake(h) => Ev::Handshake {
            method: h.method,
            server_name: h.server_name().map(|n| n.to_string()),
            instructions: h.instructions().map(|i| i.to_string()),
        },
        Event::Result(r) => Ev::Result {
            handle: r.handle,
            method: r.method,
            result: value(Some(r.result)),
            read: read(&r),
        },
        Event::Error {
            handle,
            method,
            error,
        } => Ev::Error {
            handle,
            method,
            code: error.code,
            message: error.message.to_string(),
        },
        Event::InputRequired(round) => Ev::InputRequired {
            handle: round.handle,
            method: round.method,
            requests: round
                .requests()
                .map(|r| (r.key.to_string(), r.method, value(r.params)))
                .collect(),
            state: round.request_state.map(|s| s.to_string()),
        },
        Event::TimedOut { handle, method } => Ev::TimedOut { handle, method },
        Event::Progress(p) => Ev::Progress {
            handle: p.handle,
            progress: p.progress,
            total: p.total,
            message: p.message.map(|m| m.to_string()),
        },
        Event::Request(r) => Ev::Request {
            id: r.id,
            method: r.method,
            params: value(r.params),
        },
        Event::ListChanged(kind) => Ev::ListChanged(kind),
        Event::ResourceUpdated {
            uri,
            subscription: None,
        } => Ev::ResourceUpdated(uri.to_string()),
        Event::ResourceUpdated {
            uri,
            subscription: Some(h),
        } => Ev::StreamUpdated(h, uri.to_string()),
        Event::Subscribed {
            handle,
            notifications,
        } => Ev::Subscribed {
            handle,
            notifications: value(Some(notifications)),
        },
        Event::Log(l) => Ev::Log {
            level: l.level,
            logger: l.logger.map(|s| s.to_string()),
            data: value(Some(l.data)),
        },
        Event::Cancelled { request_id, reason } => Ev::Cancelled {
            request_id: request_id.as_raw().to_string(),
            reason: reason.map(|r| r.to_string()),
        },
        Event::Invalid(i) => Ev::Invalid(i),
        other => panic!("an event this test does not know: {other:?}"),
    }
}

pub(crate) fn info() -> ClientInfo<'static> {
    ClientInfo {
        title: Some("Link Client"),
        ..ClientInfo::new("link-client", "0.1.0")
    }
}

pub(crate) struct Link {
    pub client: Client<'static>,
    pub pair: Pair,
    pub out: Vec<u8>,
    /// The clock of both sides (milliseconds).
    pub now: u64,
    pub events: Vec<Ev>,
    /// Every frame the client sent, parsed (and validated).
    pub sent: Vec<Value>,
    /// Frames from the server not yet handled by the client.
    inbox: VecDeque<String>,
    /// The server's requests (raw id → method), to validate the client's answers.
    server_requests: HashMap<String, String>,
}

impl Link {
    pub(crate) fn new(config: ClientConfig<'static>, pair: Pair) -> Self {
        let storage: &'static mut ClientStorage<8> = Box::leak(Box::new(ClientStorage::new()));
        Link {
            client: Client::new(config, storage),
            pair,
            out: vec![0; 65536],
            now: 1_000,
            events: Vec::new(),
            sent: Vec::new(),
            inbox: VecDeque::new(),
            server_requests: HashMap::new(),
        }
    }

    /// A connected link (the handshake of `config.mode`), its events cleared.
    pub(crate) fn connected(config: ClientConfig<'static>, pair: Pair) -> Self {
        let mut link = Link::new(config, pair);
        link.connect();
        assert!(
            matches!(
                link.events.as_slice(),
                [Ev::Handshake { .. }, Ev::Connected(..)]
            ),
            "{:?}",
            link.events
        );
        link.events.clear();
        link
    }

    pub(crate) fn connect(&mut self) {
        let sent = self
            .client
            .connect(self.now, &mut self.out)
            .expect("connect");
        self.transmit(sent.len);
        self.run();
    }

    /// The revision a client frame is sent under.
    fn revision_of(&self, msg: &Value) -> String {
        match msg.get("method").and_then(Value::as_str) {
            Some("server/discover") => "2026-07-28".into(),
            Some("initialize") => msg["params"]["protocolVersion"]
                .as_str()
                .expect("protocolVersion")
                .into(),
            _ => self
                .client
                .version()
                .expect("connected before sending this")
                .as_str()
                .into(),
        }
    }

    /// Sends the client frame `out[..len]` to the server; its replies wait in the inbox.
    pub(crate) fn transmit(&mut self, len: usize) {
        let bytes = self.out[..len].to_vec();
        assert!(!bytes.contains(&b'\n'), "frame contains a raw newline");
        let msg: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "client emitted invalid JSON ({e}): {}",
                String::from_utf8_lossy(&bytes)
            )
        });
        let rev = self.revision_of(&msg);
        let answered = msg
            .get("id")
            .filter(|_| msg.get("method").is_none())
            .and_then(|id| self.server_requests.get(&id.to_string()))
            .cloned();
        if let Err(e) = harness::validate_client_message(&rev, answered.as_deref(), &msg) {
            panic!("client schema violation for {msg}:\n{e}");
        }
        self.sent.push(msg);
        self.pair.now = self.now;
        for frame in self.pair.send_bytes(&bytes) {
            self.inbox.push_back(frame.value.to_string());
        }
    }

    /// A frame the session wrote outside a `send` (progress, a completion, a request).
    pub(crate) fn deliver(&mut self, tx: mcp_rs_core::Transmit) {
        let v = self.pair.frame(tx);
        self.inbox.push_back(v.to_string());
    }

    /// Queues a raw frame for the client, as if the server had sent it.
    pub(crate) fn inject(&mut self, frame: &str) {
        self.inbox.push_back(frame.to_string());
    }

    /// Takes the next frame from the server, for a test that handles it itself.
    pub(crate) fn next_from_server(&mut self) -> Option<String> {
        self.inbox.pop_front()
    }

    /// Runs the drive loop until nothing is left to deliver either way.
    pub(crate) fn run(&mut self) {
        loop {
            self.drain();
            let Some(frame) = self.inbox.pop_front() else {
                return;
            };
            if let Ok(v) = serde_json::from_str::<Value>(&frame) {
                if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(Value::as_str))
                {
                    self.server_requests.insert(id.to_string(), m.to_string());
                }
            }
            let mut received = self.client.handle(self.now, frame.as_bytes());
            while let Some(ev) = received.next_event(&mut self.client) {
                self.events.push(own(ev));
            }
        }
    }

    /// Drains the client's own frames (to the server) and events.
    pub(crate) fn drain(&mut self) {
        while let Some(tx) = self
            .client
            .poll_transmit(&mut self.out)
            .expect("poll_transmit")
        {
            self.transmit(tx.len);
        }
        while let Some(ev) = self.client.poll_event() {
            self.events.push(own(ev));
        }
    }

    /// Sends a request and runs the loop.
    pub(crate) fn send(&mut self, request: &Request<'_>, options: Options) -> RequestHandle {
        let sent = self
            .client
            .send(request, options, self.now, &mut self.out)
            .expect("send");
        self.transmit(sent.len);
        self.run();
        sent.handle
    }

    /// Takes the events so far.
    pub(crate) fn take(&mut self) -> Vec<Ev> {
        std::mem::take(&mut self.events)
    }

    /// The result of the only event, which must be `Event::Result` for `handle`.
    pub(crate) fn result_of(&mut self, handle: RequestHandle) -> Value {
        match self.take().as_slice() {
            [Ev::Result {
                handle: h, result, ..
            }] if *h == handle => result.clone(),
            other => panic!("expected one result for {handle:?}, got {other:?}"),
        }
    }

    /// The client frames sent so far with `method`.
    pub(crate) fn sent_with(&self, method: &str) -> Vec<&Value> {
        self.sent
            .iter()
            .filter(|m| m.get("method").and_then(Value::as_str) == Some(method))
            .collect()
    }
}
