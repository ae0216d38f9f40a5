//! Invariants of `mcp-rs-embedded`'s blocking runner (`blocking::Runner::poll_with`) fed
//! arbitrary bytes over an in-memory `embedded_io` pipe, with a small full server (tools,
//! one deferred; a subscribable resource and a deferred read; a prompt; completions) and
//! the application's commands in between. Shared by the `embedded_runner` fuzz target and
//! `mcp-embedded/tests/fuzz_replay.rs` (included with `#[path]`, so free of libFuzzer).
//!
//! Checked after every operation:
//! - nothing panics, and no runner call returns an error other than a refused command
//!   (`Error::Call`; the pipe's writer cannot fail);
//! - the output is whole lines, each one JSON-RPC 2.0 object (a request or notification
//!   with a `method`, or a response with exactly one of `result` (and an `id`) / `error`)
//!   no longer than the transmit buffer;
//! - the runner keeps serving: at the end, after a newline (ending any partial or
//!   discarded line), a 2026-07-28 `server/discover` with an id the input never used gets
//!   its result.

use std::cell::Cell;
use std::collections::VecDeque;
use std::convert::Infallible;

use arbitrary::Arbitrary;
use embedded_io::ErrorKind;
use mcp_rs_core::model::completion::{CompleteRequest, CompletionResult, Completions};
use mcp_rs_core::model::prompts::{
    GetPromptRequest, Prompt, PromptArgument, PromptResult, PromptSet,
};
use mcp_rs_core::model::resources::{ReadRequest, ReadResult, Resource, ResourceSet};
use mcp_rs_core::wire::json::JsonStr;
use mcp_rs_core::{
    Call, CallRequest, CallToken, Config, Content, Dispatch, Event, ListKind, Role, SecretKey,
    ServerHandler, ServerInfo, Session, SessionStorage, Tool, ToolResult, ToolSet,
};
use mcp_rs_embedded::{blocking::Runner, Buffers, Deferral, Error, Hooks, Step};
use serde_json::Value;

/// The receive buffer (longest line) and the transmit buffer (longest frame).
pub const RX: usize = 512;
/// The transmit buffer: the core's minimum, so large replies hit the limit.
pub const TX: usize = mcp_rs_core::MIN_OUTPUT;
/// Deferred calls the application keeps at once (the session has 4 slots).
const KEPT: usize = 6;
const SENSOR: &str = "sensor://temperature";
const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// Canned lines that reach deep states at once (the fuzzer still mutates raw bytes).
const CANNED: [&str; 16] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"f","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"measure","arguments":{},"_meta":{"progressToken":"p"}}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"dump","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"resources/subscribe","params":{"uri":"sensor://temperature"}}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"sensor://slow"}}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"Ada"}}}"#,
    r#"{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"al"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
    r#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#,
    // 2026-07-28, filled in with MODERN_META by `canned`.
    r#"{"jsonrpc":"2.0","id":"m1","method":"tools/call","params":{"name":"measure","arguments":{},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":"m2","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["sensor://temperature"]},META}}"#,
    r#"{"jsonrpc":"2.0","id":"m3","method":"resources/list","params":{META}}"#,
    r#"[{"jsonrpc":"2.0","id":11,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
];

fn canned(i: u8) -> String {
    CANNED[usize::from(i) % CANNED.len()].replace("META", MODERN_META)
}

/// One step of the run.
#[derive(Arbitrary, Debug)]
pub enum Op {
    /// Raw bytes from the client (any bytes: partial lines, garbage, oversized lines).
    Bytes(Vec<u8>),
    /// A canned line and its newline.
    Canned(u8),
    /// The reader fails once (an overrun): the runner drops the partial line and resyncs.
    RxError,
    /// Completes the kept deferred call `n % kept` (a tool result, or the read/prompt's
    /// error when it is not a tool call).
    Complete(u8),
    /// Fails the kept deferred call `n % kept` with -32603.
    Fail(u8),
    /// Progress on the kept call `n % kept`: integer or float.
    Progress(u8, u32, bool),
    /// The sensor changed.
    ResourceUpdated,
    /// A list changed (tools, resources, prompts by `n % 3`).
    ListChanged(u8),
    /// Time passes.
    Advance(u16),
}

/// A run: bytes per read (1..=256) and the operations.
#[derive(Arbitrary, Debug)]
pub struct Input {
    pub read_size: u8,
    pub ops: Vec<Op>,
}

thread_local! {
    /// Virtual time of the run on this thread (the replay test runs several at once).
    static NOW: Cell<u64> = const { Cell::new(1_000) };
}

fn clock() -> u64 {
    NOW.with(Cell::get)
}

/// The client's side of the link: bytes not read yet, and reads that fail.
struct Rx {
    bytes: VecDeque<u8>,
    read_size: usize,
    fail_next: bool,
}

impl embedded_io::ErrorType for Rx {
    type Error = ErrorKind;
}
impl embedded_io::Read for Rx {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, ErrorKind> {
        if std::mem::take(&mut self.fail_next) {
            return Err(ErrorKind::Other);
        }
        let n = buf.len().min(self.bytes.len()).min(self.read_size);
        for (slot, byte) in buf.iter_mut().zip(self.bytes.drain(..n)) {
            *slot = byte;
        }
        Ok(n)
    }
}
impl embedded_io::ReadReady for Rx {
    fn read_ready(&mut self) -> Result<bool, ErrorKind> {
        Ok(self.fail_next || !self.bytes.is_empty())
    }
}

/// Everything the runner wrote (in pieces of at most 37 bytes: partial writes).
#[derive(Default)]
struct Tx(Vec<u8>);

impl embedded_io::ErrorType for Tx {
    type Error = Infallible;
}
impl embedded_io::Write for Tx {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        let n = buf.len().min(37);
        self.0.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

static TOOLS: [Tool<'static>; 3] = [
    Tool::new(
        "add",
        r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}"#,
    ),
    Tool::new("measure", r#"{"type":"object"}"#),
    Tool::new("dump", r#"{"type":"object"}"#),
];

struct Tools;

impl ToolSet for Tools {
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
                result.text_fmt(format_args!("{}", arg("a").wrapping_add(arg("b"))));
            }
            1 => return Dispatch::Defer,
            // More than the transmit buffer holds: the core answers -32603 instead.
            _ => {
                result.text(&"x".repeat(2 * TX));
            }
        }
        Dispatch::Done
    }
}

struct Sensors;

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
    fn subscribe(&mut self, uri: JsonStr<'_>, _on: bool) -> bool {
        uri.eq_str(SENSOR)
    }
    fn read(&mut self, request: &ReadRequest<'_>, result: &mut ReadResult<'_, '_>) -> Dispatch {
        if request.uri().eq_str(SENSOR) {
            result.text(SENSOR, Some("text/plain"), "21.5");
        } else if request.uri().eq_str("sensor://slow") {
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

struct Device {
    tools: Tools,
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

/// The application: a bounded queue of deferred calls (refused beyond it).
#[derive(Default)]
struct Pending {
    kept: Vec<CallToken>,
}

impl Hooks for Pending {
    fn deferred(&mut self, call: Call<'_>) -> Deferral {
        if self.kept.len() >= KEPT {
            return Deferral::Refuse;
        }
        self.kept.push(call.token());
        Deferral::Keep
    }
    fn event(&mut self, event: Event) {
        if let Event::Cancelled(token) = event {
            self.kept.retain(|t| *t != token);
        }
    }
}

static INFO: ServerInfo<'static> = ServerInfo {
    name: "embedded-fuzz",
    version: "0.0.1",
    title: None,
    description: None,
    website_url: None,
    icons: &[],
    instructions: None,
};

/// Checks the output written since `from`: whole JSON-RPC lines within the transmit
/// buffer. Returns the frames.
fn frames(out: &[u8], from: usize) -> Vec<Value> {
    let new = &out[from..];
    assert!(
        new.is_empty() || new.ends_with(b"\n"),
        "output ends inside a line: {:?}",
        String::from_utf8_lossy(new)
    );
    let mut all = Vec::new();
    for line in new.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        assert!(
            line.len() <= TX,
            "a {}-byte frame from a {TX}-byte transmit buffer",
            line.len()
        );
        let v: Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(line)));
        let o = v.as_object().expect("a frame is an object");
        assert_eq!(o.get("jsonrpc"), Some(&Value::from("2.0")), "{v}");
        if o.contains_key("method") {
            assert!(o["method"].is_string(), "{v}");
            assert!(!o.contains_key("result") && !o.contains_key("error"), "{v}");
        } else {
            assert!(
                o.contains_key("result") != o.contains_key("error"),
                "exactly one of result and error: {v}"
            );
            // An error to a message whose id could not be read has none (MCP's
            // JSONRPCErrorResponse: `id?`); a result always has one.
            assert!(o.contains_key("id") || o.contains_key("error"), "{v}");
            if let Some(e) = o.get("error") {
                assert!(e["code"].is_i64() && e["message"].is_string(), "{v}");
            }
        }
        all.push(v);
    }
    all
}

/// Serves until the reader has nothing more; a runner error other than a refused command is
/// a failure.
fn serve(runner: &mut Runner<'_>, s: &mut World<'_>) {
    // Every read takes at least one byte or an error: this ends.
    for _ in 0..100_000 {
        match runner.poll_with(
            &mut s.session,
            &mut s.device,
            &mut s.hooks,
            &mut s.rx,
            &mut s.tx,
        ) {
            Ok(Step::Idle) => return,
            Ok(_) => {}
            Err(e) => panic!("the runner failed: {e:?}"),
        }
    }
    panic!("the runner did not drain its input");
}

struct World<'s> {
    session: Session<'s>,
    device: Device,
    hooks: Pending,
    rx: Rx,
    tx: Tx,
}

fn command<T>(result: Result<T, Error<Infallible>>) {
    match result {
        Ok(_) | Err(Error::Call(_)) => {}
        Err(e) => panic!("a command failed: {e:?}"),
    }
}

/// Runs `input`; panics on a broken invariant.
pub fn check(input: &Input) {
    NOW.with(|now| now.set(1_000));
    let mut storage = SessionStorage::<4>::new();
    let mut buffers = Buffers::<RX, TX>::new();
    let mut runner = Runner::new(&mut buffers).with_clock(clock);
    let mut w = World {
        session: Session::new(&INFO, Config::new(SecretKey([9; 16])), &mut storage),
        device: Device {
            tools: Tools,
            resources: Sensors,
            prompts: Prompts,
            names: Names,
        },
        hooks: Pending::default(),
        rx: Rx {
            bytes: VecDeque::new(),
            read_size: usize::from(input.read_size) + 1,
            fail_next: false,
        },
        tx: Tx::default(),
    };
    let mut sent: Vec<u8> = Vec::new();
    let mut seen = 0;
    for op in input.ops.iter().take(64) {
        let pick = |n: &u8, kept: &[CallToken]| {
            (!kept.is_empty()).then(|| kept[usize::from(*n) % kept.len()])
        };
        match op {
            Op::Bytes(b) => {
                sent.extend_from_slice(b);
                w.rx.bytes.extend(b);
                serve(&mut runner, &mut w);
            }
            Op::Canned(i) => {
                let line = canned(*i);
                sent.extend_from_slice(line.as_bytes());
                w.rx.bytes.extend(line.as_bytes());
                w.rx.bytes.push_back(b'\n');
                serve(&mut runner, &mut w);
            }
            Op::RxError => {
                w.rx.fail_next = true;
                serve(&mut runner, &mut w);
            }
            Op::Complete(n) => {
                if let Some(token) = pick(n, &w.hooks.kept) {
                    let World {
                        session, hooks, tx, ..
                    } = &mut w;
                    command(runner.complete(session, hooks, tx, token, |r| {
                        r.text("done");
                    }));
                    // A read or prompt cannot be completed as a tool: fail it then.
                    command(runner.fail(session, hooks, tx, token, -32603, "failed"));
                    hooks.kept.retain(|t| *t != token);
                }
            }
            Op::Fail(n) => {
                if let Some(token) = pick(n, &w.hooks.kept) {
                    let World {
                        session, hooks, tx, ..
                    } = &mut w;
                    command(runner.fail(session, hooks, tx, token, -32603, "failed"));
                    hooks.kept.retain(|t| *t != token);
                }
            }
            Op::Progress(n, value, integer) => {
                if let Some(token) = pick(n, &w.hooks.kept) {
                    let World {
                        session, hooks, tx, ..
                    } = &mut w;
                    command(if *integer {
                        runner.progress(session, hooks, tx, token, *value, Some(100u32), Some("m"))
                    } else {
                        let v = f64::from(*value) / 7.0;
                        runner.progress(session, hooks, tx, token, v, None, None)
                    });
                }
            }
            Op::ResourceUpdated => {
                let World {
                    session, hooks, tx, ..
                } = &mut w;
                command(runner.resource_updated(session, hooks, tx, SENSOR));
            }
            Op::ListChanged(n) => {
                let kind =
                    [ListKind::Tools, ListKind::Resources, ListKind::Prompts][usize::from(*n) % 3];
                let World {
                    session, hooks, tx, ..
                } = &mut w;
                command(runner.list_changed(session, hooks, tx, kind));
            }
            Op::Advance(ms) => {
                NOW.with(|now| now.set(now.get() + u64::from(*ms)));
                let World {
                    session, hooks, tx, ..
                } = &mut w;
                command(runner.handle_timeout(session, hooks, tx));
            }
        }
        frames(&w.tx.0, seen);
        seen = w.tx.0.len();
    }

    // Still serving: a newline ends whatever line was open, then a request with a fresh id.
    let mut id = String::from("final");
    while sent.windows(id.len()).any(|win| win == id.as_bytes()) {
        id.push('x');
    }
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","method":"server/discover","params":{{{MODERN_META}}}}}"#
    );
    w.rx.bytes.push_back(b'\n');
    w.rx.bytes.extend(line.as_bytes());
    w.rx.bytes.push_back(b'\n');
    serve(&mut runner, &mut w);
    let last = frames(&w.tx.0, seen);
    assert!(
        last.iter()
            .any(|f| f["id"] == id.as_str() && f["result"]["supportedVersions"].is_array()),
        "the final server/discover was not answered: {last:?}"
    );
}
