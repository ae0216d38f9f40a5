//! Drives the built `calculator` binary over pipes, in both protocol eras, and validates every
//! message it sends against the official JSON Schema of the revision in use.

#[path = "../../mcp-core/tests/harness/mod.rs"]
mod harness;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(10);
const LEGACY: &str = "2025-06-18";
const MODERN: &str = "2026-07-28";

/// A running `calculator` process.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Revision used for schema validation and `_meta` (modern era).
    rev: &'static str,
    next_id: u64,
}

impl Server {
    fn spawn(rev: &'static str, args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_calculator"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn calculator");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            lines,
            stderr,
            rev,
            next_id: 1,
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(text.as_bytes()).expect("write to server");
        stdin.flush().expect("flush");
    }

    fn send(&mut self, msg: &Value) {
        self.send_raw(&format!("{msg}\n"));
    }

    /// The next line from the server (within the timeout), parsed.
    fn recv(&self) -> Value {
        match self.lines.recv_timeout(TIMEOUT) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("server sent invalid JSON ({e}): {line}")),
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "no reply within {TIMEOUT:?}; server stderr:\n{}",
                    self.stderr()
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("server closed stdout; stderr:\n{}", self.stderr())
            }
        }
    }

    /// Receives the reply to a `method` request and validates it against the schema.
    fn recv_reply(&self, method: &str) -> Value {
        let reply = self.recv();
        if let Err(e) = harness::validate_server_message(self.rev, Some(method), &reply) {
            panic!(
                "reply to {method} does not match the {} schema:\n{e}",
                self.rev
            );
        }
        reply
    }

    /// Sends a request and returns the validated reply, checking that its id matches.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let params = if self.rev == MODERN {
            with_modern_meta(params)
        } else {
            params
        };
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = self.recv_reply(method);
        assert_eq!(reply["id"], json!(id), "reply id for {method}: {reply}");
        reply
    }

    /// A request that must succeed: its `result`.
    fn result(&mut self, method: &str, params: Value) -> Value {
        let reply = self.request(method, params);
        assert!(reply.get("error").is_none(), "{method} failed: {reply}");
        let result = reply["result"].clone();
        if self.rev == MODERN {
            assert_eq!(result["resultType"], "complete", "{method}: {result}");
        }
        result
    }

    /// A request that must fail: its `error`.
    fn error(&mut self, method: &str, params: Value) -> Value {
        let reply = self.request(method, params);
        assert!(
            reply.get("result").is_none(),
            "{method} should fail: {reply}"
        );
        reply["error"].clone()
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    fn notify(&mut self, method: &str) {
        self.send(&json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Closes stdin and asserts that the server sends nothing more and exits with status 0.
    fn close(mut self) {
        drop(self.stdin.take());
        match self.lines.recv_timeout(TIMEOUT) {
            Err(RecvTimeoutError::Disconnected) => {}
            Ok(line) => panic!("unexpected output after closing stdin: {line}"),
            Err(RecvTimeoutError::Timeout) => {
                panic!("stdout still open {TIMEOUT:?} after closing stdin")
            }
        }
        let status = self.wait_exit();
        assert_eq!(
            status.code(),
            Some(0),
            "exit status; stderr:\n{}",
            self.stderr()
        );
    }

    fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "server did not exit within {TIMEOUT:?}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Only matters when a test failed midway: do not leave the process behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn init_params() -> Value {
    json!({
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "pipes-test", "version": "1.0"},
    })
}

fn with_modern_meta(params: Value) -> Value {
    let mut params = if params.is_null() { json!({}) } else { params };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    params
}

/// Checks `instance` against a JSON Schema taken from a tool definition.
fn assert_schema(schema: &Value, instance: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema)
        .unwrap_or_else(|e| panic!("{what}: bad schema ({e}): {schema}"));
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: {instance} does not match {schema}: {errors:?}"
    );
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"))
        .to_owned()
}

fn assert_tool_error(result: &Value, needle: &str) {
    assert_eq!(result["isError"], true, "expected isError: {result}");
    let text = text_of(result);
    assert!(
        text.contains(needle),
        "error text {text:?} should contain {needle:?}"
    );
}

/// All pages of `tools/list`: checks page shape, cursor uniqueness and the final page.
fn list_all(server: &mut Server, page_size: usize) -> Vec<Value> {
    let mut tools = Vec::new();
    let mut cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let result = server.result("tools/list", params);
        if server.rev == MODERN {
            assert!(result["ttlMs"].is_u64(), "ttlMs: {result}");
            assert!(
                matches!(result["cacheScope"].as_str(), Some("public" | "private")),
                "cacheScope: {result}"
            );
        }
        let page = result["tools"].as_array().expect("tools array");
        assert!(
            !page.is_empty() && page.len() <= page_size,
            "page of {} tools",
            page.len()
        );
        tools.extend(page.iter().cloned());
        match result.get("nextCursor") {
            None => break,
            Some(next) => {
                let next = next.as_str().expect("nextCursor is a string").to_owned();
                assert!(cursors.insert(next.clone()), "cursor {next} repeated");
                cursor = Some(next);
            }
        }
        assert!(cursors.len() < 1000, "pagination does not terminate");
    }
    tools
}

/// Calls every seed tool with valid and invalid arguments; `tools` is the `tools/list` output
/// (output schemas are checked against each structured result).
fn exercise_seed_tools(server: &mut Server, tools: &[Value]) {
    let def = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed"))
            .clone()
    };
    let check = |name: &str, args: &Value, result: &Value| {
        let d = def(name);
        assert_schema(&d["inputSchema"], args, &format!("{name} arguments"));
        assert_ne!(result["isError"], true, "{name} failed: {result}");
        assert_schema(
            &d["outputSchema"],
            &result["structuredContent"],
            &format!("{name} output"),
        );
    };

    let args = json!({"number1": 2.5, "number2": 4});
    let r = server.call("add_numbers", args.clone());
    check("add_numbers", &args, &r);
    assert_eq!(r["structuredContent"]["sum"].as_f64(), Some(6.5), "{r}");
    assert!(text_of(&r).contains("6.5"), "{r}");

    for (op, a, b, expected) in [
        ("add", 7, 5, 12.0),
        ("subtract", 7, 5, 2.0),
        ("multiply", 7, 5, 35.0),
        ("divide", 7, 2, 3.5),
    ] {
        let args = json!({"operation": op, "a": a, "b": b});
        let r = server.call("calculate", args.clone());
        check("calculate", &args, &r);
        assert_eq!(
            r["structuredContent"]["result"].as_f64(),
            Some(expected),
            "{op}: {r}"
        );
    }
    let r = server.call("calculate", json!({"operation": "divide", "a": 1, "b": 0}));
    assert_tool_error(&r, "Division by zero");
    assert!(r.get("structuredContent").is_none(), "{r}");
    let r = server.call("calculate", json!({"operation": "modulo", "a": 1, "b": 2}));
    assert_tool_error(&r, "Invalid arguments for tool calculate");

    for (notation, count, sides, modifier) in [
        ("2d6+3", 2, 6, 3),
        ("d20", 1, 20, 0),
        ("4d8-1", 4, 8, -1),
        ("100d1000", 100, 1000, 0),
    ] {
        let args = json!({"notation": notation});
        let r = server.call("roll_dice", args.clone());
        check("roll_dice", &args, &r);
        let s = &r["structuredContent"];
        let rolls: Vec<i64> = s["rolls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(rolls.len(), count, "{notation}: {r}");
        assert!(
            rolls.iter().all(|&x| (1..=sides).contains(&x)),
            "{notation}: {r}"
        );
        assert_eq!(s["modifier"], modifier, "{notation}: {r}");
        assert_eq!(
            s["total"].as_i64(),
            Some(rolls.iter().sum::<i64>() + modifier),
            "{notation}: {r}"
        );
    }
    // Syntax is the schema's `pattern`, checked before the tool runs; ranges are the tool's.
    let r = server.call("roll_dice", json!({"notation": "2x6"}));
    assert_tool_error(
        &r,
        "Invalid arguments for tool roll_dice: argument `notation`: must match the pattern",
    );
    for (bad, needle) in [
        ("0d6", "between 1 and 100 dice"),
        ("101d6", "between 1 and 100 dice"),
        ("2d1", "2 to 1000 sides"),
        ("2d1001", "2 to 1000 sides"),
        ("2d6+1001", "between -1000 and +1000"),
    ] {
        let r = server.call("roll_dice", json!({"notation": bad}));
        assert_tool_error(&r, needle);
        assert!(text_of(&r).contains(bad), "{r}");
    }
    let r = server.call("roll_dice", json!({}));
    assert_tool_error(
        &r,
        "Invalid arguments for tool roll_dice: argument `notation`: is required",
    );

    let categories = ["love", "career", "health", "wealth", "general"];
    for (i, category) in categories.iter().enumerate() {
        let mood = ["optimistic", "mysterious", "cautious"][i % 3];
        let args = json!({"category": category, "mood": mood});
        let r = server.call("tell_fortune", args.clone());
        check("tell_fortune", &args, &r);
        let s = &r["structuredContent"];
        assert_eq!(
            (s["category"].as_str(), s["mood"].as_str()),
            (Some(*category), Some(mood)),
            "{r}"
        );
        assert!(s["fortune"].as_str().is_some_and(|f| f.len() > 10), "{r}");
    }
    let args = json!({"category": "general"});
    let r = server.call("tell_fortune", args.clone());
    check("tell_fortune", &args, &r);
    assert_eq!(
        r["structuredContent"]["mood"], "mysterious",
        "default mood: {r}"
    );
    let r = server.call("tell_fortune", json!({"category": "general", "extra": 1}));
    assert_tool_error(&r, "unknown member \"extra\"");

    let e = server.error(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("no_such_tool"),
        "{e}"
    );
}

#[test]
fn legacy_exchange() {
    legacy_exchange_with(&[]);
}

/// The same exchange served by `Server::serve_stdio_blocking` (no async runtime): the
/// synchronous tools only.
#[test]
fn legacy_exchange_blocking() {
    legacy_exchange_with(&["--blocking"]);
}

fn legacy_exchange_with(args: &[&str]) {
    let blocking = args.contains(&"--blocking");
    let mut server = Server::spawn(LEGACY, args);
    let init = server.result("initialize", init_params());
    assert_eq!(init["protocolVersion"], LEGACY);
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    assert_eq!(init["serverInfo"]["name"], "mcp-rs-calculator");
    server.notify("notifications/initialized");

    let tools = list_all(&mut server, 50);
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut expected = vec![
        "add_numbers",
        "calculate",
        "roll_dice",
        "tell_fortune",
        "slow_count",
    ];
    if blocking {
        expected.pop(); // async: not offered without a runtime
    }
    assert_eq!(names, expected);
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        assert!(
            tool["title"].is_string() && tool["description"].is_string(),
            "{tool}"
        );
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{tool}");
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        let a = &tool["annotations"];
        let random = matches!(name, "roll_dice" | "tell_fortune");
        assert_eq!(
            (
                &a["readOnlyHint"],
                &a["destructiveHint"],
                &a["idempotentHint"],
                &a["openWorldHint"]
            ),
            (&json!(true), &json!(false), &json!(!random), &json!(false)),
            "{name} annotations"
        );
    }

    exercise_seed_tools(&mut server, &tools);
    assert_eq!(server.result("ping", json!({})), json!({}));

    // A line over the 64 KiB limit gets -32600 (no id), and the session carries on.
    server.send_raw(&format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"pad\":\"{}\"}}\n",
        "x".repeat(70_000)
    ));
    // The id cannot be known, so the error has none. Schemas up to 2025-06-18 require an id
    // on every error (JSON-RPC's `"id": null` is not a valid RequestId either), so no reply
    // could pass them; 2025-11-25 made the id optional: validate against that revision.
    let r = server.recv();
    harness::validate_server_message("2025-11-25", None, &r).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.get("id").is_none(), "{r}");
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert_eq!(r["error"]["data"]["limit"], 65536, "{r}");
    assert_eq!(server.result("ping", json!({})), json!({}));

    // A last line without a newline is answered at end of input.
    server.send_raw(r#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#);
    drop(server.stdin.take());
    let r = server.recv_reply("ping");
    assert_eq!(r, json!({"jsonrpc": "2.0", "id": "last", "result": {}}));
    server.close();
}

#[test]
fn modern_exchange() {
    let mut server = Server::spawn(MODERN, &[]);
    let d = server.result("server/discover", json!({}));
    assert!(
        d["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!(MODERN)),
        "{d}"
    );
    assert!(d["capabilities"]["tools"].is_object(), "{d}");
    assert!(d["ttlMs"].is_u64() && d["cacheScope"].is_string(), "{d}");
    assert_eq!(
        d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-rs-calculator",
        "{d}"
    );

    let tools = list_all(&mut server, 50);
    assert_eq!(tools.len(), 5);
    exercise_seed_tools(&mut server, &tools);

    // Legacy-only methods do not exist in 2026-07-28.
    let e = server.error("ping", json!({}));
    assert_eq!(e["code"], -32601, "{e}");
    server.close();
}

#[test]
fn pagination_walk() {
    for (rev, args, page_size) in [
        (LEGACY, &["--extra-tools", "120"][..], 50),
        (MODERN, &["--extra-tools", "120", "--page-size", "7"][..], 7),
    ] {
        let mut server = Server::spawn(rev, args);
        if rev == LEGACY {
            server.result("initialize", init_params());
            server.notify("notifications/initialized");
        }
        let tools = list_all(&mut server, page_size);
        let names: Vec<String> = tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(names.len(), 125, "{rev}: {names:?}");
        assert_eq!(unique.len(), 125, "{rev}: duplicates in {names:?}");
        let mut expected = vec![
            "add_numbers".to_owned(),
            "calculate".into(),
            "roll_dice".into(),
            "tell_fortune".into(),
            "slow_count".into(),
        ];
        expected.extend((1..=120).map(|i| format!("extra_tool_{i:03}")));
        assert_eq!(names, expected, "{rev}");

        // A generated tool echoes its argument (an escaped string, decoded).
        let r = server.call("extra_tool_120", json!({"value": "hello \"pages\" \u{e9}"}));
        assert_eq!(text_of(&r), "hello \"pages\" \u{e9}", "{r}");
        let r = server.call("extra_tool_001", json!({}));
        assert_tool_error(&r, "Invalid arguments for tool extra_tool_001");

        // A tampered cursor is rejected.
        let first = server.result("tools/list", json!({}));
        let cursor = first["nextCursor"].as_str().unwrap().to_owned();
        let cursor_len = cursor.len();
        let mut bytes = cursor.into_bytes();
        // A middle character: the last one of unpadded base64 also carries padding bits.
        let mid = &mut bytes[cursor_len / 2];
        *mid = if *mid == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).unwrap();
        let e = server.error("tools/list", json!({"cursor": tampered}));
        assert_eq!(e["code"], -32602, "{rev}: {e}");
        let e = server.error("tools/list", json!({"cursor": "not a cursor"}));
        assert_eq!(e["code"], -32602, "{rev}: {e}");
        server.close();
    }
}
