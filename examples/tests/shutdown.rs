//! Shutdown within a bound whatever the peer does: a client that asks for far more output
//! than the pipes and buffers hold and never reads any of it. The server must still exit
//! gracefully (status 0) within 5 s of SIGTERM or SIGINT, on TCP and on stdio, and within
//! 5 s of its stdin closing on stdio.

#![cfg(unix)]

mod common;

use std::io::Write;
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

    fn signal(&self, name: &str) {
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
    let server = Server::spawn(env!("CARGO_BIN_EXE_tcp"), &args, Stdio::null());
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
