//! A scripted client around one `Session` (quinn's `Pair`, str0m's `TestRtc`): it feeds
//! messages, drains every output the way an adapter must, keeps deferred calls for the test
//! to complete, and validates every frame the server emits against the official schema of
//! the revision it was emitted under.
#![allow(dead_code)]

use std::collections::HashMap;

use mcp_rs_core::model::completion::{
    CompleteRequest, CompletionRef, CompletionResult, Completions,
};
use mcp_rs_core::model::prompts::{
    GetPromptRequest, Prompt, PromptArgument, PromptResult, PromptSet,
};
use mcp_rs_core::model::resources::{
    ReadRequest, ReadResult, Resource, ResourceSet, ResourceTemplate,
};
use mcp_rs_core::{
    Annotations, CallRequest, CallToken, ClientCaps, Config, Content, Dispatch, Event,
    ProtocolVersion, Request, ResourceLink, Role, ServerHandler, ServerInfo, Session,
    SessionStorage, Tool, ToolAnnotations, ToolResult, ToolSet,
};
use serde_json::{json, Value};

#[path = "../harness/mod.rs"]
pub(crate) mod harness;

pub(crate) const MODERN: &str = "2026-07-28";

/// `params._meta` of a 2026-07-28 request with empty client capabilities.
pub(crate) fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A modern request: `params` gets the per-request `_meta` merged in.
pub(crate) fn modern(id: Value, method: &str, mut params: Value) -> String {
    params
        .as_object_mut()
        .expect("params object")
        .insert("_meta".into(), modern_meta());
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string()
}

/// The tasks extension's id (SEP-2663).
pub(crate) const TASKS_EXT: &str = "io.modelcontextprotocol/tasks";

/// A 2026-07-28 request whose client capabilities list the tasks extension.
pub(crate) fn with_tasks(id: impl Into<Value>, method: &str, mut params: Value) -> String {
    params.as_object_mut().expect("params object").insert(
        "_meta".into(),
        json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXT: {}}}
        }),
    );
    request(id.into(), method, params)
}

pub(crate) fn request(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string()
}

pub(crate) fn initialize(id: i64, version: &str) -> String {
    request(
        json!(id),
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "pair", "version": "0"}}),
    )
}

pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

const OBJECT: &str = r#"{"type":"object"}"#;
const ADD_SCHEMA: &str = r#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}"#;
const ADD_OUTPUT: &str =
    r#"{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}"#;
/// 2020-12 keywords that must come through `tools/list` byte-for-byte.
pub(crate) const SCHEMA_2020: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"pos":{"$anchor":"p","type":"number","exclusiveMinimum":0}},"type":"object","properties":{"x":{"$ref":"#/$defs/pos"}},"allOf":[{"required":["x"]}],"anyOf":[{"properties":{"x":{"maximum":10}}},{"properties":{"x":{"minimum":100}}}],"if":{"properties":{"x":{"const":1}}},"then":{"required":["x"]},"else":{},"additionalProperties":false}"##;

pub(crate) fn seed_tools() -> Vec<Tool<'static>> {
    vec![
        Tool {
            title: Some("Echo"),
            description: Some("Echoes its arguments as text"),
            annotations: Some(ToolAnnotations {
                read_only_hint: Some(true),
                open_world_hint: Some(false),
                ..Default::default()
            }),
            ..Tool::new("echo", OBJECT)
        },
        Tool {
            title: Some("Add"),
            description: Some("Adds two numbers"),
            output_schema: Some(ADD_OUTPUT),
            icons: &[mcp_rs_core::Icon {
                src: "data:image/png;base64,AA==",
                mime_type: Some("image/png"),
                sizes: &["1x1"],
                theme: None,
            }],
            meta: Some(r#"{"example.com/kind":"math"}"#),
            ..Tool::new("add", ADD_SCHEMA)
        },
        Tool {
            description: Some("Deferred: completed by the test"),
            ..Tool::new("slow", OBJECT)
        },
        Tool {
            description: Some("Needs sampling"),
            requires: ClientCaps::SAMPLING,
            ..Tool::new("needs_sampling", OBJECT)
        },
        Tool {
            description: Some("Every content type"),
            ..Tool::new("all_content", OBJECT)
        },
        Tool {
            description: Some("Always fails"),
            ..Tool::new("fail", OBJECT)
        },
        Tool {
            description: Some("2020-12 schema"),
            ..Tool::new("schema_2020", SCHEMA_2020)
        },
    ]
}

pub(crate) struct TestTools {
    pub defs: Vec<Tool<'static>>,
    /// `InputRequests::skipped` of the last `input_required` the `confirm` tool wrote.
    pub last_skipped: Option<usize>,
    /// What the `confirm` tool saw on its last retry: (state, `inputResponses`).
    pub last_input: Option<(String, Option<Value>)>,
    /// Tools that run as tasks (tasks extension), by name; all others never do.
    pub task_tools: Vec<(&'static str, mcp_rs_core::model::tasks::TaskSupport)>,
    /// The task ids deferred task calls were handed (`CallRequest::task`).
    pub deferred_tasks: Vec<String>,
}

impl TestTools {
    pub(crate) fn new(extra: usize) -> Self {
        let mut defs = seed_tools();
        for i in 0..extra {
            let name: &'static str = Box::leak(format!("extra_{i:03}").into_boxed_str());
            defs.push(Tool {
                description: Some("generated"),
                ..Tool::new(name, OBJECT)
            });
        }
        TestTools {
            defs,
            last_skipped: None,
            last_input: None,
            task_tools: Vec::new(),
            deferred_tasks: Vec::new(),
        }
    }
}

#[derive(serde::Deserialize)]
struct AddArgs {
    a: f64,
    b: f64,
}

impl ToolSet for TestTools {
    fn len(&self) -> usize {
        self.defs.len()
    }
    fn get(&self, index: usize) -> Option<Tool<'_>> {
        self.defs.get(index).copied()
    }
    fn task_support(&self, index: usize) -> mcp_rs_core::model::tasks::TaskSupport {
        let name = self.defs.get(index).map_or("", |t| t.name);
        self.task_tools
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(Default::default(), |(_, s)| *s)
    }
    fn call(&mut self, req: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
        let name = self.defs[req.tool_index()].name;
        if let (Some(task), "slow") = (req.task(), name) {
            // A deferred task call: the tool keeps the id and reports to the table.
            self.deferred_tasks.push(task.as_str().to_string());
            return Dispatch::Defer;
        }
        match name {
            "echo" => {
                r.text(req.args().as_str());
            }
            "add" => match req.parse_args::<AddArgs>(&mut [0u8; 64]) {
                Ok(a) => {
                    let sum = a.a + a.b;
                    r.structured_with(|w| {
                        w.begin_object();
                        w.key("sum");
                        w.f64(sum);
                        w.end_object();
                    });
                }
                Err(e) => {
                    r.fail(format_args!("Invalid arguments for tool add: {e}"));
                }
            },
            "all_content" => {
                r.text("plain");
                r.push(
                    &Content::Text("annotated"),
                    Some(&Annotations {
                        audience: &[Role::User, Role::Assistant],
                        priority: Some(0.5),
                        last_modified: Some("2025-01-01T00:00:00Z"),
                    }),
                    Some(r#"{"example.com/x":1}"#),
                );
                r.image("iVBORw0KGgo=", "image/png");
                r.audio("UklGRg==", "audio/wav");
                r.resource_link(&ResourceLink {
                    uri: "file:///a.txt",
                    name: "a.txt",
                    mime_type: Some("text/plain"),
                    size: Some(3),
                    ..Default::default()
                });
                r.embedded_text("test://text", Some("text/plain"), "embedded");
                r.embedded_blob("test://blob", Some("application/octet-stream"), "AAEC");
            }
            "fail" => {
                r.fail(format_args!("This tool intentionally fails"));
            }
            "confirm" => {
                let input = *req.input();
                match input.state() {
                    None => {
                        let mut skipped = 0;
                        r.input_required(Some(CONFIRM_STATE), |q| {
                            q.elicit("confirm", "Proceed?", CONFIRM_SCHEMA);
                            q.sample("draft", SAMPLE_PARAMS);
                            q.list_roots("roots");
                            skipped = q.skipped();
                        });
                        self.last_skipped = Some(skipped);
                    }
                    Some(state) => {
                        let responses = input
                            .responses()
                            .map(|v| serde_json::from_str(v.as_str()).expect("responses JSON"));
                        self.last_input = Some((state.to_string(), responses));
                        let answer = input.response("confirm").map_or("none", |v| v.as_str());
                        r.text_fmt(format_args!("state={state} confirm={answer}"));
                    }
                }
            }
            "slow" | "needs_sampling" => return Dispatch::Defer,
            _ => {
                r.text(name);
            }
        }
        Dispatch::Done
    }
}

/// One frame the server emitted, with how it was routed.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub value: Value,
    pub route: mcp_rs_core::Route,
}

pub(crate) struct Pair {
    pub session: Session<'static>,
    pub tools: TestTools,
    pub out: Vec<u8>,
    /// Deferred calls handed out and not yet completed: (token, tool name, args JSON).
    pub calls: Vec<(CallToken, String, Value)>,
    /// For each of `calls`: the verified `requestState` payload its request carried.
    pub call_states: Vec<Option<String>>,
    pub events: Vec<Event>,
    /// Client responses routed to calls (`Incoming::next_response`): call, `Ok(result)` or
    /// `Err(error code)`.
    pub responses: Vec<(CallToken, Result<Value, i64>)>,
    /// Request id (raw JSON) → (method, revision) for schema validation of replies.
    requests: HashMap<String, (String, String)>,
    /// Resources, prompts and completions served besides the tools (all `None` for a
    /// tools-only server, see [`Pair::full`]).
    pub ext: Extras,
    /// The time passed to `Session::handle` (milliseconds).
    pub now: u64,
    /// `subscriptions/listen` streams opened (`Incoming::subscription`).
    pub subscriptions: Vec<CallToken>,
}

pub(crate) fn server_info() -> &'static ServerInfo<'static> {
    Box::leak(Box::new(ServerInfo {
        name: "pair-server",
        version: "1.2.3",
        title: Some("Pair Server"),
        description: Some("A server under test"),
        website_url: Some("https://example.com"),
        icons: &[],
        instructions: Some("Use the tools."),
    }))
}

impl Pair {
    pub(crate) fn new() -> Self {
        Self::with(Config::new(mcp_rs_core::SecretKey([0x5a; 16])), 0, 65536)
    }

    pub(crate) fn with(config: Config, extra_tools: usize, out_len: usize) -> Self {
        let storage: &'static mut SessionStorage<4> = Box::leak(Box::new(SessionStorage::new()));
        Pair {
            session: Session::new(server_info(), config, storage),
            tools: TestTools::new(extra_tools),
            out: vec![0; out_len],
            calls: Vec::new(),
            call_states: Vec::new(),
            events: Vec::new(),
            responses: Vec::new(),
            requests: HashMap::new(),
            ext: Extras::default(),
            now: 0,
            subscriptions: Vec::new(),
        }
    }

    /// A server with tools (plus the `confirm` tool), resources, prompts and completions.
    pub(crate) fn full() -> Self {
        Self::full_with(Config::new(mcp_rs_core::SecretKey([0x5a; 16])))
    }

    pub(crate) fn full_with(config: Config) -> Self {
        let mut p = Self::with(config, 0, 65536);
        p.enable_full();
        p
    }

    /// Turns a tools-only pair into a [`full`](Self::full) one.
    pub(crate) fn enable_full(&mut self) {
        self.tools.defs.push(Tool {
            description: Some("Asks the client to confirm (input_required, 2026-07-28)"),
            ..Tool::new("confirm", OBJECT)
        });
        self.ext = Extras {
            resources: Some(TestResources::default()),
            prompts: Some(TestPrompts),
            completions: Some(TestCompletions),
            skills: None,
            tasks: None,
        };
    }

    /// A legacy session initialized at `version` with client `capabilities`.
    pub(crate) fn init(&mut self, version: &str, capabilities: Value) {
        self.send(&request(
            json!(0),
            "initialize",
            json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "pair", "version": "0"}}),
        ));
        self.send(INITIALIZED);
        self.events.clear();
    }

    /// A legacy session initialized at `version`.
    pub(crate) fn initialized(version: &str) -> Self {
        let mut p = Pair::new();
        p.send(&initialize(0, version));
        p.send(INITIALIZED);
        p.events.clear();
        p
    }

    /// The revision a message is answered under (for schema validation).
    fn revision_of(&self, msg: &Value) -> String {
        let modern = msg
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .is_some()
            || msg.get("method").and_then(Value::as_str) == Some("server/discover");
        if modern {
            return MODERN.into();
        }
        if msg.get("method").and_then(Value::as_str) == Some("initialize") {
            let requested = msg
                .pointer("/params/protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            let v = ProtocolVersion::negotiate_legacy(ProtocolVersion::from_wire(requested));
            return v.as_str().into();
        }
        self.session
            .negotiated_version()
            .unwrap_or(ProtocolVersion::LATEST_LEGACY)
            .as_str()
            .into()
    }

    fn remember(&mut self, msg: &Value) {
        if let (Some(id), Some(method)) = (msg.get("id"), msg.get("method").and_then(Value::as_str))
        {
            let rev = self.revision_of(msg);
            self.requests.insert(id.to_string(), (method.into(), rev));
        }
    }

    fn validate(&self, v: &Value) {
        let items: Vec<&Value> = match v.as_array() {
            Some(a) => a.iter().collect(),
            None => vec![v],
        };
        for m in items {
            let key = m.get("id").map(|i| i.to_string()).unwrap_or_default();
            let (method, rev) = match self.requests.get(&key) {
                Some((m, r)) => (Some(m.as_str()), r.clone()),
                None => {
                    // Notifications and id-less errors: the session's revision; errors with
                    // no id only exist from 2025-11-25 on.
                    let rev = match self.session.negotiated_version() {
                        Some(v) if m.get("error").is_none() => v.as_str().to_string(),
                        _ => ProtocolVersion::LATEST_LEGACY.as_str().to_string(),
                    };
                    (None, rev)
                }
            };
            if let Err(e) = harness::validate_server_message(&rev, method, m) {
                panic!("schema violation for {m}:\n{e}");
            }
        }
    }

    fn push_frame(&mut self, frames: &mut Vec<Frame>, len: usize, route: mcp_rs_core::Route) {
        let bytes = &self.out[..len];
        assert!(!bytes.contains(&b'\n'), "frame contains a raw newline");
        let value: Value = serde_json::from_slice(bytes).unwrap_or_else(|e| {
            panic!(
                "server emitted invalid JSON ({e}): {}",
                String::from_utf8_lossy(bytes)
            )
        });
        self.validate(&value);
        frames.push(Frame { value, route });
    }

    /// Sends raw bytes; returns every frame emitted, in order.
    pub(crate) fn send_bytes(&mut self, msg: &[u8]) -> Vec<Frame> {
        if let Ok(v) = serde_json::from_slice::<Value>(msg) {
            match v.as_array() {
                Some(a) => a.iter().for_each(|m| self.remember(m)),
                None => self.remember(&v),
            }
        }
        let mut frames = Vec::new();
        let mut server = Serve {
            tools: &mut self.tools,
            ext: &mut self.ext,
        };
        let mut incoming = self
            .session
            .handle(&mut server, self.now, msg, &mut self.out)
            .expect("handle");
        if let Some(tx) = incoming.transmit() {
            assert_eq!(tx.route, mcp_rs_core::Route::Reply);
            self.push_frame(&mut frames, tx.len, tx.route);
        }
        if let Some(token) = incoming.subscription() {
            self.subscriptions.push(token);
        }
        while let Some(call) = incoming.next_call(&mut self.session) {
            let (name, args) = describe(&call.request);
            self.calls.push((call.token(), name, args));
            let state = match &call.request {
                Request::Tool(t) => t.input().state(),
                Request::Read(r) => r.input().state(),
                Request::Prompt(p) => p.input().state(),
                _ => None,
            };
            self.call_states.push(state.map(str::to_string));
        }
        while let Some(r) = incoming.next_response(&mut self.session) {
            let outcome = match r.outcome {
                mcp_rs_core::ClientOutcome::Result(v) => {
                    Ok(serde_json::from_str(v.as_str()).expect("result JSON"))
                }
                mcp_rs_core::ClientOutcome::Error { code, .. } => Err(code),
            };
            self.responses.push((r.call, outcome));
        }
        self.drain(&mut frames);
        frames
    }

    pub(crate) fn drain(&mut self, frames: &mut Vec<Frame>) {
        while let Some(tx) = self
            .session
            .poll_transmit(&mut self.out)
            .expect("poll_transmit")
        {
            self.push_frame(frames, tx.len, tx.route);
        }
        while let Some(ev) = self.session.poll_event() {
            self.events.push(ev);
        }
    }

    pub(crate) fn send(&mut self, msg: &str) -> Vec<Value> {
        self.send_bytes(msg.as_bytes())
            .into_iter()
            .map(|f| f.value)
            .collect()
    }

    /// Sends a request and returns its single reply.
    pub(crate) fn ask(&mut self, msg: &str) -> Value {
        let mut r = self.send(msg);
        assert_eq!(r.len(), 1, "expected one reply to {msg}, got {r:?}");
        r.remove(0)
    }

    /// Completes a deferred call with a text result.
    pub(crate) fn complete_text(&mut self, token: CallToken, text: &str) -> Option<Value> {
        let tx = self.session.complete(token, &mut self.out, |r| {
            r.text(text);
        });
        let tx = tx.expect("complete")?;
        let mut frames = Vec::new();
        self.push_frame(&mut frames, tx.len, tx.route);
        Some(frames.remove(0).value)
    }

    /// The frame a command (`complete_read`, `complete_prompt`, ...) wrote into `self.out`,
    /// parsed and validated; `None` if it wrote nothing (the call was cancelled).
    pub(crate) fn answered(
        &mut self,
        tx: Result<Option<mcp_rs_core::Transmit>, mcp_rs_core::CallError>,
    ) -> Option<Value> {
        let tx = tx.expect("command")?;
        Some(self.frame(tx))
    }

    /// One pass of `Session::tasks_changed_next` over the task table (what a transport does
    /// after the table changed): every `notifications/tasks` frame, validated. Checks the
    /// pass is exhausted (asking again yields nothing).
    pub(crate) fn tasks_changed(&mut self) -> Vec<Frame> {
        let mut frames = Vec::new();
        let mut cursor = 0;
        loop {
            let mut server = Serve {
                tools: &mut self.tools,
                ext: &mut self.ext,
            };
            let tx = self
                .session
                .tasks_changed_next(&mut server, &mut cursor, self.now, &mut self.out)
                .expect("tasks_changed_next");
            match tx {
                Some(tx) => self.push_frame(&mut frames, tx.len, tx.route),
                None => break,
            }
        }
        let mut server = Serve {
            tools: &mut self.tools,
            ext: &mut self.ext,
        };
        let again =
            self.session
                .tasks_changed_next(&mut server, &mut cursor, self.now, &mut self.out);
        assert_eq!(again, Ok(None), "an exhausted cursor yields nothing");
        frames
    }

    /// Drains the session's pending frames.
    pub(crate) fn pending(&mut self) -> Vec<Frame> {
        let mut frames = Vec::new();
        self.drain(&mut frames);
        frames
    }

    /// Parses a frame the session wrote outside `send` (progress, logs).
    pub(crate) fn frame(&mut self, tx: mcp_rs_core::Transmit) -> Value {
        let mut frames = Vec::new();
        self.push_frame(&mut frames, tx.len, tx.route);
        frames.remove(0).value
    }
}

/// Name and arguments of a deferred request, as `Pair::calls` records them: a tool call
/// by tool name and arguments; other kinds by method and what they target.
fn describe(request: &Request<'_>) -> (String, Value) {
    match request {
        Request::Tool(t) => (
            t.name().to_string(),
            serde_json::from_str(t.args().as_str()).expect("args JSON"),
        ),
        Request::Read(r) => ("resources/read".into(), json!({"uri": r.uri().to_string()})),
        Request::Prompt(p) => (
            "prompts/get".into(),
            json!({
                "name": p.name().to_string(),
                "arguments": serde_json::from_str::<Value>(p.arguments().as_str()).expect("arguments JSON"),
            }),
        ),
        Request::Complete(c) => (
            "completion/complete".into(),
            json!({"argument": c.argument().to_string(), "value": c.value().to_string()}),
        ),
        _ => ("unknown".into(), Value::Null),
    }
}

pub(crate) fn error_code(v: &Value) -> i64 {
    v.pointer("/error/code")
        .and_then(Value::as_i64)
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

// ---------------------------------------------------------------------------------------
// Resources, prompts and completions of `Pair::full`.

/// `requestState` payload the `confirm` tool seals.
pub(crate) const CONFIRM_STATE: &str = "step:1";
const CONFIRM_SCHEMA: &str =
    r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#;
const SAMPLE_PARAMS: &str = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Draft a reply"}}],"maxTokens":50}"#;

#[derive(Default)]
pub(crate) struct Extras {
    pub resources: Option<TestResources>,
    pub prompts: Option<TestPrompts>,
    pub completions: Option<TestCompletions>,
    /// Skills (served only with `resources`).
    pub skills: Option<&'static [mcp_rs_core::model::skills::Skill<'static>]>,
    /// The task table (tasks extension).
    pub tasks: Option<Box<dyn mcp_rs_core::model::tasks::TaskStore>>,
}

/// The server `Pair` hands to `Session::handle`.
struct Serve<'a> {
    tools: &'a mut TestTools,
    ext: &'a mut Extras,
}

impl ServerHandler for Serve<'_> {
    fn tools(&mut self) -> Option<&mut dyn ToolSet> {
        Some(self.tools)
    }
    fn resources(&mut self) -> Option<&mut dyn ResourceSet> {
        self.ext
            .resources
            .as_mut()
            .map(|r| r as &mut dyn ResourceSet)
    }
    fn prompts(&mut self) -> Option<&mut dyn PromptSet> {
        self.ext.prompts.as_mut().map(|p| p as &mut dyn PromptSet)
    }
    fn completions(&mut self) -> Option<&mut dyn Completions> {
        self.ext
            .completions
            .as_mut()
            .map(|c| c as &mut dyn Completions)
    }
    fn skills(&mut self) -> Option<&dyn mcp_rs_core::model::skills::SkillSet> {
        self.ext
            .skills
            .as_ref()
            .map(|s| s as &dyn mcp_rs_core::model::skills::SkillSet)
    }
    fn tasks(&mut self) -> Option<&mut dyn mcp_rs_core::model::tasks::TaskStore> {
        match self.ext.tasks {
            Some(ref mut t) => Some(&mut **t),
            None => None,
        }
    }
}

pub(crate) static RESOURCES: [Resource<'static>; 5] = [
    Resource {
        title: Some("Greeting"),
        description: Some("A text resource"),
        mime_type: Some("text/plain"),
        size: Some(5),
        annotations: Some(Annotations {
            audience: &[Role::User],
            priority: Some(0.25),
            last_modified: Some("2025-01-01T00:00:00Z"),
        }),
        icons: &[mcp_rs_core::Icon {
            src: "data:image/png;base64,AA==",
            mime_type: Some("image/png"),
            sizes: &[],
            theme: None,
        }],
        meta: Some(r#"{"example.com/tag":"t"}"#),
        ..Resource::new("test://static/text", "text")
    },
    Resource {
        mime_type: Some("application/octet-stream"),
        ..Resource::new("test://static/blob", "blob")
    },
    Resource::new("test://static/multi", "multi"),
    Resource {
        description: Some("Listed, but its read writes nothing"),
        ..Resource::new("test://static/empty", "empty")
    },
    Resource {
        description: Some("Read later (deferred)"),
        ..Resource::new("test://static/slow", "slow")
    },
];

pub(crate) static TEMPLATES: [ResourceTemplate<'static>; 2] = [
    ResourceTemplate {
        title: Some("Item"),
        description: Some("An item by id"),
        mime_type: Some("text/plain"),
        ..ResourceTemplate::new("test://items/{id}", "item")
    },
    ResourceTemplate {
        description: Some("Read later (deferred)"),
        ..ResourceTemplate::new("test://deferred/{name}", "deferred")
    },
];

#[derive(Default)]
pub(crate) struct TestResources {
    /// `resources/subscribe` / `unsubscribe` calls seen: (uri, subscribe).
    pub subscriptions: Vec<(String, bool)>,
    /// Do not offer `resources/subscribe`.
    pub no_subscribe: bool,
}

impl ResourceSet for TestResources {
    fn len(&self) -> usize {
        RESOURCES.len()
    }
    fn get(&self, index: usize) -> Option<Resource<'_>> {
        RESOURCES.get(index).copied()
    }
    fn templates_len(&self) -> usize {
        TEMPLATES.len()
    }
    fn template(&self, index: usize) -> Option<ResourceTemplate<'_>> {
        TEMPLATES.get(index).copied()
    }
    fn subscribable(&self) -> bool {
        !self.no_subscribe
    }
    fn subscribe(&mut self, uri: mcp_rs_core::wire::json::JsonStr<'_>, subscribe: bool) -> bool {
        let uri = uri.to_string();
        let known = RESOURCES.iter().any(|r| r.uri == uri)
            || TEMPLATES
                .iter()
                .any(|t| t.template().matches(&uri).is_some());
        if known {
            self.subscriptions.push((uri, subscribe));
        }
        known
    }
    fn read(&mut self, request: &ReadRequest<'_>, r: &mut ReadResult<'_, '_>) -> Dispatch {
        let uri = request.uri().to_string();
        match (request.resource_index(), request.template_index()) {
            (Some(0), _) => {
                r.text(&uri, Some("text/plain"), "hello");
            }
            (Some(1), _) => {
                r.blob(&uri, Some("application/octet-stream"), "AAECAw==");
            }
            (Some(2), _) => {
                r.text(&uri, Some("text/markdown"), "# part 1")
                    .text("test://static/multi#2", None, "part 2")
                    .blob("test://static/multi#3", Some("image/png"), "iVBORw0KGgo=");
            }
            (Some(3), _) => {}
            (Some(_), _) | (None, Some(1)) => return Dispatch::Defer,
            (None, Some(_)) => {
                let id = uri.strip_prefix("test://items/").unwrap_or("?");
                r.text(&uri, Some("text/plain"), &format!("item {id}"));
            }
            (None, None) if uri == "test://ask" => match request.input().state() {
                None => r.input_required(Some("read:1"), |q| {
                    q.list_roots("roots");
                }),
                Some(state) => {
                    r.text(&uri, None, &format!("state={state}"));
                }
            },
            (None, None) if uri == "test://unlisted" => {
                r.text(&uri, None, "unlisted but readable");
            }
            (None, None) => r.not_found(),
        }
        Dispatch::Done
    }
}

static GREET_ARGS: [PromptArgument<'static>; 2] = [
    PromptArgument {
        title: Some("Name"),
        ..PromptArgument::required("name", "Who to greet")
    },
    PromptArgument::optional("style", "formal or casual"),
];

pub(crate) static PROMPTS: [Prompt<'static>; 4] = [
    Prompt {
        title: Some("Greeting"),
        arguments: &GREET_ARGS,
        meta: Some(r#"{"example.com/kind":"greeting"}"#),
        ..Prompt::new("greet", "Greets someone")
    },
    Prompt::new("media", "Every content type"),
    Prompt::new("slow_prompt", "Rendered later (deferred)"),
    Prompt::new("ask", "Asks the client first (input_required, 2026-07-28)"),
];

pub(crate) struct TestPrompts;

impl PromptSet for TestPrompts {
    fn len(&self) -> usize {
        PROMPTS.len()
    }
    fn get(&self, index: usize) -> Option<Prompt<'_>> {
        PROMPTS.get(index).copied()
    }
    fn get_prompt(
        &mut self,
        request: &GetPromptRequest<'_>,
        r: &mut PromptResult<'_, '_>,
    ) -> Dispatch {
        match request.prompt_index() {
            0 => {
                let name = request.argument("name").map(|n| n.to_string());
                let formal = request.argument("style").is_some_and(|s| s == "formal");
                let text = match (name, formal) {
                    (Some(n), true) => format!("Good day, {n}."),
                    (Some(n), false) => format!("Hi {n}!"),
                    (None, _) => "Hi!".to_string(),
                };
                r.description("A greeting")
                    .message(Role::User, &Content::Text(&text))
                    .message(Role::Assistant, &Content::Text("Hello!"));
            }
            1 => {
                r.message(Role::User, &Content::Text("look"))
                    .message(
                        Role::User,
                        &Content::Image {
                            data: "iVBORw0KGgo=",
                            mime_type: "image/png",
                        },
                    )
                    .message(
                        Role::User,
                        &Content::Audio {
                            data: "UklGRg==",
                            mime_type: "audio/wav",
                        },
                    )
                    .message(
                        Role::Assistant,
                        &Content::EmbeddedText {
                            uri: "test://static/text",
                            mime_type: Some("text/plain"),
                            text: "hello",
                        },
                    )
                    .message_with(
                        Role::Assistant,
                        &Content::EmbeddedBlob {
                            uri: "test://static/blob",
                            mime_type: Some("application/octet-stream"),
                            blob: "AAECAw==",
                        },
                        Some(&Annotations {
                            audience: &[Role::Assistant],
                            priority: Some(1.0),
                            last_modified: None,
                        }),
                    );
            }
            3 => match request.input().state() {
                None => r.input_required(Some("prompt:1"), |q| {
                    q.elicit(
                        "topic",
                        "Which topic?",
                        r#"{"type":"object","properties":{"topic":{"type":"string"}}}"#,
                    );
                }),
                Some(state) => {
                    let topic = request
                        .input()
                        .response("topic")
                        .and_then(|v| v.get("content"))
                        .and_then(|c| c.get("topic"))
                        .and_then(|t| t.as_string())
                        .map_or("none".to_string(), |t| t.to_string());
                    r.message(
                        Role::User,
                        &Content::Text(&format!("state={state} topic={topic}")),
                    );
                }
            },
            _ => return Dispatch::Defer,
        }
        Dispatch::Done
    }
}

/// Completes `greet`'s `name` and `test://items/{id}`'s `id`; `context.arguments.style`
/// of `formal` upper-cases the names.
pub(crate) struct TestCompletions;

impl Completions for TestCompletions {
    fn complete(
        &mut self,
        req: &CompleteRequest<'_>,
        r: &mut CompletionResult<'_, '_>,
    ) -> Dispatch {
        let typed = req.value().to_string();
        let candidates: &[&str] = match req.reference() {
            CompletionRef::Prompt(p) if p == "greet" && req.argument() == "name" => {
                &["alice", "albert", "bob"]
            }
            CompletionRef::Resource(u) if u == "test://items/{id}" => {
                if req.argument() == "id" {
                    &["1", "12", "123", "2"]
                } else {
                    &[]
                }
            }
            CompletionRef::Resource(u) if u == "test://deferred/{name}" => return Dispatch::Defer,
            _ => &[],
        };
        let formal = req.context_argument("style").is_some_and(|s| s == "formal");
        let hits: Vec<String> = candidates
            .iter()
            .filter(|c| c.starts_with(&typed))
            .map(|c| {
                if formal {
                    c.to_uppercase()
                } else {
                    c.to_string()
                }
            })
            .collect();
        for h in &hits {
            r.value(h);
        }
        r.total(hits.len() as u64);
        Dispatch::Done
    }
}
