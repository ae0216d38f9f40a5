//! Hostile input against the real servers: the `calculator` binary over pipes and the `tcp`
//! binary over sockets are fed malformed, truncated, oversized, deeply nested, badly encoded,
//! duplicated and out-of-order messages, and floods of calls.
//!
//! For every hostile input the test checks the spec-correct reply (or the documented silence
//! for notifications), that the very next valid request is served, and, for the floods and
//! oversized lines, that the server's memory stays bounded (`VmHWM`/`VmRSS` from
//! `/proc/<pid>/status`). Every JSON line the servers send is validated against the official
//! schema of its revision (id-less errors exist only from 2025-11-25 on, so they are validated
//! against 2025-11-25). Every read has a generous timeout, so a wedged server fails the test
//! instead of hanging it.
//!
//! `cargo test -p mcp-examples --test hostile -- --nocapture` prints the memory figures.

mod common;
#[path = "../../mcp-core/tests/harness/mod.rs"]
mod harness;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::Mem;
use serde_json::{json, Value};

/// Longest wait for any single line from a server.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The revision negotiated by `initialize` in these tests.
const LEGACY: &str = "2025-06-18";
/// Before `initialize` the server answers as its latest legacy revision.
const PRE_INIT: &str = "2025-11-25";
/// Error replies without an id are valid only from 2025-11-25 on.
const IDLESS: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
/// The calculator's frame limit (`Limits::max_frame` = `LINE_LIMIT`).
const FRAME_LIMIT: usize = 65536;
/// Calls in flight per connection (`Limits::max_calls`, the mcp-tokio default).
const MAX_CALLS: usize = 256;
/// Bound on the server's peak RSS after the 100 MB line.
const PEAK_RSS_LIMIT_MIB: u64 = 100;

const MODERN_META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{}}"#
);

// ---- processes ----------------------------------------------------------------------------

/// A spawned server process, killed on drop; its stderr is collected for failure messages.
struct Proc {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Proc {
    /// Spawns `bin` with stderr collected on a thread; the caller takes the other pipes.
    fn spawn(bin: &str, args: &[&str], stdin: Stdio, stdout: Stdio) -> Proc {
        let mut child = Command::new(bin)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {bin}: {e}"));
        let stderr = common::collect_stderr(&mut child);
        Proc { child, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn memory(&self) -> Mem {
        common::memory(self.child.id())
    }

    fn assert_alive(&mut self) {
        if let Some(status) = self.child.try_wait().expect("try_wait") {
            panic!("the server exited: {status}; stderr:\n{}", self.stderr());
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `calculator` binary over pipes, and a connection on its stdin/stdout.
fn calculator(args: &[&str]) -> (Proc, Conn) {
    let mut proc = Proc::spawn(
        env!("CARGO_BIN_EXE_calculator"),
        args,
        Stdio::piped(),
        Stdio::piped(),
    );
    let stdin = proc.child.stdin.take().expect("stdin");
    let stdout = proc.child.stdout.take().expect("stdout");
    let conn = Conn::new(Box::new(stdin), stdout, "calculator", &proc.stderr);
    (proc, conn)
}

/// The `tcp` binary on a free port, and its address (printed as `listening on <addr>`).
fn tcp_server() -> (Proc, SocketAddr) {
    let proc = Proc::spawn(
        env!("CARGO_BIN_EXE_tcp"),
        &["--listen", "127.0.0.1:0"],
        Stdio::null(),
        Stdio::null(),
    );
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let found = proc.stderr().lines().find_map(|l| {
            l.trim()
                .strip_prefix("listening on ")
                .and_then(|a| a.parse::<SocketAddr>().ok())
        });
        if let Some(addr) = found {
            return (proc, addr);
        }
        assert!(
            Instant::now() < deadline,
            "the tcp server did not print its address; stderr:\n{}",
            proc.stderr()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

fn tcp_connect(addr: SocketAddr, proc: &Proc, label: &str) -> Conn {
    let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    socket_conn(stream, label, &proc.stderr)
}

fn socket_conn(stream: TcpStream, label: &str, stderr: &Arc<Mutex<String>>) -> Conn {
    stream.set_nodelay(true).expect("nodelay");
    let reader = stream.try_clone().expect("clone stream");
    let shutdown = stream.try_clone().expect("clone stream");
    let mut conn = Conn::new(Box::new(stream), reader, label, stderr);
    conn.socket = Some(shutdown);
    conn
}

// ---- a line-oriented connection -----------------------------------------------------------

/// One client connection: raw bytes out, lines in (read by a thread, received with a
/// timeout). `rev` is the revision the legacy-era replies are validated against.
struct Conn {
    writer: Box<dyn Write + Send>,
    lines: Receiver<Vec<u8>>,
    label: String,
    stderr: Arc<Mutex<String>>,
    rev: &'static str,
    pings: u64,
    /// For sockets: shut down on drop (the reader thread holds a clone of the stream).
    socket: Option<TcpStream>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(s) = &self.socket {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Conn {
    fn new(
        writer: Box<dyn Write + Send>,
        reader: impl Read + Send + 'static,
        label: &str,
        stderr: &Arc<Mutex<String>>,
    ) -> Conn {
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::with_capacity(1 << 16, reader);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Conn {
            writer,
            lines,
            label: label.to_owned(),
            stderr: Arc::clone(stderr),
            rev: PRE_INIT,
            pings: 0,
            socket: None,
        }
    }

    fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Writes raw bytes (no newline added).
    fn send(&mut self, bytes: &[u8]) {
        let label = &self.label;
        self.writer
            .write_all(bytes)
            .unwrap_or_else(|e| panic!("{label}: write: {e}"));
        self.writer
            .flush()
            .unwrap_or_else(|e| panic!("{label}: flush: {e}"));
    }

    /// Writes `bytes` plus a newline.
    fn line(&mut self, bytes: &[u8]) {
        let mut framed = Vec::with_capacity(bytes.len() + 1);
        framed.extend_from_slice(bytes);
        framed.push(b'\n');
        self.send(&framed);
    }

    /// The next raw line from the server, within [`TIMEOUT`].
    fn next_raw(&self) -> Vec<u8> {
        match self.lines.recv_timeout(TIMEOUT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!(
                "{}: no line within {TIMEOUT:?}; server stderr:\n{}",
                self.label,
                self.stderr()
            ),
            Err(RecvTimeoutError::Disconnected) => panic!(
                "{}: the server closed its output; stderr:\n{}",
                self.label,
                self.stderr()
            ),
        }
    }

    /// The next line, parsed and validated: replies with an id against `rev` (and the
    /// result type of `method`), id-less errors against 2025-11-25.
    fn next_as(&self, rev: &str, method: Option<&str>) -> Value {
        let raw = self.next_raw();
        let text = String::from_utf8(raw)
            .unwrap_or_else(|e| panic!("{}: the server sent invalid UTF-8: {e}", self.label));
        let msg: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!("{}: the server sent invalid JSON ({e}): {text}", self.label)
        });
        validate(rev, method, &msg);
        msg
    }

    fn next(&self, method: Option<&str>) -> Value {
        self.next_as(self.rev, method)
    }

    /// The next line must be an error with `code` and exactly `id` (`None`: no id member).
    /// Returns the error object.
    fn expect_error(&self, code: i64, id: Option<&Value>) -> Value {
        let msg = self.next(None);
        check_error(&msg, code, id, &self.label)
    }

    /// Sends a `ping` and asserts that the very next line is its reply: proves that the
    /// server still serves requests, and that nothing was sent in between.
    fn assert_served(&mut self) {
        self.pings += 1;
        let id = format!("served-{}", self.pings);
        self.line(format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping"}}"#).as_bytes());
        let reply = self.next(Some("ping"));
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "{}: the next line after the hostile input should be the ping's reply",
            self.label
        );
    }

    /// Sends one hostile line; expects one error reply (`code`, `id`), then a served ping.
    fn hostile(&mut self, line: &[u8], code: i64, id: Option<&Value>) -> Value {
        self.line(line);
        let error = self.expect_error(code, id);
        self.assert_served();
        error
    }

    /// Sends one line that must get no reply at all: the next line is the ping's reply.
    fn silent(&mut self, line: &[u8]) {
        self.line(line);
        self.assert_served();
    }

    /// A request with a JSON id; returns the validated reply (id checked).
    fn request(&mut self, id: Value, method: &str, params: Option<Value>) -> Value {
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.line(msg.to_string().as_bytes());
        let reply = self.next(Some(method));
        assert_eq!(reply["id"], id, "{}: reply id: {reply}", self.label);
        reply
    }

    /// `initialize` (2025-06-18) + `notifications/initialized`.
    fn initialize(&mut self) {
        let reply = self.request(
            json!("init"),
            "initialize",
            Some(json!({
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "hostile-test", "version": "1.0"},
            })),
        );
        assert_eq!(reply["result"]["protocolVersion"], LEGACY, "{reply}");
        self.rev = LEGACY;
        self.line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// Asserts that nothing arrives within `wait`.
    fn assert_quiet(&self, wait: Duration) {
        if let Ok(line) = self.lines.recv_timeout(wait) {
            panic!(
                "{}: unexpected line: {}",
                self.label,
                String::from_utf8_lossy(&line)
            );
        }
    }
}

/// Validates one server message: id-less errors against 2025-11-25, the rest against `rev`.
fn validate(rev: &str, method: Option<&str>, msg: &Value) {
    let idless_error = msg.get("error").is_some() && msg.get("id").is_none();
    let rev = if idless_error { IDLESS } else { rev };
    if let Err(e) = harness::validate_server_message(rev, method, msg) {
        panic!("server message does not match the {rev} schema:\n{e}");
    }
}

/// Checks an error reply: `code`, and exactly `id` (`None`: no id member). Returns the error
/// object.
fn check_error(msg: &Value, code: i64, id: Option<&Value>, label: &str) -> Value {
    assert!(
        msg.get("result").is_none(),
        "{label}: expected error {code}, got {msg}"
    );
    assert_eq!(msg["error"]["code"], code, "{label}: {msg}");
    assert!(
        msg["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{label}: {msg}"
    );
    match id {
        Some(id) => assert_eq!(msg.get("id"), Some(id), "{label}: id of {msg}"),
        None => assert!(msg.get("id").is_none(), "{label}: no id expected: {msg}"),
    }
    msg["error"].clone()
}

/// A `-32700` must say why (`data.reason`, also appended to the message).
fn assert_parse_error(error: &Value, what: &str) {
    let reason = error["data"]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: -32700 without data.reason: {error}"));
    assert!(!reason.is_empty(), "{what}: {error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Parse error")),
        "{what}: {error}"
    );
}

fn show(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    if s.chars().count() > 120 {
        format!(
            "{}... ({} bytes)",
            s.chars().take(120).collect::<String>(),
            bytes.len()
        )
    } else {
        s.into_owned()
    }
}

// ---- inputs -------------------------------------------------------------------------------

/// Lines that are not JSON text at all (each must get one id-less -32700).
const MALFORMED: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"not json",
    b"{'jsonrpc':'2.0','id':1,'method':'ping'}",
    br#"{"jsonrpc":"2.0","id":1,"method":"ping"} trailing"#,
    br#"{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
    br#"{"jsonrpc":"2.0","id":1,,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":1 "method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":NaN,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":Infinity,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":+1,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":1.,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":.5,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":1e,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":0x10,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":"a\x","method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":"\u12G4","method":"ping"}"#,
    b"{\"jsonrpc\":\"2.0\",\"id\":\"tab\there\",\"method\":\"ping\"}",
    b"{\"jsonrpc\":\"2.0\",\"id\":\"nul\x00\",\"method\":\"ping\"}",
    br#"{"jsonrpc":"2.0","id":"unterminated,"method":"ping"}"#,
    br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":tru}}"#,
    br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":nul}}"#,
    br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a" 1}}"#,
    br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{1:2}}"#,
    br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1,2,]}"#,
    br#"{"jsonrpc":"2.0","id":1,"method":"ping" /* comment */}"#,
    b"\x00",
    b"\x1b[31m",
    b"-",
    b"\"",
];

/// A request cut at every byte gives every kind of truncation (inside keys, strings, numbers,
/// escapes, multi-byte characters and nested objects).
const TRUNCATE_ME: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"cut-\u00e9","method":"tools/call","params":{"name":"echo","#,
    r#""arguments":{"text":"caf\u00e9 € 😀","n":-12.5e+3,"ok":true,"none":null,"list":[1,[2,{}]]}}}"#
);

fn ping_with_params(id: &str, params: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping","params":{params}}}"#).into_bytes()
}

// ---- pipes: malformed and truncated -------------------------------------------------------

#[test]
fn malformed_json_is_a_parse_error_without_id() {
    let (_proc, mut conn) = calculator(&[]);
    for (i, line) in MALFORMED.iter().enumerate() {
        let error = conn.hostile(line, -32700, None);
        assert_parse_error(&error, &format!("malformed #{i} {}", show(line)));
    }
    // The same after initialize: parse errors do not disturb the session.
    conn.initialize();
    for line in MALFORMED {
        let error = conn.hostile(line, -32700, None);
        assert_parse_error(&error, &show(line));
    }
    let r = conn.request(json!(1), "tools/list", None);
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(5),
        "{r}"
    );
}

#[test]
fn truncated_frames_are_parse_errors() {
    let (_proc, mut conn) = calculator(&[]);
    conn.initialize();
    let full = TRUNCATE_ME.as_bytes();
    for cut in 1..full.len() {
        let error = conn.hostile(&full[..cut], -32700, None);
        assert_parse_error(&error, &format!("cut at {cut}: {}", show(&full[..cut])));
    }
    // A line cut mid-object, the rest on the next line: two parse errors, then service.
    conn.send(b"{\"jsonrpc\":\"2.0\",\n\"id\":1,\"method\":\"ping\"}\n");
    conn.expect_error(-32700, None);
    conn.expect_error(-32700, None);
    conn.assert_served();
    // The truncated line and the next valid request in one write.
    conn.send(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"pi\n{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}\n");
    conn.expect_error(-32700, None);
    assert_eq!(
        conn.next(Some("ping")),
        json!({"jsonrpc": "2.0", "id": 6, "result": {}})
    );
    // CRLF framing is tolerated, and a CR inside a line is JSON whitespace (RFC 8259).
    conn.send(b"{\"jsonrpc\":\"2.0\",\"id\":7,\r\"method\":\"ping\"}\r\n");
    assert_eq!(
        conn.next(Some("ping")),
        json!({"jsonrpc": "2.0", "id": 7, "result": {}})
    );
    conn.assert_served();
}

// ---- pipes: a 100 MB line -----------------------------------------------------------------

/// Streams a `total`-byte line without a newline in 1 MB chunks (it starts like a request),
/// then the newline and a valid ping: exactly one -32600 with `data.limit`, then the ping's
/// reply. `during` runs once, half-way through the stream.
fn stream_huge_line(conn: &mut Conn, total: usize, mut during: impl FnMut()) -> Duration {
    let head = br#"{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"pad":""#;
    let chunk = vec![b'x'; 1 << 20];
    let start = Instant::now();
    conn.send(head);
    let mut sent = head.len();
    let mut halfway = false;
    while sent < total {
        let n = chunk.len().min(total - sent);
        conn.send(&chunk[..n]);
        sent += n;
        if !halfway && sent >= total / 2 {
            halfway = true;
            during();
        }
    }
    conn.send(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":\"after-huge\",\"method\":\"ping\"}\n");
    let error = conn.expect_error(-32600, None);
    assert_eq!(error["data"]["limit"], FRAME_LIMIT, "{error}");
    assert_eq!(error["data"]["limit"], mcp_examples::LINE_LIMIT, "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("maximum frame length")),
        "{error}"
    );
    // Exactly one error: the very next line is the ping's reply.
    assert_eq!(
        conn.next(Some("ping")),
        json!({"jsonrpc": "2.0", "id": "after-huge", "result": {}}),
        "{}: after the oversized line",
        conn.label
    );
    start.elapsed()
}

#[test]
fn hundred_megabyte_line_without_newline() {
    let (mut proc, mut conn) = calculator(&[]);
    conn.initialize();
    conn.assert_served();
    let before = proc.memory();
    let elapsed = stream_huge_line(&mut conn, 100 << 20, || {});
    conn.assert_served();
    let r = conn.request(
        json!(2),
        "tools/call",
        Some(json!({"name": "add_numbers", "arguments": {"number1": 40, "number2": 2}})),
    );
    assert_eq!(r["result"]["structuredContent"]["sum"], 42.0, "{r}");
    proc.assert_alive();
    let after = proc.memory();
    println!("calculator, 100 MB line in {elapsed:?}: before {before}; after {after}");
    assert!(
        after.hwm_kib < PEAK_RSS_LIMIT_MIB * 1024,
        "the 100 MB line was buffered: {after}"
    );
}

// ---- pipes: nesting, encodings, numbers ---------------------------------------------------

#[test]
fn deep_nesting_is_a_parse_error() {
    let (_proc, mut conn) = calculator(&[]);
    conn.initialize();
    let deep = 10_000;
    let arrays_open = "[".repeat(deep);
    let arrays = format!("{}{}", "[".repeat(deep), "]".repeat(deep));
    let objects_open = "{\"a\":".repeat(deep);
    let objects = format!("{}1{}", "{\"a\":".repeat(deep), "}".repeat(deep));
    let cases: Vec<Vec<u8>> = vec![
        arrays_open.clone().into_bytes(),
        arrays.clone().into_bytes(),
        objects_open.into_bytes(),
        objects.clone().into_bytes(),
        ping_with_params("deep", &format!("{{\"x\":{arrays}}}")),
        ping_with_params("deep", &objects),
        format!(
            r#"{{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{{"name":"add_numbers","arguments":{{"number1":{arrays},"number2":1}}}}}}"#
        )
        .into_bytes(),
        // Mixed and unbalanced.
        "[{\"a\":".repeat(deep / 2).into_bytes(),
        format!("{arrays_open}{}", "}".repeat(deep)).into_bytes(),
    ];
    for line in &cases {
        let error = conn.hostile(line, -32700, None);
        assert_parse_error(&error, &show(line));
        let reason = error["data"]["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("nesting") || reason.contains("unexpected"),
            "{}: {error}",
            show(line)
        );
    }
    // The documented bound (32 levels, the envelope included) is exact.
    let nested = |depth: usize| {
        let arrays = depth - 2; // the envelope and `params` are the first two levels
        format!(r#"{{"x":{}0{}}}"#, "[".repeat(arrays), "]".repeat(arrays))
    };
    conn.line(&ping_with_params("d32", &nested(32)));
    assert_eq!(
        conn.next(Some("ping")),
        json!({"jsonrpc": "2.0", "id": "d32", "result": {}})
    );
    let error = conn.hostile(&ping_with_params("d33", &nested(33)), -32700, None);
    assert!(
        error["data"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("nesting deeper than the limit of 32")),
        "{error}"
    );
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let (_proc, mut conn) = calculator(&[]);
    conn.initialize();
    let bad: &[&[u8]] = &[
        b"\xff",
        b"\xfe",
        b"\x80",
        b"\xbf",
        b"\xf8\x88\x80\x80\x80",
        b"\xfc\x84\x80\x80\x80\x80",
        b"\xe2\x82",     // truncated 3-byte sequence
        b"\xf0\x9f\x98", // truncated 4-byte sequence
        b"\xc3",         // truncated 2-byte sequence
        b"\xc3\x28",     // bad continuation
        b"\xe2\x28\xa1",
        b"\xf0\x28\x8c\x28",
    ];
    for seq in bad {
        let wrap = |before: &[u8], after: &[u8]| {
            let mut v = before.to_vec();
            v.extend_from_slice(seq);
            v.extend_from_slice(after);
            v
        };
        let lines = [
            wrap(br#"{"jsonrpc":"2.0","id":"x"#, br#"","method":"ping"}"#),
            wrap(
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{""#,
                br#"":1}}"#,
            ),
            wrap(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, b""),
            wrap(
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"#,
                b"}}",
            ),
            wrap(b"", br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        ];
        for line in &lines {
            let error = conn.hostile(line, -32700, None);
            assert_parse_error(&error, &show(line));
        }
    }
}

#[test]
fn overlong_utf8_and_lone_surrogates_are_parse_errors() {
    let (_proc, mut conn) = calculator(&[]);
    conn.initialize();
    let bytes: &[&[u8]] = &[
        b"\xc0\xaf",                 // overlong '/'
        b"\xc0\x80",                 // overlong NUL
        b"\xc1\xbf",                 // overlong U+007F
        b"\xe0\x80\xaf",             // overlong '/', 3 bytes
        b"\xe0\x9f\xbf",             // overlong U+07FF
        b"\xf0\x80\x80\xaf",         // overlong '/', 4 bytes
        b"\xf0\x8f\xbf\xbf",         // overlong U+FFFF
        b"\xed\xa0\x80",             // U+D800 encoded (CESU)
        b"\xed\xbf\xbf",             // U+DFFF encoded
        b"\xed\xa0\xbd\xed\xb8\x80", // a surrogate pair encoded as two 3-byte sequences
        b"\xf4\x90\x80\x80",         // above U+10FFFF
        b"\xf5\x80\x80\x80",
    ];
    for seq in bytes {
        let mut line = br#"{"jsonrpc":"2.0","id":"x"#.to_vec();
        line.extend_from_slice(seq);
        line.extend_from_slice(br#"","method":"ping"}"#);
        let error = conn.hostile(&line, -32700, None);
        assert_parse_error(&error, &show(&line));
        let mut line =
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"#.to_vec();
        line.extend_from_slice(seq);
        line.extend_from_slice(br#"","arguments":{}}}"#);
        conn.hostile(&line, -32700, None);
    }
    let escapes = [
        r"\ud800",
        r"\udbff",
        r"\udc00",
        r"\udfff",
        r"\uDC00\uD800",
        r"\ud800\u0041",
        r"\ud800x",
        r"\ud800\n",
        r"\ud800\ud800",
        r"\ud83d",
        r"a\ude00",
    ];
    for esc in escapes {
        for line in [
            format!(r#"{{"jsonrpc":"2.0","id":"{esc}","method":"ping"}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"{esc}":1}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":["{esc}"]}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{esc}"}}"#),
        ] {
            let error = conn.hostile(line.as_bytes(), -32700, None);
            assert_parse_error(&error, &line);
            assert!(
                error["data"]["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("surrogate")),
                "{line}: {error}"
            );
        }
    }
    // Well-formed neighbours are accepted: a proper surrogate pair, U+FFFF (a noncharacter,
    // still a valid scalar value), U+10FFFF, and the raw 4-byte emoji.
    conn.line(br#"{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}"#);
    assert_eq!(
        conn.next(Some("ping")),
        json!({"jsonrpc": "2.0", "id": "\u{1f600}", "result": {}})
    );
    conn.line(
        "{\"jsonrpc\":\"2.0\",\"id\":\"\u{ffff}\u{10ffff}\u{1f600}\",\"method\":\"ping\"}"
            .as_bytes(),
    );
    assert_eq!(
        conn.next(Some("ping")),
        json!({"jsonrpc": "2.0", "id": "\u{ffff}\u{10ffff}\u{1f600}", "result": {}})
    );
    conn.assert_served();
}

/// Replaces the leading integer id of a raw reply (`{"jsonrpc":"2.0","id":<digits>,...`)
/// with `1` so that serde_json (no arbitrary precision) can parse it; asserts the echoed id
/// is exactly `id`.
fn strip_huge_id(raw: &[u8], id: &str) -> Value {
    let text = String::from_utf8(raw.to_vec()).expect("UTF-8 reply");
    let prefix = format!(r#"{{"jsonrpc":"2.0","id":{id},"#);
    let rest = text
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("the id is not echoed verbatim: {}", show(raw)));
    serde_json::from_str(&format!(r#"{{"jsonrpc":"2.0","id":1,{rest}"#))
        .unwrap_or_else(|e| panic!("reply is not JSON ({e}): {}", show(raw)))
}

#[test]
fn ten_thousand_digit_numbers() {
    let (_proc, mut conn) = calculator(&[]);
    let digits = "7".repeat(10_000);
    for id in [digits.clone(), format!("-{digits}")] {
        // Before initialize, as a ping id: an integer, echoed verbatim.
        conn.line(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes());
        let reply = strip_huge_id(&conn.next_raw(), &id);
        validate(PRE_INIT, Some("ping"), &reply);
        assert_eq!(reply["result"], json!({}), "{reply}");
        // As the id of an error reply.
        conn.line(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"no/such"}}"#).as_bytes());
        let reply = strip_huge_id(&conn.next_raw(), &id);
        validate(PRE_INIT, None, &reply);
        assert_eq!(reply["error"]["code"], -32601, "{reply}");
    }
    conn.initialize();
    // A synchronous tool call echoes it too.
    conn.line(
        format!(
            r#"{{"jsonrpc":"2.0","id":{digits},"method":"tools/call","params":{{"name":"add_numbers","arguments":{{"number1":1,"number2":2}}}}}}"#
        )
        .as_bytes(),
    );
    let reply = strip_huge_id(&conn.next_raw(), &digits);
    validate(LEGACY, Some("tools/call"), &reply);
    assert_eq!(reply["result"]["structuredContent"]["sum"], 3.0, "{reply}");
    // A deferred call must store its id (64 bytes at most): -32600 with data.limit, echoed.
    conn.line(
        format!(
            r#"{{"jsonrpc":"2.0","id":{digits},"method":"tools/call","params":{{"name":"slow_count","arguments":{{"n":1,"delay_ms":0}}}}}}"#
        )
        .as_bytes(),
    );
    let reply = strip_huge_id(&conn.next_raw(), &digits);
    validate(LEGACY, Some("tools/call"), &reply);
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["error"]["data"]["limit"], 64, "{reply}");
    conn.assert_served();

    // As arguments the numbers are lexically fine; the tool decides (an isError result for
    // a value out of f64 range, a rounded value for 10,000 fraction digits).
    let call = |n1: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{{"name":"add_numbers","arguments":{{"number1":{n1},"number2":1}}}}}}"#
        )
    };
    for n1 in [
        digits.clone(),
        format!("-{digits}"),
        format!("1{}e5", "0".repeat(9_999)),
    ] {
        conn.line(call(&n1).as_bytes());
        let r = conn.next(Some("tools/call"));
        assert_eq!(r["id"], "n", "{r}");
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.starts_with("Invalid arguments for tool add_numbers") && text.len() < 400,
            "the error text should be bounded: {text}"
        );
    }
    for (n1, sum) in [
        (format!("0.{}", "1".repeat(10_000)), 1.1111111111111112),
        (
            format!("{}1e-9999", "0.".to_owned() + &"0".repeat(9_990)),
            1.0,
        ),
        (format!("1{}e-9999", "0".repeat(9_999)), 2.0),
    ] {
        conn.line(call(&n1).as_bytes());
        let r = conn.next(Some("tools/call"));
        assert_eq!(
            r["result"]["structuredContent"]["sum"],
            sum,
            "{}: {r}",
            show(n1.as_bytes())
        );
    }
    // As a progress token of a deferred call: bounded to 64 bytes, -32602 with data.limit.
    conn.line(
        format!(
            r#"{{"jsonrpc":"2.0","id":"pt","method":"tools/call","params":{{"name":"slow_count","arguments":{{"n":1,"delay_ms":0}},"_meta":{{"progressToken":{digits}}}}}}}"#
        )
        .as_bytes(),
    );
    let r = conn.next(Some("tools/call"));
    check_error(&r, -32602, Some(&json!("pt")), "progress token");
    assert_eq!(r["error"]["data"]["limit"], 64, "{r}");
    conn.assert_served();
}

// ---- pipes: envelope errors ---------------------------------------------------------------

#[test]
fn duplicate_keys() {
    let (_proc, mut conn) = calculator(&[]);
    conn.initialize();
    // A duplicated envelope member is -32600. With two ids either may be echoed.
    conn.line(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#);
    let r = conn.next(None);
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(r.get("id").is_none_or(|id| *id == 1 || *id == 2), "{r}");
    conn.assert_served();
    for line in [
        &br#"{"jsonrpc":"2.0","id":3,"method":"ping","method":"ping"}"#[..],
        br#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":3,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{},"params":{}}"#,
        br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","method":"ping"}"#,
        // Member names compare after unescaping.
        br#"{"jsonrpc":"2.0","id":3,"method":"ping","\u006dethod":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":3,"method":"ping","result":{},"result":{}}"#,
    ] {
        let error = conn.hostile(line, -32600, Some(&json!(3)));
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("duplicate")),
            "{}: {error}",
            show(line)
        );
    }
    conn.line(br#"{"jsonrpc":"2.0","\u0069d":4,"id":4,"method":"ping"}"#);
    let r = conn.next(None);
    check_error(&r, -32600, Some(&json!(4)), "escaped duplicate id");
    conn.assert_served();
    // A duplicated envelope member without an id is a (broken) notification: no reply.
    conn.silent(br#"{"jsonrpc":"2.0","method":"notifications/initialized","method":"x"}"#);

    // Inside params the first occurrence wins (documented): `name`, `arguments`, `cursor`.
    let r = conn.request(json!(5), "tools/call", Some(json!({})));
    assert_eq!(r["error"]["code"], -32602, "no name: {r}");
    conn.line(br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add_numbers","name":"no_such_tool","arguments":{"number1":1,"number2":2},"arguments":{"number1":100,"number2":200}}}"#);
    let r = conn.next(Some("tools/call"));
    assert_eq!(r["id"], 6, "{r}");
    assert_eq!(
        r["result"]["structuredContent"]["sum"], 3.0,
        "first wins: {r}"
    );
    conn.line(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"no_such_tool","name":"add_numbers","arguments":{"number1":1,"number2":2}}}"#);
    let r = conn.next(None);
    check_error(&r, -32602, Some(&json!(7)), "first name wins");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no_such_tool")),
        "{r}"
    );
    conn.line(br#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":null,"cursor":"garbage"}}"#);
    let r = conn.next(Some("tools/list"));
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(5),
        "{r}"
    );
    // Inside the tool's arguments, the tool decides: the calculator's typed arguments reject
    // a duplicated field (an isError result, not a protocol error).
    conn.line(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"add_numbers","arguments":{"number1":1,"number2":2,"number1":5}}}"#);
    let r = conn.next(Some("tools/call"));
    assert_eq!(r["result"]["isError"], true, "{r}");
    conn.assert_served();
}

#[test]
fn wrong_jsonrpc_version_echoes_the_id() {
    let (_proc, mut conn) = calculator(&[]);
    for (i, version) in [
        r#""1.0""#,
        r#""2""#,
        r#""2.00""#,
        r#"" 2.0""#,
        r#""2.0 ""#,
        r#""2.0\u0000""#,
        r#""3.0""#,
        r#""""#,
        "2.0",
        "2",
        "null",
        "true",
        "{}",
        r#"["2.0"]"#,
    ]
    .iter()
    .enumerate()
    {
        for id in [json!(i), json!(format!("v{i}"))] {
            let line = format!(r#"{{"jsonrpc":{version},"id":{id},"method":"ping"}}"#);
            let error = conn.hostile(line.as_bytes(), -32600, Some(&id));
            assert!(
                error["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("jsonrpc")),
                "{line}: {error}"
            );
        }
    }
    // Missing altogether.
    conn.hostile(
        br#"{"id":"missing","method":"ping"}"#,
        -32600,
        Some(&json!("missing")),
    );
    // After initialize, the same.
    conn.initialize();
    conn.hostile(
        br#"{"jsonrpc":"1.0","id":"tl","method":"tools/list"}"#,
        -32600,
        Some(&json!("tl")),
    );
    // A wrong version with an invalid id: -32600 without an id.
    conn.hostile(
        br#"{"jsonrpc":"1.0","id":null,"method":"ping"}"#,
        -32600,
        None,
    );
}

/// `"\u0032.0"` is the JSON string `2.0` (RFC 8259 §7: escapes denote the same code points):
/// it must be accepted like member names and method names, which the server does unescape.
#[test]
fn escaped_jsonrpc_version_is_accepted() {
    let (_proc, mut conn) = calculator(&[]);
    conn.line(br#"{"jsonrpc":"2.0","id":"plain","method":"p\u0069ng"}"#);
    assert_eq!(
        conn.next(Some("ping")),
        json!({"jsonrpc": "2.0", "id": "plain", "result": {}}),
        "an escaped method name is decoded"
    );
    conn.line(br#"{"\u006asonrpc":"2.0","id":"key","method":"ping"}"#);
    assert_eq!(
        conn.next(Some("ping")),
        json!({"jsonrpc": "2.0", "id": "key", "result": {}}),
        "an escaped member name is decoded"
    );
    for (id, version) in [("esc", r#""\u0032.0""#), ("solidus", r#""2\u002e0""#)] {
        conn.line(format!(r#"{{"jsonrpc":{version},"id":"{id}","method":"ping"}}"#).as_bytes());
        assert_eq!(
            conn.next(Some("ping")),
            json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "jsonrpc {version} is the string \"2.0\""
        );
    }
}

#[test]
fn null_float_object_array_ids_are_invalid_without_id() {
    let (_proc, mut conn) = calculator(&[]);
    let ids = [
        "null",
        "1.5",
        "1.0",
        "-1.0",
        "0.0",
        "1e3",
        "1E3",
        "-0e0",
        "{}",
        r#"{"id":1}"#,
        "[]",
        "[1]",
        "true",
        "false",
    ];
    for id in ids {
        for method in ["ping", "tools/list", "initialize"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#);
            let error = conn.hostile(line.as_bytes(), -32600, None);
            assert!(
                error["message"].as_str().is_some_and(|m| m.contains("id")),
                "{line}: {error}"
            );
        }
    }
    // Valid JSON that is not a message object: -32600 without an id.
    for line in [
        &b"1"[..],
        b"\"ping\"",
        b"null",
        b"true",
        b"[]",
        b"[1,2]",
        br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        b"{}",
        br#"{"jsonrpc":"2.0"}"#,
        br#"{"jsonrpc":"2.0","id":1}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
    ] {
        conn.line(line);
        let r = conn.next(None);
        assert_eq!(r["error"]["code"], -32600, "{}: {r}", show(line));
        assert!(r.get("id").is_none() || r["id"] == 1, "{}: {r}", show(line));
        conn.assert_served();
    }
    // Still uninitialized and healthy: initialize works after all that.
    conn.initialize();
    conn.assert_served();
    // Ids that are valid: empty string, -0, a string with escapes, a long integer.
    for id in [
        r#""""#,
        "-0",
        r#""a\"b\\c\n""#,
        "123456789012345678901234567890",
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        conn.line(line.as_bytes());
        let raw = String::from_utf8(conn.next_raw()).expect("UTF-8");
        assert_eq!(
            raw,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
        );
    }
}

#[test]
fn notifications_with_bad_params_get_no_reply() {
    let (_proc, mut conn) = calculator(&[]);
    let notifications: &[&[u8]] = &[
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"bar"}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":42}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":null}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1,2]}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":{}}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{},"progress":"x"}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":"x"}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"nope"}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/no_such_thing","params":{"a":1}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}"#,
        br#"{"jsonrpc":"2.0","method":"","params":{}}"#,
        // Request methods sent as notifications (no id): never answered.
        br#"{"jsonrpc":"2.0","method":"ping"}"#,
        br#"{"jsonrpc":"2.0","method":"tools/list","params":{"cursor":"garbage"}}"#,
        br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add_numbers","arguments":{"number1":1,"number2":2}}}"#,
        br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"no_such_tool"}}"#,
        br#"{"jsonrpc":"2.0","method":"logging/setLevel","params":{"level":"bogus"}}"#,
        br#"{"jsonrpc":"2.0","method":"no/such/method"}"#,
        // Broken envelopes without an id (documented: notifications are never answered).
        br#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
        br#"{"method":"notifications/initialized"}"#,
        // Stray responses (the server sends no requests): ignored.
        br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}"#,
        br#"{"jsonrpc":"2.0","id":99,"result":{"content":[]}}"#,
    ];
    for line in notifications {
        conn.silent(line);
    }
    conn.initialize();
    for line in notifications {
        conn.silent(line);
    }
    // The notification that sets up a session cannot re-initialize or break it.
    conn.silent(br#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#);
    let r = conn.request(json!("list"), "tools/list", None);
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(5),
        "{r}"
    );
}

#[test]
fn unknown_methods() {
    let (_proc, mut conn) = calculator(&[]);
    let methods = [
        "bogus",
        "tools/lis",
        "Tools/List",
        "tools/list ",
        "resources/list",
        "prompts/list",
        "completion/complete",
        "sampling/createMessage",
        "rpc.discover",
        "",
        "notifications/initialized",
    ];
    let long = "m".repeat(10_000);
    for (i, method) in methods.iter().copied().chain([long.as_str()]).enumerate() {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"{method}"}}"#);
        let error = conn.hostile(line.as_bytes(), -32601, Some(&json!(i)));
        assert!(
            error["message"].as_str().is_some_and(|m| m.len() < 200),
            "bounded message: {error}"
        );
    }
    conn.initialize();
    for (i, method) in methods.iter().copied().chain([long.as_str()]).enumerate() {
        let id = json!(format!("m{i}"));
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{}}}}"#);
        conn.hostile(line.as_bytes(), -32601, Some(&id));
    }
}

#[test]
fn requests_before_initialize_and_a_second_initialize() {
    let (_proc, mut conn) = calculator(&[]);
    for (i, (method, params)) in [
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "add_numbers", "arguments": {"number1": 1, "number2": 2}}),
        ),
        ("logging/setLevel", json!({"level": "debug"})),
    ]
    .into_iter()
    .enumerate()
    {
        let r = conn.request(json!(i), method, Some(params));
        let error = check_error(&r, -32600, Some(&json!(i)), method);
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("initialize") && message.contains("2026-07-28"),
            "{method}: the message should name both ways in: {error}"
        );
    }
    // `ping` is allowed before initialize.
    let r = conn.request(json!("p"), "ping", None);
    assert_eq!(r["result"], json!({}), "{r}");
    // Broken initialize requests do not initialize.
    for params in [
        json!({}),
        json!({"protocolVersion": 2025}),
        json!({"protocolVersion": null}),
    ] {
        let r = conn.request(json!("bad-init"), "initialize", Some(params));
        check_error(
            &r,
            -32602,
            Some(&json!("bad-init")),
            "initialize without a version",
        );
    }
    let r = conn.request(json!(9), "tools/list", None);
    check_error(&r, -32600, Some(&json!(9)), "still uninitialized");

    conn.initialize();
    for version in [LEGACY, "2024-11-05", "2025-11-25", "1999-01-01"] {
        let r = conn.request(
            json!("again"),
            "initialize",
            Some(json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}})),
        );
        let error = check_error(&r, -32600, Some(&json!("again")), "second initialize");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("initialized")),
            "{error}"
        );
    }
    // The session keeps its negotiated revision (replies validate against 2025-06-18).
    let r = conn.request(json!(10), "tools/list", None);
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(5),
        "{r}"
    );
    conn.assert_served();
}

// ---- pipes: floods, cancellation, cursors -------------------------------------------------

#[test]
fn five_thousand_concurrent_calls() {
    const CALLS: u64 = 5_000;
    let (mut proc, mut conn) = calculator(&[]);
    conn.initialize();
    conn.assert_served();
    let before = proc.memory();
    let mut batch = String::new();
    for id in 1..=CALLS {
        use std::fmt::Write as _;
        let _ = writeln!(
            batch,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"slow_count","arguments":{{"n":1,"delay_ms":1000}}}}}}"#
        );
    }
    let start = Instant::now();
    conn.send(batch.as_bytes());
    let mut replies: HashMap<u64, bool> = HashMap::new(); // id -> completed
    let (mut first_is_rejection, mut last_rejection, mut first_completion) = (None, None, None);
    for _ in 0..CALLS {
        let msg = conn.next(Some("tools/call"));
        let id = msg["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("reply without a request id: {msg}"));
        assert!((1..=CALLS).contains(&id), "unknown id: {msg}");
        let completed = if msg.get("result").is_some() {
            assert_eq!(
                msg["result"]["structuredContent"],
                json!({"count": 1}),
                "{msg}"
            );
            first_completion.get_or_insert(start.elapsed());
            true
        } else {
            assert_eq!(msg["error"]["code"], -32603, "{msg}");
            assert_eq!(msg["error"]["data"]["limit"], MAX_CALLS, "{msg}");
            assert!(
                msg["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("Too many calls in flight")),
                "{msg}"
            );
            last_rejection = Some(start.elapsed());
            false
        };
        first_is_rejection.get_or_insert(!completed);
        assert!(
            replies.insert(id, completed).is_none(),
            "two replies for id {id}"
        );
    }
    let elapsed = start.elapsed();
    // Nothing else arrives: the very next line is the ping's reply.
    conn.assert_served();
    let completed = replies.values().filter(|c| **c).count();
    let rejected = replies.len() - completed;
    assert_eq!(replies.len() as u64, CALLS);
    for id in 1..=MAX_CALLS as u64 {
        assert_eq!(replies.get(&id), Some(&true), "call {id} had a free slot");
    }
    assert!(completed >= MAX_CALLS, "{completed} completed");
    assert!(rejected > 0, "nothing was over the limit");
    // Over-limit calls are refused at once, not after the running calls finish.
    assert_eq!(
        first_is_rejection,
        Some(true),
        "the first reply should be a refusal"
    );
    proc.assert_alive();
    let after = proc.memory();
    println!(
        "calculator, {CALLS} pipelined slow_count calls: {completed} completed, {rejected} refused \
         (last refusal at {last_rejection:?}, first completion at {first_completion:?}, all in \
         {elapsed:?}); before {before}; after {after}"
    );
    assert!(after.hwm_kib < PEAK_RSS_LIMIT_MIB * 1024, "{after}");
    // The slots are free again: a new call runs.
    let r = conn.request(
        json!("again"),
        "tools/call",
        Some(json!({"name": "slow_count", "arguments": {"n": 2, "delay_ms": 0}})),
    );
    assert_eq!(r["result"]["structuredContent"], json!({"count": 2}), "{r}");
}

#[test]
fn cancelling_unknown_ids_is_silent() {
    let (_proc, mut conn) = calculator(&[]);
    // Before initialize, too.
    conn.silent(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    );
    conn.initialize();
    let done = conn.request(json!(1), "ping", None);
    assert_eq!(done["result"], json!({}));
    let long = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{}}}}}"#,
        "9".repeat(10_000)
    );
    for line in [
        &br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":424242}}"#[..],
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope","reason":"test"}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1"}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":""}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":-1}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"init"}}"#,
        long.as_bytes(),
    ] {
        conn.silent(line);
    }
    // A call in flight is not disturbed by cancellations of other ids (`1` vs `"1"` too).
    conn.line(br#"{"jsonrpc":"2.0","id":"live","method":"tools/call","params":{"name":"slow_count","arguments":{"n":1,"delay_ms":300}}}"#);
    conn.silent(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other"}}"#,
    );
    conn.silent(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\"live\""}}"#);
    let r = conn.next(Some("tools/call"));
    assert_eq!(r["id"], "live", "{r}");
    assert_eq!(r["result"]["structuredContent"], json!({"count": 1}), "{r}");
    // Cancelling it after it completed: silence.
    conn.silent(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"live"}}"#,
    );
}

#[test]
fn call_and_cancel_flood_does_not_exhaust_the_slots() {
    const CALLS: usize = 2_000; // far more than the 256 slots
    let (mut proc, mut conn) = calculator(&[]);
    conn.initialize();
    let mut batch = String::new();
    for id in 1..=CALLS {
        use std::fmt::Write as _;
        let _ = writeln!(
            batch,
            r#"{{"jsonrpc":"2.0","id":"c{id}","method":"tools/call","params":{{"name":"slow_count","arguments":{{"n":1,"delay_ms":300}}}}}}"#
        );
        let _ = writeln!(
            batch,
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":"c{id}"}}}}"#
        );
    }
    conn.send(batch.as_bytes());
    // Cancellation frees the slot at once: no call was refused, and a cancelled call is
    // never answered (the very next line is the ping's reply, and nothing arrives after the
    // calls would have finished).
    conn.assert_served();
    conn.assert_quiet(Duration::from_millis(800));
    let r = conn.request(
        json!("after"),
        "tools/call",
        Some(json!({"name": "slow_count", "arguments": {"n": 1, "delay_ms": 0}})),
    );
    assert_eq!(r["result"]["structuredContent"], json!({"count": 1}), "{r}");
    proc.assert_alive();
    println!("calculator, {CALLS} calls + cancels: {}", proc.memory());
}

/// The first page's `nextCursor` of a `calculator --extra-tools 60` (65 tools, pages of 50).
fn first_cursor(conn: &mut Conn) -> String {
    let r = conn.request(json!("page1"), "tools/list", None);
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(50),
        "{r}"
    );
    r["result"]["nextCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("no nextCursor: {r}"))
        .to_owned()
}

#[test]
fn bogus_cursors() {
    let (_a, mut conn) = calculator(&["--extra-tools", "60"]);
    let (_b, mut other) = calculator(&["--extra-tools", "60"]);
    conn.initialize();
    other.initialize();
    let cursor = first_cursor(&mut conn);
    let foreign = first_cursor(&mut other);
    assert_ne!(cursor, foreign, "two processes must not share a cursor key");
    // Our own cursor works, theirs on their server too.
    for c in [&mut conn, &mut other] {
        let own = first_cursor(c);
        let r = c.request(json!("page2"), "tools/list", Some(json!({"cursor": own})));
        assert_eq!(
            r["result"]["tools"].as_array().map(Vec::len),
            Some(15),
            "{r}"
        );
        assert!(r["result"].get("nextCursor").is_none(), "{r}");
    }

    let mid = cursor.len() / 2;
    let flip = |s: &str, at: usize| {
        let mut b = s.as_bytes().to_vec();
        b[at] = if b[at] == b'A' { b'B' } else { b'A' };
        String::from_utf8(b).expect("ASCII")
    };
    let standard_b64 = cursor.replace('-', "+").replace('_', "/");
    let mut bogus: Vec<(String, Value)> = vec![
        ("garbage".into(), json!("garbage!!")),
        ("empty string".into(), json!("")),
        ("number".into(), json!(5)),
        ("zero".into(), json!(0)),
        ("float".into(), json!(1.5)),
        ("true".into(), json!(true)),
        ("object".into(), json!({"offset": 50})),
        ("array".into(), json!([cursor.clone()])),
        ("tampered middle".into(), json!(flip(&cursor, mid))),
        ("tampered first".into(), json!(flip(&cursor, 0))),
        (
            "truncated".into(),
            json!(cursor[..cursor.len() - 1].to_owned()),
        ),
        ("extended".into(), json!(format!("{cursor}A"))),
        ("doubled".into(), json!(format!("{cursor}{cursor}"))),
        ("padded".into(), json!(format!("{cursor}="))),
        ("whitespace".into(), json!(format!(" {cursor}"))),
        ("lowercased".into(), json!(cursor.to_lowercase())),
        ("uppercased".into(), json!(cursor.to_uppercase())),
        ("non-ASCII".into(), json!(format!("{cursor}\u{e9}"))),
        ("long".into(), json!("A".repeat(60_000))),
        ("foreign".into(), json!(foreign.clone())),
    ];
    if standard_b64 != cursor {
        bogus.push(("standard base64".into(), json!(standard_b64)));
    }
    for (i, (what, c)) in bogus.iter().enumerate() {
        if *c == json!(cursor) {
            continue; // e.g. a cursor with no letters to change case
        }
        let id = json!(format!("c{i}"));
        let r = conn.request(id.clone(), "tools/list", Some(json!({"cursor": c})));
        let error = check_error(&r, -32602, Some(&id), what);
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("ursor")),
            "{what}: {error}"
        );
        conn.assert_served();
    }
    // `null` means no cursor: the first page.
    let r = conn.request(json!("null"), "tools/list", Some(json!({"cursor": null})));
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(50),
        "{r}"
    );
    // After all that, the genuine cursor still works.
    let r = conn.request(json!("ok"), "tools/list", Some(json!({"cursor": cursor})));
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(15),
        "{r}"
    );
}

/// A cursor is an opaque JSON string: the same string with a JSON escape
/// (`"\u0041..."` for `"A..."`) is the same cursor (RFC 8259 §7) and must be accepted.
#[test]
fn escaped_cursor_is_the_same_cursor() {
    let (_proc, mut conn) = calculator(&["--extra-tools", "60"]);
    conn.initialize();
    let cursor = first_cursor(&mut conn);
    let first = cursor.chars().next().expect("non-empty cursor");
    let escaped = format!("\\u{:04x}{}", u32::from(first), &cursor[first.len_utf8()..]);
    conn.line(
        format!(r#"{{"jsonrpc":"2.0","id":"esc","method":"tools/list","params":{{"cursor":"{escaped}"}}}}"#)
            .as_bytes(),
    );
    let r = conn.next(Some("tools/list"));
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(15),
        "cursor {escaped:?} is the string {cursor:?}: {r}"
    );
}

// ---- TCP ----------------------------------------------------------------------------------

/// The core hostile set on one connection (initialized or not).
fn core_set(conn: &mut Conn) {
    for line in MALFORMED {
        let error = conn.hostile(line, -32700, None);
        assert_parse_error(&error, &show(line));
    }
    let full = TRUNCATE_ME.as_bytes();
    for cut in (1..full.len()).step_by(7) {
        conn.hostile(&full[..cut], -32700, None);
    }
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    conn.hostile(deep.as_bytes(), -32700, None);
    conn.hostile(
        &ping_with_params("deep", &format!("{{\"x\":{deep}}}")),
        -32700,
        None,
    );
    conn.hostile(
        b"{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"ping\"}",
        -32700,
        None,
    );
    conn.hostile(
        br#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#,
        -32700,
        None,
    );
    for id in ["null", "1.5", "{}", "[]", "true"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        conn.hostile(line.as_bytes(), -32600, None);
    }
    conn.hostile(
        br#"{"jsonrpc":"1.0","id":"v","method":"ping"}"#,
        -32600,
        Some(&json!("v")),
    );
    conn.hostile(
        br#"{"jsonrpc":"2.0","id":"u","method":"bogus"}"#,
        -32601,
        Some(&json!("u")),
    );
    conn.silent(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"bar"}"#);
    conn.silent(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":424242}}"#,
    );
}

#[test]
fn tcp_core_set_and_hundred_megabyte_line() {
    let (mut proc, addr) = tcp_server();
    let mut conn = tcp_connect(addr, &proc, "tcp");
    core_set(&mut conn);
    conn.initialize();
    core_set(&mut conn);
    conn.hostile(
        br#"{"jsonrpc":"2.0","id":"again","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#,
        -32600,
        Some(&json!("again")),
    );
    let before = proc.memory();
    // While one connection streams a 100 MB line, another is served.
    let mut bystander = tcp_connect(addr, &proc, "tcp bystander");
    let elapsed = stream_huge_line(&mut conn, 100 << 20, || {
        let start = Instant::now();
        bystander.assert_served();
        println!(
            "tcp: bystander served in {:?} during the 100 MB line",
            start.elapsed()
        );
    });
    conn.assert_served();
    let r = conn.request(
        json!("sum"),
        "tools/call",
        Some(json!({"name": "add_numbers", "arguments": {"number1": 40, "number2": 2}})),
    );
    assert_eq!(r["result"]["structuredContent"]["sum"], 42.0, "{r}");
    proc.assert_alive();
    let after = proc.memory();
    println!("tcp, 100 MB line in {elapsed:?}: before {before}; after {after}");
    assert!(
        after.hwm_kib < PEAK_RSS_LIMIT_MIB * 1024,
        "the 100 MB line was buffered: {after}"
    );
    bystander.assert_served();
}

#[test]
fn tcp_fifty_connections_send_garbage_then_a_valid_request() {
    const CONNECTIONS: usize = 50;
    let (mut proc, addr) = tcp_server();
    let before = proc.memory();
    let oversized = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(100_000)
    );
    let deep = "[".repeat(10_000);
    // (garbage, expected code, expected data.limit)
    let garbage: Vec<(Vec<u8>, i64, Option<usize>)> = vec![
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":".to_vec(),
            -32700,
            None,
        ),
        (b"\xff\xfe garbage \x00\x01".to_vec(), -32700, None),
        (deep.into_bytes(), -32700, None),
        (
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
            -32600,
            None,
        ),
        (oversized.into_bytes(), -32600, Some(FRAME_LIMIT)),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":\"\\udc00\",\"method\":\"ping\"}".to_vec(),
            -32700,
            None,
        ),
    ];
    let barrier = Barrier::new(CONNECTIONS);
    let stderr = Arc::clone(&proc.stderr);
    thread::scope(|s| {
        let handles: Vec<_> = (0..CONNECTIONS)
            .map(|i| {
                let (barrier, garbage, stderr) = (&barrier, &garbage, &stderr);
                s.spawn(move || {
                    let stream = TcpStream::connect(addr).expect("connect");
                    let mut conn = socket_conn(stream, &format!("tcp #{i}"), stderr);
                    barrier.wait(); // all 50 connections are open at once
                    let (bad, code, limit) = &garbage[i % garbage.len()];
                    // Garbage and a valid (2026-07-28, stateless) request in one write.
                    let mut bytes = bad.clone();
                    bytes.push(b'\n');
                    bytes.extend_from_slice(
                        format!(
                            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"add_numbers","arguments":{{"number1":{i},"number2":0.5}},{MODERN_META}}}}}"#
                        )
                        .as_bytes(),
                    );
                    bytes.push(b'\n');
                    conn.send(&bytes);
                    let error = conn.expect_error(*code, None);
                    if let Some(limit) = limit {
                        assert_eq!(error["data"]["limit"], *limit, "#{i}: {error}");
                    }
                    let r = conn.next_as(MODERN, Some("tools/call"));
                    assert_eq!(r["id"], i, "#{i}: {r}");
                    assert_eq!(
                        r["result"]["structuredContent"]["sum"].as_f64(),
                        Some(i as f64 + 0.5),
                        "#{i}: {r}"
                    );
                    assert_eq!(r["result"]["resultType"], "complete", "#{i}: {r}");
                    conn.assert_served();
                })
            })
            .collect();
        for h in handles {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
    proc.assert_alive();
    // A new connection is served afterwards.
    let mut conn = tcp_connect(addr, &proc, "tcp after");
    conn.hostile(b"}{", -32700, None);
    conn.initialize();
    let r = conn.request(json!(1), "tools/list", None);
    assert_eq!(
        r["result"]["tools"].as_array().map(Vec::len),
        Some(5),
        "{r}"
    );
    let after = proc.memory();
    println!("tcp, {CONNECTIONS} hostile connections: before {before}; after {after}");
    assert!(after.hwm_kib < PEAK_RSS_LIMIT_MIB * 1024, "{after}");
    conn.assert_quiet(Duration::from_millis(50));
}
