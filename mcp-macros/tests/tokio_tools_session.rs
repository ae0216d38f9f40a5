//! `#[mcp_rs_tokio::tools]` end to end: a tool set with sync and `async fn` methods, registered
//! into an `mcp_rs_tokio::Tools` and served by a real mcp-tokio connection over an in-memory
//! pipe: listing, typed arguments (borrowed ones too), progress, logging, cancellation,
//! `inline`, and the results of every return shape.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_rs_core::wire::json::{JsonStr, RawJson};
use mcp_rs_core::{CallRequest, Dispatch, LogLevel, ToolResult};
use mcp_rs_tokio::{Content, Context, Server, ServerInfo, ToolArgs, ToolOutput, ToolReply, Tools};
use serde_json::{json, Value};
use tokio::io::{split, WriteHalf};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf};

/// Two numbers.
#[derive(ToolArgs)]
struct Pair {
    /// The first.
    a: f64,
    /// The second.
    b: f64,
}

/// A number.
#[derive(ToolOutput)]
struct Number {
    value: f64,
}

/// Borrowed text: the task parses its own copy of the arguments.
#[derive(ToolArgs)]
struct Text<'a> {
    text: JsonStr<'a>,
}

/// Echoed text, borrowing from the arguments.
#[derive(ToolOutput)]
struct Echoed<'a> {
    text: &'a str,
    length: u64,
}

#[derive(ToolArgs)]
struct Steps {
    /// How many steps.
    #[arg(minimum = 1, maximum = 50)]
    n: u32,
    /// Pause before each step.
    #[arg(default = 5)]
    delay_ms: u64,
}

#[derive(ToolArgs)]
struct Mode {
    fast: bool,
}

/// An error for the model.
#[derive(Debug)]
struct Unlucky(u32);

impl fmt::Display for Unlucky {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is unlucky", self.0)
    }
}

#[derive(Default)]
struct Demo {
    calls: AtomicU32,
    waiting: AtomicBool,
    dropped: Arc<AtomicBool>,
}

/// Sets its flag when dropped (the task of a cancelled call).
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[mcp_rs_tokio::tools]
impl Demo {
    /// Adds two numbers, at once.
    #[tool(read_only, idempotent)]
    fn add(&self, args: Pair) -> Number {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Number {
            value: args.a + args.b,
        }
    }

    /// Adds two numbers, later.
    #[tool(title = "Slow add", read_only, idempotent)]
    async fn slow_add(&self, args: Pair) -> Number {
        tokio::time::sleep(Duration::from_millis(5)).await;
        self.calls.fetch_add(1, Ordering::SeqCst);
        Number {
            value: args.a + args.b,
        }
    }

    /// Echoes its text.
    #[tool]
    async fn echo<'a>(&self, args: Text<'a>) -> String {
        tokio::task::yield_now().await;
        args.text.to_string()
    }

    /// Echoes its text, structured, borrowing the arguments.
    #[tool]
    async fn echo_structured<'a>(&self, args: Text<'a>) -> Echoed<'a> {
        tokio::task::yield_now().await;
        let text = args.text.as_borrowed().unwrap_or("(escaped)");
        Echoed {
            text,
            length: text.len() as u64,
        }
    }

    /// Counts to n, with progress and a log message per step.
    #[tool]
    async fn count(
        &self,
        args: Steps,
        ctx: Context,
        out: &mut ToolReply,
    ) -> Result<Number, Unlucky> {
        for i in 1..=args.n {
            tokio::time::sleep(Duration::from_millis(args.delay_ms)).await;
            ctx.progress(f64::from(i), Some(f64::from(args.n)), None)
                .await;
            ctx.log(LogLevel::Info, Some("count"), format!("step {i}"))
                .await;
        }
        out.push(Content::Text(format!("counted to {}", args.n)));
        if args.n == 13 {
            return Err(Unlucky(args.n));
        }
        Ok(Number {
            value: f64::from(args.n),
        })
    }

    /// Waits until cancelled.
    #[tool]
    async fn wait(&self, ctx: &Context) -> &'static str {
        let _flag = DropFlag(self.dropped.clone());
        self.waiting.store(true, Ordering::SeqCst);
        ctx.cancelled().await;
        std::future::pending::<()>().await;
        "unreachable"
    }

    /// Always fails.
    #[tool]
    async fn fail(&self) -> Result<(), String> {
        Err("this tool always fails".into())
    }

    /// Answers at once when asked to, later otherwise.
    #[tool(inline = Self::quick)]
    async fn maybe(&self, args: Mode) -> ToolReply {
        let _ = args.fast;
        ToolReply::text("slow path")
    }

    /// Its arguments as sent.
    #[tool(input_schema = r#"{"type":"object"}"#)]
    async fn raw(&self, args: RawJson<'_>) -> String {
        args.as_str().to_owned()
    }

    /// The revision of the call (an associated function).
    #[tool]
    async fn revision(ctx: Context) -> String {
        ctx.version().as_str().to_owned()
    }

    /// The inline part of `maybe`: not a tool.
    fn quick(&self, request: &CallRequest<'_>, result: &mut ToolResult<'_, '_>) -> Dispatch {
        if request.args().get("fast").and_then(|v| v.as_bool()) == Some(true) {
            result.text("fast path");
            Dispatch::Done
        } else {
            Dispatch::Defer
        }
    }
}

static ICONS: [mcp_rs_core::Icon<'static>; 1] = [mcp_rs_core::Icon {
    src: "https://example.com/keys.png",
    mime_type: Some("image/png"),
    sizes: &["48x48"],
    theme: None,
}];

/// Every `#[tool]` key of the core form, and the attribute's options.
struct Keys;

#[mcp_rs_tokio::tools(tokio = ::mcp_rs_tokio, crate = ::mcp_rs_core)]
impl Keys {
    /// Not this text.
    #[tool(
        name = "keys.all",
        description = "Every key",
        title = "All keys",
        destructive,
        open_world = false,
        icons = &ICONS,
        meta = r#"{"example.com/k":1}"#,
        requires = mcp_rs_core::ClientCaps::SAMPLING,
        output_schema = r#"{"type":"object"}"#
    )]
    async fn all(&self, out: &mut ToolReply) {
        out.push(Content::Text("ok".into()));
    }
}

#[tokio::test]
async fn every_key_reaches_the_listing() {
    let tools = Tools::new();
    Arc::new(Keys).register(&tools);
    let server = Server::new(
        ServerInfo {
            name: "keys".into(),
            version: "0".into(),
            ..Default::default()
        },
        tools,
    );
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (sr, sw) = split(server_side);
    tokio::spawn(async move { server.serve_connection(sr, sw).await });
    let (cr, cw) = split(client);
    let mut peer = Peer {
        lines: BufReader::new(cr).lines(),
        writer: cw,
        notes: Vec::new(),
    };
    peer.request(
        0,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"0"}}),
    )
    .await;
    let list = peer.request(1, "tools/list", json!({})).await;
    let tool = &list["tools"][0];
    assert_eq!(tool["name"], "keys.all");
    assert_eq!(tool["description"], "Every key");
    assert_eq!(tool["title"], "All keys");
    assert_eq!(
        tool["annotations"],
        json!({"title": "All keys", "destructiveHint": true, "openWorldHint": false})
    );
    assert_eq!(tool["icons"][0]["src"], "https://example.com/keys.png");
    assert_eq!(tool["icons"][0]["sizes"], json!(["48x48"]));
    assert_eq!(tool["_meta"], json!({"example.com/k": 1}));
    assert_eq!(tool["outputSchema"], json!({"type": "object"}));
    let r = peer.call(2, "keys.all", json!({})).await;
    assert_eq!(texts(&r), ["ok"]);
}

// ---- the connection ---------------------------------------------------------------------

struct Peer {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
    /// Notifications received while waiting for responses.
    notes: Vec<Value>,
}

impl Peer {
    async fn send(&mut self, v: Value) {
        let mut line = v.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("connection open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("invalid JSON {e}: {line}"))
    }
    /// The response with this id; notifications before it are kept in `notes`.
    async fn response(&mut self, id: &Value) -> Value {
        loop {
            let m = self.recv().await;
            if m.get("id") == Some(id) && m.get("method").is_none() {
                return m;
            }
            assert!(m.get("id").is_none(), "unexpected message {m}");
            self.notes.push(m);
        }
    }
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
            .await;
        let r = self.response(&json!(id)).await;
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{method} failed: {r}"))
    }
    async fn call(&mut self, id: u64, name: &str, args: Value) -> Value {
        self.request(id, "tools/call", json!({"name": name, "arguments": args}))
            .await
    }
}

async fn connect() -> (Peer, Arc<Demo>) {
    let demo = Arc::new(Demo::default());
    let tools = Tools::new();
    demo.clone().register(&tools);
    let info = ServerInfo {
        name: "demo".into(),
        version: "0".into(),
        ..Default::default()
    };
    let server = Server::new(info, tools);
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (sr, sw) = split(server_side);
    tokio::spawn(async move { server.serve_connection(sr, sw).await });
    let (cr, cw) = split(client);
    let mut peer = Peer {
        lines: BufReader::new(cr).lines(),
        writer: cw,
        notes: Vec::new(),
    };
    let init = peer
        .request(
            0,
            "initialize",
            json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}),
        )
        .await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    peer.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;
    (peer, demo)
}

fn texts(result: &Value) -> Vec<&str> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect()
}

// ---- tests ----------------------------------------------------------------------------------

#[tokio::test]
async fn lists_the_static_definitions_in_order() {
    let (mut peer, _) = connect().await;
    let list = peer.request(1, "tools/list", json!({})).await;
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "add",
            "slow_add",
            "echo",
            "echo_structured",
            "count",
            "wait",
            "fail",
            "maybe",
            "raw",
            "revision"
        ]
    );
    assert_eq!(Demo::TOOLS.len(), names.len());
    for (tool, def) in tools.iter().zip(Demo::TOOLS) {
        let schema: Value = serde_json::from_str(def.input_schema).unwrap();
        assert_eq!(tool["inputSchema"], schema, "{tool}");
    }
    let by_name = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap();
    let slow = by_name("slow_add");
    assert_eq!(slow["title"], "Slow add");
    assert_eq!(slow["description"], "Adds two numbers, later.");
    assert_eq!(slow["annotations"]["readOnlyHint"], true);
    assert_eq!(slow["annotations"]["title"], "Slow add");
    assert_eq!(slow["inputSchema"], by_name("add")["inputSchema"]);
    assert_eq!(slow["outputSchema"], by_name("add")["outputSchema"]);
    assert_eq!(
        slow["outputSchema"]["properties"]["value"]["type"], "number",
        "{slow}"
    );
    assert_eq!(by_name("raw")["inputSchema"], json!({"type":"object"}));
    assert_eq!(
        by_name("fail")["inputSchema"],
        json!({"type":"object","additionalProperties":false})
    );
    assert_eq!(by_name("count")["inputSchema"]["required"], json!(["n"]));
    assert!(by_name("wait").get("outputSchema").is_none());
    assert_eq!(Demo::find_tool_by("maybe"), Some(7));
}

impl Demo {
    fn find_tool_by(name: &str) -> Option<usize> {
        let quoted = format!("\"{name}\"");
        let raw = mcp_rs_core::wire::json::parse(quoted.as_bytes(), Default::default()).unwrap();
        Demo::find_tool(raw.as_string().unwrap())
    }
}

#[tokio::test]
async fn sync_and_async_tools_give_the_same_result() {
    let (mut peer, demo) = connect().await;
    let at_once = peer.call(1, "add", json!({"a": 2, "b": 40})).await;
    let later = peer.call(2, "slow_add", json!({"a": 2, "b": 40})).await;
    assert_eq!(at_once, later);
    assert_eq!(later["structuredContent"], json!({"value": 42.0}));
    assert_eq!(texts(&later), [r#"{"value":42.0}"#]);
    assert_eq!(later.get("isError"), None);
    assert_eq!(demo.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn invalid_arguments_name_the_field_as_the_sync_form_does() {
    let (mut peer, demo) = connect().await;
    let sync = peer.call(1, "add", json!({"a": "two", "b": 40})).await;
    let task = peer.call(2, "slow_add", json!({"a": "two", "b": 40})).await;
    assert_eq!(sync["isError"], true);
    assert_eq!(task["isError"], true);
    let sync_text = texts(&sync)[0];
    assert!(sync_text.contains("`a`"), "{sync_text}");
    assert_eq!(
        texts(&task)[0],
        sync_text.replace("tool add", "tool slow_add")
    );
    // Neither method ran.
    assert_eq!(demo.calls.load(Ordering::SeqCst), 0);

    let missing = peer.call(3, "count", json!({})).await;
    assert_eq!(missing["isError"], true);
    assert!(texts(&missing)[0].starts_with("Invalid arguments for tool count: "));
    assert!(texts(&missing)[0].contains("`n`"), "{missing}");
    let range = peer.call(4, "count", json!({"n": 51})).await;
    assert_eq!(range["isError"], true, "{range}");
    // A tool without an arguments parameter refuses arguments.
    let extra = peer.call(5, "fail", json!({"x": 1})).await;
    assert_eq!(extra["isError"], true);
    assert!(texts(&extra)[0].contains("\"x\""), "{extra}");
    // `input_schema` tools get what was sent, unchecked.
    let raw = peer.call(6, "raw", json!({"anything": [1, 2]})).await;
    assert_eq!(texts(&raw), [r#"{"anything":[1,2]}"#]);
}

#[tokio::test]
async fn borrowed_arguments_live_in_the_task() {
    let (mut peer, _) = connect().await;
    let r = peer
        .call(1, "echo", json!({"text": "quote \" and \u{e9}"}))
        .await;
    assert_eq!(texts(&r), ["quote \" and \u{e9}"]);
    let r = peer
        .call(2, "echo_structured", json!({"text": "plain"}))
        .await;
    assert_eq!(
        r["structuredContent"],
        json!({"text": "plain", "length": 5})
    );
}

#[tokio::test]
async fn progress_and_logs_come_before_the_result() {
    let (mut peer, _) = connect().await;
    peer.request(1, "logging/setLevel", json!({"level": "info"}))
        .await;
    peer.notes.clear();
    peer.send(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"count","arguments":{"n":3,"delay_ms":1},"_meta":{"progressToken":"p"}}}),
    )
    .await;
    let r = peer.response(&json!(2)).await["result"].clone();
    let progress: Vec<&Value> = peer
        .notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| &n["params"])
        .collect();
    assert_eq!(progress.len(), 3, "{:?}", peer.notes);
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["progressToken"], "p");
        assert_eq!(p["progress"], json!((i + 1) as f64));
        assert_eq!(p["total"], json!(3.0));
    }
    let logs: Vec<&Value> = peer
        .notes
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .map(|n| &n["params"])
        .collect();
    assert_eq!(logs.len(), 3, "{:?}", peer.notes);
    assert_eq!(logs[2]["data"], "step 3");
    assert_eq!(logs[2]["logger"], "count");
    assert_eq!(logs[2]["level"], "info");
    // A block added through `&mut ToolReply`, then the structured value.
    assert_eq!(texts(&r), ["counted to 3", r#"{"value":3.0}"#]);
    assert_eq!(r["structuredContent"], json!({"value": 3.0}));

    // Without a progress token: no progress.
    peer.notes.clear();
    let r = peer.call(3, "count", json!({"n": 2, "delay_ms": 0})).await;
    assert_eq!(r["structuredContent"], json!({"value": 2.0}));
    assert!(peer
        .notes
        .iter()
        .all(|n| n["method"] != "notifications/progress"));
}

#[tokio::test]
async fn errors_keep_what_was_added_before_them() {
    let (mut peer, _) = connect().await;
    let r = peer.call(1, "count", json!({"n": 13, "delay_ms": 0})).await;
    assert_eq!(r["isError"], true);
    assert_eq!(texts(&r), ["counted to 13", "13 is unlucky"]);
    assert!(r.get("structuredContent").is_none());
    let r = peer.call(2, "fail", json!({})).await;
    assert_eq!(r["isError"], true);
    assert_eq!(texts(&r), ["this tool always fails"]);
}

#[tokio::test]
async fn cancellation_stops_the_task() {
    let (mut peer, demo) = connect().await;
    peer.send(json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait"}}))
        .await;
    let started = async {
        while !demo.waiting.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), started)
        .await
        .expect("the task started");
    peer.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}))
        .await;
    let dropped = async {
        while !demo.dropped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), dropped)
        .await
        .expect("the cancelled task was dropped");
    // No answer to the cancelled call; the connection serves on.
    let pong = peer.request(8, "ping", json!({})).await;
    assert_eq!(pong, json!({}));
    assert!(peer.notes.iter().all(|n| n.get("id").is_none()));
}

#[tokio::test]
async fn inline_answers_at_once_or_defers_to_the_task() {
    let (mut peer, _) = connect().await;
    let fast = peer.call(1, "maybe", json!({"fast": true})).await;
    assert_eq!(texts(&fast), ["fast path"]);
    let slow = peer.call(2, "maybe", json!({"fast": false})).await;
    assert_eq!(texts(&slow), ["slow path"]);
    // The arguments are checked before the inline part runs.
    let bad = peer.call(3, "maybe", json!({"fast": "yes"})).await;
    assert_eq!(bad["isError"], true);
    assert!(texts(&bad)[0].contains("`fast`"), "{bad}");
}

#[tokio::test]
async fn associated_functions_and_the_context() {
    let (mut peer, _) = connect().await;
    let r = peer.call(1, "revision", json!({})).await;
    assert_eq!(texts(&r), ["2025-11-25"]);
}

#[tokio::test]
async fn register_replaces_tools_of_the_same_name() {
    let tools = Tools::new();
    Arc::new(Demo::default()).register(&tools);
    let first = tools.len();
    Arc::new(Demo::default()).register(&tools);
    assert_eq!(tools.len(), first);
    assert_eq!(first, Demo::TOOLS.len());
}
