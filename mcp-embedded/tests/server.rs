//! Both runners serving a whole `ServerHandler` (tools, resources with subscriptions, a
//! prompt, completion) over in-memory embedded-io pipes, in both protocol eras: deferred
//! calls completed later with progress, cancellation, a request to the client timing out
//! on the runner's clock, notifications the device pushes, and frames larger than the
//! transmit buffer. Every frame the runners write is validated against the vendored JSON
//! Schema of its revision (`mcp-core/tests/spec`).

#[path = "../../mcp-core/tests/harness/mod.rs"]
mod harness;

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use mcp_rs_core::model::completion::{CompleteRequest, CompletionResult, Completions};
use mcp_rs_core::model::prompts::{
    GetPromptRequest, Prompt, PromptArgument, PromptResult, PromptSet,
};
use mcp_rs_core::model::resources::{ReadRequest, ReadResult, Resource, ResourceSet};
use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::{
    Call, CallError, CallRequest, CallToken, ClientMethod, ClientOutcome, ClientResponse, Config,
    Content, Dispatch, Event, ListKind, ProgressValue, Role, SecretKey, ServerHandler, ServerInfo,
    Session, SessionStorage, Tool, ToolResult, ToolSet, Transmit,
};
use mcp_rs_embedded::{
    asynch, blocking, Buffers, Deferral, Error, Hooks, Stats, Step, DEFERRED_CALL_MESSAGE,
};
use serde_json::{json, Value};

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
const SENSOR: &str = "sensor://temperature";
const SLOW: &str = "sensor://humidity";

// ---- the pipes -------------------------------------------------------------------------

/// The receiving end: what the client sent and the runner has not read yet.
#[derive(Default)]
struct Rx(VecDeque<u8>);

impl embedded_io::ErrorType for Rx {
    type Error = Infallible;
}
impl embedded_io::Read for Rx {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        // At most 100 bytes a read: lines arrive in pieces, as from a UART.
        let n = buf.len().min(self.0.len()).min(100);
        for (slot, byte) in buf.iter_mut().zip(self.0.drain(..n)) {
            *slot = byte;
        }
        Ok(n)
    }
}
impl embedded_io::ReadReady for Rx {
    fn read_ready(&mut self) -> Result<bool, Infallible> {
        Ok(!self.0.is_empty())
    }
}
impl embedded_io_async::Read for Rx {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        embedded_io::Read::read(self, buf)
    }
}

/// The transmitting end: everything written, and how many flushes.
#[derive(Default)]
struct Tx {
    out: Vec<u8>,
    flushes: usize,
}

impl embedded_io::ErrorType for Tx {
    type Error = Infallible;
}
impl embedded_io::Write for Tx {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        // At most 64 bytes a write, to exercise partial writes.
        let n = buf.len().min(64);
        self.out.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> Result<(), Infallible> {
        self.flushes += 1;
        Ok(())
    }
}
impl embedded_io_async::Write for Tx {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        embedded_io::Write::write(self, buf)
    }
    async fn flush(&mut self) -> Result<(), Infallible> {
        embedded_io::Write::flush(self)
    }
}

/// Polls a future to completion with a no-op waker (every future here is ready at once).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

// ---- the clock -------------------------------------------------------------------------

thread_local! {
    /// Virtual time of the test running on this thread (each test has its own thread).
    static NOW: Cell<u64> = const { Cell::new(1_000) };
}

fn clock() -> u64 {
    NOW.with(Cell::get)
}

fn advance(ms: u64) {
    NOW.with(|now| now.set(now.get() + ms));
}

// ---- the server under test -------------------------------------------------------------

static TOOLS: [Tool<'static>; 3] = [
    Tool::new(
        "add",
        r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}"#,
    ),
    // Deferred: an ADC conversion that finishes later.
    Tool::new("measure", r#"{"type":"object"}"#),
    // Answered inline with more text than the transmit buffer holds.
    Tool::new("dump", r#"{"type":"object"}"#),
];

#[derive(Default)]
struct DeviceTools;

impl ToolSet for DeviceTools {
    fn len(&self) -> usize {
        TOOLS.len()
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        TOOLS.get(index).copied()
    }
    fn call(&mut self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        match request.tool_index() {
            0 => {
                let arg = |k| request.args().get(k).and_then(|v| v.as_i64()).unwrap_or(0);
                result.text_fmt(format_args!("{}", arg("a") + arg("b")));
            }
            1 => return Dispatch::Defer,
            _ => {
                result.text(&"x".repeat(4 * TX));
            }
        }
        Dispatch::Done
    }
}

/// One subscribable resource, read inline; the subscriptions are kept here.
#[derive(Default)]
struct Sensors {
    subscribed: Vec<String>,
}

impl ResourceSet for Sensors {
    fn len(&self) -> usize {
        1
    }
    fn get(&self, index: usize) -> Option<Resource<'_>> {
        (index == 0).then(|| Resource {
            uri: SENSOR,
            name: "temperature",
            mime_type: Some("text/plain"),
            ..Default::default()
        })
    }
    fn subscribable(&self) -> bool {
        true
    }
    fn subscribe(&mut self, uri: JsonStr<'_>, subscribe: bool) -> bool {
        if !uri.eq_str(SENSOR) {
            return false;
        }
        self.subscribed.retain(|u| u != SENSOR);
        if subscribe {
            self.subscribed.push(SENSOR.to_owned());
        }
        true
    }
    fn read(&mut self, request: &ReadRequest<'_>, result: &mut ReadResult<'_, '_>) -> Dispatch {
        if request.uri().eq_str(SENSOR) {
            result.text(SENSOR, Some("text/plain"), "21.5");
        } else if request.uri().eq_str(SLOW) {
            // An unlisted resource read from an I2C sensor that answers later.
            return Dispatch::Defer;
        } else {
            result.not_found();
        }
        Dispatch::Done
    }
}

static GREET_ARGS: [PromptArgument<'static>; 1] = [PromptArgument::required("name", "Who")];
static PROMPTS: [Prompt<'static>; 1] = [Prompt {
    arguments: &GREET_ARGS,
    ..Prompt::new("greet", "Greets someone")
}];

#[derive(Default)]
struct Prompts;

impl PromptSet for Prompts {
    fn len(&self) -> usize {
        PROMPTS.len()
    }
    fn get(&self, index: usize) -> Option<Prompt<'_>> {
        PROMPTS.get(index).copied()
    }
    fn get_prompt(
        &mut self,
        request: &GetPromptRequest<'_>,
        result: &mut PromptResult<'_, '_>,
    ) -> Dispatch {
        let name = request
            .argument("name")
            .and_then(|n| n.as_borrowed())
            .unwrap_or("?");
        result.message(Role::User, &Content::Text(&format!("Hello {name}")));
        Dispatch::Done
    }
}

#[derive(Default)]
struct Names;

impl Completions for Names {
    fn complete(
        &mut self,
        request: &CompleteRequest<'_>,
        result: &mut CompletionResult<'_, '_>,
    ) -> Dispatch {
        let prefix = request.value().as_borrowed().unwrap_or("");
        for name in ["alice", "albert", "bob"] {
            if name.starts_with(prefix) {
                result.value(name);
            }
        }
        Dispatch::Done
    }
}

#[derive(Default)]
struct Device {
    tools: DeviceTools,
    resources: Sensors,
    prompts: Prompts,
    names: Names,
}

impl ServerHandler for Device {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(&mut self.tools)
    }
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        Some(&mut self.resources)
    }
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        Some(&mut self.prompts)
    }
    fn completions(&mut self) -> Option<&mut dyn Completions> {
        Some(&mut self.names)
    }
}

/// The application's side: deferred calls waiting for their hardware, events, responses.
#[derive(Default)]
struct Pending {
    calls: Vec<(CallToken, String)>,
    events: Vec<Event>,
    responses: Vec<(CallToken, Result<Value, i64>)>,
    refuse: bool,
}

impl Hooks for Pending {
    fn deferred(&mut self, call: Call<'_>) -> Deferral {
        if self.refuse {
            return Deferral::Refuse;
        }
        let name = call.name().as_borrowed().unwrap_or_default().to_owned();
        self.calls.push((call.token(), name));
        Deferral::Keep
    }
    fn event(&mut self, event: Event) {
        self.events.push(event);
    }
    fn response(&mut self, response: ClientResponse<'_>) {
        let outcome = match response.outcome {
            ClientOutcome::Result(v) => Ok(serde_json::from_str(v.as_str()).unwrap()),
            ClientOutcome::Error { code, .. } => Err(code),
        };
        self.responses.push((response.call, outcome));
    }
}

// ---- the rig: one session, one runner, one client ---------------------------------------

const RX: usize = 1024;
const TX: usize = 1536;

static INFO: ServerInfo<'static> = ServerInfo {
    name: "embedded-test",
    version: "0.0.1",
    title: None,
    description: None,
    website_url: None,
    icons: &[],
    instructions: None,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Blocking,
    Async,
}

const MODES: [Mode; 2] = [Mode::Blocking, Mode::Async];

enum Runner<'b> {
    Blocking(blocking::Runner<'b>),
    Async(asynch::Runner<'b>),
}

struct Rig<'s> {
    rev: &'static str,
    session: Session<'s>,
    runner: Runner<'s>,
    device: Device,
    hooks: Pending,
    rx: Rx,
    tx: Tx,
    next_id: u64,
    /// Method of each request sent, by id (to validate the reply's result type).
    methods: HashMap<String, String>,
    /// Bytes of `tx.out` already returned as frames.
    read: usize,
}

type CommandResult = Result<bool, Error<Infallible>>;

impl<'s> Rig<'s> {
    fn new(
        mode: Mode,
        rev: &'static str,
        storage: &'s mut SessionStorage<4>,
        buffers: &'s mut Buffers<RX, TX>,
    ) -> Self {
        let session = Session::new(&INFO, Config::new(SecretKey([7; 16])), storage);
        let runner = match mode {
            Mode::Blocking => Runner::Blocking(blocking::Runner::new(buffers).with_clock(clock)),
            Mode::Async => Runner::Async(asynch::Runner::new(buffers).with_clock(clock)),
        };
        let mut rig = Rig {
            rev,
            session,
            runner,
            device: Device::default(),
            hooks: Pending::default(),
            rx: Rx::default(),
            tx: Tx::default(),
            next_id: 1,
            methods: HashMap::new(),
            read: 0,
        };
        if rev != MODERN {
            let init = rig.request_with_caps("initialize", json!({}), json!({"sampling": {}}));
            assert_eq!(init.len(), 1, "{init:?}");
            assert_eq!(init[0]["result"]["protocolVersion"], rev);
            assert!(rig
                .notify("notifications/initialized", json!({}))
                .is_empty());
            assert!(matches!(rig.hooks.events[..], [Event::Initialized(_)]));
            rig.hooks.events.clear();
        }
        rig
    }

    fn stats(&self) -> Stats {
        match &self.runner {
            Runner::Blocking(r) => r.stats(),
            Runner::Async(r) => r.stats(),
        }
    }

    /// Feeds a line to the runner and serves until it has read everything; returns the
    /// frames written meanwhile.
    fn send_line(&mut self, line: &str) -> Vec<Value> {
        self.rx.0.extend(line.as_bytes());
        self.rx.0.push_back(b'\n');
        let Rig {
            session,
            runner,
            device,
            hooks,
            rx,
            tx,
            ..
        } = self;
        match runner {
            Runner::Blocking(r) => loop {
                if r.poll_with(session, device, hooks, rx, tx).unwrap() == Step::Idle {
                    break;
                }
            },
            Runner::Async(r) => block_on(async {
                while !rx.0.is_empty() {
                    r.read(rx).await;
                    r.answer(session, device, hooks, tx).await.unwrap();
                }
            }),
        }
        self.frames()
    }

    fn request(&mut self, method: &str, params: Value) -> Vec<Value> {
        self.request_with_caps(method, params, json!({}))
    }

    fn request_with_caps(&mut self, method: &str, mut params: Value, caps: Value) -> Vec<Value> {
        let id = self.next_id;
        self.next_id += 1;
        if method == "initialize" {
            params = json!({
                "protocolVersion": self.rev,
                "capabilities": caps,
                "clientInfo": {"name": "test", "version": "1"}
            });
        } else if self.rev == MODERN {
            let meta = params
                .as_object_mut()
                .unwrap()
                .entry("_meta")
                .or_insert_with(|| json!({}));
            meta["io.modelcontextprotocol/protocolVersion"] = json!(MODERN);
            meta["io.modelcontextprotocol/clientCapabilities"] = caps;
        }
        self.methods.insert(id.to_string(), method.to_owned());
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&line.to_string())
    }

    fn notify(&mut self, method: &str, params: Value) -> Vec<Value> {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_line(&line.to_string())
    }

    /// The frames written since the last call, each validated against the schema.
    fn frames(&mut self) -> Vec<Value> {
        let text = std::str::from_utf8(&self.tx.out[self.read..]).expect("UTF-8 output");
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "whole lines: {text}"
        );
        self.read = self.tx.out.len();
        text.lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
                let method = v
                    .get("id")
                    .filter(|_| v.get("method").is_none())
                    .and_then(|id| self.methods.get(&id.to_string()))
                    .map(String::as_str);
                if let Err(e) = harness::validate_server_message(self.rev, method, &v) {
                    panic!("{e}");
                }
                v
            })
            .collect()
    }

    /// Runs `f` with the runner and what its commands borrow, blocking or async alike.
    fn command(
        &mut self,
        f: impl FnOnce(&mut Session<'_>, &mut [u8]) -> Result<Option<Transmit>, CallError>,
    ) -> CommandResult {
        let Rig {
            session,
            runner,
            hooks,
            tx,
            ..
        } = self;
        match runner {
            Runner::Blocking(r) => r.command(session, hooks, tx, f),
            Runner::Async(r) => block_on(r.command(session, hooks, tx, f)),
        }
    }

    fn complete(&mut self, token: CallToken, text: &str) -> CommandResult {
        let Rig {
            session,
            runner,
            hooks,
            tx,
            ..
        } = self;
        match runner {
            Runner::Blocking(r) => r.complete(session, hooks, tx, token, |r| {
                r.text(text);
            }),
            Runner::Async(r) => block_on(r.complete(session, hooks, tx, token, |r| {
                r.text(text);
            })),
        }
    }

    fn fail(&mut self, token: CallToken, message: &str) -> CommandResult {
        let Rig {
            session,
            runner,
            hooks,
            tx,
            ..
        } = self;
        match runner {
            Runner::Blocking(r) => r.fail(session, hooks, tx, token, -32603, message),
            Runner::Async(r) => block_on(r.fail(session, hooks, tx, token, -32603, message)),
        }
    }

    fn progress<P: ProgressValue>(
        &mut self,
        token: CallToken,
        done: P,
        total: P,
        msg: &str,
    ) -> CommandResult {
        let Rig {
            session,
            runner,
            hooks,
            tx,
            ..
        } = self;
        let (total, msg) = (Some(total), Some(msg));
        match runner {
            Runner::Blocking(r) => r.progress(session, hooks, tx, token, done, total, msg),
            Runner::Async(r) => block_on(r.progress(session, hooks, tx, token, done, total, msg)),
        }
    }

    fn resource_updated(&mut self, uri: &str) -> CommandResult {
        let Rig {
            session,
            runner,
            hooks,
            tx,
            ..
        } = self;
        match runner {
            Runner::Blocking(r) => r.resource_updated(session, hooks, tx, uri),
            Runner::Async(r) => block_on(r.resource_updated(session, hooks, tx, uri)),
        }
    }

    fn resource_updated_on_streams(&mut self, uri: &str) -> CommandResult {
        let Rig {
            session,
            runner,
            hooks,
            tx,
            ..
        } = self;
        match runner {
            Runner::Blocking(r) => r.resource_updated_on_streams(session, hooks, tx, uri),
            Runner::Async(r) => block_on(r.resource_updated_on_streams(session, hooks, tx, uri)),
        }
    }

    fn list_changed(&mut self, kind: ListKind) {
        let Rig {
            session,
            runner,
            hooks,
            tx,
            ..
        } = self;
        match runner {
            Runner::Blocking(r) => r.list_changed(session, hooks, tx, kind),
            Runner::Async(r) => block_on(r.list_changed(session, hooks, tx, kind)),
        }
        .unwrap();
    }

    /// What a loop does when its timer fires: the blocking runner's `poll_with` handles
    /// the due timeout itself; the async loop calls `handle_timeout`.
    fn timer_fired(&mut self) {
        let due = self.session.poll_timeout().expect("a deadline is pending");
        assert!(due <= clock(), "the timer fires at the deadline");
        let Rig {
            session,
            runner,
            device,
            hooks,
            rx,
            tx,
            ..
        } = self;
        match runner {
            Runner::Blocking(r) => {
                let step = r.poll_with(session, device, hooks, rx, tx).unwrap();
                assert_eq!(step, Step::Idle);
            }
            Runner::Async(r) => block_on(r.handle_timeout(session, hooks, tx)).unwrap(),
        }
    }
}

fn text_of(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

// ---- the tests -------------------------------------------------------------------------

/// Tools, resources (read, subscribe, updated), a prompt and completion, in one era, with
/// both runners.
fn full_handler(rev: &'static str) {
    for mode in MODES {
        let mut storage = SessionStorage::new();
        let mut buffers = Buffers::new();
        let mut rig = Rig::new(mode, rev, &mut storage, &mut buffers);
        let at = format!("{mode:?} {rev}");

        let r = rig.request("tools/list", json!({}));
        assert_eq!(r[0]["result"]["tools"].as_array().unwrap().len(), 3, "{at}");
        let r = rig.request(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        );
        assert_eq!(text_of(&r[0]), "5", "{at}");

        let r = rig.request("resources/list", json!({}));
        assert_eq!(r[0]["result"]["resources"][0]["uri"], SENSOR, "{at}");
        let r = rig.request("resources/read", json!({"uri": SENSOR}));
        assert_eq!(r[0]["result"]["contents"][0]["text"], "21.5", "{at}");

        let r = rig.request("prompts/list", json!({}));
        assert_eq!(r[0]["result"]["prompts"][0]["name"], "greet", "{at}");
        let r = rig.request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        );
        assert_eq!(
            r[0]["result"]["messages"][0]["content"]["text"], "Hello Ada",
            "{at}"
        );

        let r = rig.request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "name", "value": "al"}}),
        );
        assert_eq!(
            r[0]["result"]["completion"]["values"],
            json!(["alice", "albert"]),
            "{at}"
        );

        if rev == MODERN {
            // A stateless client hears list changes on a `subscriptions/listen` stream.
            let ack = rig.request(
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true}}),
            );
            assert_eq!(
                ack[0]["method"], "notifications/subscriptions/acknowledged",
                "{at}"
            );
        }
        rig.list_changed(ListKind::Tools);
        let r = rig.frames();
        assert_eq!(r.len(), 1, "{at}: {r:?}");
        assert_eq!(r[0]["method"], "notifications/tools/list_changed", "{at}");

        assert!(rig.hooks.calls.is_empty(), "{at}: everything was inline");
        assert_eq!(rig.stats().tx_overflows, 0, "{at}");
    }
}

#[test]
fn full_handler_legacy_era() {
    full_handler(LEGACY);
}

#[test]
fn full_handler_modern_era() {
    full_handler(MODERN);
}

#[test]
fn resources_updated_after_subscribe() {
    for mode in MODES {
        let mut storage = SessionStorage::new();
        let mut buffers = Buffers::new();
        let mut rig = Rig::new(mode, LEGACY, &mut storage, &mut buffers);
        let r = rig.request("resources/subscribe", json!({"uri": SENSOR}));
        assert_eq!(r[0]["result"], json!({}), "{mode:?}");
        assert_eq!(rig.device.resources.subscribed, [SENSOR]);

        // The device sees the temperature change and says so.
        assert_eq!(rig.resource_updated(SENSOR), Ok(true));
        let r = rig.frames();
        assert_eq!(
            r,
            [
                json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                    "params": {"uri": SENSOR}})
            ],
            "{mode:?}"
        );

        let r = rig.request("resources/unsubscribe", json!({"uri": SENSOR}));
        assert_eq!(r[0]["result"], json!({}), "{mode:?}");
        assert!(rig.device.resources.subscribed.is_empty());
    }
}

#[test]
fn resources_updated_on_listen_streams() {
    const SUB: &str = "io.modelcontextprotocol/subscriptionId";
    let updated = |sub: &Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": SENSOR, "_meta": {SUB: sub}}})
    };
    for mode in MODES {
        let mut storage = SessionStorage::new();
        let mut buffers = Buffers::new();
        let mut rig = Rig::new(mode, MODERN, &mut storage, &mut buffers);
        // A stateless client subscribes on a `subscriptions/listen` stream: the
        // acknowledgement names the URIs the server knows.
        let listen = json!({"notifications": {"resourceSubscriptions": [SENSOR, "sensor://nope"]}});
        let ack = rig.request("subscriptions/listen", listen.clone());
        assert_eq!(ack.len(), 1, "{mode:?}: {ack:?}");
        assert_eq!(
            ack[0]["params"]["notifications"],
            json!({"resourceSubscriptions": [SENSOR]}),
            "{mode:?}"
        );
        let first = ack[0]["params"]["_meta"][SUB].clone();
        let ack = rig.request("subscriptions/listen", listen);
        let second = ack[0]["params"]["_meta"][SUB].clone();
        // The core keeps these subscriptions, not the application.
        assert!(rig.device.resources.subscribed.is_empty());

        assert_eq!(rig.resource_updated(SENSOR), Ok(true));
        assert_eq!(
            rig.frames(),
            [updated(&first), updated(&second)],
            "{mode:?}"
        );
        assert_eq!(rig.resource_updated("sensor://nope"), Ok(false));
        assert!(rig.frames().is_empty());

        // A legacy session on the same connection, which did not subscribe: only the
        // streams hear about it.
        rig.rev = LEGACY;
        rig.request("initialize", json!({}));
        rig.notify("notifications/initialized", json!({}));
        assert_eq!(rig.resource_updated_on_streams(SENSOR), Ok(true));
        assert_eq!(
            rig.frames(),
            [updated(&first), updated(&second)],
            "{mode:?}"
        );
        // `resource_updated` (what a device calls once the legacy client subscribed) tells
        // it too, first.
        assert_eq!(rig.resource_updated(SENSOR), Ok(true));
        let legacy = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": SENSOR}});
        assert_eq!(
            rig.frames(),
            [legacy, updated(&first), updated(&second)],
            "{mode:?}"
        );

        // A cancelled stream hears nothing more.
        assert!(rig
            .notify("notifications/cancelled", json!({"requestId": first}))
            .is_empty());
        assert_eq!(rig.resource_updated_on_streams(SENSOR), Ok(true));
        assert_eq!(rig.frames(), [updated(&second)], "{mode:?}");
        assert!(rig
            .notify("notifications/cancelled", json!({"requestId": second}))
            .is_empty());
        assert_eq!(rig.resource_updated_on_streams(SENSOR), Ok(false));
        assert!(rig.frames().is_empty());
    }
}

#[test]
fn deferred_tool_completed_later_with_progress() {
    for rev in [LEGACY, MODERN] {
        for mode in MODES {
            let mut storage = SessionStorage::new();
            let mut buffers = Buffers::new();
            let mut rig = Rig::new(mode, rev, &mut storage, &mut buffers);
            let at = format!("{mode:?} {rev}");
            let r = rig.request(
                "tools/call",
                json!({"name": "measure", "arguments": {}, "_meta": {"progressToken": "adc"}}),
            );
            assert!(r.is_empty(), "{at}: no reply yet: {r:?}");
            let (token, name) = rig.hooks.calls.pop().expect("handed to the hooks");
            assert_eq!(name, "measure");
            assert_eq!(rig.stats().deferred, 1);

            // Other requests are served while the conversion runs.
            let r = rig.request(
                "tools/call",
                json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
            );
            assert_eq!(text_of(&r[0]), "2", "{at}");

            advance(10);
            assert_eq!(rig.progress(token, 1.0, 2.0, "converting"), Ok(true));
            let p = rig.frames();
            assert_eq!(p.len(), 1, "{at}: {p:?}");
            assert_eq!(p[0]["method"], "notifications/progress");
            assert_eq!(p[0]["params"]["progressToken"], "adc");
            assert_eq!(p[0]["params"]["total"], 2.0);
            // Integer progress is written as integers (no float formatting linked).
            assert_eq!(rig.progress(token, 2u32, 2u32, "converted"), Ok(true));
            let p = rig.frames();
            assert_eq!(p.len(), 1, "{at}: {p:?}");
            assert!(p[0]["params"]["progress"].is_u64(), "{at}: {p:?}");
            assert_eq!(p[0]["params"]["progress"], 2, "{at}");
            assert_eq!(p[0]["params"]["total"], 2, "{at}");

            advance(10);
            assert_eq!(rig.complete(token, "21.5 C"), Ok(true));
            let r = rig.frames();
            assert_eq!(r.len(), 1, "{at}: {r:?}");
            assert_eq!(r[0]["id"], 1 + u64::from(rev != MODERN), "{at}");
            assert_eq!(text_of(&r[0]), "21.5 C", "{at}");
            assert_eq!(rig.session.calls_in_flight(), 0, "{at}");

            // The token is spent: a second completion is refused, nothing is written.
            assert_eq!(
                rig.complete(token, "again"),
                Err(Error::Call(CallError::UnknownCall))
            );
            assert!(rig.frames().is_empty());
        }
    }
}

#[test]
fn cancelling_a_deferred_call_is_reported_to_the_application() {
    for rev in [LEGACY, MODERN] {
        for mode in MODES {
            let mut storage = SessionStorage::new();
            let mut buffers = Buffers::new();
            let mut rig = Rig::new(mode, rev, &mut storage, &mut buffers);
            let at = format!("{mode:?} {rev}");
            let id = rig.next_id;
            assert!(rig
                .request("tools/call", json!({"name": "measure", "arguments": {}}))
                .is_empty());
            let (token, _) = rig.hooks.calls.pop().unwrap();

            let r = rig.notify(
                "notifications/cancelled",
                json!({"requestId": id, "reason": "user"}),
            );
            assert!(r.is_empty(), "{at}: a cancelled call gets no reply: {r:?}");
            assert_eq!(rig.hooks.events, [Event::Cancelled(token)], "{at}");
            assert_eq!(rig.session.calls_in_flight(), 0, "{at}");

            // The conversion finishing afterwards sends nothing.
            assert_eq!(rig.complete(token, "too late"), Ok(false), "{at}");
            assert_eq!(rig.progress(token, 1.0, 2.0, "x"), Ok(false), "{at}");
            assert!(rig.frames().is_empty(), "{at}");
        }
    }
}

const SAMPLING: &str =
    r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100}"#;

#[test]
fn a_request_to_the_client_times_out_on_the_runner_clock() {
    for mode in MODES {
        let mut storage = SessionStorage::new();
        let mut buffers = Buffers::new();
        let mut rig = Rig::new(mode, LEGACY, &mut storage, &mut buffers);
        assert!(rig
            .request("tools/call", json!({"name": "measure", "arguments": {}}))
            .is_empty());
        let (token, _) = rig.hooks.calls.pop().unwrap();

        // The call asks the client (sampling), with 500 ms to answer.
        let sent =
            rig.command(|s, tx| s.request(token, ClientMethod::CreateMessage, SAMPLING, 500, tx));
        assert_eq!(sent, Ok(true));
        let req = rig.frames();
        assert_eq!(req[0]["method"], "sampling/createMessage", "{mode:?}");
        assert_eq!(rig.session.poll_timeout(), Some(clock() + 500));

        // Nothing happens before the deadline...
        advance(499);
        assert!(rig.session.poll_timeout().unwrap() > clock());
        // ...and at it the loop's timer fires: the request is cancelled on the wire and
        // the application hears of it.
        advance(1);
        rig.timer_fired();
        let r = rig.frames();
        assert_eq!(r.len(), 1, "{mode:?}: {r:?}");
        assert_eq!(r[0]["method"], "notifications/cancelled");
        assert_eq!(r[0]["params"]["requestId"], req[0]["id"]);
        assert_eq!(
            rig.hooks.events,
            [Event::RequestTimedOut(token)],
            "{mode:?}"
        );
        assert_eq!(rig.session.poll_timeout(), None);

        // A second request is answered in time: the response reaches the hooks.
        assert_eq!(
            rig.command(|s, tx| s.request(token, ClientMethod::CreateMessage, SAMPLING, 500, tx)),
            Ok(true)
        );
        let req = rig.frames();
        let result = json!({"role": "assistant", "content": {"type": "text", "text": "ok"},
                            "model": "m"});
        let line = json!({"jsonrpc": "2.0", "id": req[0]["id"], "result": result});
        assert!(rig.send_line(&line.to_string()).is_empty());
        assert_eq!(rig.hooks.responses, [(token, Ok(result))], "{mode:?}");

        assert_eq!(rig.complete(token, "done"), Ok(true));
        assert_eq!(text_of(&rig.frames()[0]), "done");
    }
}

#[test]
fn frames_larger_than_the_transmit_buffer_are_reported() {
    for rev in [LEGACY, MODERN] {
        for mode in MODES {
            let mut storage = SessionStorage::new();
            let mut buffers = Buffers::new();
            let mut rig = Rig::new(mode, rev, &mut storage, &mut buffers);
            let at = format!("{mode:?} {rev}");

            // An inline reply too large: the client gets -32603 with the size it needed.
            let r = rig.request("tools/call", json!({"name": "dump", "arguments": {}}));
            assert_eq!(r[0]["error"]["code"], -32603, "{at}: {r:?}");
            assert!(r[0]["error"]["data"]["required"].as_u64().unwrap() > TX as u64);

            // A deferred result too large: refused with the size needed, nothing sent, the
            // call still in flight; the application fails it instead.
            assert!(rig
                .request("tools/call", json!({"name": "measure", "arguments": {}}))
                .is_empty());
            let (token, _) = rig.hooks.calls.pop().unwrap();
            let big = "y".repeat(2 * TX);
            match rig.complete(token, &big) {
                Err(Error::Call(CallError::BufferTooSmall { required })) => {
                    assert!(required > TX, "{at}")
                }
                other => panic!("{at}: {other:?}"),
            }
            assert!(rig.frames().is_empty(), "{at}");
            assert_eq!(rig.stats().tx_overflows, 1, "{at}");
            assert_eq!(rig.session.calls_in_flight(), 1, "{at}");
            assert_eq!(rig.fail(token, "Result too large"), Ok(true));
            let r = rig.frames();
            assert_eq!(r[0]["error"]["message"], "Result too large", "{at}");
            assert_eq!(rig.session.calls_in_flight(), 0, "{at}");

            // A notification too large for the buffer is refused the same way.
            let uri = format!("sensor://{}", "z".repeat(2 * TX));
            if rev == LEGACY {
                assert!(matches!(
                    rig.resource_updated(&uri),
                    Err(Error::Call(CallError::BufferTooSmall { .. }))
                ));
            }
        }
    }
}

#[test]
fn refused_deferrals_are_answered_at_once() {
    for mode in MODES {
        let mut storage = SessionStorage::new();
        let mut buffers = Buffers::new();
        let mut rig = Rig::new(mode, MODERN, &mut storage, &mut buffers);
        rig.hooks.refuse = true;
        let r = rig.request("tools/call", json!({"name": "measure", "arguments": {}}));
        assert_eq!(r[0]["error"]["code"], -32603);
        assert_eq!(r[0]["error"]["message"], DEFERRED_CALL_MESSAGE);
        assert_eq!(rig.session.calls_in_flight(), 0);
    }
}

#[test]
fn an_idle_link_does_not_block_the_superloop() {
    let mut storage = SessionStorage::<4>::new();
    let mut buffers = Buffers::<RX, TX>::new();
    let mut session = Session::new(&INFO, Config::new(SecretKey([7; 16])), &mut storage);
    let mut runner = blocking::Runner::new(&mut buffers).with_clock(clock);
    let (mut rx, mut tx) = (Rx::default(), Tx::default());
    let step = runner
        .poll_with(
            &mut session,
            &mut Device::default(),
            &mut (),
            &mut rx,
            &mut tx,
        )
        .unwrap();
    assert_eq!(step, Step::Idle);
    assert!(tx.out.is_empty());
    assert_eq!(tx.flushes, 0);
}

/// A reader whose first read is pending (no byte yet), as a UART with an empty ring.
struct SlowRx {
    rx: Rx,
    pending_once: bool,
}

impl embedded_io_async::ErrorType for SlowRx {
    type Error = Infallible;
}
impl embedded_io_async::Read for SlowRx {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        if std::mem::take(&mut self.pending_once) {
            std::future::poll_fn(|_| Poll::<()>::Pending).await;
        }
        embedded_io::Read::read(&mut self.rx, buf)
    }
}

#[test]
fn an_async_read_that_loses_a_select_loses_no_input() {
    let mut storage = SessionStorage::<4>::new();
    let mut buffers = Buffers::<RX, TX>::new();
    let mut session = Session::new(&INFO, Config::new(SecretKey([7; 16])), &mut storage);
    let mut runner = asynch::Runner::new(&mut buffers).with_clock(clock);
    let mut rx = SlowRx {
        rx: Rx::default(),
        pending_once: true,
    };
    let mut tx = Tx::default();
    rx.rx
        .0
        .extend(&b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"[..]);
    {
        // The read is polled while nothing has arrived, then dropped (another branch of
        // the select won).
        let mut read = pin!(runner.read(&mut rx));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(read.as_mut().poll(&mut cx).is_pending());
    }
    let step = block_on(runner.read(&mut rx));
    assert_eq!(step, Step::Received(41));
    block_on(runner.answer(&mut session, &mut Device::default(), &mut (), &mut tx)).unwrap();
    assert_eq!(tx.out, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
}

#[test]
fn a_deferred_resource_read_is_completed_through_command() {
    for rev in [LEGACY, MODERN] {
        for mode in MODES {
            let mut storage = SessionStorage::new();
            let mut buffers = Buffers::new();
            let mut rig = Rig::new(mode, rev, &mut storage, &mut buffers);
            let at = format!("{mode:?} {rev}");
            assert!(rig
                .request("resources/read", json!({"uri": SLOW}))
                .is_empty());
            let (token, name) = rig.hooks.calls.pop().unwrap();
            assert_eq!(name, SLOW, "{at}");
            let sent = rig.command(|s, tx| {
                s.complete_read(token, tx, |r| {
                    r.text(SLOW, Some("text/plain"), "40 %");
                })
            });
            assert_eq!(sent, Ok(true), "{at}");
            let r = rig.frames();
            assert_eq!(r[0]["result"]["contents"][0]["text"], "40 %", "{at}: {r:?}");
            assert_eq!(rig.session.calls_in_flight(), 0, "{at}");
        }
    }
}
