//! Shutdown within a bound whatever the peer does: a client that asks for far more output
//! than the pipes and buffers hold and never reads any of it. The server must still exit
//! gracefully (status 0) within 5 s of SIGTERM or SIGINT, on TCP, on Unix sockets (`tcp
//! --unix PATH`), on stdio and on Streamable HTTP (`everything --http`: SSE streams and pipelined requests nobody reads), and within 5 s
//! of its stdin closing on stdio; and the `axum` example (the MCP service mounted in an axum
//! app) with an unread session stream and an unread flood of calls.

#![cfg(unix)]

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to exit once told to.
const BOUND: Duration = Duration::from_secs(5);

/// Generated tools and the page size: each `tools/list` answer is about 64 KiB.
const BIG_LISTS: [&str; 4] = ["--extra-tools", "2000", "--page-size", "2000"];

/// Requests whose answers (about 13 MB in all) exceed every buffer on the way (a pipe's
/// 64 KiB, the stdio writer's 4 MiB queue, loopback socket buffers).
fn flood() -> Vec<u8> {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let mut bytes = Vec::new();
    for id in 1..=200 {
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{meta}}}}}"#);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    bytes
}

struct Server {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    fn spawn(bin: &str, args: &[&str], stdin: Stdio) -> Server {
        let mut child = Command::new(bin)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(stdin)
            // stdio: a pipe nobody reads
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {bin}: {e}"));
        let stderr = common::collect_stderr(&mut child);
        Server { child, stderr }
    }

    /// Sends `SIG<name>` once the process catches it (its handler is installed: a loaded
    /// machine may take a while to start it).
    fn signal(&self, name: &str) {
        let number: u32 = match name {
            "INT" => 2,
            "TERM" => 15,
            other => panic!("no number for SIG{other}"),
        };
        let start = Instant::now();
        loop {
            let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
                .unwrap_or_default();
            let caught = status
                .lines()
                .find_map(|l| l.strip_prefix("SigCgt:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
                .unwrap_or(0);
            if caught & (1 << (number - 1)) != 0 || start.elapsed() > BOUND {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let status = Command::new("kill")
            .args([format!("-{name}"), self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits up to [`BOUND`] for the process to exit.
    fn exit_within_bound(&mut self, what: &str) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                eprintln!("{what}: exited after {:?} with {status}", start.elapsed());
                return status;
            }
            assert!(
                start.elapsed() < BOUND,
                "{what}: still running {BOUND:?} later; stderr:\n{}",
                common::text(&self.stderr)
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `tcp` binary serving big lists; its address once printed.
fn tcp_server() -> (Server, SocketAddr) {
    let mut args = vec!["--listen", "127.0.0.1:0"];
    args.extend(BIG_LISTS);
    listening(Server::spawn(
        env!("CARGO_BIN_EXE_tcp"),
        &args,
        Stdio::null(),
    ))
}

/// `server` once it printed `listening on <addr>`, and that address.
fn listening(server: Server) -> (Server, SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = common::text(&server.stderr);
        let found = text.lines().find_map(|l| {
            l.trim()
                .strip_prefix("listening on ")
                .and_then(|a| a.parse::<SocketAddr>().ok())
        });
        if let Some(addr) = found {
            return (server, addr);
        }
        assert!(Instant::now() < deadline, "no address; stderr:\n{text}");
        thread::sleep(Duration::from_millis(10));
    }
}

fn tcp_peer_that_never_reads(signal: &str) {
    let (mut server, addr) = tcp_server();
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .write_all(&flood())
        .expect("the requests fit the buffers");
    // Let the server answer until its writes stall on the full socket buffers.
    thread::sleep(Duration::from_millis(500));
    server.signal(signal);
    let status = server.exit_within_bound(&format!("tcp, SIG{signal}"));
    assert!(status.success(), "tcp exited with {status}");
    drop(stream);
}

#[test]
fn tcp_exits_on_sigterm_while_the_peer_never_reads() {
    tcp_peer_that_never_reads("TERM");
}

#[test]
fn tcp_exits_on_sigint_while_the_peer_never_reads() {
    tcp_peer_that_never_reads("INT");
}

/// The `tcp` binary serving big lists on a Unix socket too; the socket's path once it
/// printed `listening on unix:<path>` (in a directory of its own, removed with `dir`).
fn unix_server(dir: &std::path::Path) -> (Server, std::path::PathBuf) {
    let path = dir.join("mcp.sock");
    let socket = path.to_str().expect("a UTF-8 temporary path");
    let mut args = vec!["--listen", "127.0.0.1:0", "--unix", socket];
    args.extend(BIG_LISTS);
    let server = Server::spawn(env!("CARGO_BIN_EXE_tcp"), &args, Stdio::null());
    let announced = format!("listening on unix:{socket}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !common::text(&server.stderr).contains(&announced) {
        assert!(
            Instant::now() < deadline,
            "no Unix socket; stderr:\n{}",
            common::text(&server.stderr)
        );
        thread::sleep(Duration::from_millis(10));
    }
    (server, path)
}

fn unix_peer_that_never_reads(signal: &str) {
    let dir = std::env::temp_dir().join(format!("mcp-shutdown-{}-{signal}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let (mut server, path) = unix_server(&dir);
    let mut stream = std::os::unix::net::UnixStream::connect(&path).expect("connect");
    stream
        .write_all(&flood())
        .expect("the requests fit the buffers");
    // Let the server answer until its writes stall on the full socket buffers.
    thread::sleep(Duration::from_millis(500));
    server.signal(signal);
    let status = server.exit_within_bound(&format!("unix, SIG{signal}"));
    assert!(status.success(), "unix exited with {status}");
    drop(stream);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unix_exits_on_sigterm_while_the_peer_never_reads() {
    unix_peer_that_never_reads("TERM");
}

#[test]
fn unix_exits_on_sigint_while_the_peer_never_reads() {
    unix_peer_that_never_reads("INT");
}

/// The tokio stdio calculator, flooded with requests through a stdin kept open; its stdout
/// is never read.
fn stdio_server_flooded() -> (Server, std::process::ChildStdin) {
    let mut server = Server::spawn(env!("CARGO_BIN_EXE_calculator"), &BIG_LISTS, Stdio::piped());
    let mut stdin = server.child.stdin.take().expect("stdin");
    stdin
        .write_all(&flood())
        .expect("the requests fit the pipe");
    thread::sleep(Duration::from_millis(500));
    (server, stdin)
}

fn stdio_signal(signal: &str) {
    let (mut server, stdin) = stdio_server_flooded();
    server.signal(signal);
    let status = server.exit_within_bound(&format!("stdio, SIG{signal}"));
    assert!(status.success(), "stdio exited with {status}");
    drop(stdin);
}

#[test]
fn stdio_exits_on_sigterm_while_the_client_never_reads() {
    stdio_signal("TERM");
}

#[test]
fn stdio_exits_on_sigint_while_the_client_never_reads() {
    stdio_signal("INT");
}

#[test]
fn stdio_exits_when_stdin_closes_while_the_client_never_reads() {
    let (mut server, stdin) = stdio_server_flooded();
    drop(stdin);
    let status = server.exit_within_bound("stdio, stdin closed");
    assert!(status.success(), "stdio exited with {status}");
}

/// A connection to `addr` with a small receive buffer and small segments: once its reader
/// stops, the server's writes to it stall after a few hundred KiB, not megabytes.
fn small_buffer_connect(addr: SocketAddr) -> TcpStream {
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    socket.set_tcp_mss(536).expect("TCP_MAXSEG");
    socket.connect(&addr.into()).expect("connect");
    socket.into()
}

/// An HTTP/1.1 POST to `/mcp` (keep-alive unless `close`).
fn http_post(headers: &[(&str, &str)], body: &str, close: bool) -> Vec<u8> {
    let mut head = String::from("POST /mcp HTTP/1.1\r\nHost: localhost\r\n");
    head.push_str(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    head.push_str(body);
    head.into_bytes()
}

/// A legacy session of `everything --http` at `addr`: its id.
fn http_session(addr: SocketAddr) -> String {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"shutdown","version":"0"}}}"#;
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(BOUND)).expect("timeout");
    c.write_all(&http_post(&[], init, true))
        .expect("initialize");
    let mut answer = String::new();
    c.read_to_string(&mut answer)
        .expect("the initialize response");
    let id = answer
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("a session id in {answer}"));
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(BOUND)).expect("timeout");
    c.write_all(&http_post(&[("Mcp-Session-Id", &id)], note, true))
        .expect("initialized");
    let _ = c.read_to_end(&mut Vec::new());
    id
}

/// `everything --http` with a legacy GET stream, a 2026-07-28 `subscriptions/listen` stream
/// and a connection pipelining thousands of list-change triggers (each fanned out to both
/// streams), none of them ever read (small receive buffers: the server's writes to them
/// stall); then `signal`.
fn http_peer_that_never_reads(signal: &str) {
    let (mut server, addr) = listening(Server::spawn(
        env!("CARGO_BIN_EXE_everything"),
        &["--http", "127.0.0.1:0"],
        Stdio::null(),
    ));
    let session = http_session(addr);
    let mut get = small_buffer_connect(addr);
    let head = format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    );
    get.write_all(head.as_bytes()).expect("the GET stream");
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let listen = format!(
        r#"{{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{meta}}}}}"#
    );
    let mut listener = small_buffer_connect(addr);
    listener
        .write_all(&http_post(
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "subscriptions/listen"),
            ],
            &listen,
            false,
        ))
        .expect("the listen stream");
    // Pipelined triggers, written on a thread: the server stops reading them once its
    // answers fill the socket buffers.
    let flood = small_buffer_connect(addr);
    let mut flood_writer = flood.try_clone().expect("clone");
    let writer = thread::spawn(move || {
        let mut bytes = Vec::new();
        for id in 0..5000 {
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"test_trigger_tool_change","arguments":{{}}}}}}"#
            );
            bytes.extend_from_slice(&http_post(&[("Mcp-Session-Id", &session)], &call, false));
        }
        let _ = flood_writer.write_all(&bytes);
    });
    thread::sleep(Duration::from_millis(1500));
    server.signal(signal);
    let status = server.exit_within_bound(&format!("http, SIG{signal}"));
    assert!(status.success(), "http exited with {status}");
    let _ = flood.shutdown(std::net::Shutdown::Both);
    let _ = writer.join();
    drop((get, listener));
}

#[test]
fn http_exits_on_sigterm_while_the_peers_never_read() {
    http_peer_that_never_reads("TERM");
}

#[test]
fn http_exits_on_sigint_while_the_peers_never_read() {
    http_peer_that_never_reads("INT");
}

/// The `axum` example (the MCP service nested at `/api/mcp`) with a legacy GET stream and a
/// connection pipelining calls, neither ever read (small receive buffers); then `signal`:
/// the sessions end, axum's graceful shutdown gets its drain time, the exit status is 0.
fn axum_peer_that_never_reads(signal: &str) {
    let (mut server, addr) = listening(Server::spawn(
        env!("CARGO_BIN_EXE_axum"),
        &["--listen", "127.0.0.1:0"],
        Stdio::null(),
    ));
    let mounted = |bytes: Vec<u8>| {
        String::from_utf8(bytes)
            .expect("ASCII")
            .replacen("POST /mcp ", "POST /api/mcp ", 1)
            .into_bytes()
    };
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"shutdown","version":"0"}}}"#;
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(BOUND)).expect("timeout");
    c.write_all(&mounted(http_post(&[], init, true)))
        .expect("initialize");
    let mut answer = String::new();
    c.read_to_string(&mut answer)
        .expect("the initialize response");
    let session = answer
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("a session id in {answer}"));
    let mut get = small_buffer_connect(addr);
    let head = format!(
        "GET /api/mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    );
    get.write_all(head.as_bytes()).expect("the GET stream");
    let flood = small_buffer_connect(addr);
    let mut flood_writer = flood.try_clone().expect("clone");
    let writer = thread::spawn(move || {
        let mut bytes = Vec::new();
        for id in 0..5000 {
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add_numbers","arguments":{{"number1":{id},"number2":1}}}}}}"#
            );
            bytes.extend_from_slice(&mounted(http_post(
                &[("Mcp-Session-Id", &session)],
                &call,
                false,
            )));
        }
        let _ = flood_writer.write_all(&bytes);
    });
    thread::sleep(Duration::from_millis(1000));
    server.signal(signal);
    let status = server.exit_within_bound(&format!("axum, SIG{signal}"));
    assert!(status.success(), "axum exited with {status}");
    let _ = flood.shutdown(std::net::Shutdown::Both);
    let _ = writer.join();
    drop(get);
}

#[test]
fn axum_exits_on_sigterm_while_the_peers_never_read() {
    axum_peer_that_never_reads("TERM");
}

#[test]
fn axum_exits_on_sigint_while_the_peers_never_read() {
    axum_peer_that_never_reads("INT");
}
