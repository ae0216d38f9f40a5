//! A scripted client around one `Session` (quinn's `Pair`, str0m's `TestRtc`): it feeds
//! messages, drains every output the way an adapter must, keeps deferred calls for the test
//! to complete, and validates every frame the server emits against the official schema of
//! the revision it was emitted under.
#![allow(dead_code)]

use std::collections::HashMap;

use mcp_core::{
    Annotations, CallRequest, CallToken, ClientCaps, Config, Content, Dispatch, Event,
    ProtocolVersion, ResourceLink, Role, ServerInfo, Session, SessionStorage, Tool,
    ToolAnnotations, ToolResult, ToolSet,
};
use serde_json::{json, Value};

#[path = "../harness/mod.rs"]
pub mod harness;

pub const MODERN: &str = "2026-07-28";

/// `params._meta` of a 2026-07-28 request with empty client capabilities.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A modern request: `params` gets the per-request `_meta` merged in.
pub fn modern(id: Value, method: &str, mut params: Value) -> String {
    params
        .as_object_mut()
        .expect("params object")
        .insert("_meta".into(), modern_meta());
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string()
}

pub fn request(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string()
}

pub fn initialize(id: i64, version: &str) -> String {
    request(
        json!(id),
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "pair", "version": "0"}}),
    )
}

pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

const OBJECT: &str = r#"{"type":"object"}"#;
const ADD_SCHEMA: &str = r#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}"#;
const ADD_OUTPUT: &str =
    r#"{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}"#;
/// 2020-12 keywords that must come through `tools/list` byte-for-byte.
pub const SCHEMA_2020: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"pos":{"$anchor":"p","type":"number","exclusiveMinimum":0}},"type":"object","properties":{"x":{"$ref":"#/$defs/pos"}},"allOf":[{"required":["x"]}],"anyOf":[{"properties":{"x":{"maximum":10}}},{"properties":{"x":{"minimum":100}}}],"if":{"properties":{"x":{"const":1}}},"then":{"required":["x"]},"else":{},"additionalProperties":false}"##;

pub fn seed_tools() -> Vec<Tool<'static>> {
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
            icons: &[mcp_core::Icon {
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

pub struct TestTools {
    pub defs: Vec<Tool<'static>>,
}

impl TestTools {
    pub fn new(extra: usize) -> Self {
        let mut defs = seed_tools();
        for i in 0..extra {
            let name: &'static str = Box::leak(format!("extra_{i:03}").into_boxed_str());
            defs.push(Tool {
                description: Some("generated"),
                ..Tool::new(name, OBJECT)
            });
        }
        TestTools { defs }
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
    fn call(&mut self, req: &CallRequest<'_>, r: &mut ToolResult<'_, '_>) -> Dispatch {
        let name = self.defs[req.tool_index()].name;
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
pub struct Frame {
    pub value: Value,
    pub route: mcp_core::Route,
}

pub struct Pair {
    pub session: Session<'static>,
    pub tools: TestTools,
    pub out: Vec<u8>,
    /// Deferred calls handed out and not yet completed: (token, tool name, args JSON).
    pub calls: Vec<(CallToken, String, Value)>,
    pub events: Vec<Event>,
    /// Client responses routed to calls (`Incoming::next_response`): call, `Ok(result)` or
    /// `Err(error code)`.
    pub responses: Vec<(CallToken, Result<Value, i64>)>,
    /// Request id (raw JSON) → (method, revision) for schema validation of replies.
    requests: HashMap<String, (String, String)>,
}

pub fn server_info() -> &'static ServerInfo<'static> {
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
    pub fn new() -> Self {
        Self::with(Config::new(mcp_core::SecretKey([0x5a; 16])), 0, 65536)
    }

    pub fn with(config: Config, extra_tools: usize, out_len: usize) -> Self {
        let storage: &'static mut SessionStorage<4> = Box::leak(Box::new(SessionStorage::new()));
        Pair {
            session: Session::new(server_info(), config, storage),
            tools: TestTools::new(extra_tools),
            out: vec![0; out_len],
            calls: Vec::new(),
            events: Vec::new(),
            responses: Vec::new(),
            requests: HashMap::new(),
        }
    }

    /// A legacy session initialized at `version`.
    pub fn initialized(version: &str) -> Self {
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

    fn push_frame(&mut self, frames: &mut Vec<Frame>, len: usize, route: mcp_core::Route) {
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
    pub fn send_bytes(&mut self, msg: &[u8]) -> Vec<Frame> {
        if let Ok(v) = serde_json::from_slice::<Value>(msg) {
            match v.as_array() {
                Some(a) => a.iter().for_each(|m| self.remember(m)),
                None => self.remember(&v),
            }
        }
        let mut frames = Vec::new();
        let mut incoming = self
            .session
            .handle_message(&mut self.tools, msg, &mut self.out)
            .expect("handle");
        if let Some(tx) = incoming.transmit() {
            assert_eq!(tx.route, mcp_core::Route::Reply);
            self.push_frame(&mut frames, tx.len, tx.route);
        }
        while let Some(call) = incoming.next_call(&mut self.session) {
            let name = call.name().chars().collect::<String>();
            let args: Value = serde_json::from_str(call.args().as_str()).expect("args JSON");
            self.calls.push((call.token(), name, args));
        }
        while let Some(r) = incoming.next_response(&mut self.session) {
            let outcome = match r.outcome {
                mcp_core::ClientOutcome::Result(v) => {
                    Ok(serde_json::from_str(v.as_str()).expect("result JSON"))
                }
                mcp_core::ClientOutcome::Error { code, .. } => Err(code),
            };
            self.responses.push((r.call, outcome));
        }
        self.drain(&mut frames);
        frames
    }

    pub fn drain(&mut self, frames: &mut Vec<Frame>) {
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

    pub fn send(&mut self, msg: &str) -> Vec<Value> {
        self.send_bytes(msg.as_bytes())
            .into_iter()
            .map(|f| f.value)
            .collect()
    }

    /// Sends a request and returns its single reply.
    pub fn ask(&mut self, msg: &str) -> Value {
        let mut r = self.send(msg);
        assert_eq!(r.len(), 1, "expected one reply to {msg}, got {r:?}");
        r.remove(0)
    }

    /// Completes a deferred call with a text result.
    pub fn complete_text(&mut self, token: CallToken, text: &str) -> Option<Value> {
        let tx = self.session.complete(token, &mut self.out, |r| {
            r.text(text);
        });
        let tx = tx.expect("complete")?;
        let mut frames = Vec::new();
        self.push_frame(&mut frames, tx.len, tx.route);
        Some(frames.remove(0).value)
    }

    /// Parses a frame the session wrote outside `send` (progress, logs).
    pub fn frame(&mut self, tx: mcp_core::Transmit) -> Value {
        let mut frames = Vec::new();
        self.push_frame(&mut frames, tx.len, tx.route);
        frames.remove(0).value
    }
}

pub fn error_code(v: &Value) -> i64 {
    v.pointer("/error/code")
        .and_then(Value::as_i64)
        .unwrap_or_else(|| panic!("not an error: {v}"))
}
