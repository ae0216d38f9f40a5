//! Hostile HTTP clients against the real `everything` binary serving Streamable HTTP
//! (`everything --http 127.0.0.1:0`, endpoint `/mcp`), spoken to with hand-written HTTP/1.1
//! over `std::net::TcpStream`: DNS-rebinding `Host`/`Origin` values, oversized and malformed
//! bodies, wrong media types, paths and methods, forged and ended session ids, a full session
//! table, 2026-07-28 routing headers that disagree with the body (`Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`), thousands of idle sockets, clients that never read their SSE streams (the
//! write timeout), quiet streams (keep-alive comments), floods of unfinished or oversized
//! request heads (the hard connection cap, `max_header_bytes`), and one peer filling the
//! session table (`max_sessions_per_peer`, concurrent `initialize`s), a JSON-only client of a
//! `subscriptions/listen` stream, and bodies held to spend the memory budget
//! (`--http-memory-budget`).
//!
//! Every refusal is checked for its HTTP status and a well-formed JSON-RPC error body, and
//! every hostile exchange is followed by a request that must still be served. Every read has
//! a timeout, so a wedged server fails a test instead of hanging it.
//!
//! `cargo test -p mcp-examples --test http_hostile -- --nocapture` prints the measurements
//! (latencies, memory, connection counts). Two tests wait for the 10 s header timeout.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Longest wait for any single read from the server.
const TIMEOUT: Duration = Duration::from_secs(10);
const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
/// The transport's default body limit (`HttpConfig::max_body`).
const MAX_BODY: usize = 4 << 20;
/// mcp-tokio's default `Limits::max_connections`.
const MAX_CONNECTIONS: usize = 1024;
/// Connections accepted beyond it to be answered 503 (`http::OVERFLOW_CONNECTIONS`).
const OVERFLOW_CONNECTIONS: usize = 64;
/// The transport's default `HttpConfig::header_timeout`.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The JSON-RPC error code of a 2026-07-28 header that disagrees with the body.
const HEADER_MISMATCH: i64 = -32020;

// ---- the server process --------------------------------------------------------------------

/// `everything --http 127.0.0.1:0`, killed on drop; stderr is collected for failure messages.
struct Server {
    child: Child,
    addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    fn start() -> Server {
        Server::start_with(&[])
    }

    /// `everything --http 127.0.0.1:0` with extra arguments (shorter limits).
    fn start_with(extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_everything"))
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn everything");
        let stderr = common::collect_stderr(&mut child);
        let deadline = Instant::now() + TIMEOUT;
        let addr = loop {
            let text = stderr.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let found = text.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("listening on ")
                    .and_then(|a| a.parse::<SocketAddr>().ok())
            });
            if let Some(addr) = found {
                break addr;
            }
            assert!(
                Instant::now() < deadline,
                "everything did not print its address; stderr:\n{text}"
            );
            thread::sleep(Duration::from_millis(5));
        };
        Server {
            child,
            addr,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn assert_alive(&mut self) {
        if let Some(status) = self.child.try_wait().expect("try_wait") {
            panic!("the server exited: {status}; stderr:\n{}", self.stderr());
        }
    }

    /// `VmRSS` and `VmHWM` of the server, in KiB.
    fn memory(&self) -> (u64, u64) {
        let m = common::memory(self.child.id());
        (m.rss_kib, m.hwm_kib)
    }

    /// Open file descriptors of the server (sockets included).
    fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// A sessionless legacy `ping` must be answered 200 (the server still serves).
    fn assert_serves(&mut self) {
        self.assert_alive();
        let r = post(
            self.addr,
            &[],
            &json!({"jsonrpc": "2.0", "id": "alive", "method": "ping"}),
        );
        assert_eq!(r.status, 200, "the server stopped serving: {r}");
        assert_eq!(
            r.json(),
            json!({"jsonrpc": "2.0", "id": "alive", "result": {}})
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---- hand-written HTTP/1.1 -----------------------------------------------------------------

/// A request's bytes. `Host: localhost` is added unless a `host` header is given, and
/// `Content-Length` for any method with a body or for POST/PUT.
fn raw_request(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    keep_alive: bool,
) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str("Host: localhost\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || matches!(method, "POST" | "PUT") {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    if !keep_alive {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// A response: status, headers (names lowercased) and body (de-chunked).
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl std::fmt::Display for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        for (k, v) in &self.headers {
            write!(f, "\n{k}: {v}")?;
        }
        let body = String::from_utf8_lossy(&self.body);
        let cut = body.char_indices().nth(600).map_or(body.len(), |(i, _)| i);
        write!(f, "\n\n{}", &body[..cut])
    }
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("a JSON body ({e}) in\n{self}"))
    }

    /// The JSON-RPC message answering `id`: the JSON body, or the SSE event carrying it.
    fn reply(&self, id: &Value) -> Value {
        let ct = self.header("content-type").unwrap_or("");
        if ct.starts_with("text/event-stream") {
            sse_messages(&self.body)
                .into_iter()
                .find(|m| m.get("id") == Some(id) && m.get("method").is_none())
                .unwrap_or_else(|| panic!("no reply to {id} in the SSE response\n{self}"))
        } else {
            assert!(ct.starts_with("application/json"), "{self}");
            self.json()
        }
    }

    /// Asserts a well-formed JSON-RPC error reply with this status and code; returns it.
    fn rpc_error(&self, status: u16, code: i64) -> Value {
        assert_eq!(self.status, status, "{self}");
        assert!(
            self.header("content-type")
                .is_some_and(|c| c.starts_with("application/json")),
            "a JSON error body: {self}"
        );
        let v = self.json();
        assert_rpc_error(&v, code);
        v
    }
}

/// A well-formed JSON-RPC error: `jsonrpc` "2.0", an `id` that is absent, null, a string or
/// an integer, `error.code` an integer equal to `code` and `error.message` a non-empty string.
fn assert_rpc_error(v: &Value, code: i64) {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert!(v.get("result").is_none(), "{v}");
    if let Some(id) = v.get("id") {
        assert!(
            id.is_null() || id.is_string() || id.is_i64() || id.is_u64(),
            "a JSON-RPC id: {v}"
        );
    }
    let e = &v["error"];
    assert_eq!(e["code"].as_i64(), Some(code), "{v}");
    assert!(
        e["message"].as_str().is_some_and(|m| !m.is_empty()),
        "an error message: {v}"
    );
}

/// The JSON messages of an SSE body (events without data, the priming ones, skipped).
fn sse_messages(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            let data = data.join("\n");
            if data.trim().is_empty() {
                return None;
            }
            Some(
                serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {data}")),
            )
        })
        .collect()
}

/// One HTTP connection (keep-alive capable), every read bounded by `TIMEOUT`.
struct Conn {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect_timeout(&addr, TIMEOUT)
            .unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream.set_nodelay(true).expect("nodelay");
        stream.set_read_timeout(Some(TIMEOUT)).expect("timeout");
        stream.set_write_timeout(Some(TIMEOUT)).expect("timeout");
        let reader = BufReader::new(stream.try_clone().expect("clone"));
        Conn { stream, reader }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write a request");
    }

    fn line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    /// Status line and headers.
    fn head(&mut self) -> std::io::Result<(u16, Vec<(String, String)>)> {
        let status_line = self.line()?;
        let status = status_line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a status line: {status_line:?}"));
        let mut headers = Vec::new();
        loop {
            let line = self.line()?;
            if line.is_empty() {
                break;
            }
            let (k, v) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("a header line: {line:?}"));
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
        Ok((status, headers))
    }

    /// The next chunk of a chunked body; `None` after the last one.
    fn chunk(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let size_line = self.line()?;
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
            .unwrap_or_else(|_| panic!("a chunk size: {size_line:?}"));
        if size == 0 {
            // Trailers, then the blank line.
            while !self.line()?.is_empty() {}
            return Ok(None);
        }
        let mut data = vec![0; size];
        self.reader.read_exact(&mut data)?;
        let _ = self.line()?;
        Ok(Some(data))
    }

    /// A whole response (chunked, sized, or up to the end of the connection).
    fn response(&mut self) -> std::io::Result<Response> {
        let (status, headers) = self.head()?;
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let mut body = Vec::new();
        if get("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
            while let Some(c) = self.chunk()? {
                body.extend_from_slice(&c);
            }
        } else if let Some(len) = get("content-length") {
            body.resize(len.parse().expect("a content length"), 0);
            self.reader.read_exact(&mut body)?;
        } else if status != 204 && status != 304 && !(100..200).contains(&status) {
            self.reader.read_to_end(&mut body)?;
        }
        Ok(Response {
            status,
            headers,
            body,
        })
    }

    /// Sends a keep-alive request and reads its whole response.
    fn exchange(&mut self, bytes: &[u8]) -> Response {
        self.send(bytes);
        self.response().expect("a response in time")
    }
}

/// One request on a fresh connection (`Connection: close`).
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut c = Conn::open(addr);
    c.send(&raw_request(method, path, headers, body, false));
    c.response()
        .unwrap_or_else(|e| panic!("{method} {path}: no response ({e})"))
}

/// A POST of `body` to `/mcp` as JSON, accepting JSON and SSE, with extra headers.
fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Response {
    post_bytes(addr, headers, body.to_string().as_bytes())
}

fn post_bytes(addr: SocketAddr, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    request(addr, "POST", "/mcp", &all, body)
}

// ---- MCP helpers ----------------------------------------------------------------------------

fn initialize_body(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "http-hostile", "version": "0"}}})
}

/// A legacy session: `initialize`, then `notifications/initialized`; its id.
fn open_session(addr: SocketAddr) -> String {
    let r = post(addr, &[], &initialize_body(1));
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(
        r.reply(&json!(1))["result"]["protocolVersion"],
        LEGACY,
        "{r}"
    );
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("a session id: {r}"))
        .to_owned();
    assert!(
        id.len() >= 16 && id.bytes().all(|b| b.is_ascii_graphic()),
        "a visible-ASCII session id: {id:?}"
    );
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = post(addr, &[("Mcp-Session-Id", &id)], &note);
    assert_eq!(r.status, 202, "{r}");
    id
}

/// A 2026-07-28 request body: `params` with the per-request `_meta`.
fn modern_body(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A 2026-07-28 POST: the protocol header plus `headers`.
fn modern_post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Response {
    let mut all = vec![("MCP-Protocol-Version", MODERN)];
    all.extend_from_slice(headers);
    post(addr, &all, body)
}

fn text_of(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {reply}"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

// ---- 1. DNS-rebinding protection -----------------------------------------------------------

/// `Host` and `Origin` naming anything but loopback are refused with 403 and a JSON-RPC
/// error; `localhost`, `127.0.0.1:<port>` and `[::1]` (with or without port) are served.
#[test]
fn host_and_origin_checks() {
    let mut s = Server::start();
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let port = s.addr.port();
    let evil_port = format!("evil.example:{port}");
    for host in [
        "evil.example",
        evil_port.as_str(),
        "127.0.0.2",
        "localhost.evil.example",
    ] {
        let r = post(s.addr, &[("Host", host)], &ping);
        r.rpc_error(403, -32600);
        assert!(r.header("mcp-session-id").is_none(), "{r}");
    }
    for origin in [
        "http://evil.example",
        "https://evil.example:443",
        "null",
        "file://",
    ] {
        let r = post(s.addr, &[("Origin", origin)], &ping);
        r.rpc_error(403, -32600);
    }
    // A refused initialize creates no session.
    let r = post(s.addr, &[("Host", "evil.example")], &initialize_body(1));
    r.rpc_error(403, -32600);
    assert!(r.header("mcp-session-id").is_none(), "{r}");
    // GET and DELETE are checked too.
    let r = request(
        s.addr,
        "GET",
        "/mcp",
        &[("Host", "evil.example"), ("Mcp-Session-Id", "x")],
        b"",
    );
    r.rpc_error(403, -32600);
    let r = request(
        s.addr,
        "DELETE",
        "/mcp",
        &[("Host", "evil.example"), ("Mcp-Session-Id", "x")],
        b"",
    );
    r.rpc_error(403, -32600);
    // No Host at all (HTTP/1.1 requires one): refused, not served.
    let mut c = Conn::open(s.addr);
    let body = ping.to_string();
    c.send(
        format!(
            "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    let r = c.response().expect("a response");
    assert!(matches!(r.status, 400 | 403), "no Host: {r}");

    let local_port = format!("127.0.0.1:{port}");
    let localhost_port = format!("localhost:{port}");
    let v6_port = format!("[::1]:{port}");
    for host in [
        "localhost",
        "LocalHost",
        localhost_port.as_str(),
        "127.0.0.1",
        local_port.as_str(),
        "[::1]",
        v6_port.as_str(),
    ] {
        let r = post(s.addr, &[("Host", host)], &ping);
        assert_eq!(r.status, 200, "Host {host}: {r}");
        assert_eq!(r.json()["result"], json!({}), "{r}");
    }
    for origin in [
        "http://localhost:5173",
        "https://127.0.0.1",
        "http://[::1]:8080",
    ] {
        let r = post(s.addr, &[("Origin", origin)], &ping);
        assert_eq!(r.status, 200, "Origin {origin}: {r}");
    }
    s.assert_serves();
}

/// RFC 9112 §3.2: a request with more than one `Host` MUST get 400, and with an
/// absolute-form target the authority in the target is the host. The server checks only the
/// first `Host` value, and never the target's authority.
#[test]
fn ambiguous_hosts_are_refused() {
    let s = Server::start();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let send = |target: &str, hosts: &str| {
        let mut c = Conn::open(s.addr);
        c.send(
            format!(
                "POST {target} HTTP/1.1\r\n{hosts}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
        c.response().expect("a response")
    };
    let cases = [
        ("/mcp", "Host: localhost\r\nHost: evil.example\r\n"),
        ("/mcp", "Host: 127.0.0.1:80@evil.example\r\n"),
        (
            "/mcp",
            "Host: localhost\r\nOrigin: http://127.0.0.1:1@evil.example\r\n",
        ),
        (
            "/mcp",
            "Host: localhost\r\nOrigin: http://localhost\r\nOrigin: http://evil.example\r\n",
        ),
        ("http://evil.example/mcp", "Host: localhost\r\n"),
    ];
    let mut served = Vec::new();
    for (target, hosts) in cases {
        let r = send(target, hosts);
        if !matches!(r.status, 400 | 403) {
            served.push(format!("{target} {hosts:?} -> {}", r.status));
        }
    }
    assert!(served.is_empty(), "served:\n{}", served.join("\n"));
}

// ---- 2. body limit ---------------------------------------------------------------------------

/// Writes `bytes` on a thread (the server may answer and stop reading before the end), and
/// reads the response on this one.
fn send_large(addr: SocketAddr, bytes: Vec<u8>) -> std::io::Result<Response> {
    let mut c = Conn::open(addr);
    let mut writer = c.stream.try_clone().expect("clone");
    let w = thread::spawn(move || {
        let _ = writer.write_all(&bytes);
    });
    let r = c.response();
    let _ = c.stream.shutdown(Shutdown::Both);
    let _ = w.join();
    r
}

/// A 5 MiB body (sized or chunked) gets 413 with a JSON-RPC error, and the server keeps
/// serving; a body just under the limit is not refused as too large.
#[test]
fn oversized_body_is_refused() {
    let mut s = Server::start();
    let mut body =
        br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":""#.to_vec();
    body.resize(5 << 20, b'a');
    body.extend_from_slice(br#""}}}"#);

    let headers = [("Content-Type", "application/json")];
    let t = Instant::now();
    let r = send_large(s.addr, raw_request("POST", "/mcp", &headers, &body, false))
        .expect("a 413 response (not a reset)");
    r.rpc_error(413, -32600);
    println!("5 MiB sized body: 413 in {:.1} ms", ms(t.elapsed()));
    s.assert_serves();

    // Chunked, so the server learns the size only while reading.
    let mut chunked = b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    for part in body.chunks(64 << 10) {
        chunked.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        chunked.extend_from_slice(part);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let r = send_large(s.addr, chunked).expect("a 413 response (not a reset)");
    r.rpc_error(413, -32600);
    s.assert_serves();

    // Just under the limit: whatever the core says of it, it is not "too large".
    let mut body =
        br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"pad":""#.to_vec();
    body.resize(MAX_BODY - 8, b'a');
    body.extend_from_slice(br#""}}}"#);
    assert!(body.len() <= MAX_BODY);
    let r = send_large(s.addr, raw_request("POST", "/mcp", &headers, &body, false))
        .expect("a response");
    println!(
        "{} byte body (limit {MAX_BODY}): HTTP {} {}",
        body.len(),
        r.status,
        String::from_utf8_lossy(&r.body[..r.body.len().min(200)])
    );
    assert_ne!(r.status, 413, "{r}");
    s.assert_serves();
}

// ---- 3. malformed bodies, media types, paths, methods ---------------------------------------

/// Malformed JSON gets -32700 (status 200 or 400) in both eras; wrong or missing
/// Content-Type gets 415; other paths 404; other methods 405 with `Allow`; and the server
/// serves on after each.
#[test]
fn malformed_requests_are_refused() {
    let mut s = Server::start();
    let deep = "[".repeat(100_000);
    let bad_bodies: [&[u8]; 6] = [
        b"{bad",
        b"",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
        b"\xff\xfe{}",
        deep.as_bytes(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing",
    ];
    for era in [None, Some(MODERN)] {
        for body in bad_bodies {
            let mut headers = vec![];
            if let Some(v) = era {
                headers.push(("MCP-Protocol-Version", v));
                headers.push(("Mcp-Method", "ping"));
            }
            let r = post_bytes(s.addr, &headers, body);
            let label = String::from_utf8_lossy(&body[..body.len().min(40)]).into_owned();
            assert!(
                matches!(r.status, 200 | 400),
                "{era:?} {label:?}: status {}",
                r.status
            );
            let v = r.json();
            assert_rpc_error(&v, -32700);
            assert!(r.header("mcp-session-id").is_none(), "{r}");
            s.assert_serves();
        }
    }
    // Valid JSON that is no JSON-RPC message: -32600.
    for body in [&b"42"[..], b"\"x\"", b"null", b"{}"] {
        let r = post_bytes(s.addr, &[], body);
        assert!(matches!(r.status, 200 | 400), "{r}");
        assert_rpc_error(&r.json(), -32600);
    }
    s.assert_serves();

    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("json"),
        None,
    ] {
        let mut headers = vec![];
        if let Some(ct) = ct {
            headers.push(("Content-Type", ct));
        }
        let r = request(s.addr, "POST", "/mcp", &headers, ping.as_bytes());
        r.rpc_error(415, -32600);
    }
    let r = request(
        s.addr,
        "POST",
        "/mcp",
        &[("Content-Type", "application/json; charset=utf-8")],
        ping.as_bytes(),
    );
    assert_eq!(r.status, 200, "{r}");

    for path in ["/", "/mcp/", "/MCP", "/mcp/../mcp2", "/other", "/mcpx"] {
        let r = request(
            s.addr,
            "POST",
            path,
            &[("Content-Type", "application/json")],
            ping.as_bytes(),
        );
        r.rpc_error(404, -32600);
    }
    // A query string does not change the path.
    let r = request(
        s.addr,
        "POST",
        "/mcp?x=1",
        &[("Content-Type", "application/json")],
        ping.as_bytes(),
    );
    assert_eq!(r.status, 200, "{r}");

    for method in ["PUT", "PATCH", "OPTIONS"] {
        let r = request(
            s.addr,
            method,
            "/mcp",
            &[("Content-Type", "application/json")],
            ping.as_bytes(),
        );
        r.rpc_error(405, -32600);
        let allow = r
            .header("allow")
            .unwrap_or_else(|| panic!("{method}: an Allow header: {r}"));
        assert!(allow.contains("POST"), "{method}: Allow {allow:?}");
    }
    // HEAD: 405 and Allow, no body.
    let mut c = Conn::open(s.addr);
    c.send(&raw_request("HEAD", "/mcp", &[], b"", false));
    let (status, headers) = c.head().expect("a HEAD response");
    assert_eq!(status, 405, "{headers:?}");
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "allow" && v.contains("POST")),
        "{headers:?}"
    );
    // GET without a session: 405, Allow: POST.
    let r = request(
        s.addr,
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream")],
        b"",
    );
    r.rpc_error(405, -32600);
    assert!(r.header("allow").is_some_and(|a| a.contains("POST")), "{r}");
    s.assert_serves();
}

// ---- 4. session ids ------------------------------------------------------------------------

/// Unknown and ended session ids get 404; a second `initialize` on a live session gets a
/// JSON-RPC error; a legacy request without a session that is not `initialize` gets 400.
#[test]
fn session_ids_are_checked() {
    let mut s = Server::start();
    let ping = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    let long = "f".repeat(8000);
    for forged in [
        "00000000000000000000000000000000",
        "nope",
        long.as_str(),
        "../../etc/passwd",
    ] {
        let r = post(s.addr, &[("Mcp-Session-Id", forged)], &ping(1));
        r.rpc_error(404, -32600);
        let r = request(
            s.addr,
            "GET",
            "/mcp",
            &[("Mcp-Session-Id", forged), ("Accept", "text/event-stream")],
            b"",
        );
        r.rpc_error(404, -32600);
        let r = request(s.addr, "DELETE", "/mcp", &[("Mcp-Session-Id", forged)], b"");
        r.rpc_error(404, -32600);
    }

    let id = open_session(s.addr);
    let other = open_session(s.addr);
    assert_ne!(id, other, "session ids are unique");
    let r = post(s.addr, &[("Mcp-Session-Id", &id)], &ping(2));
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(r.reply(&json!(2))["result"], json!({}));
    // The session's requests may name its revision, not another one (nor an unknown one).
    for wrong in ["2025-06-18", "1999-01-01"] {
        let headers = [
            ("Mcp-Session-Id", id.as_str()),
            ("MCP-Protocol-Version", wrong),
        ];
        post(s.addr, &headers, &ping(3)).rpc_error(400, -32600);
    }
    let right = [
        ("Mcp-Session-Id", id.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    assert_eq!(post(s.addr, &right, &ping(4)).status, 200);

    // A second initialize on the live session: a JSON-RPC error, the session unchanged.
    let r = post(s.addr, &[("Mcp-Session-Id", &id)], &initialize_body(3));
    let v = r.reply(&json!(3));
    assert_rpc_error(&v, -32600);
    assert_eq!(v["id"], 3, "{v}");
    assert!(
        r.header("mcp-session-id").is_none_or(|h| h == id),
        "no new session: {r}"
    );
    let r = post(
        s.addr,
        &[("Mcp-Session-Id", &id)],
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    );
    assert_eq!(r.status, 200, "{r}");
    assert!(r.reply(&json!(4))["result"]["tools"].is_array(), "{r}");

    // DELETE ends it: every later use is 404; the other session lives on.
    let r = request(s.addr, "DELETE", "/mcp", &[("Mcp-Session-Id", &id)], b"");
    assert!(matches!(r.status, 200 | 202 | 204), "{r}");
    post(s.addr, &[("Mcp-Session-Id", &id)], &ping(5)).rpc_error(404, -32600);
    request(
        s.addr,
        "GET",
        "/mcp",
        &[("Mcp-Session-Id", &id), ("Accept", "text/event-stream")],
        b"",
    )
    .rpc_error(404, -32600);
    request(s.addr, "DELETE", "/mcp", &[("Mcp-Session-Id", &id)], b"").rpc_error(404, -32600);
    let r = post(s.addr, &[("Mcp-Session-Id", &other)], &ping(6));
    assert_eq!(r.status, 200, "{r}");

    // DELETE without an id: 400.
    request(s.addr, "DELETE", "/mcp", &[], b"").rpc_error(400, -32600);

    // Legacy, no session, not initialize: 400 with the request's id echoed.
    for method in ["tools/list", "tools/call", "resources/list", "prompts/get"] {
        let r = post(
            s.addr,
            &[],
            &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": {"name": "x"}}),
        );
        let v = r.rpc_error(400, -32600);
        assert_eq!(v["id"], 7, "{v}");
        assert!(r.header("mcp-session-id").is_none(), "{r}");
    }
    // A failed initialize (unsupported shape) starts no session.
    let r = post(
        s.addr,
        &[],
        &json!({"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {}}),
    );
    assert!(r.header("mcp-session-id").is_none(), "{r}");
    assert_rpc_error(&r.reply(&json!(8)), -32602);
    // A 2026 request ignores a (forged) session id: it is self-contained.
    let body = modern_body(json!(9), "tools/list", json!({}));
    let r = modern_post(
        s.addr,
        &[("Mcp-Method", "tools/list"), ("Mcp-Session-Id", "forged")],
        &body,
    );
    assert_eq!(r.status, 200, "{r}");
    s.assert_serves();
}

// ---- 5. 2026-07-28 routing headers ---------------------------------------------------------

/// `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` must agree with the body: disagreements get
/// 400 with -32020 and the request id echoed; lowercase names and padded values are fine.
#[test]
fn modern_headers_must_match_the_body() {
    let mut s = Server::start();
    let list = modern_body(json!("l1"), "tools/list", json!({}));
    let call = modern_body(
        json!(11),
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}}),
    );

    let mismatch = |r: &Response, id: Value| {
        let v = r.rpc_error(400, HEADER_MISMATCH);
        assert_eq!(v["id"], id, "the request id is echoed: {v}");
    };
    mismatch(
        &modern_post(s.addr, &[("Mcp-Method", "tools/call")], &list),
        json!("l1"),
    );
    mismatch(&modern_post(s.addr, &[], &list), json!("l1"));
    mismatch(
        &modern_post(s.addr, &[("Mcp-Method", "TOOLS/LIST")], &list),
        json!("l1"),
    );
    mismatch(
        &modern_post(s.addr, &[("Mcp-Method", "tools/list/")], &list),
        json!("l1"),
    );
    mismatch(
        &modern_post(s.addr, &[("Mcp-Method", "tools/call")], &call),
        json!(11),
    );
    mismatch(
        &modern_post(
            s.addr,
            &[
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "test_error_handling"),
            ],
            &call,
        ),
        json!(11),
    );
    mismatch(
        &modern_post(
            s.addr,
            &[
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "TEST_SIMPLE_TEXT"),
            ],
            &call,
        ),
        json!(11),
    );
    // The body's own revision disagreeing with the header.
    let mut old = list.clone();
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(LEGACY);
    mismatch(
        &modern_post(s.addr, &[("Mcp-Method", "tools/list")], &old),
        json!("l1"),
    );
    // prompts/get and resources/read name their target too.
    let get = modern_body(
        json!(12),
        "prompts/get",
        json!({"name": "test_simple_prompt"}),
    );
    mismatch(
        &modern_post(s.addr, &[("Mcp-Method", "prompts/get")], &get),
        json!(12),
    );
    let read = modern_body(
        json!(13),
        "resources/read",
        json!({"uri": "test://static-text"}),
    );
    mismatch(
        &modern_post(
            s.addr,
            &[
                ("Mcp-Method", "resources/read"),
                ("Mcp-Name", "test://other"),
            ],
            &read,
        ),
        json!(13),
    );

    // Accepted: exact values, lowercase header names, white space around values.
    let r = modern_post(s.addr, &[("mcp-method", "tools/list")], &list);
    assert_eq!(r.status, 200, "{r}");
    assert!(r.reply(&json!("l1"))["result"]["tools"].is_array(), "{r}");
    let r = post(
        s.addr,
        &[
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "test_simple_text"),
        ],
        &call,
    );
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(
        text_of(&r.reply(&json!(11))),
        "This is a simple text response for testing."
    );
    let r = modern_post(
        s.addr,
        &[
            ("Mcp-Method", " tools/call\t"),
            ("Mcp-Name", "  test_simple_text \t"),
        ],
        &call,
    );
    assert_eq!(r.status, 200, "padded Mcp-Name: {r}");
    let r = modern_post(
        s.addr,
        &[
            ("Mcp-Method", "resources/read"),
            ("Mcp-Name", "test://static-text"),
        ],
        &read,
    );
    assert_eq!(r.status, 200, "{r}");
    // Notifications carry no routing headers to check.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 1, "reason": "x"}});
    let r = modern_post(s.addr, &[], &note);
    assert_eq!(r.status, 202, "{r}");
    // 2026 statuses of the core's errors: -32601 -> 404, -32602 -> 400.
    let nope = modern_body(json!(14), "nope/nothing", json!({}));
    modern_post(s.addr, &[("Mcp-Method", "nope/nothing")], &nope).rpc_error(404, -32601);
    let unknown = modern_body(
        json!(15),
        "tools/call",
        json!({"name": "nope", "arguments": {}}),
    );
    modern_post(
        s.addr,
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "nope")],
        &unknown,
    )
    .rpc_error(400, -32602);

    // x-mcp-header: test_custom_header's `region` travels in Mcp-Param-Region too.
    let custom = |region: Value| {
        modern_body(
            json!(20),
            "tools/call",
            json!({"name": "test_custom_header", "arguments": {"region": region}}),
        )
    };
    let base = [
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "test_custom_header"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut h = base.to_vec();
        h.extend_from_slice(extra);
        h
    };
    let ok = |r: Response, want: &str| {
        assert_eq!(r.status, 200, "{r}");
        assert_eq!(text_of(&r.reply(&json!(20))), want, "{r}");
    };
    ok(
        modern_post(
            s.addr,
            &with(&[("Mcp-Param-Region", "us-west1")]),
            &custom(json!("us-west1")),
        ),
        "Region: us-west1",
    );
    ok(
        modern_post(
            s.addr,
            &with(&[("mcp-param-region", " us-west1 ")]),
            &custom(json!("us-west1")),
        ),
        "Region: us-west1",
    );
    ok(
        modern_post(
            s.addr,
            &with(&[("Mcp-Param-Region", "=?base64?SGVsbG8=?=")]),
            &custom(json!("Hello")),
        ),
        "Region: Hello",
    );
    // Non-ASCII needs base64: "é" is w6k=.
    ok(
        modern_post(
            s.addr,
            &with(&[("Mcp-Param-Region", "=?base64?w6k=?=")]),
            &custom(json!("é")),
        ),
        "Region: é",
    );
    for (header, region) in [
        (Some("=?base64?SGVsbG8?="), "Hello"),     // missing padding
        (Some("=?base64?SGVs!!!bG8=?="), "Hello"), // not base64
        (Some("=?base64?SGVsbG8=?="), "Hello!"),   // decodes to something else
        (Some("=?base64?/w==?="), "\u{fffd}"),     // not UTF-8
        (Some("eu-central1"), "us-west1"),         // another value
        (Some("US-WEST1"), "us-west1"),            // case matters
        (None, "us-west1"),                        // missing
    ] {
        let mut h = base.to_vec();
        if let Some(v) = header {
            h.push(("Mcp-Param-Region", v));
        }
        mismatch(&modern_post(s.addr, &h, &custom(json!(region))), json!(20));
    }
    // The header without the argument.
    let bare = modern_body(
        json!(20),
        "tools/call",
        json!({"name": "test_custom_header", "arguments": {}}),
    );
    mismatch(
        &modern_post(s.addr, &with(&[("Mcp-Param-Region", "x")]), &bare),
        json!(20),
    );
    // Raw non-ASCII bytes in the header are no readable value: the header counts as missing.
    let body = custom(json!("é")).to_string();
    let mut c = Conn::open(s.addr);
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\nMcp-Name: test_custom_header\r\nContent-Length: {}\r\nConnection: close\r\nMcp-Param-Region: ",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice("é".as_bytes());
    req.extend_from_slice(b"\r\n\r\n");
    req.extend_from_slice(body.as_bytes());
    c.send(&req);
    let r = c.response().expect("a response");
    mismatch(&r, json!(20));
    s.assert_serves();
}

/// The header check parses the body with serde_json (the last duplicate member wins); the
/// core parses it again and the tool sees the first duplicate. So a body whose `arguments`
/// names `region` twice passes the check with the second value in `Mcp-Param-Region` and
/// runs the tool with the first: the header an intermediary routes on is not what runs.
#[test]
fn modern_param_header_cannot_be_smuggled_past() {
    let s = Server::start();
    let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{{"name":"test_custom_header","arguments":{{"region":"evil","region":"good"}},"_meta":{meta}}}}}"#
    );
    let r = post_bytes(
        s.addr,
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "test_custom_header"),
            ("Mcp-Param-Region", "good"),
        ],
        body.as_bytes(),
    );
    // Either refused (duplicate member, or header mismatch), or the tool sees "good".
    if r.status == 200 {
        assert_eq!(text_of(&r.reply(&json!(30))), "Region: good", "{r}");
    } else {
        let v = r.json();
        let code = v["error"]["code"].as_i64().unwrap_or(0);
        assert!(matches!(code, HEADER_MISMATCH | -32600), "{r}");
        r.rpc_error(400, code);
    }
}

/// A routing header sent twice is ambiguous (an intermediary may read the other one); the
/// server reads the first and serves.
#[test]
fn repeated_routing_headers_are_refused() {
    let s = Server::start();
    let call = modern_body(
        json!(40),
        "tools/call",
        json!({"name": "test_custom_header", "arguments": {"region": "good"}}),
    );
    let cases: [&[(&str, &str)]; 3] = [
        &[
            ("Mcp-Method", "tools/call"),
            ("Mcp-Method", "tools/list"),
            ("Mcp-Name", "test_custom_header"),
            ("Mcp-Param-Region", "good"),
        ],
        &[
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "test_custom_header"),
            ("Mcp-Name", "test_simple_text"),
            ("Mcp-Param-Region", "good"),
        ],
        &[
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "test_custom_header"),
            ("Mcp-Param-Region", "good"),
            ("Mcp-Param-Region", "evil"),
        ],
    ];
    let mut served = Vec::new();
    for headers in cases {
        let r = modern_post(s.addr, headers, &call);
        if r.status != 400 {
            served.push(format!("{headers:?} -> {}", r.status));
        }
    }
    assert!(served.is_empty(), "served:\n{}", served.join("\n"));
}

/// `HttpConfig::max_sessions` (1,024) legacy sessions, opened by one client with nothing
/// but `initialize`s (its own quota, `max_sessions_per_peer`, raised to the table's size;
/// see `one_peer_cannot_fill_the_session_table`): the next `initialize` gets a clean 503
/// "Too many sessions", stateless 2026-07-28 requests and the existing sessions are still
/// served, and ending one session frees a slot. (The slots stay taken until
/// `session_idle`, 10 minutes, expires them.)
#[test]
fn session_table_exhaustion_is_refused_cleanly() {
    const MAX_SESSIONS: usize = 1024;
    let mut s = Server::start_with(&["--max-sessions-per-peer", "1024"]);
    let (rss_before, _) = s.memory();
    let mut c = Conn::open(s.addr);
    let t = Instant::now();
    let mut ids = Vec::with_capacity(MAX_SESSIONS);
    for i in 0..MAX_SESSIONS {
        let body = initialize_body(1).to_string();
        let r = c.exchange(&raw_request(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            body.as_bytes(),
            true,
        ));
        assert_eq!(r.status, 200, "initialize {i}: {r}");
        ids.push(r.header("mcp-session-id").expect("a session id").to_owned());
    }
    let (rss_after, _) = s.memory();
    println!(
        "{MAX_SESSIONS} sessions opened in {:.0} ms; RSS {:.1} -> {:.1} MiB ({:.1} KiB a session)",
        ms(t.elapsed()),
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        rss_after.saturating_sub(rss_before) as f64 / MAX_SESSIONS as f64
    );
    let r = post(s.addr, &[], &initialize_body(2));
    let v = r.rpc_error(503, -32603);
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Too many sessions")),
        "{v}"
    );
    assert!(r.header("mcp-session-id").is_none(), "{r}");
    // Stateless requests need no slot; existing sessions still work.
    let body = modern_body(json!(3), "tools/list", json!({}));
    let r = modern_post(s.addr, &[("Mcp-Method", "tools/list")], &body);
    assert_eq!(r.status, 200, "{r}");
    let r = post(
        s.addr,
        &[("Mcp-Session-Id", &ids[0])],
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    );
    assert_eq!(r.status, 200, "{r}");
    // A sessionless legacy ping needs no slot either, but the transport cannot tell it from
    // an initialize before the core has read it: it is refused too.
    let r = post(
        s.addr,
        &[],
        &json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
    );
    println!(
        "sessionless legacy ping with the session table full: HTTP {}",
        r.status
    );
    assert!(matches!(r.status, 200 | 503), "{r}");
    s.assert_alive();
    assert!(
        rss_after.saturating_sub(rss_before) < 128 * 1024,
        "{MAX_SESSIONS} idle sessions cost {} KiB",
        rss_after.saturating_sub(rss_before)
    );
    // Ending one frees its slot.
    let r = request(
        s.addr,
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", &ids[1])],
        b"",
    );
    assert_eq!(r.status, 200, "{r}");
    let r = post(s.addr, &[], &initialize_body(5));
    assert_eq!(r.status, 200, "{r}");
    assert!(r.header("mcp-session-id").is_some(), "{r}");
    post(s.addr, &[], &initialize_body(6)).rpc_error(503, -32603);
}

// ---- 6. idle connections ---------------------------------------------------------------------

/// Open file descriptors this process may use (`RLIMIT_NOFILE` soft limit).
fn fd_limit() -> usize {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| {
            l.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(1024)
}

/// Up to `want` connections that send nothing (bounded by this process's fd limit), opened
/// in batches that let the server accept each batch first: its listen backlog is 128 (tokio's
/// `TcpListener::bind`), and a burst beyond it costs 1 s SYN retransmissions.
fn idle_sockets(s: &Server, want: usize) -> Vec<TcpStream> {
    let open = std::fs::read_dir("/proc/self/fd").map_or(64, |d| d.count());
    let n = want.min(fd_limit().saturating_sub(open + 256));
    assert!(
        n > MAX_CONNECTIONS + 64,
        "fd limit too low for the idle-connection test: {n}"
    );
    let base = s.fds();
    let mut idle = Vec::with_capacity(n);
    let mut slow = 0;
    while idle.len() < n {
        for _ in 0..64.min(n - idle.len()) {
            let t = Instant::now();
            let c = TcpStream::connect_timeout(&s.addr, Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("connect after {} idle connections: {e}", idle.len()));
            if t.elapsed() > Duration::from_millis(500) {
                slow += 1;
            }
            idle.push(c);
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while s.fds() < base + idle.len() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
    }
    if slow > 0 {
        println!("{slow} connects took over 500 ms (a SYN was dropped)");
    }
    idle
}

/// One `ping` on a fresh connection, its status and latency (`None`: no answer in time).
fn timed_ping(addr: SocketAddr, timeout: Duration) -> (Option<Response>, Duration) {
    let t = Instant::now();
    let Ok(stream) = TcpStream::connect_timeout(&addr, timeout) else {
        return (None, t.elapsed());
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let mut c = Conn {
        reader: BufReader::new(stream.try_clone().expect("clone")),
        stream,
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    c.send(&raw_request(
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
        false,
    ));
    (c.response().ok(), t.elapsed())
}

/// 2,000 silent connections (more than `max_connections`): a well-behaved client still gets
/// an answer in bounded time, 200 or a clean 503 "Too many connections" JSON-RPC error,
/// never a hang; once the silent ones close, service resumes at once.
#[test]
fn idle_connections_never_hang_other_clients() {
    let mut s = Server::start();
    let t = Instant::now();
    let idle = idle_sockets(&s, 2000);
    println!(
        "opened {} idle connections in {:.0} ms (fd limit {})",
        idle.len(),
        ms(t.elapsed()),
        fd_limit()
    );
    println!("server fds with idle connections: {}", s.fds());

    let mut statuses = Vec::new();
    for _ in 0..5 {
        let (r, took) = timed_ping(s.addr, Duration::from_secs(5));
        let r = r.unwrap_or_else(|| {
            panic!(
                "a well-behaved client got no answer within 5 s while {} connections idle",
                idle.len()
            )
        });
        match r.status {
            200 => assert_eq!(r.json()["result"], json!({}), "{r}"),
            503 => {
                let v = r.rpc_error(503, -32603);
                assert!(
                    v["error"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("Too many connections")),
                    "{v}"
                );
            }
            _ => panic!("neither served nor a clean 503: {r}"),
        }
        statuses.push((r.status, ms(took)));
    }
    println!("well-behaved client while idle connections hold slots: {statuses:?} (status, ms)");
    s.assert_alive();

    let t = Instant::now();
    drop(idle);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let (r, _) = timed_ping(s.addr, Duration::from_secs(5));
        if r.as_ref().is_some_and(|r| r.status == 200) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "service did not resume within 5 s of closing the idle connections: {}",
            r.map_or("no answer".into(), |r| r.to_string())
        );
        thread::sleep(Duration::from_millis(10));
    }
    println!(
        "service resumed {:.1} ms after closing the idle connections ({attempts} attempts)",
        ms(t.elapsed())
    );
    s.assert_serves();
}

/// What the server should do: silent sockets must not lock well-behaved clients out. With
/// 1,100 idle connections (more than `max_connections`, 1,024) a new client should still be
/// served, e.g. by shedding the oldest idle connection; the server instead answers 503
/// until `header_timeout` (10 s) closes the idle ones.
#[test]
fn idle_connections_do_not_starve_clients() {
    let s = Server::start();
    let idle = idle_sockets(&s, MAX_CONNECTIONS + 76);
    let (r, took) = timed_ping(s.addr, Duration::from_secs(2));
    let r = r.expect("an answer within 2 s");
    assert_eq!(
        r.status,
        200,
        "a well-behaved client refused after {:.0} ms while {} idle sockets are open: {r}",
        ms(took),
        idle.len()
    );
}

/// Silent sockets are closed by the server after `header_timeout` (slow: waits ~10 s).
#[test]
fn idle_connections_are_shed_after_the_header_timeout() {
    let s = Server::start();
    let idle = idle_sockets(&s, MAX_CONNECTIONS + 76);
    let t = Instant::now();
    let closed: Vec<Duration> = thread::scope(|scope| {
        let handles: Vec<_> = idle
            .chunks(64)
            .map(|group| {
                scope.spawn(move || {
                    group
                        .iter()
                        .map(|mut c| {
                            c.set_read_timeout(Some(HEADER_TIMEOUT * 2))
                                .expect("timeout");
                            let mut b = [0u8; 256];
                            // EOF (or a 408) once the server gives up on the socket.
                            let _ = c.read(&mut b);
                            t.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("join"))
            .collect()
    });
    let last = closed.iter().max().copied().unwrap_or_default();
    println!(
        "{} idle connections, last closed by the server after {:.2} s",
        closed.len(),
        last.as_secs_f64()
    );
    assert!(last < HEADER_TIMEOUT + Duration::from_secs(3), "{last:?}");
    let (r, _) = timed_ping(s.addr, Duration::from_secs(2));
    assert_eq!(r.map(|r| r.status), Some(200));
}

/// A `Content-Length` beyond `max_body` can be refused from the headers alone; the server
/// instead waits for the body (and, with none coming, holds the connection: see
/// `stalled_bodies_are_timed_out`).
#[test]
fn declared_oversized_body_is_refused_at_once() {
    let mut s = Server::start();
    let mut c = Conn::open(s.addr);
    c.stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    c.send(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5000000000\r\nConnection: close\r\n\r\n{");
    let t = Instant::now();
    match c.response() {
        Ok(r) => {
            println!(
                "Content-Length 5e9: HTTP {} in {:.1} ms",
                r.status,
                ms(t.elapsed())
            );
            r.rpc_error(413, -32600);
        }
        Err(e) => panic!("Content-Length 5e9 and no body: no answer within 2 s ({e})"),
    }
    s.assert_serves();
}

/// Requests whose headers arrive but whose bodies never do hold their connection slots:
/// `header_timeout` covers headers only and nothing bounds the body. 1,040 such sockets
/// (more than `max_connections`) still lock every other client out (503) after the header
/// timeout has passed; they should have been timed out like idle ones (slow: waits 12 s).
#[test]
fn stalled_bodies_are_timed_out() {
    let mut s = Server::start();
    let mut stalled = Vec::new();
    let base = s.fds();
    for _ in 0..(MAX_CONNECTIONS + 16) / 16 {
        for _ in 0..16 {
            let mut c =
                TcpStream::connect_timeout(&s.addr, Duration::from_secs(5)).expect("connect");
            c.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
                .expect("write");
            stalled.push(c);
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while s.fds() < base + stalled.len() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
    }
    thread::sleep(HEADER_TIMEOUT + Duration::from_secs(2));
    let (r, took) = timed_ping(s.addr, Duration::from_secs(2));
    let r = r.expect("an answer within 2 s");
    println!(
        "{} stalled bodies, {:.0} s on: HTTP {} in {:.1} ms",
        stalled.len(),
        (HEADER_TIMEOUT + Duration::from_secs(2)).as_secs_f64(),
        r.status,
        ms(took)
    );
    assert_eq!(r.status, 200, "{r}");
    drop(stalled);
    s.assert_serves();
}

// ---- 7. clients that never read -------------------------------------------------------------

/// A legacy session whose client opened its GET stream and a progress-reporting call, and
/// reads neither.
struct Stalled {
    get: Conn,
    call: Conn,
}

fn stall(addr: SocketAddr) -> Stalled {
    let id = open_session(addr);
    let mut get = Conn::open(addr);
    get.send(&raw_request(
        "GET",
        "/mcp",
        &[("Mcp-Session-Id", &id), ("Accept", "text/event-stream")],
        b"",
        true,
    ));
    let mut call = Conn::open(addr);
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}}})
    .to_string();
    call.send(&raw_request(
        "POST",
        "/mcp",
        &[
            ("Mcp-Session-Id", &id),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        body.as_bytes(),
        true,
    ));
    Stalled { get, call }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    ms(sorted[i.min(sorted.len() - 1)])
}

/// Twenty legacy sessions never read their SSE streams while a well-behaved client triggers
/// 2,000 tool-list changes (each fanned out to every session's GET stream) on a keep-alive
/// connection: it is served promptly throughout, an observing session that reads its GET
/// stream receives the notifications, and the server's memory stays bounded.
#[test]
fn unread_sse_streams_do_not_block_or_bloat_the_server() {
    const STALLED: usize = 20;
    const CALLS: usize = 2000;
    let mut s = Server::start();
    let stalled: Vec<Stalled> = (0..STALLED).map(|_| stall(s.addr)).collect();

    // An observer reads its GET stream on a thread and counts list changes.
    let observer = open_session(s.addr);
    let mut get = Conn::open(s.addr);
    get.send(&raw_request(
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &observer),
            ("Accept", "text/event-stream"),
        ],
        b"",
        true,
    ));
    let (status, headers) = get.head().expect("the observer's GET stream");
    assert_eq!(status, 200, "{headers:?}");
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("text/event-stream")),
        "{headers:?}"
    );
    let seen = Arc::new(Mutex::new(0usize));
    let counter = Arc::clone(&seen);
    let reader = thread::spawn(move || {
        let mut pending = Vec::new();
        while let Ok(Some(chunk)) = get.chunk() {
            pending.extend_from_slice(&chunk);
            if let Some(end) = pending.windows(2).rposition(|w| w == b"\n\n") {
                let n = sse_messages(&pending[..end + 2])
                    .iter()
                    .filter(|m| m["method"] == "notifications/tools/list_changed")
                    .count();
                *counter.lock().unwrap_or_else(|e| e.into_inner()) += n;
                pending.drain(..end + 2);
            }
        }
    });

    let session = open_session(s.addr);
    thread::sleep(Duration::from_millis(200)); // the stalled progress calls finish writing
    let (rss_before, _) = s.memory();
    let mut c = Conn::open(s.addr);
    let mut latencies = Vec::with_capacity(CALLS);
    let t = Instant::now();
    for i in 0..CALLS {
        let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                          "params": {"name": "test_trigger_tool_change", "arguments": {}}})
        .to_string();
        let req = raw_request(
            "POST",
            "/mcp",
            &[
                ("Mcp-Session-Id", &session),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            body.as_bytes(),
            true,
        );
        let started = Instant::now();
        let r = c.exchange(&req);
        latencies.push(started.elapsed());
        assert_eq!(r.status, 200, "call {i}: {r}");
        assert_eq!(
            text_of(&r.reply(&json!(i))),
            "Tool list change triggered",
            "{r}"
        );
    }
    let total = t.elapsed();
    s.assert_alive();
    let (rss_after, hwm) = s.memory();
    latencies.sort();
    let max = latencies.last().copied().unwrap_or_default();
    println!(
        "{CALLS} calls with {STALLED} stalled sessions in {:.0} ms: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(total),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        ms(max)
    );
    println!(
        "server RSS before {:.1} MiB, after {:.1} MiB (peak {:.1} MiB)",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    assert!(max < Duration::from_secs(2), "a call took {max:?}");
    assert!(
        rss_after.saturating_sub(rss_before) < 64 * 1024,
        "RSS grew by {} KiB",
        rss_after - rss_before
    );

    // A fresh session on a fresh connection is served promptly too.
    let t = Instant::now();
    let other = open_session(s.addr);
    let r = post(
        s.addr,
        &[("Mcp-Session-Id", &other)],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    assert_eq!(r.status, 200, "{r}");
    println!(
        "a new session and tools/list after the flood: {:.1} ms",
        ms(t.elapsed())
    );

    // The observer received the fan-out (possibly coalesced).
    let deadline = Instant::now() + Duration::from_secs(5);
    while *seen.lock().unwrap_or_else(|e| e.into_inner()) == 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    let observed = *seen.lock().unwrap_or_else(|e| e.into_inner());
    println!("observer received {observed} tools/list_changed notifications");
    assert!(observed > 0, "the observer saw no list change");

    // What the stalled clients find once they read: how much each stream delivered, and
    // whether the server ended it (a client that does not keep up loses its stream).
    let report: Vec<String> = thread::scope(|scope| {
        let handles: Vec<_> = stalled
            .into_iter()
            .map(|mut st| {
                scope.spawn(move || {
                    let (status, _) = st.get.head().expect("the stalled GET's head");
                    assert_eq!(status, 200);
                    st.get
                        .stream
                        .set_read_timeout(Some(Duration::from_millis(300)))
                        .expect("timeout");
                    let mut body = Vec::new();
                    let ended = loop {
                        match st.get.chunk() {
                            Ok(Some(c)) => body.extend_from_slice(&c),
                            Ok(None) => break "ended",
                            Err(_) => break "open",
                        }
                    };
                    let call = st.call.response().expect("the stalled call's response");
                    assert_eq!(call.status, 200, "{call}");
                    assert_eq!(
                        text_of(&call.reply(&json!(2))),
                        "Progress test completed",
                        "{call}"
                    );
                    format!("{} ({ended})", sse_messages(&body).len())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a stalled client"))
            .collect()
    });
    println!("stalled GET streams delivered: {}", report.join(", "));
    drop(c);
    s.assert_serves();
    drop(s);
    let _ = reader.join();
}

// ---- 8. write timeout, keep-alive ------------------------------------------------------------

/// A connection with a small receive buffer and small segments: a client that stops reading
/// it stalls the server's writes after a few hundred KiB rather than megabytes.
fn small_buffer_conn(addr: SocketAddr) -> Conn {
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    // Small segments keep the server's send buffer small too (Linux sizes it by segments).
    socket.set_tcp_mss(536).expect("TCP_MAXSEG");
    socket
        .connect_timeout(&addr.into(), TIMEOUT)
        .unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    let stream: TcpStream = socket.into();
    stream.set_nodelay(true).expect("nodelay");
    stream.set_read_timeout(Some(TIMEOUT)).expect("timeout");
    stream.set_write_timeout(Some(TIMEOUT)).expect("timeout");
    let reader = BufReader::new(stream.try_clone().expect("clone"));
    Conn { stream, reader }
}

/// `HttpConfig::write_timeout` (here 1 s, `--http-write-timeout-ms`): a client whose SSE
/// response carries a 3 MB server-to-client request (`test_sampling` with a 3 MB prompt,
/// more than the socket buffers hold) and never reads it loses its connection once the
/// server's writes stall for that long; the server's descriptor is freed, and the client
/// finds the stream cut (no final chunk). Without the timeout the connection stays open for
/// as long as the client wishes.
#[test]
fn unread_sse_stream_is_closed_after_the_write_timeout() {
    // The largest request to the client fits the session's 64 KiB output buffer.
    const SAMPLING_PROMPT: usize = 64_000;
    const WRITE_TIMEOUT: Duration = Duration::from_secs(1);
    let mut s = Server::start_with(&["--http-write-timeout-ms", "1000"]);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "http-hostile", "version": "0"}}});
    let r = post(s.addr, &[], &init);
    assert_eq!(r.status, 200, "{r}");
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(s.addr, &[("Mcp-Session-Id", &session)], &note).status,
        202
    );
    thread::sleep(Duration::from_millis(100)); // the setup connections close
    let base = s.fds();
    let mut call = small_buffer_conn(s.addr);
    let prompt = "x".repeat(SAMPLING_PROMPT);
    let calls: Vec<Value> = (0..16)
        .map(|id| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "test_sampling", "arguments": {"prompt": prompt}}})
        })
        .collect();
    let body = Value::Array(calls).to_string();
    call.send(&raw_request(
        "POST",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        body.as_bytes(),
        true,
    ));
    let t = Instant::now();
    let deadline = t + WRITE_TIMEOUT * 5 + Duration::from_secs(2);
    thread::sleep(Duration::from_millis(200));
    while s.fds() > base && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let fds = s.fds();
    println!(
        "server fds: {base} before the unread stream, {fds} {:.0} ms after its request",
        ms(t.elapsed())
    );
    assert!(
        fds <= base,
        "the unread stream's connection is still open ({fds} fds, {base} before it)"
    );
    // The client finds what was sent before the cut, then the end of the connection.
    call.stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    let (status, _) = call.head().expect("the stream's head");
    assert_eq!(status, 200);
    let mut bytes = 0;
    let ended = loop {
        match call.chunk() {
            Ok(Some(c)) => bytes += c.len(),
            Ok(None) => break "a complete response",
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break "open",
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => break "open",
            Err(_) => break "cut",
        }
    };
    println!("the unread stream delivered {bytes} bytes, then: {ended}");
    assert_eq!(ended, "cut", "after {bytes} bytes");
    s.assert_serves();
}

/// `HttpConfig::sse_keep_alive` (here 200 ms, `--sse-keep-alive-ms`): a quiet legacy GET
/// stream and a quiet 2026-07-28 `subscriptions/listen` stream each get a `: keep-alive`
/// comment every interval (proxies do not cut them), and the events around them still
/// parse.
#[test]
fn quiet_sse_streams_get_keep_alive_comments() {
    const OBSERVE: Duration = Duration::from_millis(1100);
    let mut s = Server::start_with(&["--sse-keep-alive-ms", "200"]);
    let session = open_session(s.addr);
    let mut get = Conn::open(s.addr);
    get.send(&raw_request(
        "GET",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("Accept", "text/event-stream"),
        ],
        b"",
        true,
    ));
    let listen = modern_body(
        json!("L"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    )
    .to_string();
    let mut sub = Conn::open(s.addr);
    sub.send(&raw_request(
        "POST",
        "/mcp",
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "subscriptions/listen"),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        listen.as_bytes(),
        true,
    ));
    for (name, conn) in [("GET stream", &mut get), ("listen stream", &mut sub)] {
        let (status, headers) = conn.head().expect("the stream's head");
        assert_eq!(status, 200, "{name}: {headers:?}");
        conn.stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .expect("timeout");
    }
    let t = Instant::now();
    let (mut seen_get, mut seen_sub) = (Vec::new(), Vec::new());
    while t.elapsed() < OBSERVE {
        for (conn, body) in [(&mut get, &mut seen_get), (&mut sub, &mut seen_sub)] {
            match conn.chunk() {
                Ok(Some(c)) => body.extend_from_slice(&c),
                Ok(None) => panic!("a stream ended"),
                Err(_) => {}
            }
        }
    }
    for (name, body) in [("GET stream", seen_get), ("listen stream", seen_sub)] {
        let text = String::from_utf8_lossy(&body);
        let comments = text.matches(": keep-alive\n\n").count();
        println!(
            "{name}: {comments} keep-alive comments in {:.0} ms",
            ms(OBSERVE)
        );
        assert!(
            (3..=7).contains(&comments),
            "{name}: {comments} keep-alive comments in {OBSERVE:?}:\n{text}"
        );
        // Comments are no events: nothing else arrived on the quiet streams (the listen
        // stream's acknowledgement aside), and the events around them still parse.
        let others = sse_messages(&body)
            .into_iter()
            .filter(|m| m["method"] != "notifications/subscriptions/acknowledged")
            .count();
        assert_eq!(others, 0, "{name}: {text}");
    }
    s.assert_serves();
}

// ---- 9. hard connection cap, bounded heads ----------------------------------------------------

/// `n` connections (bounded by this process's fd limit), opened in batches of 64, each
/// sending `head` and nothing more; the server's largest descriptor count meanwhile.
fn unfinished_heads(s: &Server, n: usize, head: &[u8]) -> (Vec<TcpStream>, usize) {
    let open = std::fs::read_dir("/proc/self/fd").map_or(64, |d| d.count());
    let n = n.min(fd_limit().saturating_sub(open + 256));
    assert!(
        n > MAX_CONNECTIONS + OVERFLOW_CONNECTIONS + 64,
        "fd limit too low for the test: {n}"
    );
    let mut conns = Vec::with_capacity(n);
    let mut most = 0;
    while conns.len() < n {
        for _ in 0..64.min(n - conns.len()) {
            let mut c = TcpStream::connect_timeout(&s.addr, Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("connect after {} connections: {e}", conns.len()));
            c.set_write_timeout(Some(Duration::from_secs(2)))
                .expect("timeout");
            // A socket closed by the server at once fails this write: that is fine.
            let _ = c.write_all(head);
            conns.push(c);
        }
        thread::sleep(Duration::from_millis(20));
        most = most.max(s.fds());
    }
    thread::sleep(Duration::from_millis(200));
    (conns, most.max(s.fds()))
}

/// An unfinished request head of about `size` bytes (one long header, no blank line).
fn unfinished_head(size: usize) -> Vec<u8> {
    let mut head = b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Pad: ".to_vec();
    head.resize(size, b'a');
    head
}

/// The connection cap is hard: 1,300 connections that each send an unfinished 1 KB head
/// (busy, so never shed as idle) hold at most `max_connections` (1,024) slots plus
/// `OVERFLOW_CONNECTIONS` (64) awaiting a 503; the server closes the others at once instead
/// of buffering for them. Before, every socket was accepted and kept until the header
/// timeout.
#[test]
fn connections_beyond_the_cap_are_closed_at_once() {
    let mut s = Server::start();
    let base = s.fds();
    let t = Instant::now();
    let (conns, most) = unfinished_heads(&s, 1300, &unfinished_head(1000));
    let cap = MAX_CONNECTIONS + OVERFLOW_CONNECTIONS;
    println!(
        "{} connections with unfinished heads in {:.0} ms: server fds {base} before, at most {most} ({} connections; cap {cap})",
        conns.len(),
        ms(t.elapsed()),
        most - base
    );
    assert!(
        most <= base + cap + 8,
        "the server held {} connections (cap {cap})",
        most - base
    );
    // The ones closed at once see the end of their connection without an answer.
    let closed = conns
        .iter()
        .filter(|c| {
            c.set_read_timeout(Some(Duration::from_millis(1)))
                .expect("timeout");
            let mut b = [0u8; 64];
            let mut r: &TcpStream = c;
            match r.read(&mut b) {
                Ok(n) => n == 0,
                Err(e) => !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
            }
        })
        .count();
    println!("{closed} of them closed by the server");
    drop(conns);
    s.assert_serves();
}

/// Heads are bounded (`HttpConfig::max_header_bytes`, 64 KiB): 1,200 connections that each
/// send an unfinished 100 KB head get 431 once 64 KiB have arrived and are closed, so the
/// server's memory stays bounded (before, hyper buffered up to ~400 KiB for each: 1,200 x
/// 100 KB held until the header timeout), and a newcomer is served at once.
#[test]
fn oversized_heads_are_refused_and_memory_stays_bounded() {
    let mut s = Server::start();
    let (rss_before, _) = s.memory();
    let base = s.fds();
    let t = Instant::now();
    let (conns, most) = unfinished_heads(&s, 1200, &unfinished_head(100_000));
    let opened = t.elapsed();
    // Each is refused once 64 KiB of it have been read and parsed (slow in debug builds).
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.fds() > base + 8 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let shed = t.elapsed();
    let (rss_after, hwm) = s.memory();
    println!(
        "{} connections with unfinished 100 KB heads opened in {:.0} ms, all refused after {:.0} ms (server fds at most {most}, {base} before, {} now): RSS {:.1} -> {:.1} MiB, peak {:.1} MiB",
        conns.len(),
        ms(opened),
        ms(shed),
        s.fds(),
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    let (r, took) = timed_ping(s.addr, Duration::from_secs(2));
    let status = r.as_ref().map(|r| r.status);
    println!("a newcomer: {status:?} after {:.1} ms", ms(took));
    assert!(took < Duration::from_millis(500), "{took:?}");
    assert_eq!(
        status,
        Some(200),
        "{}",
        r.map_or("no answer".into(), |r| r.to_string())
    );
    // What the senders got: 431 once the server read 64 KiB, or the end of the connection.
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    for c in conns.iter().take(50) {
        c.set_read_timeout(Some(Duration::from_millis(200)))
            .expect("timeout");
        let mut r = BufReader::new(c);
        let mut line = String::new();
        let got = match r.read_line(&mut line) {
            Ok(0) => "closed".to_owned(),
            Ok(_) => line.trim().to_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => "open".to_owned(),
            Err(e) => format!("{:?}", e.kind()),
        };
        *statuses.entry(got).or_default() += 1;
    }
    println!("the first 50 senders got: {statuses:?}");
    assert!(!statuses.contains_key("open"), "{statuses:?}");
    assert!(
        rss_after.max(hwm).saturating_sub(rss_before) < 32 * 1024,
        "RSS grew by {} KiB",
        rss_after.max(hwm).saturating_sub(rss_before)
    );
    drop(conns);
    s.assert_serves();
}

// ---- 10. session quotas -------------------------------------------------------------------

/// One request from the loopback source address `from` (127.0.0.x), `Connection: close`.
fn post_from(
    from: std::net::Ipv4Addr,
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: &Value,
) -> Response {
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a socket");
    socket
        .bind(&SocketAddr::from((from, 0)).into())
        .unwrap_or_else(|e| panic!("bind {from}: {e}"));
    socket
        .connect_timeout(&addr.into(), TIMEOUT)
        .unwrap_or_else(|e| panic!("connect {addr} from {from}: {e}"));
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(TIMEOUT)).expect("timeout");
    let mut c = Conn {
        reader: BufReader::new(stream.try_clone().expect("clone")),
        stream,
    };
    let body = body.to_string();
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    c.send(&raw_request("POST", "/mcp", &all, body.as_bytes(), false));
    c.response().expect("a response")
}

/// `HttpConfig::max_sessions_per_peer` (here 3 of 8, `--max-sessions-per-peer`): a client
/// (an IP address) that holds its quota gets 503 with a JSON-RPC error for the next
/// `initialize`, while another address (127.0.0.2) still opens sessions; ending a session
/// gives its slot back to its peer; the global limit still applies across peers.
#[test]
fn one_peer_cannot_fill_the_session_table() {
    use std::net::Ipv4Addr;
    let mut s = Server::start_with(&["--max-sessions", "8", "--max-sessions-per-peer", "3"]);
    let (a, b, c) = (
        Ipv4Addr::new(127, 0, 0, 1),
        Ipv4Addr::new(127, 0, 0, 2),
        Ipv4Addr::new(127, 0, 0, 3),
    );
    let open = |from: Ipv4Addr| post_from(from, s.addr, &[], &initialize_body(1));
    let mut ids = Vec::new();
    for i in 0..3 {
        let r = open(a);
        assert_eq!(r.status, 200, "session {i} of {a}: {r}");
        ids.push(r.header("mcp-session-id").expect("a session id").to_owned());
    }
    let r = open(a);
    let v = r.rpc_error(503, -32603);
    println!("{a}'s 4th initialize: HTTP {} {v}", r.status);
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Too many sessions for this client")),
        "{v}"
    );
    assert!(r.header("mcp-session-id").is_none(), "{r}");
    // Another peer is not affected.
    for i in 0..3 {
        let r = open(b);
        assert_eq!(r.status, 200, "session {i} of {b}: {r}");
    }
    open(b).rpc_error(503, -32603);
    // The table (8) fills across peers: 3 + 3 + 2.
    for i in 0..2 {
        assert_eq!(open(c).status, 200, "session {i} of {c}");
    }
    let v = open(c).rpc_error(503, -32603);
    assert_eq!(v["error"]["message"], "Too many sessions", "{v}");
    // Ending one of a's sessions gives the slot back, to a only once the table has room.
    let r = post_from(
        a,
        s.addr,
        &[("Mcp-Session-Id", &ids[0])],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    );
    assert_eq!(r.status, 200, "{r}");
    let r = request(
        s.addr,
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", &ids[0])],
        b"",
    );
    assert_eq!(r.status, 200, "{r}");
    open(b).rpc_error(503, -32603);
    assert_eq!(open(a).status, 200);
    // Stateless requests need no slot: still served with the table full.
    let body = modern_body(json!(9), "tools/list", json!({}));
    let r = modern_post(s.addr, &[("Mcp-Method", "tools/list")], &body);
    assert_eq!(r.status, 200, "{r}");
    s.assert_alive();
}

/// Concurrent `initialize`s cannot overfill the table: the slot is taken before the
/// session runs, not inserted after it answered (64 at once against `--max-sessions 8`).
#[test]
fn concurrent_initializes_respect_the_session_limit() {
    const AT_ONCE: usize = 64;
    let mut s = Server::start_with(&["--max-sessions", "8", "--max-sessions-per-peer", "1000"]);
    let addr = s.addr;
    let barrier = Arc::new(std::sync::Barrier::new(AT_ONCE));
    let statuses: Vec<u16> = (0..AT_ONCE)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let mut c = Conn::open(addr);
                let body = initialize_body(1).to_string();
                let req = raw_request(
                    "POST",
                    "/mcp",
                    &[
                        ("Content-Type", "application/json"),
                        ("Accept", "application/json, text/event-stream"),
                    ],
                    body.as_bytes(),
                    false,
                );
                barrier.wait();
                c.send(&req);
                c.response().expect("a response").status
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().expect("a client"))
        .collect();
    let ok = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 503).count();
    println!("{AT_ONCE} concurrent initializes: {ok} sessions, {refused} refused");
    assert_eq!(ok + refused, AT_ONCE, "{statuses:?}");
    assert_eq!(ok, 8, "{statuses:?}");
    // Stateless requests need no slot: still served with the table full.
    let body = modern_body(json!(9), "tools/list", json!({}));
    let r = modern_post(s.addr, &[("Mcp-Method", "tools/list")], &body);
    assert_eq!(r.status, 200, "{r}");
    s.assert_alive();
}

// ---- 11. response modes and the memory budget ----------------------------------------------

/// A 2026-07-28 `subscriptions/listen` whose `Accept` lacks `text/event-stream` got no
/// response head at all within 5 s (issue #23): it gets 406 at once, with a JSON-RPC error
/// naming the request.
#[test]
fn listen_from_a_json_only_client_gets_406_at_once() {
    let mut s = Server::start();
    let listen = modern_body(
        json!("L"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let start = Instant::now();
    let r = request(
        s.addr,
        "POST",
        "/mcp",
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "subscriptions/listen"),
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ],
        listen.to_string().as_bytes(),
    );
    println!(
        "listen, JSON only: {} after {:.1} ms",
        r.status,
        ms(start.elapsed())
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    let error = r.rpc_error(406, -32600);
    assert_eq!(error["id"], "L", "{error}");
    s.assert_serves();
}

/// `--http-memory-budget 65536`: a client holding a body of nearly the whole budget makes
/// every other body (and a small request) get 503 with a JSON-RPC error; once it goes away
/// the server serves again.
#[test]
fn bodies_held_past_the_memory_budget_get_503_until_freed() {
    const BUDGET: usize = 65_536;
    let mut s = Server::start_with(&["--http-memory-budget", &BUDGET.to_string()]);
    let head = |declared: usize| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {declared}\r\n\r\n"
        )
    };
    // Whether the server has answered (or closed) the holder's connection.
    let answered = |c: &Conn| {
        c.stream.set_nonblocking(true).expect("nonblocking");
        let peeked = c.stream.peek(&mut [0u8; 1]);
        c.stream.set_nonblocking(false).expect("blocking");
        !matches!(&peeked, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    };
    // The holder's bytes and a small POST race for the budget. Until the holder's bytes
    // are counted a small body still fits; if a small body's bytes are counted while the
    // holder's arrive, the holder is the one refused (503) and holds nothing: start over
    // then. Done when the holder holds its bytes and a small POST gets 503.
    let init = initialize_body(1).to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    let holder = 'hold: loop {
        let mut holder = Conn::open(s.addr);
        holder.send(head(200_000).as_bytes());
        holder.send(&vec![b' '; BUDGET - 90]);
        loop {
            let r = post(s.addr, &[], &initialize_body(1));
            if r.status == 503 {
                r.rpc_error(503, -32603);
                break 'hold holder;
            }
            assert!(Instant::now() < deadline, "never refused: {r}");
            if answered(&holder) {
                continue 'hold;
            }
            thread::sleep(Duration::from_millis(20));
        }
    };
    for _ in 0..8 {
        let mut c = Conn::open(s.addr);
        c.send(head(100_000).as_bytes());
        c.send(&[b' '; 4096]);
        let r = c
            .response()
            .expect("an answer while the body is unfinished");
        r.rpc_error(503, -32603);
    }
    let r = post_bytes(s.addr, &[], init.as_bytes());
    r.rpc_error(503, -32603);
    drop(holder);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = post_bytes(s.addr, &[], init.as_bytes());
        if r.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "still refused once freed: {r}");
        thread::sleep(Duration::from_millis(20));
    }
    s.assert_serves();
}

/// 64 clients each send 1 MiB of a 4 MiB body and hold it: unbounded, the server would hold
/// 64 MiB of them. With `--http-memory-budget 8388608` it holds at most 8 MiB (the others
/// get 503 as their bytes arrive), and its peak RSS grows by far less than the 64 MiB sent.
#[test]
fn held_bodies_cannot_push_memory_past_the_budget() {
    const BUDGET: usize = 8 << 20;
    const CLIENTS: usize = 64;
    let mut s = Server::start_with(&["--http-memory-budget", &BUDGET.to_string()]);
    s.assert_serves();
    let (rss_before, hwm_before) = s.memory();
    let head = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4194304\r\n\r\n";
    let chunk = vec![b' '; 1 << 20];
    let mut held = Vec::new();
    for _ in 0..CLIENTS {
        let mut c = Conn::open(s.addr);
        c.send(head.as_bytes());
        // A refused client's connection may be closed before all of it is written.
        let _ = c.stream.write_all(&chunk);
        held.push(c);
    }
    // What the server holds once it has read what it will.
    thread::sleep(Duration::from_millis(500));
    let (rss, hwm) = s.memory();
    let mut refused = 0;
    for c in &mut held {
        c.stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .expect("timeout");
        if let Ok(r) = c.response() {
            r.rpc_error(503, -32603);
            refused += 1;
        }
    }
    println!(
        "{CLIENTS} clients holding 1 MiB bodies, budget {} MiB: {refused} refused; RSS {rss_before} -> {rss} KiB, peak {hwm_before} -> {hwm} KiB",
        BUDGET >> 20
    );
    assert!(
        refused >= CLIENTS - BUDGET / chunk.len(),
        "{refused} of {CLIENTS} refused"
    );
    assert!(
        hwm.saturating_sub(hwm_before) < 32 << 10,
        "peak RSS grew by {} KiB",
        hwm.saturating_sub(hwm_before)
    );
    // Once the holders go away their bytes are given back.
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = post(s.addr, &[], &initialize_body(1));
        if r.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "still refused once freed: {r}");
        thread::sleep(Duration::from_millis(20));
    }
    s.assert_serves();
}
